"""The cases of the accuracy comparison: measurements summarised to one value per sample
point, which points are fitted (the small inputs) and which are held out (the larger ones).

Every tool gets exactly the same training points: the median of the repetitions at each
sample point (llac's default summary). Extra-P's command line would silently use the mean
for one-parameter data; exporting one value per point makes the summary the same for all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.fit_data import aggregate_points
from cll_grammar.formula import parse_formula

Truth = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class Case:
    """One comparison: the aggregated measurements, the training mask, and for a synthetic
    case the true (noise-free) function."""
    name: str
    data: Experiment              # one record per sample point: its variables and median time
    train: np.ndarray             # bool per record: fitted; the others are held out
    truth: Truth | None = None
    segmented: bool = True        # whether Extra-P's segmented modeler applies (one parameter)

    @property
    def training(self) -> Experiment:
        """The fitted points."""
        return self.data.select(self.train)

    @property
    def heldout(self) -> Experiment:
        """The held-out points."""
        return self.data.select(~self.train)


def aggregate(experiment: Experiment) -> Experiment:
    """`experiment` with one record per sample point (distinct variable values): the median
    time of its repetitions (all ranks, threads and repetitions at that point)."""
    points = aggregate_points(experiment.formula, experiment.columns, "median")
    return experiment.replace(columns={**points.variables, "time": points.time})


def make_case(name: str, experiment: Experiment, fit_up_to: Mapping[str, float],
              truth: Truth | None = None) -> Case:
    """A case fitting the sample points whose variables are all <= `fit_up_to` (variable ->
    largest fitted value) and holding out the rest. Raises ValueError when either side is empty."""
    data = aggregate(experiment)
    train = np.ones(len(data), dtype=bool)
    for variable, limit in fit_up_to.items():
        train &= data.columns[variable] <= limit
    if train.all() or not train.any():
        raise ValueError(f"case {name}: the split {dict(fit_up_to)} leaves no "
                         f"{'held-out' if train.all() else 'training'} point")
    return Case(name, data, train, truth, segmented=len(experiment.formula.variables) == 1)


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
