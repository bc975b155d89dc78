"""Fuzzing the trace reader with damaged real traces (issue 8 items 1 and 12).

The originals are a trace written by the real runtime (`call run` of samples/matinit) and the
same records repeated into an experiment of more than 1000 interleaved runs (the reader's
masked path). Each example damages one of them: bytes turned into whitespace or other
characters that are not part of a number, TABs inserted, whitespace removed, the file cut
short, two lines swapped. The reader must never raise anything but a one-line TraceError,
and whatever it loads without reporting a problem must be the original records: a value
may not move to another record or column, nor load cut short.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from llac.records import MAX_RUNS
from llac.trace import TraceError, read_trace

MATINIT = Path(__file__).resolve().parent.parent / "samples" / "matinit" / "matinit.c"
# Replacement bytes that cannot continue a number: any of them in a value is detectable damage.
NOT_NUMBER = b"\t \n\r\x0b\x0c\x00x#,\x1b\xff"


class Originals(dict):
    """The original traces by name (shown short in hypothesis's reports)."""

    def __repr__(self):
        return "<originals>"


@pytest.fixture(scope="module")
def originals(tmp_path_factory) -> Originals:
    """The real trace and its interleaved extension, as bytes."""
    folder = tmp_path_factory.mktemp("fuzz")
    shutil.copy(MATINIT, folder)
    subprocess.run([sys.executable, "-m", "call", "run", "matinit.c", "--", "32"], cwd=folder,
                   check=True, capture_output=True)
    real = (folder / "matinit.cll.1.dat").read_bytes()
    head, _, body = real.partition(b"#data\n")
    records = body.removesuffix(b"#end\n")
    repeats = MAX_RUNS // records.count(b"rowinit ") + 2
    counts = {m.group(1): int(m.group(2)) * repeats for m in re.finditer(rb"(\w+)\n#  [^\n]*\n#  [^\n]*\n"
                                                                         rb"#  columns[^\n]*\n#  records: (\d+)", head)}
    interleaved = re.sub(rb"(#experiment: (\w+)\n(?:#  [^\n]*\n)*?#  records: )\d+",
                         lambda m: m.group(1) + str(counts[m.group(2)]).encode(), head)
    return Originals(real=real, interleaved=interleaved + b"#data\n" + records * repeats + b"#end\n")


def rows(trace) -> dict[str, set[tuple]]:
    """Each experiment's records as a set of value tuples (in column order)."""
    return {name: set(zip(*(exp.columns[c].tolist() for c in exp.column_names)))
            for name, exp in trace.experiments.items()}


def test_originals_load_cleanly(originals):
    real, interleaved = (read_trace("t.dat", text=originals[k].decode()) for k in ("real", "interleaved"))
    assert real.problems == () and interleaved.problems == ()
    assert rows(real) == rows(interleaved) and set(rows(real)) == {"rowinit", "colinit"}
    runs = interleaved.experiments["rowinit"]
    assert len(runs) > MAX_RUNS      # the lines alternate: one run per record


def damage(data: bytes, kind: str, draw) -> bytes:
    """One damage of `kind` to `data`, its places drawn with `draw(strategy)`."""
    i = draw(st.integers(0, len(data) - 1))
    if kind == "flip":
        return data[:i] + bytes([draw(st.sampled_from(list(NOT_NUMBER)))]) + data[i + 1:]
    if kind == "tab":
        return data[:i] + b"\t" + data[i:]
    if kind == "remove":     # the first whitespace byte from i on
        k = next((k for k in range(i, len(data)) if data[k] in b" \t\n"), len(data))
        return data[:k] + data[k + 1:]
    if kind == "truncate":
        return data[:i]
    lines = data.split(b"\n")
    a, b = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


@given(which=st.sampled_from(["real", "interleaved"]),
       kinds=st.lists(st.sampled_from(["flip", "tab", "remove", "truncate", "swap"]), min_size=1, max_size=3),
       draws=st.data())
def test_damage_is_reported_or_harmless(originals, which, kinds, draws):
    data = originals[which]
    for kind in kinds:
        data = damage(data, kind, draws.draw) if data else data
    try:
        trace = read_trace("t.dat", text=data.decode("utf-8", "surrogateescape"))
    except TraceError as err:
        assert "\n" not in str(err)
        return
    if trace.problems:
        return
    want = rows(read_trace("o.dat", text=originals[which].decode()))
    for name, got in rows(trace).items():
        assert got <= want[name], f"{name}: records that are not in the original: {sorted(got - want[name])[:3]}"
