"""Data preparation for fitting: drop invalid times, aggregate repetitions into sample points
(vectorised with numpy, no loop over records) and check that every constant can be determined.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cll_grammar.formula import Formula, variables_of
from llac.numbers import number_text

AGGREGATES = ("median", "min", "mean")


class FitError(Exception):
    """A user-caused problem that prevents a fit; str() is one sentence naming the cause.
    `cure` names the constants whose terms, dropped (`drop`), would let the fit go on."""

    def __init__(self, message: str, cure: tuple[str, ...] = ()):
        super().__init__(message)
        self.cure = cure


@dataclass(frozen=True)
class SamplePoints:
    """The aggregated data: one row per distinct combination of the formula's variables."""
    variables: dict[str, np.ndarray]
    time: np.ndarray
    count: np.ndarray
    excluded: int
    spread: np.ndarray        # (median - min) / min of each point's repetitions (NaN: one)

    def __len__(self) -> int:
        return len(self.time)


INVALID_TIME = "NaN, inf or non-positive time"     # why a record is left out of every fit


def valid_times(time: np.ndarray) -> np.ndarray:
    """Which records a fit uses: those whose time is a positive finite number (the others,
    NaN, inf, 0 or negative, are left out of the fit, `aggregate` and `describe` alike)."""
    time = np.asarray(time, dtype=float)
    return np.isfinite(time) & (time > 0)


def excluded_text(count: int) -> str:
    """'4 records excluded: NaN, inf or non-positive time': the fit's words for the records
    `valid_times` leaves out, which `aggregate`, `describe` and `load` repeat."""
    return f"{count} record{'s' * (count != 1)} excluded: {INVALID_TIME}"


def aggregate_points(formula: Formula, columns, aggregate: str = "median") -> SamplePoints:
    """Group records by the formula's variables and summarise each group's times.

    Records whose time is NaN, inf or <= 0 are dropped and counted in `excluded`. Grouping
    and ordering by time inside each group are vectorised sorts (`group_rows`,
    `by_group_then_time`): a million records take about 0.1 s.
    """
    if aggregate not in AGGREGATES:
        raise FitError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")
    missing = [v for v in ("time", *formula.variables) if v not in columns]
    if missing:
        raise FitError(f"the data has no column {missing[0]!r}, which the formula "
                       f"{formula} needs")
    time = np.asarray(columns["time"], dtype=float)
    if len(time) == 0:
        raise FitError("no records to fit")
    valid = valid_times(time)
    excluded = int(len(time) - valid.sum())
    if not valid.any():
        raise FitError(f"no valid times: {excluded} record{'s' * (excluded != 1)} "
                       f"{'have' if excluded != 1 else 'has'} {INVALID_TIME}")
    keys = [np.asarray(columns[v], dtype=float)[valid] for v in formula.variables]
    time = time[valid]
    group, first = group_rows(keys, len(time))
    count = np.bincount(group, minlength=len(first))
    starts = np.concatenate([[0], np.cumsum(count)[:-1]])
    ordered = time[by_group_then_time(group, len(first), time)]
    return SamplePoints({v: k[first] for v, k in zip(formula.variables, keys)},
                        _summarise(ordered, starts, count, aggregate), count, excluded,
                        repetition_spread(ordered, starts, count))


def group_rows(keys: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each record's group (0, 1, ... in the lexicographic order of the key values; a NaN
    key is a group of its own) and one record of each group: the one grouping of records into
    sample points (the fit's aggregation here, `describe`'s repetitions in `llac.tables`, the
    Extra-P export's points in `llac.extrap`). One stable sort by the keys, fast on traces,
    which list records grouped by their variables."""
    if not keys:
        return np.zeros(n, dtype=np.intp), np.zeros(1, dtype=np.intp)
    by_keys = np.lexsort(keys[::-1])
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for key in keys:
        ordered = key[by_keys]
        change[1:] |= ordered[1:] != ordered[:-1]
    group = np.empty(n, dtype=np.intp)
    group[by_keys] = np.cumsum(change) - 1
    return group, by_keys[change]


def by_group_then_time(group: np.ndarray, groups: int, time: np.ndarray) -> np.ndarray:
    """The record order by group, then by time inside each group. Sorting by time first
    (quicksort) and then stably by group (radix sort on 16-bit ids) is twice as fast as a
    lexsort for up to 65,536 groups."""
    if groups <= 2 ** 16:
        by_time = np.argsort(time)
        return by_time[np.argsort(group[by_time].astype(np.uint16), kind="stable")]
    return np.lexsort([time, group])


def repetition_spread(ordered: np.ndarray, starts: np.ndarray, count: np.ndarray) -> np.ndarray:
    """`(median - min) / min` of each group's times (sorted inside each group, groups starting
    at `starts` with `count` times each, possibly none); NaN for a group of fewer than two. Interference only
    adds time, so this says how much slower the typical repetition ran than the fastest: the
    fit's noise factors (llac.fit) and the noise report (llac.noise) use it."""
    spread = np.full(len(count), np.nan)
    some = count >= 2
    spread[some] = _summarise(ordered, starts[some], count[some], "median") / ordered[starts[some]] - 1
    return spread


def summary(values, aggregate: str) -> float:
    """One group's median, min or mean: the estimator `set aggregate` names, for callers that
    summarise one group at a time (obsp's repetitions of a superstep)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    return float(_summarise(ordered, np.zeros(1, dtype=int), np.array([len(ordered)]), aggregate)[0])


def _summarise(time: np.ndarray, starts: np.ndarray, count: np.ndarray, aggregate: str) -> np.ndarray:
    """Each group's median, min or mean, given times sorted inside each group."""
    if aggregate == "min":
        return time[starts]
    if aggregate == "mean":
        return np.add.reduceat(time, starts) / count
    return 0.5 * (time[starts + (count - 1) // 2] + time[starts + count // 2])


def check_identifiable(formula: Formula, points: SamplePoints, design: np.ndarray) -> None:
    """Raise FitError unless every constant can be determined from the sample points.

    Checks, in order: finite design values, no all-zero term, at least as many distinct
    points as constants, and no linear dependence between the (scaled) term columns.
    """
    k = len(formula.terms)
    for i, term in enumerate(formula.terms):
        bad = ~np.isfinite(design[:, i])
        if bad.any():
            where = _point_text(formula, term.factor, points, int(np.argmax(bad)))
            count = int(bad.sum())
            raise FitError(f"term {term} is not finite at {count} sample point"
                           f"{'s' * (count > 1)} (e.g. {where})")
    zero = [term for term, column in zip(formula.terms, design.T) if not column.any()]
    if zero:
        names, factors = (" and ".join(str(x) for x in xs) for xs in
                          ([t.constant for t in zero], [t.factor for t in zero]))
        which = (f"constant {names} cannot be determined: its term {factors} is" if len(zero) == 1 else
                 f"constants {names} cannot be determined: their terms {factors} are")
        raise FitError(f"{which} 0 at every sample point{_constant_vars(zero[0].factor, points)}",
                       tuple(str(t.constant) for t in zero))
    if len(points) < k:
        raise FitError(f"{len(points)} sample point{'s' * (len(points) != 1)} for {k} constants: "
                       f"need at least {k} distinct points")
    scaled = design / np.abs(design).max(axis=0)
    singular = np.linalg.svd(scaled, compute_uv=True, full_matrices=False)
    values, vt = singular[1], singular[2]
    if values[-1] <= values[0] * 1e-9:
        involved = [formula.terms[i] for i in np.flatnonzero(np.abs(vt[-1]) > 1e-6)]
        names = " and ".join(str(t.constant) for t in involved)
        factors = ", ".join(str(t.factor) for t in involved)
        raise FitError(f"constants {names} cannot be told apart: their terms ({factors}) are "
                       f"linearly dependent at the sample points", (str(involved[-1].constant),))


def _constant_vars(factor, points: SamplePoints) -> str:
    """' (every run has P = 1)' when the term's variables each take one value, else ''."""
    names = variables_of(factor)
    if not names or any(len(np.unique(points.variables[v])) > 1 for v in names):
        return ""
    return " (every run has " + ", ".join(f"{v} = {number_text(points.variables[v][0])}" for v in names) + ")"


def _point_text(formula: Formula, factor, points: SamplePoints, row: int) -> str:
    """'N=0, P=1': the variables of `factor` at sample point `row`."""
    names = variables_of(factor) or formula.variables
    return ", ".join(f"{v}={number_text(points.variables[v][row])}" for v in names)


