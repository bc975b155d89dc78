"""How fast a model's predictions lose accuracy beyond the measured range, measured on its own
data by backtesting: refit the whole model (splitting included) on the smaller values of a
variable, predict the larger ones, and relate the errors to the distance. Prediction intervals
beyond the data widen by this rate (docs/method.md §6): a model that fits the measured range to
1% can be 20% off at 4x, and an interval that ignores it claims a precision the model does not
have (issue 10)."""
from __future__ import annotations

from typing import Callable

import numpy as np

HOLD_OUT = (2 ** 0.5, 2.0, 2 ** 1.5, 4.0)   # backtests hold out the values above max / each factor
MAX_POINTS = 2000       # more sample points: no backtests (each is a whole fit)


def drift_rates(variables: dict[str, np.ndarray], time: np.ndarray, noise: np.ndarray,
                refit: Callable[[np.ndarray], object]) -> dict[str, float]:
    """For each variable, the rate g at which the log error of a prediction grows with the log
    distance d beyond the fitted range. Backtests: `refit(mask)` fits the model on the sample
    points in `mask` (those whose value of the variable is at most max / f for each f of
    HOLD_OUT) and predicts the points above; their squared log errors e² are fitted as
    s² + g²·d² (s² the backtest model's own squared error, d = log(x / largest fitted x)),
    least squares through the origin in d², each point weighted by 1/noise². A variable whose
    backtests cannot be fitted (too few values left) has rate 0; so has every variable of a
    model with more than MAX_POINTS points."""
    if len(time) > MAX_POINTS:
        return {}
    rates = {}
    for name, x in variables.items():
        values = np.unique(x)
        ends = {values[values <= values[-1] / factor].max(initial=-np.inf) for factor in HOLD_OUT}
        sums = np.zeros(2)                 # sum w·d²·(e² - s²), sum w·d⁴
        for end in sorted(e for e in ends if e > 0):
            model = refit(x <= end)
            if model is None:
                continue
            above = x > end
            predicted = model.predict({v: a[above] for v, a in variables.items()}).values
            with np.errstate(divide="ignore", invalid="ignore"):
                error = np.log(predicted / time[above])
                distance = np.log(x[above] / end)
            ok = np.isfinite(error) & (distance > 0)
            weight = 1 / noise[above][ok] ** 2
            own = (model.median_rel_error / 0.6745) ** 2
            sums += [np.sum(weight * distance[ok] ** 2 * (error[ok] ** 2 - own)),
                     np.sum(weight * distance[ok] ** 4)]
        if sums[1] > 0:
            rates[name] = float(np.sqrt(max(sums[0], 0.0) / sums[1]))
    return rates


def log_distance(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """How far beyond [low, high] each value lies, in log units (0 inside; a non-positive
    bound counts as 0, since the log distance is undefined there; a non-positive value below a
    positive range is infinitely far: nothing measured tells how wrong the model is there)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.where((x > high) & (high > 0), np.log(x / high), 0.0)
        below = np.where((x < low) & (low > 0), np.where(x > 0, np.log(low / x), np.inf), 0.0)
    return np.nan_to_num(above + below, posinf=np.inf)
