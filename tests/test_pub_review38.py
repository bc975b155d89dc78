"""Review 38 of the PUB library and its traces, as a new user met them (real mpicc, mpirun,
`call run` and llac):

A. Processors that pass bsp_partition the same r but another Y were told "passed other
   arguments to bsp_partition (r = 2 there; r = 2, Y = {2,4} here)": the other processor's Y
   was not shown (the meeting exchanges only a hash of it), so nothing showed what differed.
   Its arguments are now learnt when they differ, and shown as fully as this one's.
B. A run that a rank died inside before it finished a superstep: loading the traces of the
   execution together was advised, though they were loaded (the rank's own trace, holding no
   superstep, was not counted as loaded); and `load` promised `obsp e` an evaluation that it
   then refused for lack of records of a finished run.
C. The first run's first superstep held 15-20 us of the tracer's one-time work (the thread's
   record buffer, the run's bookkeeping), which the experiment's record does not: its W, and
   the run's last END, exceeded the experiment's time (at P = 1 by 14-17 us). The run now
   starts where the experiment's clock does, and that work is done before the run's barrier.
The program: tests/pub_programs/pub_review38.c."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from call.scripts import launch_environment
from llac.trace import read_trace
from support.runtime import build_pub_program, run_bounded

REPO = Path(__file__).resolve().parent.parent
GIVEN = "with g=1e-9, L=1e-6"

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")


def mpirun(program, procs: int, mode: str) -> subprocess.CompletedProcess:
    """mpirun -np procs PROGRAM mode, oversubscribed as `call run` does, PUB_TIMEOUT=10 (a
    passing run never waits for it), without the grace before the other ranks are killed."""
    extra = {key: value for key, value in launch_environment(procs, True)[0].items()
             if key != "OMPI_MCA_odls_base_sigkill_timeout"}
    return run_bounded(["mpirun", "-np", str(procs), str(program), mode], timeout=90,
                       env={**os.environ, **extra, "PUB_TIMEOUT": "10"})


def test_a_partition_with_other_bounds_shows_both_processors_bounds(tmp_path):
    """partition_bounds at P = 4: every processor passes r = 2, processor 0 Y = {1,4}, the
    others Y = {2,4}. Each processor that speaks shows the other's Y beside its own."""
    done = mpirun(build_pub_program(tmp_path, "pub_cases"), 4, "partition_bounds")
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("pub: ")]
    assert said, done.stderr
    for line in said:
        rank = int(re.match(r"pub: bsp_partition: rank (\d+) ", line).group(1))
        words = ("processor 1 (rank 1) passed other arguments to bsp_partition (r = 2, Y = {2,4} there; "
                 "r = 2, Y = {1,4} here) (3 processors differ from this one)" if rank == 0 else
                 "processor 0 (rank 0) passed other arguments to bsp_partition (r = 2, Y = {1,4} there; "
                 "r = 2, Y = {2,4} here)")
        assert f"): {words}: every processor of the machine passes the same r and Y" in line, line


def call_run(folder: Path, procs: str, mode: str) -> subprocess.CompletedProcess:
    """`call run pub_review38.c --procs PROCS -- MODE` in `folder`, as a user runs it (Open
    MPI's grace before killing the other ranks of a failed run: 2 s, they write in ms)."""
    shutil.copy(REPO / "tests" / "pub_programs" / "pub_review38.c", folder)
    done = run_bounded([sys.executable, "-m", "call", "run", "pub_review38.c", "--procs", procs, "--", mode],
                       timeout=300, cwd=folder, env=dict(os.environ, PYTHONPATH=str(REPO),
                                                         OMPI_MCA_odls_base_sigkill_timeout="2"))
    assert "Traceback" not in done.stderr
    return done


def llac(folder: Path, source: str) -> str:
    """What the llac command line prints on `source` (stdout and stderr), as a user runs it:
    never a traceback (a statement's error, as `obsp e` here, exits 1)."""
    done = run_bounded([sys.executable, "-m", "llac", "-c", source], timeout=120, cwd=folder,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout + done.stderr


def test_a_rank_that_finished_no_superstep_of_its_run_is_said_to_have_stopped_inside_it(tmp_path):
    """extra at P = 2: processor 0 makes one oblivious superstep, then both meet at bsp_sync in
    different supersteps and stop; rank 1's own trace holds no superstep. Loaded together,
    whatever the order, the run is said to have stopped inside (it said to load the files
    that were loaded), and the load names the obsp that evaluates the supersteps (it promised
    `obsp e`, which has no record of a finished run)."""
    done = call_run(tmp_path, "2:2:2", "extra")
    assert done.returncode != 0 and (tmp_path / "pub_review38.cll.2.rank1.dat").exists(), done.stderr
    stopped = ("not evaluated: {files}, run 1: the run did not end: rank 1 finished no superstep of it (its own "
               "trace is loaded and holds none of its supersteps: pub_review38.cll.2.rank1.dat): the program "
               "stopped inside the run")
    for files in (["pub_review38.cll.2.dat", "pub_review38.cll.2.rank1.dat"],
                  ["pub_review38.cll.2.rank1.dat", "pub_review38.cll.2.dat"]):
        loads = "; ".join(f'load "{f}"' for f in files)
        said = llac(tmp_path, f"{loads}; obsp pub_review38 {GIVEN}; obsp e {GIVEN}")
        assert stopped.format(files=" + ".join(files)) in said, said
        assert "load the traces of the execution together" not in said, said
        assert "pub_review38.cll.2.rank1.dat: rank 1 finished no superstep of a run: its own trace holds none" in said
        assert "obsp e evaluates them" not in said, said
        assert "none of e's records began a run" in said, said
    said = llac(tmp_path, 'load "pub_review38.cll.2*.dat"')
    assert ("kept the supersteps of pub_review38 at P=2: 1 records (obsp pub_review38 evaluates them; e has no "
            "record of a run that ended at P=2, the trace's status: ") in said, said


def test_no_superstep_of_a_run_outlasts_its_experiment(tmp_path):
    """empty at P = 1 and 2: in every run, the latest END of a processor that started it first
    (its ENDs are measured from its own start) is within the experiment's time on that
    processor; the first run's were 15-30 us beyond it (the tracer's one-time work, after the
    run's start and before the experiment's clock), later runs' 0.1-1 us (its bookkeeping)."""
    done = call_run(tmp_path, "1:2:2", "empty")
    assert done.returncode == 0, done.stderr
    for procs in (1, 2):
        trace = read_trace(tmp_path / f"pub_review38.cll.{procs}.dat")
        columns = trace.experiments["e"].columns
        times = {(int(run), int(rank)): time for run, rank, time in zip(columns["run"], columns["rank"], columns["time"])}
        assert len(times) == 4 * procs, times
        beyond: dict[int, list[float]] = {}
        for (run, rank), time in times.items():
            last = max(s.end for s in trace.supersteps.steps if s.run == run and s.rank == rank)
            beyond.setdefault(run, []).append(last - time - 1e-3 * time)    # the two clocks' rates
        assert all(min(over) <= 1e-7 for over in beyond.values()), (procs, beyond)
