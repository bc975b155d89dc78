"""Commands that fit and use models: set, fit, drop, predict, plot."""
from __future__ import annotations

import dataclasses
import itertools
import math
import os
import sys

import numpy as np

from cll_grammar.outputs import missing_folder
from cll_grammar.span import suggest
from llac import ast
from llac.commands import command
from llac.commands.results import Exact, ModelReport, Note, Percent, Produced, Table, Text
from llac.errors import LlacError
from llac.experiment import Experiment
from llac.parse import MAX_RANGE
from llac.render import region_text
from llac.tables import aggregate_experiment
from llac.numbers import number_text

# the one sign convention of every error llac prints (predict, Table 3), stated with the table
ERROR_SIGN = "error = (predicted - measured) / measured"
SECONDS = "[s]"
# `try: drop` is suggested when the refit's median relative error is at most this times the model's
# (and `drop` warns above it)
DROP_TOLERANCE = 1.2


@command("set", "set [SETTING VALUE]", """Show the fitting settings, or change one:
         threshold (relative error under which an interval is not split, e.g. 5%),
         maxintervals (most intervals per variable), minpoints (fewest distinct points per
         interval, 0 = automatic: the formula's constants + 1, which a smaller value is raised to), alpha (significance level of the split test and of prediction
         intervals), aggregate (median, min or mean of repetitions), split (on or off), prune
         (on or off: set constants that are not significant to 0 in each interval and refit
         the others), constants (nonnegative or free: whether constants of non-negative terms
         may be fitted negative), trend (off or on: on, a time per unit of work that rises
         significantly through the last interval keeps rising beyond the data; off, the
         default, the interval's constants hold there), seed, bootstrap (replicates of the
         split test), maxpieces. alpha must be above 1/(bootstrap+1), the split test's smallest p-value: a pair that could
         never accept a cut is refused (docs/method.md §8). A fit that the interval budget
         (maxintervals, maxpieces) stopped says so and names the cut it kept out. Models
         already fitted keep their settings.""",
         ["set", "set threshold 5%", "set split off", "set aggregate min", "set constants free", "set trend on"], ast.Set)
def set_(session, statement: ast.Set):
    if statement.setting is not None:
        value = session.change_setting(statement.setting, statement.value, statement.value_span)
        return [Note(f"{statement.setting.text} = {_setting_text(value)}")]
    settings = session.fit_settings()
    rows = tuple((f.name, _setting_value(getattr(settings, f.name)),
                  "changed" if f.name in session.changed_settings else "default")
                 for f in dataclasses.fields(settings))
    return [Table("settings", ("setting", "value", "state"), rows)]


def _setting_value(value):
    """A setting's value in the settings table: on/off for a switch, the value otherwise (a
    number stays a number for `llac --format json|csv`)."""
    return _setting_text(value) if isinstance(value, (bool, str)) else value


def _setting_text(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def fitted(session, experiment: Experiment):
    """Fit `experiment` with the session's settings; FitError becomes one clear LlacError."""
    from llac.model import FitError, fit_experiment
    try:
        return fit_experiment(experiment, session.fit_settings())
    except FitError as err:
        reason = f"cannot fit {experiment.name}: {err}"
        cure = (f"; `drop {experiment.name} {', '.join(err.cure)}` fits the formula without "
                f"{'it' if len(err.cure) == 1 else 'them'}") if err.cure else ""
        raise Unfittable(reason + cure, reason) from None


class Unfittable(LlacError):
    """An experiment whose formula cannot be fitted to its data (`drop` can still fit a smaller
    one); `reason` is the message without the `drop` that would cure it."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def model_for(session, name: ast.Name, count_warnings: bool = True):
    """The model called `name`, or the model of experiment `name` (fitted now with the current
    settings if it has none, which is said in a note, with how many warnings that fit gave
    unless `count_warnings` is off: `report` has a column for them). Returns (model, notes)."""
    obj = session.get(name)
    if not isinstance(obj, Experiment):
        return obj, []
    key = f"{name.text}.model"
    if key in session.objects:
        return session.objects[key], []
    model = fitted(session, obj)
    note = session.store(key, model)
    count = len(model.warnings) if count_warnings else 0
    warned = [Note(f"the fit of {name.text} gave {count} warning{'s' * (count != 1)}: `fit {name.text}` "
                   f"shows {'them' if count != 1 else 'it'}")] if count else []
    return model, [Note(f"{name.text} had no model: fitted it with the current settings; {note.text}"), *warned]


@command("fit", "fit EXPERIMENT  |  fit  |  NAME = fit EXPERIMENT", """Fit the experiment's formula by
         relative least squares and split its domain into intervals where the constants differ
         (see `help set`). Shows each constant with its standard error per interval (the sets
         ℵ), the cuts with their test figures, relative errors, R², warnings and insignificant
         constants; `try: drop` appears only when dropping them does not make the fit worse.
         A line names the noisy sample points (repetitions that vary more than 5 times the
         typical spread, `help describe`), and a warning says when the typical spread is above
         the threshold: splitting then cannot tell a regime change from noise. The model is called EXPERIMENT.model unless named. `fit` alone fits every experiment
         loaded, with a compact report each; one that cannot be fitted is a warning, and when
         none can be, an error that gives each one's reason.""",
         ["fit colinit", "m = fit colinit", "fit"], ast.Fit, ast.FitAll)
def fit(session, source):
    if isinstance(source, ast.FitAll):
        return _fit_all(session)
    experiment = session.experiment(source.obj)
    model = fitted(session, experiment)
    return Produced(model, (ModelReport(source.obj.text, model, droppable(model, experiment)),
                            *_memory_notes(model), *_oversubscribed_notes(experiment, model)))


def _oversubscribed_notes(experiment: Experiment, model) -> tuple:
    """A warning when fitted runs had more processes (P) than their host's cores: their times
    are not those of P processors, and the fit takes them as such."""
    from llac.cores import cores_of, oversubscription_note
    if "P" not in model.formula.variables or experiment.mixed_machines:
        return ()
    cores, _ = cores_of(experiment)
    procs = model.sample_points["P"]
    if cores is None or not np.any(procs > cores):
        return ()
    return (Note(f"{oversubscription_note(procs, experiment, 'P')}; the fit takes them as such: "
                 f"`where P <= {cores}` fits the runs on dedicated cores", warning=True),)


def _memory_notes(model) -> tuple:
    """Where the fitted working sets lie among the machine's cache levels (a model whose
    experiment states its working set), or why that cannot be said."""
    from llac.cache_aware import fit_note, memory_view
    view, reason = memory_view(model)
    if view is None:
        return (Note(reason),) if reason else ()
    return (Note(fit_note(model, view)),)


def _fit_all(session) -> list:
    """Fit every experiment (a failure is a warning, the others are still fitted)."""
    experiments = [o for o in session.objects.values() if isinstance(o, Experiment)]
    if not experiments:
        raise LlacError("no experiments to fit: load a trace first (or pipe one into llac -c)")
    results, failures = [], []
    for experiment in experiments:
        try:
            model = fitted(session, experiment)
        except LlacError as err:
            failures.append(err.message)
            results.append(Note(err.message, warning=True))
            continue
        results.append(ModelReport(experiment.name, model, droppable(model, experiment), compact=True))
        results.append(session.store(f"{experiment.name}.model", model))
    if len(failures) == len(experiments):
        raise LlacError(nothing_fitted(failures))
    return results


def nothing_fitted(failures: list[str]) -> str:
    """The error of `fit` alone and of `report` when not one experiment could be fitted: each
    one's reason, so that a script stops (exit 1) instead of going on without a model."""
    return (f"no experiment could be fitted ({len(failures)} tried): " + "; ".join(failures))


def droppable(model, experiment: Experiment) -> tuple[str, ...]:
    """The constants worth dropping: not significant (p > alpha) or held at 0 in every interval, and the refit
    without them has a median relative error at most DROP_TOLERANCE times the model's (a term
    below the noise moves the error by a little either way). A constant that is insignificant
    in one interval only can carry the fit elsewhere (issue 8, item 7)."""
    from llac.model import FitError, fit_experiment
    names = [name for i, name in enumerate(model.formula.constants)
             if all(p.pvalues[i] > model.settings.alpha or name in p.at_bound for p in model.pieces)]
    if not names or len(names) == len(model.formula.constants) or experiment.formula != model.formula:
        return ()
    try:
        refit = fit_experiment(experiment.replace(formula=model.formula.without(_indices(names))),
                               model.settings)
    except FitError:
        return ()
    return tuple(names) if error_at_points(refit, model) <= DROP_TOLERANCE * error_at_points(model, model) else ()


def error_at_points(model, reference) -> float:
    """The median relative error |predicted - measured| / measured of `model` at the sample
    points of `reference`. A drop is judged at the full model's points: a formula that lost a
    variable has fewer, coarser points of its own (one, without variables), where its error
    would look small."""
    data = reference.sample_points
    predicted = model.predict({v: data[v] for v in model.formula.variables}).values
    predicted = np.broadcast_to(predicted, data["time"].shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.median(np.abs(predicted - data["time"]) / data["time"]))


def _indices(constants) -> list[int]:
    """'f[2]' -> 2 for each constant name."""
    return [int(c.rsplit("[", 1)[1].rstrip("]")) for c in constants]


@command("drop", "drop NAME [CONST, ...]", """Refit without some constants: the formula loses
         those terms. Without constants it drops the ones `fit` suggested (insignificant in every
         interval, and the fit is no worse without them). The median relative error before and
         after is printed, with a warning when the fit got worse. NAME is an experiment or a
         model; the result replaces EXPERIMENT.model (a model kept under another name, `m = fit
         colinit`: that name) unless named. An experiment whose whole
         formula cannot be fitted (a term that is 0 at every sample point, as log(P) in runs at
         P = 1 only, or terms that cannot be told apart) loses the named constants all the
         same: the message of `fit` names them.""",
         ["drop colinit colinit[0]", "drop colinit", "m2 = drop m colinit[1]", "drop f1 f[1], f[3]"], ast.Drop)
def drop(session, source: ast.Drop):
    try:
        model, notes = model_for(session, source.obj)
    except Unfittable as failure:
        if not source.constants:
            raise
        model, notes = None, [Note(failure.reason)]
    name = model.name if model else source.obj.text
    if not isinstance(session.objects.get(name), Experiment):
        raise LlacError(f"drop refits the experiment {name}, which is not loaded (a model "
                        f"read from a file keeps its sample points, not the records): load its "
                        f"trace, then drop on its model", source.obj.span)
    experiment = session.experiment(ast.Name(name, source.obj.span))
    formula = experiment.formula if model is None else model.formula
    named = set()
    for name, index in source.constants:
        if f"{name.text}[{index}]" not in formula.constants:
            raise LlacError(f"{name.text}[{index}] is not a constant of {formula}", name.span)
        if index in named:
            raise LlacError(f"{name.text}[{index}] is named twice", name.span)
        named.add(index)
    indices = [index for _, index in source.constants]
    if not source.constants:
        indices = _indices(droppable(model, experiment.replace(formula=formula)))
        if not indices:
            raise LlacError(f"no constant of {model.name}'s model can be dropped without making "
                            f"the fit worse (or none is insignificant in every interval); name the "
                            f"ones to drop, e.g. drop {source.obj.text} {formula.constants[0]}")
    from cll_grammar.formula import FormulaError
    try:
        reduced = formula.without(indices)
    except FormulaError as err:
        raise LlacError(f"cannot drop every constant: {err.message}") from None
    refit = fitted(session, experiment.replace(formula=reduced))
    dropped = ", ".join(f"{formula.name}[{i}]" for i in indices)
    if model is None:
        return Produced(refit, (*notes, Note(f"dropped {dropped}: median relative error "
                                             f"{error_at_points(refit, refit):.2%}"), ModelReport(name, refit)))
    before, after = error_at_points(model, model), error_at_points(refit, model)
    change = [Note(f"dropped {dropped}: median relative error {before:.2%} -> {after:.2%}")]
    if after > DROP_TOLERANCE * before:
        change.append(Note(f"dropping {dropped} made the fit worse (median relative error "
                           f"{before:.2%} -> {after:.2%}); `fit {model.name}` fits the full "
                           f"formula again", warning=True))
    return Produced(refit, (*notes, *change, ModelReport(model.name, refit)))


@command("suggest", "suggest EXPERIMENT", """Rank canonical formulas by how well they predict the
         experiment's largest sample points: each is fitted with the current settings on all but
         the largest quarter of the points (at least 2 held out) and judged by its median
         |error| there. The candidates are Extra-P's normal form, c0 + c1*N^i*log(N)^j (i from 0
         to 3, j from 0 to 2) and c0 + c1*N + c2*N^i*log(N)^j for one variable, products and
         sums of such factors for several. The table shows the best 8 and the experiment's own
         formula (marked), with the median |error| in range and the intervals of the fit on
         every point, and the command that applies the best. Candidates with equal held-out
         errors are tied (marked, the simplest first; none is the best); a variable with too
         few values to tell its terms apart (P measured at 1 and 2 only) is named. Each formula
         also predicts at 4x the largest value of every variable, and a line says how far apart
         there the formulas within 2x the best's held-out error are: the ranking cannot tell
         those apart, and beyond the data they may disagree.""",
         ["suggest colinit"], ast.Suggest)
def suggest_(session, statement: ast.Suggest):
    from llac.suggest import BEYOND, FitError, suggest
    experiment = session.experiment(statement.obj)
    try:
        found = suggest(experiment, session.fit_settings())
    except FitError as err:
        raise LlacError(f"cannot suggest a formula for {experiment.name}: {err}", statement.obj.span) from None
    rows = tuple((r.rank, r.formula, 100 * r.held_out, 100 * r.in_range, r.intervals, r.beyond,
                  f"{r.tied[0]}-{r.tied[1]}" if r.tied else "", "yours" if r.yours else "") for r in found.ranked)
    first = found.ranked[0]
    far = ", ".join(f"{v}={number_text(x)}" for v, x in found.beyond)
    apply = f'{experiment.name}_best = {statement.obj.text} formula "{first.formula}"'
    footer = (f"held out: the {found.held_points} largest sample points; fitted on the other "
              f"{found.fitted_points}; |error| = |predicted - measured| / measured, median",
              *([f"{found.failed} candidates could not be fitted to these points"] if found.failed else []),
              *(f"{v} has {len(values)} value{'s' * (len(values) != 1)} ({', '.join(f'{number_text(u)}' for u in values)}): "
                f"formulas that differ only in {v}'s terms are tied (through {len(values)} point{'s' * (len(values) != 1)} "
                f"any term in {v} fits like another, unless a constant is held at its bound 0); measure "
                f"more {v} to tell them apart"
                for v, values in found.scarce),
              *(["tied: the ranks of the formulas with equal held-out errors, which the ranking cannot tell "
                 "apart; the simplest is listed first"] if any(r.tied for r in found.ranked) else []),
              *_beyond_note(found, far),
              f"apply the simplest of the tied best (ranks {first.tied[0]}-{first.tied[1]}, none better than "
              f"the others): {apply}" if first.tied else f"apply the best: {apply}")
    return [Table(f"formulas for {experiment.name}, best predictions of its largest points first",
                  ("rank", "formula", "held-out |error| %", "in-range |error| %", "intervals", f"at {BEYOND:g}x [s]",
                   "tied", "note"), rows, footer)]


def _beyond_note(found, far: str) -> list[str]:
    """One line on how far apart, at `far` (BEYOND times every variable's largest value), the
    formulas are that predict the held-out points about as well as the best: the ranking
    cannot tell those apart, yet they can part far beyond the data."""
    from llac.suggest import AGREE, BEYOND, NEAR, near_best
    near = near_best(found)
    if len(near) < 2:
        return []
    low, high = min(near), max(near)
    mine = next((r.beyond for r in found.ranked if r.yours), float("nan"))
    yours = f"; yours {mine:.4g} s" if np.isfinite(mine) else ""
    where = (f"at {far} ({BEYOND:g}x the largest measured) the {len(near)} formulas whose held-out |error| "
             f"is within {NEAR:g}x the best's predict {low:.4g} to {high:.4g} s")
    if high <= AGREE * low:
        return [f"{where}: they agree within {high / low - 1:.0%}{yours}"]
    return [f"{where} ({high / low:.2f}x apart){yours}: the held-out points do not decide between them "
            f"that far out; measure larger sizes before trusting any there"]


@command("predict", "predict [NAME [VAR=VALUES ...] [on MACHINE] [with g=G, L=L]]  |  predict NAME at EXPERIMENT [on MACHINE]", """Predict
         times with the model of NAME (fitted first if needed). VALUES is a number, a list
         `1,2,4` (no thousands separators: `1,000` is refused), a range `1024..65536 *2`
         (multiply) or `100..1000 step 100` (`100..1000` alone: step 1), its values worked
         out in decimal (`0.1..1 step 0.1` is 0.1, 0.2, ..., 1, never past the end); several
         variables give every combination, at most 100,000 points. With no values: at the fitted sample points, against
         the measurements. `predict` alone: the last model fitted, at its sample points. `at
         EXPERIMENT`: at that experiment's sample points, with the measured time (aggregated as in the fit);
         `at EXPERIMENT by VAR`: the CALL paper's Table 3 layout (help table3). Times are in
         seconds; error = (predicted - measured) / measured. Each row says which
         interval was used, the prediction interval, and flags extrapolation beyond the
         measured range; beyond the data the interval widens by what backtests show, and its
         low end is not below a time measured where every term of the formula is smaller,
         less the fit's noise (docs/method.md §6). When the experiment states its working set (the pragma's `bytes`
         clause) and its machine was probed (`call probe`), a machine-aware prediction, its
         error and the working set's cache level stand beside the plain one, with a warning
         where the working set leaves every level the fitted points reached and a note where
         it is larger than any the probe measured (`call probe --largest`); `on MACHINE`
         predicts for another machine of the database. For an experiment whose records moved
         data (MPI, h > 0), `with g=G, L=L` (seconds per byte, seconds) and `on MACHINE` read
         the constant term as L and the others as g times bytes and predict with the new g
         and L, for one P (D2 = D where P == 2, when D's formula has no P: docs/machine.md).""",
         ["predict colinit N=8192", "predict colinit N=1024..65536 *2", "predict triad N=1e7 on vm@loaded",
          "predict D2 size=65536 with g=2e-9, L=5e-6",
          "predict fft N=4096 P=1,2,4,8", "predict colinit at big", "predict colinit", "predict"],
         ast.Predict, ast.PredictAt, ast.PredictLast)
def predict(session, statement):
    if isinstance(statement, ast.PredictLast):
        if session.last_model is None:
            raise LlacError("no model to predict with yet: fit an experiment first "
                            "(or name one: predict NAME)")
        if session.last_model not in session.objects:
            raise LlacError(f"the last model made, {session.last_model}, is gone (deleted): "
                            f"name one, predict NAME")
        statement = ast.Predict(ast.Name(session.last_model, statement.span), span=statement.span)
    # the data first: a statement refused for an unknown name leaves no model fitted behind
    experiment = session.experiment(statement.data) if isinstance(statement, ast.PredictAt) else None
    model, notes = model_for(session, statement.obj)
    if experiment is not None:
        missing = [v for v in model.formula.variables if v not in experiment.columns]
        if missing:
            raise LlacError(f"{statement.data.text} has no column {missing[0]!r}, which the "
                            f"formula {model.formula} needs", statement.data.span)
        # grouped by the model's variables: the experiment's own formula may not use them all
        data = aggregate_experiment(experiment.replace(formula=model.formula), model.settings.aggregate,
                                    statement.data.span)
        points = {v: data.columns[v] for v in model.formula.variables}
        return [*notes, *across_note(session, model, experiment),
                _prediction_table(model, points, data.columns["time"], statement.machine)]
    if not statement.points:
        points = {v: model.sample_points[v] for v in model.formula.variables}
        return [*notes, _prediction_table(model, points, model.sample_points["time"], statement.machine,
                                          statement.parameters)]
    return [*notes, _prediction_table(model, _grid(model, statement.points), None, statement.machine,
                                      statement.parameters)]


def across_note(session, model, experiment: Experiment) -> list[Note]:
    """A note when `predict MODEL at EXPERIMENT` compares the model with the times of another
    experiment (another declaration in its trace, not a subset or a reformulation of the
    model's own; for a model whose experiment is gone, another formula): the errors then say
    how well one experiment predicts another, easily taken for the model's own accuracy."""
    own = session.objects.get(model.name)
    program = experiment.header.get("program")
    if isinstance(own, Experiment):
        same = own.header.get("experiment", own.name) == experiment.header.get("experiment", experiment.name)
        other_program = own.header.get("program") != program
    else:
        same, other_program = str(model.formula) == str(experiment.formula), False
    if same and not other_program:
        return []
    what = f"an experiment of another program ({program})" if other_program and program else "another experiment"
    return [Note(f"the model of {model.name} ({model.formula}) is compared with the times of "
                 f"{experiment.name}, {what} ({experiment.formula}): the errors say how well "
                 f"{model.name}'s model predicts {experiment.name}")]


# the most points one `predict` evaluates: as many as one range may give. 100,000 rows take
# about 3 s and some 10 MB; a product of ranges (10^5 x 10^5) would need terabytes
MAX_POINTS = MAX_RANGE


def _grid(model, points) -> dict[str, np.ndarray]:
    """Every combination of the given values; all the formula's variables must be given."""
    given = {}
    for point in points:
        if point.var.text not in model.formula.variables:
            raise LlacError(f"the formula {model.formula} has no variable {point.var.text!r}"
                            f"{suggest(point.var.text, model.formula.variables)}", point.var.span)
        if point.var.text in given:
            raise LlacError(f"{point.var.text} is given twice", point.var.span)
        given[point.var.text] = point.values
    missing = [v for v in model.formula.variables if v not in given]
    if missing:
        raise LlacError(f"give a value for {', '.join(missing)} too (the formula is {model.formula})")
    sizes = [len(given[v]) for v in model.formula.variables]
    if math.prod(sizes) > MAX_POINTS:
        raise LlacError(f"{' x '.join(f'{n:,}' for n in sizes)} = {math.prod(sizes):,} points to predict: "
                        f"at most {MAX_POINTS:,} at once (the most one range may give); take fewer "
                        f"values, e.g. a range with *F or a larger step")
    combos = list(itertools.product(*(given[v] for v in model.formula.variables)))
    return {v: np.array([c[i] for c in combos]) for i, v in enumerate(model.formula.variables)}


def _prediction_table(model, points: dict, measured=None, machine: ast.Name | None = None,
                      parameters=()) -> Table:
    """Table-3 style rows: inputs, [measured], predicted, interval, [error %], [the
    machine-aware prediction, its error and the working set's cache level], piece, flags."""
    prediction = model.predict(points)
    aware, aware_notes, aware_name = _aware(model, points, prediction, machine, parameters)
    variables = list(points)
    headers = [*variables, *([f"measured {SECONDS}"] if measured is not None else []),
               f"predicted {SECONDS}", f"low {SECONDS}", f"high {SECONDS}",
               *(["error %"] if measured is not None else []),
               *([f"{aware_name} {SECONDS}", *(["error %"] if measured is not None else []),
                  *(["level"] if aware[1] is not None else [])] if aware is not None else []), "interval"]
    rows = []
    for i in range(len(prediction.values)):
        row = [Exact(points[v][i]) for v in variables]      # the values asked for, never rounded
        if measured is not None:
            row.append(measured[i])
        row += [prediction.values[i], prediction.lower[i], prediction.upper[i]]
        if measured is not None:
            row.append(100 * (prediction.values[i] - measured[i]) / measured[i])
        if aware is not None:
            row.append(aware[0][i])
            if measured is not None:
                row.append(100 * (aware[0][i] - measured[i]) / measured[i])
            if aware[1] is not None:
                row.append(aware[1][i])
        piece = int(prediction.piece[i])
        row.append(("-" if piece < 0 else str(piece + 1)) + (" extrapolated" if prediction.extrapolated[i] else ""))
        # a value that does not exist (no interval, no prediction: nan) is None, shown '-' in text,
        # empty in CSV, null in JSON (docs/llac-language.md)
        rows.append(tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row))
    footer = [f"interval {i + 1}: {region_text(p.region)}" for i, p in enumerate(model.pieces)]
    if measured is not None and len(rows):
        errors = np.abs(prediction.values - measured) / measured * 100
        footer.append(f"measured = the {model.settings.aggregate} of each sample point's repetitions, "
                      f"as in the fit")
        footer.append(f"{ERROR_SIGN}; |error|: {error_summary(errors)}")
        if aware is not None:
            errors = np.abs(aware[0] - measured) / measured * 100
            footer.append(f"{aware_name}: |error| {error_summary(errors)}")
    footer += list(prediction.notes) + aware_notes
    return Table(f"prediction by the model of {model.name} ({model.formula})", tuple(headers),
                 tuple(rows), tuple(footer),
                 interval_fields(headers, rows, prediction.piece, {"extrapolated": prediction.extrapolated}))


def error_summary(errors) -> str:
    """`median X%, max Y%` of the |error| % values that exist (nan: a point without a
    prediction), or that there are none: numpy's nan-statistics would print nan and a Python
    warning when no point has a prediction."""
    errors = np.abs(np.asarray(errors, dtype=float))
    errors = errors[~np.isnan(errors)]
    if not len(errors):
        return "none, no point has a prediction"
    return f"median {np.median(errors):.3g}%, max {errors.max():.3g}%"


def interval_fields(headers, rows, pieces, flags: dict) -> tuple:
    """The machine form (`Table.machine`) of a prediction table whose last column joins the
    interval used and its flags for people ('2 extrapolated'): the interval's number (None
    outside every interval) and one true/false field per flag (name -> a value per row)."""
    return ((*headers[:-1], "interval", *flags),
            tuple((*row[:-1], int(piece) + 1 if piece >= 0 else None, *(bool(f[i]) for f in flags.values()))
                  for i, (row, piece) in enumerate(zip(rows, pieces))))


def _level_marks(model, x_name: str) -> list[tuple[str, float]]:
    """Where, along x, the fitted working set leaves each cache level of its machine (none
    without a working set or a probed machine)."""
    from llac.cache_aware import level_crossings, memory_view
    view, _ = memory_view(model)
    return level_crossings(model, view, x_name) if view else []


def _aware(model, points: dict, prediction, machine: ast.Name | None, parameters=()):
    """The machine-aware prediction ((values, levels or None), notes, column name) of a model
    whose experiment states its working set, or (with another machine or BSP parameters)
    moved data; (None, notes, None) when there is none to give."""
    from llac.cache_aware import aware_prediction, memory_text, memory_view, named_run
    from llac.experiment import working_set_bytes
    from llac.machines import level_of
    if parameters or (machine is not None and model.communicates):
        from llac.bsp_whatif import communication_scale
        values, note = communication_scale(model, points, prediction, dict(parameters),
                                           machine.text if machine else None)
        shown = ", ".join(f"{k}={v:g}" for k, v in parameters)
        return (values, None), [note], (f"on {machine.text}" if machine else "") + \
            (" " if machine and shown else "") + (f"with {shown}" if shown else "")
    view, reason = memory_view(model)
    if view is None:
        if machine is not None:
            raise LlacError(reason or f"predict on {machine.text}: the experiment {model.name} states no "
                            f"working set (the pragma's `bytes EXPR` clause)", machine.span)
        return None, [reason] if reason else [], None
    target, run = view.machine, view.run
    if machine is not None:
        try:
            target, run = named_run(machine.text)
        except LlacError as error:
            raise error.at(machine.span) from None
    values, notes = aware_prediction(model, view, points, prediction.values, prediction.piece,
                                     run if machine is not None else None, target)
    # no cache level beside a prediction the formula cannot give (nan), nor for a working
    # set that is no size (<= 0 bytes)
    levels = [level_of(run, w) if np.isfinite(v) and w > 0 else "" for w, v in
              zip(working_set_bytes(model, points), prediction.values)]
    name = f"on {target}" if machine is not None else "machine-aware"
    text = memory_text(model, view, target, run if machine is not None else None)
    return (values, levels), [f"{name}: {text} (docs/machine.md)"] + notes, name


@command("report", "report", """One table that summarises every experiment's model, and every
         model read from a file whose experiment is not loaded. Models
         are fitted now with the current settings where there is none. It shows the formula, each interval with
         its constants, the median and max relative error |predicted - measured| / measured,
         and how many warnings the fit has (`fit NAME` shows them). An experiment that cannot
         be fitted (too few sample points) is left out with a warning that says why; when none
         can be fitted, report is an error.""", ["report"], ast.Report)
def report(session, statement: ast.Report):
    from llac.model import Model
    experiments = {name for name, obj in session.objects.items() if isinstance(obj, Experiment)}
    # every experiment, and the models whose experiment is not loaded (read from model files)
    names = [name for name, obj in session.objects.items() if name in experiments
             or isinstance(obj, Model) and obj.name not in experiments]
    if not names:
        raise LlacError("no experiments or models to report on: load a trace first")
    notes, rows, machine_rows, failures, bound = [], [], [], [], False
    for name in names:
        try:
            model, fitted_now = model_for(session, ast.Name(name, statement.span), count_warnings=False)
        except LlacError as err:
            failures.append(err.message)
            continue
        notes += fitted_now
        for i, piece in enumerate(model.pieces):
            constants = ", ".join(f"{value:.3g}" + "*" * (name in piece.at_bound)
                                  for name, value in zip(model.formula.constants, piece.constants))
            bound |= bool(piece.at_bound)
            first = i == 0
            errors = (Percent(piece.median_rel_error), Percent(piece.max_rel_error))
            rows.append((name if first else "", str(model.formula) if first else "",
                         region_text(piece.region), constants, *errors,
                         str(len(model.warnings)) if first else ""))
            machine_rows += [(name, str(model.formula), i + 1, region_text(piece.region), constant, value,
                              *errors, len(model.warnings))
                             for constant, value in zip(model.formula.constants, piece.constants)]
    # for programs, one row per constant and interval with every field filled, as `show`'s
    machine = (("experiment", "formula", "interval", "region", "constant", "value", "median |error|",
                "max |error|", "warnings"), tuple(machine_rows))
    if not rows:
        raise LlacError(f"nothing to report: {nothing_fitted(failures)}")
    return [*notes, Table("models", ("experiment", "formula", "interval", "constants",
                                     "median |error|", "max |error|", "warnings"), tuple(rows),
                          ("|error| = |predicted - measured| / measured, per interval; "
                           "constants in index order",
                           *(("0*: held at its bound 0 (a term cannot cost negative time; `set constants free`)",)
                             if bound else ())), machine),
            *(Note(f"not in the report: {failure}", warning=True) for failure in failures)]


@command("plot", 'plot NAME [vs VAR] [by VAR] [log|loglog] [residuals] [to "FILE" [replace]]', """Plot of
         the measurements (per sample point, summarised as in the fit) and the model, one line per interval, with
         the cut points marked. `vs` picks the x variable (default: the formula's first), `by`
         draws one series per value of another variable, `log` makes y logarithmic and `loglog`
         both axes, `residuals` plots the relative error of the model instead ((model -
         measured) / measured, ticks in percent, the model as the dotted zero line; its y
         axis stays linear under `loglog`, as an error can be 0 or negative). Each interval
         has its own marker (and colour on a terminal that has colour; NO_COLOR turns it off),
         noisy sample points (`help fit`) the marker @,
         under `by` each series its own markers for points (noisy ones too: the legend counts
         them) and line instead (the cuts tell the intervals apart), every line drawn before
         the points; where several series' points fall in one place (times nearly equal, which
         the last series' marker would hide), a digit, their count, and a legend line names
         them and how far apart their times are; the legend is below the figure, where it hides no data. Log axes are
         labelled 100, 1e3, 1e4 ... and keep the cuts in view; an integer variable (P, N) is
         labelled at its values (at most 8) or whole numbers, never fractions; an axis whose
         values are all one (a single sample point) spans 0 to twice it (a tenth to ten times
         on a log axis). On a terminal the plot fills its width (at least 42 columns: a
         narrower terminal is an error that says so); in a script
         or a pipe it is 80 columns of plain text. `to "FILE.txt"` saves the text, `to
         "FILE.html"` a web page with the figure in colour and the table of the data; an
         existing file is kept unless `replace` follows its name, and the file's folder must
         exist (docs/call.md, Files you name). A PUB program's supersteps, processor by
         processor, are drawn by `timeline` (`help timeline`); the machine's memory mountain
         and g and L by `machine mountain` and `machine bsp`.""",
         ["plot colinit", "plot fft vs N by P loglog", "plot colinit residuals",
          'plot colinit loglog to "colinit.html"', 'plot colinit to "colinit.txt" replace'], ast.Plot)
def plot(session, statement: ast.Plot):
    model, notes = model_for(session, statement.obj)
    variables = model.formula.variables
    for option in (statement.vs, statement.by):
        if option is not None and option.text not in variables:
            raise LlacError(f"the formula {model.formula} has no variable {option.text!r}"
                            f"{suggest(option.text, variables)}", option.span)
    x_name = statement.vs.text if statement.vs else (variables[0] if variables else None)
    if statement.by is not None and statement.by.text == x_name:
        raise LlacError(f"plot by {x_name}: the series variable must differ from the x variable "
                        f"{x_name} (choose one with vs)", statement.by.span)
    from llac import plot as plots
    options = (statement.vs.text if statement.vs else None, statement.by.text if statement.by else None,
               statement.scale, statement.residuals)
    levels = _level_marks(model, x_name) if x_name and not statement.residuals else ()
    if statement.residuals and statement.scale == "log":      # relative errors may be negative
        notes = [*notes, Note("residuals are drawn on a linear axis of relative errors (they may be negative): "
                              "`log` changes nothing there; `loglog` puts the x axis on a log scale")]
    if statement.path is None:
        return [*notes, Text(plots.plot_model(model, *options, canvas=plots.terminal_canvas(sys.stdout),
                                              levels=levels))]
    return [*notes, save_figure(statement, "plot", f"the plot of {model.name}",
                                lambda: plots.plot_model(model, *options, levels=levels),
                                lambda: plots.plot_model_html(model, *options, levels=levels))]


def save_figure(statement, verb: str, what: str, text, page) -> Note:
    """Write a figure to `statement.path` (a plot's or a timeline's `to "FILE" [replace]`):
    `text()` for a .txt file, `page()` (a web page) for .html; an existing file is kept unless
    `statement.replace`. `verb` and `what` name the command and the figure in messages."""
    kind = os.path.splitext(statement.path)[1].lower()
    if kind not in (".txt", ".html", ".htm"):
        raise LlacError(f"{verb} to {statement.path!r}: name a .txt file (text) or an .html file "
                        f"(a web page)", statement.span)
    if problem := missing_folder(statement.path):
        raise LlacError(f"cannot write {statement.path!r}: {problem}", statement.span)
    body = text() if kind == ".txt" else page()
    try:
        with open(statement.path, "w" if statement.replace else "x", encoding="utf-8") as out:
            out.write(body if body.endswith("\n") else body + "\n")
    except FileExistsError:
        raise LlacError(f"{verb} to {statement.path!r}: the file exists; write `replace` after its "
                        f"name to overwrite it", statement.span) from None
    except OSError as err:
        raise LlacError(f"cannot write {statement.path!r}: {err.strerror or err}", statement.span) from None
    return Note(f"wrote {what} to {statement.path} ({'text' if kind == '.txt' else 'web page'})")
