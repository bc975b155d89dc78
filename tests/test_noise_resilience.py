"""Issue 10: predictions that survive a noisy machine and intervals that are honest beyond the
data, on seeded synthetic measurements whose noise is what a shared machine does: interference
only adds time, in bursts that last over several measurements."""
import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.fit import noise_factors
from llac.fit_data import aggregate_points
from llac.model import FitSettings, fit_experiment

FIT_MAX = 64001


def sizes() -> np.ndarray:
    """Odd sizes from 1001, x1.19 each, up to 4x beyond FIT_MAX."""
    n = [1001]
    while n[-1] * 1.19 <= 4 * FIT_MAX:
        n.append(int(n[-1] * 1.19) | 1)
    return np.array(n, dtype=float)


def loaded_run(seed: int, truth, formula: str, load: float, reps: int = 5) -> Experiment:
    """A sweep with the repetitions outermost (each size's repetitions spread over the run);
    a two-state load process over the run order slows the measurements it covers by a
    lognormal factor around +40%; 1% Gaussian jitter on every measurement."""
    rng = np.random.default_rng(seed)
    n = np.tile(sizes(), reps)
    loaded, state = np.zeros(len(n)), False
    for i in range(len(n)):
        state = rng.random() < (0.5 + 0.5 * load if state else 0.5 * load)
        loaded[i] = rng.lognormal(np.log(0.4), 0.8) if state else 0.0
    time = truth(n) * (1 + 0.01 * rng.standard_normal(len(n))) * (1 + loaded)
    return Experiment("f", parse_formula(formula), {"N": n, "time": time})


def linear(n):
    return 2e-6 + 1e-9 * n


def n_log_n(n):
    return 2e-6 + 1e-10 * n * np.log(n)


def extrapolate(experiment: Experiment, truth, settings=FitSettings()):
    """Fit the sizes up to FIT_MAX; (the model, the prediction at the larger sizes, the truth there)."""
    model = fit_experiment(experiment.select(experiment.columns["N"] <= FIT_MAX), settings)
    held = sizes()[sizes() > FIT_MAX]
    return model, model.predict({"N": held}), truth(held)


def test_bursty_one_sided_load_gives_no_false_split_and_small_errors_beyond_the_data():
    splits, worst = 0, []
    for seed in range(20):
        model, predicted, truth = extrapolate(loaded_run(seed, linear, "f[0] + f[1]*N", load=0.2), linear)
        splits += len(model.cuts) > 0
        worst.append(np.max(np.abs(predicted.values / truth - 1)))
    assert splits <= 1
    assert np.median(worst) < 0.02 and np.mean(np.array(worst) < 0.05) >= 0.9


def test_the_minimum_survives_load_that_misleads_the_median():
    errors = {aggregate: np.median([np.max(np.abs(p.values / t - 1)) for p, t in
                                    (extrapolate(loaded_run(seed, linear, "f[0] + f[1]*N", load=0.5),
                                                 linear, FitSettings(aggregate=aggregate))[1:]
                                     for seed in range(10))])
              for aggregate in ("min", "median")}
    assert FitSettings().aggregate == "min"
    assert errors["min"] < min(0.03, errors["median"])


def test_a_point_whose_repetitions_disagree_weighs_less_and_a_consistent_one_does_not():
    n = np.repeat([100.0, 200, 300, 400, 500, 600], 5)
    time = 1e-3 * np.repeat([1.0, 1.0, 1.0, 1.3, 1.0, 1.0], 5) * (1 + 0.01 * np.tile([0, 1, 2, 1, 0], 6))
    time[10:15] = 1e-3 * np.array([1.0, 1.5, 1.6, 1.9, 2.4])    # 300: four of five repetitions loaded
    points = aggregate_points(parse_formula("f[0] + f[1]*N"), {"N": n, "time": time}, "min")
    factors = noise_factors(points.spread)
    assert factors[2] > 10 and np.all(np.delete(factors, 2) == 1)   # 400, consistently slower, keeps its weight


@pytest.mark.parametrize("truth, formula", [(linear, "f[0] + f[1]*N"), (n_log_n, "f[0] + f[1]*N")])
def test_the_interval_beyond_the_data_covers_what_happens_there(truth, formula):
    """The nominal 95% interval at up to 4x beyond covers at least 85% of the true times, for
    a right formula and for one that misses a log factor (whose error there is about 12%)."""
    inside = total = 0
    for seed in range(12):
        model, predicted, exact = extrapolate(loaded_run(seed, truth, formula, load=0.0), truth,
                                              FitSettings(aggregate="median"))
        inside += np.sum((predicted.lower <= exact) & (exact <= predicted.upper))
        total += len(exact)
    assert inside / total >= 0.85


def test_the_drift_is_small_for_a_right_formula_and_large_for_a_wrong_one():
    right = fit_experiment(loaded_run(1, linear, "f[0] + f[1]*N", load=0.0))
    wrong = fit_experiment(loaded_run(1, lambda n: 1e-9 * n ** 1.3, "f[0] + f[1]*N", load=0.0))
    assert right.drift["N"] < 0.02 < 0.05 < wrong.drift["N"]
    for model, narrow in ((right, True), (wrong, False)):
        beyond = model.predict({"N": 4 * model.sample_points["N"].max()})
        assert ((beyond.upper[0] - beyond.lower[0]) / beyond.values[0] < 0.1) == narrow
    note = next(n for n in wrong.predict({"N": 4 * wrong.sample_points["N"].max()}).notes if "backtests" in n)
    assert note.startswith("beyond the measured N the interval includes the extrapolation error that "
                           "backtests on the data show (one standard deviation: ±")
    assert not any("backtests" in n for n in wrong.predict({"N": wrong.sample_points["N"].max()}).notes)


def test_a_significant_but_negligible_change_is_no_interval():
    """A 0.4% wiggle that lasts over several neighbouring sizes (what a burst of load does)
    under 0.1% jitter passes the statistical tests; it moves the fitted times by far less than
    half the threshold, so it is not cut (docs/method.md §3 (d)); with threshold 0 it is cut."""
    n = np.tile(sizes()[sizes() <= FIT_MAX], 5)
    rng = np.random.default_rng(2)
    time = linear(n) * (1 + 0.004 * (n > 12000) + 0.001 * rng.standard_normal(len(n)))
    data = Experiment("f", parse_formula("f[0] + f[1]*N"), {"N": n, "time": time})
    assert fit_experiment(data, FitSettings(aggregate="median")).cuts == ()
    assert len(fit_experiment(data, FitSettings(aggregate="median", threshold=0)).cuts) >= 1


def test_the_interval_that_extrapolates_spans_a_factor_two():
    """Sizes x1.19 apart; the last three (a factor 1.4) are 20% slower: too short a range to
    carry predictions 4x beyond, so no cut leaves them alone; the interval beyond the data is
    wide instead (the backtests see the change)."""
    n = np.tile(sizes()[sizes() <= FIT_MAX], 5)
    last = np.unique(n)[-3:]
    time = linear(n) * np.where(np.isin(n, last), 1.2, 1.0)
    data = Experiment("f", parse_formula("f[0] + f[1]*N"), {"N": n, "time": time})
    model = fit_experiment(data)
    for piece in model.pieces:
        if piece.region["N"][1] == np.inf:
            low, high = piece.measured_range["N"]
            assert high / low >= 2
    beyond = model.predict({"N": 4 * FIT_MAX})
    assert (beyond.upper[0] - beyond.lower[0]) / beyond.values[0] > 0.2


def test_far_beyond_the_data_the_low_bound_never_falls_below_a_time_measured_at_a_smaller_input():
    """Review 24: the multiplicative interval's low end fell as N grew (0.0002 s at 6x the data,
    0.00013 s at 8x, where 0.03 s was measured at the largest N). Every term of f[0] + f[1]*N is
    larger beyond the data and the constants are >= 0: the time there cannot be less than the
    time measured at the largest N, less the fit's noise. Inside the data, and with
    `constants free`, nothing changes."""
    run = loaded_run(1, lambda n: 1e-9 * n ** 1.6, "f[0] + f[1]*N", load=0.0)    # a wrong formula
    wrong = fit_experiment(run)
    data = wrong.sample_points
    largest = data["time"][np.argmax(data["N"])]
    far = data["N"].max() * np.array([2.0, 8.0, 64.0, 512.0])
    beyond = wrong.predict({"N": far})
    floor = beyond.lower[-1]
    assert 0.5 * largest < floor < largest and np.all(beyond.lower == floor)      # the same floor everywhere
    note = next(n for n in beyond.notes if "low bound" in n)
    assert note.startswith(f"the low bound at N={far[0]:.0f} and 3 more point(s) is the time measured at a "
                           f"smaller point, less the fit's noise (N={data['N'].max():.0f}: ")
    free = fit_experiment(run, FitSettings(constants="free")).predict({"N": far})
    assert not any("low bound" in n for n in free.notes) and free.lower[-1] < floor
    inside = data["N"][len(data["N"]) // 2]
    assert not any("low bound" in n for n in wrong.predict({"N": inside}).notes)


def test_a_point_that_no_measured_point_is_below_term_by_term_keeps_its_interval():
    """f[0] + f[1]*N/P at a larger P: the term N/P is smaller than at the measured points, so
    nothing measured bounds the time from below."""
    n = np.repeat([1000.0, 2000.0, 4000.0, 8000.0, 16000.0], 3)
    rng = np.random.default_rng(4)
    columns = {"N": np.tile(n, 2), "P": np.repeat([1.0, 2.0], len(n))}
    time = (1e-6 + 1e-8 * columns["N"] / columns["P"]) * (1 + 0.02 * rng.standard_normal(len(n) * 2))
    model = fit_experiment(Experiment("f", parse_formula("f[0] + f[1]*N/P"), {**columns, "time": time}))
    prediction = model.predict({"N": 16000.0, "P": 64.0})
    assert not any("low bound" in note for note in prediction.notes)
    assert prediction.lower[0] < 16000 * 1e-8 / 2


def test_of_points_the_model_cannot_tell_apart_the_floor_takes_the_nearest_not_the_noisiest():
    """A time below the noise of its growth: f[1] is 0, so every sample point has the same model
    value. Taking the largest time among them picked the noisiest point and dropped a seeded
    accuracy case to 62.5% coverage; the floor is the largest point's time, less the noise."""
    rng = np.random.default_rng(2)
    n = np.repeat(2.0 ** np.arange(6, 14), 5)
    time = 9.5e-4 * (1 + 0.05 * rng.standard_normal(len(n)))
    model = fit_experiment(Experiment("f", parse_formula("f[0] + f[1]*N*log(N)"), {"N": n, "time": time}),
                           FitSettings(aggregate="median"))
    data = model.sample_points
    assert model.pieces[-1].constants[1] == 0
    nearest, noisiest = data["time"][np.argmax(data["N"])], data["time"].max()
    assert noisiest > 1.04 * nearest                       # the case: a noisier point below
    far = model.predict({"N": 64 * data["N"].max()})
    note = next(n for n in far.notes if "low bound" in n)
    assert f"(N=8192: {nearest:.4g} s, " in note
    assert far.lower[0] < nearest
