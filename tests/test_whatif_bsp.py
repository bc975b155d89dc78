"""What-if for communication (issue 11, item 5): a model of an exchange measured on a
synthetic machine, predicted again with other g and L, given or from another database entry."""
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np

import pytest

from cll_grammar.machinedb import MachineDB
from support.machines import probe_run, write_exchange_trace, write_stream_trace

SIZES = [1024 * 2 ** k for k in range(8)]
G2, L2 = 2e-9, 4e-6                  # probe_run's g and L at P = 2


@pytest.fixture
def workdir(tmp_path):
    fast = probe_run(label="fastnet", date="2026-11-23T13:00:00Z")
    fast.bsp = [replace(b, g=b.g / 2, L=b.L / 4) for b in fast.bsp]
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run())
        db.store(fast)
    write_exchange_trace(tmp_path / "x.cll.2.dat", SIZES)
    write_stream_trace(tmp_path / "s.cll.1.dat", SIZES)
    return tmp_path


def predicted(workdir, command: str) -> float:
    """The what-if column of the one row `command` predicts."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(workdir / "machines.sqlite")}
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "x.cll.2.dat"; {command}'],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.split() and line.split()[0] == "65536")
    return float(row.split()[4])


def test_with_g_and_L(workdir):
    assert predicted(workdir, "predict D size=65536 with g=4e-9") == pytest.approx(L2 + 4e-9 * 131072, rel=1e-3)
    assert predicted(workdir, "predict D size=65536 with g=4e-9, L=1e-3") == pytest.approx(1e-3 + 4e-9 * 131072, rel=1e-3)


def test_g_and_L_at_the_float_limit_give_inf_without_a_python_warning(workdir):
    """A review: `with g=1e308, L=1e308` printed numpy's RuntimeWarning with its source line."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(workdir / "machines.sqlite"), "PYTHONWARNINGS": "always"}
    done = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "x.cll.2.dat"; predict D size=65536 with '
                           'g=1e308, L=1e308'], cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.split() and line.split()[0] == "65536")
    assert row.split()[4] == "inf"


def test_on_a_machine_with_a_faster_network(workdir):
    expected = L2 / 4 + G2 / 2 * 131072
    assert predicted(workdir, "predict D size=65536 on node1@fastnet") == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("command, message", [
    ('predict D size=1 with x=3', "'x' is not a machine parameter (g, L or o)"),
    ('predict D size=1 with o=3e-7', "with o=...: the cost per message is obsp's and timeline's"),
    ('predict D size=1 with g=1e-9, g=2e-9', "g is given twice"),
    ('predict D size=1 with L=0', "L must be positive"),
    ('load "s.cll.1.dat"; predict stream N=1 with g=1e-9', "stream moved no data"),
])
def test_mistakes(workdir, command, message):
    env = {**os.environ, "LLAC_MACHINE_DB": str(workdir / "machines.sqlite")}
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "x.cll.2.dat"; {command}'],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_g_and_L_come_from_the_latest_run_that_has_them(workdir):
    later = probe_run(date="2026-11-23T23:00:00Z")        # a later probe without --procs
    later.bsp = []
    with MachineDB(workdir / "machines.sqlite") as db:
        db.store(later)
    assert predicted(workdir, "predict D size=65536 with g=4e-9") == pytest.approx(L2 + 4e-9 * 131072, rel=1e-3)


def write_fft_like_trace(path) -> None:
    """An MPI trace of f = f[0] + f[1]*N/P + f[2]*N*(P-1)/P + f[3]*log(P) at P = 1, 2, 4 (exact
    times): computation N/P, communication N*(P-1)/P bytes and log(P) supersteps."""
    records = []
    for procs in (1, 2, 4):
        for n in SIZES:
            time = float(1e-4 + 1e-8 * n / procs + 3e-9 * n * (procs - 1) / procs + 5e-6 * np.log(procs))
            h = n * (procs - 1) / procs
            records += [f"f 0 0 {time!r} {float(n)!r} {float(procs)!r} 1 {h} 1 {h} 1 {2 * h} 0"] * 3
    path.write_text(
        "#cll-trace 1\n#program: y\n#host: node1\n#cpu: Test CPU 9000\n#parallel: MPI\n#procs: 4\n"
        "#status: complete\n#experiment: f\n#  formula: f[0] + f[1]*N/P + f[2]*N*(P-1)/P + f[3]*log(P)\n"
        "#  source: y.c:1:1\n#  columns: rank thread time N P msgs_sent bytes_sent msgs_recv bytes_recv partners h mpi_time\n"
        f"#  records: {len(records)}\n#data\n" + "\n".join(records) + "\n#end\n")


def fft_like(workdir, predictions: str) -> str:
    """The output of llac fitting f of write_fft_like_trace (every constant kept), then
    running `predictions`, against the workdir's machine database."""
    write_fft_like_trace(workdir / "y.cll.4.dat")
    env = {**os.environ, "LLAC_MACHINE_DB": str(workdir / "machines.sqlite")}
    script = f'load "y.cll.4.dat"; set prune off; fit f; {predictions}'
    done = subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_with_g_and_L_scale_only_the_terms_of_communication(workdir):
    out = fft_like(workdir, f"predict f N=65536 P=1,2; predict f N=65536 P=1,2 with g={2 * G2}, L={2 * L2}")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["65536"]]
    plain = {int(r[1]): float(r[2]) for r in rows[:2]}
    scaled = {int(r[1]): float(r[5]) for r in rows[2:]}
    assert scaled[1] == pytest.approx(plain[1], rel=1e-3)         # no communication on one processor
    # at P = 2 the probe's g and L are G2, L2: doubling them doubles the communication terms only
    assert scaled[2] == pytest.approx(plain[2] + 3e-9 * 65536 / 2 + 5e-6 * np.log(2), rel=1e-3)
    assert "the terms that vanish at P = 1 are read as communication" in out


def test_on_a_machine_with_slower_operations_the_computation_terms_follow_them(workdir):
    """`predict ... on MACHINE` of a model with P: its communication by MACHINE's g and L, its
    computation by MACHINE's basic operations (review 28: it kept this machine's, so that P=1
    predicted this machine's time on a machine twice as slow)."""
    slow = probe_run(label="slowcpu", date="2026-11-23T14:00:00Z")
    slow.operations = [replace(o, seconds=2 * o.seconds) for o in slow.operations]
    with MachineDB(workdir / "machines.sqlite") as db:
        db.store(slow)
    out = fft_like(workdir, "predict f N=65536 P=1 on node1@slowcpu")
    row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["65536"])
    assert float(row[5]) == pytest.approx(2 * float(row[2]), rel=1e-3)     # nothing to communicate at P=1
    assert "the others as computation, scaled by node1@3's basic operations against this machine's (x2)" in out


def test_a_p_the_probe_did_not_measure_is_named_with_the_p_that_stood_in(workdir):
    """The footer said "at the point's P" where the probe had no such P (review 28)."""
    out = fft_like(workdir, "predict f N=65536 P=2,8 with g=4e-9")
    assert "at the point's P; at P=8 those of P=4, the nearest P probed" in out
    assert "at P=2 those of" not in out
