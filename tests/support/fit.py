"""Helpers for the modeling-engine tests (no tests here): synthetic experiments whose times
follow a formula with known, possibly piecewise, constants and multiplicative noise."""
import numpy as np

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.model import FitSettings

# `synthetic`'s noise is symmetric, so its median is unbiased; the default minimum estimates the
# fastest repetition (what a machine whose interference only adds time needs), biased low here
SYMMETRIC = FitSettings(aggregate="median")


def grid(reps: int = 1, **axes) -> dict[str, np.ndarray]:
    """Every combination of the given axis values, each repeated `reps` times."""
    mesh = np.meshgrid(*(np.asarray(v, dtype=float) for v in axes.values()), indexing="ij")
    return {name: np.repeat(m.ravel(), reps) for name, m in zip(axes, mesh)}


def synthetic(formula: str, columns: dict[str, np.ndarray], constants, noise: float = 0.03,
              seed: int = 0, name: str = "e") -> Experiment:
    """An experiment whose time is the formula at `constants` (a list, or an n x k array of
    per-record constants) times (1 + noise * standard normal)."""
    parsed = parse_formula(formula)
    exact = np.sum(parsed.design_matrix(columns) * np.asarray(constants, dtype=float), axis=-1)
    rng = np.random.default_rng(seed)
    time = exact * (1 + noise * rng.standard_normal(len(exact)))
    return Experiment(name, parsed, {**columns, "time": time})


def piecewise(condition: np.ndarray, when_true, when_false) -> np.ndarray:
    """Per-record constants: `when_true` where `condition` holds, else `when_false`."""
    return np.where(np.asarray(condition)[:, None], np.asarray(when_true, dtype=float),
                    np.asarray(when_false, dtype=float))
