"""Vectorised parsing of a trace's record lines (`NAME v1 v2 ...`, after `#data`).

Lines are located, matched to their experiment by name and checked for their number of
fields with numpy on the raw bytes; the numeric fields of all well-formed lines of one
experiment are gathered into one byte string and converted in a single call, wherever those
lines stand in the file. Only lines that fail these checks go through a per-line path that
says exactly what is wrong with them, so damage costs time in proportion to itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from llac.formula import Formula

MAX_REPORTED = 50          # damaged records reported one by one; the rest are summarised
MAX_RUNS = 1000           # more runs of one experiment's lines than this: gather by mask
BISECT_BELOW = 64          # a damaged block smaller than this is parsed line by line
NEWLINE, SPACE, HASH = 10, 32, 35


@dataclass(frozen=True)
class RecordLayout:
    """A valid experiment: its name, record columns (after the name) and formula."""
    name: str
    columns: tuple[str, ...]
    formula: Formula


@dataclass
class RecordResult:
    """The records read: per experiment an (n, columns) float array in file order, the
    problems as (line, message), whether `#end` was found, and the line after the last one."""
    values: dict[str, np.ndarray]
    problems: list[tuple[int, str]] = field(default_factory=list)
    complete: bool = False
    last_line: int = 0


@dataclass
class _Lines:
    """The body's bytes (`raw`, and `data` as an array), and where each newline-terminated line
    starts, ends (its newline), where its first space is (== end when it has none) and how
    many spaces it holds."""
    raw: bytes
    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    first_space: np.ndarray
    spaces: np.ndarray

    @classmethod
    def of(cls, body: bytes) -> "_Lines":
        data = np.frombuffer(body, dtype=np.uint8)
        ends = np.flatnonzero(data == NEWLINE)
        starts = np.zeros_like(ends)
        starts[1:] = ends[:-1] + 1
        spaces_at = np.flatnonzero(data == SPACE)
        first = np.searchsorted(spaces_at, starts)
        first_space = np.append(spaces_at, len(data))[first]
        first_space = np.minimum(first_space, ends)
        return cls(body, data, starts, ends, first_space, np.searchsorted(spaces_at, ends) - first)

    def text(self, i: int) -> str:
        """Line i as text (without its newline)."""
        return self.raw[self.starts[i]:self.ends[i]].decode("utf-8", "replace")

    def named(self, name: str) -> np.ndarray:
        """Boolean mask of the lines whose first word, ended by a space, is `name`."""
        raw = np.frombuffer(name.encode("utf-8"), dtype=np.uint8)
        mask = (self.first_space - self.starts) == len(raw)
        candidates = np.flatnonzero(mask)
        same = (self.data[self.starts[candidates, None] + np.arange(len(raw))] == raw).all(axis=1)
        mask[candidates[~same]] = False
        return mask

    def values(self, lines: np.ndarray, name: str, ncols: int) -> np.ndarray | None:
        """The (len(lines), ncols) values of the given lines of experiment `name` converted in
        one go, or None when some line among them is damaged (then they must be split up)."""
        breaks = np.flatnonzero(np.diff(lines) != 1) + 1
        if len(breaks) < MAX_RUNS:      # the usual case: records of one experiment stand together
            firsts, lasts = lines[np.r_[0, breaks]], lines[np.r_[breaks - 1, len(lines) - 1]]
            words = b"".join(self.raw[s:e + 1] for s, e in zip(self.starts[firsts], self.ends[lasts])).split()
            names = words[::ncols + 1]
            if len(words) != len(lines) * (ncols + 1) or names.count(name.encode("utf-8")) != len(lines):
                return None
            del words[::ncols + 1]
        else:                           # interleaved: gather the bytes after each line's name
            marks = np.zeros(len(self.data) + 1, dtype=np.int8)
            marks[self.first_space[lines] + 1] = 1
            marks[self.ends[lines] + 1] = -1
            words = self.data[np.cumsum(marks[:-1], dtype=np.int8).view(bool)].tobytes().split()
            if len(words) != len(lines) * ncols:
                return None
        try:
            return np.array(words, dtype=float).reshape(len(lines), ncols)
        except ValueError:
            return None


def parse_records(body: bytes, first_line: int, layouts: Sequence[RecordLayout],
                  invalid: Mapping[str, int]) -> RecordResult:
    """Parse the record lines in `body` (whose first line is file line `first_line`).

    `layouts` are the valid experiments; records of the experiments in `invalid` (name ->
    header line) are skipped with one problem each. Everything after a `#end` line is ignored.
    """
    lines = _Lines.of(body)
    result = RecordResult({lay.name: np.empty((0, len(lay.columns))) for lay in layouts})
    count = _find_end(lines, body, first_line, result)
    result.last_line = first_line + count
    owner = np.full(count, -1)
    for k, lay in enumerate(layouts):
        owner[lines.named(lay.name)[:count]] = k
    parsed = {lay.name: ([], []) for lay in layouts}    # name -> (row arrays, line index arrays)
    damaged: list[tuple[int, str]] = []
    for k, lay in enumerate(layouts):
        fast = np.flatnonzero((owner == k) & (lines.spaces[:count] == len(lay.columns)))
        _convert(lines, fast, lay, parsed[lay.name], damaged, first_line)
    skipped: dict[str, list[int]] = {}
    by_name = {lay.name: lay for lay in layouts}
    for i in _slow_lines(lines, owner, layouts, count):
        words = lines.text(i).split()
        lay = by_name.get(words[0])
        if lay is not None:
            _parse_line(i, words, lay, parsed[lay.name], damaged, first_line)
        else:
            skipped.setdefault(words[0], []).append(first_line + i)
    for name, (rows, indices) in parsed.items():
        if len(rows) == 1:
            result.values[name] = rows[0]
        elif rows:
            order = np.argsort(np.concatenate(indices), kind="stable")
            result.values[name] = np.concatenate(rows)[order]
    result.problems += _summarise(damaged, skipped, invalid)
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


def _slow_lines(lines: _Lines, owner: np.ndarray, layouts: Sequence[RecordLayout], count: int) -> list[int]:
    """Lines not taken by the fast path: not blank, not `#`, and not a well-formed record."""
    expected = np.array([len(lay.columns) for lay in layouts] + [-1])
    well_formed = (owner >= 0) & (lines.spaces[:count] == expected[owner])
    blank = lines.starts[:count] == lines.ends[:count]
    hashes = lines.data[lines.starts[:count]] == HASH
    candidates = np.flatnonzero(~(well_formed | blank | hashes))
    return [i for i in candidates if lines.text(i).split()]


def _convert(lines: _Lines, indices: np.ndarray, lay: RecordLayout, out, damaged, first_line: int) -> None:
    """Convert the well-spaced lines `indices` of one experiment in bulk; on failure bisect
    until the damaged lines are found and parsed one by one."""
    if len(indices) == 0:
        return
    values = lines.values(indices, lay.name, len(lay.columns))
    if values is not None:
        out[0].append(values)
        out[1].append(indices)
        return
    if len(indices) < BISECT_BELOW:
        for i in indices:
            _parse_line(i, lines.text(i).split(), lay, out, damaged, first_line)
        return
    half = len(indices) // 2
    _convert(lines, indices[:half], lay, out, damaged, first_line)
    _convert(lines, indices[half:], lay, out, damaged, first_line)


def _parse_line(i: int, words: list[str], lay: RecordLayout, out, damaged, first_line: int) -> None:
    """Parse one record's words; keep it, or note exactly what is wrong with it."""
    line = first_line + i
    if len(words) != len(lay.columns) + 1:
        damaged.append((line, f"record of {lay.name!r} has {len(words) - 1} values, "
                              f"expected {len(lay.columns)} ({' '.join(lay.columns)}); it is ignored"))
        return
    try:
        row = [float(w) for w in words[1:]]
    except ValueError:
        bad = next(j for j, w in enumerate(words[1:]) if not is_number(w))
        damaged.append((line, f"record of {lay.name!r}: {words[bad + 1][:30]!r} is not a number "
                              f"(column {lay.columns[bad]}); it is ignored"))
        return
    out[0].append(np.array([row]))
    out[1].append(np.array([i]))


def is_number(word: str) -> bool:
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
