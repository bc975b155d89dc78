"""A PUB program whose ranks are not gathered keeps their supersteps (docs/pub.md, "Ranks that
are not gathered"), run as a user runs it (`call run`, real mpicc and mpirun on 2 and 4 ranks,
oversubscribed): a rank that aborts inside a run after two supersteps (the others are stopped
by SIGTERM), one that reaches report after rank 0 gave up (CLL_MPI_TIMEOUT=1) and one that
ends without report. Each `.rank<r>` trace holds that rank's
`@step` records (its own clock: `#superstep_origin`, `#superstep_starts`), rank 0's trace keeps
its own and the reporting ranks' supersteps, and llac loads any of them, names the missing
processors and their files, and evaluates the runs once the files of the execution are
loaded together. The program: tests/pub_programs/pub_faults.c."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llac.trace import read_trace
from support.runtime import run_bounded

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / "tests" / "pub_programs" / "pub_faults.c"
RUNS, STEPS = 3, 3           # pub_faults: runs of f (N = 1024, 2048, 4096), oblivious supersteps per run
GIVEN = "with g=1e-9, L=1e-6"


def call_run(folder: Path, procs: int, mode: str, **env) -> subprocess.CompletedProcess:
    """`call run pub_faults.c` at P = procs only, with the program's argument `mode`."""
    done = run_bounded([sys.executable, "-m", "call", "run", "pub_faults.c", "--procs", f"{procs}:{procs}:2",
                        "--", mode], timeout=300, cwd=folder,
                       env=dict(os.environ, PYTHONPATH=str(REPO), **env))
    assert "Traceback" not in done.stderr
    return done


def llac(folder: Path, source: str) -> subprocess.CompletedProcess:
    """The llac command line on `source`, as a user runs it."""
    done = run_bounded([sys.executable, "-m", "llac", "-c", source], timeout=120, cwd=folder,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in done.stderr
    return done


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("pub_faults")
    shutil.copy(PROGRAM, work)
    return work


def steps_by_rank(path: Path) -> dict[int, list]:
    """The `@step` records of a trace by rank, read by llac's reader (no problem but the status)."""
    trace = read_trace(path)
    assert all("did not finish normally" in p.message for p in trace.problems), trace.problems
    ranks: dict[int, list] = {}
    for step in trace.supersteps.steps:
        ranks.setdefault(step.rank, []).append(step)
    return ranks


def run_lengths(steps) -> dict[int, tuple[int, str]]:
    """Per run, how many supersteps of machine 0 a rank made and how its last one ended."""
    runs: dict[int, list] = {}
    for step in steps:
        runs.setdefault(step.run, []).append(step)
    return {run: (len(made), max(made, key=lambda s: s.step).sync) for run, made in runs.items()}


@pytest.mark.parametrize("procs, mode, status", [
    (2, "abort", "signal SIGABRT"), (4, "abort", "signal SIGABRT"),
    (2, "misuse", "MPI_Abort with errorcode 1"), (4, "misuse", "MPI_Abort with errorcode 1")])
def test_a_rank_that_aborts_inside_a_run_leaves_its_supersteps_in_its_rank_file(folder, procs, mode, status):
    """abort(): the rank's signal handler saves its records; a misuse of the library: pub.c's
    message, then MPI_Abort, which saves them first. The others get Open MPI's SIGTERM."""
    for old in folder.glob("pub_faults.cll.*"):
        old.unlink()
    done = call_run(folder, procs, mode, OMPI_MCA_odls_base_sigkill_timeout="3")   # the ranks write in ms
    last = procs - 1
    assert done.returncode != 0
    assert f"pub_faults.cll.{procs}.rank{last}.dat ({status})" in done.stderr, done.stderr
    if mode == "misuse":
        assert f"pub: bsp_send: rank {last} (processor {last} of {procs} " in done.stderr
    files = {r: folder / (f"pub_faults.cll.{procs}.rank{r}.dat" if r else f"pub_faults.cll.{procs}.dat")
             for r in range(procs)}
    aborted = read_trace(files[last])
    assert aborted.header["status"] == status
    assert aborted.header["superstep_origin"] == f"rank {last}"
    assert len(aborted.header["superstep_starts"].split()) == 2          # it began run 2
    assert {s.rank for s in aborted.supersteps.steps} == {last}
    assert run_lengths(aborted.supersteps.steps) == {1: (STEPS + 1, "end"), 2: (2, "obl")}
    assert all(path.exists() for path in files.values())   # each rank wrote its trace before the SIGKILL
    for rank, path in files.items():          # the others, stopped inside run 2 by Open MPI
        if rank != last:
            trace = read_trace(path)
            assert trace.header["status"] == "signal SIGTERM" and trace.header["superstep_origin"] == f"rank {rank}"
            assert {s.rank for s in trace.supersteps.steps} == {rank}
            assert run_lengths(trace.supersteps.steps)[1] == (STEPS + 1, "end")
    assert len({read_trace(path).header["execution"] for path in files.values()}) == 1

    alone = llac(folder, f'load "{files[last].name}"; obsp pub_faults {GIVEN}')
    assert alone.returncode == 0, alone.stderr
    others = ",".join(map(str, range(last)))
    assert (f"run 1: the supersteps of rank{'s' if last > 1 else ''} {others} are missing ({files[last].name} "
            f"holds rank {last}'s own records only)") in alone.stdout

    together = llac(folder, f'load "pub_faults.cll.{procs}*.dat"; obsp pub_faults {GIVEN}; obsp f {GIVEN}')
    assert together.returncode == 0, together.stderr
    assert f"added the supersteps of rank {last} from {files[last].name}" in together.stdout
    lines = together.stdout.splitlines()
    assert any(line.split()[:3] == [str(procs), "1", str(STEPS + 1)] for line in lines), together.stdout
    assert "run 2: the run did not end: rank" in together.stdout
    assert "the program stopped inside the run" in together.stdout


@pytest.mark.parametrize("procs, mode, status", [
    (2, "late", "incomplete: rank 0 did not collect this rank's records"),
    (4, "late", "incomplete: rank 0 did not collect this rank's records"),
    (4, "exit", "exit-without-report")])
def test_a_rank_that_reports_after_rank_0_gave_up_or_never_keeps_its_supersteps(folder, procs, mode, status):
    for old in folder.glob("pub_faults.cll.*"):
        old.unlink()
    done = call_run(folder, procs, mode, CLL_MPI_TIMEOUT="1")
    last = procs - 1
    assert done.returncode == 0, done.stderr
    gathered, own = folder / f"pub_faults.cll.{procs}.dat", folder / f"pub_faults.cll.{procs}.rank{last}.dat"
    trace = read_trace(gathered)
    assert trace.header["status"] == f"incomplete: ranks {last} did not report"
    assert trace.header["ranks"] == " ".join(map(str, range(last)))
    assert "superstep_origin" not in trace.header and len(trace.header["superstep_starts"].split()) == RUNS
    ranks = steps_by_rank(gathered)
    assert sorted(ranks) == list(range(last))
    for steps in ranks.values():            # every reporting rank's runs, whole
        assert run_lengths(steps) == {run: (STEPS + 1, "end") for run in range(1, RUNS + 1)}

    late = read_trace(own)
    assert late.header["status"] == status
    assert late.header["superstep_origin"] == f"rank {last}"
    assert late.header["execution"] == trace.header["execution"]
    assert run_lengths(steps_by_rank(own)[last]) == {run: (STEPS + 1, "end") for run in range(1, RUNS + 1)}

    alone = llac(folder, f'load "{gathered.name}"; obsp f {GIVEN}')
    assert alone.returncode == 0, alone.stderr
    assert (f"run 1: the supersteps of rank {last} are missing (the trace's status: incomplete: ranks {last} "
            f"did not report); a rank that is not gathered writes them to its own trace ({own.name})") in alone.stdout
    drawn = llac(folder, f'load "{gathered.name}"; timeline f {GIVEN}')
    assert drawn.returncode == 1 and f"the supersteps of rank {last} are missing" in drawn.stderr, drawn.stderr
    together = llac(folder, f'load "pub_faults.cll.{procs}*.dat"; obsp f {GIVEN}; timeline f {GIVEN}')
    assert together.returncode == 0, together.stderr
    assert f"added the supersteps of rank {last} from {own.name}" in together.stdout
    rows = [line.split() for line in together.stdout.splitlines() if line.split()[:1] == [str(procs)]]
    assert [row[1] for row in rows] == ["1024", "2048", "4096"]
    assert all(row[3] == str(STEPS + 1) and row[4] != "-" for row in rows), together.stdout
    assert f"P{last} " in together.stdout               # the timeline has the late rank's row
