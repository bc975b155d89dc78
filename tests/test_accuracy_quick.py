"""`benchmarks/accuracy --quick` as CI runs it: a real run (real gcc build of a sample, real
fits, one real Extra-P fit in the harness's own venv) whose table must hold every tool.

The Extra-P venv is installed from PyPI on first use. Offline, set LLAC_SKIP_EXTRAP=1 to
skip this test; under CI (CI=true) it never skips, so a broken Extra-P set-up fails loudly."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(os.environ.get("LLAC_SKIP_EXTRAP") == "1" and os.environ.get("CI") != "true",
                    reason="LLAC_SKIP_EXTRAP=1: no Extra-P venv (offline development)")
def test_quick_accuracy_run_prints_the_table_with_every_tool(tmp_path):
    report = tmp_path / "accuracy.md"
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "accuracy"), "--quick",
                           "--output", str(report)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    accuracy = lines[lines.index("") + 1:]
    accuracy = accuracy[:accuracy.index("")]                 # the first table: the accuracy
    rows = [line.split(" | ") for line in accuracy if "---" not in line][1:]
    assert {(r[0].lstrip("| "), r[1]) for r in rows} == {
        (case, tool) for case in ("nlogn-above-noise", "regime-slope-x3", "matinit/rowinit")
        for tool in ("llac", "llac-advice-followed", "llac-1-interval", "llac-trend")} | {("nlogn-above-noise", "extrap-default")}
    errors = [float(r[3].rstrip("%")) for r in rows]   # every tool predicted every held-out point
    assert all(e < 100 for e in errors)
    assert any(line.startswith("- ok   nlogn-above-noise") for line in lines)
    noise = [line.split(" | ") for line in lines if line.startswith("| chain |")]
    assert len(noise) == 1 and noise[0][2] == "2"       # the noise smoke: 2 loaded runs, scored
    assert noise[0][3].endswith("%") and noise[0][4].endswith("%")
    assert any(line.startswith(("- ok   noise chain", "- MISS noise chain")) for line in lines)
    assert report.read_text() == done.stdout
