"""Cache-aware modeling (docs/machine.md, "Cache-aware prediction"): an experiment that states
its working set (the pragma's `bytes EXPR`) is set against the memory mountain of the machine
it was measured on, so that llac can say where the fitted points cross the cache levels,
warn when a prediction leaves every level the fitted points reached, and give a
machine-aware prediction beside the plain one.

The model is the roofline's: an experiment's time is the larger of its computation and its
memory traffic, which overlap. Its traffic is taken to be one pass through its working set:
w/8 sequential reads of 8 bytes, or, where the probe measured its random chase and that
curve explains the fitted points better, w/line random accesses; each costs c(w) from that
curve of the mountain: T(w) = (w/s)·c(w). At the fitted points in the deepest cache level
they reach, the median of T/t is the traffic ratio q; the memory share is ρ = min(q, 1).
Where q > 1 (memory-bound, and the model's traffic more than the time measured), the traffic
is calibrated down to the measurements: T̂ = T/q, else T̂ = T. At a point of working set w
beyond the largest fitted working set w₀ of the interval that predicts it,

    t_aware = max(t_plain, T̂(w))

and within the fitted working sets t_aware = t_plain. On another machine M
(`predict ... on M`), with r M's cost of the basic operations relative to this machine's:
within the fitted working sets t_on = t_plain · max(r, ρ·c_M(w)/c(w)) (the measured time
carries this machine's costs), beyond them t_on = max(r·t_aware, T̂_M(w)), with T̂_M costed
by M's mountain.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cll_grammar.machine import ProbeRun, byte_size
from cll_grammar.machinedb import MachineDBError
from llac.errors import LlacError
from llac.experiment import NoWorkingSet, working_set_bytes
from llac.machines import (MEMORY, SEQUENTIAL_STRIDE, access_cost, level_edges, level_of, open_machines,
                           resolve)
from llac.numbers import number_text

COMPUTE_OPERATIONS = ("add_dependent", "add_independent", "multiply_dependent",
                      "multiply_independent", "fma_dependent", "fma_independent")


@dataclass(frozen=True)
class Access:
    """How an experiment's memory traffic is costed: one access per `stride` bytes of its
    working set, each costing the mountain's `kind` curve at that stride."""
    kind: str                    # read (sequential, prefetched) or chase (random, dependent)
    stride: int
    text: str


SEQUENTIAL = Access("read", SEQUENTIAL_STRIDE, f"sequential reads of {SEQUENTIAL_STRIDE} bytes")


def _candidates(run: ProbeRun) -> list[Access]:
    """The access patterns the probe run can cost: sequential reads, and random accesses
    (one per cache line) where the probe measured its random chase. The probe's random gather
    is not offered: judged on two kernels held aside, choosing among three curves picked it on
    noisy in-cache points and predicted 3-5x too much (docs/machine.md)."""
    chase = sorted({p.stride for p in run.mountain if p.access == "chase"})
    return [SEQUENTIAL] + [Access("chase", s, f"dependent random accesses (a chase), one per {s}-byte line")
                           for s in chase[:1]]


@dataclass(frozen=True)
class MemoryView:
    """A model's working set against one probe run of its machine, with its memory share."""
    machine: str                 # NAME@ID of the probe run
    run: ProbeRun
    traffic_ratio: float         # the traffic model over the measured time at the deepest fitted level
    access: Access = SEQUENTIAL

    def cost(self, run: ProbeRun, sets: np.ndarray) -> np.ndarray:
        """Seconds per access at these working sets on `run`, for this view's access pattern."""
        return access_cost(run, sets, self.access.stride, self.access.kind)

    @property
    def share(self) -> float:
        """ρ: the memory traffic's share of the time at the deepest fitted level, at most 1."""
        return min(self.traffic_ratio, 1.0)

    def traffic(self, run: ProbeRun, sets: np.ndarray) -> np.ndarray:
        """Seconds of memory traffic of one pass through working sets `sets` on `run`,
        calibrated to the measured times: scaled down by the traffic model's excess over
        them where it exceeds them (memory-bound), as measured at the deepest fitted level."""
        calibration = 1 / self.traffic_ratio if self.traffic_ratio > 1 else 1.0
        return calibration * sets / self.access.stride * self.cost(run, sets)


def memory_view(model, reference: str | None = None) -> tuple[MemoryView | None, str | None]:
    """The model's MemoryView on the machine `reference` (None: the one its trace was measured
    on), or None with the reason in one sentence (no `bytes` clause, no database, never probed)."""
    if not model.working_set:
        return None, None
    try:
        sets = fitted_sets(model)
    except NoWorkingSet as error:
        return None, f"no cache-aware prediction: {error}"
    unsized = np.flatnonzero(~(np.isfinite(sets) & (sets > 0)))
    if len(unsized):
        first = int(unsized[0])
        where = " ".join(f"{v}={number_text(x[first])}" for v, x in fitted_columns(model).items())
        return None, (f"no cache-aware prediction: the working set ({model.working_set} bytes) is "
                      f"{number_text(sets[first])} at {where}; it must count bytes (> 0)")
    name, run, reason = measured_on(model, reference)
    if run is None:
        return None, f"no cache-aware prediction: {reason}"
    access = _explaining_access(model, run)
    return MemoryView(f"{name}@{run.run_id}", run, _traffic_ratio(model, run, access), access), None


def measured_on(data, reference: str | None = None) -> tuple[str, ProbeRun | None, str | None]:
    """NAME and the latest probe run with a memory mountain of the machine `reference` (None:
    the machine (host, CPU model) that `data`, an experiment or a model, were measured on),
    or None with the reason (data merged from several machines have no one machine)."""
    if reference is None and data.mixed_machines:
        return "", None, data.mixed_machines
    try:
        with open_machines() as db:
            if reference is None:
                host, cpu = data.machine or (None, None)
                reference = db.machine_of(host, cpu) if host else None
                if reference is None:
                    return "", None, (f"the machine the data were measured on ({host or 'unknown host'}, "
                                      f"{cpu or 'unknown CPU'}) was never probed into {db.path}; run "
                                      f"`call probe` there")
            name, run = resolve(db, reference)
    except (LlacError, MachineDBError) as error:
        return "", None, str(error)
    if not run.mountain:
        return name, None, f"{name}@{run.run_id} has no memory mountain"
    return name, run, None


def fitted_columns(model) -> dict[str, np.ndarray]:
    """The model's sample points, variable by variable."""
    return {v: model.sample_points[v] for v in model.formula.variables}


def fitted_sets(model) -> np.ndarray:
    """The working set (bytes) of each fitted sample point; NoWorkingSet when there is none."""
    return working_set_bytes(model, fitted_columns(model))


def _explaining_access(model, run: ProbeRun) -> Access:
    """The access pattern whose costs best explain the fitted points: the one under which a
    single set of constants fits them best once each time is divided by its access cost
    (relative to the cheapest point's). A pattern whose costs do not change over the fitted
    working sets leaves the times as they are; sequential reads win ties."""
    sets, time = fitted_sets(model), model.sample_points["time"]
    design, weights = model.formula.design_matrix(fitted_columns(model)), 1 / time
    candidates, errors = _candidates(run), []
    for access in candidates:
        ratio = access_cost(run, sets, access.stride, access.kind)
        ratio = ratio / ratio.min()
        constants, *_ = np.linalg.lstsq(design * (ratio * weights)[:, None], time * weights, rcond=None)
        with np.errstate(all="ignore"):
            errors.append(float(np.sqrt(np.mean(((design @ constants) * ratio / time - 1) ** 2))))
    return candidates[int(np.nanargmin(errors))] if np.isfinite(errors).any() else SEQUENTIAL


def _traffic_ratio(model, run: ProbeRun, access: Access) -> float:
    """The cost of going through each fitted point's working set once (from the mountain,
    with `access`) over its measured time, the median over the points in the deepest level
    they reach (1 where it cannot be computed)."""
    sets = fitted_sets(model)
    traffic = sets / access.stride * access_cost(run, sets, access.stride, access.kind)
    levels = np.array([level_of(run, w) for w in sets])
    deepest = levels == fitted_levels(model, run)[-1]
    with np.errstate(all="ignore"):
        share = float(np.nanmedian(traffic[deepest] / model.sample_points["time"][deepest]))
    return share if np.isfinite(share) and share > 0 else 1.0


def fitted_levels(model, run: ProbeRun) -> list[str]:
    """The levels the fitted points' working sets lie in, smallest first."""
    levels = {level_of(run, w) for w in fitted_sets(model)}
    order = [label for label, _ in level_edges(run)] + [MEMORY]
    return [label for label in order if label in levels]


def fit_note(model, view: MemoryView) -> str:
    """Where the fitted points' working sets lie and, along a single variable, where they
    cross each level's edge."""
    columns, sets = fitted_columns(model), fitted_sets(model)
    counts = {label: 0 for label in fitted_levels(model, view.run)}
    for w in sets:
        counts[level_of(view.run, w)] += 1
    where = ", ".join(f"{label} {n}" for label, n in counts.items())
    text = (f"working set ({model.working_set} bytes) {byte_size(sets.min())} .. {byte_size(sets.max())} on "
            f"{view.machine}; fitted points per level: {where}")
    if len(model.formula.variables) == 1:
        (v, x), = columns.items()
        order = np.argsort(x)
        crossings = [f"{label} ({byte_size(size)}) left at {v}≈{number_text(np.interp(size, sets[order], x[order]), 4)}"
                     for label, size in level_edges(view.run)
                     if sets.min() < size < sets.max() and np.all(np.diff(sets[order]) >= 0)]
        if crossings:
            text += "; " + ", ".join(crossings)
    deepest = list(counts)[-1]
    text += f"; traffic costed as {view.access.text} (the pattern that best explains the fitted points)"
    if view.share >= 1:
        return f"{text}; memory-bound (ρ=1): going through the working set once costs the whole measured time in {deepest}"
    return (f"{text}; memory share ρ={view.share:.2f}: going through the working set once costs "
            f"{view.share:.0%} of the measured time in {deepest}")


def level_crossings(model, view: MemoryView, x_name: str) -> list[tuple[str, float]]:
    """Along `x_name` (the only variable), the values where the working set leaves each
    level, for the plot's marks."""
    if model.formula.variables != (x_name,):
        return []
    x = np.sort(model.sample_points[x_name])
    grid = np.geomspace(max(x.min(), 1e-300), x.max(), 400) if x.min() > 0 else np.linspace(x.min(), x.max(), 400)
    sets = working_set_bytes(model, {x_name: grid})
    if not np.all(np.diff(sets) >= 0):
        return []
    return [(label, float(np.interp(size, sets, grid))) for label, size in level_edges(view.run)
            if sets[0] < size < sets[-1]]


def named_run(reference: str) -> tuple[str, ProbeRun]:
    """NAME@ID and the probe run of the machine reference (for `predict ... on MACHINE`)."""
    with open_machines() as db:
        name, run = resolve(db, reference)
    return f"{name}@{run.run_id}", run


def aware_prediction(model, view: MemoryView, columns: dict[str, np.ndarray], values: np.ndarray,
                     piece: np.ndarray, other: ProbeRun | None = None, other_name: str = ""
                     ) -> tuple[np.ndarray, list[str]]:
    """The machine-aware prediction at `columns` from the plain `values` (and the piece that
    gave each), on this machine or, with `other`, on another machine's probe run (named
    `other_name`, NAME@ID); with notes on the points whose working set leaves the levels the
    fitted points reached or the working sets the probe run measured."""
    sets, fitted = working_set_bytes(model, columns), fitted_sets(model)
    largest = np.array([_piece_reference(model, i, fitted) for i in range(len(model.pieces))])
    reference = np.where(piece >= 0, largest[np.clip(piece, 0, None)], fitted.max())
    # within the fitted working sets the plain prediction stands; beyond, the traffic may dominate
    beyond = sets > reference
    here = np.where(beyond, np.maximum(values, view.traffic(view.run, sets)), values)
    shown = np.where(np.isfinite(values), sets, np.nan)       # no notes where there is no value
    costed_by = (other_name, other) if other is not None else (view.machine, view.run)
    notes = _leaving_notes(model, view, columns, shown) + _unmeasured_notes(view, *costed_by, columns, shown)
    if other is None:
        return here, notes
    compute = _compute_ratio(view.run, other)
    # within the data the measured time carries this machine's costs: scale its memory share;
    # beyond it, the traffic costed on the other machine
    inside = values * np.maximum(compute, view.share * view.cost(other, sets) / view.cost(view.run, sets))
    return np.where(beyond, np.maximum(compute * here, view.traffic(other, sets)), inside), notes


def _piece_reference(model, index: int, fitted: np.ndarray) -> float:
    """The largest fitted working set inside piece `index` (`fitted`: those of all points)."""
    inside = model.pieces[index].contains(fitted_columns(model))
    return float(fitted[inside].max()) if inside.any() else float(fitted.max())


def _compute_ratio(here: ProbeRun, there: ProbeRun) -> float:
    """How much slower (>1) the other machine's basic operations are: the geometric mean of
    the ratios of the operations both probes measured (1 when none)."""
    mine = {o.name: o.seconds for o in here.operations if o.seconds > 0}
    ratios = [o.seconds / mine[o.name] for o in there.operations
              if o.name in mine and o.name in COMPUTE_OPERATIONS and o.seconds > 0]
    return float(np.exp(np.mean(np.log(ratios)))) if ratios else 1.0


def _leaving_notes(model, view: MemoryView, columns: dict, sets: np.ndarray) -> list[str]:
    """One warning for the points whose working set lies in a level beyond every level a
    fitted point reached."""
    return leaving_notes(view.run, fitted_sets(model), columns, sets, "fitted points",
                         "the plain prediction keeps {level}'s cost per access; the machine-aware one "
                         "follows the memory mountain")


def _unmeasured_notes(view: MemoryView, name: str, run: ProbeRun, columns: dict, sets: np.ndarray) -> list[str]:
    """One note for the points whose working set is larger than any the probe run `name`
    measured for the view's access pattern: there the cost at the largest one measured is
    used. It says how far a probe would have to go, and how to use a run that is not the one
    a machine's name picks (quick or labelled runs)."""
    measured = [p.working_set for p in run.mountain if p.access == view.access.kind]
    beyond = np.flatnonzero(np.isfinite(sets) & (sets > max(measured, default=np.inf)))
    if not len(beyond):
        return []
    first, needed = int(beyond[0]), float(np.nanmax(sets[beyond]))
    where = " ".join(f"{v}={number_text(columns[v][first])}" for v in columns)
    more = f" and {len(beyond) - 1} more" if len(beyond) > 1 else ""
    return [f"note: at {where}{more} the working set ({byte_size(sets[first])}; {byte_size(needed)} at the "
            f"largest) is larger than any {name} measured: the machine-aware prediction uses the cost per "
            f"access at {byte_size(max(measured))} there. `call probe --largest {_probe_size(needed)}` measures "
            f"that far (`predict ... on NAME@ID` uses a quick or labelled run)"]


def _probe_size(count: float) -> str:
    """`count` bytes rounded up to a power of two, as `call probe --largest` takes it."""
    power = int(np.ceil(np.log2(max(count, 1.0))))
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if power >= shift:
            return f"{2 ** (power - shift)}{unit}"
    return str(2 ** power)


def leaving_notes(run: ProbeRun, learned: np.ndarray, columns: dict, sets: np.ndarray, what: str,
                  keeps: str) -> list[str]:
    """One warning for the points (`columns`, working sets `sets`) whose working set lies in
    a cache level of `run` beyond every level that the working sets `learned` from reached
    (a working set of nan: a point to leave out; `what` names those, `keeps` says what the prediction does there, with `{level}`)."""
    order = [label for label, _ in level_edges(run)] + [MEMORY]
    deepest = max(order.index(level_of(run, w)) for w in learned)
    beyond = [i for i, w in enumerate(sets) if np.isfinite(w) and order.index(level_of(run, w)) > deepest]
    if not beyond:
        return []
    shown = ", ".join(" ".join(f"{v}={number_text(columns[v][i])}" for v in columns) for i in beyond[:3])
    more = ", ..." if len(beyond) > 3 else ""
    return [f"warning: at {shown}{more} the working set ({byte_size(sets[beyond[0]])} at the first) lies in "
            f"{level_of(run, sets[beyond[0]])}, beyond {order[deepest]} where the largest {what} "
            f"lie: {keeps.format(level=order[deepest])}"]

