"""Commands that bring data in, look at it, name it and write it out: load, list, show,
describe, rename, delete, export."""
from __future__ import annotations

import dataclasses
import glob
import os
import sys
from pathlib import Path

import numpy as np

from cll_grammar.formula import parse_formula
from cll_grammar.outputs import missing_folder
from llac import ast
from llac.commands import command
from llac.commands.results import ModelReport, Note, Percent, Table
from llac.errors import LlacError
from llac.experiment import Experiment
from llac.noise import noisy, point_spread, spread_summary
from llac.parse import checked_formula
from llac.superstep_files import combine, finished_none, same_execution
from llac.fit_data import valid_times
from llac.tables import agreed_fields, excluded_records, merge_experiments, repetitions, shared_records

SHOW_LIMIT = 20
STDIN = "<stdin>"
EXPORT_FORMATS = ("csv", "extrap")   # of an experiment; a model is written as json
EXPORT_SUFFIXES = {"extrap": "txt"}        # a file name's suffix by format, where it is not the format's name


@command("load", 'load "FILE" [, "FILE" ...] [as NAME] [formula "FORMULA"]',
         """Read trace files (globs allowed, which leave out, with a note, the traces `call run` set
         aside, PROG.cll.P.dat.previous, unless they name them; "-" is standard input) or a CSV file. Each experiment in a trace becomes an
         object named after it; experiments of the same name in the files of one load are merged
         when one program wrote them (the trace's #program: e.g. its runs for P = 1, 2, 4); those
         of different programs are kept apart as NAME@PROGRAM, with a warning. A name already in use gets a qualified name
         NAME@FILESTEM instead (whatever the file's kind, and with `as NAME` too): nothing is
         overwritten. Damaged records are reported as warnings
         with file:line and the good ones are kept. A trace that is missing but has spill files
         next to it (its run was killed by SIGKILL) loads what they hold, with a warning; so
         does a spill file's own path, and a glob takes the spill files of the traces it would
         match that were never written (a killed P of a sweep). A trace loaded with newer spill
         files beside it is said to be an earlier run's (a later one was killed). A PUB program's supersteps are kept per program and P;
         those of the `.rank<r>` traces of ranks that were not gathered join the gathered trace's
         of the same execution (load "prog.cll.4*.dat"). A CSV file needs `as NAME` and a formula; its columns are
         time and the formula's variables (not time, rank or thread, as for `formula`), its
         values numbers as C reads them (not `1_000`); one that leaves nothing to fit (no data
         rows, every row ignored, no time a fit can use) loads with a warning saying so. A model written by `export` (a .json file, or any
         file that holds one) predicts as the exported one did; one that no fit could have
         written (an interval's region that ends below its start, a constant below 0 that its
         settings keep >= 0, a setting that `set` would refuse) is refused, naming what. An Extra-P text file (`export
         ... as extrap`, its first word PARAMETER) gives one experiment per region, with the
         constant formula NAME[0]: `g = NAME formula "..."` gives it its own.""",
         ['load "matinit.cll.1.dat"', 'load "fft.cll.*.dat"',
          'load "data.csv" as f formula "f[0] + f[1]*N"', 'load "colinit.json" as m',
          'load "colinit.txt" as c'], ast.Load)
def load(session, statement: ast.Load):
    set_aside: list[str] = []
    files = _expand(statement, set_aside)
    if set_aside:
        return [Note(f"left out {', '.join(set_aside)}: the earlier run{'s' * (len(set_aside) > 1)} that "
                     f"call run set aside (docs/call.md); name {'them' if len(set_aside) > 1 else 'it'} "
                     f"to load {'them' if len(set_aside) > 1 else 'it'}"),
                *_load_files(session, statement, files)]
    return _load_files(session, statement, files)


def _load_files(session, statement: ast.Load, files: list[str]) -> list:
    """Load the expanded `files` of a load statement: a model, a CSV, an Extra-P file or traces."""
    if any(_is_model_file(f) for f in files):       # first: a model exported under a .csv name too
        return _load_model(session, statement, files)
    if any(Path(f).suffix.lower() == ".csv" for f in files):
        return _load_csv(session, statement, files)
    if any(_is_extrap_file(f) for f in files):
        return _load_extrap(session, statement, files)
    if statement.formula is not None:
        raise LlacError("a formula is only given for CSV files; for a trace use: g = NAME formula \"...\"")
    from llac.spill import read_input
    traces = [t for f in files for t in (stdin_traces() if f == "-" else [read_input(f)])]
    held = len({name for t in traces for name in t.experiments})    # one name in several files: merged
    if statement.name and held != 1:
        what = "several" if held else "none"
        if not held and any(t.supersteps is not None for t in traces):
            what += " (only supersteps, which `obsp PROGRAM` names by their program)"
        raise LlacError(f"'as NAME' names a single experiment, but these files hold {what}")
    return load_traces(session, traces, statement.name.text if statement.name else None)


def load_traces(session, traces, name: str | None = None) -> list:
    """Store the experiments of `traces` (same names merged), with their problems as warnings."""
    results = [Note(str(p), warning=True) for t in traces for p in t.problems]
    groups: dict[str, list] = {}
    programs, apart, stored = {}, [], {}
    for trace in traces:
        for exp_name, experiment in trace.experiments.items():
            groups.setdefault(name or exp_name, []).append((trace.path, experiment.identify()))
            programs[trace.path] = trace.header.get("program", "")
    for exp_name, members in groups.items():
        members = _once(members, results)
        results += _held_already(session, members)
        parts = _merged_parts(members, programs)
        several = len({program for _, program, _ in parts}) > 1
        apart += [exp_name] * several
        for experiments, program, path in parts:
            target = _free_name(session, exp_name, program if several and program else path, len(parts) > 1)
            results.append(session.store(target, merge_experiments(experiments)))
            stored[program, exp_name] = target
    if apart:
        owners = ", ".join(dict.fromkeys(p or "unnamed" for p in programs.values()))
        results.insert(0, Note(f"these files are the traces of several programs ({owners}): experiments of one "
                               f"name from different programs ({', '.join(apart)}) are kept apart, each named "
                               f"NAME@PROGRAM (merged, one program's times would be fitted as repetitions of "
                               f"another's)", warning=True))
    results += [note for t in traces if t.supersteps is not None
                for note in store_supersteps(session, t.supersteps, stored)]
    if not groups and not any(t.supersteps for t in traces):
        results.append(Note("no experiments found", warning=True))
    return results + _rank_files_beside(traces) + _newer_spills_beside(traces)


def _rank_files_beside(traces) -> list[Note]:
    """A note for each gathered MPI trace loaded without the `.rank<r>` files of its execution
    next to it: they hold the records of ranks it lacks, or measured after its report
    (docs/mpi.md, Faults). Those of another execution (an earlier run's) are not meant."""
    loaded = {str(Path(t.path).resolve()) for t in traces if t.path != "-"}
    notes = []
    for trace in traces:
        path, execution = Path(trace.path), trace.header.get("execution")
        if trace.path == "-" or path.suffix != ".dat" or ".rank" in path.name or not execution:
            continue
        beside = sorted(p.name for p in path.parent.glob(f"{glob.escape(path.stem)}.rank*.dat")
                        if str(p.resolve()) not in loaded and _execution_of(p) == execution)
        if beside:
            pattern = path.with_name(f"{path.stem}*.dat")
            notes.append(Note(f"{', '.join(beside)} next to {path.name} hold records it lacks (ranks not "
                              f"gathered, or records measured after its report): load \"{pattern}\" reads "
                              f"them together", warning=True))
    return notes


def _newer_spills_beside(traces) -> list[Note]:
    """A warning for each trace loaded with spill files next to it that are newer than it: the
    records of a later run, killed before it wrote its trace, which `load` would otherwise
    pass over in silence while the user takes the earlier run's trace for that run."""
    from llac.spill import is_spill_file, newer_spills
    notes = []
    for trace in traces:
        if trace.path == "-" or is_spill_file(trace.path):
            continue
        later = newer_spills(trace.path)
        if later:
            name = Path(trace.path).name
            files = ", ".join(f'"{path}"' for path in later)
            notes.append(Note(f"{name} is an earlier run's: spill files next to it are newer, the records of "
                              f"a later run killed before it wrote its trace; load {files} reads them",
                              warning=True))
    return notes


def _execution_of(path: Path) -> str | None:
    """The `#execution:` of a trace file's header (None when unreadable or absent)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.startswith("#") or line.startswith("#data"):
                    return None
                if line.startswith("#execution: "):
                    return line[len("#execution: "):].strip()
    except OSError:
        return None
    return None


def _merged_parts(members: list, programs: dict) -> list[tuple[list, str, str]]:
    """The (path, experiment) `members` of one name as the experiments to merge, each part with
    its program (`programs`: path -> the trace's `#program`) and its first file: one program's
    members merge when they share one formula (the runs for P = 1, 2, 4); a program whose
    files give the name several formulas keeps each file apart. Another program's are never
    merged with them."""
    by_program: dict[str, list] = {}
    for path, experiment in members:
        by_program.setdefault(programs[path], []).append((path, experiment))
    parts = []
    for program, kept in by_program.items():
        if len({str(e.formula) for _, e in kept}) == 1:
            parts.append(([e for _, e in kept], program, kept[0][0]))
        else:
            parts += [([e], program, path) for path, e in kept]
    return parts


def _once(members: list, warnings: list) -> list:
    """The (path, experiment) `members` of one name, less the records an earlier one holds (a
    copy of a trace, stdin and the file it came from, or a `.rank<r>` file of records the
    gathered trace holds too: `Experiment.identify`): left out with a warning, since merged
    they would count twice; a member left with no records is left out."""
    kept = []
    for path, experiment in members:
        twins = [p for p, e in kept if shared_records(e, experiment)]
        if not twins:
            kept.append((path, experiment))
            continue
        held = np.isin(experiment.ids, np.concatenate([e.ids for _, e in kept]))
        why = (f"the same run read twice, or a rank's own copy of records the gathered trace holds: "
               f"left out, they would count twice")
        if held.all():
            warnings.append(Note(f"{path}: its {experiment.name} holds the same records as {twins[0]}'s "
                                 f"({why})", warning=True))
            continue
        warnings.append(Note(f"{path}: {int(held.sum())} of its {len(experiment)} {experiment.name} records are "
                             f"in {' and '.join(twins)} already ({why})", warning=True))
        kept.append((path, experiment.select(~held)))
    return kept


def _held_already(session, members: list) -> list[Note]:
    """Warnings for the members whose records an experiment loaded before holds (loaded
    again, they get their own name: merged with it they would count twice)."""
    notes = []
    for path, experiment in members:
        held = next((n for n, o in session.objects.items()
                     if isinstance(o, Experiment) and shared_records(o, experiment)), None)
        if held is not None:
            notes.append(Note(f"{path}: its {experiment.name} holds records of {held} (loaded already from "
                              f"{session.objects[held].origin}): the same run read twice; merged they "
                              f"would count twice", warning=True))
    return notes


def store_supersteps(session, run, stored: dict | None = None) -> list[Note]:
    """Keep a PUB run's supersteps under its program's name and P, for `obsp PROGRAM`: those of
    the same execution as the ones kept there (a `.rank<r>` file of a rank the gathered trace
    lacks) are added to them, a gathered trace of another execution replaces them. `stored`:
    (program, experiment) -> the name the load gave it, so that the note names the sync
    experiment as the user now calls it (`f@fft_pub` when several programs have an `f`)."""
    runs = session.supersteps.setdefault(run.program, {})
    kept = runs.get(run.procs)
    where = f"{run.program} at P={run.procs}"
    notes = _store(session, run, runs, kept, where, stored)
    if run.execution and run.execution == runs[run.procs].execution:
        session.executions[(run.program, run.procs, run.execution)] = runs[run.procs]
    return notes


def _store(session, run, runs: dict, kept, where: str, stored: dict | None) -> list[Note]:
    """store_supersteps' work: `runs` (P -> supersteps of run.program) updated with `run`,
    and what the load says of it."""
    if kept is not None and same_execution(kept, run):
        held = {(s.run, s.rank) for s in kept.steps}
        if run.steps and all((s.run, s.rank) in held for s in run.steps):
            return [Note(f"{run.path}: its supersteps of {where} are held already (from {kept.path})")]
        try:    # a file without supersteps too: obsp then knows that its rank finished none
            runs[run.procs], doubles = combine(kept, run)
        except ValueError as err:
            return [Note(f"{run.path}: its supersteps are not added to those of {where}: {err}", warning=True)]
        if not run.steps:
            return [Note(finished_none(run))]
        ranks = ",".join(map(str, sorted({s.rank for s in run.steps if (s.run, s.rank) not in held})))
        return [*(Note(text, warning=True) for text in doubles),
                Note(f"added the supersteps of rank{'s' if ',' in ranks else ''} {ranks} from {run.path} to those "
                     f"of {where} (one execution): {len(runs[run.procs].steps)} records")]
    if kept is not None and run.origin is not None:
        return [Note(f"{run.path}: rank {run.origin}'s own supersteps are of another execution than those of "
                     f"{where} kept from {kept.path} (their #execution differs): they are left out", warning=True)]
    runs[run.procs] = run
    if not run.steps and run.origin is not None:
        return [Note(finished_none(run))]
    if not run.steps:
        return [Note(f"the trace of {where} holds no supersteps: they are recorded in the runs of a `sync` "
                     f"experiment (#pragma cll sync NAME ...), and it ran none", warning=True)]
    name = (stored or {}).get((run.program, run.runs_of[0]), run.runs_of[0]) if run.runs_of else run.program
    earlier = (f"; the experiments loaded from {kept.path} keep theirs" if kept is not None and kept.execution
               and run.execution else "")
    return [Note(f"{'replaced' if kept is not None else 'kept'} the supersteps of {where}: "
                 f"{len(run.steps)} records ({_evaluated_by(session, name, run)}){earlier}")]


def _evaluated_by(session, name: str, run) -> str:
    """Which obsp evaluates the supersteps `run` (a table of one P): `obsp NAME` (the sync
    experiment as loaded) when it holds records of runs at that P, else `obsp PROGRAM`, which
    evaluates the runs from their supersteps alone (or says why it cannot)."""
    experiment = session.objects.get(name)
    columns = experiment.columns if isinstance(experiment, Experiment) else {}
    if name == run.program or "run" not in columns or "P" not in columns or \
            np.any((columns["run"] > 0) & (columns["P"] == run.procs)):
        return f"obsp {name} evaluates them"
    return (f"obsp {run.program} evaluates them; {name} has no record of a run that ended at P={run.procs}, "
            f"the trace's status: {run.status}")


def _free_name(session, name: str, path, qualify: bool) -> str:
    """`name`, or `name@stem` (then `name@stem2`, ...) when taken or when asked to qualify;
    a stem that ends in a digit takes `_2`, `_3`: the third load of prog.cll.1.dat is
    `name@prog_cll_1_3`, not `name@prog_cll_13`, which reads as the trace of 13 processors."""
    if name not in session.objects and not qualify:
        return name
    stem = "".join(c if c.isalnum() else "_" for c in Path(str(path)).name.removesuffix(".dat"))
    counter = "_" if stem[-1:].isdigit() else ""
    candidate, n = f"{name}@{stem}", 2
    while candidate in session.objects:
        candidate, n = f"{name}@{stem}{counter}{n}", n + 1
    return candidate


def stdin_traces():
    """The traces on standard input, read as `<stdin>` (`load "-"`, or data piped to `llac -c`):
    several written one after another (`cat prog.cll.*.dat |`) are `<stdin>#1`, `<stdin>#2`, ...;
    raises TraceError when stdin is a terminal or holds no trace."""
    from llac.trace import TraceError, read_stream
    if sys.stdin is None or sys.stdin.isatty():
        raise TraceError('standard input is a terminal, not a trace: pipe a trace into llac to load "-"')
    return read_stream(STDIN, sys.stdin.buffer)


def _expand(statement: ast.Load, set_aside: list[str]) -> list[str]:
    """The files a load names: globs expanded (the traces call run set aside that they leave
    out go into `set_aside`), "-" (standard input) kept as it is, a missing trace with spill
    files next to it replaced by them."""
    from llac.spill import expand_with_spills
    from llac.trace import named_once
    return named_once([f for path in statement.paths
                       for f in (["-"] if path == "-" else expand_with_spills([path], set_aside))])


def _load_csv(session, statement: ast.Load, files):
    if len(files) != 1 or statement.formula is None or statement.name is None:
        raise LlacError('a CSV file is loaded alone, with a name and a formula: '
                        'load "data.csv" as f formula "f[0] + f[1]*N"')
    formula = checked_formula(statement.formula, statement.formula_span)
    from llac.commands.derive import refuse_measured_variables
    from llac.csvio import read_csv
    experiment, problems = read_csv(files[0], statement.formula)
    refuse_measured_variables(experiment, formula, statement)
    warnings = [Note(str(p), warning=True) for p in problems]
    name = _free_name(session, statement.name.text, files[0], False)
    if nothing := _nothing_to_fit(name, experiment, problems):
        warnings.append(Note(nothing, warning=True))
    return [*warnings, session.store(name, experiment)]


def _nothing_to_fit(name: str, experiment: Experiment, problems) -> str | None:
    """Why an experiment loaded from a CSV file has no record a fit can use (a file with a
    header row alone, rows that were all ignored, times that are all NaN, inf or not positive),
    said at the load rather than at the first fit; None when it has some."""
    if not len(experiment):
        why = ("its file has no data rows, only the header row" if not problems else
               "every data row of its file was ignored (the warnings above say why)")
        return f"{name} holds no records: {why}; there is nothing to fit"
    if not valid_times(experiment.columns["time"]).any():
        return f"{name} has no record a fit can use: {excluded_records(experiment)}"
    return None


def _is_model_file(path: str) -> bool:
    """A model written by `export`: a .json file, or any file whose text starts with `{` (a
    model exported under another name, `export m "m.model"`); traces start with `#`."""
    return Path(path).suffix.lower() == ".json" or _begins_with(path, b"{")


def _is_extrap_file(path: str) -> bool:
    """Extra-P's text input format (`export ... as extrap`): its first word is PARAMETER."""
    return _begins_with(path, b"PARAMETER")


def _begins_with(path: str, start: bytes) -> bool:
    """Whether the file at `path` (not standard input, which is read once) starts with
    `start` after blanks; False when it cannot be read (the reader then says why)."""
    if path == "-":
        return False
    try:
        with open(path, "rb") as f:
            return f.read(256).lstrip().startswith(start)
    except OSError:
        return False


def _load_extrap(session, statement: ast.Load, files):
    """Each REGION (and METRIC) of an Extra-P text file as an experiment with the constant
    formula NAME[0] (the format has none): `g = NAME formula "..."` gives it one."""
    if len(files) != 1 or statement.formula is not None:
        raise LlacError('an Extra-P text file is loaded alone, without a formula (it holds measurements '
                        'only): load "data.txt" [as NAME], then g = NAME formula "..."')
    from llac.extrap import read_extrap
    experiments = read_extrap(files[0])
    if statement.name and len(experiments) != 1:
        raise LlacError(f"'as NAME' names a single experiment, but this file holds {len(experiments)} regions")
    if statement.name:
        name = statement.name.text
        experiments = [experiments[0].replace(formula=parse_formula(f"{name}[0]", experiment=name))]
    stored = [session.store(_free_name(session, e.formula.name, files[0], False), e) for e in experiments]
    return [*stored, Note("Extra-P's format has no formulas: each experiment has the constant NAME[0]; "
                          "give it its own with g = NAME formula \"...\"")]


def _load_model(session, statement: ast.Load, files):
    """A model written by `export MODEL "FILE.json"`, under its exported name (or `as NAME`)."""
    if len(files) != 1 or statement.formula is not None:
        raise LlacError('a model file is loaded alone, without a formula: load "m.json" [as NAME]')
    from llac.modelio import read_model
    name, model = read_model(files[0])
    wanted = statement.name.text if statement.name else name
    other = _fitted_elsewhere(session, wanted, model)
    target = _free_name(session, wanted, Path(files[0]).with_suffix(""), other is not None)
    return [*([Note(other, warning=True)] if other else []), session.store(target, model)]


def _fitted_elsewhere(session, name: str, model) -> str | None:
    """Why a model loaded as `name` = EXPERIMENT.model must not take that name: the experiment
    of that name loaded here is not what the model was fitted on (another formula, other
    sample points or another number of records), so `predict EXPERIMENT` would use a model of
    other data; None when it is or when there is none."""
    experiment = session.objects.get(name.removesuffix(".model")) if name.endswith(".model") else None
    if not isinstance(experiment, Experiment):
        return None
    if str(experiment.formula) != str(model.formula):
        why = f"its formula is {model.formula}, the experiment's {experiment.formula}"
    else:
        points = {v: model.sample_points[v] for v in model.formula.variables}
        mine = {tuple(row) for row in np.column_stack([experiment.columns[v] for v in points] or [[0.0]])}
        theirs = {tuple(row) for row in np.column_stack(list(points.values()) or [[0.0]])}
        if mine == theirs and int(model.sample_points["count"].sum()) + model.excluded == len(experiment):
            return None
        why = "its sample points are not the experiment's"
    return (f"the model in this file was not fitted on the experiment {experiment.name} loaded here ({why}): "
            f"kept under another name, so that `predict {experiment.name}` does not use it")


@command("list", "list", """List the objects: name, kind, records and formula; and the
         programs whose supersteps `obsp` evaluates.""", ["list"], ast.List)
def list_objects(session, statement):
    rows = []
    for name, obj in session.objects.items():
        if isinstance(obj, Experiment):
            rows.append((name, "experiment", len(obj), str(obj.formula)))
        else:
            rows.append((name, "model", int(obj.sample_points["count"].sum()), str(obj.formula)))
    steps = [Note(f"supersteps of {program} (obsp {program}): P = {', '.join(map(str, sorted(runs)))}")
             for program, runs in session.supersteps.items()]
    if not rows:
        return steps or [Note("no objects yet: use load")]
    return [Table("objects", ("name", "kind", "records", "formula"), tuple(rows)), *steps]


@command("show", "show NAME [limit N]", f"""Show an experiment's records as a table (the first
         {SHOW_LIMIT} unless a limit is given); of a model, its intervals, constants, errors and
         warnings.""", ["show colinit", "show colinit limit 100", "show colinit.model"], ast.Show)
def show(session, statement: ast.Show):
    if model := _model(session, statement.obj):
        return [ModelReport(statement.obj.text, model)]
    experiment = session.experiment(statement.obj)
    limit = SHOW_LIMIT if statement.limit is None else statement.limit
    names = experiment.column_names
    rows = tuple(zip(*(experiment.columns[c][:limit] for c in names)))
    footer = (f"{min(limit, len(experiment))} of {len(experiment)} records",)
    return [Table(experiment.name, names, rows, footer)]


@command("describe", "describe NAME", """Summarise an experiment: formula, origin, each
         column's range, the sample points and their repetitions, the trace header (less its
         records and columns, which the lines above count as the experiment holds them), then a
         table of the sample points (the first 20) with their repetitions and spread: how much
         slower the typical repetition is than the fastest, (median - min) / min, with the
         noisy points marked and the median spread and the noisiest points below; of a model,
         as `show`: its intervals, constants, errors and warnings. Of an experiment merged
         from several trace files (a sweep over P), the header fields the files agree on,
         and a table of the files with the records read from each and the fields that
         differ (procs, date, ...). Like a fit, it counts only the records whose time is a
         positive finite number: the others (NaN, inf, 0, negative) are left out of the ranges,
         repetitions and spreads, and a line counts them and names any sample point left with
         none (when no record is left at all, the line says so and there are no sample points
         to name).""",
         ["describe colinit", "describe colinit.model"], ast.Describe)
def describe(session, statement: ast.Describe):
    if model := _model(session, statement.obj):
        return [ModelReport(statement.obj.text, model)]
    experiment = session.experiment(statement.obj)
    # every figure is of the records a fit uses; the others are counted as the fit counts them
    used = valid_times(experiment.columns["time"]) if len(experiment) else np.zeros(0, dtype=bool)
    rows = tuple((c, float(np.nanmin(v[used])), float(np.nanmax(v[used])), len(np.unique(v[used])))
                 for c, v in experiment.columns.items() if used.any())
    points, counts = repetitions(experiment)
    left_out, kept = excluded_records(experiment), int(used.sum())
    footer = [f"formula: {experiment.formula}", f"origin: {experiment.origin or '-'}",
              f"{kept} record{'s' * (kept != 1)} at {len(counts)} sample "
              f"point{'s' * (len(counts) != 1)}; repetitions per point: "
              + (f"{counts.min()}..{counts.max()}" if len(counts) else "-")
              + (f" (of {len(experiment)} records)" if left_out else ""),
              *([f"{left_out} (as in a fit: the figures here are of the other {kept})"] if left_out else [])]
    if not experiment.sources:      # the records and columns are counted above, as they are now
        footer += [f"{'trace formula' if k == 'formula' else k}: {v}" for k, v in experiment.header.items()
                   if k not in ("records", "columns") and not (k == "formula" and v == str(experiment.formula))]
        files = []
    else:
        agreed, files = _sources_table(experiment)
        footer += [f"merged from {len(experiment.sources)} trace files (table below); the header fields they all "
                   f"agree on:", *agreed]
    tables = [Table(experiment.name, ("column", "min", "max", "distinct"), rows, tuple(footer)), *files]
    return tables + ([_spread_table(experiment, points, counts)] if len(counts) else [])


def _sources_table(experiment: Experiment) -> tuple[list[str], list[Table]]:
    """describe of an experiment merged from several files: the header fields (`key: value`)
    every file agrees on, and a table of the files with the records read from each and the
    fields that differ; the first file's header alone would pass for the whole's (its
    `procs: 1` and `records: 0` under the sweep's records). The declared `records:` is left
    out: the table counts what was read."""
    headers = [source.header for source in experiment.sources]
    agreed = {k: v for k, v in agreed_fields(headers).items() if k != "records"}
    differ = [k for k in dict.fromkeys(k for h in headers for k in h) if k not in agreed and k != "records"]
    rows = tuple((source.origin or "-", source.records, *(source.header.get(k) for k in differ))
                 for source in experiment.sources)
    read = sum(source.records for source in experiment.sources)
    made = ("" if read == len(experiment) else
            f"; {experiment.name} holds {len(experiment)} records made from those {read} (an aggregate)")
    return ([f"{k}: {v}" for k, v in agreed.items()],
            [Table(f"{experiment.name}: trace files", ("file", "records", *differ), rows,
                   (f"records = how many of its records were read from the file{made}",))])


def _spread_table(experiment: Experiment, points: dict, counts: np.ndarray) -> Table:
    """describe's table of the sample points: variables, repetitions, spread, noisy mark
    (the first SHOW_LIMIT), with the noise summary below (`llac.noise`)."""
    spread = point_spread(points, experiment.columns)
    marked = noisy(spread)
    shown = min(len(counts), SHOW_LIMIT)
    rows = tuple((*(points[v][i] for v in points), counts[i],
                  Percent(spread[i], 1), "noisy" if marked[i] else "")       # NaN: '-', null
                 for i in range(shown))
    footer = ([f"first {shown} of {len(counts)} sample points"] if shown < len(counts) else []) \
        + spread_summary(points, spread)
    headers = (*points, "repetitions", "spread", "noisy")
    machine = (headers, tuple((*row[:-1], bool(marked[i])) for i, row in enumerate(rows)))   # noisy: true/false
    return Table(f"{experiment.name}: sample points", headers, rows, tuple(footer), machine)


def _model(session, name: ast.Name):
    """The model called `name` (show and describe reprint it), or None for an experiment."""
    obj = session.get(name)
    return None if isinstance(obj, Experiment) else obj


@command("rename", "rename OLD NEW", """Give an object a new name (NEW must be free); an
         experiment's model (OLD.model) goes with it, as NEW.model.""",
         ["rename colinit c"], ast.Rename)
def rename(session, statement: ast.Rename):
    obj = session.get(statement.old)
    old, new = statement.old.text, statement.new.text
    if new in session.objects:
        raise LlacError(f"{new!r} is already in use; delete it first", statement.new.span)
    model = session.objects.get(f"{old}.model") if isinstance(obj, Experiment) else None
    notes = [session.store(new, obj, f"renamed {old} to")]  # may refuse the name
    del session.objects[old]
    if model is not None:
        del session.objects[f"{old}.model"]
        notes.append(session.store(f"{new}.model", dataclasses.replace(model, name=new), f"renamed {old}.model to"))
    return notes


@command("delete", "delete NAME [, NAME ...]", "Forget objects.", ["delete small, big"], ast.Delete)
def delete(session, statement: ast.Delete):
    seen = set()
    for name in statement.objs:
        session.get(name)
        if name.text in seen:
            raise LlacError(f"{name.text} is named twice", name.span)
        seen.add(name.text)
    for name in statement.objs:
        session.objects.pop(name.text, None)
    return [Note(f"deleted {', '.join(n.text for n in statement.objs)}")]


def refuse_overwrite(path: str, replace: bool, again: str, example: str = "out.json") -> None:
    """An error before writing `path` when its folder does not exist (cll_grammar.outputs),
    when it is a folder (suggesting the file `example` in it), or when it exists and `replace`
    was not given (saying the statement `again` with `replace` that would overwrite it)."""
    if problem := missing_folder(path):
        raise LlacError(f"cannot write {path!r}: {problem}")
    if os.path.isdir(path):
        raise LlacError(f"{path!r} is a folder: name a file in it, e.g. {os.path.join(path, example)!r}")
    if not replace and os.path.lexists(path):
        raise LlacError(f"{path!r} exists; to overwrite it: {again} replace")


@command("export", 'export NAME "FILE" [as csv|extrap|json] [replace]', """Write an
         experiment to a file: CSV (the default for .csv files) or Extra-P's text input format
         (`as extrap`); or a model as JSON (formula, intervals, constants, settings, errors,
         sample points), which `load` reads back. An existing file is left alone unless
         `replace` is given; the file's folder must exist (docs/call.md, Files you name).""",
         ['export colinit "colinit.csv"', 'export colinit "colinit.txt" as extrap',
          'export colinit.model "colinit.json"', 'export colinit "colinit.csv" replace'], ast.Export)
def export(session, statement: ast.Export):
    model = _model(session, statement.obj)
    experiment = None if model else session.experiment(statement.obj)
    written = "json" if model else statement.format.text if statement.format else "csv"
    refuse_overwrite(statement.path, statement.replace, f'export {statement.obj.text} "{statement.path}"' + (
        f" as {statement.format.text}" if statement.format else ""),
        f"{statement.obj.text}.{EXPORT_SUFFIXES.get(written, written)}")
    if model:
        return _export_model(statement, model)
    fmt = statement.format.text if statement.format else Path(statement.path).suffix.lstrip(".").lower()
    if fmt not in EXPORT_FORMATS:
        where = statement.format.span if statement.format else None
        raise LlacError(f"say which format to write: as {' or as '.join(EXPORT_FORMATS)}"
                        + (f" (not {fmt!r})" if statement.format else "")
                        + (f"; json is for models, e.g. export {statement.obj.text}.model"
                           if fmt == "json" else ""), where)
    try:
        if fmt == "csv":
            from llac.csvio import write_csv
            write_csv(experiment, statement.path)
        else:
            from llac.extrap import write_extrap
            write_extrap(experiment, statement.path)
    except OSError as err:
        raise LlacError(f"cannot write {statement.path!r}: {err.strerror or err}") from None
    return [Note(f"wrote {len(experiment)} records of {experiment.name} to {statement.path} ({fmt})")]


def _export_model(statement: ast.Export, model) -> list:
    """Write a model as JSON (the only format a model has)."""
    if statement.format is not None and statement.format.text != "json":
        raise LlacError(f"a model is written as json, not {statement.format.text!r}", statement.format.span)
    from llac.modelio import write_model
    try:
        write_model(model, statement.obj.text, statement.path)
    except OSError as err:
        raise LlacError(f"cannot write {statement.path!r}: {err.strerror or err}") from None
    return [Note(f"wrote the model {statement.obj.text} ({model.formula}, {len(model.pieces)} "
                 f"interval{'s' * (len(model.pieces) != 1)}) to {statement.path} (json)")]
