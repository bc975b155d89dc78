"""`suggest`: rank canonical formulas by how well they predict an experiment's largest sample
points when fitted on the others (docs/method.md §5, docs/llac-language.md `suggest`).

The candidates follow Extra-P's performance model normal form: for one variable
c0 + c1*N^i*log(N)^j (i from 0 to 3 in quarters and thirds, j in 0..2) and the sums
c0 + c1*N + c2*N^i*log(N)^j of a linear term and a faster-growing one; for several variables
products of one such factor per variable and sums of two factors, from a coarser set of exponents.
Each is fitted with the session's settings by `fit_experiment`, on the sample points
outside the largest quarter, and judged by its median relative error on that quarter.
Candidates whose errors are equal are tied, listed simplest first and marked: the data cannot
tell them apart (a pruned extra term; or a variable with too few values, e.g. P measured at
1 and 2 only, on which any function of P is a line through two points).
Each shown formula, fitted on every point, also predicts the point BEYOND times the largest
measured value of every variable: formulas that predict the largest points about as well as
the best (within NEAR times its error) can part far beyond them, and that spread is what the
ranking cannot decide. (A hash table's cost per key rises as its table leaves the cache: over
the measured sizes N^(3/2)*log(N)^2 follows that best, and at 4x beyond it predicted twice the
time measured.)
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from cll_grammar.formula import Formula, parse_formula
from llac.experiment import Experiment
from llac.fit import FitError, FitSettings
from llac.fit_data import SamplePoints, aggregate_points, group_rows
from llac.model import fit_experiment

EXPONENTS = tuple(Fraction(f) for f in ("0", "1/4", "1/3", "1/2", "2/3", "3/4", "1", "5/4", "4/3", "3/2",
                                        "5/3", "7/4", "2", "9/4", "7/3", "5/2", "8/3", "11/4", "3"))
LOGS = (0, 1, 2)
# several variables: a coarser set per variable, so that the products stay affordable (about
# 120 candidates for two variables; log-free sums of two factors)
COARSE = ((Fraction(0), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2)), (0, 1))
COARSEST = ((Fraction(0), Fraction(1), Fraction(2)), (0,))      # three variables or more
HELD_OUT = 0.25           # the share of the sample points held out (the largest)
MIN_HELD_OUT = 2
MIN_FITTED = 3            # fewest sample points a candidate is fitted on
SHOWN = 8
# held-out errors this close (relative, or absolute: exact data err by 1e-14 or 0) are tied:
# the data cannot tell the formulas apart
TIE, TIE_ABSOLUTE = 1e-6, 1e-9
BEYOND = 4.0              # the shown formulas also predict every variable at this times its largest
NEAR = 2.0                # formulas whose held-out error is within this times the best's ...
AGREE = 1.1               # ... "agree" beyond the data when their predictions there are within this ratio


@dataclass(frozen=True)
class Ranked:
    """One candidate's place in the ranking (1 = best) and figures: median relative errors on the held-out points and (fitted on
    every point) in range, with its number of intervals, and its prediction at the point beyond
    the data (`Suggestion.beyond`; nan where it has none); `yours`: the experiment's formula;
    `tied`: the first and last rank of the candidates whose held-out error equals its own
    (None when no other's does)."""
    rank: int
    formula: str
    held_out: float
    in_range: float
    intervals: int
    yours: bool
    tied: tuple[int, int] | None = None
    beyond: float = float("nan")


@dataclass(frozen=True)
class Suggestion:
    """The ranking (best first, the user's formula among them) and the split it was judged on;
    `scarce`: the variables (with their values) that have too few distinct values for the
    candidates' terms in them to be told apart; `beyond`: the point, BEYOND times every
    variable's largest measured value, at which each shown formula also predicts."""
    ranked: tuple[Ranked, ...]
    fitted_points: int
    held_points: int
    failed: int              # candidates that could not be fitted
    scarce: tuple[tuple[str, tuple[float, ...]], ...] = ()
    beyond: tuple[tuple[str, float], ...] = ()


def factor(variable: str, power: Fraction, logs: int) -> str:
    """`N^(1/2)*log(N)^2`, `N`, `N^2`, `log(N)`: one variable's factor in the grammar's syntax
    ('' for the constant factor)."""
    parts = []
    if power == 1:
        parts.append(variable)
    elif power:
        parts.append(f"{variable}^{power}" if power.denominator == 1 else f"{variable}^({power})")
    if logs:
        parts.append(f"log({variable})" + (f"^{logs}" if logs > 1 else ""))
    return "*".join(parts)


def candidates(name: str, variables: tuple[str, ...]) -> list[str]:
    """The candidate formulas' texts, constants named `name[0]`, `name[1]`, ..."""
    if len(variables) == 1:
        v = variables[0]
        terms = [factor(v, i, j) for i in EXPONENTS for j in LOGS if i or j]
        faster = [t for i, j, t in ((i, j, factor(v, i, j)) for i in EXPONENTS for j in LOGS)
                  if (i, j) > (1, 0)]
        return ([f"{name}[0] + {name}[1]*{t}" for t in terms]
                + [f"{name}[0] + {name}[1]*{v} + {name}[2]*{t}" for t in faster])
    exponents, logs = COARSE if len(variables) == 2 else COARSEST
    per_variable = [[factor(v, i, j) for i in exponents for j in logs] for v in variables]
    products = ["*".join(p for p in combo if p) for combo in itertools.product(*per_variable)]
    single = [f"{name}[0] + {name}[1]*{t}" for t in products if t]
    pairs = [f"{name}[0] + {name}[1]*{a} + {name}[2]*{b}"
             for (va, vb) in itertools.combinations(per_variable, 2)
             for a in va if a and "log" not in a for b in vb if b and "log" not in b]
    return single + pairs


def held_out(experiment: Experiment, aggregate: str) -> np.ndarray:
    """Per record: True for the records of the largest sample points, the quarter (at least
    MIN_HELD_OUT) with the highest mean rank of their variables' distinct values."""
    formula = experiment.formula
    points = aggregate_points(formula, experiment.columns, aggregate)
    score = np.zeros(len(points))
    for v in formula.variables:
        values = np.unique(points.variables[v])
        score += np.searchsorted(values, points.variables[v]) / max(len(values) - 1, 1)
    count = max(MIN_HELD_OUT, int(round(HELD_OUT * len(points))))
    if len(points) - count < MIN_FITTED:
        raise FitError(f"{len(points)} sample point{'s are' if len(points) != 1 else ' is'} too few to hold "
                       f"out the largest {count} and fit on the rest: need at least {count + MIN_FITTED}")
    held_points = np.zeros(len(points), dtype=bool)
    held_points[np.argsort(score, kind="stable")[len(points) - count:]] = True
    time = np.asarray(experiment.columns["time"], dtype=float)
    valid = np.isfinite(time) & (time > 0)
    group, _ = group_rows([np.asarray(experiment.columns[v], dtype=float)[valid]
                          for v in formula.variables], int(valid.sum()))
    held = np.zeros(len(time), dtype=bool)
    held[valid] = held_points[group]
    return held


def suggest(experiment: Experiment, settings: FitSettings) -> Suggestion:
    """Rank the candidates and the experiment's own formula (see the module's docstring).
    Raises FitError when the experiment has no variables or too few sample points."""
    formula = experiment.formula
    if not formula.variables:
        raise FitError(f"the formula {formula} has no variables: there is nothing to extrapolate")
    held = held_out(experiment, settings.aggregate)
    training = experiment.select(~held)
    truth = aggregate_points(formula, experiment.select(held).columns, settings.aggregate)
    own = str(formula)
    texts = [own] + [t for t in candidates(formula.name, formula.variables) if t != own]
    training_points, whole_points = SamplePointCache(training, settings), SamplePointCache(experiment, settings)
    scores, failed = [], 0
    for text in texts:
        error = _held_out_error(training.replace(formula=parse_formula(text)), truth, settings,
                                training_points)
        if error is None:
            failed += text != own
        else:
            scores.append((error, text))
    ordered = tie_groups(scores)
    shown = [(r, s) for r, s in enumerate(ordered, 1) if r <= SHOWN or s[1] == own]
    beyond = {v: BEYOND * float(np.max(x)) for v, x in whole_points(experiment).variables.items()}
    ranked = []
    for rank, (error, text, tied) in shown:
        try:
            candidate = experiment.replace(formula=parse_formula(text))
            whole = fit_experiment(candidate, settings, quick=True, points=whole_points(candidate))
            in_range, intervals = whole.median_rel_error, len(whole.pieces)
            far = _prediction(whole, beyond)
        except FitError:
            in_range, intervals, far = float("nan"), 0, float("nan")
        ranked.append(Ranked(rank, text, error, in_range, intervals, text == own, tied, far))
    fitted = len(aggregate_points(formula, training.columns, settings.aggregate))
    return Suggestion(tuple(ranked), fitted, len(truth), failed, scarce(whole_points(experiment)),
                      tuple(beyond.items()))


def near_best(found: Suggestion) -> list[float]:
    """The predictions beyond the data (at `found.beyond`) of the shown formulas whose
    held-out error is within NEAR times the best's: those the ranking cannot tell apart."""
    best = found.ranked[0].held_out
    return [r.beyond for r in found.ranked
            if r.held_out <= NEAR * best + TIE_ABSOLUTE and np.isfinite(r.beyond)]


def _prediction(model, point: dict[str, float]) -> float:
    """The model's time at `point`, nan where its formula has no finite positive value."""
    with np.errstate(all="ignore"):
        value = float(model.predict({v: np.array([x]) for v, x in point.items()}).values[0])
    return value if np.isfinite(value) and value > 0 else float("nan")


def simplicity(text: str) -> tuple:
    """The order among tied formulas, the simplest first: fewest constants, then fewest
    fractional powers, fewest logs, the shortest."""
    return text.count("["), text.count("^("), text.count("log"), len(text), text


def tie_groups(scores: list[tuple[float, str]]) -> list[tuple[float, str, tuple[int, int] | None]]:
    """The (error, formula) `scores` best first, those of equal errors (within TIE) together
    and simplest first, each with the first and last rank of its tie (None alone)."""
    groups: list[list[tuple[float, str]]] = []
    for score in sorted(scores):
        if groups and score[0] - groups[-1][0][0] <= max(TIE * groups[-1][0][0], TIE_ABSOLUTE):
            groups[-1].append(score)
        else:
            groups.append([score])
    ordered, rank = [], 1
    for group in groups:
        tied = (rank, rank + len(group) - 1) if len(group) > 1 else None
        ordered += [(error, text, tied) for error, text in sorted(group, key=lambda s: simplicity(s[1]))]
        rank += len(group)
    return ordered


def scarce(points: SamplePoints) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The variables of `points` with too few distinct values to tell the candidates apart:
    with k values, at most k - 1 terms in a variable can be told apart (through k points any
    k - 1 terms and the constant fit alike), and a candidate has up to 2 terms in the variable
    alone (1 when there are several variables)."""
    terms = 2 if len(points.variables) == 1 else 1
    values = {v: np.unique(x) for v, x in points.variables.items()}
    return tuple((v, tuple(float(u) for u in x)) for v, x in values.items() if len(x) <= terms + 1)


class SamplePointCache:
    """The sample points of an experiment's records under each candidate formula, aggregated
    once per set of variables: the candidates share their variables, and aggregating a
    million records a hundred times was most of suggest's time."""

    def __init__(self, experiment: Experiment, settings: FitSettings):
        self.columns, self.aggregate, self.points = experiment.columns, settings.aggregate, {}

    def __call__(self, candidate: Experiment) -> SamplePoints:
        """The points of `candidate` (the experiment with a candidate formula)."""
        key = candidate.formula.variables
        if key not in self.points:
            self.points[key] = aggregate_points(candidate.formula, self.columns, self.aggregate)
        return self.points[key]


def _held_out_error(training: Experiment, truth, settings: FitSettings,
                    points: SamplePointCache) -> float | None:
    """Median relative error at the held-out points of the formula fitted on `training`
    (None when it cannot be fitted there)."""
    try:
        model = fit_experiment(training, settings, quick=True, points=points(training))
    except (FitError, np.linalg.LinAlgError):
        return None
    predicted = model.predict(truth.variables).values
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(predicted - truth.time) / truth.time
    return float(np.median(error)) if np.all(np.isfinite(error)) else None
