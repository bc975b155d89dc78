"""Spill files: what a run that never wrote its trace left behind (docs/trace-format.md).

The runtime appends each thread's full 2 MiB record buffer to a hidden spill file next to the
trace (`.prog.cll.1.dat.spill0.Ab12Cd`) and removes it once the trace is written. A run
killed by SIGKILL (or ended by `_exit`) leaves them: they hold every record that was spilled,
not those still in memory. Each begins with a text header like a trace's (program, timer,
the experiments in the runtime's order) up to `#data`, then binary chunks
`[uint64 byte count][records]`, a record being `uint32 experiment index, int32 thread,
uint64 ticks` and its variables as float64. `load` reads them as traces of a run that did not
finish: given a spill file's path, or a trace's path when the trace is missing but its spill
files are there.
"""
from __future__ import annotations

import glob
import os
import struct
from pathlib import Path
from typing import Sequence

import numpy as np

from llac.trace import (DATA_LINE, Problem, Trace, TraceError, _layouts, _parse_header,
                        declared_experiment, expand_paths, read_file_bytes, read_trace)

MAGIC = b"#cll-spill"
FIXED = 16   # bytes of a record before its variables
RECORD_START = ("rank", "thread", "time")   # the columns a record's fixed part gives


def is_spill_file(path: str | os.PathLike) -> bool:
    """Whether `path` is a spill file (by its first line)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def spill_files_for(trace_path: str) -> list[str]:
    """The spill files left next to `trace_path` by runs that did not write it, sorted."""
    path = Path(trace_path)
    pattern = os.path.join(glob.escape(str(path.parent)), f".{glob.escape(path.name)}.spill*")
    return sorted(p for p in glob.glob(pattern) if is_spill_file(p))


def expand_with_spills(paths_or_globs: Sequence[str], set_aside: list[str] | None = None) -> list[str]:
    """`trace.expand_paths` (the traces its globs leave out go into `set_aside`), except that
    a trace path that does not exist but has spill files next to it stands for those spill files."""
    expanded = []
    for pattern in paths_or_globs:
        spills = [] if glob.has_magic(pattern) or os.path.exists(pattern) else spill_files_for(pattern)
        expanded += spills or [pattern]
    return expand_paths(expanded, set_aside)


def read_input(path: str) -> Trace:
    """A trace file or a spill file, read as a Trace."""
    return read_spill(path) if is_spill_file(path) else read_trace(path)


def read_spill(path: str) -> Trace:
    """Read one spill file: its header's experiments with every complete record it holds.
    The Trace is marked incomplete and says, as a problem, that the run did not finish."""
    data = read_file_bytes(path, binary=True)
    match = DATA_LINE.search(data)
    if match is None:
        raise TraceError(f"{path!r} is a spill file without a #data line: it is damaged")
    problems: list[Problem] = []
    header, declared = _parse_header(path, data[:match.start()].decode("utf-8", "replace").split("\n"),
                                     problems)
    problems.insert(0, Problem(path, 1, f"spill file of a run (pid {header.get('pid', '?')}) that did "
                               "not finish: it holds the records that run had spilled to disk; "
                               "those still in its memory were lost"))
    layouts = _layouts(path, declared, problems)
    order = ">" if header.get("byte_order") == "big" else "<"
    body = _complete_chunks(path, data[match.end() + 1:], order, problems)
    nvars = [len(lay.columns) - 3 if lay and lay.columns[:3] == RECORD_START else None
             for lay in layouts]
    table, stopped = _records(body, order, nvars)
    if stopped:
        problems.append(Problem(path, 1, "a record of an experiment the header does not describe "
                                "(or of an invalid one): it and the records after it are skipped"))
    resolution = _number(path, header, "timer_resolution", problems)
    rank = _number(path, header, "rank", problems)
    experiments = {}
    for index, (decl, lay) in enumerate(zip(declared, layouts)):
        if lay is not None and nvars[index] is None:
            problems.append(Problem(path, decl.line, f"experiment {decl.name!r}: its columns do "
                                    "not begin with 'rank thread time'; its records are skipped"))
        if nvars[index] is None:
            continue
        values = table.get(index, np.empty((0, len(lay.columns) - 1)))
        columns = {"rank": np.full(len(values), rank), "thread": values[:, 0],
                   "time": values[:, 1] * resolution}
        columns |= {name: values[:, 2 + i] for i, name in enumerate(lay.columns[3:])}
        experiments[lay.name] = declared_experiment(path, decl, lay, columns, header, problems)
    return Trace(path, header, experiments, tuple(problems), complete=False)


def _number(path: str, header: dict, key: str, problems: list[Problem]) -> float:
    """The header's number `key`; nan (with a problem) when it is missing or not a number."""
    try:
        return float(header[key])
    except (KeyError, ValueError):
        problems.append(Problem(path, 1, f"the header has no number '{key}:'; the values "
                                "that depend on it are nan"))
        return float("nan")


def _complete_chunks(path: str, body: bytes, order: str, problems: list[Problem]) -> bytes:
    """The records of every chunk, the last one possibly cut short (the run was killed while
    spilling: its complete records are kept)."""
    parts, pos = [], 0
    while pos + 8 <= len(body):
        (size,) = struct.unpack_from(order + "Q", body, pos)
        part = body[pos + 8:pos + 8 + size]
        parts.append(part)
        if len(part) < size:
            problems.append(Problem(path, 1, "the last chunk of records is cut short (the run was "
                                    "killed while spilling); its complete records are kept"))
        pos += 8 + size
    return b"".join(parts)


def _records(body: bytes, order: str, nvars: list[int | None]) -> tuple[dict[int, np.ndarray], bool]:
    """Rows `[thread, ticks, variables...]` per experiment index, and whether the records
    stopped at one of an experiment the header does not describe (its size is unknown, so
    nothing after it can be read). A record cut short at the end is left out."""
    if len(nvars) == 1 and nvars[0] is not None:   # one experiment: in bulk
        k = nvars[0]
        dtype = np.dtype([("exp", order + "u4"), ("thread", order + "i4"), ("ticks", order + "u8"),
                          ("vars", order + "f8", (k,))])
        rows = np.frombuffer(body, dtype, len(body) // dtype.itemsize)
        if not rows["exp"].any():
            return {0: np.column_stack([rows["thread"], rows["ticks"],
                                        rows["vars"].reshape(len(rows), k)])}, False
    table: dict[int, list] = {}
    pos = 0
    while pos + FIXED <= len(body):
        exp, thread, ticks = struct.unpack_from(order + "IiQ", body, pos)
        n = nvars[exp] if exp < len(nvars) else None
        if n is None:
            return {i: np.array(r, dtype=float) for i, r in table.items()}, True
        if pos + FIXED + 8 * n > len(body):
            break
        table.setdefault(exp, []).append([thread, ticks, *struct.unpack_from(f"{order}{n}d", body, pos + FIXED)])
        pos += FIXED + 8 * n
    return {i: np.array(r, dtype=float) for i, r in table.items()}, False
