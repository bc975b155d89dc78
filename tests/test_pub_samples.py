"""samples/fig1_pub and samples/fft_pub as a user runs them: `call run` with its default sweep,
then the sample's .llac script (obsp from the runs' own supersteps, the paper's Table 3 from
the smaller sizes, the timeline), with g and L from a machine database entry for this host.
Shapes and the model's invariants are checked, not this machine's speed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cll_grammar.machinedb import MachineDB
from support.machines import probe_run
from support.runtime import run_bounded

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMPI_ALLOW_RUN_AS_ROOT": "1",
       "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
NUMBER = re.compile(r"-?[0-9.]+(e[-+][0-9]+)?")


def run_sample(tmp_path_factory, name: str) -> Path:
    """The sample's folder copy after `call run`, with a machine database that knows the host
    and CPU its traces name (synthetic g and L: the shapes do not depend on them)."""
    work = tmp_path_factory.mktemp(name)
    shutil.copy(ROOT / "samples" / name / f"{name}.c", work)
    done = run_bounded([sys.executable, "-m", "call", "run", f"{name}.c"], timeout=240, cwd=work, env=ENV)
    assert done.returncode == 0, done.stderr
    header = dict(line[1:].split(": ", 1) for line in next(work.glob("*.cll.2.dat")).read_text().splitlines()
                  if line.startswith("#") and ": " in line and not line.startswith("#  "))
    with MachineDB(work / "machines.sqlite") as db:
        db.store(probe_run(host=header["host"], cpu=header["cpu"]))
    return work


def script(work: Path, name: str) -> str:
    """The sample's .llac script run in `work`; its stdout."""
    done = subprocess.run([sys.executable, "-m", "llac", str(ROOT / "samples" / name / f"{name}.llac")],
                          cwd=work, env={**ENV, "LLAC_MACHINE_DB": str(work / "machines.sqlite")},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(text: str, title: str) -> list[list[str]]:
    """The rows of the table that `title` starts, as words."""
    block = text.split(title, 1)[1].splitlines()[3:]
    return [line.split() for line in block[:next(i for i, l in enumerate(block) if not l[:1].isdigit())]]


@pytest.fixture(scope="module")
def fig1(tmp_path_factory) -> str:
    return script(run_sample(tmp_path_factory, "fig1_pub"), "fig1_pub")


@pytest.fixture(scope="module")
def fft(tmp_path_factory) -> str:
    return script(run_sample(tmp_path_factory, "fft_pub"), "fft_pub")


def test_fig1_script_evaluates_the_five_runs_and_bsp_never_charges_less_than_obsp(fig1):
    [row] = rows(fig1, "OBSP* and BSP predictions of f's runs")
    P, w, runs, supersteps, time, obsp, _, bsp, _ = row[:9]
    assert (P, w, runs, supersteps) == ("2", "0.004", "5", "3")
    # a barrier waits at least as long as an oblivious sync (equal when a busy machine made
    # the same processor the slower one in both supersteps)
    assert float(bsp) >= float(obsp) > 0 and float(time) > 0
    assert fig1.count("\nP0 ") == fig1.count("\nP1 ") == 2          # measured and model timelines
    assert "(the OBSP* model)" in fig1


def test_fft_script_prints_own_supersteps_table_3_and_the_formula_baseline_for_every_p(fft):
    own = rows(fft, "OBSP* and BSP predictions of top's runs")
    table3 = rows(fft, "OBSP* and BSP predictions of top from the runs of small (the CALL paper's Table 3)")
    for table in (own, table3):
        assert [r[:2] for r in table] == [["1", "131072"], ["2", "131072"], ["4", "131072"], ["8", "131072"]]
        assert all(NUMBER.fullmatch(v) for r in table for v in r[4:9]), table
    assert [r[3] for r in own] == ["1", "3", "3", "3"]                 # P = 1: the run's end only
    assert all(float(r[7]) >= float(r[5]) * (1 - 1e-9) for r in own)   # BSP never below OBSP*
    assert "replayed run 6 with W, bytes and messages fitted over 6 sizes" in fft
    assert "P = 4, 8 exceed the" in fft or "every run had at most" in fft
    assert re.search(r"^PROCS\s+N\s+TIME", fft, re.M)                  # predict small at top by P
    assert "timeline of run" in fft and "P=2, N=131072 (measured)" in fft


def test_fft_at_p4_timeline_draws_nested_subgroups_one_depth_per_line(tmp_path):
    """samples/fft_pub at P = 4 halves machine 0 and each half again (0.0 -> 0.0.0, 0.0.1):
    under each processor the first line holds its half with both processors, the second its
    one-processor subgroup inside the half's span (they were drawn over each other)."""
    shutil.copy(ROOT / "samples" / "fft_pub" / "fft_pub.c", tmp_path)
    done = run_bounded([sys.executable, "-m", "call", "run", "--procs", "4:4:2", "fft_pub.c", "--", "8192"],
                       timeout=240, cwd=tmp_path, env=ENV)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "fft_pub.cll.4.dat"; timeline f P=4 with g=1e-9, L=1e-5'],
                          cwd=tmp_path, env={**ENV, "LLAC_MACHINE_DB": str(tmp_path / "none.sqlite")},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for rank in range(4):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"P{rank} "))
        half, single = lines[at + 1], lines[at + 2]
        for line, machine, ranks in ((half, f"0.{rank // 2}", "P0,P1" if rank < 2 else "P2,P3"),
                                     (single, f"0.{rank // 2}.{rank % 2}", f"P{rank}")):
            assert line.count("[") == line.count("]") == 1, line
            label = line[line.index("[") + 1:line.index("]")].rstrip("-")
            ends = [machine[i:] for i, c in enumerate(machine) if c == "."]     # a short span: .0.1, .1
            assert label in (f"{machine} {ranks}", machine, *ends, ""), line
        assert half.index("[") <= single.index("[") < single.index("]") <= half.index("]"), (half, single)
    assert "one line per nesting depth" in done.stdout
