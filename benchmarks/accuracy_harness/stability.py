"""Issue 10's stable extrapolation, measured: how much each tool's predictions beyond the data
move between two runs of the same program, against how much the measured times themselves
move there. A prediction that moves more than the measurements between runs follows the
noise of its training data (a cut that wanders, a last interval's constants that swing), not
the program."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .evaluate import Row


@dataclass(frozen=True)
class Swing:
    """One real case's run-to-run change at its held-out points: of the measured times and of
    each tool's predictions (the median over the points both runs hold of |a - b| / min(a, b);
    with more than two runs, the median over the pairs of runs)."""
    case: str
    measured: float
    tools: dict[str, float]


def relative_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| / min(|a|, |b|) per element: symmetric in the two runs; a missing (NaN) or
    non-positive value counts as an infinite change."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    low = np.minimum(np.abs(a), np.abs(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        change = np.abs(a - b) / low
    return np.where(np.isnan(change) | (low <= 0), np.inf, change)


def _pair_change(first: Row, second: Row, field: str) -> float:
    """The median relative change of `field` (`predicted` or `measured`) between two runs' rows,
    over the held-out points both hold (NaN when they share none)."""
    theirs = dict(zip(second.points, getattr(second, field)))
    shared = [(value, theirs[point]) for point, value in zip(first.points, getattr(first, field))
              if point in theirs]
    if not shared:
        return float("nan")
    return float(np.median(relative_change(*np.array(shared).T)))


def swings(rows: list[Row]) -> list[Swing]:
    """The run-to-run change of every case that has at least two runs with held-out points,
    in the order of `rows`; tools without a prediction in every run are left out."""
    runs: dict[str, dict[str, dict[int, Row]]] = {}
    for row in rows:
        if row.points:
            runs.setdefault(row.case, {}).setdefault(row.tool, {})[row.run] = row
    result = []
    for case, tools in runs.items():
        reference = max(tools.values(), key=len)      # every tool of a run shares its measurements
        pairs = list(combinations(sorted(reference), 2))
        if not pairs:
            continue
        def change(by_run: dict[int, Row], field: str) -> float:
            return float(np.median([_pair_change(by_run[a], by_run[b], field) for a, b in pairs]))
        result.append(Swing(case, change(reference, "measured"),
                            {tool: change(by_run, "predicted") for tool, by_run in tools.items()
                             if by_run.keys() == reference.keys()}))
    return result
