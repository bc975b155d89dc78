"""The cases of the accuracy comparison: the measurements, which are fitted (the small
inputs) and which are held out (the larger ones).

llac is given the training measurements themselves, every repetition, as a user's `fit` is:
its defaults (the estimator of the repetitions among them) apply. Extra-P is given one value
per sample point, the repetitions summarised by llac's default estimator
(`FitSettings().aggregate`), through llac's exporter: its command line would silently use the
mean for one-parameter data, so exporting one value per point makes the summary the same for
both. Predictions are scored against the held-out points summarised the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.fit_data import aggregate_points, group_rows
from llac.model import FitSettings

Truth = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class Case:
    """One comparison: the measurements, the training masks, the run they come from and for
    a synthetic case the true (noise-free) function."""
    name: str
    records: Experiment           # every measurement (all repetitions)
    data: Experiment              # one record per sample point: its variables and summarised time
    train: np.ndarray             # bool per point of `data`: fitted; the others are held out
    fit_up_to: Mapping[str, float]
    truth: Truth | None = None
    segmented: bool = True        # whether Extra-P's segmented modeler applies (one parameter)
    run: int = 1                  # which run of a real program (1, 2, ...)

    @property
    def training(self) -> Experiment:
        """The fitted points (one value per point, for Extra-P)."""
        return self.data.select(self.train)

    @property
    def training_records(self) -> Experiment:
        """The fitted measurements, every repetition (for llac)."""
        return self.records.select(fitted(self.records, self.fit_up_to))

    @property
    def heldout(self) -> Experiment:
        """The held-out points."""
        return self.data.select(~self.train)

    @property
    def noise(self) -> float:
        """The measurement noise at the held-out points: the median over them of the
        repetitions' relative spread (see `relative_spread`)."""
        return relative_spread(self.records.select(~fitted(self.records, self.fit_up_to)))


def fitted(experiment: Experiment, fit_up_to: Mapping[str, float]) -> np.ndarray:
    """Which records of `experiment` lie inside the fitted range: every variable of
    `fit_up_to` at most its limit."""
    inside = np.ones(len(experiment.columns["time"]), dtype=bool)
    for variable, limit in fit_up_to.items():
        inside &= experiment.columns[variable] <= limit
    return inside


def relative_spread(experiment: Experiment) -> float:
    """Median over the sample points of 1.4826 * MAD / median of their repetitions' times (a
    robust relative standard deviation); 0 when every point has one repetition."""
    columns = experiment.columns
    time = np.asarray(columns["time"], dtype=float)
    group, first = group_rows([np.asarray(columns[v], dtype=float) for v in experiment.formula.variables],
                              len(time))
    spreads = []
    for g in range(len(first)):
        x = time[group == g]
        middle = np.median(x)
        spreads.append(1.4826 * np.median(np.abs(x - middle)) / middle)
    return float(np.median(spreads))


def aggregate(experiment: Experiment) -> Experiment:
    """`experiment` with one record per sample point (distinct variable values): its
    repetitions (all ranks, threads and repetitions at that point) summarised by llac's
    default estimator."""
    points = aggregate_points(experiment.formula, experiment.columns, FitSettings().aggregate)
    return experiment.replace(columns={**points.variables, "time": points.time})


def make_case(name: str, experiment: Experiment, fit_up_to: Mapping[str, float],
              truth: Truth | None = None, run: int = 1) -> Case:
    """A case fitting the sample points whose variables are all <= `fit_up_to` (variable ->
    largest fitted value) and holding out the rest. Raises ValueError when either side is empty."""
    data = aggregate(experiment)
    train = fitted(data, fit_up_to)
    if train.all() or not train.any():
        raise ValueError(f"case {name}: the split {dict(fit_up_to)} leaves no "
                         f"{'held-out' if train.all() else 'training'} point")
    return Case(name, experiment, data, train, dict(fit_up_to), truth,
                segmented=len(experiment.formula.variables) == 1, run=run)


def synthetic(name: str, formula: str, truth: Truth, grid: Mapping[str, np.ndarray],
              fit_up_to: Mapping[str, float], noise: float, seed: int, repeats: int = 5) -> Case:
    """A seeded synthetic case: `repeats` measurements at every point of the `grid` (variable
    -> values, all combinations), each the true time times lognormal noise of sigma `noise`."""
    mesh = np.meshgrid(*(np.asarray(v, dtype=float) for v in grid.values()), indexing="ij")
    columns = {v: np.repeat(m.ravel(), repeats) for v, m in zip(grid, mesh)}
    rng = np.random.default_rng(seed)
    columns["time"] = truth(columns) * rng.lognormal(0.0, noise, len(columns[next(iter(grid))]))
    experiment = Experiment(name, parse_formula(formula, experiment="f"), columns, origin="synthetic")
    return make_case(name, experiment, fit_up_to, truth)
