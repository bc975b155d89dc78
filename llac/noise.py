"""The noise of the measurements: how much each sample point's repetitions vary (its spread),
which points are noisy, and the warning a fit gives about them (docs/method.md, §10); and,
where the trace counted the CPU time (cll::CPU-TIME or perf::TASK-CLOCK), whether the wall
time was lost off the CPU.
The one place that measures the spread of repetitions; `describe`, the fit report and the
plots use it.

The spread of a sample point is `(median - min) / min` of its repetitions' valid times:
interference only adds time, so the fastest repetition is the closest to the undisturbed
time, and the spread says how much slower the typical repetition is. The median (not the
slowest repetition) makes one interrupted repetition out of three or more harmless, as it is
to the fit's median and min. A point with fewer than two valid repetitions has no spread (NaN).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from llac.fit_data import FitError, aggregate_points, by_group_then_time, group_rows, repetition_spread
from llac.numbers import number_text

NOISY_FACTOR = 5.0      # a noisy point's spread is above this many times the typical spread ...
NOISY_FLOOR = 0.05      # ... and above this absolute spread
WARN_FLOOR = 0.01       # the typical spread is compared with max(threshold, WARN_FLOOR)
NAMED = 5               # a line names at most this many noisy points
CPU_CLOCKS = ("cll_CPU_TIME", "perf_TASK_CLOCK")   # CLL_COUNTERS=cll::CPU-TIME or perf::TASK-CLOCK: ns on the CPU
DESCHEDULED = 0.10      # the wall time above the CPU time by more than this: time off the CPU
COUNTED_FROM = 1e-3     # points faster than this (s) are left out: the counter reads count there
UNEQUAL_UNITS = 1.5     # threads whose fastest records differ more than this ...
SAME_SLOWEST = 0.75     # ... with one of them the slowest at this share of the points are not repetitions


def point_spread(points: Mapping[str, np.ndarray], columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """The spread `(median - min) / min` of the valid repetition times (finite, > 0) at each
    of `points` (variable -> values, one entry per sample point), taken from the records in
    `columns`; NaN where a point has fewer than two. Records are matched to the points by
    their variables' values, so the points may come in any order."""
    variables = list(points)
    time = np.asarray(columns["time"], dtype=float)
    valid = np.isfinite(time) & (time > 0)
    time = time[valid]
    n_points = len(next(iter(points.values()))) if variables else 1
    keys = [np.concatenate([np.asarray(points[v], dtype=float),
                            np.asarray(columns[v], dtype=float)[valid]]) for v in variables]
    group, first = group_rows(keys, n_points + len(time))
    spread = _group_spread(group[n_points:], len(first), time)
    return spread[group[:n_points]]


def _group_spread(group: np.ndarray, groups: int, time: np.ndarray) -> np.ndarray:
    """`(median - min) / min` of the times in each of `groups` groups (NaN below two times)."""
    count = np.bincount(group, minlength=groups)
    starts = np.concatenate([[0], np.cumsum(count)[:-1]])
    return repetition_spread(time[by_group_then_time(group, groups, time)], starts, count)


def typical(spread: np.ndarray) -> float:
    """The typical spread: the median over the points that have one (NaN if none has)."""
    known = spread[np.isfinite(spread)]
    return float(np.median(known)) if len(known) else float("nan")


def noisy(spread: np.ndarray) -> np.ndarray:
    """Which points are noisy: spread above NOISY_FACTOR times the typical spread and above
    NOISY_FLOOR. A spread far above the typical one is interference at that point, not the
    machine's usual variation."""
    usual = typical(spread)
    with np.errstate(invalid="ignore"):
        return np.isfinite(spread) & (spread > NOISY_FACTOR * usual) & (spread > NOISY_FLOOR)


def model_spread(sample_points: Mapping[str, np.ndarray]) -> np.ndarray:
    """A model's spread per sample point; NaN everywhere for a model saved before the spread
    was kept (such models still load)."""
    return np.asarray(sample_points.get("spread", np.full(len(sample_points["time"]), np.nan)), dtype=float)


def point_names(points: Mapping[str, np.ndarray], rows, spread: np.ndarray) -> str:
    """'N=4097 (38%), N=8191 (22%)': the points at `rows` with their spread, noisiest first,
    at most NAMED of them and how many more."""
    rows = sorted(rows, key=lambda i: -spread[i])
    named = [" ".join(f"{v}={number_text(points[v][i])}" for v in points) + f" ({spread[i]:.0%})" if points
             else f"the one sample point ({spread[i]:.0%})" for i in rows[:NAMED]]
    more = len(rows) - NAMED
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def with_noise(variables: Sequence[str], data: dict, columns: Mapping[str, np.ndarray], settings,
               warnings: list[str]) -> tuple[dict, list[str]]:
    """The fit's hook (`llac.model.fit_experiment`): its sample points `data` with their
    spread added as `data["spread"]`, and its `warnings` followed by `spread_warning`'s."""
    spread = point_spread({v: data[v] for v in variables}, columns)
    return {**data, "spread": spread}, warnings + spread_warning(spread, settings.aggregate,
                                                                 settings.threshold)


def spread_warning(spread: np.ndarray, aggregate: str, threshold: float, cause: str | None = None) -> list[str]:
    """A warning when the typical spread is above the split threshold (never below
    WARN_FLOOR): a regime change of the threshold's size is then within the noise of one
    sample point, and splitting cannot tell the two apart. `cause`: what another warning
    found the spread to be made of (a variable the formula lacks, the threads' unequal
    shares), said instead of advice against noise."""
    usual, bound = typical(spread), max(threshold, WARN_FLOOR)
    if not usual > bound:
        return []
    advice = f"it is not noise: {cause} (see the warning above)" if cause else \
        "measure on a quieter machine or spread each point's repetitions over the run " \
        "(docs/pragma-language.md)" + (", or `set aggregate min`" if aggregate != "min" else "")
    return [f"repetitions vary by {usual:.0%} at a typical sample point, more than the {bound:.0%} "
            f"threshold: interval splitting cannot tell a regime change of that size from noise "
            f"(the fit takes the {aggregate} of each point's repetitions); {advice}"]


def noisy_lines(model) -> list[str]:
    """The fit report's lines about a model's noisy sample points: one naming them, and one
    per interval that predictions beyond the data use (unbounded above in some variable,
    when there are several intervals) holding some of them, since its constants decide every
    extrapolation (none noisy: no line)."""
    spread = model_spread(model.sample_points)
    marked = noisy(spread)
    if not marked.any():
        return []
    points = {v: model.sample_points[v] for v in model.formula.variables}
    lines = [f"noisy sample point{'s' * int(marked.sum() > 1)} (repetitions vary more than "
             f"{NOISY_FACTOR:g}x the typical {typical(spread):.1%}): "
             f"{point_names(points, np.flatnonzero(marked), spread)}"]
    for i, piece in enumerate(model.pieces if len(model.pieces) > 1 else ()):
        inside = piece.contains(points)
        if any(high == np.inf for _, high in piece.region.values()) and (inside & marked).any():
            lines.append(f"interval {i + 1}, which predictions beyond the data use, holds "
                         f"{int((inside & marked).sum())} of them among its {int(inside.sum())} points: "
                         f"{point_names(points, np.flatnonzero(inside & marked), spread)}")
    return lines


def spread_summary(points: Mapping[str, np.ndarray], spread: np.ndarray) -> list[str]:
    """describe's lines about the noise: the typical spread, the noisiest points and the
    noisy ones (or why there is no spread)."""
    known = np.flatnonzero(np.isfinite(spread))
    if not len(known):
        return ["spread: no sample point has two valid repetitions"]
    noisiest = known[np.argsort(-spread[known], kind="stable")][:3]
    lines = [f"spread = (median - min) / min of a point's repetitions: median {typical(spread):.1%}, "
             f"noisiest {point_names(points, noisiest, spread)}"]
    marked = np.flatnonzero(noisy(spread))
    if len(marked):
        lines.append(f"noisy (spread > {NOISY_FACTOR:g}x the median and > {NOISY_FLOOR:.0%}): "
                     f"{len(marked)} of {len(spread)} sample points")
    return lines


@dataclass(frozen=True)
class ValueSpread:
    """How the time depends on a column that the formula lacks, within the sample points
    (fastest_by): at a typical point with several of its values, the slowest value's fastest
    record over the fastest value's (`ratio`); the value that is the slowest at the most such
    points (`slowest`, at `count` of `points`); whether its values repeat there (`repeated`:
    records of one value at a typical point, more than one; a repetition counter or a time
    stamp has one record per value, and tells nothing)."""
    ratio: float
    slowest: float
    count: int
    points: int
    repeated: bool


def fastest_by(experiment, column: str) -> ValueSpread | None:
    """The spread of the experiment's times by `column` within its sample points (ValueSpread),
    from the records of runs with no more processes or threads (P) than their host's cores
    (llac.cores: oversubscribed runs took turns on the cores); None when fewer than 3 points
    hold several of its values."""
    from llac.cores import cores_of
    columns, variables = experiment.columns, experiment.formula.variables
    time = np.asarray(columns["time"], dtype=float)
    valid = np.isfinite(time) & (time > 0)
    cores, _ = cores_of(experiment)
    if "P" in columns and cores:
        valid &= np.asarray(columns["P"], dtype=float) <= cores
    if valid.sum() < 2:
        return None
    keys = [np.asarray(columns[v], dtype=float)[valid] for v in variables]
    values = np.asarray(columns[column], dtype=float)[valid]
    point, _ = group_rows(keys, int(valid.sum()))
    pair, first = group_rows([point.astype(float), values], int(valid.sum()))
    fastest = np.full(len(first), np.inf)
    np.minimum.at(fastest, pair, time[valid])
    of_point = point[first]
    low, high = np.full(of_point.max() + 1, np.inf), np.zeros(of_point.max() + 1)
    np.minimum.at(low, of_point, fastest)
    np.maximum.at(high, of_point, fastest)
    several = np.flatnonzero(np.bincount(of_point) > 1)
    if len(several) < 3:
        return None
    slowest_at = [values[first][(of_point == i) & (fastest == high[i])][0] for i in several]
    slowest, count = max(((u, slowest_at.count(u)) for u in set(slowest_at)), key=lambda item: item[1])
    per_value = np.bincount(pair)
    return ValueSpread(float(np.median(high[several] / low[several])), float(slowest), count, len(several),
                       bool(np.median(per_value[np.isin(of_point, several)]) > 1))


def unit_warning(experiment, aggregate: str) -> list[str]:
    """A warning when the records of different OpenMP threads at one sample point differ
    systematically (fastest_by): at a typical point with several, the slowest one's fastest
    record takes more than UNEQUAL_UNITS times the fastest one's, and one thread is the
    slowest at SAME_SLOWEST of those points (at least 3). They are fitted as repetitions of the
    point, so the fit's estimator (the min: the fastest thread) models neither the parallel
    part's time (its slowest thread) nor any one thread (a review's triangular loop under
    `schedule(static)`: thread 1 three times thread 0 at every point, fitted 6 times below the
    region's time). MPI ranks are not judged: on this 2-core VM the ranks of fft_pub at P = 2
    differed by 1.5-2.6 times, the slower one changing from run to run and the same with
    identical work and no communication (a CPU's slow phases of 0.25-3 s, from outside the VM,
    and other work on the cores): interference, which the minimum over repetitions rightly
    discards, and which one run's ranks cannot tell from imbalance."""
    unit = "thread"
    if unit not in experiment.columns or not len(experiment) or len(np.unique(experiment.columns[unit])) < 2:
        return []
    spread = fastest_by(experiment, unit)
    if spread is None or spread.ratio <= UNEQUAL_UNITS or spread.count < SAME_SLOWEST * spread.points:
        return []
    slowest = number_text(spread.slowest)
    return [f"the records of different {unit}s at one sample point differ: at a typical point the slowest "
            f"{unit}'s fastest record takes {spread.ratio:.2g}x the fastest {unit}'s, and {unit} {slowest} "
            f"is the slowest at {spread.count} of {spread.points} points; they are fitted as repetitions of the "
            f"point, so the {aggregate} of them models neither the parallel part's time (its slowest {unit}'s) nor "
            f"any one {unit}'s: fit one {unit} (`where {unit} == {slowest}`), or time the whole parallel "
            f"part in an experiment around it (docs/parallel-analysis.md)"]


def descheduled_warning(experiment, aggregate: str) -> list[str]:
    """A warning when a sequential program's measured wall time is more than DESCHEDULED
    above its CPU time (its CPU-time counter, when the trace has one) at some sample point, both
    summarised by the fit's estimator: the program waited (sleep, I/O) or was descheduled
    (its cores shared with other programs); if it does not wait, the CPU time is what its
    code costs (docs/method.md §10). Not judged once `with` replaced the time, nor for points
    under COUNTED_FROM."""
    clock = next((c for c in CPU_CLOCKS if c in experiment.columns), None)
    if clock is None or not experiment.wall_time \
            or experiment.header_values("parallel", "none") != ("none",) or not experiment.formula.variables:
        return []
    columns = experiment.columns
    try:
        wall = aggregate_points(experiment.formula, columns, aggregate)
        cpu = aggregate_points(experiment.formula, {**columns, "time": columns[clock] * 1e-9}, aggregate)
    except FitError:
        return []
    variables = experiment.formula.variables
    cpu_at = {tuple(cpu.variables[v][i] for v in variables): t for i, t in enumerate(cpu.time)}
    excess = {}
    for i, t in enumerate(wall.time):
        point = tuple(wall.variables[v][i] for v in variables)
        if t >= COUNTED_FROM and point in cpu_at:
            excess[point] = t / cpu_at[point] - 1
    if not excess or max(excess.values()) <= DESCHEDULED:
        return []
    worst = max(excess, key=excess.get)
    where = " ".join(f"{v}={number_text(x)}" for v, x in zip(variables, worst))
    return [f"the wall time is {excess[worst]:.0%} above the CPU time ({clock}) at {where} "
            f"(median over the points {np.median(list(excess.values())):.0%}): the program waited "
            f"(sleep, I/O) or was descheduled (its cores shared with other programs); if it does not "
            f"wait, its CPU time is what its code costs: fit a copy whose time it is, "
            f"`cpu = {experiment.name} with time = {clock} * 1e-9` (docs/method.md §10)"]
