"""The BSP probe (call.probe_bsp, runtime_c/probe/bsp_probe.c) with real mpicc and mpirun
on 1, 2 and 4 ranks in quick mode: g and L measured with their spreads, the progress line,
the standalone table; the parser refusing truncated output (and never raising anything but
a CallError); the clear messages when MPI is missing, a count is invalid, or mpirun refuses
a count."""
from __future__ import annotations

import io
import os
import math
import shutil
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings, strategies as st

from call import probe_bsp
from call.diagnostics import CallError
from call.progress import Progress
from call.runtime_paths import bsp_probe_source
from call.scripts import cores
from cll_grammar.machine import this_host

mpi = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                         reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

OUTPUT = """bsp_probe 1 procs=2 reps=5
L 4.253000e-07 5.081000e-07
Lsync 1.736000e-06 2.003000e-06
g small 1.783000e-08 1.866000e-08 -3.100000e-05
g large 1.134000e-10 1.182000e-10 2.400000e-06
end
"""


@pytest.fixture(scope="module")
def measured():
    """One quick probe of P = 1, 2, 4 (4 oversubscribes a 2-core machine) and its progress.
    Beside the suite's other workers, the oversubscribed P = 4 sometimes measures no growth
    with h, which the probe refuses (BspIncomplete: "run it again when it is quieter"): as
    the message says, it is run again, up to five times, a few seconds apart (three in a row
    failed once in a suite run with three workers on 2 cores: the load comes in bursts)."""
    for attempt in range(5):
        stream = io.StringIO()
        try:
            points = probe_bsp.measure_bsp([1, 2, 4], True, Progress(stream, live=False))
            return points, stream.getvalue()
        except probe_bsp.BspIncomplete:
            if attempt == 4:
                raise
            time.sleep(3)


def test_probe_source_is_installed_as_package_data():
    assert bsp_probe_source().read_text().startswith("/* bsp_probe.c")


@mpi
def test_two_points_per_count_in_order(measured):
    points, _ = measured
    assert [(p.procs, p.message) for p in points] == [
        (1, "small"), (1, "large"), (2, "small"), (2, "large"), (4, "small"), (4, "large")]


@mpi
def test_g_and_L_positive_with_spreads(measured):
    points, _ = measured
    for point in points:
        assert point.g > 0 and point.L > 0, point
        for spread in (point.g_spread, point.L_spread):
            assert math.isfinite(spread) and spread >= 0, point


@mpi
def test_barrier_of_four_costs_more_than_none(measured):
    """P=1's barrier synchronizes nobody (nanoseconds); four ranks must exchange messages
    (microseconds, more when they share two cores): orders of magnitude apart, so the
    ordering holds on a loaded machine too."""
    points, _ = measured
    L = {p.procs: p.L for p in points}
    assert L[4] > L[1]


@mpi
def test_small_messages_cost_more_per_byte_than_large_ones_between_ranks(measured):
    """8..64-byte messages pay MPI's per-message overhead on every few bytes."""
    points, _ = measured
    g = {(p.procs, p.message): p.g for p in points}
    assert g[2, "small"] > g[2, "large"]


@mpi
def test_progress_names_each_run_and_the_oversubscription_once(measured):
    _, said = measured
    for count in (1, 2, 4):
        assert f"mpirun -np {count} bsp_probe quick" in said
    assert said.count("oversubscribing") == (1 if cores() < 4 else 0)


@mpi
def test_standalone_entry_prints_the_table():
    done = subprocess.run([sys.executable, "-m", "call.probe_bsp", "--procs", "1,2", "--quick"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert rows[0].split()[:3] == ["P", "g", "small"]
    assert [row.split()[0] for row in rows[1:]] == ["1", "2"]
    assert "building the BSP probe with mpicc" in done.stderr


@mpi
def test_a_count_mpirun_refuses_is_one_clear_message(monkeypatch):
    monkeypatch.delenv("OMPI_MCA_rmaps_base_oversubscribe", raising=False)
    count = cores() + 1
    with pytest.raises(CallError) as refused:
        probe_bsp.measure_bsp([count], True, Progress(io.StringIO(), live=False), oversubscribe=False)
    assert str(refused.value) == (f"mpirun refused to start {count} processes on {cores()} cores (not "
                                  f"enough slots; the probe oversubscribes unless --no-oversubscribe "
                                  f"is given)")


@pytest.mark.parametrize("count, words", [(0, "P=0: a processor count is a positive integer"),
                                          (10 ** 6, "P=1000000: more processes than MPI will start")])
def test_counts_that_cannot_run_are_refused_before_mpirun(count, words):
    with pytest.raises(CallError, match=words):
        probe_bsp.measure_bsp([1, count], True, Progress(io.StringIO(), live=False))


@pytest.mark.parametrize("variable, words", [
    ("MPIRUN", "call probe: error: MPI is not installed: /nonexistent/mpirun was not found"),
    ("MPICC", "call probe: error: MPI is not installed: $MPICC (/nonexistent/mpicc) was not found; "
              "the BSP probe (g and L) needs an MPI compiler")])
def test_missing_mpi_is_one_line(monkeypatch, capsys, variable, words):
    monkeypatch.setenv(variable, f"/nonexistent/{variable.lower()}")
    assert probe_bsp.main(["--procs", "1", "--quick"]) == 1
    error = capsys.readouterr().err.splitlines()
    assert error[-1].startswith(words)
    assert not any("Traceback" in line for line in error)


@pytest.mark.parametrize("procs", ["1,x", "0", "", "2,,4", "-1"])
def test_bad_procs_is_a_usage_error(capsys, procs):
    with pytest.raises(SystemExit) as usage:
        probe_bsp.main(["--procs", procs])
    assert usage.value.code == 2
    assert "--procs" in capsys.readouterr().err


def test_parser_reads_the_probe_output():
    small, large = probe_bsp.parse_output(OUTPUT, 2)
    assert (small.procs, small.message, small.g, small.L) == (2, "small", 1.783e-08, 4.253e-07)
    assert large.g == 1.134e-10
    assert small.g_spread == pytest.approx((1.866 - 1.783) / 1.783)
    assert small.L_spread == large.L_spread == pytest.approx((5.081 - 4.253) / 4.253)
    assert small.L_sync == large.L_sync == 1.736e-06                 # the PUB library's bsp_sync
    assert small.L_sync_spread == pytest.approx((2.003 - 1.736) / 1.736)


def test_parser_refuses_every_truncation():
    complete = OUTPUT.index("end") + len("end")
    for cut in range(complete):
        with pytest.raises(CallError, match="P=2 is truncated or garbled"):
            probe_bsp.parse_output(OUTPUT[:cut], 2)


def test_parser_names_the_missing_lines():
    with pytest.raises(CallError, match=r"\(no large, end line; its last line: 'g small "):
        probe_bsp.parse_output(OUTPUT[:OUTPUT.index("g large")], 2)


@pytest.mark.parametrize("old, new, words", [
    ("g large 1.134000e-10", "g large -1.134000e-10",
     "g <= 0 for P=2, large messages: the machine was too busy"),
    ("L 4.253000e-07", "L 0.000000e+00", "L <= 0 for P=2: the timer failed"),
    ("Lsync 1.736000e-06", "Lsync -1.736000e-06", "L <= 0 for P=2: the timer failed")])
def test_parser_refuses_figures_that_are_not_positive(old, new, words):
    with pytest.raises(CallError, match=words):
        probe_bsp.parse_output(OUTPUT.replace(old, new), 2)


def test_parser_refuses_a_bare_dot_as_a_number():
    with pytest.raises(CallError, match="truncated or garbled"):
        probe_bsp.parse_output(OUTPUT.replace("L 4.253000e-07", "L ."), 2)


def test_parser_refuses_another_count():
    with pytest.raises(CallError, match="ran with P=2, not P=4"):
        probe_bsp.parse_output(OUTPUT, 4)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(OUTPUT)), st.integers(0, 20),
       st.text(alphabet=st.sampled_from(list("0123456789.e-+ Lgend\nx")), max_size=12))
def test_parser_raises_nothing_but_call_errors(start, length, inserted):
    """The probe's output with a stretch replaced: points, or one clear CallError."""
    text = OUTPUT[:start] + inserted + OUTPUT[start + length:]
    try:
        points = probe_bsp.parse_output(text, 2)
    except CallError:
        return
    assert all(point.g > 0 and point.L > 0 for point in points)


@mpi
def test_call_probe_with_procs_stores_g_and_L_that_llac_shows(tmp_path):
    db = tmp_path / "machines.sqlite"
    done = subprocess.run([sys.executable, "-m", "call", "probe", "--quick", "--procs", "1,2",
                           "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "BSP parameters:" in done.stdout
    shown = subprocess.run([sys.executable, "-m", "llac", "-c", "machine show"], capture_output=True,
                           text=True, timeout=60, env={**os.environ, "LLAC_MACHINE_DB": str(db)})
    assert shown.returncode == 0, shown.stderr
    rows = [line.split() for line in shown.stdout.splitlines() if line[:1] in "12" and "large" in line]
    assert [row[0] for row in rows] == ["1", "2"] and all(float(row[2]) > 0 for row in rows)
    assert "bsp_sync (the PUB library's)" in shown.stdout
    L, sync = float(rows[1][4]), float(rows[1][6])      # at P = 2, µs: the library's sync costs more
    assert 0 < L < sync, shown.stdout


@mpi
def test_call_probe_keeps_what_was_measured_when_a_count_fails(tmp_path):
    """--procs 1,N with N > cores and --no-oversubscribe: mpirun refuses N, and the run is
    stored with the mountain, the operations and P=1, as the message says."""
    db, count = tmp_path / "machines.sqlite", cores() + 1
    env = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_rmaps_base_oversubscribe"}
    done = subprocess.run([sys.executable, "-m", "call", "probe", "--quick", "--procs", f"1,{count}",
                           "--no-oversubscribe", "--db", str(db)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 1 and done.stdout == ""
    error = done.stderr.splitlines()[-1]
    assert error.startswith(f"call probe: error: the BSP probe failed at P={count}: mpirun refused "
                            f"to start {count} processes")
    assert error.endswith(f"What was measured is stored as run 1 of machine {this_host()} in {db}: "
                          f"the memory mountain and the operation costs, and g and L for P=1")
    shown = subprocess.run([sys.executable, "-m", "llac", "-c", "machine show"], capture_output=True,
                           text=True, timeout=60, env={**os.environ, "LLAC_MACHINE_DB": str(db)})
    assert shown.returncode == 0, shown.stderr
    rows = [line.split() for line in shown.stdout.splitlines() if "large" in line]
    assert [row[0] for row in rows] == ["1"]
