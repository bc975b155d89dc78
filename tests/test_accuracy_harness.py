"""Unit tests of the accuracy harness (benchmarks/accuracy_harness) on small synthetic data:
aggregation and the train/held-out split, error computation, llac scoring, the Extra-P
request (through llac's exporter), table rendering and the target check."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from accuracy_harness import extrap_tool  # noqa: E402
from accuracy_harness.cases import aggregate, make_case, synthetic  # noqa: E402
from accuracy_harness.evaluate import Row, extrap_rows, llac_rows, relative_errors  # noqa: E402
from accuracy_harness.report import percent, table, targets  # noqa: E402
from cll_grammar.formula import parse_formula  # noqa: E402
from llac.experiment import Experiment  # noqa: E402


def experiment(n, time, formula="f[0] + f[1]*N", **extra):
    return Experiment("f", parse_formula(formula, experiment="f"), {"N": n, "time": time, **extra})


def test_aggregate_keeps_one_median_per_sample_point():
    exp = experiment([4, 2, 4, 2, 4], [9.0, 1.0, 3.0, 2.0, 5.0])
    got = aggregate(exp)
    assert list(got.columns["N"]) == [2, 4] and list(got.columns["time"]) == [1.5, 5.0]


def test_case_fits_the_small_points_and_holds_out_the_rest_of_each_variable():
    n, p = np.meshgrid([8.0, 16, 32, 64], [1.0, 2, 4], indexing="ij")
    exp = experiment(n.ravel(), np.ones(12), "f[0] + f[1]*N/P", P=p.ravel())
    case = make_case("c", exp, {"N": 32, "P": 2})
    assert len(case.training) == 6 and set(case.training.columns["N"]) == {8, 16, 32}
    held = case.heldout.columns
    assert len(held["N"]) == 6 and all((held["N"] > 32) | (held["P"] > 2))
    assert not case.segmented
    with pytest.raises(ValueError, match="no held-out point"):
        make_case("c", exp, {"N": 64})


def test_relative_errors_median_max_and_missing_predictions():
    assert relative_errors(np.array([1.1, 2.0, 2.0]), np.array([1.0, 2.0, 4.0])) == pytest.approx((0.1, 0.5))
    assert relative_errors(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))[1] == np.inf


def test_synthetic_case_is_seeded_and_llac_recovers_the_truth():
    def make():
        return synthetic("lin", "f[0] + f[1]*N", lambda c: 1e-6 + 1e-9 * c["N"],
                         {"N": 2.0 ** np.arange(4, 16)}, {"N": 2.0 ** 12}, 0.02, seed=3)
    case = make()
    assert np.array_equal(case.data.columns["time"], make().data.columns["time"])
    rows = llac_rows(case)
    assert [r.tool for r in rows] == ["llac", "llac-1-interval"]
    assert rows[0].median_truth < 0.03 and rows[0].median < 0.05 and "*N" in rows[0].model


def test_llac_finds_a_regime_change_the_single_interval_misses():
    truth = lambda c: np.where(c["N"] <= 2 ** 11, 1e-6 + 1e-9 * c["N"], 1e-6 + 3e-9 * c["N"])  # noqa: E731
    case = synthetic("r", "f[0] + f[1]*N", truth, {"N": np.round(2.0 ** (np.arange(8, 33) / 2))},
                     {"N": 2.0 ** 14}, 0.02, seed=1)
    split, single = llac_rows(case)
    assert "cuts N=" in split.model and "cuts" not in single.model
    assert split.median_truth < 0.05 < single.median_truth


def test_extrap_request_uses_llacs_export_and_reports_results(tmp_path, monkeypatch):
    seen = {}

    def fake_run(cmd, stdin=None):
        request = json.loads(stdin)
        seen.update(request, text=Path(request["file"]).read_text())
        values = {"function": "2 * p^(1)", "values": [2 * x for x in request["points"][0]]}
        return type("Done", (), {"returncode": 0, "stdout": json.dumps(
            {"Default": values, "Segmented": {"error": "ValueError: too few points"}}), "stderr": ""})

    monkeypatch.setattr(extrap_tool, "_run", fake_run)
    case = make_case("c", experiment([1.0, 2, 4, 8, 16, 16], [2.0, 4, 8, 16, 33, 31]), {"N": 4})
    default, segmented = extrap_rows(case, tmp_path / "python")
    assert seen["modelers"] == ["Default", "Segmented"] and seen["points"] == [[8.0, 16.0]]
    assert seen["text"].startswith("PARAMETER N\n") and "POINTS 1 2 4\n" in seen["text"]
    assert default.median == 0 and default.model == "2 * p^(1)"
    assert segmented.model == "ValueError: too few points" and np.isnan(segmented.median)


def test_extrap_unavailable_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(extrap_tool, "_run", lambda cmd, stdin=None: type(
        "Done", (), {"returncode": 1, "stdout": "", "stderr": "ERROR: No matching distribution found for extrap"}))
    with pytest.raises(extrap_tool.ExtrapUnavailable, match="No matching distribution"):
        extrap_tool.venv_python(tmp_path / "venv")


def rows():
    return [Row("real", "llac", "a|b", 0.031, 0.05), Row("real", "extrap-default", "x", 0.2, 0.3),
            Row("jump", "llac", "m", 0.01, 0.02, 0.015, 0.02),
            Row("jump", "extrap-default", "m", 0.02, 0.03, 0.02, 0.03),
            Row("jump", "extrap-segmented", "m", 0.5, 0.6, 0.5, 0.6),
            Row("competing-N-NN", "llac", "m", 0.1, 0.1, 0.1, 0.1),
            Row("competing-N-NN", "extrap-default", "m", 0.1, 0.1, 0.09, 0.1)]


def test_table_renders_percentages_and_escapes_pipes():
    text = table(rows()).splitlines()
    assert text[0].startswith("| case | tool | model | held-out median |") and len(text) == 2 + 7
    assert text[2] == "| real | llac | a\\|b | 3.1% | 5.0% | - | - |"
    assert percent(float("inf")) == "inf"


def test_targets_real_limit_and_synthetic_comparisons():
    lines = targets(rows())
    assert lines[0].startswith("ok   real: llac median 3.1%")
    assert lines[1].startswith("MISS jump: llac 1.5% vs best Extra-P 2.0%") and "2x better" in lines[1]
    assert lines[2].startswith("MISS competing-N-NN") and "no worse" in lines[2]
