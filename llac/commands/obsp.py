"""The obsp command: a PUB program's supersteps (loaded with its traces) evaluated by the
OBSP* model and by plain BSP (`llac.obsp`), beside the measured time, per processor count, with
g and L given by the user or taken from the machine database."""
from __future__ import annotations

from cll_grammar.span import suggest
from llac import ast
from llac.bsp_whatif import nearest_bsp
from llac.commands import command
from llac.commands.modeling import SECONDS
from llac.commands.results import Table
from llac.errors import LlacError
from llac.machines import open_machines, resolve_bsp
from llac.obsp import ObspError, evaluate


@command("obsp", "obsp PROGRAM [sum] [on MACHINE] [with g=G, L=L]", """Predict a PUB program's
         run time from its supersteps by the OBSP* model and by plain BSP, beside the measured
         time, one row per P. PROGRAM is the program name of loaded traces with `@step` records.
         TIME is the measured run time (the latest end of a superstep); OBSP* the CALL paper's
         formulas (2) and (3): each processor waits only for its incoming partners at an
         oblivious sync, for all at a barrier, and the subgroups of bsp_partition start when
         their members enter them; BSP a global barrier ending every superstep (the sum of the
         supersteps' largest W plus g times the largest h plus L); ERROR % = 100 (PREDICTED -
         TIME) / TIME. h is each processor's bytes in and out combined by max, or by + with
         `sum` (a network interface that cannot send and receive at once). g and L are the
         probe's for the trace's host and CPU at the nearest P (large messages), those of
         another machine with `on MACHINE`, or given with `with g=..., L=...` (seconds per
         byte, seconds).""",
         ["obsp fft", "obsp fig1 with g=2e-9, L=5e-6", "obsp fft sum on node1@fastnet"], ast.Obsp)
def obsp(session, statement: ast.Obsp):
    name = statement.obj.text
    if name not in session.supersteps:
        known = ", ".join(sorted(session.supersteps)) or "none: load the traces of a PUB program"
        raise LlacError(f"no supersteps of a program called {name!r}{suggest(name, session.supersteps)} "
                        f"(programs with supersteps: {known})", statement.obj.span)
    given = dict(statement.parameters)
    rows, footer = [], []
    for procs, run in sorted(session.supersteps[name].items()):
        g, L, source = machine_parameters(run, given, statement.machine)
        try:
            result = evaluate(run, g, L, statement.combine)
        except ObspError as err:
            rows.append((procs, "-", "-", "-", "-", "-", "-", g, L))
            footer.append(f"P={procs}: not evaluated: {err.message}")
            continue
        rows.append((procs, result.supersteps, result.measured, result.obsp, _error(result.obsp, result.measured),
                     result.bsp, _error(result.bsp, result.measured), g, L))
        footer.append(f"P={procs}: {source}")
    footer.append(f"h = max over the incoming partners of in {'+' if statement.combine == 'sum' else 'max'} out "
                  f"(formula (3)); ERROR % = 100 (PREDICTED - TIME) / TIME")
    return [Table(f"OBSP* and BSP predictions of {name} from its supersteps",
                  ("P", "supersteps", f"TIME {SECONDS}", f"OBSP* {SECONDS}", "ERROR %", f"BSP {SECONDS}",
                   "ERROR %", "g [s/byte]", "L [s]"), tuple(rows), tuple(footer))]


def machine_parameters(run, given: dict[str, float], other: ast.Name | None) -> tuple[float, float, str]:
    """g, L and where they came from for one run: those `given`, the rest from the probe of
    machine `other` or of the machine the run was measured on (its nearest P)."""
    if "g" in given and "L" in given:
        if other is not None:
            raise LlacError(f"obsp ... on {other.text}: with both g and L given, the machine has "
                            f"nothing left to give; drop `on` or one of them", other.span)
        return given["g"], given["L"], "g and L given"
    try:
        db = open_machines()
    except LlacError as err:
        raise LlacError(f"{err.message}; or give g and L: obsp {run.program} with g=..., L=...") from None
    with db:
        if other is None:
            reference = db.machine_of(run.host, run.cpu)
            if reference is None:
                raise LlacError(f"the machine {run.path} was measured on ({run.host or 'no host'}, "
                                f"{run.cpu or 'no cpu'}) was never probed: probe it (`call probe "
                                f"--procs ...`), name one with `on MACHINE`, or give `with g=..., L=...`")
        else:
            reference = other.text
        try:
            name, probe = resolve_bsp(db, reference)
        except LlacError as err:
            raise err.at(other.span if other else None)
    point = nearest_bsp(probe, run.procs, name)
    taken = [k for k in ("g", "L") if k not in given]
    note = f"from the probe of {name}@{probe.run_id} at P={point.procs} ({point.message} messages)"
    note = f"{taken[0]} {note}, {'L' if taken == ['g'] else 'g'} given" if len(taken) == 1 else f"g and L {note}"
    return given.get("g", point.g), given.get("L", point.L), note


def _error(predicted: float, measured: float) -> float:
    """100 (PREDICTED - TIME) / TIME, nan when nothing was measured; rounded to 1e-9 %, so that
    a prediction equal to the time up to rounding (a sum of the same seconds in another order)
    shows as 0."""
    return round(100 * (predicted - measured) / measured, 9) if measured > 0 else float("nan")
