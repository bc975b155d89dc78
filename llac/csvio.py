"""Import and export one experiment as CSV: a header row of column names, one record per row.

`read_csv` returns `(experiment, problems)`: bad rows are reported as `Problem`s with their
line numbers and left out, every good row loads. A file that cannot be used at all (missing,
empty, no time column, a formula variable without a column) raises `CsvError`, an
`InputError` like the other readers' errors.
"""
from __future__ import annotations

import csv
import io
import os

import numpy as np

from cll_grammar.columns import MPI_COLUMNS, PUB_COLUMNS, RECORD_COLUMNS
from cll_grammar.formula import parse_formula
from llac.errors import InputError
from llac.experiment import Experiment
from llac.records import plain_float
from llac.trace import Problem, format_numbers, read_file_bytes


class CsvError(InputError):
    """A CSV file that cannot be imported at all; the message is one sentence with the path."""


def read_csv(path: str | os.PathLike, formula: str, name: str | None = None,
             time: str = "time") -> tuple[Experiment, tuple[Problem, ...]]:
    """Read a CSV file as one experiment with `formula` (named `name`, default the formula's).

    The first row names the columns; `time` names the column of elapsed times (it becomes
    `time`); every formula variable must be a column. Values must be numbers as C reads them
    (`nan` and `inf` too, not `1_000` or full-width digits): a row with a bad value or the wrong number of fields is reported and skipped; a
    column whose values are not numbers at all, and which the formula does not need, is left
    out with one problem. Raises CsvError for an unusable file and FormulaError (with the
    column in the formula text) for a bad formula.
    """
    where = os.fspath(path)
    parsed = parse_formula(formula, experiment=name)
    text = read_file_bytes(where).decode("utf-8-sig", "replace")
    rows = [(number, row) for number, row in enumerate(csv.reader(io.StringIO(text)), start=1)
            if any(cell.strip() for cell in row)]
    if not rows:
        raise CsvError(f"{where!r} is empty: it holds no header row")
    names = [cell.strip() for cell in rows[0][1]]
    _check_names(where, names, time, parsed.variables)
    needed = {time, *parsed.variables}
    problems, kept, lines = [], [], []
    for number, row in rows[1:]:
        if len(row) != len(names):
            problems.append(Problem(where, number, f"row has {len(row)} fields, the header names {len(names)}; "
                                    "it is ignored"))
            continue
        kept.append(row)
        lines.append(number)
    table, good = _numbers(where, names, needed, kept, lines, problems)
    for variable in parsed.variables:      # as the trace reader: a record needs finite variables
        for i in np.flatnonzero(good & ~np.isfinite(table[variable])):
            problems.append(Problem(where, lines[i], f"{variable} = {table[variable][i]:g} is not a finite "
                                    "number; the row is ignored"))
            good[i] = False
    columns = {("time" if c == time else c): table[c][good] for c in table}
    problems.sort(key=lambda p: p.line)
    # declared as a trace declares them: the record's columns, the formula's variables, then
    # the columns each record measures; any other column is a program variable
    declared = [c for c in columns if c in RECORD_COLUMNS] + list(parsed.variables) + \
        [c for c in columns if _measured(c) and c not in parsed.variables]
    header = {"formula": parsed.text, "columns": " ".join(declared), "experiment": parsed.name}
    return Experiment(parsed.name, parsed, columns, origin=where, header=header), tuple(problems)


def _measured(column: str) -> bool:
    """Whether a CSV column is one that a trace's records measure rather than a program
    variable: the MPI and PUB layers' columns and hardware counters (perf_..., PAPI_...), as
    an exported experiment writes them."""
    return column in (*MPI_COLUMNS, *PUB_COLUMNS) or column.startswith(("perf_", "PAPI_"))


def _check_names(where: str, names: list[str], time: str, variables) -> None:
    """Raise CsvError for an empty or duplicate column name or a missing time/variable column."""
    if "" in names:
        raise CsvError(f"{where!r}: column {names.index('') + 1} of the header row has no name")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CsvError(f"{where!r}: column {twice[0]!r} appears twice in the header row")
    if time != "time" and "time" in names:
        raise CsvError(f"{where!r} has a column 'time' besides the time column {time!r}; rename one")
    missing = [v for v in (time, *variables) if v not in names]
    if missing:
        hint = (" (llac's load takes the times from the column named 'time': name the column of times "
                "so in the header row)") if time in missing else ""
        raise CsvError(f"{where!r} has no column {', '.join(map(repr, missing))}{hint}; "
                       f"its columns are {', '.join(names)}")


def _numbers(where, names, needed, rows, lines, problems):
    """Convert each column to floats; returns the columns and the mask of rows where every
    kept column is a number. Bad values in needed columns drop their row; an unneeded
    column with any non-number is left out whole."""
    table, good = {}, np.ones(len(rows), dtype=bool)
    for j, name in enumerate(names):
        cells = [row[j].strip() for row in rows]
        values, bad = _floats(cells)
        if bad and name not in needed:
            i = bad[0]
            problems.append(Problem(where, lines[i], f"column {name!r} holds {cells[i][:30]!r}, not a number; "
                                    "the column is not loaded"))
            continue
        for i in bad:
            if good[i]:
                problems.append(Problem(where, lines[i], f"{cells[i][:30]!r} in column {name!r} is not a number; "
                                        "the row is ignored"))
            good[i] = False
        table[name] = values
    return table, good


def _floats(cells: list[str]) -> tuple[np.ndarray, list[int]]:
    """The cells as floats (NaN where they are not numbers) and the indices of those that are not.
    A number is what C's strtod and a CSV user take for one: ASCII digits, a sign, a decimal
    point, an exponent, inf and nan; not the digit separators (`1_000`) and other scripts'
    digits (full-width `１６`) that Python's float() also reads (`llac.records.plain_float`,
    as the trace reader)."""
    joined = "".join(cells)
    if joined.isascii() and "_" not in joined:
        try:
            return np.array(cells, dtype=float), []
        except ValueError:
            pass
    values, bad = np.full(len(cells), np.nan), []
    for i, cell in enumerate(cells):
        try:
            values[i] = plain_float(cell.encode())
        except ValueError:
            bad.append(i)
    return values, bad


def write_csv(experiment: Experiment, path: str | os.PathLike) -> None:
    """Write an experiment's columns as CSV (header row, then one row per record) that
    `read_csv` reads back exactly: shortest exact numbers, whole numbers without `.0`."""
    columns = [format_numbers(experiment.columns[c]) for c in experiment.column_names]
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(experiment.column_names)
        writer.writerows(zip(*columns))
