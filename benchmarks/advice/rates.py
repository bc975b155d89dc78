"""False-alarm and detection rates of llac's formula advice (docs/method.md §5), on seeded
synthetic data: `python -m benchmarks.advice.rates [SEEDS]` (default 100 seeds per case)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from benchmarks.accuracy_harness.catalogue import N_GRID, regimes
from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.advice import is_formula_advice
from llac.model import fit_experiment

KINDS = {"lack of fit": "lack of fit", "drift": "from interval to interval", "trend": "the residuals",
         "smooth": "one interval with"}
RANGES = (2.0 ** 12, 2.0 ** 16, 2.0 ** 20)    # the largest N fitted: 2.4, 3.6 and 4.8 decades
NOISE = 0.05                                  # lognormal sigma of every record


@dataclass(frozen=True)
class AdviceCase:
    """A true function of the columns, the formula fitted, whether the advice should fire, and
    `busy`: the sigma of a lognormal slowdown per sample point shared by its repetitions (a
    busy machine: the repetitions' spread does not show it)."""
    name: str
    truth: Callable
    formula: str
    wrong: bool
    busy: float = 0.0


def _linear(c):
    return 1e-6 + 1e-9 * c["N"]


def _square(c):
    return 1e-6 + 1e-9 * c["N"] + 1e-12 * c["N"] ** 2


def _pure_square(c):
    return 1e-9 * c["N"] ** 2


def _nlogn(c):
    return 1e-6 + 1e-9 * c["N"] * np.log(c["N"])


CASES = [
    AdviceCase("correct N", _linear, "f[0] + f[1]*N", False),
    AdviceCase("correct N^2", _square, "f[0] + f[1]*N + f[2]*N^2", False),
    AdviceCase("correct N*log(N)", _nlogn, "f[0] + f[1]*N*log(N)", False),
    AdviceCase("correct N, busy", _linear, "f[0] + f[1]*N", False, busy=0.05),
    AdviceCase("correct N^2, busy", _square, "f[0] + f[1]*N + f[2]*N^2", False, busy=0.05),
    AdviceCase("regimes x3 slope", regimes([2.0 ** 11], [(1e-6, 1e-9), (1e-6, 3e-9)]), "f[0] + f[1]*N", False),
    AdviceCase("regimes jump", regimes([2.0 ** 10], [(1e-6, 1e-9), (1e-4, 1e-9)]), "f[0] + f[1]*N", False),
    AdviceCase("three regimes", regimes([2.0 ** 8, 2.0 ** 12], [(1e-6, 1e-9), (1e-6, 2.5e-9), (1e-6, 6e-9)]),
               "f[0] + f[1]*N", False),
    AdviceCase("N fitted to N^2", _square, "f[0] + f[1]*N", True),
    AdviceCase("N fitted to N*log(N)", _nlogn, "f[0] + f[1]*N", True),
    AdviceCase("N fitted to pure N^2", _pure_square, "f[0] + f[1]*N", True),
]


def experiment(case: AdviceCase, seed: int, top: float = np.inf, repeats: int = 5,
               noise: float = NOISE) -> Experiment:
    """Seeded records of `case`: `repeats` times at each N of the accuracy grid up to `top`,
    each with lognormal noise of sigma `noise`."""
    n = N_GRID[N_GRID <= top]
    rng = np.random.default_rng(seed)
    slowdown = np.repeat(rng.lognormal(0.0, case.busy, len(n)), repeats)
    n = np.repeat(n, repeats)
    time = case.truth({"N": n}) * slowdown * rng.lognormal(0.0, noise, len(n))
    return Experiment("f", parse_formula(case.formula, experiment="f"), {"N": n, "time": time})


def findings(case: AdviceCase, seed: int, top: float = np.inf) -> set[str]:
    """Which tests fired on one seeded data set: lack of fit, drift, trend."""
    warnings = fit_experiment(experiment(case, seed, top)).warnings
    return {kind for w in warnings if is_formula_advice(w) for kind, mark in KINDS.items() if mark in w}


def rates(case: AdviceCase, seeds: int, top: float = np.inf) -> tuple[float, dict[str, float]]:
    """The share of seeded data sets with advice, and the share per test."""
    fired = [findings(case, seed, top) for seed in range(seeds)]
    return (sum(map(bool, fired)) / seeds,
            {kind: sum(kind in f for f in fired) / seeds for kind in KINDS})


def main(seeds: int = 100) -> None:
    """Print each case's rate per range of N, with the share of each test."""
    for case in CASES:
        print(f"{case.name} ({case.formula}): {'detection' if case.wrong else 'false alarm'}", flush=True)
        for top in RANGES:
            share, per_test = rates(case, seeds, top)
            tests = ", ".join(f"{kind} {value:.0%}" for kind, value in per_test.items())
            print(f"  N <= {top:<8g} {share:4.0%}   ({tests})", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
