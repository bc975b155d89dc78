"""Interval splitting: known cuts are found where they are, with the right constants on each
side; pure noise is not split; the limits and the warning about too many intervals hold."""
import numpy as np
import pytest

from llac.model import FitSettings, fit_experiment
from llac.split import cut_value
from support.fit import SYMMETRIC, grid, piecewise, synthetic

N_VALUES = 2.0 ** np.arange(4, 23)          # 16 .. 4M, 19 sample values
P_VALUES = [1, 2, 4, 8, 16, 32, 64]


def _piece_at(model, **point):
    """The piece containing `point`."""
    return model.pieces[int(model.predict(point).piece[0])]


def test_one_cut_on_N():
    columns = grid(reps=5, N=N_VALUES)
    small, large = [1e-5, 1e-9], [3e-5, 4e-9]
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns,
                                     piecewise(columns["N"] <= 4096, small, large), seed=11), SYMMETRIC)
    (cut,) = model.cuts
    assert cut.variable == "N" and 4096 < cut.value < 8192
    assert cut.value == pytest.approx(np.sqrt(4096 * 8192))
    assert cut.p_value < 0.05 and cut.delta_bic < 0 and cut.error_after < cut.error_before
    assert [p.region["N"] for p in model.pieces] == [(-np.inf, cut.value), (cut.value, np.inf)]
    np.testing.assert_allclose(model.pieces[0].constants, small, rtol=0.03)
    np.testing.assert_allclose(model.pieces[1].constants, large, rtol=0.03)
    assert model.pieces[0].measured_range["N"] == (16, 4096)


def test_two_cuts_on_N():
    columns = grid(reps=5, N=N_VALUES)
    N = columns["N"]
    truth = [[1e-7, 1e-9], [1e-7, 3e-9], [1e-7, 8e-9]]
    constants = piecewise(N <= 1024, truth[0], piecewise(N <= 65536, truth[1], truth[2]))
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns, constants, seed=5), SYMMETRIC)
    assert sorted(c.value for c in model.cuts) == pytest.approx([np.sqrt(1024 * 2048),
                                                                 np.sqrt(65536 * 131072)])
    assert len(model.pieces) == 3
    for piece, expected in zip(model.pieces, truth):
        assert piece.constants[1] == pytest.approx(expected[1], rel=0.03)
    assert not any("probably wrong" in w for w in model.warnings)


def test_one_cut_on_P():
    columns = grid(reps=3, N=2.0 ** np.arange(10, 22), P=P_VALUES)
    formula = "f[0] + f[1]*N/P + f[2]*log2(P)"
    truth = ([1e-5, 2e-9, 1e-6], [1e-5, 2e-9, 2e-5])
    model = fit_experiment(synthetic(formula, columns, piecewise(columns["P"] <= 4, *truth), seed=2), SYMMETRIC)
    (cut,) = model.cuts
    assert cut.variable == "P" and 4 < cut.value < 8
    np.testing.assert_allclose(_piece_at(model, N=4096, P=8).constants, truth[1], rtol=0.05)
    np.testing.assert_allclose(_piece_at(model, N=4096, P=2).constants[1:], truth[0][1:], rtol=0.05)


def test_two_cuts_on_P():
    columns = grid(reps=3, N=2.0 ** np.arange(10, 22), P=P_VALUES)
    P = columns["P"]
    truth = [[1e-5, 2e-9], [1e-5, 5e-9], [1e-5, 12e-9]]
    model = fit_experiment(synthetic("f[0] + f[1]*N/P", columns,
                                     piecewise(P <= 2, truth[0], piecewise(P <= 16, truth[1], truth[2])),
                                     seed=4))
    assert sorted((c.variable, round(c.value, 6)) for c in model.cuts) == \
        [("P", round(np.sqrt(8), 6)), ("P", round(np.sqrt(512), 6))]
    for P_in, expected in zip([1, 8, 64], truth):
        assert _piece_at(model, N=1e5, P=P_in).constants[1] == pytest.approx(expected[1], rel=0.03)


def test_cuts_on_N_and_P_make_boxes():
    columns = grid(reps=3, N=2.0 ** np.arange(8, 22), P=P_VALUES[:6])
    N, P = columns["N"], columns["P"]
    slope = 1e-9 * np.where(N <= 32768, 1.0, 3.0) * np.where(P <= 4, 1.0, 2.0)
    constants = np.column_stack([np.full(len(N), 1e-5), slope])
    model = fit_experiment(synthetic("f[0] + f[1]*N/P", columns, constants, seed=9), SYMMETRIC)
    assert {c.variable for c in model.cuts} == {"N", "P"} and len(model.pieces) == 4
    for n_in, p_in, expected in [(1024, 2, 1e-9), (1024, 32, 2e-9), (1e6, 2, 3e-9), (1e6, 32, 6e-9)]:
        assert _piece_at(model, N=n_in, P=p_in).constants[1] == pytest.approx(expected, rel=0.03)


def test_pure_noise_is_not_split():
    columns = grid(reps=1, N=2.0 ** np.arange(4, 18))
    strict = FitSettings(threshold=0.0)      # the split search runs every time
    split_default = split_strict = 0
    for trial in range(100):
        experiment = synthetic("f[0] + f[1]*N", columns, [1e-5, 1e-9], noise=0.05, seed=1000 + trial)
        split_default += bool(fit_experiment(experiment).cuts)
        split_strict += bool(fit_experiment(experiment, strict).cuts)
    assert split_default <= 5 and split_strict <= 5


def test_maxintervals_limits_cuts_and_too_many_intervals_warn():
    columns = grid(reps=5, N=N_VALUES)
    N = columns["N"]
    slopes = np.select([N <= 256, N <= 4096, N <= 65536, N <= 2 ** 19], [1e-9, 3e-9, 9e-9, 27e-9], 81e-9)
    constants = np.column_stack([np.full(len(N), 1e-8), slopes])
    experiment = synthetic("f[0] + f[1]*N", columns, constants, seed=8)
    limited = fit_experiment(experiment)
    assert len(limited.pieces) == 3
    assert any("above the threshold" in w for w in limited.warnings)
    free = fit_experiment(experiment, FitSettings(maxintervals=6, minpoints=3))
    assert len(free.pieces) == 5
    assert "5 intervals on N: the formula is probably wrong" in free.warnings


def test_same_seed_same_result():
    columns = grid(reps=2, N=N_VALUES)
    experiment = synthetic("f[0] + f[1]*N", columns,
                           piecewise(columns["N"] <= 4096, [1e-5, 1e-9], [1e-5, 1.3e-9]), seed=6)
    runs = [fit_experiment(experiment, FitSettings(seed=3)).cuts for _ in range(2)]
    assert runs[0] == runs[1]


def test_cut_value_rule():
    np.testing.assert_allclose(cut_value(np.array([4.0, -2.0, 0.0]), np.array([16.0, 2.0, 8.0])),
                               [8.0, 0.0, 4.0])


def test_many_distinct_points_use_spread_candidates_and_a_subset_bootstrap():
    rng = np.random.default_rng(12)
    N = np.exp(rng.uniform(np.log(16), np.log(2 ** 22), 20000))
    constants = piecewise(N <= 50000, [1e-7, 1e-9], [1e-7, 3e-9])
    model = fit_experiment(synthetic("f[0] + f[1]*N", {"N": N}, constants, seed=12))
    # 48 spread candidates put the first cut near, not at, 50000; the last interval (used
    # beyond the data) may then be cut again next to it, to drop the other regime's points.
    assert 1 <= len(model.cuts) <= 2
    for cut in model.cuts:
        assert cut.variable == "N" and 50000 / 1.3 < cut.value < 50000 * 1.3 and cut.p_value < 0.05
    assert len(model.sample_points["N"]) == 20000
    assert model.pieces[-1].constants[1] == pytest.approx(3e-9, rel=0.02)
