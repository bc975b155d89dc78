"""Student's t distribution: the two-sided p-values of a fit's constants and the quantile of its
prediction intervals, in plain Python (math.lgamma and a continued fraction).

scipy.stats would cost 0.2-0.8 s of import on every `llac` run that fits; these few functions
agree with it to better than 1e-10 relative (1e-13 below 10^4 degrees of freedom;
tests/test_student_t.py checks against scipy).
"""
from __future__ import annotations

import functools
import math

import numpy as np

_TINY = 1e-300          # keeps the continued fraction's denominators away from 0
_EPSILON = 1e-15        # relative change at which the continued fraction has converged
_MAX_TERMS = 100_000    # ample: the fraction needs about sqrt(df) terms
_STIRLING_FROM = 100     # ln B(a, 1/2) by Stirling's series from this a on


def two_sided_p(tvalues: np.ndarray, df: int) -> np.ndarray:
    """P(|T| >= |t|) for each t, T ~ Student t with `df` degrees of freedom (NaN stays NaN)."""
    tvalues = np.abs(np.asarray(tvalues, dtype=float))
    return np.array([math.nan if math.isnan(t) else 2 * upper_tail(t, df) for t in tvalues.ravel()]
                    ).reshape(tvalues.shape)


def upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0: half the regularised incomplete beta I_x(df/2, 1/2), x = df/(df+t²)."""
    if t == math.inf:
        return 0.0
    x, complement = df / (df + t * t), t * t / (df + t * t)
    return 0.5 * _incomplete_beta(df / 2, 0.5, x, complement)


@functools.lru_cache(maxsize=1024)
def quantile(upper: float, df: float) -> float:
    """The t >= 0 with P(T > t) = `upper` (0 < upper <= 0.5), by bisection to machine precision
    (or to 2^-200 near 0). Kept per (upper, df): a split's tests and a model's intervals ask for
    the same few quantiles hundreds of times, and each bisection costs some 60 tail integrals."""
    low, high = 0.0, 1.0
    while upper_tail(high, df) > upper:
        low, high = high, 2 * high
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if upper_tail(middle, df) > upper:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def _incomplete_beta(a: float, b: float, x: float, complement: float) -> float:
    """I_x(a, b), with `complement` = 1 - x given separately so that neither loses digits;
    the continued fraction is used where it converges fast (Numerical Recipes §6.4)."""
    if x <= 0.0:
        return 0.0
    if complement <= 0.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(b, a, complement, x)
    log_x = math.log(x) if x < 0.5 else math.log1p(-complement)
    log_complement = math.log(complement) if complement < 0.5 else math.log1p(-x)
    log_front = a * log_x + b * log_complement - _log_beta(a, b)
    return math.exp(log_front) * _fraction(a, b, x) / a


def _log_beta(a: float, b: float) -> float:
    """ln B(a, b). For a large argument with b = 1/2 (or the reverse), lgamma(a + b) - lgamma(a)
    would lose digits to cancellation, so Stirling's series is subtracted analytically."""
    small, large = sorted((a, b))
    if small != 0.5 or large < _STIRLING_FROM:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(z) = (z - 1/2) ln z - z + ln(2π)/2 + δ(z); for z = large + 1/2 and z = large:
    difference = large * math.log1p(0.5 / large) + 0.5 * math.log(large) - 0.5 \
        + _stirling_correction(large + 0.5) - _stirling_correction(large)
    return math.lgamma(0.5) - difference


def _stirling_correction(z: float) -> float:
    """δ(z) = lgamma(z) - ((z - 1/2) ln z - z + ln(2π)/2), by its asymptotic series (z >= 100)."""
    inverse = 1.0 / (z * z)
    return (1 / 12 - inverse * (1 / 360 - inverse / 1260)) / z


def _fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), evaluated by the modified Lentz method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    value = d
    for m in range(1, _MAX_TERMS):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            value *= c * d
        if abs(c * d - 1.0) < _EPSILON:
            break
    return value
