"""Formula advice: does the data contradict the experiment's formula? (docs/method.md §5)

Three tests on a fitted model, each conservative (a correct formula with cache regimes or
5% lognormal noise must stay silent), each giving one warning that ends with `try: suggest`:

- lack of fit: the sample points' residuals are far larger than the spread of the
  repetitions at each point says they can be (an F-type ratio of the two variances);
- drifting constants: the leading term's constant grows (or shrinks) monotonically over 3 or
  more intervals by many standard errors, AND one interval with a smooth extra factor
  log(x) on that term fits about as well as the cuts (a cache regime is a jump, which a
  smooth factor cannot follow);
- a trend in the residuals: ordered by a variable, the signs of the relative residuals of
  the whole fit form far fewer runs than chance gives (Wald-Wolfowitz runs test), or those of
  the last interval correlate with log(x) (Spearman);
- a smooth alternative that dominates: where the model's median error is above the threshold,
  one interval whose leading term has a smooth extra factor fits within it and
  SMOOTH_DOMINANCE times better than the model with its intervals (whatever their number): the
  data is smooth and the formula is not its shape.

Only numpy: it runs inside every fit. The repetition statistics come from the raw records.
"""
from __future__ import annotations

import math

import numpy as np

from llac import student_t
from llac.fit_data import group_rows

# lack of fit: residual variance at least this many times the repetitions' (a 4x larger
# standard deviation), with enough degrees of freedom on both sides, and residuals that are
# not scattered like noise from point to point (runs test at this level): on a busy machine
# each sample point has its own slowdown, which the repetitions' spread does not show
LACK_OF_FIT_RATIO = 16.0
LACK_OF_FIT_DF = 5
LACK_OF_FIT_RUNS_ALPHA = 0.05
# drift: each step between neighbouring intervals larger than this many standard errors
DRIFT_SIGMAS = 4.0
# ... and the one-interval fit with a smooth extra factor (log(x), x^(1/2), x or x^(-1/2)) on
# the leading term within this factor of the cuts' error
SMOOTH_TOLERANCE = 1.5
# smooth alternative: its median error at most 1/SMOOTH_DOMINANCE of the model's (and within
# the threshold); the noise of the points bounds both, so a right formula, whose intervals fit
# down to that noise, cannot be beaten by this factor
SMOOTH_DOMINANCE = 3.0
# trend: a runs test or a Spearman correlation significant at this level
TREND_ALPHA = 0.001
TREND_POINTS = 8          # fewest points a trend test looks at
TREND_FLOOR = 1e-3        # residuals all below 0.1% have no trend worth a warning (exact data)
ADVICE = "is probably wrong; try: suggest"   # every finding's warning ends with it and the experiment's name


def formula_warnings(experiment, points, pieces, design: np.ndarray, threshold: float,
                     unit: float = 1.0) -> list[str]:
    """The warnings of the three tests for `pieces` fitted to `points` (the aggregated sample
    points, with `design` their design matrix) of `experiment` (its raw records give the
    repetitions' spread; `threshold` is the fit's error threshold). One warning per finding.
    `unit`: the seconds of the points' time unit (the fit divides times by it), so that the
    constants a warning shows are those `fit` prints."""
    formula = experiment.formula
    if not formula.variables or len(points) < 3:
        return []
    fitted = np.zeros(len(points))
    for piece in pieces:
        inside = piece.contains(points.variables)
        fitted[inside] = design[inside] @ piece.constants
    if not np.all(fitted > 0):
        return []
    relative = (points.time - fitted) / points.time
    blocky = _runs_p(points, relative) < LACK_OF_FIT_RUNS_ALPHA
    findings = [lack_of_fit(experiment, points, fitted, pieces) if blocky else None,
                *(drift(formula, points, fitted, pieces, design, v, threshold, unit) for v in formula.variables),
                *(trend(points, relative, pieces, v) for v in formula.variables)]
    if not any(findings):
        findings += [smooth_alternative(formula, points, fitted, pieces, design, v, threshold)
                     for v in formula.variables]
    return [f"{text} — the formula {formula} {ADVICE} {experiment.name}" for text in findings if text]


def is_formula_advice(warning: str) -> bool:
    """Whether a model's warning is one of the formula advice's (a user following it runs
    `suggest`): the accuracy benchmark follows the advice as such a user would."""
    return ADVICE in warning


def lack_of_fit(experiment, points, fitted: np.ndarray, pieces) -> str | None:
    """The lack-of-fit finding, or None: the variance of the points' log residuals (times
    their repetition counts) over the pooled within-point variance of the log times. (The
    caller asks it only where the residuals' signs run in blocks along some variable.)"""
    columns = experiment.columns
    time = np.asarray(columns["time"], dtype=float)
    valid = np.isfinite(time) & (time > 0)
    keys = [np.asarray(columns[v], dtype=float)[valid] for v in experiment.formula.variables]
    group, _ = group_rows(keys, int(valid.sum()))
    logs = np.log(time[valid])
    count = np.bincount(group)
    if len(count) != len(points):
        return None
    mean = np.bincount(group, logs) / count
    within = float(np.sum((logs - mean[group]) ** 2))
    df_within = int(np.sum(count - 1))
    constants = sum(int(np.count_nonzero(p.constants)) for p in pieces)
    df_lack = len(points) - constants
    if df_within < LACK_OF_FIT_DF or df_lack < LACK_OF_FIT_DF or within <= 0:
        return None
    residual = np.log(points.time / fitted)
    ratio = (float(np.sum(count * residual ** 2)) / df_lack) / (within / df_within)
    if ratio < LACK_OF_FIT_RATIO:
        return None
    return (f"lack of fit: the sample points lie {math.sqrt(ratio):.1f} times farther from the "
            f"model than the spread of their repetitions explains")


def leading_term(design: np.ndarray, x: np.ndarray) -> int | None:
    """The term that grows fastest along x (largest log-log slope of its column), or None."""
    order = np.argsort(x)
    low, high = order[0], order[-1]
    if x[high] <= x[low] or x[low] <= 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.log(np.abs(design[high]) / np.abs(design[low]))
    growth = np.where(np.isfinite(growth), growth, -np.inf)
    best = int(np.argmax(growth))
    return best if growth[best] > 0 else None


def drift(formula, points, fitted: np.ndarray, pieces, design: np.ndarray, variable: str,
          threshold: float, unit: float = 1.0) -> str | None:
    """The drift finding on `variable`, or None (see the module's docstring): the smooth
    alternative must also be a good fit (median error within `threshold`), or the data is too
    noisy to tell a drift from noise. The constants are shown in seconds (`unit`: the seconds
    of the pieces' time unit)."""
    chain = _chain(pieces, variable)
    x = points.variables[variable]
    lead = leading_term(design, x) if len(chain) >= 3 else None
    if lead is None or np.any(x <= 0):
        return None
    values = np.array([pieces[i].constants[lead] for i in chain])
    errors = np.array([pieces[i].stderr[lead] for i in chain])
    steps = np.diff(values)
    combined = np.sqrt(errors[1:] ** 2 + errors[:-1] ** 2)
    if not (np.all(np.isfinite(combined)) and (np.all(steps > 0) or np.all(steps < 0))
            and np.all(np.abs(steps) > DRIFT_SIGMAS * combined)):
        return None
    smooth, _ = _smoothest(design, points.time, lead, x)
    piecewise = float(np.median(np.abs(points.time - fitted) / points.time))
    if smooth > threshold or smooth > SMOOTH_TOLERANCE * piecewise:
        return None
    name = formula.constants[lead]
    way = "grows" if steps[0] > 0 else "shrinks"
    shown = ", ".join(f"{v * unit:.3g}" for v in values)
    return (f"{name} {way} from interval to interval along {variable} ({shown}), smoothly: the "
            f"formula misses a {'higher' if steps[0] > 0 else 'lower'}-order term")


def smooth_alternative(formula, points, fitted: np.ndarray, pieces, design: np.ndarray, variable: str,
                       threshold: float) -> str | None:
    """The smooth-alternative finding on `variable`, or None (see the module's docstring):
    one interval with the leading term times log(x), x^(1/2), x or x^(-1/2) fits within
    `threshold` and SMOOTH_DOMINANCE times better than the model's intervals. Where the
    intervals fit well (a right formula, cache regimes included) nothing can be that much
    better than them; where they fit badly and the smooth shape fits, the formula is wrong,
    however its constants moved between the cuts."""
    x = points.variables[variable]
    lead = leading_term(design, x)
    if lead is None or np.any(x <= 0) or len(np.unique(x)) < TREND_POINTS:
        return None
    piecewise = float(np.median(np.abs(points.time - fitted) / points.time))
    if piecewise <= threshold:      # the model fits: nothing to contradict (exact data included)
        return None
    smooth, factor = _smoothest(design, points.time, lead, x)
    if smooth > threshold or SMOOTH_DOMINANCE * smooth > piecewise:
        return None
    intervals = f"its {len(pieces)} intervals" if len(pieces) > 1 else "it"
    return (f"one interval with {formula.terms[lead]} times {factor.replace('x', variable)} fits the data "
            f"with a median error of {smooth:.1%}, where the formula with {intervals} reaches "
            f"{piecewise:.1%}: the formula misses a {'lower' if factor == 'x^(-1/2)' else 'higher'}-order term")


def _smoothest(design: np.ndarray, time: np.ndarray, lead: int, x: np.ndarray) -> tuple[float, str]:
    """The best one-interval fit of `design` with the leading term's column times a smooth
    factor of x: its median relative error and the factor's name."""
    factors = {"log(x)": np.log(x), "x^(1/2)": np.sqrt(x), "x": x, "x^(-1/2)": 1 / np.sqrt(x)}
    with np.errstate(over="ignore", invalid="ignore"):      # a column beyond the float range: no candidate
        return min((_median_error(np.column_stack([design, design[:, lead] * column]), time), name)
                   for name, column in factors.items())


def trend(points, relative: np.ndarray, pieces, variable: str) -> str | None:
    """The trend finding on `variable`, or None: a runs test on the signs of the relative
    residuals of the whole fit ordered by `variable`, and Spearman's correlation of those of
    the last interval with log(variable)."""
    x = points.variables[variable]
    if len(np.unique(x)) < TREND_POINTS or len(np.unique(x)) != len(x):
        return None               # several variables vary together: no order by one of them
    if np.max(np.abs(relative)) < TREND_FLOOR:
        return None
    order = np.argsort(x)
    runs, p_runs = runs_test(relative[order] > 0)
    if p_runs < TREND_ALPHA:
        return (f"the residuals ordered by {variable} change sign only {runs} times "
                f"(p={p_runs:.1g}): the model bends away from the data")
    chain = _chain(pieces, variable)
    inside = pieces[chain[-1]].contains(points.variables) if chain else np.zeros(len(x), dtype=bool)
    if inside.sum() >= TREND_POINTS:
        rho, p_rho = spearman(x[inside], relative[inside])     # ranks: the same as log(x)'s
        if p_rho < TREND_ALPHA:
            last = pieces[chain[-1]].trend
            outcome = ("continue that rise (`trend on`): a formula that fits would need none"
                       if rho > 0 and last is not None and last.variable == variable else
                       f"will {'under' if rho > 0 else 'over'}estimate")
            return (f"in the last interval along {variable}, the residuals {'rise' if rho > 0 else 'fall'} "
                    f"with {variable} (Spearman {rho:.2f}, p={p_rho:.1g}): predictions beyond the "
                    f"data {outcome}")
    return None


def runs_test(signs: np.ndarray) -> tuple[int, float]:
    """Sign changes in `signs` and the one-sided p-value of so few runs (normal approximation
    of the Wald-Wolfowitz runs test; 1.0 when one sign is missing)."""
    n1, n2 = int(np.sum(signs)), int(np.sum(~signs))
    changes = int(np.count_nonzero(signs[1:] != signs[:-1]))
    if n1 == 0 or n2 == 0:
        return changes, 1.0
    n = n1 + n2
    expected = 2 * n1 * n2 / n + 1
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    if variance <= 0:
        return changes, 1.0
    z = (changes + 1 + 0.5 - expected) / math.sqrt(variance)
    return changes, 0.5 * math.erfc(-z / math.sqrt(2))


def spearman(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Spearman's rank correlation (tied values share their average rank) and its two-sided
    p-value (t approximation; for a perfect correlation the exact 2/n!, the chance that a
    random order of n values is sorted one way or the other, not 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):      # all values tied: no correlation (NaN)
        rho = float(np.corrcoef(average_ranks(a), average_ranks(b))[0, 1])
    n = len(a)
    if not np.isfinite(rho):
        return rho, 1.0
    if abs(rho) >= 1 - 1e-12:     # a perfect order (corrcoef gives 0.9999999999999999 for 5 values)
        return math.copysign(1.0, rho), min(1.0, 2.0 * math.exp(-math.lgamma(n + 1)))
    t = rho * math.sqrt((n - 2) / (1 - rho * rho))
    return rho, float(student_t.two_sided_p(np.array([t]), n - 2)[0])


def average_ranks(x: np.ndarray) -> np.ndarray:
    """The ranks of `x` (0-based), tied values sharing the average of theirs."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    _, group = np.unique(x, return_inverse=True)
    return (np.bincount(group, weights=ranks) / np.bincount(group))[group]


def _runs_p(points, relative: np.ndarray) -> float:
    """The smallest runs-test p-value of the residuals' signs over the orders of the points by
    each variable (then by the others)."""
    names = list(points.variables)
    orders = (np.lexsort([points.variables[w] for w in names if w != v] + [points.variables[v]])
              for v in names)
    return min(runs_test(relative[order] > 0)[1] for order in orders)


def _chain(pieces, variable: str) -> list[int]:
    """The pieces in order along `variable` when they differ only in it (else [])."""
    others = {tuple(sorted((v, r) for v, r in p.region.items() if v != variable)) for p in pieces}
    if len(others) != 1:
        return []
    return sorted(range(len(pieces)), key=lambda i: pieces[i].region[variable][0])


def _median_error(design: np.ndarray, time: np.ndarray) -> float:
    """Median relative error of the plain relative least-squares fit of `design` to `time`
    (inf when a column is beyond the float range or the fit does not converge)."""
    scale = np.abs(design).max(axis=0)
    scaled = design / np.where(scale > 0, scale, 1.0)
    if not np.all(np.isfinite(scaled)):
        return np.inf
    try:
        beta = np.linalg.lstsq(scaled / time[:, None], np.ones(len(time)), rcond=None)[0]
    except np.linalg.LinAlgError:
        return np.inf
    return float(np.median(np.abs(time - scaled @ beta) / time))
