"""A PUB program's runs seen through its `sync` experiment (docs/parallel-analysis.md, "OBSP*"):
each execution of the experiment is one run of supersteps (docs/trace-format.md), and the
experiment's records say, in their `run` column, which run they began in. Here: the runs
grouped by P and by the values of the experiment's variables (its repetitions), and the
prediction of a run at new values from the runs measured at smaller ones, the CALL paper's
Table 3.

The prediction replays a measured run's supersteps (who waits for whom, how each ends) with
every processor's W, in and out bytes and messages of every superstep fitted, over the training runs, by
the experiment's own formula, each training size stood for by its representative run (the
fastest for `set aggregate min`, as TIME is: each superstep's own fastest repetition, summed,
was below every real run of oversubscribed processes, each slow in some superstep or other):
each superstep's work is a part of the experiment's cost, so it
lies in the span of the formula's terms (at the run's P, terms that only depend on P are
constants). The fit is the project's relative least squares, its constants non-negative
unless `set constants free` (llac.fit, as `fit` does); g and L then give each superstep's
communication, as the model says.

When the experiment states its working set and its model has a memory term
(llac.cache_aware), the replay is also made machine-aware: what the predicted working set
costs more per access than the largest training one, as `predict`'s machine-aware column
adds it to the whole experiment (seconds per processor, the memory term's β fitted over all
the experiment's points), is added to each processor's W, shared among its supersteps as the
formula's lead term's part of their fitted W is (the work the memory term is made of).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from llac.experiment import Experiment
from llac.fit import FitSettings, bounded_columns, relative_fit
from llac.obsp import ObspError
from llac.supersteps import Step, Supersteps

REPLAYED = ("W", "inbound", "outbound", "messages_in", "messages_out")   # a superstep's amounts a replay fits
TIMER_FLOOR = 1e-7      # seconds: W below this at every training size is no work (predicted 0)


@dataclass(frozen=True)
class RunGroup:
    """The runs of one P at one set of values of the experiment's variables other than P
    (`values`, in the order of `names`): its repetitions."""
    procs: int
    names: tuple[str, ...]
    values: tuple[float, ...]
    runs: tuple[int, ...]


def run_groups(experiment: Experiment) -> list[RunGroup]:
    """The runs of a PUB `sync` experiment's records, grouped by P and variables, sorted.
    Raises ObspError when the records carry no runs, or when the trace names other
    experiments as those whose executions are the runs."""
    runs_of = [n.strip() for n in experiment.header.get("superstep_runs", "").split(",") if n.strip()]
    traced = experiment.header.get("experiment", experiment.name)     # a subset keeps its trace's name
    if runs_of and traced not in runs_of:
        raise ObspError(f"{experiment.name} ({traced} in the trace) is not the sync experiment whose "
                        f"executions are the runs of "
                        f"supersteps; {' and '.join(runs_of)} {'is' if len(runs_of) == 1 else 'are'}: "
                        f"obsp {runs_of[0]}")
    columns = experiment.columns
    if "run" not in columns or "P" not in columns:
        raise ObspError(f"{experiment.name} has no run column: obsp and timeline need the `sync` experiment "
                        f"of a PUB program traced by call (its records say which run they began in)")
    names = tuple(v for v in experiment.formula.variables if v != "P")
    groups: dict[tuple, set[int]] = {}
    for i in np.flatnonzero(columns["run"] > 0):
        key = (int(columns["P"][i]), *(float(columns[n][i]) for n in names))
        groups.setdefault(key, set()).add(int(columns["run"][i]))
    if not groups:
        status = "; ".join(s for s in experiment.header_values("status", "complete") if s != "complete")
        raise ObspError(f"none of {experiment.name}'s records began a run: " + (
            f"the program stopped before one completed (the trace's status: {status})"
            if status else "is it the `sync` experiment of the PUB program?"))
    return [RunGroup(key[0], names, key[1:], tuple(sorted(runs))) for key, runs in sorted(groups.items())]


def representative(values: list[float], aggregate: str) -> int:
    """Which of a group's runs stands for it under the session's estimator: the fastest for
    `min` (interference only adds time), the median run for `median` and `mean`."""
    order = sorted(range(len(values)), key=values.__getitem__)
    return order[0] if aggregate == "min" else order[(len(order) - 1) // 2]


@dataclass(frozen=True)
class Prediction:
    """The supersteps of a run at new values: the measured run they were replayed from, and
    the fitted steps (W, bytes and messages predicted), ready for `llac.obsp.evaluate`."""
    template: int
    steps: Supersteps
    aware: Supersteps | None = None     # the machine-aware replay (a memory extra was given)


def predict_run(experiment: Experiment, trace: Supersteps, training: list[RunGroup],
                values: tuple[float, ...], settings: FitSettings,
                memory: tuple[int, float] | None = None, fits: dict | None = None) -> Prediction:
    """The supersteps of a run of `experiment` at P = trace.procs and these variable values,
    from the training groups' runs of `trace` (each group's representative run under
    `settings.aggregate`, the constants bounded as `settings.constants` says), and with
    `memory` (the formula's lead term, the seconds its memory term adds per processor at the
    target) the machine-aware replay beside them. `fits`, a dictionary the caller keeps for
    the predictions of one P from the same training runs and settings, holds the fitted
    constants of each superstep amount by the terms kept, so that each is fitted once (a
    table predicts several sizes, and replays the training sizes too). Raises ObspError when
    the training runs do not share one superstep structure or are too few for the formula."""
    runs = trace.runs()
    missing = [r for group in training for r in group.runs if r not in runs]
    if missing:
        raise ObspError(f"run {missing[0]} of {experiment.name} has no supersteps in {trace.path}")
    template = max(training, key=lambda g: g.values).runs[0]
    places = {number: {_key(s): s for s in runs[number]} for group in training for number in group.runs}
    shape = _structure(places[template])
    for number, steps in places.items():
        if _structure(steps) != shape:
            raise ObspError(f"at P={trace.procs}, run {number} has other supersteps than run {template} "
                            f"(who sends to whom, how they end): a prediction replays one structure")
    chosen = [group.runs[representative([max(s.end for s in runs[r]) for r in group.runs], settings.aggregate)]
              for group in training]
    design, target, kept = _designs(experiment, trace.procs, training, values)
    bounded = bounded_columns(design, settings)
    fits = {} if fits is None else fits
    fitted, lead_parts = {}, {}
    for key in shape:
        for field in REPLAYED:
            if (tuple(kept), key, field) not in fits:
                measured = [getattr(places[run][key], field) for run in chosen]
                fits[tuple(kept), key, field] = _fit_amount(design, bounded, measured)
            constants = fits[tuple(kept), key, field]
            fitted.setdefault(key, {})[field] = _at(target, constants)
            if field == "W" and memory is not None and memory[0] in kept:
                lead_parts[key] = max(0.0, float(target[kept.index(memory[0])] * constants[kept.index(memory[0])]))
    steps = tuple(replace(step, **fitted[_key(step)], end=0.0) for step in runs[template])
    aware = None if memory is None else replace(trace, steps=_with_memory(steps, lead_parts, memory[1]))
    return Prediction(template, replace(trace, steps=steps), aware)


def _with_memory(steps: tuple[Step, ...], lead_parts: dict[tuple, float], seconds: float) -> tuple[Step, ...]:
    """The replayed steps with `seconds` added to each processor's W, shared among its steps
    as their lead-term parts are (as their W, where no step has one)."""
    by_rank: dict[int, list[Step]] = {}
    for step in steps:
        by_rank.setdefault(step.rank, []).append(step)
    share = {}
    for mine in by_rank.values():
        weights = np.array([lead_parts.get(_key(s), 0.0) for s in mine])
        if not weights.sum():
            weights = np.array([s.W for s in mine])
        total = weights.sum()
        for step, weight in zip(mine, weights):
            share[_key(step)] = weight / total if total > 0 else 0.0
    return tuple(replace(step, W=step.W + seconds * share[_key(step)]) for step in steps)


def _key(step: Step) -> tuple:
    """Where a step sits in a run: rank, machine and number."""
    return step.rank, step.machine, step.step


def _structure(places: dict[tuple, Step]) -> dict[tuple, tuple]:
    """A run's shape, from its steps by place: how each ends and who sent to it."""
    return {key: (s.sync, s.partners) for key, s in places.items()}


def _designs(experiment: Experiment, procs: int, training: list[RunGroup], values: tuple[float, ...]):
    """The formula's terms at P = procs for the training groups and the target, keeping only
    the terms that are independent there, the target included (a term of P alone is a
    constant; one that vanishes on the training sizes is dropped); and the kept terms'
    numbers in the formula."""
    names = training[0].names
    rows = [group.values for group in training] + [values]
    columns = {n: np.array([row[i] for row in rows]) for i, n in enumerate(names)}
    columns["P"] = np.full(len(rows), float(procs))
    full = experiment.formula.design_matrix(columns)
    kept: list[int] = []
    for j in range(full.shape[1]):
        if not np.any(full[:-1, j]):
            continue
        trial = full[:, kept + [j]]
        if np.linalg.matrix_rank(trial / np.abs(trial).max(axis=0)) == len(kept) + 1:
            kept.append(j)
    if len(training) < len(kept) + 1:
        sizes, terms = len(training), len(kept)
        raise ObspError(f"at P={procs}, {terms} independent term{'s' if terms != 1 else ''} of "
                        f"{experiment.name}'s formula need{'s' if terms == 1 else ''} runs at {terms + 1} "
                        f"training sizes or more (one more than the terms, so that the fit can be "
                        f"checked), and there {'is' if sizes == 1 else 'are'} {sizes}: measure more sizes")
    return full[:-1, kept], full[-1, kept], kept


def _fit_amount(design: np.ndarray, bounded: np.ndarray, measured: list[float]) -> np.ndarray | float:
    """One superstep amount (W or bytes) fitted over the training values by the formula's
    terms, the `bounded` constants non-negative: the constants, or the amount itself when it
    is always ~0 (0) or never changes (_at reads either)."""
    amounts = np.array(measured)
    if amounts.max() < TIMER_FLOOR:
        return 0.0
    if amounts.min() == amounts.max():
        return float(amounts[0])
    positive = np.maximum(amounts, TIMER_FLOOR)
    return relative_fit(design, positive, bounded).constants


def _at(target: np.ndarray, constants: np.ndarray | float) -> float:
    """A fitted amount at the target's terms (a fixed amount stays itself), never below 0."""
    if isinstance(constants, float):
        return constants
    return max(0.0, float(target @ constants))
