"""Cache-aware modeling (docs/machine.md, "Cache-aware prediction"): an experiment that states
its working set (the pragma's `bytes EXPR`) is set against the memory mountain of the machine
it was measured on, so that llac can say where the fitted points cross the cache levels,
warn when a prediction leaves every level the fitted points reached, and give a
machine-aware prediction beside the plain one.

The machine-aware prediction scales the memory-bound share of the plain prediction by the
mountain: at a point whose working set is w, beyond the largest fitted working set w₀ of the
interval that predicts it,

    t_aware = t_plain · m(w) / m(w₀),    m(w) = 1 − φ + φ·c(w)/c₀

where c is the machine's cost of a sequential read at that working set, c₀ the least c of
the fitted points and φ the memory share of the time there. φ comes from the fitted points
when their working sets span levels of different cost (the φ in 0..1 under which one set of
constants fits them best once each point's time is divided by m), else φ = 1: a working set
was stated, so memory is taken to be what costs.
On another machine (`predict ... on M`), the memory share follows M's mountain at w and the
rest M's cost of the basic operations relative to this machine's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cll_grammar.machine import ProbeRun
from cll_grammar.machinedb import MachineDBError
from llac.errors import LlacError
from llac.experiment import NoWorkingSet, working_set_bytes
from llac.machines import MEMORY, access_cost, level_edges, level_of, open_machines, resolve

SHARES = np.linspace(0.0, 1.0, 21)
LEVEL_CONTRAST = 1.3          # the fitted points' memory costs must differ this much to estimate φ
COMPUTE_OPERATIONS = ("add_dependent", "add_independent", "multiply_dependent",
                      "multiply_independent", "fma_dependent", "fma_independent")


@dataclass(frozen=True)
class MemoryView:
    """A model's working set against one probe run of its machine, with its memory share."""
    machine: str                 # NAME@ID of the probe run
    run: ProbeRun
    expression: str
    share: float                 # φ, the memory share where the fitted points' access cost is least
    estimated: bool              # φ from the fitted points (else assumed 1)
    unit: float                  # that least cost (seconds per access)

    def factor(self, cost: np.ndarray, compute: float = 1.0) -> np.ndarray:
        """Time relative to the least-cost point when an access costs `cost` and the rest
        `compute` times as much."""
        return (1 - self.share) * compute + self.share * cost / self.unit


def memory_view(model, reference: str | None = None) -> tuple[MemoryView | None, str | None]:
    """The model's MemoryView on the machine `reference` (None: the one its trace was measured
    on), or None with the reason in one sentence (no `bytes` clause, no database, never probed)."""
    if not model.working_set:
        return None, None
    try:
        working_set_bytes(model, {v: model.sample_points[v] for v in model.formula.variables})
    except NoWorkingSet as error:
        return None, f"no cache-aware prediction: {error}"
    try:
        with open_machines() as db:
            if reference is None:
                host, cpu = model.machine or (None, None)
                reference = db.machine_of(host, cpu) if host else None
                if reference is None:
                    return None, (f"no cache-aware prediction: the machine the data were measured on "
                                  f"({host or 'unknown host'}, {cpu or 'unknown CPU'}) was never probed "
                                  f"into {db.path}; run `call probe` there")
            name, run = resolve(db, reference)
    except (LlacError, MachineDBError) as error:
        return None, f"no cache-aware prediction: {error}"
    if not run.mountain:
        return None, f"no cache-aware prediction: {name}@{run.run_id} has no memory mountain"
    share, estimated, unit = _memory_share(model, run)
    return MemoryView(f"{name}@{run.run_id}", run, model.working_set, share, estimated, unit), None


def _memory_share(model, run: ProbeRun) -> tuple[float, bool, float]:
    """φ at the fitted point whose access is cheapest: the share under which one set of
    constants fits the fitted points best once each time is divided by its memory factor
    1 − φ + φ·c/c_least; or φ = 1 (assumed) when their costs barely differ. Returns φ,
    whether it was estimated, and c_least."""
    points = model.sample_points
    columns = {v: points[v] for v in model.formula.variables}
    cost = access_cost(run, working_set_bytes(model, columns))
    if not np.all(np.isfinite(cost)) or cost.max() < LEVEL_CONTRAST * cost.min():
        return 1.0, False, float(np.nanmin(cost))
    ratio = cost / cost.min()
    design = model.formula.design_matrix(columns)
    time = points["time"]
    errors = []
    for share in SHARES:
        factor = 1 - share + share * ratio
        weights = 1 / time
        constants, *_ = np.linalg.lstsq(design * (factor * weights)[:, None], time * weights, rcond=None)
        errors.append(np.sqrt(np.mean(((design @ constants) * factor / time - 1) ** 2)))
    return float(SHARES[int(np.argmin(errors))]), True, float(cost.min())


def fitted_levels(model, view: MemoryView) -> list[str]:
    """The levels the fitted points' working sets lie in, smallest first."""
    columns = {v: model.sample_points[v] for v in model.formula.variables}
    levels = {level_of(view.run, w) for w in working_set_bytes(model, columns)}
    order = [label for label, _ in level_edges(view.run)] + [MEMORY]
    return [label for label in order if label in levels]


def fit_note(model, view: MemoryView) -> str:
    """Where the fitted points' working sets lie and, along a single variable, where they
    cross each level's edge."""
    columns = {v: model.sample_points[v] for v in model.formula.variables}
    sets = working_set_bytes(model, columns)
    counts = {label: 0 for label in fitted_levels(model, view)}
    for w in sets:
        counts[level_of(view.run, w)] += 1
    where = ", ".join(f"{label} {n}" for label, n in counts.items())
    text = (f"working set ({view.expression} bytes) {_bytes(sets.min())} .. {_bytes(sets.max())} on "
            f"{view.machine}; fitted points per level: {where}")
    if len(model.formula.variables) == 1:
        (v, x), = columns.items()
        order = np.argsort(x)
        crossings = [f"{label} ({_bytes(size)}) left at {v}≈{np.interp(size, sets[order], x[order]):.4g}"
                     for label, size in level_edges(view.run)
                     if sets.min() < size < sets.max() and np.all(np.diff(sets[order]) >= 0)]
        if crossings:
            text += "; " + ", ".join(crossings)
    share = (f"memory share φ={view.share:.2f} estimated from the fitted points" if view.estimated
             else "memory share φ=1 assumed (the fitted points' memory costs barely differ)")
    return f"{text}; {share}"


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


def aware_prediction(model, view: MemoryView, columns: dict[str, np.ndarray], values: np.ndarray,
                     piece: np.ndarray, other: MemoryView | None = None) -> tuple[np.ndarray, list[str]]:
    """The machine-aware prediction at `columns` from the plain `values` (and the piece that
    gave each), on this machine or, with `other`, on another one; with notes on the points
    whose working set leaves the levels the fitted points reached."""
    sets = working_set_bytes(model, columns)
    fitted_sets = working_set_bytes(model, {v: model.sample_points[v] for v in model.formula.variables})
    largest = np.array([_piece_reference(model, i, fitted_sets) for i in range(len(model.pieces))])
    reference = np.where(piece >= 0, largest[np.clip(piece, 0, None)], fitted_sets.max())
    # the plain prediction carries the cost of the data's own working set, up to the largest fitted
    carried = view.factor(access_cost(view.run, np.minimum(sets, reference)))
    compute = _compute_ratio(view.run, other.run) if other else 1.0
    wanted = view.factor(access_cost(other.run if other else view.run, sets), compute)
    return values * wanted / carried, _leaving_notes(model, view, columns, sets)


def _piece_reference(model, index: int, fitted_sets: np.ndarray) -> float:
    """The largest fitted working set inside piece `index`."""
    columns = {v: model.sample_points[v] for v in model.formula.variables}
    inside = model.pieces[index].contains(columns)
    return float(fitted_sets[inside].max()) if inside.any() else float(fitted_sets.max())


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
    order = [label for label, _ in level_edges(view.run)] + [MEMORY]
    deepest = max(order.index(label) for label in fitted_levels(model, view))
    beyond = [i for i, w in enumerate(sets) if order.index(level_of(view.run, w)) > deepest]
    if not beyond:
        return []
    shown = ", ".join(" ".join(f"{v}={columns[v][i]:g}" for v in columns) for i in beyond[:3])
    more = ", ..." if len(beyond) > 3 else ""
    return [f"warning: at {shown}{more} the working set ({_bytes(sets[beyond[0]])} at the first) lies in "
            f"{level_of(view.run, sets[beyond[0]])}, beyond {order[deepest]} where the largest fitted "
            f"points lie: the plain prediction keeps {order[deepest]}'s cost per access; the "
            f"machine-aware one follows the memory mountain"]


def _bytes(value: float) -> str:
    """1536 -> '1.5 KiB'."""
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"

