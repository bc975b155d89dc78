"""Fit each case with each tool on its training points and score the predictions of the
held-out points: relative error against the measurement and, for a synthetic case, against
the true function."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from llac.model import FitError, FitSettings, Model, fit_experiment

from .cases import Case
from .extrap_tool import extrap_predict

LLAC_TOOLS = {"llac": FitSettings(), "llac-1-interval": FitSettings(split=False)}


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


def relative_errors(predicted: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """Median and max of |predicted - reference| / reference; a missing (NaN) prediction
    counts as infinitely wrong."""
    errors = np.abs(np.asarray(predicted, dtype=float) - reference) / np.abs(reference)
    errors = np.where(np.isnan(errors), np.inf, errors)
    return float(np.median(errors)), float(np.max(errors))


def score(case: Case, tool: str, model: str, predicted: np.ndarray) -> Row:
    """The row of `tool` on `case` for predictions of the held-out points."""
    held = case.heldout.columns
    median, worst = relative_errors(predicted, held["time"])
    truth = relative_errors(predicted, case.truth(held)) if case.truth else (float("nan"),) * 2
    return Row(case.name, tool, model, median, worst, *truth)


def describe(model: Model) -> str:
    """A short text of a llac model: the formula with the last interval's constants (the one
    that extrapolates to larger inputs) and the cuts."""
    terms = [str(term).replace(name, f"{value:.3g}") for term, name, value
             in zip(model.formula.terms, model.formula.constants, model.pieces[-1].constants)]
    cuts = ", ".join(f"{c.variable}={c.value:.4g}" for c in model.cuts)
    return " + ".join(terms) + (f" [cuts {cuts}]" if cuts else "")


def llac_rows(case: Case) -> list[Row]:
    """llac with its defaults (interval splitting) and with one interval."""
    rows = []
    for tool, settings in LLAC_TOOLS.items():
        try:
            model = fit_experiment(case.training, settings)
        except FitError as error:
            rows.append(Row(case.name, tool, f"fit failed: {error}"))
            continue
        held = case.heldout.columns
        predicted = model.predict({v: held[v] for v in model.formula.variables}).values
        rows.append(score(case, tool, describe(model), predicted))
    return rows


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
            rows.append(Row(case.name, tool, result["error"][:120]))
        else:
            rows.append(score(case, tool, result["function"], np.asarray(result["values"])))
    return rows
