"""The fitted model as the session uses it: prediction with intervals and extrapolation flags,
the sets ℵ, and constants flagged as insignificant."""
from dataclasses import replace

import numpy as np
import pytest

from llac.model import FitError, fit_experiment
from support.fit import SYMMETRIC, grid, piecewise, synthetic

N_VALUES = 2.0 ** np.arange(4, 21)


@pytest.fixture(scope="module")
def split_model():
    columns = grid(reps=5, N=N_VALUES)
    constants = piecewise(columns["N"] <= 4096, [1e-5, 1e-9], [3e-5, 4e-9])
    return fit_experiment(synthetic("f[0] + f[1]*N", columns, constants, seed=11), SYMMETRIC)


def test_predict_inside_the_measured_range(split_model):
    N = np.array([64.0, 1000.0, 20000.0, 500000.0])
    truth = np.where(N <= 4096, 1e-5 + 1e-9 * N, 3e-5 + 4e-9 * N)
    prediction = split_model.predict({"N": N})
    np.testing.assert_allclose(prediction.values, truth, rtol=0.03)
    assert list(prediction.piece) == [0, 0, 1, 1]
    assert np.all(prediction.lower < prediction.values) and np.all(prediction.values < prediction.upper)
    assert np.all((prediction.lower < truth) & (truth < prediction.upper))
    assert not prediction.extrapolated.any() and prediction.notes == ()


def test_predict_outside_the_measured_range_is_flagged(split_model):
    prediction = split_model.predict({"N": [5000.0, 1e7, 2048.0]})
    assert list(prediction.extrapolated) == [True, True, False]
    assert list(prediction.piece) == [0, 1, 0]
    assert prediction.notes == (
        "N=5000: outside the measured range 16..4096 of N in interval 1",
        "N=10000000: outside the measured range 8192..1048576 of N in interval 2 "
        "and beyond all measured data",
        "N=5000: between the measured N=4096 and N=8192, where the fit cuts (at 5792.62, between them): "
        "where the regime changes there was not measured, so either interval's constants may hold, and the "
        "interval reaches both; measure there to place the cut")
    assert prediction.upper[0] >= (3e-5 + 4e-9 * 5000) * 0.97   # interval 2's time is within it
    assert prediction.values[1] == pytest.approx(3e-5 + 4e-9 * 1e7, rel=0.03)


def test_a_prediction_of_no_time_is_a_warning_not_a_silent_zero(split_model):
    zeroed = replace(split_model, pieces=(replace(split_model.pieces[0], constants=np.zeros(2)),
                                          *split_model.pieces[1:]))
    prediction = zeroed.predict({"N": [64.0, 1000.0, 20000.0]})
    assert list(prediction.values[:2]) == [0, 0] and prediction.values[2] > 0
    [warning] = [n for n in prediction.notes if n.startswith("warning: the model predicts no time")]
    assert "at 2 point(s), first N=64 (interval 1)" in warning and "set constants free" in warning
    assert not any("no time" in n for n in split_model.predict({"N": [64.0]}).notes)


def test_predict_needs_every_variable(split_model):
    with pytest.raises(FitError, match="predict needs a value for N"):
        split_model.predict({"P": 4})


def test_prediction_interval_covers_new_measurements():
    columns = grid(reps=1, N=N_VALUES)
    inside = []
    for seed in range(30):
        model = fit_experiment(synthetic("f[0] + f[1]*N", columns, [1e-5, 1e-9], noise=0.05, seed=seed))
        fresh = synthetic("f[0] + f[1]*N", columns, [1e-5, 1e-9], noise=0.05, seed=1000 + seed)
        prediction = model.predict({"N": N_VALUES})
        time = fresh.columns["time"]
        inside.append(np.mean((time >= prediction.lower) & (time <= prediction.upper)))
    assert 0.88 < np.mean(inside) < 0.99


def test_aleph_lists_each_constant_per_piece(split_model):
    aleph = split_model.aleph()
    assert list(aleph) == ["f[0]", "f[1]"]
    cut = split_model.cuts[0].value
    regions = [{"N": (-np.inf, cut)}, {"N": (cut, np.inf)}]
    for name, truth in [("f[0]", [1e-5, 3e-5]), ("f[1]", [1e-9, 4e-9])]:
        assert [region for _, region in aleph[name]] == regions
        np.testing.assert_allclose([value for value, _ in aleph[name]], truth, rtol=0.05)


def test_constant_below_the_noise_is_flagged():
    columns = grid(reps=3, N=N_VALUES)
    data = synthetic("f[0] + f[1]*N", columns, [1e-12, 1e-9], noise=0.03, seed=5)
    model = fit_experiment(data, replace(SYMMETRIC, prune=False, constants="free"))
    assert model.insignificant == ("f[0]",)
    assert any(w.startswith("constant f[0] is not significantly different from 0 (p=")
               and w.endswith("in the fit") for w in model.warnings)
    pruned = fit_experiment(data, replace(SYMMETRIC, constants="free"))  # pruning set it to 0 and says so, once
    assert pruned.insignificant == ("f[0]",)
    assert [w for w in pruned.warnings if "f[0]" in w] == [
        next(w for w in pruned.warnings if w.startswith("constant f[0] set to 0 in the fit"))]
    data = synthetic("f[0] + f[1]*N", columns, [1e-12, 1e-9], noise=0.03, seed=5)
    dropped = fit_experiment(data.replace(formula=model.formula.without([0])), SYMMETRIC)
    assert dropped.insignificant == () and dropped.warnings == ()
    assert dropped.pieces[0].constants[0] == pytest.approx(1e-9, rel=0.02)


def test_constant_below_the_noise_is_set_to_zero_and_extrapolation_improves():
    columns = grid(reps=3, N=N_VALUES[:12])
    data = synthetic("f[0] + f[1]*N", columns, [1e-12, 1e-9], noise=0.03, seed=5)
    free = replace(SYMMETRIC, constants="free")   # f[0] comes out negative here: pruning, not the bound
    pruned, kept = fit_experiment(data, free), fit_experiment(data, replace(free, prune=False))
    piece = pruned.pieces[0]
    assert piece.dropped == ("f[0]",) and kept.pieces[0].dropped == ()
    assert piece.constants[0] == 0 and piece.stderr[0] == 0 and piece.pvalues[0] > 0.05
    assert piece.df == kept.pieces[0].df + 1 and piece.constants[1] == pytest.approx(1e-9, rel=0.02)
    assert any(w.startswith("constant f[0] set to 0 in the fit: not significantly different from 0 (p=")
               for w in pruned.warnings)
    assert pruned.insignificant == kept.insignificant == ("f[0]",)
    errors = []                        # extrapolating 2^9 times beyond, over 20 data sets
    for seed in range(20):
        data = synthetic("f[0] + f[1]*N", columns, [1e-12, 1e-9], noise=0.03, seed=seed)
        errors.append([abs(fit_experiment(data, replace(free, prune=prune)).predict({"N": 2.0 ** 24}).values[0]
                           / (1e-12 + 1e-9 * 2.0 ** 24) - 1) for prune in (True, False)])
    pruned_error, kept_error = np.mean(errors, axis=0)
    assert pruned_error < kept_error


def test_a_significant_constant_is_kept():
    columns = grid(reps=3, N=N_VALUES)
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns, [1e-5, 1e-9], noise=0.03, seed=2))
    assert model.pieces[0].dropped == () and np.all(model.pieces[0].constants > 0)


def test_model_reports_settings_and_errors(split_model):
    assert split_model.name == "e" and split_model.settings == SYMMETRIC
    assert split_model.median_rel_error < 0.02
    assert split_model.median_rel_error <= split_model.max_rel_error < 0.1
    assert split_model.excluded == 0
    assert set(split_model.sample_points) == {"N", "time", "count", "spread"}


def llac_on_csv(tmp_path, formula: str, constants, seed: int, commands: str):
    """`llac -c` on a CSV of synthetic data of `formula` (loaded as `d`) followed by `commands`."""
    import subprocess
    import sys
    columns = grid(reps=3, N=N_VALUES)
    data = synthetic(formula, columns, constants, seed=seed)
    csv = tmp_path / "data.csv"
    csv.write_text("N,time\n" + "".join(f"{n:g},{t:.9g}\n" for n, t in
                                        zip(data.columns["N"], data.columns["time"])))
    return subprocess.run([sys.executable, "-m", "llac", "-c", f'load "{csv}" as d formula "{formula}"; {commands}'],
                          capture_output=True, text=True, timeout=120)


def test_llac_fits_and_predicts_as_a_user_drives_it(tmp_path):
    constants = piecewise(grid(reps=3, N=N_VALUES)["N"] <= 4096, [1e-5, 1e-9], [3e-5, 4e-9])
    result = llac_on_csv(tmp_path, "f[0] + f[1]*N", constants, 11, "fit d; predict d N=1e7")
    assert result.returncode == 0, result.stderr
    assert "5792.62" in result.stdout and "interval 2" in result.stdout
    assert "beyond all measured data" in result.stdout


def test_a_point_where_the_formula_has_no_value_gets_a_warning(tmp_path):
    result = llac_on_csv(tmp_path, "f[0] + f[1]*N*log(N)", [1e-5, 1e-9], 3,
                         "fit d; predict d N=0; predict d N=-5; predict d N=64")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning: the formula has no value")]
    assert warnings == [f"warning: the formula has no value at N={n}: its term f[1]*N*log(N) is not a finite number "
                        f"there (the log of a number <= 0, a division by zero or an overflow); no prediction" for n in (0, -5)]
    far = llac_on_csv(tmp_path, "f[0] + f[1]*N*log(N)", [1e-5, 1e-9], 3, "fit d; predict d N=1e300")
    assert "no prediction interval at N=1e+300: its arithmetic overflows so far beyond the data" in far.stdout
    assert "no prediction interval" not in result.stdout


def test_times_near_the_timers_own_cost_are_a_warning():
    columns = grid(reps=3, N=N_VALUES)
    tiny = synthetic("f[0] + f[1]*N", columns, [2e-8, 1e-15], seed=5)
    with_header = tiny.replace(header={"overhead": "2.3e-08", "timer_resolution": "4.5e-10"})
    [warning] = [w for w in fit_experiment(with_header).warnings if "timer's own cost" in w]
    assert warning.startswith(f"{len(N_VALUES)} of {len(N_VALUES)} sample points take less than 10x "
                              "the timer's own cost (2.3e-08 s")
    slower = synthetic("f[0] + f[1]*N", columns, [1e-5, 1e-9], seed=5).replace(header=with_header.header)
    assert not [w for w in fit_experiment(slower).warnings if "timer's own cost" in w]
    assert not [w for w in fit_experiment(tiny).warnings if "timer's own cost" in w]     # no header: no check


def test_an_interval_that_spans_more_than_a_factor_of_10_is_said_to_be_useless():
    """A line fitted to N^2 data, predicted 4x beyond: the interval (honest, from the backtests)
    spanned 0.004 .. 979 s with no word that it predicts nothing; a right formula 4x beyond
    keeps a narrow interval and no such warning."""
    columns = grid(reps=5, N=[16 * 2 ** (k / 2) for k in range(17)])
    wrong = synthetic("f[0] + f[1]*N", columns, [0.0, 0.0], noise=0.0, name="f")
    wrong = replace(wrong, columns={**wrong.columns, "time": 1e-9 * columns["N"] ** 2
                                    * np.random.default_rng(1).lognormal(0, 0.05, len(columns["N"]))})
    far = fit_experiment(wrong).predict({"N": [4096.0, 16384.0]})
    [said] = [n for n in far.notes if "interval spans a factor of" in n]
    assert said.startswith("warning: at N=16384 (and 1 more point) the 95% interval spans a factor of ")
    assert said.endswith("the model cannot say more there; measure nearer to it, or check the formula (`suggest f`)")
    assert far.upper[1] / far.lower[1] > 10
    right = synthetic("f[0] + f[1]*N", columns, [1e-6, 1e-9], name="f")
    assert not any("spans a factor" in n for n in fit_experiment(right).predict({"N": 16384.0}).notes)
