"""What-if for communication (docs/machine.md, "What-if: g and L"): a model of an experiment
whose records moved data (the MPI layer's h-relation column `h` is positive) read the BSP way,
its constant term as the latency of a superstep (L) and its other terms as bytes times the
cost per byte (g), predicted again with other g and L: given by the user
(`predict D size=65536 with g=2e-9, L=5e-6`), or those of another machine in the database
(`on MACHINE`). Each term is scaled by the new parameter over the one the probe measured on
the machine the data came from, for the point's P (the nearest P the probe measured; g of
large messages).
"""
from __future__ import annotations

import numpy as np

from cll_grammar.machine import BspPoint, ProbeRun
from llac.cache_aware import compute_ratio
from llac.errors import LlacError
from llac.machines import no_bsp, open_machines, resolve_bsp

PARAMETERS = ("g", "L")


def communication_scale(model, columns: dict[str, np.ndarray], prediction,
                        given: dict[str, float], other: str | None) -> tuple[np.ndarray, str]:
    """The model's prediction at `columns` (plain: `prediction`, with the piece of each
    point) with the BSP parameters `given` and/or those of machine `other`; and a note
    saying what was used."""
    if "o" in given:
        raise LlacError("with o=...: the cost per message is obsp's and timeline's (the supersteps count "
                        "messages); predict's what-if takes g and L")
    if not model.communicates:
        raise LlacError(f"{model.name} moved no data (its records have no positive h), so g and L "
                        f"do not enter its time")
    with open_machines() as db:
        here_name = db.machine_of(*model.machine) if model.machine else None
        if here_name is None and model.mixed_machines:
            raise LlacError(f"{model.mixed_machines}: no one machine's g and L to replace")
        if here_name is None:
            raise LlacError("the machine the data were measured on was never probed (`call probe "
                            "--procs ...` there): g and L there are unknown")
        here_ref, here = resolve_bsp(db, here_name)
        there_ref, there = resolve_bsp(db, other) if other else (None, None)
    n = len(prediction.values)
    procs = _procs(model, columns, n)
    old = [nearest_bsp(here, p, here_ref) for p in procs]
    new = [nearest_bsp(there, p, there_ref) for p in procs] if there else old
    old_g, old_L = np.array([b.g for b in old]), np.array([b.L for b in old])
    new_g = np.full(n, given["g"]) if "g" in given else np.array([b.g for b in new])
    new_L = np.full(n, given["L"]) if "L" in given else np.array([b.L for b in new])
    design = model.formula.design_matrix(columns) if columns else np.ones((n, len(model.formula.terms)))
    # on another machine the computation runs at that machine's speed too: its basic
    # operations against this one's (1 when either probe lacks them), as `on` does for the rest
    ratio = compute_ratio(here, there) if there else 1.0
    computation = (f"scaled by {there_ref}@{there.run_id}'s basic operations against this machine's (x{ratio:.3g})"
                   if there else "unchanged")
    latency, bandwidth, reading = _reading(model, columns, design, computation)
    result, used = np.full(n, np.nan), {"L": False, "g": False}
    for row, index in enumerate(prediction.piece):
        if index < 0 or not np.isfinite(prediction.values[row]):   # no plain prediction: none here
            continue
        parts = design[row] * model.pieces[index].constants
        used["L"] |= bool(np.any(parts[latency[row]] != 0))
        used["g"] |= bool(np.any(parts[bandwidth[row]] != 0))
        with np.errstate(over="ignore", invalid="ignore"):   # g or L near the float limit: inf, shown as such
            result[row] = parts[latency[row]].sum() * new_L[row] / old_L[row] + \
                parts[bandwidth[row]].sum() * new_g[row] / old_g[row] + \
                parts[~(latency[row] | bandwidth[row])].sum() * ratio
    source = ", ".join(f"{k}={v:g}" for k, v in given.items())
    if there:
        source = f"{there_ref}@{there.run_id}'s g and L" + (f", with {source}" if source else "")
    stand_ins = sorted({(int(p), b.procs) for p, b in zip(procs, old) if b.procs != p})
    nearest = "".join(f"; at P={p} those of P={q}, the nearest P probed" for p, q in stand_ins)
    note = f"{source}: {reading}, scaled from {here_ref}@{here.run_id}'s probed g and L at the point's P{nearest}"
    unused = [k for k in given if not used[k]]
    if unused and np.isfinite(result).any():      # (where no point has a prediction, nothing to say)
        note += (f"; {' and '.join(unused)} change{'s' if len(unused) == 1 else ''} nothing here: no term read as "
                 f"{' or '.join(unused)} has a constant other than 0 at these points")
    return result, note


def _reading(model, columns: dict, design: np.ndarray, computation: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Which terms, at each point, are latency (scaled by L) and bandwidth (scaled by g), and
    how the model was read. Without P in the formula (a communication experiment such as
    `D[0] + D[1]*size`) the constant term is L and the others g times bytes. With P, only the
    terms that vanish at P = 1 are communication (there is none on one processor): those of P
    alone (`log(P)`: a number of supersteps) are L, the others (`N*(P-1)/P`) g times bytes; the
    rest is computation, treated as `computation` says (unchanged, or scaled to another
    machine)."""
    n, terms = len(design), model.formula.terms
    of_p_alone = np.array([set(_variables(t)) <= {"P"} for t in terms])
    if "P" not in model.formula.variables:
        latency = np.array([not _variables(t) for t in terms])
        return (np.broadcast_to(latency, design.shape), np.broadcast_to(~latency, design.shape),
                "the constant term is read as L and the others as g times bytes")
    at_one = model.formula.design_matrix({**columns, "P": np.ones(n)})
    communication = (at_one == 0) & (design != 0)
    return (communication & of_p_alone, communication & ~of_p_alone,
            "the terms that vanish at P = 1 are read as communication (those of P alone as L times "
            f"supersteps, the others as g times bytes), the others as computation, {computation}")


def _variables(term) -> tuple[str, ...]:
    """The variables of a term's factor (none for the constant term)."""
    from cll_grammar.formula import variables_of
    return variables_of(term.factor)


def _procs(model, columns: dict, n: int) -> np.ndarray:
    """P at each point: the formula's P, else the one P the data were measured with."""
    if "P" in columns:
        return np.asarray(columns["P"], dtype=float)
    if model.procs is None:
        raise LlacError(f"the formula {model.formula} has no P and the data hold several: "
                        f"predict for one P with a model of that P's records "
                        f"({model.name}2 = {model.name} where P == 2; predict {model.name}2 ...)")
    return np.full(n, float(model.procs))


SMALL_MESSAGE_BYTES = 30      # the mean size of the probe's small messages (8, 16, 32, 64 bytes: docs/machine.md)


def message_cost(run: ProbeRun, point: BspPoint) -> float | None:
    """o, the seconds one message costs beyond its bytes, at `point`'s P: the probe's g of
    small messages over g of large ones (`point`), times the small messages' mean size; None
    where the probe has no small-message figure at that P."""
    small = next((b for b in run.bsp if b.procs == point.procs and b.message == "small"), None)
    return None if small is None else max(0.0, (small.g - point.g) * SMALL_MESSAGE_BYTES)


def nearest_bsp(run: ProbeRun, procs: float, name: str) -> BspPoint:
    """The probe's BSP figures (large messages) at the P nearest to `procs` (log scale). For
    P >= 2 never those of P = 1: one processor sends to nobody, its g is a memory copy and
    its L an empty call, so reading them as communication would make it nearly free."""
    points = [b for b in run.bsp if b.message == "large"] or list(run.bsp)
    if not points:
        raise no_bsp(name, run)
    if procs >= 2:
        points = [b for b in points if b.procs >= 2]
        if not points:
            raise LlacError(f"{name}@{run.run_id} measured g and L at P=1 only, where nothing is "
                            f"communicated: probe P={procs:g} (`call probe --procs 1,{procs:g}`) or give "
                            f"`with g=..., L=...`")
    return min(points, key=lambda b: abs(np.log(b.procs / procs)) if procs > 0 else b.procs)
