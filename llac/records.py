"""Vectorised parsing of a trace's record lines (`NAME v1 v2 ...`, after `#data`).

Lines are located, matched to their experiment by name and checked with numpy on the raw
bytes: a well-formed line is the name and its values separated by single spaces, nothing
else (no TAB or other control whitespace, no doubled, leading or trailing space; `\\r\\n`
line ends only in a file written with them). The values of all well-formed lines of one
experiment are gathered and converted in a single call to C (`llac._records`, built from
runtime_c/llac_records.c), wherever those lines stand in the file; since every such line
holds exactly its number of values, checked again line by line in C, no damage can move a
value from one record to another. Every other line goes through a per-line path that applies the
same rules and says exactly what is wrong with it, so damage costs time in proportion to itself.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from cll_grammar.formula import Formula
from llac.numbers import number_text

MAX_REPORTED = 50          # damaged records reported one by one; the rest are summarised
MAX_RUNS = 1000           # more runs of one experiment's lines than this: gather by mask
BISECT_BELOW = 64          # a damaged block smaller than this is parsed line by line
NEWLINE, SPACE, HASH, CR = 10, 32, 35, 13
WHOLE_COLUMNS = ("rank", "thread")    # columns that count: a record with rank 0.5 cannot be placed
NOT_FINITE, NOT_WHOLE = "is not a finite number", "is not a whole number >= 0"
CONTROL_SPACE = {9: "a TAB", 11: "a vertical tab", 12: "a form feed", 13: "a carriage return"}


@dataclass(frozen=True)
class RecordLayout:
    """A valid experiment: its name, record columns (after the name) and formula."""
    name: str
    columns: tuple[str, ...]
    formula: Formula


@dataclass
class RecordResult:
    """The records read: per experiment an (n, columns) float array in file order, the
    problems as (line, message), how many of each experiment's record lines were left out
    (each reported among the problems), the (line, text) of the lines `collect`ed, whether
    `#end` was found, and the line after the last one."""
    values: dict[str, np.ndarray]
    problems: list[tuple[int, str]] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)
    collected: list[tuple[int, bytes]] = field(default_factory=list)
    complete: bool = False
    last_line: int = 0


@dataclass
class _Lines:
    """The body's bytes (`raw`, and `data` as an array), and where each newline-terminated line
    starts, ends (its newline), stops (== ends, or the `\\r` before it in a `\\r\\n` file), where
    its first space is (== end when it has none), how many spaces it holds, and whether its
    spacing is clean (no control whitespace, no space next to a space or at the line's end)."""
    raw: bytes
    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    stops: np.ndarray
    first_space: np.ndarray
    spaces: np.ndarray
    clean: np.ndarray

    @classmethod
    def of(cls, body: bytes, crlf: bool = False) -> "_Lines":
        """Locate the lines of `body`; `crlf` when the file's lines end with `\\r\\n`."""
        data = np.frombuffer(body, dtype=np.uint8)
        ends = np.flatnonzero(data == NEWLINE)
        starts = np.zeros_like(ends)
        starts[1:] = ends[:-1] + 1
        stops = ends - ((data[ends - 1] == CR) & (ends > starts)) if crlf and len(ends) else ends
        spaces_at = np.flatnonzero(data == SPACE)
        first = np.searchsorted(spaces_at, starts)
        first_space = ends.copy()                    # a line without a space: its end
        has_space = first < len(spaces_at)
        first_space[has_space] = np.minimum(spaces_at[first[has_space]], ends[has_space])
        clean = np.ones(len(ends), dtype=bool)
        bad_lines = np.searchsorted(ends, _bad_spacing(body, data, spaces_at, stops[stops != ends]))
        clean[bad_lines[bad_lines < len(ends)]] = False      # (not those of a last line cut short)
        return cls(body, data, starts, ends, stops, first_space,
                   np.searchsorted(spaces_at, ends) - first, clean)

    def record(self, i: int) -> bytes:
        """Line i's bytes, without its line end."""
        return self.raw[self.starts[i]:self.stops[i]]

    def text(self, i: int) -> str:
        """Line i as text (without its line end)."""
        return self.record(i).decode("utf-8", "replace")

    def named(self, name: str) -> np.ndarray:
        """Boolean mask of the lines whose first word, ended by a space, is `name`."""
        raw = np.frombuffer(name.encode("utf-8"), dtype=np.uint8)
        mask = (self.first_space - self.starts) == len(raw)
        candidates = np.flatnonzero(mask)
        same = (self.data[self.starts[candidates, None] + np.arange(len(raw))] == raw).all(axis=1)
        mask[candidates[~same]] = False
        return mask

    def values(self, lines: np.ndarray, ncols: int) -> np.ndarray | None:
        """The (len(lines), ncols) values of the given well-formed lines converted in one go
        (in C, `llac._records`), or None when some line among them is damaged (then they
        must be split up)."""
        from llac._records import ffi, lib
        breaks = np.flatnonzero(np.diff(lines) != 1) + 1
        if len(breaks) < MAX_RUNS:      # the usual case: records of one experiment stand together
            firsts, lasts = lines[np.r_[0, breaks]], lines[np.r_[breaks - 1, len(lines) - 1]]
            block = b"".join(self.raw[s:e + 1] for s, e in zip(self.starts[firsts], self.ends[lasts]))
            named = 1
        else:                           # interleaved: gather the bytes after each line's name
            marks = np.zeros(len(self.data) + 1, dtype=np.int8)
            marks[self.first_space[lines] + 1] = 1
            marks[self.ends[lines] + 1] = -1
            block = self.data[np.cumsum(marks[:-1], dtype=np.int8).view(bool)].tobytes()
            named = 0
        out = np.empty((len(lines), ncols))
        done = lib.llac_parse_records(block, len(block), len(lines), named, ncols,
                                      ffi.cast("double *", out.ctypes.data))
        return out if done == len(lines) else None


def _bad_spacing(body: bytes, data: np.ndarray, spaces_at: np.ndarray,
                 line_end_crs: np.ndarray) -> np.ndarray:
    """Positions in `body` that break a record's spacing: control whitespace (except the `\\r`s
    at `line_end_crs`, those of `\\r\\n` line ends; each looked for with a fast bytes search
    first) and the spaces (at `spaces_at`) followed by a space or a line end."""
    found = [np.empty(0, dtype=np.int64)]
    for byte in CONTROL_SPACE:
        if bytes([byte]) in body:
            at = np.flatnonzero(data == byte)
            found.append(np.setdiff1d(at, line_end_crs, assume_unique=True) if byte == CR else at)
    after = np.full(len(spaces_at), NEWLINE, dtype=np.uint8)    # a space that ends the body
    inside = spaces_at + 1 < len(data)
    after[inside] = data[spaces_at[inside] + 1]
    found.append(spaces_at[(after == SPACE) | (after == NEWLINE) | (after == CR)])
    return np.concatenate(found)


def parse_records(body: bytes, first_line: int, layouts: Sequence[RecordLayout],
                  invalid: Mapping[str, int], crlf: bool = False, collect: str | None = None) -> RecordResult:
    """Parse the record lines in `body` (whose first line is file line `first_line`).

    `layouts` are the valid experiments; records of the experiments in `invalid` (name ->
    header line) are skipped with one problem each. Everything after a `#end` line is ignored.
    `crlf`: the file's lines end with `\\r\\n` (then that `\\r` is no damage). Lines whose
    first word is `collect` (the superstep records, `@step`) are handed back in
    `result.collected` with their line numbers, for their own reader (`llac.supersteps`).
    """
    lines = _Lines.of(body, crlf)
    result = RecordResult({lay.name: np.empty((0, len(lay.columns))) for lay in layouts})
    count = _find_end(lines, body, first_line, result)
    result.last_line = first_line + count
    owner = np.full(count, -1)
    for k, lay in enumerate(layouts):
        owner[lines.named(lay.name)[:count]] = k
    parsed = {lay.name: ([], []) for lay in layouts}    # name -> (row arrays, line index arrays)
    damaged: list[tuple[int, str]] = []
    well_formed = _well_formed(lines, owner, layouts, count)
    for k, lay in enumerate(layouts):
        fast = np.flatnonzero(well_formed & (owner == k))
        before = len(damaged)
        _convert(lines, fast, lay, parsed[lay.name], damaged, first_line)
        result.left_out[lay.name] += len(damaged) - before
    skipped: dict[str, list[int]] = {}
    blank: list[int] = []
    by_name = {lay.name: lay for lay in layouts}
    for i in _slow_lines(lines, well_formed, count):
        words = lines.record(i).split()
        lay = by_name.get(words[0].decode("utf-8", "replace")) if words else None
        if lay is not None:
            before = len(damaged)
            _parse_line(i, lines.record(i), lay, parsed[lay.name], damaged, first_line)
            result.left_out[lay.name] += len(damaged) - before
        elif words and collect is not None and words[0] == collect.encode():
            result.collected.append((first_line + i, lines.record(i)))
        elif words:
            skipped.setdefault(words[0].decode("utf-8", "replace"), []).append(first_line + i)
        else:
            blank.append(first_line + i)
    for name, (rows, indices) in parsed.items():
        if len(rows) == 1:
            values, at = rows[0], indices[0]
        elif rows:
            at = np.concatenate(indices)
            order = np.argsort(at, kind="stable")
            values, at = np.concatenate(rows)[order], at[order]
        else:
            continue
        before = len(damaged)
        result.values[name] = _valid_values(by_name[name], values, at, damaged, first_line)
        result.left_out[name] += len(damaged) - before
    result.problems += _summarise(damaged, skipped, invalid)
    if blank:
        more = f" (and {len(blank) - 1} more)" if len(blank) > 1 else ""
        result.problems.append((blank[0], f"blank line among the records{more}: the trace may be "
                                          "damaged (a value cut short by a line break)"))
    return result


def _find_end(lines: _Lines, body: bytes, first_line: int, result: RecordResult) -> int:
    """Find the `#end` line; report a cut-short last line, lines after `#end` and other
    `#` lines in the data. Returns how many lines (from the start) hold records."""
    count = len(lines.starts)
    tail = body[lines.ends[-1] + 1:] if count else body
    hashes = np.flatnonzero(lines.data[lines.starts] == HASH) if count else np.empty(0, int)
    for i in hashes:
        text = lines.text(i).strip()
        if text == "#end":
            result.complete = True
            after = count - i - 1 + (1 if tail.strip() else 0)
            if after:
                result.problems.append((first_line + i + 1, f"{after} line(s) after #end are ignored"))
            return int(i)
        result.problems.append((first_line + i, f"unexpected header line among the records: {text[:40]!r}"))
    if tail.strip() == b"#end":
        result.complete = True
    elif tail.strip():
        result.problems.append((first_line + count, "the last record is cut short "
                                "(no end of line): it is ignored"))
    return count


def _well_formed(lines: _Lines, owner: np.ndarray, layouts: Sequence[RecordLayout], count: int) -> np.ndarray:
    """Mask of the first `count` lines that are records of a valid experiment with clean
    spacing and as many spaces as the experiment has columns: exactly one word per value."""
    expected = np.array([len(lay.columns) for lay in layouts] + [-1])
    return (owner >= 0) & lines.clean[:count] & (lines.spaces[:count] == expected[owner])


def _slow_lines(lines: _Lines, well_formed: np.ndarray, count: int) -> np.ndarray:
    """Lines not taken by the fast path: not `#`, and not a well-formed record."""
    hashes = lines.data[lines.starts[:count]] == HASH
    return np.flatnonzero(~(well_formed | hashes))


def _convert(lines: _Lines, indices: np.ndarray, lay: RecordLayout, out, damaged, first_line: int) -> None:
    """Convert the well-spaced lines `indices` of one experiment in bulk; on failure bisect
    until the damaged lines are found and parsed one by one."""
    if len(indices) == 0:
        return
    values = lines.values(indices, len(lay.columns))
    if values is not None:
        out[0].append(values)
        out[1].append(indices)
        return
    if len(indices) < BISECT_BELOW:
        for i in indices:
            _parse_line(i, lines.record(i), lay, out, damaged, first_line)
        return
    half = len(indices) // 2
    _convert(lines, indices[:half], lay, out, damaged, first_line)
    _convert(lines, indices[half:], lay, out, damaged, first_line)


def _parse_line(i: int, line: bytes, lay: RecordLayout, out, damaged, first_line: int) -> None:
    """Parse one record line by the fast path's rules; keep it, or note exactly what is wrong."""
    number = first_line + i
    spacing = spacing_fault(line)
    if spacing:
        damaged.append((number, f"record of {lay.name!r} has {spacing} (values are separated by "
                                "single spaces); it is ignored"))
        return
    words = line.split(b" ")[1:]
    if len(words) != len(lay.columns):
        damaged.append((number, f"record of {lay.name!r} has {len(words)} values, "
                                f"expected {len(lay.columns)} ({' '.join(lay.columns)}); it is ignored"))
        return
    try:
        row = [plain_float(w) for w in words]
    except ValueError:
        bad = next(j for j, w in enumerate(words) if not is_number(w) or b"_" in w)
        damaged.append((number, f"record of {lay.name!r}: {words[bad][:30].decode('utf-8', 'replace')!r} "
                                f"is not a number (column {lay.columns[bad]}); it is ignored"))
        return
    out[0].append(np.array([row]))
    out[1].append(np.array([i]))


def _valid_values(lay: RecordLayout, values: np.ndarray, at: np.ndarray, damaged, first_line: int) -> np.ndarray:
    """The rows of `values` (records at line indices `at`) whose formula variables are finite
    and whose rank and thread are whole numbers >= 0; each other one is noted in `damaged` and
    left out (a record that cannot be placed; a NaN time is kept here and left out by the fit)."""
    checks = [(lay.columns.index(v), NOT_FINITE) for v in lay.formula.variables]
    checks += [(lay.columns.index(c), NOT_WHOLE) for c in WHOLE_COLUMNS if c in lay.columns]
    failing = [(column, why, _fails(values[:, column], why)) for column, why in checks]
    bad = np.logical_or.reduce([f for _, _, f in failing]) if failing else np.zeros(len(values), bool)
    for row in np.flatnonzero(bad):
        column, why = next((c, w) for c, w, f in failing if f[row])
        damaged.append((first_line + int(at[row]), f"record of {lay.name!r}: {lay.columns[column]} = "
                                                   f"{number_text(values[row, column])} {why}; it is left out"))
    return values[~bad] if bad.any() else values


def _fails(x: np.ndarray, why: str) -> np.ndarray:
    """Where the values `x` fail the check `why` (NOT_FINITE or NOT_WHOLE)."""
    finite = np.isfinite(x)
    return ~finite if why == NOT_FINITE else ~(finite & (x >= 0) & (x == np.floor(x)))


def spacing_fault(line: bytes) -> str:
    """What breaks a record line's spacing (`"a TAB at column 12"`), or "" when it is clean."""
    for column, byte in enumerate(line, start=1):
        if byte in CONTROL_SPACE:
            return f"{CONTROL_SPACE[byte]} at column {column}"
    for what, at in (("two spaces in a row", line.find(b"  ")),
                     ("a space at its start", 0 if line[:1] == b" " else -1),
                     ("a space at its end", len(line) - 1 if line[-1:] == b" " else -1)):
        if at >= 0:
            return f"{what} at column {at + 1}"
    return ""


def plain_float(word: bytes) -> float:
    """`float(word)`, but refusing the digit separators (`1_000`) and the non-ASCII digits and
    spaces (`１６`, a no-break space) that float() reads and the bulk converter (strtod) does
    not: both paths accept the same numbers."""
    if b"_" in word or not word.isascii():
        raise ValueError(f"not a plain number: {word!r}")
    return float(word)


def is_number(word: str | bytes) -> bool:
    """Whether `word` reads as a float."""
    try:
        float(word)
        return True
    except ValueError:
        return False


def _summarise(damaged, skipped: Mapping[str, list[int]], invalid: Mapping[str, int]):
    """Problems for damaged records (one by one up to MAX_REPORTED) and one per skipped name."""
    damaged.sort()
    problems = damaged[:MAX_REPORTED]
    if len(damaged) > MAX_REPORTED:
        problems.append((damaged[MAX_REPORTED][0], f"{len(damaged) - MAX_REPORTED} more damaged "
                                                   "records are ignored (not listed)"))
    for name, at in skipped.items():
        more = f" (and {len(at) - 1} more lines)" if len(at) > 1 else ""
        if name in invalid:
            why = f"records of experiment {name!r} are ignored{more}: its header at line {invalid[name]} is invalid"
        else:
            why = f"record of unknown experiment {name[:30]!r}{more} is ignored"
        problems.append((at[0], why))
    return problems
