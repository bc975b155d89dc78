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
from llac.errors import LlacError
from llac.machines import open_machines, resolve_bsp

PARAMETERS = ("g", "L")


def communication_scale(model, columns: dict[str, np.ndarray], prediction,
                        given: dict[str, float], other: str | None) -> tuple[np.ndarray, str]:
    """The model's prediction at `columns` (plain: `prediction`, with the piece of each
    point) with the BSP parameters `given` and/or those of machine `other`; and a note
    saying what was used."""
    if not model.communicates:
        raise LlacError(f"{model.name} moved no data (its records have no positive h), so g and L "
                        f"do not enter its time")
    with open_machines() as db:
        here_name = db.machine_of(*model.machine) if model.machine else None
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
    latency = np.array([not model.formula.variables or not _has_variables(t) for t in model.formula.terms])
    result = np.full(n, np.nan)
    for row, index in enumerate(prediction.piece):
        if index < 0:
            continue
        parts = design[row] * model.pieces[index].constants
        result[row] = parts[latency].sum() * new_L[row] / old_L[row] + \
            parts[~latency].sum() * new_g[row] / old_g[row]
    source = ", ".join(f"{k}={v:g}" for k, v in given.items())
    if there:
        source = f"{there_ref}@{there.run_id}'s g and L" + (f", with {source}" if source else "")
    return result, (f"{source}: the constant term is read as L and the others as g times bytes, each "
                    f"scaled from {here_ref}@{here.run_id}'s probed g and L at the point's P")


def _has_variables(term) -> bool:
    """True for a term with a variable factor (not the constant term)."""
    from cll_grammar.formula import variables_of
    return bool(variables_of(term.factor))


def _procs(model, columns: dict, n: int) -> np.ndarray:
    """P at each point: the formula's P, else the one P the data were measured with."""
    if "P" in columns:
        return np.asarray(columns["P"], dtype=float)
    if model.procs is None:
        raise LlacError(f"the formula {model.formula} has no P and the data hold several: "
                        f"predict for one P with a model of that P's records")
    return np.full(n, float(model.procs))


def nearest_bsp(run: ProbeRun, procs: float, name: str) -> BspPoint:
    """The probe's BSP figures (large messages) at the P nearest to `procs` (log scale)."""
    points = [b for b in run.bsp if b.message == "large"] or list(run.bsp)
    if not points:
        raise LlacError(f"{name}@{run.run_id} has no BSP parameters (`call probe --procs 1,2,4`)")
    return min(points, key=lambda b: abs(np.log(b.procs / procs)) if procs > 0 else b.procs)
