"""Two executions of one PUB program at one P (review 43): run numbers restart at 1 in each,
and the supersteps were kept per program and P, the later load replacing the earlier. `obsp`
and `timeline` of the first execution's experiment then evaluated its runs with the second
execution's supersteps (run 8 of one is not run 8 of the other): a silently wrong table. Now
each experiment's runs take the supersteps of the execution they were read from, and an
experiment that merges two executions at one P is refused. Real `call run` and llac."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed")
GIVEN = "with g=1e-9, L=1e-6"          # no machine database needed


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """fft_pub at P = 2, once with N up to 2^14 (in a/) and once up to 2^11 (in b/)."""
    tmp_path = tmp_path_factory.mktemp("two_executions")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for folder, maxn in (("a", "16384"), ("b", "2048")):
        (tmp_path / folder).mkdir()
        shutil.copy(REPO / "samples" / "fft_pub" / "fft_pub.c", tmp_path / folder)
        done = subprocess.run([sys.executable, "-m", "call", "run", "fft_pub.c", "--procs", "2:2:2", "--", maxn],
                              cwd=tmp_path / folder, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return tmp_path


def llac(folder: Path, commands: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", "-c", commands], cwd=folder, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))


def table_rows(output: str, title: str) -> list[list[str]]:
    """The data rows of the first table titled `title` in llac's output."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3:]:
        if not line or not line[0].isdigit():
            break
        rows.append(line.split())
    return rows


def test_each_executions_runs_are_evaluated_with_their_own_supersteps(folder):
    alone = llac(folder, f'load "a/fft_pub.cll.2.dat"; obsp f {GIVEN}; timeline f P=2 N=16384 {GIVEN}')
    both = llac(folder, f'load "a/fft_pub.cll.2.dat"; load "b/fft_pub.cll.2.dat"; obsp f {GIVEN}; '
                        f'timeline f P=2 N=16384 {GIVEN}; obsp f@fft_pub_cll_2 {GIVEN}')
    assert alone.returncode == 0 and both.returncode == 0, both.stderr
    title = "OBSP* and BSP predictions of f's runs"
    assert table_rows(both.stdout, title) == table_rows(alone.stdout, title)
    assert [r[1] for r in table_rows(both.stdout, title)] == ["1024", "2048", "4096", "8192", "16384"]
    timeline = [line for line in both.stdout.splitlines() if line.startswith("TIME ")]
    assert timeline[0] == next(line for line in alone.stdout.splitlines() if line.startswith("TIME "))
    second = table_rows(both.stdout.split("f@fft_pub_cll_2's runs")[1], " from their supersteps")
    assert [r[1] for r in second] == ["1024", "2048"]      # the second execution's own
    assert "the experiments loaded from a/fft_pub.cll.2.dat keep theirs" in both.stdout + both.stderr


def test_an_experiment_merging_two_executions_at_one_p_is_refused_by_name(folder):
    done = llac(folder, f'load "*/fft_pub.cll.2.dat"; obsp f {GIVEN}')
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert ("f holds the runs of 2 executions of fft_pub at P=2 (a/fft_pub.cll.2.dat, b/fft_pub.cll.2.dat): "
            "their runs are numbered alike") in done.stderr, done.stderr
