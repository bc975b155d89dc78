"""Fit each case with each tool on its training points and score the predictions of the
held-out points: relative error against the measurement and, for a synthetic case, against
the true function; for llac also the coverage and width of its prediction intervals and how
many of its constants are negative, and, for a case whose experiment states its working set
(`bytes`) on a probed machine, llac's machine-aware prediction (docs/machine.md), and what a
user who follows llac's formula advice gets (`suggest`'s first formula, where the fit warns)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cll_grammar.formula import parse_formula
from llac.advice import is_formula_advice
from llac.cache_aware import aware_prediction, memory_view
from llac.model import FitError, FitSettings, Model, Prediction, fit_experiment
from llac.suggest import suggest

from .cases import Case
from .extrap_tool import extrap_predict

LLAC_TOOLS = {"llac": FitSettings(), "llac-1-interval": FitSettings(split=False),
              "llac-trend": FitSettings(trend=True)}     # `set trend on` (docs/method.md §6)
AWARE_TOOL = "llac-machine-aware"
ADVISED_TOOL = "llac-advice-followed"


@dataclass(frozen=True)
class Row:
    """One line of the table: how one tool did on one case."""
    case: str
    tool: str
    model: str
    median: float = float("nan")          # median relative error on the held-out points
    max: float = float("nan")
    median_truth: float = float("nan")    # the same against the true function (synthetic)
    max_truth: float = float("nan")
    coverage: float = float("nan")        # share of held-out points inside the 95% interval (llac)
    width: float = float("nan")           # median (upper - lower) / predicted there (llac)
    negatives: int = 0                    # negative constants in the model (llac, all intervals)
    run: int = 1                          # which run of a real program
    points: tuple = ()                    # the held-out points (tuples of the variables' values),
    predicted: tuple = ()                 # the tool's prediction at each,
    measured: tuple = ()                  # and the measured time there (to compare runs: stability.py)


def relative_errors(predicted: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """Median and max of |predicted - reference| / reference; a missing (NaN) prediction
    counts as infinitely wrong."""
    errors = np.abs(np.asarray(predicted, dtype=float) - reference) / np.abs(reference)
    errors = np.where(np.isnan(errors), np.inf, errors)
    return float(np.median(errors)), float(np.max(errors))


def interval_scores(prediction: Prediction, measured: np.ndarray) -> tuple[float, float]:
    """The coverage of `prediction`'s intervals (share of `measured` inside lower..upper; a
    missing bound never covers) and their median relative width (upper - lower) / value."""
    measured = np.asarray(measured, dtype=float)
    covered = (prediction.lower <= measured) & (measured <= prediction.upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        width = (prediction.upper - prediction.lower) / np.abs(prediction.values)
    width = np.where(np.isnan(width), np.inf, width)
    return float(np.mean(covered)), float(np.median(width))


def negative_constants(model: Model) -> int:
    """How many constants of `model` are negative, over all its intervals (a term of a cost
    formula cannot cost negative time)."""
    return sum(int(np.sum(piece.constants < 0)) for piece in model.pieces)


def score(case: Case, tool: str, model: str, predicted: np.ndarray, **llac_figures) -> Row:
    """The row of `tool` on `case` for predictions of the held-out points (`llac_figures`:
    coverage, width and negatives of a llac model)."""
    held = case.heldout.columns
    median, worst = relative_errors(predicted, held["time"])
    truth = relative_errors(predicted, case.truth(held)) if case.truth else (float("nan"),) * 2
    points = tuple(zip(*(held[v].tolist() for v in case.data.formula.variables)))
    return Row(case.name, tool, model, median, worst, *truth, run=case.run, points=points,
               predicted=tuple(np.asarray(predicted, dtype=float).tolist()),
               measured=tuple(np.asarray(held["time"], dtype=float).tolist()), **llac_figures)


def llac_score(case: Case, tool: str, text: str, model: Model, prediction: Prediction) -> Row:
    """The row of a llac `model` whose `prediction` of the held-out points is scored, with its
    intervals' coverage and width and its negative constants."""
    coverage, width = interval_scores(prediction, case.heldout.columns["time"])
    return score(case, tool, text, prediction.values, coverage=coverage, width=width,
                 negatives=negative_constants(model))


def describe(model: Model) -> str:
    """A short text of a llac model: the formula with the last interval's constants (the one
    that extrapolates to larger inputs) and the cuts."""
    terms = [str(term).replace(name, f"{value:.3g}") for term, name, value
             in zip(model.formula.terms, model.formula.constants, model.pieces[-1].constants)]
    cuts = ", ".join(f"{c.variable}={c.value:.4g}" for c in model.cuts)
    return " + ".join(terms) + (f" [cuts {cuts}]" if cuts else "")


def llac_rows(case: Case) -> list[Row]:
    """llac with its defaults (interval splitting) and with one interval, fitted on every
    training measurement; after the default's row, its machine-aware one (`aware_rows`) and
    the advice followed (`advised_rows`)."""
    rows = []
    for tool, settings in LLAC_TOOLS.items():
        try:
            model = fit_experiment(case.training_records, settings)
        except FitError as error:
            rows.append(Row(case.name, tool, f"fit failed: {error}", run=case.run))
            continue
        held = case.heldout.columns
        prediction = model.predict({v: held[v] for v in model.formula.variables})
        rows.append(llac_score(case, tool, describe(model), model, prediction))
        if tool == "llac":
            rows += aware_rows(case, model, prediction) + advised_rows(case, model, prediction)
    return rows


def aware_rows(case: Case, model: Model, prediction: Prediction) -> list[Row]:
    """The machine-aware prediction of the held-out points by the default model, as `predict`
    gives it beside the plain one: none when the experiment states no working set; a row
    that says why when the machine has no usable probe run (so a missing probe is seen)."""
    if not model.working_set:
        return []
    view, reason = memory_view(model)
    if view is None:
        return [Row(case.name, AWARE_TOOL, reason or "no machine-aware prediction", run=case.run)]
    held = case.heldout.columns
    points = {v: held[v] for v in model.formula.variables}
    values, _ = aware_prediction(model, view, points, prediction.values, prediction.piece)
    return [score(case, AWARE_TOOL, view.summary, values)]


def advised_rows(case: Case, model: Model, prediction: Prediction) -> list[Row]:
    """What a user who follows the default fit's formula advice predicts: where `fit` warns
    that the formula is probably wrong, `suggest`'s first formula fitted with the defaults
    (the user's own when suggest ranks it first); elsewhere the default prediction."""
    if not any(is_formula_advice(w) for w in model.warnings):
        return [llac_score(case, ADVISED_TOOL, "no advice: the default fit", model, prediction)]
    try:
        first = suggest(case.training_records, FitSettings()).ranked[0]
        if first.yours:
            return [llac_score(case, ADVISED_TOOL, "advice; suggest ranks the formula first", model, prediction)]
        advised = fit_experiment(case.training_records.replace(formula=parse_formula(first.formula)), FitSettings())
    except FitError as error:
        return [Row(case.name, ADVISED_TOOL, f"advice; suggest or its fit failed: {error}", run=case.run)]
    held = case.heldout.columns
    return [llac_score(case, ADVISED_TOOL, f"advice; {first.formula}", advised,
                       advised.predict({v: held[v] for v in advised.formula.variables}))]


def extrap_rows(case: Case, python: Path, modelers: list[str] | None = None) -> list[Row]:
    """Extra-P's `modelers`, by default its default modeler and, for one parameter, its
    segmented modeler."""
    modelers = modelers or ["Default"] + (["Segmented"] if case.segmented else [])
    held = case.heldout.columns
    results = extrap_predict(case.training, {v: held[v] for v in case.data.formula.variables},
                             modelers, python)
    rows = []
    for modeler in modelers:
        result, tool = results[modeler], f"extrap-{modeler.lower()}"
        if "error" in result:
            rows.append(Row(case.name, tool, result["error"][:120], run=case.run))
        else:
            rows.append(score(case, tool, result["function"], np.asarray(result["values"])))
    return rows
