"""Read (and write) CALL trace files, format version 1 (`docs/trace-format.md`).

The reader never fails on a damaged record: it loads every good record and reports the bad
ones as `Problem`s with their line numbers. Only a file that is not a trace at all raises
`TraceError`. Records are converted in bulk with numpy (see `llac.records`), so a million
records load in about a second.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Mapping, Sequence

import numpy as np

from cll_grammar.formula import FormulaError, parse_formula
from cll_grammar.span import printable, quoted
from cll_grammar.workingset import parse_working_set
from llac.errors import InputError
from llac.experiment import Experiment
from llac.records import RecordLayout, parse_records
from llac.supersteps import RECORD, Supersteps, check_declaration, parse_reference, parse_steps

VERSION = 1
MAGIC = "#cll-trace"
HEAD_BYTES = 1 << 16       # read (and checked) before the rest of a file
MAX_HEADER = 1 << 24       # a #data line must come within this many bytes
QUOTED = 40                # characters of a refused file's first line quoted in the message
PARALLEL = ("none", "OpenMP", "MPI", "PUB")
# a program that returns from main without reaching `report` ends normally too (docs/trace-format.md)
NORMAL_ENDS = ("complete", "exit-without-report")
DATA_LINE = re.compile(rb"^#data[ \t\r]*$", re.M)
HEADER_RUN = re.compile(rb"(?:#[^\n]*(?:\n|$))*")
BOM = b"\xef\xbb\xbf"      # a UTF-8 byte-order mark, which some editors put before the first line
TRACE_START = re.compile(re.escape(MAGIC.encode()) + rb"(?=[ \t\r\n])")   # where a trace may begin


@dataclass(frozen=True)
class Problem:
    """Something wrong in an input file, at a line; reported to the user, never raised."""
    path: str
    line: int
    message: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.message}"


class TraceError(InputError):
    """An input file that cannot be read at all (missing, not a trace, unknown version)."""


class EmptyInput(TraceError):
    """An input that holds nothing but whitespace (e.g. nothing was piped to standard input)."""


@dataclass(frozen=True)
class Trace:
    """One trace file: its global header, its experiments, and the problems found in it."""
    path: str
    header: Mapping[str, str]
    experiments: Mapping[str, Experiment]
    problems: tuple[Problem, ...] = ()
    complete: bool = True
    supersteps: Supersteps | None = None    # a PUB program's `@step` records, when declared


@dataclass
class _Declared:
    """An experiment as its header declares it, before its records are read."""
    name: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    repeated: tuple[str, int, int] | None = None     # the first key given twice: its two lines


def read_file_bytes(path: str | os.PathLike, binary: bool = False) -> bytes:
    """The bytes of an input file, or TraceError with the OS's reason (missing, a folder,
    ...); a text file (not `binary`) with NUL bytes in its first HEAD_BYTES is refused before
    the rest is read."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
            if not binary and b"\0" in head:
                raise TraceError(f"{quoted(os.fspath(path))} holds NUL bytes: it is not a text file")
            return head + f.read()
    except OSError as err:
        raise TraceError(f"cannot read {quoted(os.fspath(path))}: {err.strerror or err}") from None


def _read_checked(path: str, stream: BinaryIO) -> bytes:
    """The bytes of a trace from `stream`, read in steps that bound what garbage costs: the
    first line is checked in the first HEAD_BYTES (a binary, 2 GB of zeros: refused there),
    and a `#data` line must come within MAX_HEADER bytes before the rest is read."""
    try:
        head = stream.read(HEAD_BYTES).removeprefix(BOM)
        _check_magic(path, head)
        head += stream.read(MAX_HEADER - len(head))
        if len(head) == MAX_HEADER and not DATA_LINE.search(head):
            raise TraceError(f"{quoted(path)} has no #data line in its first {MAX_HEADER >> 20} MiB: "
                             "its header is damaged, or it is not a trace")
        return head + stream.read()
    except OSError as err:
        raise TraceError(f"cannot read {quoted(path)}: {err.strerror or err}") from None


def read_stream(path: str, stream: BinaryIO) -> list[Trace]:
    """Every trace in `stream` (standard input): traces written one after another (`cat
    prog.cll.*.dat | llac`) are split where a trace starts (`#cll-trace`): at the start of a
    line, or after a cut record line (a truncated trace followed by another, which `cat` glues
    to that line), and read as if they were files; when there are several they are called
    PATH#1, PATH#2, ..., and their problems' line numbers count from the start of each."""
    import io
    data = _read_checked(path, stream)
    starts = _trace_starts(data)
    if len(starts) == 1:
        return [read_trace(path, stream=io.BytesIO(data))]
    return [read_trace(f"{path}#{i + 1}", stream=io.BytesIO(data[start:end]))
            for i, (start, end) in enumerate(zip(starts, [*starts[1:], len(data)]))]


def _trace_starts(data: bytes) -> list[int]:
    """Where each trace in `data` begins: 0, and each `#cll-trace` at the start of a line or
    inside a record line (never inside a header line, whose text is the program's)."""
    starts = [0]
    for match in TRACE_START.finditer(data, 1):
        line = data.rfind(b"\n", 0, match.start()) + 1
        if line == match.start() or data[line:line + 1] != b"#":
            starts.append(match.start())
    return starts


def read_trace(source: str | os.PathLike, text: str | None = None, stream: BinaryIO | None = None) -> Trace:
    """Read one trace file; with `text` (or a binary `stream`, e.g. standard input), parse that
    instead and show `source` as its name.

    Returns the header, one Experiment per valid experiment declaration, the problems found
    (bad header entries, damaged or unknown records, a missing `#end`) and whether the file
    was complete. Raises TraceError when the file is missing, empty, not a trace, or of an
    unsupported version; its first line is checked before the rest of the file is read.
    """
    path = os.fspath(source)
    if text is not None:
        data = text.encode("utf-8", "surrogateescape").removeprefix(BOM)
        _check_magic(path, data)
    elif stream is not None:
        data = _read_checked(path, stream)
    else:
        try:
            with open(path, "rb") as f:
                data = _read_checked(path, f)
        except OSError as err:
            raise TraceError(f"cannot read {quoted(path)}: {err.strerror or err}") from None
    match = DATA_LINE.search(data)
    head = data[:match.start()] if match else HEADER_RUN.match(data).group()
    head_lines = head.decode("utf-8", "replace").split("\n")
    problems: list[Problem] = []
    header, declared = _parse_header(path, head_lines, problems)
    layouts = _layouts(path, declared, problems)
    if match is None:
        problems.append(Problem(path, head.count(b"\n") + 1, "the header is not followed by a #data line: "
                                "the file was cut short or damaged, no records are read"))
        body, first_line = b"", 0
    else:
        body = data[match.end() + 1:]
        first_line = data.count(b"\n", 0, match.end()) + 2
    valid = [lay for lay in layouts if lay is not None]
    invalid = {d.name: d.line for d, lay in zip(declared, layouts) if lay is None}
    crlf = data.split(b"\n", 1)[0].endswith(b"\r")
    declared_steps = _declared_steps(path, header, head_lines, problems)
    result = parse_records(body, first_line, valid, invalid, crlf, RECORD if declared_steps else None)
    problems += [Problem(path, int(line), msg) for line, msg in result.problems]
    supersteps = _supersteps(path, header, head_lines, result.collected, problems) if declared_steps else None
    if not result.complete and match is not None:
        problems.append(Problem(path, int(result.last_line),
                                "the file has no #end line: it was cut short, some records may be missing"))
    experiments = {}
    for decl, lay in zip(declared, layouts):
        if lay is None:
            continue
        values = np.ascontiguousarray(result.values[lay.name].T)
        experiments[lay.name] = declared_experiment(path, decl, lay, dict(zip(lay.columns, values)),
                                                    header, problems)
        _check_count(path, decl, values.shape[1], result.left_out[lay.name], problems)
    problems.sort(key=lambda p: p.line)
    return Trace(path, header, experiments, tuple(problems), result.complete, supersteps)


def _declared_steps(path: str, header: Mapping[str, str], head_lines: list[str],
                    problems: list[Problem]) -> bool:
    """Whether the header declares this version's superstep records (`#supersteps:`); a
    declaration with other columns is a problem at its line (its records are then reported
    as records of an unknown experiment)."""
    if "supersteps" not in header:
        return False
    why = check_declaration(header["supersteps"])
    if why:
        problems.append(Problem(path, _header_line(head_lines, "supersteps"), why))
    return why is None


def _supersteps(path: str, header: Mapping[str, str], head_lines: list[str], collected,
                problems: list[Problem]) -> Supersteps:
    """The trace's superstep table from its collected `@step` lines and the header keys that
    say where their ENDs are measured from, a problem per bad line or key."""
    procs = int(header["procs"]) if header.get("procs", "").isdigit() else None
    columns = tuple(header["supersteps"].split())
    steps, bad = parse_steps(collected, procs, columns)
    problems += [Problem(path, line, message) for line, message in bad]
    origin, starts, damaged = parse_reference(header, procs)
    problems += [Problem(path, _header_line(head_lines, key), message) for key, message in damaged]
    runs_of = tuple(n.strip() for n in header.get("superstep_runs", "").split(",") if n.strip())
    return Supersteps(header.get("program", Path(path).name), procs or 0, header.get("host", ""),
                      header.get("cpu", ""), path, tuple(steps), runs_of, origin, starts,
                      header.get("execution", ""), header.get("status", "complete"),
                      counts_messages="msgs_in" in columns)


def _header_line(head_lines: list[str], key: str) -> int:
    """The line number of header key `key` (1 when it is not there)."""
    return next((n for n, text in enumerate(head_lines, start=1) if text.startswith(f"#{key}:")), 1)


def declared_experiment(path: str, decl: _Declared, layout: RecordLayout, columns: dict,
                        header: Mapping[str, str], problems: list[Problem]) -> Experiment:
    """The Experiment of a valid declaration with its records' `columns`: the run's header
    fields and the declaration's, and its working set (`bytes:`) when that is valid (else a
    problem at its line, and the experiment loads without it)."""
    fields = {**header, **decl.fields, "experiment": decl.name}
    working_set = _working_set(path, decl, layout, problems)
    if working_set is None:
        fields.pop("bytes", None)
    return Experiment(layout.name, layout.formula, _with_procs(columns, header), origin=path,
                      header=fields, working_set=working_set)


def _working_set(path: str, decl: _Declared, layout: RecordLayout, problems: list[Problem]) -> str | None:
    """The canonical text of the declaration's `bytes:` expression, or None when it has none
    or a bad one (a problem says why: a syntax error, or a variable the records lack)."""
    text = decl.fields.get("bytes")
    if text is None:
        return None
    ignored = "(the experiment loads without its working set)"
    try:
        working_set = parse_working_set(text)
    except FormulaError as err:
        where = f" at column {err.column}" if err.column else ""
        problems.append(Problem(path, decl.lines["bytes"], f"experiment {decl.name!r}: bad working set "
                                f"'bytes: {text}'{where}: {err.message} {ignored}"))
        return None
    missing = [v for v in working_set.variables if v not in layout.columns]
    if missing:
        problems.append(Problem(path, decl.lines["bytes"], f"experiment {decl.name!r}: the working set "
                                f"'bytes: {text}' needs {', '.join(missing)}, which the columns "
                                f"lack {ignored}"))
        return None
    return working_set.text


def _with_procs(columns: dict, header: Mapping[str, str]) -> dict:
    """In a parallel trace (`parallel` other than none) whose records have no P column, add one
    holding the header's `procs`: the records of a sweep (one file per P) keep their P when
    same-name experiments are merged, and `balance`/`comm ... by P` can group them."""
    procs = header.get("procs", "")
    if "P" in columns or header.get("parallel", "none") == "none" or not procs.isdigit():
        return columns
    return {**columns, "P": np.full(len(columns["time"]), float(procs))}


def _check_magic(path: str, data: bytes) -> None:
    """Raise TraceError unless `data` starts with a `#cll-trace` line of a known version; the
    message quotes at most QUOTED characters of the first line, control characters escaped."""
    if not data.strip():
        raise EmptyInput(f"{quoted(path)} is empty: it holds no trace")
    first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    words = first.split()
    if b"\n" not in data and len(words) == 1 and len(words[0]) > 1 and MAGIC.startswith(words[0]):
        raise TraceError(f"{quoted(path)} is cut short: it ends inside its first line ('{words[0]}', "
                         f"where '{MAGIC} {VERSION}' and the header should follow)")
    if not words or words[0] != MAGIC:
        shown = printable(first[:QUOTED])
        shown = shown[:QUOTED] + "..." if len(shown) > QUOTED or len(first) > QUOTED else shown
        raise TraceError(f"{quoted(path)} is not a CALL trace: its first line is '{shown}', "
                         f"not '{MAGIC} {VERSION}'")
    if words[1:] != [str(VERSION)]:
        version = " ".join(words[1:]) or "(none)"
        raise TraceError(f"{quoted(path)} is a CALL trace of version {version}; "
                         f"this llac reads version {VERSION} only")


def _parse_header(path: str, lines: list[str], problems: list[Problem]):
    """Split the header lines into the global `#key: value` fields and the experiments."""
    header: dict[str, str] = {}
    header_lines: dict[str, int] = {}
    declared: list[_Declared] = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip()
        indented = line.startswith("#  ") or line.startswith("#\t")
        key, sep, value = line[1:].partition(":")
        key, value = key.strip(), value.strip()
        if not line:
            continue
        if not line.startswith("#") or not sep or not key:
            problems.append(Problem(path, number, f"not a header line (expected '#key: value'): {line[:60]!r}"))
        elif key == "experiment" and not indented:
            if not value or any(d.name == value for d in declared):
                what = "an experiment needs a name" if not value else f"experiment {value!r} is declared twice"
                problems.append(Problem(path, number, what + "; this declaration is ignored"))
                value = ""
            declared.append(_Declared(value, number))
        elif indented and declared:
            if key in declared[-1].fields and declared[-1].repeated is None:
                declared[-1].repeated = (key, declared[-1].lines[key], number)
            declared[-1].fields[key] = value
            declared[-1].lines[key] = number
        elif indented:
            problems.append(Problem(path, number, f"'{key}' belongs to no experiment (no #experiment line before it)"))
        else:
            if key in header:
                raise TraceError(f"{path}:{number}: the header gives '{key}:' twice (also at line "
                                 f"{header_lines[key]}): it was edited or damaged; keep one of them")
            header[key], header_lines[key] = value, number
            if key == "status" and value not in NORMAL_ENDS:
                problems.append(Problem(path, number, f"the program did not finish normally (status: {value})"))
            if key == "parallel" and value not in PARALLEL:
                problems.append(Problem(path, number, f"unknown 'parallel: {value}' (not {', '.join(PARALLEL)})"))
    return header, [d for d in declared if d.name]


def _layouts(path: str, declared: list[_Declared], problems: list[Problem]) -> list[RecordLayout | None]:
    """Each declared experiment's parsed formula and columns, or None (with a Problem) if invalid."""
    layouts = []
    for decl in declared:
        try:
            layouts.append(_layout(decl))
        except _HeaderProblem as err:
            problems.append(Problem(path, err.line, f"experiment {decl.name!r}: {err} "
                                    "(the experiment and its records are ignored)"))
            layouts.append(None)
    return layouts


class _HeaderProblem(Exception):
    """An invalid experiment declaration, at `line`."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def _layout(decl: _Declared) -> RecordLayout:
    """Validate one declaration: each key once, a canonical formula, and columns naming time
    and its variables."""
    if decl.repeated is not None:
        key, first, second = decl.repeated
        raise _HeaderProblem(f"'{key}:' is given twice (also at line {first}): which one holds is "
                             f"unclear", second)
    for key in ("formula", "columns"):
        if not decl.fields.get(key):
            raise _HeaderProblem(f"its header has no '{key}:' line", decl.line)
    try:
        formula = parse_formula(decl.fields["formula"], experiment=decl.name)
    except FormulaError as err:
        where = f" at column {err.column} of the formula" if err.column else ""
        raise _HeaderProblem(f"bad formula{where}: {err.message}", decl.lines["formula"]) from None
    columns = tuple(decl.fields["columns"].split())
    line = decl.lines["columns"]
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise _HeaderProblem(f"column {duplicates[0]!r} is listed twice", line)
    missing = [c for c in ("time", *formula.variables) if c not in columns]
    if missing:
        raise _HeaderProblem(f"the columns lack {', '.join(missing)}", line)
    return RecordLayout(decl.name, columns, formula)


def _check_count(path: str, decl: _Declared, loaded: int, left_out: int, problems: list[Problem]) -> None:
    """Report when the number of records loaded, with the `left_out` ones already reported
    line by line, differs from the header's `records:`."""
    announced = decl.fields.get("records")
    if announced is None:
        return
    line = decl.lines["records"]
    if not announced.isdigit():
        problems.append(Problem(path, line, f"experiment {decl.name!r}: 'records: {announced}' is not a count"))
    elif int(announced) != loaded + left_out:
        also = f" and {left_out} left out, each named with its line" if left_out else ""
        problems.append(Problem(path, line, f"experiment {decl.name!r}: the header announces "
                                f"{announced} records but {loaded} were loaded{also}"))


SET_ASIDE = ".previous"    # call run keeps the earlier run's trace under this suffix (docs/call.md)


def expand_paths(paths_or_globs: Sequence[str], set_aside: list[str] | None = None) -> list[str]:
    """Each argument as a path, or a glob expanded and sorted. A glob leaves out the traces
    that `call run` set aside (`PROG.cll.1.dat.previous`: an earlier run, which must not pass
    for this one's), unless its pattern names them; those left out go into `set_aside`. A
    glob that matches nothing, or a name that is not a file, raises TraceError naming it
    (before anything is read)."""
    paths = []
    for pattern in paths_or_globs:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if glob.has_magic(pattern) and ".prev" not in Path(pattern).name:     # `x.prev*` asks for them
            earlier = [m for m in matches if m.endswith(SET_ASIDE)]
            if earlier and len(earlier) == len(matches):
                raise TraceError(f"only traces that call run set aside match {quoted(pattern)} "
                                 f"({quoted(earlier[0])}: an earlier run); name one to load it")
            matches = [m for m in matches if not m.endswith(SET_ASIDE)]
            if set_aside is not None:
                set_aside += earlier
        if not matches:
            raise TraceError(f"no file matches {quoted(pattern)}")
        for path in matches:
            _check_file(Path(path))
        paths += matches
    return paths


def named_once(paths: list[str]) -> list[str]:
    """`paths`, unless one file is among them twice (under any name): TraceError, since its
    records would count twice ("-", standard input, is not a file)."""
    seen = {}
    for path in paths:
        resolved = path if path == "-" else Path(path).resolve()
        if resolved in seen:
            raise TraceError(f"{quoted(path)} is named twice (also as {quoted(seen[resolved])}): its records would "
                             f"count twice; load each file once")
        seen[resolved] = path
    return paths


def _check_file(path: Path) -> None:
    """TraceError unless `path` is a regular file: missing, a folder and a device each say so."""
    if path.is_file():
        return
    if path.is_dir():
        raise TraceError(f"{quoted(str(path))} is a folder, not a trace file (a glob such as "
                         f"'{path / '*.dat'}' loads the traces in it)")
    if path.exists():
        raise TraceError(f"{quoted(str(path))} is not a regular file (a device, a pipe or a socket): "
                         f"save the trace to a file first, or pipe it into `llac -c`")
    raise TraceError(f"no such file: {quoted(str(path))}")


def read_traces(paths_or_globs: Sequence[str]) -> list[Trace]:
    """Read several traces, one Trace per file of `expand_paths(paths_or_globs)`, each file once
    (`named_once`)."""
    return [read_trace(path) for path in named_once(expand_paths(paths_or_globs))]


def format_numbers(values) -> np.ndarray:
    """Values as the shortest strings that read back exactly (`0.1`, `2.13e-07`, `nan`, `inf`),
    whole numbers as plain integers (`16`, not `16.0`)."""
    values = np.asarray(values, dtype=float)
    text = values.astype(str)
    whole = np.isfinite(values) & (values == np.round(values)) & (abs(values) < 2 ** 53)
    text[whole] = values[whole].astype(np.int64).astype(str)
    return text


def write_trace(experiments: Sequence[Experiment], path: str | os.PathLike,
                header: Mapping[str, str] | None = None) -> None:
    """Write experiments as a version-1 trace (what the runtime writes), e.g. to export a subset.

    Columns are written as `rank thread time`, the formula's variables, then the other columns;
    a missing rank or thread is written as 0; a working set as the experiment's `bytes:` line.
    `header` adds or overrides global fields.
    """
    fields = {"program": "llac", "procs": "1", "status": "complete", **(header or {})}
    out = [f"{MAGIC} {VERSION}\n", *(f"#{k}: {v}\n" for k, v in fields.items())]
    tables = []
    for exp in experiments:
        names = ["rank", "thread", "time", *exp.formula.variables]
        names += [c for c in exp.column_names if c not in names]
        cols = [exp.columns.get(c, np.zeros(len(exp))) for c in names]
        out.append(f"#experiment: {exp.name}\n#  formula: {exp.formula.text}\n")
        if exp.working_set:
            out.append(f"#  bytes: {exp.working_set}\n")
        if "source" in exp.header:
            out.append(f"#  source: {exp.header['source']}\n")
        out.append(f"#  columns: {' '.join(names)}\n#  records: {len(exp)}\n")
        tables.append((exp.name, [format_numbers(c) for c in cols]))
    out.append("#data\n")
    for name, cols in tables:
        out += [f"{name} {' '.join(row)}\n" for row in zip(*cols)]
    out.append("#end\n")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(out)
