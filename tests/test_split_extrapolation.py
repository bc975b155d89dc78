"""The pieces that predictions beyond the data use: they get the interval budget first (best-
first search) and are searched for a cut even when their in-range error is below the
threshold, because extrapolation magnifies a change that the in-range error hides."""
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
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


RAMP_SIZES = np.array([1001 * 1.19 ** i for i in range(25)]).round() // 2 * 2 + 1   # odd, x1.19: 1001 .. 65111


def _ramp(n):
    """1e-9 s per element up to N = 12000, rising to 2e-9 s at N = 40000 (linearly in log N)
    and flat beyond: a working set passing from the last cache into memory over several
    sizes, as the jacobi kernel's of benchmarks/accuracy does."""
    share = np.clip(np.log(n / 12000) / np.log(40000 / 12000), 0, 1)
    return 1e-6 + 1e-9 * n * (1 + share)


def _ramp_experiment(seed=0):
    columns = grid(reps=5, N=RAMP_SIZES)
    rng = np.random.default_rng(seed)
    time = _ramp(columns["N"]) * (1 + 0.03 * rng.standard_normal(len(columns["N"])))
    return Experiment("f", parse_formula("f[0] + f[1]*N"), {"N": columns["N"], "time": time})


@pytest.mark.parametrize("seed", range(4))
def test_a_ramp_through_the_last_interval_is_cut_and_predictions_use_its_top(seed):
    """A ramp, not a step: the Chow test finds no single change in it, and the last interval's
    constants average over it: without the trend cut the prediction 4x beyond is 20% low. The
    trend of its residuals cuts it; predictions then use the top of the ramp."""
    model = fit_experiment(_ramp_experiment(seed))
    trend = [c for c in model.cuts if c.test == "trend"]
    assert len(trend) == 1 and trend[0].F > 0 and trend[0].p_value < 0.05
    assert trend[0].value > 12000
    far = 4 * RAMP_SIZES[-1]
    assert _error_beyond(model, _ramp(far), far) < 0.08


def test_no_trend_cut_where_the_repetitions_disagree_more_than_the_trend_moves():
    """On cores shared with busy programs the repetitions of each size disagree by tens of
    percent, and descheduling can make the wall time trend with the size: such a trend is no
    cut when it moves the fitted times by less than the repetitions' spread. The same ramp
    with its repetitions slowed by up to 150% (the fastest one of each size kept) is not cut
    by a trend."""
    data = _ramp_experiment()
    rng = np.random.default_rng(5)
    n, time = data.columns["N"], data.columns["time"].copy()
    slowed = rng.uniform(0.5, 1.5, len(n))
    for size in np.unique(n):
        slowed[np.flatnonzero(n == size)[0]] = 0.0
    loaded = data.replace(columns={"N": n, "time": time * (1 + slowed)})
    assert not any(c.test == "trend" for c in fit_experiment(loaded).cuts)
    assert any(c.test == "trend" for c in fit_experiment(data).cuts)


def test_a_trend_cut_stays_within_the_interval_budget():
    data = _ramp_experiment()
    for intervals in (1, 2):
        model = fit_experiment(data, replace(fit_experiment(data).settings, maxintervals=intervals))
        assert len(model.cuts) <= intervals - 1


def test_a_trend_cut_the_budget_keeps_out_is_blamed_on_the_budget():
    """With one interval allowed, the ramp's trend cut cannot be made: the warning on the
    interval's error names the setting and where a larger one would cut, not the statistics."""
    data = _ramp_experiment()
    model = fit_experiment(data, replace(fit_experiment(data).settings, maxintervals=1))
    assert model.cuts == ()
    said = [w for w in model.warnings if "allows no further cut" in w]
    assert len(said) == 1 and "`set maxintervals 1`" in said[0] and "a larger one lets the fit cut at N = " in said[0]
    assert not any("no statistically real cut lowers it" in w for w in model.warnings)


def test_no_trend_cut_where_the_last_interval_has_no_trend():
    rates = []
    for seed in range(10):
        columns = grid(reps=5, N=RAMP_SIZES)
        data = synthetic("f[0] + f[1]*N", columns, [1e-6, 1e-9], noise=0.02, seed=seed)
        rates.append(any(c.test == "trend" for c in fit_experiment(data).cuts))
    assert sum(rates) <= 1


def test_the_user_sees_the_trend_cut_and_a_saved_model_keeps_it(tmp_path):
    data = _ramp_experiment()
    (tmp_path / "ramp.csv").write_text("N,time\n" + "".join(
        f"{n:g},{t:.9g}\n" for n, t in zip(data.columns["N"], data.columns["time"])))
    load = 'load "ramp.csv" as e formula "f[0] + f[1]*N"; '
    fit = subprocess.run([sys.executable, "-m", "llac", "-c", load + 'fit e; export e.model "e.json"'],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert fit.returncode == 0 and fit.stderr == "", fit.stderr
    said = [line for line in fit.stdout.splitlines() if "through the last interval" in line]
    assert len(said) == 1 and said[0].startswith("cut at N = ")
    assert "the residuals rise with N through the last interval (Spearman " in said[0]
    assert said[0].split("): ", 1)[1].startswith(
        "predictions beyond the data use its upper half (if the cost per unit of work never levels off, "
        "the formula misses a term: `suggest` ranks others), ΔBIC = ")
    again = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "e.json" as m; show m'],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert said[0] in again.stdout.splitlines()
