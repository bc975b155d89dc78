"""The pieces that predictions beyond the data use: they get the interval budget first (best-
first search) and are searched for a cut even when their in-range error is below the
threshold, because extrapolation magnifies a change that the in-range error hides."""
from dataclasses import replace

import numpy as np
import pytest

from llac.model import fit_experiment
from support.fit import SYMMETRIC, grid, synthetic

N_VALUES = 2.0 ** np.arange(4, 23)          # 16 .. 4M


def _slopes(columns, changes):
    """Per-record constants of f[0] + f[1]*N: 1e-8 and a slope starting at 1e-9 that is
    multiplied by `factor` above each `(N, factor)` of `changes`."""
    N = columns["N"]
    slope = np.full(len(N), 1e-9)
    for at, factor in changes:
        slope = np.where(N > at, slope * factor, slope)
    return np.column_stack([np.full(len(N), 1e-8), slope])


def _error_beyond(model, truth, N):
    """Relative error of the model's prediction at N against the truth."""
    return abs(model.predict({"N": N}).values[0] - truth) / truth


def test_the_interval_budget_goes_to_the_change_that_extrapolation_uses():
    # Three changes, two cuts allowed: the big one in the middle, one among small sizes and
    # one near the top. Depth first would spend the second cut on the small sizes.
    columns = grid(reps=5, N=N_VALUES)
    changes = [(128, 2.0), (2 ** 14, 3.0), (2 ** 19, 1.3)]
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns, _slopes(columns, changes), seed=3))
    values = sorted(c.value for c in model.cuts)
    assert len(values) == 2 and values[-1] == pytest.approx(np.sqrt(2.0 ** 19 * 2.0 ** 20))
    truth = 1e-8 + 1e-9 * 7.8 * 2.0 ** 24
    assert _error_beyond(model, truth, 2.0 ** 24) < 0.03


def test_a_change_below_the_threshold_is_still_cut_in_the_last_interval():
    # The slope grows by 12% above 2^19: the single fit's median error stays below 5%, but
    # it would extrapolate the mixed slope.
    columns = grid(reps=5, N=N_VALUES)
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns, _slopes(columns, [(2 ** 19, 1.12)]),
                                     noise=0.01, seed=4), SYMMETRIC)
    whole = fit_experiment(synthetic("f[0] + f[1]*N", columns, _slopes(columns, [(2 ** 19, 1.12)]),
                                     noise=0.01, seed=4), replace(SYMMETRIC, split=False))
    assert whole.median_rel_error < 0.05
    (cut,) = model.cuts
    assert cut.value == pytest.approx(np.sqrt(2.0 ** 19 * 2.0 ** 20)) and cut.p_value < 0.05
    truth = 1e-8 + 1.12e-9 * 2.0 ** 24
    assert _error_beyond(model, truth, 2.0 ** 24) < 0.01 < _error_beyond(whole, truth, 2.0 ** 24)
