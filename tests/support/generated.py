"""The generated C (`PROG.cll.c`) as the compiler numbers its lines."""
import re

LINE = re.compile(r'#line (\d+)\b')


def compiled_lines(text: str) -> list[str]:
    """Line i of the user's file (index i - 1) as the generated code has it: each `#line N`
    gives the next physical line the number N; the pieces of one line (a pragma's variables,
    each placed at its own column under a `#line`) are joined, the later ones without their
    indentation. Lines before the first `#line` (the #include) are left out."""
    lines: dict[int, str] = {}
    number = None
    for physical in text.splitlines():
        marker = LINE.match(physical)
        if marker:
            number = int(marker.group(1))
            continue
        if number is None:
            continue
        lines[number] = lines[number] + physical.lstrip() if number in lines else physical
        number += 1
    return [lines.get(i, "") for i in range(1, max(lines, default=0) + 1)]
