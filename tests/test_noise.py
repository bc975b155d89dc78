"""Issue 10, item 1's reporting: the spread of each sample point's repetitions (llac/noise.py),
shown by `describe`, noisy points named by `fit` and marked in plots, kept in the model (JSON,
saved models; old ones without it still load), and the warning when the typical spread is too
large to tell regimes apart. Statistical behaviour on seeded synthetic data; the user's side
driven as a user does (`python -m llac -c`), once on a real sample trace."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.model import FitSettings, fit_experiment
from llac.noise import (NOISY_FACTOR, NOISY_FLOOR, descheduled_warning, noisy, point_spread, spread_warning,
                        typical)
from llac.plot import Canvas, plot_model
from llac.render import render
from llac.commands.results import ModelReport
from support.traces import trace_text

REPO = Path(__file__).resolve().parent.parent
SIZES = np.array([1000.0 + 250 * i for i in range(24)])
NOISY_SIZES = (2250.0, 4000.0, 6500.0)


def llac(command: str, cwd: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", *options, "-c", command], cwd=cwd, text=True,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def interfered(seed: int = 3, noise: float = 0.01, reps: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """N and times of `1e-6 + 2e-9*N` with one-sided noise (each repetition up to `noise`
    slower), where at NOISY_SIZES three of the five repetitions are 20-60% slower (a co-runner)."""
    rng = np.random.default_rng(seed)
    N = np.repeat(SIZES, reps)
    time = (1e-6 + 2e-9 * N) * (1 + noise * rng.random(len(N)))
    for size in NOISY_SIZES:
        rows = np.flatnonzero(N == size)[:3]
        time[rows] *= 1 + rng.uniform(0.2, 0.6, len(rows))
    return N, time


def experiment(N, time, name="e") -> Experiment:
    return Experiment(name, parse_formula("f[0] + f[1]*N"), {"N": N, "time": time})


def test_spread_is_median_minus_min_over_min_of_the_valid_repetitions_in_any_point_order():
    columns = {"N": np.array([2, 1, 2, 1, 1, 3, 3, 2, 4, 4]),
               "time": np.array([1.0, 2.0, 1.1, 3.0, 6.0, 5.0, np.nan, -1.0, 0.0, 2.0])}
    spread = point_spread({"N": np.array([4.0, 3.0, 2.0, 1.0, 7.0])}, columns)
    # N=4: one valid time (0 is not), N=3: one (NaN is not), N=2: 1.0, 1.1 (-1 is not),
    # N=1: 2, 3, 6 -> (3 - 2) / 2, N=7: no record at all
    np.testing.assert_allclose(spread, [np.nan, np.nan, 0.05, 0.5, np.nan])
    assert point_spread({}, {"time": np.array([2.0, 4.0, 3.0])}).tolist() == [0.5]   # no variables


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2),
                          st.one_of(st.floats(1e-9, 1e3), st.sampled_from([0.0, -1.0, float("nan")]))),
                min_size=1, max_size=40))
def test_spread_matches_a_plain_loop_over_the_points(records):
    N, P, time = (np.array(c, dtype=float) for c in zip(*records))
    points = {"N": np.array([0.0, 1, 2, 3, 4] * 3), "P": np.repeat([2.0, 1, 0], 5)}
    spread = point_spread(points, {"N": N, "P": P, "time": time})
    for i, (n, p) in enumerate(zip(points["N"], points["P"])):
        valid = np.sort(time[(N == n) & (P == p) & np.isfinite(time) & (time > 0)])
        expected = (np.median(valid) - valid[0]) / valid[0] if len(valid) >= 2 else np.nan
        np.testing.assert_allclose(spread[i], expected, rtol=1e-12)


def test_noisy_points_are_far_above_the_typical_spread_and_above_the_floor():
    spread = np.array([0.01, 0.012, 0.009, 0.011, 0.07, 0.04, np.nan, 0.2])
    assert typical(spread) == pytest.approx(0.012)
    assert noisy(spread).tolist() == [False] * 4 + [True, False, False, True]   # 0.04 < 5 x 1.2%
    quiet = np.array([0.001, 0.001, 0.001, 0.02])        # 20x the typical, but below the floor
    assert NOISY_FLOOR > 0.02 and not noisy(quiet).any()
    assert not noisy(np.full(4, np.nan)).any() and np.isnan(typical(np.full(4, np.nan)))


def test_fit_names_the_interfered_points_and_only_them():
    for seed in range(5):
        model = fit_experiment(experiment(*interfered(seed)))
        data = model.sample_points
        np.testing.assert_array_equal(data["N"], SIZES)
        marked = data["N"][noisy(data["spread"])]
        assert marked.tolist() == list(NOISY_SIZES), seed
        text = render(ModelReport("e", model))
        line = next(line for line in text.splitlines() if line.startswith("noisy sample points"))
        assert line.startswith(f"noisy sample points (repetitions vary more than {NOISY_FACTOR:g}x the typical ")
        assert all(f"N={size:g} (" in line for size in NOISY_SIZES)
        assert not any("repetitions vary by" in w for w in model.warnings)   # typical: below 1%


def test_marks_over_100_seeded_data_sets_find_interference_and_not_ordinary_noise():
    """24 points x 5 repetitions with one-sided noise (exponential, mean 1%); in half of the
    data sets three points have three repetitions 20-60% slower: those are found every time,
    and no other point is ever marked."""
    points = {"N": np.arange(24.0)}
    for seed in range(100):
        rng = np.random.default_rng(seed)
        N = np.repeat(points["N"], 5)
        time = 1 + 0.01 * rng.exponential(size=len(N))
        hit = rng.choice(24, 3, replace=False) if seed % 2 else np.array([], dtype=int)
        for h in hit:
            time[np.flatnonzero(N == h)[:3]] *= 1 + rng.uniform(0.2, 0.6, 3)
        assert sorted(np.flatnonzero(noisy(point_spread(points, {"N": N, "time": time})))) == sorted(hit), seed


def test_fit_says_which_noisy_points_lie_in_the_interval_that_predictions_beyond_the_data_use():
    N, time = interfered(seed=2)
    time = np.where(N > 4500, time * (1e-6 + 6e-9 * N) / (1e-6 + 2e-9 * N), time)   # a regime change
    model = fit_experiment(experiment(N, time))
    assert [(c.variable, c.value) for c in model.cuts] == [("N", pytest.approx(np.sqrt(4500 * 4750)))]
    holds = [line for line in render(ModelReport("e", model)).splitlines() if "beyond the data use" in line]
    assert len(holds) == 1 and holds[0].startswith(
        f"interval 2, which predictions beyond the data use, holds 1 of them among its {sum(SIZES > 4500)} "
        f"points: N=6500 (")
    one = fit_experiment(experiment(N, time), FitSettings(split=False))
    assert not any("which predictions beyond the data use" in line for line in render(ModelReport("e", one)).splitlines())


def test_no_noisy_line_on_quiet_data():
    N, time = interfered(seed=1)
    quiet = fit_experiment(experiment(N, (1e-6 + 2e-9 * N) * (1 + 0.01 * np.random.default_rng(1).random(len(N)))))
    assert not noisy(quiet.sample_points["spread"]).any()
    assert "noisy" not in render(ModelReport("e", quiet))


def spread_by(level: float, reps: int = 3) -> Experiment:
    """Every point's repetitions at 1, 1 + level, 1 + 2*level times `1e-6 + 2e-9*N`: spread `level`."""
    N = np.repeat(SIZES, reps)
    steps = np.tile(np.arange(reps), len(SIZES))
    return experiment(N, (1e-6 + 2e-9 * N) * (1 + level * steps))


def test_warning_fires_at_20_percent_spread_and_not_at_1_percent():
    loud = fit_experiment(spread_by(0.20))
    assert typical(loud.sample_points["spread"]) == pytest.approx(0.20)
    warnings = [w for w in loud.warnings if w.startswith("repetitions vary by")]
    assert warnings == [
        "repetitions vary by 20% at a typical sample point, more than the 5% threshold: interval "
        "splitting cannot tell a regime change of that size from noise (the fit takes the min of "
        "each point's repetitions); measure on a quieter machine or spread each point's repetitions "
        "over the run (docs/pragma-language.md)"]
    median = fit_experiment(spread_by(0.20), FitSettings(aggregate="median"))
    assert [w for w in median.warnings if w.startswith("repetitions vary by")] == [
        warnings[0].replace("the min of", "the median of") + ", or `set aggregate min`"]
    quiet = fit_experiment(spread_by(0.01))
    assert not any(w.startswith("repetitions vary by") for w in quiet.warnings)
    relaxed = fit_experiment(spread_by(0.20), FitSettings(threshold=0.3))
    assert not any(w.startswith("repetitions vary by") for w in relaxed.warnings)


def test_warning_names_the_current_estimator_and_stays_true_with_min():
    with_min = spread_warning(np.full(5, 0.2), "min", 0.05)
    assert len(with_min) == 1 and "takes the min of each" in with_min[0] and "set aggregate" not in with_min[0]
    assert spread_warning(np.full(5, 0.008), "median", 0.0) == []          # never below 1%
    assert len(spread_warning(np.full(5, 0.02), "median", 0.0)) == 1


def test_plot_marks_noisy_points_with_their_own_marker_and_legend_entry():
    model = fit_experiment(experiment(*interfered()))
    text = plot_model(model, canvas=Canvas(100, 30, False))
    top, bottom = text.index("┌"), text.index("└")
    assert text[top:bottom].count("@") == len(NOISY_SIZES)
    legend = text[bottom:].split("\n", 1)[1]
    assert "@ measured, noisy: repetitions vary more than 5x the typical" in legend
    quiet = plot_model(fit_experiment(spread_by(0.01)), canvas=Canvas(100, 30, False))
    assert "@" not in quiet


def test_under_by_noisy_points_keep_their_series_marker_and_the_legend_counts_them():
    """A noisy mark shared by every series hid which series a point belongs to."""
    N, time = interfered()
    both = Experiment("e", parse_formula("e[0] + e[1]*N/P"),
                      {"N": np.concatenate([N, N]), "P": np.repeat([1.0, 2.0], len(N)),
                       "time": np.concatenate([time, time / 2])})
    text = plot_model(fit_experiment(both), by="P", canvas=Canvas(100, 30, False))
    top, bottom = text.index("┌"), text.index("└")
    assert "@" not in text[top:bottom]
    assert (f"{2 * len(NOISY_SIZES)} noisy points (repetitions vary more than 5x the typical"
            in " ".join(text[bottom:].split()))
    assert "keep their series' marker; a plot without by marks them @" in " ".join(text.split())


def noisy_trace(path: Path) -> Path:
    N, time = interfered()
    path.write_text(trace_text({"k": ("k[0] + k[1]*N", ["N"], list(zip(time, N)))}))
    return path


def test_describe_shows_each_points_spread_and_the_summary(tmp_path):
    noisy_trace(tmp_path / "k.dat")
    r = llac('load "k.dat"; describe k', tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    table = r.stdout.split("k: sample points\n", 1)[1].splitlines()
    assert table[0].split() == ["N", "repetitions", "spread", "noisy"]
    rows = {float(line.split()[0]): line.split()[1:] for line in table[2:22]}
    assert len(rows) == 20 and all(row[0] == "5" for row in rows.values())
    assert rows[2250.0][2] == rows[4000.0][2] == "noisy" and len(rows[1000.0]) == 2
    assert table[22] == "first 20 of 24 sample points"
    assert table[23].startswith("spread = (median - min) / min of a point's repetitions: median ")
    assert table[24] == "noisy (spread > 5x the median and > 5%): 3 of 24 sample points"


def test_json_output_and_saved_models_keep_the_spread_and_old_models_still_load(tmp_path):
    noisy_trace(tmp_path / "k.dat")
    r = llac('load "k.dat"; fit k; export k.model "k.json"', tmp_path, "--format", "json")
    assert r.returncode == 0, r.stderr
    document = json.loads(next(line for line in r.stdout.splitlines() if '"llac-model"' in line))
    spread = document["sample_points"]["spread"]
    assert len(spread) == len(SIZES) and sum(s > 0.1 for s in spread) == len(NOISY_SIZES)
    saved = json.loads((tmp_path / "k.json").read_text())
    assert saved["sample_points"]["spread"] == spread
    r = llac('load "k.json" as m; show m; plot m to "m.html"', tmp_path)
    assert r.returncode == 0 and "noisy sample points" in r.stdout, r.stderr
    assert "% noisy</td>" in (tmp_path / "m.html").read_text()
    del saved["sample_points"]["spread"]           # a model saved before the spread was kept
    (tmp_path / "old.json").write_text(json.dumps(saved))
    r = llac('load "old.json" as m; show m; predict m N=8000; plot m; plot m to "old.html"', tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "noisy" not in r.stdout and "@" not in r.stdout and "model of k" in r.stdout
    assert "<td>-</td>" in (tmp_path / "old.html").read_text()


def test_session_on_a_real_sample_trace(tmp_path):
    """samples/matinit built with gcc and run by `call run`, then described, fitted and plotted."""
    shutil.copy(REPO / "samples" / "matinit" / "matinit.c", tmp_path)
    run = subprocess.run([sys.executable, "-m", "call", "run", "matinit.c", "--", "128"], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr
    r = llac('load "matinit.cll.1.dat"; describe colinit; fit colinit; plot colinit loglog; '
             'export colinit.model "c.json"', tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    table = r.stdout.split("colinit: sample points\n", 1)[1].splitlines()
    rows = [line.split() for line in table[2:22]]
    assert [row[1] for row in rows] == ["5"] * 20                           # five repetitions each
    assert all(row[2].endswith("%") and float(row[2][:-1]) >= 0 for row in rows)
    assert "first 20 of 25 sample points" in table and "model of colinit" in r.stdout
    saved = json.loads((tmp_path / "c.json").read_text())["sample_points"]
    shown = {float(row[0]): float(row[2][:-1]) for row in rows}
    for n, s in zip(saved["N"], saved["spread"]):
        if n in shown:
            assert round(100 * s, 1) == pytest.approx(shown[n], abs=0.051)    # describe and fit agree


def clocked(slowdown: np.ndarray, parallel: str = "none", scale: float = 1.0) -> Experiment:
    """Three repetitions at N = 1..len(slowdown): CPU time 0.01*N s (times `scale`), wall time
    that times 1 + slowdown[N-1] (the fastest repetition) and more."""
    n = np.repeat(np.arange(1.0, len(slowdown) + 1), 3)
    cpu = 0.01 * n * scale
    wall = cpu * (1 + np.repeat(slowdown, 3)) * np.tile([1.0, 1.2, 1.5], len(slowdown))
    return Experiment("k", parse_formula("k[0] + k[1]*N", experiment="k"),
                      {"N": n, "time": wall, "perf_TASK_CLOCK": cpu * 1e9}, header={"parallel": parallel})


def test_descheduling_is_said_where_the_fitted_time_exceeds_the_cpu_time_by_its_estimator():
    late = np.array([0.0, 0.0, 0.02, 0.4, 0.6])      # the largest sizes descheduled every time
    (line,) = descheduled_warning(clocked(late), "min")
    assert line.startswith("the wall time is 60% above the CPU time (perf_TASK_CLOCK) at N=5 "
                           "(median over the points 2%)")
    assert "`cpu = k with time = perf_TASK_CLOCK * 1e-9`" in line
    # the median repetition is 20% slower than the fastest everywhere: that alone is descheduling too
    assert descheduled_warning(clocked(np.zeros(5)), "median")[0].startswith("the wall time is 20% above")
    assert descheduled_warning(clocked(np.zeros(5)), "min") == []
    assert descheduled_warning(clocked(np.full(5, 0.09)), "min") == []       # within 10%


def test_descheduling_is_not_judged_for_parallel_programs_short_points_or_without_the_clock():
    late = np.array([0.0, 0.0, 0.5, 0.5, 0.5])
    assert descheduled_warning(clocked(late, parallel="MPI"), "min") == []   # waits are off the CPU
    assert descheduled_warning(clocked(late, scale=0.01), "min") == []       # under 1 ms
    plain = clocked(late)
    plain = plain.replace(columns={k: v for k, v in plain.columns.items() if k != "perf_TASK_CLOCK"})
    assert descheduled_warning(plain, "min") == []
    assert any("above the CPU time" in w for w in fit_experiment(clocked(late)).warnings)
    # once `with time = ...` replaced the wall time (other units, a counter) there is nothing to judge
    assert descheduled_warning(clocked(late).with_column("time", clocked(late).columns["time"] * 1000), "min") == []
    assert clocked(late).select(np.ones(15, bool)).wall_time and clocked(late).with_column("x", 1.0).wall_time
