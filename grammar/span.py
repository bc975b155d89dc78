"""Source positions shared by call and llac: one `Span`, one caret renderer, one suggester,
and how untrusted text is shown.

Every message that points into a text (a C file, an llac script, a formula in a string)
locates itself with a `Span` and shows the place with `excerpt`; every "did you mean"
comes from `nearest` (worded by `suggest`); text from a user's files reaches the terminal
through `printable`.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Iterable

# Control characters, bidirectional overrides, and the lone surrogates U+DC80..U+DCFF that
# stand for the bytes of a file (or file name) that are not UTF-8 (errors="surrogateescape").
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\udc80-\udcff]")


@dataclass(frozen=True)
class Span:
    """Where a piece of source is: 1-based line and column of its start, and of the column
    just after its end (`end_column` is exclusive, as Lark counts)."""
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int, width: int = 1) -> "Span":
        """`width` characters on one line from (line, column): a caret position or a word."""
        return cls(line, column, line, column + width)

    @classmethod
    def of(cls, first, last=None) -> "Span | None":
        """From the start of `first` to the end of `last` (default `first`), both Lark tokens
        or tree metas; None when `first` carries no position (an empty rule)."""
        last = first if last is None else last
        if not getattr(first, "line", None):
            return None
        return cls(first.line, first.column, last.end_line, last.end_column)


def printable(text: str) -> str:
    """`text` with control characters written as escapes (`\\x1b`, `\\t`): text from a trace,
    a CSV file or a source file (names, header values, quoted lines) cannot move the cursor,
    recolour or rewrite the terminal it is printed on. A byte that is not UTF-8 (read as a
    lone surrogate) is shown as the byte it is: `\\xe9`."""
    return UNPRINTABLE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return f"\\x{ord(char) - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")


def quoted(text: str) -> str:
    """`text` in single quotes for a message, shown as `printable` shows it (unlike repr, a
    byte that is not UTF-8 reads `\\xe9`, not `\\udce9`)."""
    return f"'{printable(text)}'"


EXCERPT_WIDTH = 120      # a longer line is shown as this many characters around the span
EXCERPT_BEFORE = 40      # of which this many before the span's start


def excerpt(text: str, span: Span, indent: str = "") -> str:
    """The source line `text` of `span` and a caret line under the span's columns, as
    compilers show it. Control characters are shown escaped (`printable`) and tabs kept, with
    the caret line padded to match, so that the carets line up; they cover the span on its
    first line, at least one, at most to the end of the line. A line longer than
    EXCERPT_WIDTH is cut to the part around the span, the cuts marked with '...' (an
    expression 5,000 characters long otherwise fills the terminal and puts the caret pages
    away from the words it points at)."""
    text = text.rstrip("\r\n")
    shown = ["\t" if c == "\t" else printable(c) for c in text]
    start = max(span.column - 1, 0)
    width = max(1, span.end_column - span.column) if span.end_line == span.line else 1
    width = min(width, max(1, len(text) - start))
    first, last = 0, len(shown)
    if len(shown) > EXCERPT_WIDTH:
        first = max(0, min(start - EXCERPT_BEFORE, len(shown) - EXCERPT_WIDTH))
        last = first + EXCERPT_WIDTH
        width = min(width, max(1, last - start))
    left, right = ("..." if first else ""), ("..." if last < len(shown) else "")
    pad = " " * len(left) + "".join(s if s == "\t" else " " * len(s) for s in shown[first:start])
    carets = "^" * max(1, sum(len(s) for s in shown[start:start + width]))
    return f"{indent}{left}{''.join(shown[first:last])}{right}\n{indent}{pad}{carets}"


def nearest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate most like `word` by difflib's similarity ratio, or None when none
    reaches `cutoff` (0 always answers, for a word that must be one of the candidates)."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return close[0] if close else None


def suggest(word: str, candidates: Iterable[str]) -> str:
    """' (did you mean X?)' for the nearest candidate, or '' when none is close."""
    close = nearest(word, candidates)
    return f" (did you mean {close!r}?)" if close else ""
