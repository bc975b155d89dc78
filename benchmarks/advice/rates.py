"""False-alarm and detection rates of llac's formula advice (docs/method.md §5), on seeded
synthetic data: `python -m benchmarks.advice.rates [SEEDS]` (default 100 seeds per case)."""
from __future__ import annotations

import sys

import numpy as np

from benchmarks.accuracy_harness.catalogue import N_GRID, regimes
from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.model import fit_experiment

ADVICE = "try: suggest"
RANGES = (2.0 ** 12, 2.0 ** 16, 2.0 ** 20)    # the largest N fitted: 2.5, 3.6 and 4.8 decades
# name, true function of N, formula fitted, whether the advice should fire
CASES = [
    ("correct N", lambda c: 1e-6 + 1e-9 * c["N"], "f[0] + f[1]*N", False),
    ("correct N^2", lambda c: 1e-6 + 1e-9 * c["N"] + 1e-12 * c["N"] ** 2, "f[0] + f[1]*N + f[2]*N^2", False),
    ("correct N*log(N)", lambda c: 1e-6 + 1e-9 * c["N"] * np.log(c["N"]), "f[0] + f[1]*N*log(N)", False),
    ("regimes x3 slope", regimes([2.0 ** 11], [(1e-6, 1e-9), (1e-6, 3e-9)]), "f[0] + f[1]*N", False),
    ("regimes jump", regimes([2.0 ** 10], [(1e-6, 1e-9), (1e-4, 1e-9)]), "f[0] + f[1]*N", False),
    ("three regimes", regimes([2.0 ** 8, 2.0 ** 12], [(1e-6, 1e-9), (1e-6, 2.5e-9), (1e-6, 6e-9)]),
     "f[0] + f[1]*N", False),
    ("N fitted to N^2", lambda c: 1e-6 + 1e-9 * c["N"] + 1e-12 * c["N"] ** 2, "f[0] + f[1]*N", True),
    ("N fitted to N*log(N)", lambda c: 1e-6 + 1e-9 * c["N"] * np.log(c["N"]), "f[0] + f[1]*N", True),
]


def experiment(truth, formula: str, seed: int, noise: float = 0.05, repeats: int = 5) -> Experiment:
    """Seeded records: `repeats` times at each N of the accuracy grid (16 ... 2^20), lognormal noise."""
    n = np.repeat(N_GRID, repeats)
    time = truth({"N": n}) * np.random.default_rng(seed).lognormal(0.0, noise, len(n))
    return Experiment("f", parse_formula(formula, experiment="f"), {"N": n, "time": time})


def rate(truth, formula: str, seeds: int, top: float = np.inf) -> float:
    """The share of seeded data sets (N <= `top`) whose fit carries a formula-advice warning."""
    fired = 0
    for seed in range(seeds):
        data = experiment(truth, formula, seed)
        model = fit_experiment(data.select(data.columns["N"] <= top))
        fired += any(ADVICE in w for w in model.warnings)
    return fired / seeds


def main(seeds: int = 100) -> None:
    """Print each case's rate."""
    for name, truth, formula, wrong in CASES:
        rates = ", ".join(f"N <= {top:g}: {rate(truth, formula, seeds, top):.0%}" for top in RANGES)
        print(f"{name:<22} {formula:<26} {'detection' if wrong else 'false alarm'} {rates}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
