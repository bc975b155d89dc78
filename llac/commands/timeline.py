"""The timeline command: one PUB run's per-processor superstep timeline (computation,
communication, waiting), measured or as the OBSP* model sees it (`llac.timeline` draws it,
`llac.obsp` gives each superstep's Φ and communication)."""
from __future__ import annotations

import sys

from cll_grammar.span import suggest
from llac import ast
from llac.commands import command
from llac.commands.modeling import save_figure
from llac.commands.obsp import machine_parameters, program_supersteps, superstep_traces
from llac.commands.results import Text
from llac.errors import LlacError
from llac.experiment import Experiment
from llac.obsp import ObspError, evaluate, evaluate_with
from llac.obsp_runs import representative, run_groups
from llac.plot import HTML_WIDTH, terminal_canvas
from llac.timeline import draw, timeline_rows

TEXT_WIDTH = 80          # a timeline in a script, a pipe or a text file (a terminal: its width)


@command("timeline", 'timeline NAME [P=N] [run=K | VAR=V ...] [model] [sum] [on MACHINE] [with g=G, L=L, o=O] '
         '[to "FILE" [replace]]', """Draw one run of a PUB program as a timeline, one row per
         processor (global rank) and time since the run began across: each superstep's
         computation W (#), then the rest up to its end split into waiting (.) and
         communication (=, the OBSP* model's g·h + o·m + L of that processor (m its messages), at most the time left),
         a | where the superstep ends, and under the rows the subgroups of bsp_partition each
         processor was in ([ID and its processors from entry to exit ], one line per nesting depth). NAME is what `obsp` takes: the program's
         `sync` experiment (or a subset of it), whose runs are picked by P and its variables
         (N=1024), or the name of a program with supersteps, whose runs are picked by P and run.
         The default is the largest P, and there the representative run of the largest size as
         `obsp` rows choose it (set aggregate), or a program's last run, among the runs the model
         can evaluate (a run the program died in is left out, and the title says why); `run=K`
         names a run.
         `model` draws the OBSP* timeline instead: each superstep ends at the model's Φ, and a
         processor waits where it waits for a partner (for all at a barrier). `sum`, `on` and
         `with` give h, g and L as for `obsp`. On a terminal it fills the width (in colour unless
         NO_COLOR is set); in a script or a pipe it is 80 columns of plain text; `to
         "FILE.txt"` saves the text, `to "FILE.html"` a web page in colour, an existing file
         kept unless `replace` follows its name.""",
         ["timeline f", "timeline f P=2 N=2000 model", "timeline fig1 run=1 with g=5e-7, L=5e-4",
          'timeline f model to "f.html" replace'], ast.Timeline)
def timeline(session, statement: ast.Timeline):
    trace, number, label = _chosen_run(session, statement)
    costs, source = machine_parameters(trace, dict(statement.parameters), statement.machine,
                                       f"timeline {statement.obj.text}")
    g, L, o = costs.g, costs.L, costs.o
    try:
        result = evaluate_with(trace, number, costs, statement.combine)
    except ObspError as err:
        raise LlacError(err.message, statement.obj.span) from None
    steps = trace.runs()[number]
    ends = result.phi if statement.model else {(s.machine, s.step, s.rank): s.end for s in steps}
    rows = timeline_rows(steps, ends, result.comm)
    view = "the OBSP* model" if statement.model else "measured"
    title = f"timeline of {label} ({view}): {result.supersteps} superstep{'s' * (result.supersteps != 1)} of machine 0"
    notes = (f"TIME {result.measured:.6g} s measured, OBSP* {result.obsp:.6g} s, BSP {result.bsp:.6g} s",
             f"g = {g:g} s/byte, L = {L:g} s, o = {o:.3g} s/message ({source}); h = in "
             f"{'+' if statement.combine == 'sum' else 'max'} out, m the messages likewise")
    if statement.path is None:
        canvas = terminal_canvas(sys.stdout)
        return [Text(draw(rows, title, canvas.width + 2, notes).text(canvas.color))]
    return [save_figure(statement, "timeline", f"the timeline of {label}",
                        lambda: draw(rows, title, TEXT_WIDTH, notes).text(),
                        lambda: draw(rows, title, HTML_WIDTH, notes).html())]


def _chosen_run(session, statement: ast.Timeline):
    """The supersteps, run number and a label ("run 3 of f, P=2, N=2000") of the run the
    statement picks."""
    name = statement.obj.text
    obj = session.objects.get(name)
    if isinstance(obj, Experiment):
        return _experiment_run(session, statement, obj)
    traces = program_supersteps(session, statement.obj, "timeline")
    selected = _selectors(statement, ("P", "run"), "a program's runs are picked by P and run; name its sync "
                                                    "experiment to pick one by size")
    procs = _whole(selected, "P", max(traces))
    if procs not in traces:
        raise LlacError(f"{name} has no supersteps at P={procs} (loaded: "
                        f"{', '.join(f'P={p}' for p in sorted(traces))})", selected["P"][0].span)
    runs = traces[procs].runs()
    if not runs:
        raise LlacError(f"{traces[procs].path}: the trace declares supersteps but holds none", statement.obj.span)
    if "run" not in selected:
        usable, reason = _evaluable(traces[procs], sorted(runs))
        number = max(usable or runs)
        note = f" (run {max(runs)}, the last, is left out: {reason})" if usable and number != max(runs) else ""
        return traces[procs], number, f"run {number} of {name}, P={procs}{note}"
    number = _whole(selected, "run", max(runs))
    if number not in runs:
        raise LlacError(f"{name} has no run {number} at P={procs} (its runs: {_numbers(runs)})",
                        selected["run"][0].span)
    return traces[procs], number, f"run {number} of {name}, P={procs}"


def _evaluable(trace, numbers: list[int]) -> tuple[list[int], str | None]:
    """Those of the runs `numbers` of `trace` that the model can evaluate, and why the first
    of the others cannot (a program that died inside a run leaves it incomplete): a run left to
    choose by default should be one that can be drawn."""
    usable, reason = [], None
    for number in numbers:
        try:
            evaluate(trace, number, 1e-9, 1e-6)
            usable.append(number)
        except ObspError as err:
            reason = reason or err.message.split(": ", 1)[-1]
    return usable, reason


def _experiment_run(session, statement: ast.Timeline, experiment: Experiment):
    """The run of a sync experiment picked by P, run and its variables' values."""
    try:
        groups = run_groups(experiment)
    except ObspError as err:
        raise LlacError(err.message, statement.obj.span) from None
    names = groups[0].names
    selected = _selectors(statement, ("P", "run", *names), f"{experiment.name}'s runs are picked by "
                                                           f"{', '.join(('P', 'run', *names))}")
    chosen = [g for g in groups if ("P" not in selected or g.procs == selected["P"][1])
              and all(g.values[i] == selected[n][1] for i, n in enumerate(names) if n in selected)
              and ("run" not in selected or selected["run"][1] in g.runs)]
    asked = ", ".join(f"{n}={v:g}" for n, (_, v) in selected.items())
    if not chosen:
        where = next(iter(selected.values()))[0].span
        procs = sorted({g.procs for g in groups})
        if "P" in selected and selected["P"][1] not in procs:
            raise LlacError(f"{experiment.name} has no runs at P={selected['P'][1]:g} (its P: "
                            f"{', '.join(map(str, procs))})", where)
        runs = "; ".join(f"{_label(g)}: {_numbers(g.runs)}" for g in groups[:6])
        more = f"; ... {len(groups) - 6} more sizes" if len(groups) > 6 else ""
        raise LlacError(f"{experiment.name} has no run with {asked} (its runs: {runs}{more})", where)
    ordered = sorted(chosen, key=lambda g: (g.procs, g.values), reverse=True)
    group = ordered[0]
    program = experiment.header.get("program", "")
    traces = superstep_traces(session, experiment, statement.obj.span)
    trace = traces.get(group.procs)
    if trace is None:
        raise LlacError(f"no supersteps of {program or experiment.name} were loaded at P={group.procs}",
                        statement.obj.span)
    runs = trace.runs()
    if "run" in selected:
        number = int(selected["run"][1])
        if number not in runs:
            raise LlacError(f"run {number} of {experiment.name} has no supersteps in {trace.path}",
                            selected["run"][0].span)
        return trace, number, f"run {number} of {experiment.name}, {_label(group)}"
    reason = None
    for candidate in ordered:          # the largest size with a run that can be drawn
        here = traces.get(candidate.procs)
        known = [r for r in candidate.runs if here is not None and r in here.runs()]
        lacking = [r for r in candidate.runs if r not in known]
        usable, why = _evaluable(here, known) if known else ([], None)
        reason = reason or why or (f"run {lacking[0]} has no supersteps in {here.path if here else 'the trace'}"
                                   if lacking else None)
        if usable:
            times = [max(s.end for s in here.runs()[r]) for r in usable]
            number = usable[representative(times, session.fit_settings().aggregate)]
            note = f" (runs that cannot be drawn are left out: {reason})" if reason else ""
            return here, number, f"run {number} of {experiment.name}, {_label(candidate)}{note}"
    present = [r for r in group.runs if r in runs]
    if not present:
        raise LlacError(f"run {group.runs[0]} of {experiment.name} has no supersteps in {trace.path}",
                        statement.obj.span)
    times = [max(s.end for s in runs[r]) for r in present]   # none can: the error comes with the drawing
    number = present[representative(times, session.fit_settings().aggregate)]
    return trace, number, f"run {number} of {experiment.name}, {_label(group)}"


def _selectors(statement: ast.Timeline, allowed, hint: str) -> dict:
    """The statement's `NAME=VALUE` selectors by name, each one of `allowed`."""
    for name, _ in statement.selectors:
        if name.text not in allowed:
            raise LlacError(f"timeline {statement.obj.text}: no {name.text!r} to pick a run by"
                            f"{suggest(name.text, allowed)} ({hint})", name.span)
    return {name.text: (name, value) for name, value in statement.selectors}


def _whole(selected: dict, name: str, default: int) -> int:
    """A P or run selector's value (a whole number >= 1), or `default` when not given."""
    if name not in selected:
        return default
    token, value = selected[name]
    if not (value >= 1 and value == int(value)):
        raise LlacError(f"timeline: {name}={value:g} is not a whole number >= 1", token.span)
    return int(value)


def _label(group) -> str:
    """A run group as `P=2, N=2000`."""
    return ", ".join([f"P={group.procs}", *(f"{n}={v:g}" for n, v in zip(group.names, group.values))])


def _numbers(runs) -> str:
    """Run numbers as `1, 2, 3` (the first and last of a long list)."""
    runs = sorted(runs)
    return ", ".join(map(str, runs)) if len(runs) <= 6 else f"{runs[0]} to {runs[-1]}"
