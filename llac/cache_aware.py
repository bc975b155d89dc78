"""Cache-aware modeling (docs/machine.md, "Cache-aware prediction"): an experiment that states
its working set (the pragma's `bytes EXPR`) is set against the memory mountain of the machine
it was measured on, so that llac can say where the fitted points cross the cache levels,
warn when a prediction leaves every level the fitted points reached, and give a
machine-aware prediction beside the plain one.

The model is a **memory term**: each unit of the formula's leading term (the term that costs
the most at the largest fitted working set: N for a sweep, N*log(N) for an FFT, log(N) for
a search) makes memory accesses whose cost follows one curve c(w) of the memory mountain at
the working set w. Over all fitted points, one least-squares fit (constants >= 0) of

    t = formula terms + β · lead · c(w) / c(w_min)

sets β: the data's own level crossings tell how much of each unit of work is memory. The
curve (sequential reads or writes, one per line; a dependent random chase; or none) is the one that best predicts the fitted points with the largest
working sets from the others (a backtest, the way predictions beyond the data are used).
At a point of working set w beyond the largest fitted working set w₀ of the interval that
predicts it,

    t_aware = t_plain + β · lead · max(0, c(w) − c(w₀)) / c(w_min)

(the plain prediction keeps w₀'s cost per access; the memory term adds what the new level
costs more), and within the fitted working sets t_aware = t_plain. On another machine M
(`predict ... on M`), with r M's cost of the basic operations relative to this machine's
and m, m_M the memory term costed by the two mountains, the memory part being at most the
whole, m' = min(m(w), t_aware):

    t_on = r · (t_aware − m') + m' · m_M(w) / m(w)

(on this machine itself, r = 1 and m_M = m: t_on = t_aware).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cll_grammar.machine import ProbeRun, available_memory, byte_size, this_host
from cll_grammar.machinedb import MachineDBError
from llac.errors import LlacError
from llac.experiment import NoWorkingSet, working_set_bytes
from llac.fit import relative_fit
from llac.machines import MEMORY, access_cost, level_edges, level_of, open_machines, resolve
from llac.numbers import number_text

COMPUTE_OPERATIONS = ("add_dependent", "add_independent", "multiply_dependent",
                      "multiply_independent", "fma_dependent", "fma_independent")
LINE = 64                        # bytes: the stride at which a sequential pattern touches each line once
BACKTEST_SHARE = 4               # the largest quarter of the fitted working sets judges the curve


@dataclass(frozen=True)
class Access:
    """An access pattern: the mountain's `kind` curve at `stride` bytes."""
    kind: str                    # read, write (sequential, prefetched), chase (random, dependent)
    stride: int
    text: str


PATTERNS = (Access("read", LINE, f"sequential reads, one per {LINE}-byte line"),
            Access("write", LINE, f"sequential writes, one per {LINE}-byte line"),
            Access("chase", LINE, "dependent random accesses (a chase)"))


def _candidates(run: ProbeRun) -> list[Access]:
    """The access patterns the probe run measured a curve for. The probe's random gather is
    not offered: on noisy points in the caches it won the backtest where it was wrong and,
    ten times dearer in memory than in the last cache, then predicted 2-3x too much
    (docs/machine.md)."""
    kinds = {p.access for p in run.mountain}
    return [access for access in PATTERNS if access.kind in kinds]


@dataclass(frozen=True)
class MemoryView:
    """A model's working set against one probe run of its machine, with its memory term
    (`access` None: no curve predicts the largest fitted points better than the formula alone)."""
    machine: str                 # NAME@ID of the probe run
    run: ProbeRun
    access: Access | None = None
    term: int = 0                # the formula's leading term (its column)
    beta: float = 0.0            # seconds per unit of the leading term, at c(w_min)'s cost
    reference: float = 1.0       # c(w_min): the cost per access at the smallest fitted working set
    share: float = 0.0           # the memory term's share of the fitted time at the largest working set

    def memory(self, run: ProbeRun, lead: np.ndarray, sets: np.ndarray) -> np.ndarray:
        """Seconds of the memory term at these leading-term values and working sets, costed
        by `run`'s mountain (0 without a memory term)."""
        if self.access is None:
            return np.zeros(len(sets))
        return self.beta * lead * self.cost(run, sets) / self.reference

    @property
    def summary(self) -> str:
        """The memory term in a few words: its pattern and share, or that there is none."""
        return f"{self.access.text}, {self.share:.0%} of the time" if self.access else "no memory term"

    def cost(self, run: ProbeRun, sets: np.ndarray) -> np.ndarray:
        """Seconds per access at these working sets on `run`, for this view's access pattern."""
        return access_cost(run, sets, self.access.stride, self.access.kind)


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
    return _memory_term(model, f"{name}@{run.run_id}", run), None


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


def _memory_term(model, machine: str, run: ProbeRun) -> MemoryView:
    """The memory term that best predicts the fitted points with the largest working sets
    from the others (none when the formula alone does it best, or when the points are too
    few to hold a quarter out), fitted then over all of them."""
    sets, time = fitted_sets(model), model.sample_points["time"]
    design = model.formula.design_matrix(fitted_columns(model))
    term = int(np.argmax(np.abs(design[np.argmax(sets)] * _cost_fit(design, time))))
    held = np.zeros(len(sets), dtype=bool)
    held[np.argsort(sets, kind="stable")[-max(2, len(sets) // BACKTEST_SHARE):]] = True
    if len(sets) - held.sum() < design.shape[1] + 2:
        return MemoryView(machine, run)
    best, best_error = None, _backtest(design, time, held)
    for access in _candidates(run):
        cost = access_cost(run, sets, access.stride, access.kind)
        reference = float(cost[np.argmin(sets)])
        full = np.column_stack([design, design[:, term] * cost / reference])
        error = _backtest(full, time, held)
        if error < best_error:
            best, best_error = (access, reference, full), error
    if best is None:
        return MemoryView(machine, run, term=term)
    access, reference, full = best
    constants = _cost_fit(full, time)
    largest = int(np.argmax(sets))
    share = float(constants[-1] * full[largest, -1] / max(full[largest] @ constants, 1e-300))
    return MemoryView(machine, run, access, term, float(constants[-1]), reference, share)


def _cost_fit(design: np.ndarray, time: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """The constants of the relative fit of `time` over `rows` (a mask; None: all), those of
    terms that are costs (>= 0 at every point: `llac.fit.bounded_columns`' rule) kept >= 0,
    whatever `set constants` says: the memory term's β is a cost."""
    rows = np.ones(len(time), dtype=bool) if rows is None else rows
    return relative_fit(design[rows], time[rows], np.all(design >= 0, axis=0)).constants


def _backtest(design: np.ndarray, time: np.ndarray, held: np.ndarray) -> float:
    """The median relative error at the `held` points of the fit over the others."""
    constants = _cost_fit(design, time, ~held)
    with np.errstate(all="ignore"):
        error = float(np.median(np.abs(design[held] @ constants / time[held] - 1)))
    return error if np.isfinite(error) else np.inf


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
        v, = model.formula.variables
        sizes = dict(level_edges(view.run))
        crossings = [f"{label} ({byte_size(sizes[label])}) left at {v}≈{number_text(at, 4)}"
                     for label, at in level_crossings(model, view, v)]
        if crossings:
            text += "; " + ", ".join(crossings)
    if view.access is None:
        return (f"{text}; no memory term: the formula alone predicts the fitted points with the largest "
                f"working sets from the others better than any curve of the mountain, so the machine-aware "
                f"prediction is the plain one")
    lead = model.formula.terms[view.term]
    return (f"{text}; memory term: each unit of {lead.factor} makes {view.access.text}, costed at the "
            f"working set (the pattern that best predicts the fitted points with the largest working sets "
            f"from the others), {view.share:.0%} of the fitted time at the largest")


def memory_text(model, view: MemoryView, target: str, other: ProbeRun | None = None) -> str:
    """How the machine-aware prediction on `target` (NAME@ID) is made, in one clause; on
    another machine's probe run `other`, with the factor its basic operations give the rest."""
    if view.access is None:
        text = "the plain prediction (no memory term: see `fit`)"
    else:
        lead = model.formula.terms[view.term].factor
        text = (f"the plain prediction plus the memory term ({view.share:.0%} of the fitted time at the largest "
                f"working set: per unit of {lead}, {view.access.text}) at what {target}'s memory mountain costs "
                f"beyond the fitted working sets")
    if other is None:
        return text
    shared = shared_operations(view.run, other)
    factor = (f"x{compute_ratio(view.run, other):.4g}, the geometric mean over {len(shared)} basic operation"
              f"{'s' * (len(shared) != 1)}" if shared else
              "x1: the two probe runs share no basic operation to compare")
    rest = "the prediction" if view.access is None else "the rest"
    return f"{text}, {rest} scaled by {target}'s basic operations against {view.machine}'s ({factor})"

def level_crossings(model, view: MemoryView, x_name: str) -> list[tuple[str, float]]:
    """Along `x_name` (the only variable), the values where the working set leaves each
    level inside the fitted range (for `fit`'s note and the plot's marks): bracketed on a grid,
    then found by bisection on the working set's own expression (`8*n*n*2` leaves 32 KiB at
    n = 45.25, where interpolating between sample points said 45.13)."""
    if model.formula.variables != (x_name,):
        return []
    x = np.sort(model.sample_points[x_name])
    positive = x.min() > 0
    grid = np.geomspace(max(x.min(), 1e-300), x.max(), 400) if positive else np.linspace(x.min(), x.max(), 400)
    sets = working_set_bytes(model, {x_name: grid})
    if not np.all(np.diff(sets) >= 0):
        return []
    found = []
    for label, size in level_edges(view.run):
        if not sets[0] < size < sets[-1]:
            continue
        at = int(np.searchsorted(sets, size))          # sets[at - 1] < size <= sets[at]
        low, high = grid[at - 1], grid[at]
        for _ in range(60):
            middle = np.sqrt(low * high) if positive else (low + high) / 2
            if working_set_bytes(model, {x_name: np.array([middle])})[0] < size:
                low = middle
            else:
                high = middle
        found.append((label, float(high)))
    return found


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
    # the memory term scales the constants' prediction: a rise continued beyond the data
    # (llac.trend) is the same growth of the cost per access, measured instead of probed
    values = values / model.trend_factors(columns, piece)
    sets, fitted = working_set_bytes(model, columns), fitted_sets(model)
    largest = np.array([_piece_reference(model, i, fitted) for i in range(len(model.pieces))])
    reference = np.where(piece >= 0, largest[np.clip(piece, 0, None)], fitted.max())
    lead = model.formula.design_matrix(columns)[:, view.term]
    # within the fitted working sets the plain prediction stands; beyond, the memory term
    # adds what the new working set costs more per access than the largest fitted one
    with np.errstate(invalid="ignore"):       # a point without a value or a working set stays plain
        extra = view.memory(view.run, lead, sets) - view.memory(view.run, lead, np.minimum(sets, reference))
    here = values + np.where(np.isfinite(extra), np.maximum(extra, 0.0), 0.0)
    shown = np.where(np.isfinite(values), sets, np.nan)       # no notes where there is no value
    costed_by = (other_name, other) if other is not None else (view.machine, view.run)
    notes = _leaving_notes(model, view, columns, shown)
    if view.access is not None:
        notes += _unmeasured_notes(view, *costed_by, columns, shown)
    if other is None:
        return here, notes
    notes += _mixed_kinds(view, other, other_name)
    # the memory part costed by the other machine's mountain, the rest by its basic operations;
    # the memory part is at most the whole prediction (the memory term's β is fitted over all
    # the points at once, the plain prediction per interval), so that on this very machine the
    # what-if is the machine-aware prediction itself
    with np.errstate(invalid="ignore", divide="ignore"):
        mine, theirs = view.memory(view.run, lead, sets), view.memory(other, lead, sets)
        memory = np.clip(mine, 0.0, np.maximum(here, 0.0))
        scale = np.where(mine > 0, theirs / mine, 1.0)
        return compute_ratio(view.run, other) * (here - memory) + memory * scale, notes


def _mixed_kinds(view: MemoryView, other: ProbeRun, other_name: str) -> list[str]:
    """A note when the what-if's two probe runs are of different kinds (quick and full): their
    mountains then differ by method as well as by machine. A quick probe's chase read 30-50%
    above a full one's on one quiet VM minutes apart (session 29's review), which a what-if
    between them took for a slower machine."""
    if other.quick == view.run.quick:
        return []
    kind = {True: "quick", False: "full"}
    return [f"note: {other_name} is a {kind[other.quick]} probe run and {view.machine}, where the fitted "
            f"points were measured, a {kind[view.run.quick]} one: their figures differ by the probe's "
            f"method as well as by machine; compare runs of one kind (`machine list` shows them)"]


def _piece_reference(model, index: int, fitted: np.ndarray) -> float:
    """The largest fitted working set inside piece `index` (`fitted`: those of all points)."""
    inside = model.pieces[index].contains(fitted_columns(model))
    return float(fitted[inside].max()) if inside.any() else float(fitted.max())


def shared_operations(here: ProbeRun, there: ProbeRun) -> dict[str, float]:
    """The basic (compute) operations both probe runs measured: name -> there's seconds over
    here's."""
    mine = {o.name: o.seconds for o in here.operations if o.seconds > 0}
    return {o.name: o.seconds / mine[o.name] for o in there.operations
            if o.name in mine and o.name in COMPUTE_OPERATIONS and o.seconds > 0}


def compute_ratio(here: ProbeRun, there: ProbeRun) -> float:
    """How much slower (>1) the other machine's basic operations are: the geometric mean of
    the ratios of the operations both probes measured (1 when none)."""
    ratios = list(shared_operations(here, there).values())
    return float(np.exp(np.mean(np.log(ratios)))) if ratios else 1.0


def _leaving_notes(model, view: MemoryView, columns: dict, sets: np.ndarray) -> list[str]:
    """One warning for the points whose working set lies in a level beyond every level a
    fitted point reached."""
    follows = ("the machine-aware one adds the memory term's dearer accesses" if view.access else
               "no memory term explains the fitted points, so the machine-aware one cannot see it either")
    return leaving_notes(view.run, fitted_sets(model), columns, sets, "fitted points",
                         "the plain prediction keeps {level}'s cost per access; " + follows)


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
    available = available_memory()
    if available and needed > available // 2 and run.host == this_host():   # call probe --largest's bound
        further = (f"a probe here measures at most {byte_size(available // 2)}, half the memory available, "
                   f"so no probe of this machine reaches it")
    else:
        further = (f"`call probe --largest {_probe_size(needed)}` measures that far (`predict ... on "
                   f"NAME@ID` uses a quick or labelled run)")
    return [f"note: at {where}{more} the working set ({byte_size(sets[first])}; {byte_size(needed)} at the "
            f"largest) is larger than any {name} measured: the machine-aware prediction uses the cost per "
            f"access at {byte_size(max(measured))} there. {further}"]


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

