"""The llac-side findings of the new-user review (20): `suggest` says when a variable has too
few values to tell its terms apart, a prediction where the formula has no value is one clear
warning (no Python warning, no cache level beside it), and `describe` of an experiment merged
from several trace files shows what holds for the whole."""
import os
import subprocess
import sys

import pytest

from cll_grammar.machinedb import MachineDB
from support.machines import probe_run, write_stream_trace
from test_whatif_bsp import SIZES, write_fft_like_trace


def llac_in(folder, script: str) -> subprocess.CompletedProcess:
    """Run `llac -c script` in `folder` (its machine database there) with every Python warning
    shown: none may reach the user."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(folder / "machines.sqlite"), "PYTHONWARNINGS": "always"}
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


# ---- 2. a prediction where the formula has no value
@pytest.fixture
def probed(tmp_path):
    """A probed machine (node1, and node1@fastnet), an FFT-like MPI trace measured on it and a
    streaming trace that states its working set."""
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run())
        db.store(probe_run(label="fastnet", date="2026-11-23T13:00:00Z"))
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    write_stream_trace(tmp_path / "s.cll.1.dat", SIZES)
    return tmp_path


@pytest.mark.parametrize("what_if", ["", " with g=4e-9, L=1e-5", " on node1@fastnet"])
def test_no_value_at_p_0_is_one_warning_and_no_python_warning(probed, what_if):
    done = llac_in(probed, f'load "y.cll.4.dat"; set prune off; fit f; predict f N=4096 P=0,2{what_if}')
    assert done.returncode == 0 and "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    rows = {line.split()[1]: line.split() for line in done.stdout.splitlines() if line.split()[:1] == ["4096"]}
    assert rows["0"][2:5] == ["nan"] * 3 and float(rows["2"][2]) > 0
    if what_if:
        assert rows["0"][5] == "nan" and float(rows["2"][5]) > 0
    warnings = [line for line in done.stdout.splitlines() if "has no value" in line]
    assert warnings == ["warning: the formula has no value at N=4096 P=0: its terms f[1]*N/P, f[2]*N*(P - 1)/P, "
                        "f[3]*log(P) are not finite numbers there (the log of a number <= 0, a division by zero "
                        "or an overflow); no prediction"], done.stdout
    assert "changes nothing" not in done.stdout and "change nothing" not in done.stdout


def test_no_cache_level_beside_a_prediction_that_has_no_value(probed):
    done = llac_in(probed, 'load "s.cll.1.dat"; s = stream formula "s[0] + s[1]*N*log(N)"; fit s; '
                           'predict s N=0,4096,1e308')
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "level" in line and "predicted" in line)
    level = header.index("level")
    rows = {line.split()[0]: line for line in lines[lines.index(header) + 2:] if line[:1] in (" ", "0", "4", "1")
            and line.split()[0] in ("0", "4096", "1e+308")}
    assert rows["0"][level:level + 5].strip() == "" and rows["1e+308"][level:level + 5].strip() == ""
    assert rows["4096"][level:level + 5].strip() == "L1"
    assert rows["1e+308"].split()[1] == "nan"           # an overflowing term: no value, not inf
    assert "no value at N=0, N=1e+308: its term s[1]*N*log(N) is not a finite number" in done.stdout
    assert "inf GiB" not in done.stdout and "warning: at N=1e+308 the working set" not in done.stdout
