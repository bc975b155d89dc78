"""The relative least-squares fit: constants recovered from synthetic data, data preparation
(exclusion, aggregation) and every user-caused FitError."""
import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.model import FitError, FitSettings, fit_experiment
from support.fit import grid, synthetic

POWERS = 2.0 ** np.arange(4, 21)


@pytest.mark.parametrize("formula, axes, constants", [
    ("f[0] + f[1]*N", {"N": POWERS}, [1e-5, 1e-9]),
    ("f[0] + f[1]*N*log(N)", {"N": POWERS}, [2e-5, 3e-10]),
    ("f[0] + f[1]*N + f[2]*N*N", {"N": POWERS}, [1e-5, 1e-8, 1e-13]),
    ("f[0] + f[1]*(N/P)*log(N/P) + f[2]*N*(P-1)/P",
     {"N": 2.0 ** np.arange(10, 23), "P": [1, 2, 4, 8, 16, 32]}, [1e-4, 2e-9, 1e-9]),
])
def test_recovers_constants_within_2_percent_at_3_percent_noise(formula, axes, constants):
    # symmetric noise: its median is unbiased (the default minimum estimates the fastest run)
    model = fit_experiment(synthetic(formula, grid(reps=10, **axes), constants, noise=0.03, seed=3),
                           FitSettings(aggregate="median"))
    assert len(model.pieces) == 1 and model.cuts == ()
    piece = model.pieces[0]
    np.testing.assert_allclose(piece.constants, constants, rtol=0.02)
    assert np.all(piece.stderr > 0) and np.all(piece.pvalues < 1e-6)
    assert piece.r2 > 0.99
    assert model.median_rel_error < 0.03 and model.warnings == ()
    assert piece.npoints == len(model.sample_points["time"])
    assert piece.nrecords == model.sample_points["count"].sum() == 10 * piece.npoints


def test_fit_without_splitting_reports_error_above_threshold():
    columns = grid(reps=3, N=POWERS)
    constants = np.where(columns["N"][:, None] <= 4096, [1e-5, 1e-9], [1e-5, 4e-9])
    model = fit_experiment(synthetic("f[0] + f[1]*N", columns, constants, seed=1),
                           FitSettings(split=False))
    assert len(model.pieces) == 1
    assert any("above the threshold 5.0%: splitting is off" in w for w in model.warnings)


def test_invalid_times_are_excluded_and_counted():
    good = synthetic("f[0] + f[1]*N", grid(reps=5, N=POWERS), [1e-5, 1e-9], seed=2)
    bad_times = [np.nan, np.inf, -np.inf, 0.0, -1e-3]
    columns = {"N": np.concatenate([good.columns["N"], [64.0] * 5]),
               "time": np.concatenate([good.columns["time"], bad_times])}
    model = fit_experiment(good.replace(columns=columns))
    clean = fit_experiment(good)
    assert model.excluded == 5 and clean.excluded == 0
    assert "5 records excluded: NaN, inf or non-positive time" in model.warnings
    np.testing.assert_array_equal(model.pieces[0].constants, clean.pieces[0].constants)


@pytest.mark.parametrize("aggregate, reduce", [("median", np.median), ("min", np.min), ("mean", np.mean)])
def test_repetitions_are_aggregated_per_sample_point(aggregate, reduce):
    rng = np.random.default_rng(7)
    n = 400
    N = rng.choice([16.0, 64.0, 256.0, 1024.0], n)
    P = rng.choice([1.0, 2.0, 4.0], n)
    time = (1e-5 + 1e-8 * N / P) * rng.lognormal(0, 0.05, n)
    experiment = Experiment("agg", parse_formula("f[0] + f[1]*N/P"), {"N": N, "P": P, "time": time})
    points = fit_experiment(experiment, FitSettings(aggregate=aggregate)).sample_points
    expected = {}
    for key in sorted(set(zip(N, P))):
        chosen = (N == key[0]) & (P == key[1])
        expected[key] = (reduce(time[chosen]), chosen.sum())
    assert [tuple(k) for k in zip(points["N"], points["P"])] == list(expected)
    np.testing.assert_allclose(points["time"], [v[0] for v in expected.values()], rtol=1e-12)
    np.testing.assert_array_equal(points["count"], [v[1] for v in expected.values()])


def _message(formula: str, columns: dict, settings: FitSettings = FitSettings()) -> str:
    with pytest.raises(FitError) as caught:
        fit_experiment(Experiment("e", parse_formula(formula), columns), settings)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_constant_whose_term_is_zero_everywhere_is_named():
    N = np.repeat(POWERS, 2)
    message = _message("f[0] + f[1]*N + f[2]*log(P)", {"N": N, "P": np.ones_like(N), "time": 1e-6 * N})
    assert message == ("constant f[2] cannot be determined: its term log(P) is 0 at every "
                       "sample point (every run has P = 1)")


def test_every_constant_whose_term_is_zero_everywhere_is_named_at_once():
    N = np.repeat(POWERS, 2)
    P = np.ones_like(N)
    with pytest.raises(FitError) as caught:
        fit_experiment(Experiment("e", parse_formula("f[0] + f[1]*log(P) + f[2]*N + f[3]*N*(P-1)/P"),
                                  {"N": N, "P": P, "time": 1e-6 * N}), FitSettings())
    assert str(caught.value).startswith("constants f[1] and f[3] cannot be determined: their terms "
                                        "log(P) and N*(P - 1)/P are 0 at every sample point")
    assert caught.value.cure == ("f[1]", "f[3]")


def test_too_few_sample_points():
    N = np.repeat([16.0, 32.0, 64.0], 4)
    message = _message("f[0] + f[1]*N + f[2]*N*N + f[3]*N*N*N", {"N": N, "time": 1e-6 * N})
    assert message == "3 sample points for 4 constants: need at least 4 distinct points"


def test_all_times_invalid():
    N = np.repeat(POWERS[:4], 3)
    time = np.array([np.nan, np.inf, 0.0, -1.0] * 3)
    assert _message("f[0] + f[1]*N", {"N": N, "time": time}) == \
        "no valid times: 12 records have NaN, inf or non-positive time"


def test_terms_linearly_dependent_at_the_data_are_named():
    # max(N, 8) is N at every measured N (16 and up), though not whatever N is
    message = _message("f[0]*N + f[1]*max(N, 8)", {"N": POWERS, "time": 1e-6 * POWERS})
    assert message.startswith("constants f[0] and f[1] cannot be told apart")
    assert "linearly dependent" in message


def test_terms_that_differ_somewhere_are_kept():
    for formula in ("f[0] + f[1]*N + f[2]*P", "f[0] + f[1]*N/P + f[2]*N", "f[0] + f[1]*ceil(N/2) + f[2]*N"):
        assert len(parse_formula(formula).terms) == 3


@pytest.mark.parametrize("formula, second", [("f[0]*N + f[1]*2*N", "f[1]"), ("f[0] + f[1]*N^2 + f[2]*N*N", "f[2]"),
                                             ("f[0] + f[1]*2", "f[1]")])
def test_terms_that_cost_the_same_whatever_the_variables_are_refused_in_the_formula(formula, second):
    from cll_grammar.formula import FormulaError
    with pytest.raises(FormulaError) as caught:
        parse_formula(formula)
    assert "cost the same up to a factor whatever the variables" in str(caught.value)
    assert formula[caught.value.span.column - 1:].startswith(second)


def test_term_not_finite_at_the_data():
    N = np.array([0.0, 16.0, 32.0, 64.0])
    message = _message("f[0] + f[1]*log(N)", {"N": N, "time": np.full(4, 1e-3)})
    assert message == "term f[1]*log(N) is not finite at 1 sample point (e.g. N=0)"


def test_missing_column_and_bad_settings():
    assert "no column 'P'" in _message("f[0] + f[1]*N/P", {"N": POWERS, "time": 1e-6 * POWERS})
    columns = {"N": POWERS, "time": 1e-6 * POWERS}
    assert "unknown aggregate 'mode'" in _message("f[0] + f[1]*N", columns, FitSettings(aggregate="mode"))
    assert _message("f[0] + f[1]*N", columns, FitSettings(alpha=1.5)) == "alpha must be between 0 and 1"
