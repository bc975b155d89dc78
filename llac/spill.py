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
from typing import Sequence

import numpy as np

from cll_grammar.spillfiles import is_spill_file, spill_files_for, spilled_trace
from llac.trace import (DATA_LINE, Problem, Trace, TraceError, _layouts, _parse_header,
                        declared_experiment, expand_paths, read_file_bytes, read_trace)

FIXED = 16   # bytes of a record before its variables
RECORD_START = ("rank", "thread", "time")   # the columns a record's fixed part gives


def unwritten_spills(pattern: str) -> list[str]:
    """The spill files of traces that the glob `pattern` would match had their runs written
    them: runs killed before their trace was written (a killed P of a sweep), sorted."""
    directory, name = os.path.split(pattern)
    candidates = glob.glob(os.path.join(directory, f".{name}.spill*"))
    return sorted(c for c in candidates if not os.path.exists(spilled_trace(c)) and is_spill_file(c))


def expand_with_spills(paths_or_globs: Sequence[str], set_aside: list[str] | None = None) -> list[str]:
    """`trace.expand_paths` (the traces its globs leave out go into `set_aside`), except that a
    trace path that does not exist but has spill files next to it stands for those spill files,
    and a glob also takes the spill files of the traces it would match that were never written
    (`prog.cll.*.dat` after a sweep whose P = 4 run was killed: P = 4's spilled records too;
    a glob that matches only such spill files takes them)."""
    expanded = []
    for pattern in paths_or_globs:
        if not glob.has_magic(pattern):
            spills = [] if os.path.exists(pattern) else spill_files_for(pattern)
            expanded += expand_paths(spills or [pattern], set_aside)
            continue
        spills = unwritten_spills(pattern)
        try:
            expanded += expand_paths([pattern], set_aside)
        except TraceError:
            if not spills:
                raise
        expanded += spills
    return expanded


def newer_spills(trace_path: str) -> list[str]:
    """The spill files next to the trace `trace_path` that are newer than it: a later run of the
    program was killed before it wrote this trace, which is an earlier run's."""
    try:
        written = os.path.getmtime(trace_path)
    except OSError:
        return []
    return [s for s in spill_files_for(trace_path) if os.path.getmtime(s) > written]


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
