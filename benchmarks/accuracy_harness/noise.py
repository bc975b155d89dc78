"""`benchmarks/accuracy --noise`: kernels of known, exactly linear cost (benchmarks/kernels/
noise.h) run without load (the reference) and then under bursty background load that the
benchmark starts and stops itself; each loaded run is fitted with llac's defaults on the small
sizes and predicts the reference's largest size, about 4x beyond. Also the mid-sweep
co-runner: a busy loop on every core starting halfway through a run, with the repetitions
inside the size sweep and outermost."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from llac.experiment import Experiment
from llac.model import FitError, FitSettings, Model, fit_experiment

from .cases import aggregate
from .catalogue import Sample, kernel, run_sample
from .load import background_load


@dataclass(frozen=True)
class NoiseKernel:
    """A kernel of the noise mode: benchmarks/kernels/`name`.c, experiment `experiment`,
    sizes from `first` (x1.19, odd) to `fit_n` in the loaded runs and to `reference_n` (about
    4x) in the reference run, `reps` repetitions (outermost)."""
    name: str
    experiment: str
    first: int
    fit_n: int
    reference_n: int
    reps: int

    def sample(self, largest: int, name: str = "") -> Sample:
        """The program (by default this kernel's; `name`: another file with the same
        arguments) sweeping up to `largest`."""
        return kernel(name or self.name, self.fit_n, str(largest), str(self.reps), str(self.first),
                      experiment=self.experiment)


NOISE_KERNELS = [NoiseKernel("noise_chain", "chain", 121001, 1000001, 4000001, 11),
                 NoiseKernel("noise_stream", "stream", 4000001, 32000001, 128000001, 15)]
QUICK_NOISE_KERNELS = [NoiseKernel("noise_chain", "chain", 12101, 100001, 400001, 5)]
CPU_EVENT, CPU_COLUMN = "cll::CPU-TIME", "cll_CPU_TIME"   # nanoseconds on the CPU (the runtime's own counter)
CO_RUNNER_ORDERS = {"repetitions inside the size sweep": "noise_chain_inner",
                    "repetitions outermost": "noise_chain"}


@dataclass(frozen=True)
class NoiseResult:
    """A noise kernel's loaded runs: each one's relative error at the references' largest
    size and whether its model has a cut or a rise continued beyond the data (llac.trend; either
    is false: the cost is exactly linear); the
    first reference run's own error, fitted on the loaded runs' sizes (how linear the kernel
    is on this machine without the benchmark's load); and how much the two references' times
    there differ (the machine's own drift over the loaded runs)."""
    kernel: str
    target: float                 # the predicted size (about 4x the largest fitted one)
    errors: tuple[float, ...]
    splits: tuple[bool, ...]
    failures: tuple[str, ...] = ()
    quiet: float = float("nan")   # the same error of the reference run fitted on the same sizes
    measure: str = "wall time"    # what the loaded runs were fitted on
    drift: float = float("nan")   # the second reference's time at `target` over the first's, less 1

    @property
    def label(self) -> str:
        """The kernel, and what was fitted when it is not the wall time."""
        return self.kernel if self.measure == "wall time" else f"{self.kernel} ({self.measure})"

    @property
    def worst(self) -> float:
        """The largest error over the runs (inf when a run could not be fitted)."""
        return max(self.errors, default=float("nan")) if not self.failures else float("inf")

    @property
    def median(self) -> float:
        """The median error over the runs."""
        return float(np.median(self.errors)) if self.errors else float("nan")


def measured_at_largest(experiment: Experiment) -> tuple[float, float]:
    """The largest N of `experiment` and its time there (the repetitions summarised by llac's
    default estimator)."""
    points = aggregate(experiment).columns
    at = int(np.argmax(points["N"]))
    return float(points["N"][at]), float(points["time"][at])


def fit_defaults(experiment: Experiment) -> Model:
    """`experiment` fitted with llac's defaults, as a user's `fit` would."""
    return fit_experiment(experiment, FitSettings())


def cpu_time(experiment: Experiment) -> Experiment | None:
    """`experiment` with its time replaced by its CPU time in seconds (the runtime's
    cll::CPU-TIME counter), or None when its trace has no such counter."""
    if CPU_COLUMN not in experiment.columns:
        return None
    return experiment.with_column("time", experiment.columns[CPU_COLUMN] * 1e-9)


def reference_run(k: NoiseKernel, workdir: Path) -> tuple[float, float, float]:
    """A run of `k` without load up to its reference size: that size, the time measured there,
    and the relative error there of the run's own fit on the loaded runs' sizes."""
    reference = run_sample(k.sample(k.reference_n), workdir)[k.experiment]
    target, measured = measured_at_largest(reference)
    quiet = fit_defaults(reference.select(reference.columns["N"] <= k.fit_n))
    return target, measured, abs(float(quiet.predict({"N": target}).values[0]) - measured) / measured


def loaded_runs(k: NoiseKernel, workdir: Path, runs: int) -> list[NoiseResult]:
    """A reference run of `k` without load, then `runs` runs under bursty load (2 processes,
    bursts and sleeps of 20-300 ms, seeded by the run's number), then a second reference run.
    Each loaded run is fitted and scored at the references' largest size, against the lower
    of their two times there (interference only adds time; this machine's memory bandwidth
    also drifts by a few percent over minutes), on its wall time and also on its CPU time
    where the runtime could count it."""
    target, first, quiet_error = reference_run(k, workdir / k.name / "reference")
    scores: dict[str, tuple[list, list, list]] = {"wall time": ([], [], []), "CPU time": ([], [], [])}
    for i in range(runs):
        try:
            with background_load(processes=2, low=0.02, high=0.3, seed=i):
                loaded = run_sample(k.sample(k.fit_n), workdir / k.name / f"loaded{i}",
                                    {"CLL_COUNTERS": CPU_EVENT})[k.experiment]
        except RuntimeError as error:
            for _, _, failures in scores.values():
                failures.append(f"run {i + 1}: {error}")
            continue
        for measure, experiment in (("wall time", loaded), ("CPU time", cpu_time(loaded))):
            predictions, splits, failures = scores[measure]
            if experiment is None:
                continue
            try:
                model = fit_defaults(experiment)
            except FitError as error:
                failures.append(f"run {i + 1}: {error}")
                continue
            predictions.append(float(model.predict({"N": target}).values[0]))
            splits.append(bool(model.cuts) or any(p.trend for p in model.pieces))
    _, second, _ = reference_run(k, workdir / k.name / "reference2")
    measured = min(first, second)
    return [NoiseResult(k.experiment, target, tuple(abs(p - measured) / measured for p in predictions),
                        tuple(splits), tuple(failures), quiet_error, measure, second / first - 1)
            for measure, (predictions, splits, failures) in scores.items() if measure == "wall time" or predictions]


def co_runner_runs(k: NoiseKernel, workdir: Path) -> list[str]:
    """For each order of the sampling loops: a quiet run of `k` with 3x its repetitions
    (timed), then a run with two busy loops per core starting halfway through its sweep (the
    quiet run's wall time minus half its measured time: `call run` starts the program after
    its own start-up); one line each saying whether llac splits."""
    k = replace(k, reps=3 * k.reps)
    lines = []
    for order, name in CO_RUNNER_ORDERS.items():
        sample = k.sample(k.fit_n, name)
        start = time.perf_counter()
        quiet = run_sample(sample, workdir / name / "quiet")[k.experiment]
        halfway = time.perf_counter() - start - float(np.sum(quiet.columns["time"])) / 2
        with background_load(processes=2 * (os.cpu_count() or 1), high=0.0, delay=halfway):
            loaded = run_sample(sample, workdir / name / "co-runner")[k.experiment]
        lines.append(f"{k.experiment}, {order}: quiet run {splits_text(fit_defaults(quiet))}; with a "
                     f"co-runner from {halfway:.1f} s (mid-sweep) {splits_text(fit_defaults(loaded))}")
    return lines


def splits_text(model: Model) -> str:
    """`no split`, or the cuts of `model`."""
    if not model.cuts:
        return "no split"
    return "SPLIT at " + ", ".join(f"{c.variable}={c.value:.4g}" for c in model.cuts)


def noise_mode(workdir: Path, runs: int = 20, quick: bool = False) -> tuple[list[NoiseResult], list[str]]:
    """The noise mode: every noise kernel's loaded runs (on wall time, and on CPU time where it
    was counted) and (not when `quick`) the mid-sweep co-runner lines."""
    kernels = QUICK_NOISE_KERNELS if quick else NOISE_KERNELS
    results = [result for k in kernels for result in loaded_runs(k, workdir, runs)]
    return results, [] if quick else co_runner_runs(NOISE_KERNELS[0], workdir)
