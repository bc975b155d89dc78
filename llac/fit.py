"""Relative least squares: fit a formula's constants so that the *relative* error is small.

Timings span orders of magnitude, so an absolute fit would ignore the small sizes. We solve
weighted least squares with weights 1/base², where base starts as the measured times t and is
then replaced by sqrt(t * fitted) (iteratively reweighted; the fitted values clamped to a factor
10 of the measured time so that a bad intermediate fit cannot blow up a weight): the squared
weighted residual is then, to second order, (ln t - ln fitted)², symmetric in over- and
underestimation. Columns are scaled to
a maximum of 1 before solving. numpy does the iterations (fast, used many times by the split
search) and the final fit's standard errors, p-values and covariance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from llac import student_t
from llac.fit_data import AGGREGATES, FitError  # noqa: F401  (FitError re-exported: the fit's user errors)

ITERATIONS = 6


@dataclass(frozen=True)
class FitSettings:
    """How `fit_experiment` fits and splits; docs/method.md explains each setting."""
    threshold: float = 0.05
    maxintervals: int = 3
    minpoints: int = 0
    alpha: float = 0.05
    aggregate: str = "min"
    split: bool = True
    seed: int = 0
    bootstrap: int = 199
    maxpieces: int = 16
    prune: bool = True
    constants: str = "nonnegative"
    trend: bool = False


CONSTANT_BOUNDS = ("nonnegative", "free")   # the values of the setting `constants`
SETTING_WORDS = {"aggregate": AGGREGATES, "constants": CONSTANT_BOUNDS}   # the settings that take a word


@dataclass(frozen=True)
class RelativeFit:
    """The numpy solution of the relative fit on some sample points."""
    constants: np.ndarray
    fitted: np.ndarray
    base: np.ndarray          # the final weights are 1/base²
    rel_error: np.ndarray     # |measured - fitted| / measured, per point
    at_bound: tuple[int, ...] = ()   # columns whose constant is held at its bound 0

    @property
    def median_rel_error(self) -> float:
        """Median relative error over the points."""
        return median(self.rel_error)

    @property
    def max_rel_error(self) -> float:
        """Largest relative error over the points."""
        return float(np.max(self.rel_error))

    def ssr(self, time: np.ndarray) -> float:
        """The weighted (relative) residual sum of squares, sum(((t - fit)/base)²)."""
        return float(np.sum(((time - self.fitted) / self.base) ** 2))


def median(values: np.ndarray) -> float:
    """The median of a non-empty array, equal to np.median's (NaN if any value is NaN) but
    without np.median's import of numpy.ma, 20 ms of every fitting run's start-up."""
    ordered = np.sort(values)           # NaN sorts last
    n = len(ordered)
    if np.isnan(ordered[-1]):
        return float("nan")
    return float(ordered[n // 2]) if n % 2 else float((ordered[n // 2 - 1] + ordered[n // 2]) / 2)


def relative_fit(design: np.ndarray, time: np.ndarray, bounded: np.ndarray | None = None,
                 noise: np.ndarray | None = None) -> RelativeFit:
    """Fit constants minimising relative squared error, iterating weights 1/(measured·fitted).

    The constants of the `bounded` columns (a mask; None: none) must be >= 0: a term of a cost
    formula cannot cost negative time (docs/method.md §2). `noise` (>= 1 per point, None: all 1)
    divides each point's weight by its square: points whose repetitions disagree count less
    (`noise_factors`). The intermediate iterations, which only set the weights, solve the small
    normal equations; the final solve uses lstsq for accuracy."""
    scale = _column_scale(design)
    scaled = design / scale
    bounded = np.zeros(design.shape[1], dtype=bool) if bounded is None else bounded
    noise = np.ones(len(time)) if noise is None else noise
    base = time
    for _ in range(ITERATIONS):
        new = np.sqrt(time * np.clip(scaled @ _solve(scaled, time, base * noise, bounded, exact=False), time / 10, time * 10))
        done = np.max(np.abs(new - base) / base) < 1e-8
        base = new
        if done:
            break
    beta = _solve(scaled, time, base * noise, bounded, exact=True)
    fitted = scaled @ beta
    at_bound = tuple(int(i) for i in np.flatnonzero(bounded & (beta == 0)))
    return RelativeFit(beta / scale, fitted, base * noise, np.abs(time - fitted) / time, at_bound)


NOISE_FLOOR = 0.005     # spreads below this relative level count as this level
NOISY = 3.0             # a point whose spread exceeds this many typical spreads is down-weighted


def noise_factors(spread: np.ndarray) -> np.ndarray:
    """Each sample point's noise factor for `relative_fit`: max(1, s / (NOISY·s0)), where s is
    the point's spread ((median - min) / min of its repetitions) and s0 the typical spread (the
    median over points with repetitions, at least NOISE_FLOOR), of all the points given: the fit
    passes all its sample points once, before any split, and every interval uses these factors
    (docs/method.md §2). Interference only adds time:
    a point whose repetitions mostly ran much slower than its fastest was measured under load,
    and its summary is less trustworthy than a point whose repetitions agree; such a point
    weighs 1/factor² as much (docs/method.md §2). Spreads up to NOISY typical ones are the
    ordinary scatter of a few repetitions and change nothing. A point without repetitions
    (spread NaN) has factor 1."""
    repeated = np.isfinite(spread)
    typical = max(float(np.median(spread[repeated])) if repeated.any() else 0.0, NOISE_FLOOR)
    return np.maximum(1.0, np.where(repeated, spread, 0.0) / (NOISY * typical))


def bounded_columns(design: np.ndarray, settings: FitSettings) -> np.ndarray:
    """Which constants `relative_fit` keeps >= 0: with `constants nonnegative` (the default),
    those whose term is >= 0 at every sample point, i.e. whose contribution is a cost. A term
    negative somewhere (log(N) with N < 1, a difference) keeps a free constant."""
    if settings.constants == "free":
        return np.zeros(design.shape[1], dtype=bool)
    return np.all(design >= 0, axis=0)


def _column_scale(design: np.ndarray) -> np.ndarray:
    """Each column's largest magnitude (1 for an all-zero column)."""
    scale = np.abs(design).max(axis=0)
    return np.where(scale > 0, scale, 1.0)


def _solve(scaled: np.ndarray, time: np.ndarray, base: np.ndarray, bounded: np.ndarray,
           exact: bool) -> np.ndarray:
    """Weighted least squares with weights 1/base² on the scaled design: by lstsq when
    `exact`, else by the normal equations (falling back to lstsq if they are singular); when a
    `bounded` constant comes out negative, by the bounded solver instead."""
    weighted, target = scaled / base[:, None], time / base
    beta = None
    if not exact:
        try:
            beta = np.linalg.solve(weighted.T @ weighted, weighted.T @ target)
        except np.linalg.LinAlgError:
            pass
    if beta is None:
        beta = np.linalg.lstsq(weighted, target, rcond=None)[0]
    if np.any(beta[bounded] < 0):
        beta = nonnegative_lstsq(weighted, target, bounded)
    return beta


def nonnegative_lstsq(a: np.ndarray, b: np.ndarray, bounded: np.ndarray) -> np.ndarray:
    """min ||a x - b|| subject to x[bounded] >= 0 (the other entries free): Lawson and
    Hanson's active-set method, with the free entries always in the passive set. Formulas
    have a handful of constants, so a few small lstsq solves finish it (scipy's nnls has no
    free entries, and importing scipy.optimize costs a third of a second)."""
    k = a.shape[1]
    passive = ~bounded
    x = np.zeros(k)
    x[passive] = _lstsq(a[:, passive], b)
    x = _project(a, b, x, passive, bounded)
    passive = ~bounded | (x > 0)
    tolerance = 1e-12 * max(1.0, float(np.abs(a).max()) * float(np.abs(b).max())) * k
    for _ in range(3 * k + 3):
        gradient = a.T @ (b - a @ x)
        entering = bounded & ~passive & (gradient > tolerance)
        if not entering.any():
            break
        passive[int(np.argmax(np.where(entering, gradient, -np.inf)))] = True
        x = _project(a, b, x, passive, bounded)
        passive = ~bounded | (x > 0)
    return x


def _project(a: np.ndarray, b: np.ndarray, x: np.ndarray, passive: np.ndarray,
             bounded: np.ndarray) -> np.ndarray:
    """Lawson-Hanson's inner loop: solve on the passive set, and while a bounded entry of the
    solution is <= 0 step from `x` towards it as far as feasibility allows, releasing the entries
    that reach 0. `x` must be feasible; returns a feasible x."""
    passive = passive.copy()
    x = np.where(bounded, np.maximum(x, 0.0), x)
    for _ in range(a.shape[1] + 1):
        z = np.zeros_like(x)
        z[passive] = _lstsq(a[:, passive], b)
        blocked = passive & bounded & (z <= 0)
        if not blocked.any():
            return z
        step = np.min(x[blocked] / (x[blocked] - z[blocked]))
        x = x + step * (z - x)
        passive &= ~(bounded & (x <= 1e-15 * np.abs(x).max(initial=1.0)))
        x[~passive] = 0.0
    return x


def _lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares on the given columns (an empty set of columns: no unknowns)."""
    return np.linalg.lstsq(a, b, rcond=None)[0] if a.shape[1] else np.zeros(0)


@dataclass(frozen=True)
class FitStatistics:
    """The statistics of a relative fit (in the units of the constants), as statsmodels' WLS
    would report them."""
    constants: np.ndarray
    stderr: np.ndarray
    pvalues: np.ndarray
    cov: np.ndarray
    r2: float                 # R² of the weighted (relative) fit, centred
    scale: float              # residual standard deviation of the relative residuals
    df: int                   # residual degrees of freedom


PINV_RCOND = 1e-15          # singular values below this fraction of the largest count as 0


def fit_statistics(design: np.ndarray, time: np.ndarray, fit: RelativeFit) -> FitStatistics:
    """Standard errors, p-values (t-test of H0: constant = 0), covariance and R² of `fit`:
    weighted least squares with the fit's final weights 1/base², computed the way statsmodels'
    WLS computes them (pseudo-inverse by SVD, rank from the singular values), in numpy, so
    that a fit does not pay statsmodels' second of import (tests/test_fit_statistics.py)."""
    column_scale = _column_scale(design)
    weights = 1.0 / fit.base ** 2
    root = np.sqrt(weights)
    wexog, wendog = design / column_scale * root[:, None], time * root
    u, singular, vt = np.linalg.svd(wexog, full_matrices=False)
    inverse = np.where(singular > PINV_RCOND * singular.max(), 1.0 / singular, 0.0)
    params = vt.T @ (inverse * (u.T @ wendog))
    rank = int(np.sum(singular > singular.max() * len(singular) * np.finfo(float).eps))
    df = len(time) - rank
    residuals = wendog - wexog @ params
    ssr = float(residuals @ residuals)
    centered_tss = float(np.sum(weights * (time - np.average(time, weights=weights)) ** 2))
    r2 = 1 - ssr / centered_tss if centered_tss > 0 else 1.0
    k = len(column_scale)
    if df > 0:
        cov = (vt.T * inverse ** 2) @ vt * (ssr / df)      # of the scaled constants
        with np.errstate(divide="ignore", invalid="ignore"):
            pvalues = student_t.two_sided_p(params / np.sqrt(np.diag(cov)), df)
        cov, sigma = cov / np.outer(column_scale, column_scale), float(np.sqrt(ssr / df))
    else:
        cov, pvalues, sigma = np.full((k, k), np.nan), np.full(k, np.nan), float("nan")
    return FitStatistics(params / column_scale, np.sqrt(np.diag(cov)), pvalues, cov, r2, sigma, df)
