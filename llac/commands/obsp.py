"""The obsp command: a PUB program's supersteps (loaded with its traces) evaluated by the
OBSP* model and by plain BSP (`llac.obsp`), beside the measured time, per processor count, with
g and L given by the user or taken from the machine database."""
from __future__ import annotations

from collections import Counter

import numpy as np

from cll_grammar.span import suggest
from llac import ast
from llac.bsp_whatif import SMALL_MESSAGE_BYTES, message_cost, nearest_bsp
from llac.cache_aware import aware_prediction, leaving_notes, measured_on, memory_view
from llac.commands import command
from llac.commands.modeling import SECONDS, error_summary, fitted
from llac.commands.results import Table
from llac.cores import oversubscription_note
from llac.errors import LlacError
from llac.experiment import Experiment, NoWorkingSet, Source, working_set_bytes
from llac.machines import open_machines, resolve_bsp
from llac.obsp import Costs, ObspError, evaluate_with
from llac.obsp_runs import RunGroup, predict_run, representative, run_groups


@command("obsp", "obsp NAME [at DATA] [sum] [on MACHINE] [with g=G, L=L, o=O]", """Predict a PUB program's
         run time from its supersteps by the OBSP* model and by plain BSP, beside the measured
         time. NAME is the program's `sync` experiment (or a subset of it): every execution of it
         is a run of supersteps, and the rows are its sizes by P, each the run that stands for its
         repetitions as `set aggregate` says (the fastest for min); `runs` counts those that
         could be evaluated (the others are named below the table). NAME may also be the name of a
         program whose traces hold supersteps without experiments: one row per P and run.
         TIME is the measured run time (the latest end of a superstep); OBSP* the CALL paper's
         formulas (2) and (3): each processor waits only for its incoming partners at an
         oblivious sync, for all at a barrier, and the subgroups of bsp_partition start when
         their members enter them; BSP a global barrier ending every superstep (the sum of the
         supersteps' largest W plus g times the largest h plus L); ERROR % = 100 (PREDICTED -
         TIME) / TIME. With `at DATA` (another subset of the experiment) it is the paper's Table
         3: the runs of NAME are the training data, and each size of DATA is predicted without
         its own measurements, from the supersteps of NAME's largest run at the same P with
         every processor's W, bytes and messages in and out fitted over NAME's sizes by the experiment's
         formula; when that model has a memory term (the experiment's `bytes` and a probed machine),
         a MACHINE-AWARE OBSP* column follows, with each processor's W plus what the memory term
         adds at the predicted working set (docs/parallel-analysis.md). h is each processor's bytes in and out combined by max, or by + with
         `sum` (a network interface that cannot send and receive at once). g and L are the
         probe's for the trace's host and CPU at the nearest P (large messages; for P >= 2
         never those of P = 1, where nothing is communicated), those of another machine with
         `on MACHINE`, or given with `with g=..., L=...` (seconds per byte, seconds). Each
         message also costs o (seconds) beyond its bytes: from the probe's small messages, or
         `o=...`, 0 when g and L are given without it (the paper's model;
         docs/parallel-analysis.md, "Messages").""",
         ["obsp f", "obsp small at big", "obsp fig1 with g=2e-9, L=5e-6", "obsp f sum on node1@fastnet"], ast.Obsp)
def obsp(session, statement: ast.Obsp):
    obj = session.objects.get(statement.obj.text)
    if isinstance(obj, Experiment):
        return _experiment_table(session, statement, obj)
    if statement.data is not None:
        raise LlacError(f"obsp ... at {statement.data.text}: {statement.obj.text} must be the program's sync "
                        f"experiment (or a subset of it), whose sizes train the prediction", statement.obj.span)
    return _program_table(session, statement)


def program_supersteps(session, name: ast.Name, command: str = "obsp") -> dict:
    """The superstep traces (by P) of the program called `name`, for `command` (obsp or
    timeline); an error that suggests the nearest program or object when there is none, and
    one that names the experiment when `name` is a model (its runs are the experiment's)."""
    if name.text not in session.supersteps:
        model = session.objects.get(name.text)
        if model is not None and not isinstance(model, Experiment):
            raise LlacError(f"{name.text!r} is a model (of {model.name}), not runs of supersteps: "
                            f"{command} {model.name} evaluates the runs of its experiment", name.span)
        ran = [o for o in session.objects.values() if isinstance(o, Experiment)
               and o.header.get("program") == name.text and o.header.get("parallel") == "PUB"]
        if ran:
            status = ran[0].header.get("status", "complete")
            raise LlacError(f"the traces of {name.text}, a PUB program, hold no supersteps: it recorded none "
                            f"(its trace's status: {status}; {sum(map(len, ran))} records in its "
                            f"experiments)", name.span)
        known = ", ".join(sorted(session.supersteps)) or "none: load the traces of a PUB program"
        others = [n for n in (*session.supersteps, *session.objects) if n != name.text]
        raise LlacError(f"no experiment or program with supersteps called {name.text!r}"
                        f"{suggest(name.text, others)} (programs with supersteps: {known})", name.span)
    return session.supersteps[name.text]


def superstep_traces(session, experiment: Experiment, where) -> dict:
    """The supersteps (by P) that `experiment`'s runs were measured with: at each P, those of
    the execution its records were read from, not those of another execution of the program at
    that P loaded since (its runs are numbered alike: run 8 of one is not run 8 of the other).
    Records of two executions at one P cannot be told apart (an error at `where`); traces that
    name no execution (older ones) take the program's supersteps of that P."""
    program = experiment.header.get("program", "")
    traces = dict(session.supersteps.get(program, {}))
    sources = experiment.sources or (Source(experiment.origin, experiment.header, len(experiment)),)
    by_procs: dict[int, dict[str, str]] = {}
    for source in sources:
        procs, execution = source.header.get("procs", ""), source.header.get("execution", "")
        if procs.isdigit() and execution:
            by_procs.setdefault(int(procs), {}).setdefault(execution, source.origin)
    for procs, executions in by_procs.items():
        if len(executions) > 1:
            raise LlacError(f"{experiment.name} holds the runs of {len(executions)} executions of {program} "
                            f"at P={procs} ({', '.join(executions.values())}): their runs are numbered "
                            f"alike, so their supersteps cannot be told apart; load each trace with a "
                            f"load of its own (the later one's experiments are named like "
                            f"{experiment.name}@FILESTEM)", where)
        (execution, _), = executions.items()
        kept = session.executions.get((program, procs, execution))
        if kept is not None:
            traces[procs] = kept
        elif procs in traces and traces[procs].execution and traces[procs].execution != execution:
            del traces[procs]     # this execution's supersteps were not loaded (none recorded)
    return traces


def _program_table(session, statement: ast.Obsp) -> list:
    """One row per P and run of a program's supersteps."""
    name = statement.obj.text
    rows, footer = [], []
    for procs, trace in sorted(program_supersteps(session, statement.obj).items()):
        costs, source = machine_parameters(trace, dict(statement.parameters), statement.machine, f"obsp {name}")
        failures = []
        for number in trace.runs() or (0,):
            try:
                result = evaluate_with(trace, number, costs, statement.combine)
            except ObspError as err:
                rows.append((procs, number, *NOT_EVALUATED[:len(FIGURES) + 1], *costs))
                failures.append((procs, err.message))
                continue
            rows.append((procs, number, *_figures(result), *costs))
        footer += [*_not_evaluated(failures, "runs"), f"P={procs}: {source}"]
    footer.append(_h_note(statement))
    return [Table(f"OBSP* and BSP predictions of {name} from its supersteps",
                  ("P", "run", "supersteps", *FIGURES, *PARAMETERS), tuple(rows), tuple(footer))]


FIGURES = (f"TIME {SECONDS}", f"OBSP* {SECONDS}", "OBSP* ERROR %", f"BSP {SECONDS}", "BSP ERROR %")
PARAMETERS = ("g [s/byte]", "L [s]", "o [s/message]", "L of bsp_sync [s]")    # Costs' fields, in order
NOT_EVALUATED = (None,) * (1 + len(FIGURES) + len(PARAMETERS))   # supersteps, figures and costs of a row not evaluated


def _figures(result, measured: float | None = None) -> tuple:
    """A row's supersteps, TIME, OBSP*, its error, BSP and its error."""
    measured = result.measured if measured is None else measured
    return (result.supersteps, measured, result.obsp, _error(result.obsp, measured),
            result.bsp, _error(result.bsp, measured))


def _not_evaluated(failures: list[tuple[int, str]], rows: str) -> list[str]:
    """One footer line per P and cause among `failures` (P, message) of the rows not
    evaluated, saying how many `rows` (sizes, runs) it holds back when more than one."""
    return [f"P={procs}: not evaluated{f' ({count} {rows})' if count > 1 else ''}: {message}"
            for (procs, message), count in Counter(failures).items()]


def _h_note(statement: ast.Obsp) -> str:
    """The footer line that says how h combines in and out, and what ERROR % is."""
    return (f"h = max over the incoming partners of in {'+' if statement.combine == 'sum' else 'max'} out "
            f"(formula (3)); ERROR % = 100 (PREDICTED - TIME) / TIME")


def _experiment_table(session, statement: ast.Obsp, experiment: Experiment) -> list:
    """The rows of a sync experiment's sizes by P: evaluated from their own supersteps, or, with
    `at DATA`, DATA's sizes predicted from the experiment's runs (Table 3)."""
    program = experiment.header.get("program", "")
    traces = superstep_traces(session, experiment, statement.obj.span)
    settings = session.fit_settings()
    aggregate = settings.aggregate
    try:
        training = run_groups(experiment)
        targets = run_groups(session.experiment(statement.data)) if statement.data else training
    except ObspError as err:
        raise LlacError(err.message, (statement.data or statement.obj).span) from None
    names = targets[0].names
    target_traces = (superstep_traces(session, session.experiment(statement.data), statement.data.span)
                     if statement.data else traces)
    memory, aware_note = _memory_view(session, experiment) if statement.data else (None, None)
    rows, footer, parameters, replays, failures, aware = [], [], {}, {}, [], {}
    fits: dict[int, dict] = {}            # per P, the replay's fitted amounts (llac.obsp_runs.predict_run)
    for group in targets:
        label = (group.procs, *group.values)
        trace = target_traces.get(group.procs)
        if trace is None:
            rows.append((*label, len(group.runs), *NOT_EVALUATED))
            footer.append(f"P={group.procs}: no supersteps of {program or experiment.name} were loaded at this P")
            continue
        if group.procs not in parameters:     # one look-up in the machine database per P
            parameters[group.procs] = machine_parameters(trace, dict(statement.parameters), statement.machine,
                                                         f"obsp {statement.obj.text}")
        costs, _ = parameters[group.procs]
        chosen, used = None, len(group.runs)       # runs: those evaluated (the others are said below)
        try:
            measured = _evaluable(trace, group, costs, statement.combine, footer)
            chosen, used = measured[representative([m.measured for m in measured], aggregate)], len(measured)
            if statement.data is None:
                rows.append((*label, used, *_figures(chosen), *costs))
                continue
            same_p = [t for t in training if t.procs == group.procs]
            if not same_p:
                raise ObspError(f"{statement.obj.text} has no runs at P={group.procs} to learn from")
            extra = _memory_extra(*memory, group) if memory is not None else None
            if group.procs not in traces:
                raise ObspError(f"no supersteps of {statement.obj.text}'s runs were loaded at P={group.procs}")
            predicted = predict_run(experiment, traces[group.procs], same_p, group.values, settings, extra,
                                    fits.setdefault(group.procs, {}))
            result = evaluate_with(predicted.steps, predicted.template, costs, statement.combine)
            rows.append((*label, used, *_figures(result, chosen.measured), *costs))
            if predicted.aware is not None:
                obsp = evaluate_with(predicted.aware, predicted.template, costs, statement.combine).obsp
                aware[len(rows) - 1] = (obsp, _error(obsp, chosen.measured))
            replays[group.procs] = (f"; replayed run {predicted.template} with W, bytes and messages fitted over "
                                    f"{len(same_p)} sizes" + (" (constants free)" if settings.constants == "free" else ""))
        except ObspError as err:     # the measured run, when known, keeps its supersteps and time
            known = (chosen.supersteps, chosen.measured) if chosen is not None else (None, None)
            rows.append((*label, used, *known, *NOT_EVALUATED[:len(FIGURES) - 1], *costs))
            failures.append((group.procs, err.message))
    footer += _not_evaluated(failures, "sizes")
    if replays:
        footer += _cache_notes(experiment, training, [t for t in targets if t.procs in replays])
        footer += [note for procs in replays for note in
                   _replay_misfit(experiment, traces[procs], [t for t in training if t.procs == procs],
                                  settings, parameters[procs][0], statement.combine, fits[procs])]
    footer += [*(f"P={procs}: {source}{replays.get(procs, '')}" for procs, (*_, source) in parameters.items()),
               _h_note(statement),
               f"TIME: the {'fastest' if aggregate == 'min' else 'median'} run of each size's repetitions "
               f"(set aggregate {aggregate})",
               oversubscription_note([t.procs for t in targets], experiment, "P")]
    title = (f"OBSP* and BSP predictions of {statement.data.text} from the runs of {statement.obj.text} "
             f"(the CALL paper's Table 3)" if statement.data else
             f"OBSP* and BSP predictions of {experiment.name}'s runs from their supersteps")
    headers = ("P", *names, "runs", "supersteps", *FIGURES, *PARAMETERS)
    if aware:      # the machine-aware OBSP* beside the plain one
        at = headers.index("OBSP* ERROR %") + 1
        headers = (*headers[:at], f"MACHINE-AWARE OBSP* {SECONDS}", "ERROR %", *headers[at:])
        rows = [(*row[:at], *aware.get(i, (None, None)), *row[at:]) for i, row in enumerate(rows)]
        errors = np.array([error for _, error in aware.values()])
        footer.insert(0, f"machine-aware OBSP*: |error| {error_summary(errors)}; {aware_note}")
    elif aware_note and replays:
        footer.insert(0, aware_note)
    return [Table(title, headers, tuple(rows), tuple(footer))]


REPLAY_MISFIT = 0.10        # a replay this far from the training runs themselves (median) is said to be


def _replay_misfit(experiment: Experiment, trace, training: list[RunGroup], settings, costs: Costs,
                   combine: str, fits: dict) -> list[str]:
    """A footer line when the replay misses the training runs themselves: each training size
    replayed from the fit and evaluated, against its measured TIME (the session's estimator).
    The fitted supersteps' W cannot follow them (a cost per unit that changes within the
    sizes), or OBSP* does not reproduce the runs (oversubscribed processes), and a prediction
    beyond them inherits it; a review's program was predicted 67-84% short at its own sizes
    at P = 4, with no word."""
    errors = []
    for group in training:
        try:
            measured = _evaluable(trace, group, costs, combine, [])
            time = measured[representative([m.measured for m in measured], settings.aggregate)].measured
            replay = predict_run(experiment, trace, training, group.values, settings, fits=fits)
            errors.append(evaluate_with(replay.steps, replay.template, costs, combine).obsp / time - 1)
        except ObspError:
            return []
    misses = np.abs(errors)
    if not errors or np.median(misses) <= REPLAY_MISFIT:
        return []
    return [f"P={trace.procs}: the replay misses the {len(errors)} training sizes themselves by a median of "
            f"{100 * np.median(misses):.0f}% (errors from {100 * min(errors):+.0f}% to {100 * max(errors):+.0f}%): the "
            f"supersteps' W fitted over them do not follow them, and a prediction beyond inherits that"]


def _memory_view(session, experiment: Experiment):
    """The model of a sync experiment, fitted now on its runs with the session's settings,
    and its memory term (llac.cache_aware), for a machine-aware replay, with the footer's
    words for it; (None, why not) when the experiment states no working set, cannot be fitted
    or has no memory term."""
    if not experiment.working_set:
        return None, None
    try:
        model = fitted(session, experiment)
    except LlacError as err:
        return None, f"no machine-aware OBSP*: {err.message}"
    view, reason = memory_view(model)
    if view is None or view.access is None:
        return None, reason or (f"no machine-aware OBSP*: no memory term explains {experiment.name}'s runs "
                                f"(`fit {experiment.name}` says why)")
    return (model, view), (f"each processor's W plus what the memory term of {experiment.name}'s model adds at "
                           f"the predicted working set (per unit of {model.formula.terms[view.term].factor}, "
                           f"{view.access.text}, at what {view.machine}'s memory mountain costs beyond the fitted "
                           f"working sets; `predict` shows it as the machine-aware column), shared among its "
                           f"supersteps by their part of that work (docs/parallel-analysis.md)")


def _memory_extra(model, view, target: RunGroup) -> tuple[int, float] | None:
    """The lead term and the seconds per processor that the model's memory term adds at the
    target (`predict`'s machine-aware column less its plain one); None where there is none."""
    points = _points([target], target.procs)
    prediction = model.predict(points)
    aware, _ = aware_prediction(model, view, points, prediction.values, prediction.piece)
    extra = float(aware[0] - prediction.values[0] / model.trend_factors(points, prediction.piece)[0])
    return (view.term, extra) if np.isfinite(extra) and extra > 0 else None


def _cache_notes(experiment: Experiment, training: list[RunGroup], targets: list[RunGroup]) -> list[str]:
    """Table 3's warnings, for a sync experiment that states its working set (`bytes`): per P
    of the `targets` (the replayed ones), the predicted sizes whose working set lies in a
    cache level beyond every level that the training runs at that P reached, on the machine
    the runs were measured on. The replay
    keeps the training runs' costs, so a working set that leaves the cache they fitted in
    is where it is likely to fall short (issue 11's check, applied to the replay)."""
    if not experiment.working_set:
        return []
    name, run, reason = measured_on(experiment)
    if run is None:
        return [f"no cache check of the predicted sizes: {reason}"]
    notes = []
    for procs in sorted({t.procs for t in targets}):
        learned = [g for g in training if g.procs == procs]
        wanted = [g for g in targets if g.procs == procs]
        if not learned:
            continue
        try:
            learned_sets = working_set_bytes(experiment, _points(learned, procs))
            columns = _points(wanted, procs)
            wanted_sets = working_set_bytes(experiment, columns)
        except NoWorkingSet as err:
            return [f"no cache check of the predicted sizes: {err}"]
        notes += leaving_notes(run, learned_sets, columns, wanted_sets, "training runs",
                               f"the replay keeps their costs per unit of work (levels as {name}@{run.run_id} "
                               f"measured them, per processor)")
    return notes


def _points(groups: list[RunGroup], procs: int) -> dict[str, np.ndarray]:
    """The variable values of `groups` (one point per group) with P."""
    points = {n: np.array([g.values[i] for g in groups]) for i, n in enumerate(groups[0].names)}
    return {**points, "P": np.full(len(groups), float(procs))}


def _evaluable(trace, group, costs: Costs, combine: str, footer: list) -> list:
    """The evaluations of a size's runs (with `costs`) that the model can evaluate; a
    footer line for each that it cannot (a damaged record dropped a superstep). Raises the
    first error when none can."""
    results, failed = [], []
    for number in group.runs:
        try:
            results.append(evaluate_with(trace, number, costs, combine))
        except ObspError as err:
            failed.append(err)
    if not results:
        raise failed[0]
    footer += [f"P={group.procs}: left out: {err.message}" for err in failed]
    return results


GIVEN_L = "; L of bsp_sync = L (given): every superstep pays L"    # the footer's words when L is given


def machine_parameters(run, given: dict[str, float], other: ast.Name | None,
                       command: str) -> tuple[Costs, str]:
    """g, L, o, L_sync and where they came from for one run (o: seconds per message beyond
    its bytes, L_sync: the PUB library's empty bsp_sync; llac.obsp): those `given`, the rest
    from the probe of machine `other` or of the machine the run was measured on (its nearest
    P; o 0 when g and L are given without it, as in the paper's model, and L_sync then L).
    `command` is the statement as the messages advise to retype it (`obsp f`, `timeline f`)."""
    if "g" in given and "L" in given:
        if other is not None:
            raise LlacError(f"{command} ... on {other.text}: with both g and L given, the machine has "
                            f"nothing left to give; drop `on` or one of them", other.span)
        o = given.get("o", 0.0)
        return Costs(given["g"], given["L"], o), "g and L given" + (f", o = {o:g} s per message" if "o" in given else
                                                                    "; o = 0: no cost per message, as in the paper") \
            + GIVEN_L
    try:
        db = open_machines()
    except LlacError as err:
        raise LlacError(f"{err.message}; or give g and L: {command} with g=..., L=...") from None
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
    measured_o = message_cost(probe, point)
    o = given.get("o", measured_o or 0.0)
    note += (f"; o = {o:g} s per message given" if "o" in given else
             f"; o = {o:.3g} s per message (its small messages' g less the large ones', times {SMALL_MESSAGE_BYTES} "
             f"bytes)" if measured_o is not None else "; o = 0: the probe has no small-message g at that P")
    if not run.counts_messages:
        note += "; these supersteps do not count messages (a trace written before they were): o is not applied"
    L_sync = None if "L" in given else point.L_sync
    note += (f"; a bsp_sync superstep pays L of bsp_sync = {L_sync:.3g} s (the probe's empty bsp_sync), "
             f"the others L" if L_sync is not None else
             GIVEN_L if "L" in given else
             "; L of bsp_sync = L: this probe run did not measure the PUB library's bsp_sync (probe again: "
             "`call probe --procs ...`)")
    return Costs(given.get("g", point.g), given.get("L", point.L), o, L_sync), note


def _error(predicted: float, measured: float) -> float:
    """100 (PREDICTED - TIME) / TIME, nan when nothing was measured; rounded to 1e-9 %, so that
    a prediction equal to the time up to rounding (a sum of the same seconds in another order)
    shows as 0."""
    return round(100 * (predicted - measured) / measured, 9) if measured > 0 else float("nan")
