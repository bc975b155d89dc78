"""P3T+-style performance parameters of a parallel experiment, computed from its records.

P3T+ (papers/003, §3) describes a parallel program by its work distribution, number of
transfers, amount of data transferred, transfer (communication) time and computation time.
P3T+ estimates them at compile time; here they are measured: every record of an MPI trace
carries its rank and what the PMPI layer counted during the experiment on that rank
(`MPI_COLUMNS` of cll_grammar.columns, see notes in docs/parallel-analysis.md). OpenMP
traces give per-thread records, so the work distribution is also computed per thread.

Work distribution (P3T+ Definitions 3.1 and 3.2): the work of a unit (rank or thread) p is the
summed time of its records, work(p); the optimal amount of work is the arithmetic mean
owork = (1/|P|) Σ work(p); the goodness is the coefficient of variation

    wd = sqrt( (1/|P|) Σ (work(p) - owork)² ) / owork

0 is a perfect distribution; it grows as the work concentrates on fewer units (when one of
|P| units does everything, wd = sqrt(|P| - 1)). Units that ran no record of the experiment
count as doing no work of it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cll_grammar.columns import MPI_COLUMNS
from llac.experiment import Experiment

SUMMED = ("time", "msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "mpi_time")
MAXED = ("partners", "h")
UNITS = ("rank", "thread")
# the unit whose ids run 0..P-1 in a trace of this kind (the header's `parallel`)
UNIT_OF_PARALLEL = {"MPI": "rank", "PUB": "rank", "OpenMP": "thread"}


class ParallelError(Exception):
    """The experiment lacks what a parallel report needs (said in plain words)."""


@dataclass(frozen=True)
class Group:
    """The records of one P, per unit: ids (sorted; units without records included), record
    counts, sums of the SUMMED columns and maxima of the MAXED ones (those present)."""
    procs: float | None
    units: np.ndarray
    records: np.ndarray
    sums: dict
    maxima: dict

    @property
    def work(self) -> np.ndarray:
        """Each unit's work: the summed time of its records (P3T+'s work(S, p))."""
        return self.sums["time"]

    def idle(self) -> list[int]:
        """The units that ran no record of the experiment."""
        return [int(u) for u, n in zip(self.units, self.records) if n == 0]


@dataclass(frozen=True)
class Distribution:
    """The work distribution of one group: optimal (mean) work, extremes and goodness."""
    owork: float
    maximum: float
    max_unit: int
    minimum: float
    min_unit: int
    wd: float

    @property
    def imbalance(self) -> float:
        """max/mean: how much longer the busiest unit works than a balanced one would."""
        return self.maximum / self.owork if self.owork > 0 else float("nan")


def goodness(work) -> float:
    """P3T+'s work distribution goodness wd (Definition 3.2): the population standard deviation
    of the units' work divided by its mean (the optimal amount of work, Definition 3.1)."""
    work = np.asarray(work, dtype=float)
    owork = work.mean() if len(work) else 0.0
    if owork <= 0:
        return float("nan")
    return float(np.sqrt(np.mean((work - owork) ** 2)) / owork)


def distribution(group: Group) -> Distribution:
    """Optimal work, the busiest and the idlest unit, and the goodness of one group."""
    work = group.work
    hi, lo = int(np.argmax(work)), int(np.argmin(work))
    return Distribution(float(work.mean()), float(work[hi]), int(group.units[hi]),
                        float(work[lo]), int(group.units[lo]), goodness(work))


def default_unit(experiment: Experiment) -> str:
    """`rank` for MPI (or whenever several ranks have records), else `thread` when several
    threads have records (OpenMP), else `rank`."""
    if experiment.header.get("parallel") in ("MPI", "PUB"):
        return "rank"
    for unit in UNITS:
        if unit in experiment.columns and len(np.unique(experiment.columns[unit])) > 1:
            return unit
    return "rank"


def groups(experiment: Experiment, unit: str) -> list[Group]:
    """The experiment's records split by P (one group when there is no P column), each
    summarised per `unit`. In a trace whose `parallel` names this unit (MPI: rank, OpenMP:
    thread), the units 0..P-1 are all listed, those without records with zero work."""
    if unit not in experiment.columns:
        raise ParallelError(f"{experiment.name} has no column {unit!r}")
    if not len(experiment):
        raise ParallelError(f"{experiment.name} has no records")
    procs = experiment.columns.get("P")
    values = np.unique(procs) if procs is not None else [None]
    full_range = UNIT_OF_PARALLEL.get(experiment.header.get("parallel")) == unit
    result = []
    for p in values:
        part = experiment if p is None else experiment.select(procs == p)
        result.append(_group(part, unit, p, full_range))
    return result


def _group(experiment: Experiment, unit: str, procs, full_range: bool) -> Group:
    ids = experiment.columns[unit]
    units = np.unique(ids)
    if full_range and procs is not None and float(procs).is_integer() and procs > 0:
        units = np.union1d(units, np.arange(int(procs), dtype=float))
    index = np.searchsorted(units, ids)
    records = np.bincount(index, minlength=len(units))
    sums = {c: np.bincount(index, experiment.columns[c], minlength=len(units))
            for c in SUMMED if c in experiment.columns}
    maxima = {}
    for c in MAXED:
        if c in experiment.columns:
            top = np.zeros(len(units))
            np.maximum.at(top, index, experiment.columns[c])
            maxima[c] = top
    return Group(None if procs is None else float(procs), units, records, sums, maxima)


def require_comm(experiment: Experiment) -> None:
    """Raise ParallelError unless the experiment has the PMPI layer's communication columns."""
    missing = [c for c in MPI_COLUMNS if c not in experiment.columns]
    if missing:
        raise ParallelError(f"{experiment.name} has no communication column{'s' * (len(missing) > 1)} "
                            f"{', '.join(missing)}: they are measured in MPI traces "
                            f"(#pragma cll parallel MPI)")
