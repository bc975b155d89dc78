"""Export experiments to Extra-P's text input format, and import that format.

The format (read by Extra-P's `--text` reader, `extrap.fileio.file_reader.text_file_reader`):

    PARAMETER N                     one line per parameter (1 to 4)
    POINTS 16 32 64                 one parameter: values; several: ( 16 1 ) ( 16 2 ) ...
    REGION rowinit                  then, per region and metric,
    METRIC time
    DATA 2.1e-07 2.2e-07            one DATA line per point, in POINTS order: the repetitions

Every region must have a DATA line for every point, so experiments exported to one file
must share their parameters and sample points.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

import numpy as np

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.errors import InputError
from llac.fit_data import group_rows
from llac.records import is_number
from llac.trace import format_numbers, read_file_bytes

MAX_PARAMETERS = 4
NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_]")


class ExtrapError(InputError):
    """Experiments that Extra-P's text format cannot hold, or a text file that is not in it."""


def write_extrap(experiments: Experiment | Iterable[Experiment], path: str | os.PathLike,
                 parameters: Sequence[str] | None = None) -> None:
    """Write experiments as one Extra-P text file: one REGION (metric `time`) per experiment.

    `parameters` (default: the first experiment's formula variables) are Extra-P's
    parameters; each distinct combination of their values is a point, and all records at a
    point (all ranks, threads and repetitions) are its DATA values, in record order.
    Raises ExtrapError when the experiments cannot share one file.
    """
    exps = [experiments] if isinstance(experiments, Experiment) else list(experiments)
    if not exps:
        raise ExtrapError("there is no experiment to export to Extra-P")
    params = tuple(parameters) if parameters is not None else exps[0].formula.variables
    if not 1 <= len(params) <= MAX_PARAMETERS:
        raise ExtrapError(f"Extra-P's text format takes 1 to {MAX_PARAMETERS} parameters, "
                          f"not {len(params)} ({', '.join(params) or 'none'}): name them explicitly")
    points, groups = _points(exps[0], params)
    out = [f"PARAMETER {p}\n" for p in params] + ["\n", "POINTS " + _format_points(points) + "\n"]
    for exp in exps:
        other, groups = _points(exp, params)
        if not np.array_equal(other, points):
            raise ExtrapError(f"experiment {exp.name!r} was measured at other points than {exps[0].name!r}; "
                              "Extra-P needs the same points for every region: export them to separate files")
        out += [f"\nREGION {exp.name}\n", "METRIC time\n"]
        out += [f"DATA {' '.join(format_numbers(exp.columns['time'][g]))}\n" for g in groups]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(out)


def _points(exp: Experiment, params: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct parameter combinations of `exp` (one row each) and, per point, the
    indices of its records in record order."""
    missing = [p for p in params if p not in exp.columns]
    if missing:
        raise ExtrapError(f"experiment {exp.name!r} has no column {', '.join(map(repr, missing))}")
    if len(exp) == 0:
        raise ExtrapError(f"experiment {exp.name!r} has no records to export")
    table = np.column_stack([exp.columns[p] for p in params])
    if not np.all(np.isfinite(table)):
        raise ExtrapError(f"experiment {exp.name!r} has a parameter value that is NaN or infinite")
    group, first = group_rows([table[:, j] for j in range(table.shape[1])], len(exp))
    order = np.argsort(group, kind="stable")
    return table[first], np.split(order, np.cumsum(np.bincount(group))[:-1])


def _format_points(points: np.ndarray) -> str:
    """The POINTS list: bare values for one parameter, `( a b )` tuples for several."""
    columns = [format_numbers(points[:, j]) for j in range(points.shape[1])]
    if len(columns) == 1:
        return " ".join(columns[0])
    return " ".join(f"( {' '.join(row)} )" for row in zip(*columns))


def read_extrap(path: str | os.PathLike) -> list[Experiment]:
    """Read an Extra-P text file: one experiment per REGION and METRIC, its DATA values in the
    column `time` (whatever the metric), the parameters as columns, one record per value.

    Extra-P has no formulas: each experiment gets the constant model `NAME[0]`; give it its
    real one with `experiment.replace(formula=parse_formula(text, experiment=NAME))`. Region
    names become identifiers (other characters become `_`; the metric is appended when a
    file has several); the original names are in `header['region']` and `header['metric']`.
    Raises ExtrapError with `path:line:` for a line that is not in the format.
    """
    where = os.fspath(path)
    reader = _TextReader(where)
    for number, line in enumerate(read_file_bytes(where).decode("utf-8", "replace").split("\n"), start=1):
        words = line.split()
        if words and not words[0].startswith("#"):
            reader.field(number, words[0], words[1:])
    if not reader.series:
        raise ExtrapError(f"{where!r} holds no DATA lines: it is not an Extra-P text file with measurements")
    return reader.experiments()


class _TextReader:
    """The state of reading one Extra-P text file line by line."""

    def __init__(self, path: str):
        self.path = path
        self.parameters: list[str] = []
        self.points: list[tuple[float, ...]] = []
        self.region, self.metric = "", "time"
        self.series: dict[tuple[str, str], list[list[float]]] = {}

    def fail(self, line: int, message: str):
        raise ExtrapError(f"{self.path}:{line}: {message}")

    def field(self, line: int, name: str, values: list[str]) -> None:
        """Apply one `NAME values...` line."""
        if name == "PARAMETER" and values:
            self.parameters += values
        elif name == "POINTS" and values:
            self.points += self._points(line, " ".join(values))
        elif name in ("REGION", "METRIC") and values:
            setattr(self, name.lower(), " ".join(values))
            self.series.setdefault((self.region, self.metric), [])
        elif name == "DATA":
            data = self.series.setdefault((self.region, self.metric), [])
            if len(data) >= len(self.points):
                self.fail(line, f"more DATA lines than the {len(self.points)} POINTS")
            data.append(self._numbers(line, values))
        else:
            self.fail(line, f"expected PARAMETER, POINTS, REGION, METRIC or DATA with values, not {name!r}")

    def _points(self, line: int, text: str) -> list[tuple[float, ...]]:
        """Parse a POINTS line's values: bare numbers for one parameter, `( a b )` tuples for more."""
        if not 1 <= len(self.parameters) <= MAX_PARAMETERS:
            self.fail(line, f"POINTS need 1 to {MAX_PARAMETERS} PARAMETER names before them")
        groups = re.findall(r"\(([^()]*)\)", text) if "(" in text else text.split()
        points = [tuple(self._numbers(line, g.split())) for g in groups]
        if any(len(p) != len(self.parameters) for p in points) or ("(" not in text and len(self.parameters) > 1):
            self.fail(line, f"each point needs {len(self.parameters)} values ({' '.join(self.parameters)})")
        return points

    def _numbers(self, line: int, words: list[str]) -> list[float]:
        try:
            return [float(w) for w in words]
        except ValueError:
            self.fail(line, f"{next(w for w in words if not is_number(w))[:30]!r} is not a number")

    def experiments(self) -> list[Experiment]:
        """One experiment per (region, metric) with DATA."""
        series = {key: data for key, data in self.series.items() if data}
        several_metrics = len({metric for _, metric in series}) > 1
        used: set[str] = set()
        result = []
        for (region, metric), data in series.items():
            name = _identifier(f"{region}_{metric}" if several_metrics else region, used)
            counts = [len(values) for values in data]
            points = np.repeat(np.array(self.points[:len(data)]), counts, axis=0)
            columns = {p: points[:, j] for j, p in enumerate(self.parameters)}
            columns["time"] = np.array([v for values in data for v in values])
            header = {"region": region, "metric": metric, "experiment": name}
            result.append(Experiment(name, parse_formula(f"{name}[0]", experiment=name), columns,
                                     origin=self.path, header=header))
        return result


def _identifier(text: str, used: set[str]) -> str:
    """`text` made a unique formula identifier: other characters become `_`."""
    name = NOT_IN_NAME.sub("_", text) or "region"
    if name[0].isdigit() or name in ("and", "or", "not"):
        name = "_" + name
    base, k = name, 2
    while name in used:
        name, k = f"{base}_{k}", k + 1
    used.add(name)
    return name
