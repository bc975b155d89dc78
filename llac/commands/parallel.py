"""Commands for parallel traces: balance and comm (P3T+'s parameters, as tables or plots, by
rank, thread or P) and `predict NAME at EXPERIMENT by P` (the CALL paper's Table 3 layout).
The parameters themselves are computed in `llac.parallel`."""
from __future__ import annotations

import re

import numpy as np

from cll_grammar.span import suggest
from llac import ast
from llac.commands import command
from llac.commands.modeling import SECONDS, error_summary
from llac.commands.results import Note, Table, Text
from llac.cores import cores_of, oversubscription_note
from llac.errors import LlacError
from llac.parallel import (UNITS, ParallelError, default_unit, distribution, groups,
                           require_comm)
from llac.tables import aggregate_experiment

PROCESSORS = "P"       # the column of every parallel trace: how many processes or threads ran
BY_WORDS = (*UNITS, PROCESSORS)
BALANCE_MARKERS = ("█", "▓", "▒", "░", "▞", "▚")


@command("balance", 'balance EXPERIMENT [by rank|thread|P]  |  plot balance EXPERIMENT [by ...] [to "FILE"]',
         """The work distribution of a parallel experiment across ranks or threads (P3T+,
         §3.1). Each rank's (OpenMP: thread's) work is the summed time of its records; the optimal work is their mean; the
         goodness wd is the standard deviation of the work divided by its mean (0: perfectly
         balanced; ranks with no records count as doing no work). `by rank` (the default) lists
         every rank for each P, `by P` gives one row per P: mean, max and min work, max/mean
         and wd. `plot balance` draws the same as bars (by rank) or lines (by P), `to "FILE.txt"` or
         `.html` saves it (kept unless `replace` follows). A bar chart
         parts each rank's bars from the next by a blank column and labels the ranks at regular
         intervals; ranks that do not fit in one chart (more than 22 stacked bars, or fewer
         groups of bars side by side, in 78 columns) go to several charts, one under the other,
         on the same scale, each title saying which bars it holds (`[bars 1-15 of 30]`).""",
         ["balance f", "balance f by P", "balance loop by thread", "plot balance f by rank"],
         ast.Balance)
def balance(session, statement: ast.Balance):
    experiment, by = _checked(session, statement)
    unit = default_unit(experiment) if by == "P" else by
    parts = groups(experiment, unit)
    if by == "P":
        rows = []
        for g in parts:
            d = distribution(g)
            rows.append((g.procs, len(g.units), int(g.records.sum()), d.owork, d.maximum, d.minimum,
                         d.imbalance, d.wd))
        if statement.plot:
            from llac.plot import line_chart
            x = [r[0] for r in rows]
            series = {"max": [r[4] for r in rows], "mean": [r[3] for r in rows], "min": [r[5] for r in rows]}
            return [_figure(statement, line_chart(f"{experiment.name}: work per {unit} (seconds) by P", x, series, "P"))]
        return [Table(f"work distribution of {experiment.name} by P (seconds of work per {unit})",
                      ("P", f"{unit}s", "records", "mean work", "max work", "min work", "max/mean", "wd"),
                      tuple(rows), _idle_notes(experiment, parts, unit) + _one_unit_notes(experiment, parts, unit))]
    if statement.plot:
        return [_figure(statement, _balance_bars(experiment.name, parts, unit))]
    rows, footer = [], []
    for g in parts:
        d = distribution(g)
        for u, n, work in zip(g.units, g.records, g.work):
            rows.append((*_procs(g), u, int(n), work, work / n if n else None,      # None: '-', no value
                         work / d.owork if d.owork > 0 else None))
        footer.append(f"{_label(g)}optimal (mean) work {d.owork:.4g} s; max {d.maximum:.4g} s ({unit} "
                      f"{d.max_unit}), min {d.minimum:.4g} s ({unit} {d.min_unit}); max/mean "
                      f"{d.imbalance:.3f}; goodness wd {d.wd:.3f}")
    headers = (*(("P",) if parts[0].procs is not None else ()), unit, "records", "work",
               "mean time", "work/mean")
    return [Table(f"work distribution of {experiment.name} by {unit} (seconds)", headers, tuple(rows),
                  tuple(footer) + _idle_notes(experiment, parts, unit) + _one_unit_notes(experiment, parts, unit))]


def _figure(statement: ast.ParallelReport, chart: str):
    """A `plot balance` or `plot comm` chart: shown, or written to the statement's `to "FILE"`
    (text, or a web page around it) as `plot` writes a model's."""
    if statement.path is None:
        return Text(chart)
    from llac.commands.modeling import save_figure
    from llac.plot import text_page
    verb = f"plot {'balance' if isinstance(statement, ast.Balance) else 'comm'}"
    what = f"the {verb.split()[1]} chart of {statement.obj.text}"
    return save_figure(statement, verb, what, lambda: chart, lambda: text_page(what, chart))


@command("comm", 'comm EXPERIMENT [by rank|P]  |  plot comm EXPERIMENT [by ...] [to "FILE"]', """The
         communication of an MPI experiment (P3T+, §3.2), per rank or per P. The PMPI layer
         measures it during the experiment (nested experiments included): the number of transfers (messages sent), the
         data transferred (bytes sent), messages and bytes received, the most distinct partners
         and the largest h (bytes sent + received) of one record, the communication time (time in
         MPI calls) and the computation time (time - communication time). `by rank` (the default)
         gives sums per rank for each P; `by P` gives totals over the ranks, and the
         communication and computation time per rank on average. `plot comm` draws both times
         as stacked bars (by rank) or lines (by P); `to "FILE"` saves the chart, as for `plot balance`. It warns when the trace says the program
         used MPI communication that is not counted (the header's `mpi_uncounted`).""",
         ["comm f", "comm D by P", "plot comm f by rank", "plot comm f by P"], ast.Comm)
def comm(session, statement: ast.Comm):
    experiment, by = _checked(session, statement)
    try:
        require_comm(experiment)
    except ParallelError as err:
        raise LlacError(str(err), statement.obj.span) from None
    unit = default_unit(experiment) if by == "P" else by
    parts = groups(experiment, unit)
    warning = _uncounted(experiment)
    if by == "P":
        rows = []
        for g in parts:
            s, n = g.sums, len(g.units)
            comp = s["time"] - s["mpi_time"]
            rows.append((g.procs, int(g.records.sum()), s["msgs_sent"].sum(), s["bytes_sent"].sum(),
                         g.maxima["h"].max(), g.maxima["partners"].max(), s["mpi_time"].sum() / n,
                         comp.sum() / n, _percent(s["mpi_time"].sum(), s["time"].sum())))
        if statement.plot:
            from llac.plot import line_chart
            series = {"communication": [r[6] for r in rows], "computation": [r[7] for r in rows]}
            return warning + [_figure(statement, line_chart(f"{experiment.name}: seconds per {unit} by P",
                                                            [r[0] for r in rows], series, "P"))]
        return warning + [Table(f"communication of {experiment.name} by P (totals over the {unit}s; times: "
                      f"seconds per {unit})",
                      ("P", "records", "transfers", "bytes sent", "max h", "partners", "comm time",
                       "comp time", "comm %"), tuple(rows))]
    if statement.plot:
        from llac.plot import bar_chart
        labels = [_unit_label(g, u, len(parts) > 1, unit) for g in parts for u in g.units]
        comm_time = np.concatenate([g.sums["mpi_time"] for g in parts])
        comp_time = np.concatenate([g.sums["time"] - g.sums["mpi_time"] for g in parts])
        return warning + [_figure(statement, bar_chart(f"{experiment.name}: █ computation, ░ communication "
                                                       f"(seconds per {unit})", labels, [list(comp_time), list(comm_time)],
                                                       ["█", "░"], stacked=True))]
    rows = []
    for g in parts:
        s = g.sums
        for i, u in enumerate(g.units):
            rows.append((*_procs(g), u, int(g.records[i]), s["msgs_sent"][i], s["bytes_sent"][i],
                         s["msgs_recv"][i], s["bytes_recv"][i], g.maxima["partners"][i],
                         s["mpi_time"][i], s["time"][i] - s["mpi_time"][i],
                         _percent(s["mpi_time"][i], s["time"][i])))
    headers = (*(("P",) if parts[0].procs is not None else ()), unit, "records", "transfers",
               "bytes sent", "msgs recv", "bytes recv", "partners", "comm time", "comp time", "comm %")
    return warning + [Table(f"communication of {experiment.name} by {unit} (sums over its records; seconds)",
                  headers, tuple(rows), _idle_notes(experiment, parts, unit))]


@command("table3", "predict NAME at EXPERIMENT by VAR", """Predict at the sample points of
         EXPERIMENT and print them in the layout of the CALL paper's Table 3: PROCS (the values
         of VAR, usually P; another VAR heads the column with its name), the other variables, TIME (measured: the records at that point
         summarised by the estimator the model was fitted with, its `set aggregate` at the fit,
         not one set since, as the footer says), PREDICTED (both in seconds) and ERROR % = 100
         (PREDICTED - TIME) / TIME, the sign of every error llac prints: positive when the model
         predicts more than measured (the paper's Table 3 has the opposite sign); with a memory
         term in the model, `predict`'s machine-aware column and its error follow. Rows
         whose P exceeds the cores of the host that ran them are flagged as oversubscribed
         (the trace header's `cores`, or this machine's when the trace was made here).""",
         ["predict f at big by P"], ast.PredictTable, starts_statement=False)
def table3(session, statement: ast.PredictTable):
    from llac.commands.modeling import _aware, across_note, interval_fields, model_for
    model, notes = model_for(session, statement.obj)
    variables = model.formula.variables
    procs = statement.procs.text
    if procs not in variables:
        raise LlacError(f"the formula {model.formula} has no variable {procs!r}{suggest(procs, variables)}",
                        statement.procs.span)
    experiment = session.experiment(statement.data)
    missing = [v for v in variables if v not in experiment.columns]
    if missing:
        raise LlacError(f"{statement.data.text} has no column {missing[0]!r}, which the formula "
                        f"{model.formula} needs", statement.data.span)
    if not len(experiment):
        raise LlacError(f"{statement.data.text} has no records to compare with", statement.data.span)
    # grouped by the model's variables (EXPERIMENT's own formula may not use them all), and
    # summarised by the estimator the model was fitted with
    data = aggregate_experiment(experiment.replace(formula=model.formula), model.settings.aggregate,
                                statement.data.span)
    others = [v for v in variables if v != procs]
    order = np.lexsort([data.columns[v] for v in (procs, *reversed(others))])  # by others, then procs
    points = {v: data.columns[v][order] for v in variables}
    measured = data.columns["time"][order]
    prediction = model.predict(points)
    error = 100 * (prediction.values - measured) / measured
    aware, aware_notes, aware_name = _aware(model, points, prediction, None)
    aware_error = 100 * (aware[0] - measured) / measured if aware is not None else None
    processors = points.get(PROCESSORS)      # oversubscription is judged on P, whatever VAR is
    cores, _ = cores_of(experiment)
    oversubscribed = [bool(cores and processors is not None and processors[i] > cores) for i in range(len(measured))]
    rows = []
    for i in range(len(measured)):
        flags = [str(int(prediction.piece[i]) + 1) if prediction.piece[i] >= 0 else "-"]
        flags += ["extrapolated"] * bool(prediction.extrapolated[i])
        flags += ["oversubscribed"] * oversubscribed[i]
        rows.append((points[procs][i], *(points[v][i] for v in others), measured[i],
                     prediction.values[i], error[i],
                     *((aware[0][i], aware_error[i]) if aware is not None else ()), " ".join(flags)))
    footer = [f"TIME: the {model.settings.aggregate} of the records at each point (as in the fit); "
              f"ERROR % = 100 (PREDICTED - TIME) / TIME",
              f"|error|: {error_summary(error)}" if len(rows) else "no points",
              *([f"{aware_name}: |error| {error_summary(aware_error)}"] if aware is not None and len(rows) else []),
              *([oversubscription_note(processors, experiment, PROCESSORS)] if processors is not None else []),
              *prediction.notes, *aware_notes]
    headers = ("PROCS" if procs == PROCESSORS else procs, *others, f"TIME {SECONDS}", f"PREDICTED {SECONDS}", "ERROR %",
               *((f"{aware_name.upper()} {SECONDS}", "ERROR %") if aware is not None else ()), "interval")
    machine = interval_fields(headers, rows, prediction.piece, {"extrapolated": prediction.extrapolated,
                                                                "oversubscribed": oversubscribed})
    return [*notes, *across_note(session, model, experiment),
            Table(f"real and predicted times of {experiment.name} by the model of {model.name} "
                          f"({model.formula})", headers, tuple(rows), tuple(footer), machine)]


def _checked(session, statement: ast.ParallelReport):
    """The statement's experiment and its `by` word (default: the experiment's unit)."""
    experiment = session.experiment(statement.obj)
    if statement.by is None:
        return experiment, default_unit(experiment)
    by = statement.by.text
    if by not in BY_WORDS:
        raise LlacError(f"by {' or by '.join(BY_WORDS)}, not {by!r}{suggest(by, BY_WORDS)}",
                        statement.by.span)
    if by not in experiment.columns:
        raise LlacError(f"{experiment.name} has no column {by!r}"
                        + (": P comes from the formula or, in a parallel trace, from the header's procs"
                           if by == "P" else ""), statement.by.span)
    return experiment, by


def _procs(group) -> tuple:
    return () if group.procs is None else (group.procs,)


def _label(group) -> str:
    return "" if group.procs is None else f"P={group.procs:g}: "


def _unit_label(group, unit_id, with_procs: bool, unit: str) -> str:
    text = f"{unit[0]}{unit_id:g}"
    return f"P{group.procs:g} {text}" if with_procs else text


def _percent(part: float, whole: float) -> float | None:
    """part / whole in percent; None (no value: '-' in text) when whole is not above 0."""
    return 100 * part / whole if whole > 0 else None


def _idle_notes(experiment, parts, unit) -> tuple[str, ...]:
    """One line per P where some units ran no record of the experiment; and, when one of its
    traces did not finish normally, a warning that those units' records may be in their own
    traces (an MPI rank that died: rank 0's gathered trace lacks them)."""
    idle = tuple(f"{_label(g)}{unit}{'s' * (len(g.idle()) > 1)} {', '.join(map(str, g.idle()))} "
                 f"ran no record of it (counted as no work)" for g in parts if g.idle())
    from llac.trace import NORMAL_ENDS
    files = [(s.origin, s.header) for s in experiment.sources] if experiment.sources else \
        [(experiment.origin, experiment.header)]
    unfinished = [(origin, header["status"]) for origin, header in files
                  if header.get("status", "complete") not in NORMAL_ENDS]
    if not idle or unit != "rank" or not unfinished:
        return idle
    return idle + tuple(f"warning: {origin} did not finish normally (status: {status}): a rank it lacks "
                        f"may have left its records in its own trace; load them with it, "
                        f'load "{re.sub(r"[.]dat$", "*.dat", origin)}"' for origin, status in unfinished)


def _one_unit_notes(experiment, parts, unit: str) -> tuple[str, ...]:
    """A line when every P has a single `unit` (rank or thread) while the other one varies:
    a balance of one unit says nothing (wd 0), and the other unit is what the work is spread
    over (an OpenMP experiment by rank, an MPI one by thread)."""
    other = {"rank": "thread", "thread": "rank"}.get(unit)
    if other is None or any(len(g.units) > 1 for g in parts) or other not in experiment.columns \
            or len(np.unique(experiment.columns[other])) < 2:
        return ()
    return (f"every record of {experiment.name} has the same {unit} at each P, so this compares "
            f"nothing; its records differ by {other}: balance {experiment.name} by {other}",)


def _balance_bars(name: str, parts, unit: str) -> str:
    """Work per unit as bars: one group of bars per P when there are several."""
    from llac.plot import bar_chart
    units = np.unique(np.concatenate([g.units for g in parts]))
    series = [[dict(zip(g.units, g.work)).get(u, 0.0) for u in units] for g in parts]
    keys = ", ".join(f"{BALANCE_MARKERS[i % len(BALANCE_MARKERS)]} P={g.procs:g}"
                     for i, g in enumerate(parts) if g.procs is not None)
    return bar_chart(f"{name}: work per {unit} (seconds){'; ' + keys if len(parts) > 1 else ''}",
                     [f"{unit[0]}{u:g}" for u in units], series,
                     [BALANCE_MARKERS[i % len(BALANCE_MARKERS)] for i in range(len(parts))])


def _uncounted(experiment) -> list[Note]:
    """A warning when the trace header's `mpi_uncounted` says the program used MPI calls the
    PMPI layer does not count: what they moved is missing from the counts."""
    used = experiment.header.get("mpi_uncounted")
    if not used:
        return []
    return [Note(f"warning: {experiment.name}: the program used MPI communication that is not "
                 f"counted ({used}): what it moved is missing from these counts, and the time "
                 f"of calls not wrapped counts as computation (docs/mpi.md)", warning=True)]


