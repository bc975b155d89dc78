"""A cost per unit of work that keeps rising through the last interval keeps rising beyond it.

A kernel whose working set leaves the caches over the measured range pays more per element
at every larger size (random accesses go further out in memory, and on a virtual machine the
page walks grow too): the time rises against any fixed formula, smoothly, through the whole
interval that predictions beyond the data use. That interval's constants average over the
rise, so each prediction beyond it is low by the rise still to come: 30-50% at 4x beyond
for the accuracy benchmark's hash, spmv and jacobi kernels (issue 10), where Extra-P's
exponent search follows the rise on. So after the fit, each interval that predictions beyond
the data use is tested for such a rise along each variable in which it is unbounded above:
the log ratio of the measured to the fitted times is regressed on the log of the variable
(`log(t / fitted) = intercept + slope * (log x - centre)`) and tested with Spearman's rank
correlation (p < alpha, at least TREND_POINTS distinct values spanning a factor TREND_SPAN;
the trend cut of llac.split asks for 6). A significant rise that also exceeds half the threshold and the repetitions'
spread over the interval (on cores shared with busy programs descheduling slows the larger
sizes more: the repetitions' disagreement shows that rise to be the load's) is kept as the
interval's `Trend`, and predictions beyond the largest measured value of that variable are
multiplied by `exp(intercept + slope * (log x - centre))`. A falling ratio is not continued:
a cost per unit that falls with the size tends to a floor (a fixed cost amortised), a rising
one follows the memory hierarchy outwards (docs/method.md §6). It is off by default (`set
trend on`): judged on six kernels held aside from its design, it helped as often as it hurt.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from llac.advice import spearman
from llac.noise import typical
from llac.numbers import number_text

TREND_POINTS = 5     # fewest distinct values a trend is tested on (4 can never reach p < 0.05)
TREND_SPAN = 2.0     # ... spanning at least this factor: a slope over 1000..1010 is no law


@dataclass(frozen=True)
class Trend:
    """The rise of the measured over the fitted time through an interval, along `variable`:
    log(t / fitted) = intercept + slope * (log x - centre), continued beyond `end` (the
    largest measured value of the variable in the whole data); `stderr` is the slope's
    standard error and `p_value` Spearman's test's."""
    variable: str
    slope: float
    intercept: float
    centre: float
    end: float
    stderr: float
    p_value: float

    def log_factor(self, x: np.ndarray) -> np.ndarray:
        """The log of the factor applied to predictions at values `x` of the variable: the
        regression line beyond `end`, 0 at and below it."""
        with np.errstate(divide="ignore", invalid="ignore"):
            line = self.intercept + self.slope * (np.log(x) - self.centre)
        return np.where(x > self.end, line, 0.0)

    def log_variance(self, x: np.ndarray) -> np.ndarray:
        """The variance of `log_factor` from the slope's uncertainty (0 at and below `end`)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = (self.stderr * (np.log(x) - self.centre)) ** 2
        return np.where(x > self.end, spread, 0.0)

    @property
    def per_doubling(self) -> str:
        """The rise per doubling of the variable, as a percentage (2**slope - 1)."""
        with np.errstate(over="ignore"):
            return f"{100 * np.expm1(self.slope * np.log(2)):.1f}%"

    def text(self) -> str:
        """How `fit` says it: the rise per doubling of the variable."""
        return (f"the time per unit of work rises with {self.variable} through this interval "
                f"({self.per_doubling} per doubling, Spearman p = {self.p_value:.2g}): predictions beyond "
                f"{self.variable} = {number_text(self.end)} continue the rise (`set trend off` and fit "
                f"again: the constants alone)")


def rising_trend(variables: dict[str, np.ndarray], measured: np.ndarray, fitted: np.ndarray,
                 spread: np.ndarray, unbounded: list[str], ends: dict[str, float], alpha: float,
                 threshold: float) -> Trend | None:
    """The most significant rise against the fit (module docstring) of the interval's points
    (`variables`, their `measured` and `fitted` times and repetition `spread`) along one of
    `unbounded` (the variables in which the interval has no upper bound), as a Trend continued
    beyond `ends[variable]`; None when there is none. The values must span at least a factor
    TREND_SPAN: a log-log slope fitted over a narrow sweep (10000..12000) is magnified by every
    step beyond it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(measured / fitted)
    finite = np.isfinite(ratio)
    floor = max(threshold / 2, np.nan_to_num(typical(spread)))      # no repetitions: no spread
    found = []
    for v in unbounded:
        x, r = variables[v][finite], ratio[finite]
        if not np.all(x > 0) or len(np.unique(x)) < TREND_POINTS or not x.max() >= TREND_SPAN * x.min():
            continue
        rho, p_value = spearman(x, r)
        if not (rho > 0 and p_value < alpha):
            continue
        logx = np.log(x)
        centre = float(np.mean(logx))
        slope, intercept, stderr = _line(logx - centre, r)
        if slope > 0 and np.expm1(slope * (logx.max() - logx.min())) > floor:
            found.append(Trend(v, slope, intercept, centre, float(ends[v]), stderr, p_value))
    return min(found, key=lambda t: t.p_value, default=None)


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares slope, intercept and the slope's standard error of y on centred x."""
    sxx = float(np.sum(x * x))
    slope = float(np.sum(x * y)) / sxx
    intercept = float(np.mean(y))
    residual = y - intercept - slope * x
    dof = max(len(x) - 2, 1)
    return slope, intercept, float(np.sqrt(np.sum(residual ** 2) / dof / sxx))
