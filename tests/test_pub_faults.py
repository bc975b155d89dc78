"""A PUB program whose ranks are not gathered keeps their supersteps (docs/pub.md, "Ranks that
are not gathered"), run as a user runs it (`call run`, real mpicc and mpirun on 2 and 4 ranks,
oversubscribed): a rank that aborts inside a run after two supersteps (the others are stopped
by SIGTERM), one that reaches report after rank 0 gave up (CLL_MPI_TIMEOUT=1) and one that
ends without report. Each `.rank<r>` trace holds that rank's
`@step` records (its own clock: `#superstep_origin`, `#superstep_starts`), rank 0's trace keeps
its own and the reporting ranks' supersteps, and llac loads any of them, names the missing
processors and their files, and evaluates the runs once the files of the execution are
loaded together. The program: tests/pub_programs/pub_faults.c. And the library's messages name
a superstep as the trace numbers it (run, machine, step: docs/pub.md, "Supersteps in messages"),
so that the records of a rank stopped by one end just before it (tests/pub_programs/pub_places.c)."""
from __future__ import annotations

import os
import re
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


def call_run(folder: Path, procs: int, mode: str, program: str = "pub_faults", **env) -> subprocess.CompletedProcess:
    """`call run PROGRAM.c` at P = procs only, with the program's argument `mode`."""
    done = run_bounded([sys.executable, "-m", "call", "run", f"{program}.c", "--procs", f"{procs}:{procs}:2",
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


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("pub_places")
    shutil.copy(PROGRAM.with_name("pub_places.c"), work)
    return work


def said_by_rank(done: subprocess.CompletedProcess, function: str) -> dict[int, str]:
    """The library's message of each rank that printed one (from `function`), after its prefix."""
    said = {}
    for line in done.stderr.splitlines():
        found = re.match(rf"pub: {function}: rank (\d+) \(processor \d+ of \d+ in [^)]*\): (.*)", line)
        if found:
            said[int(found.group(1))] = found.group(2)
    return said


def last_step(folder: Path, procs: int, rank: int, run: int, machine: str) -> int:
    """The last STEP of machine `machine` in run `run` among the @step records that `rank`
    wrote to its own trace when it was stopped (rank 0's at the trace's path)."""
    name = f"pub_places.cll.{procs}.rank{rank}.dat" if rank else f"pub_places.cll.{procs}.dat"
    return max(s.step for s in read_trace(folder / name).supersteps.steps
               if s.rank == rank and s.run == run and s.machine == machine)


@pytest.mark.parametrize("procs, mode, processor, machine, step", [
    (2, "short", "processor 1 of 2 in the machine of bsp_begin", "0", 3),
    (4, "partition", "processor 1 of 2 in a partition", "0.1", 2)])
def test_a_wait_that_times_out_names_its_superstep_as_the_trace_does(places, procs, mode, processor, machine, step):
    """The last processor waits for 2 messages where 1 is sent, in run 2: in machine 0 after a
    partition (the trace's step 3, the library's 7th superstep since bsp_begin: "superstep 6",
    counted from 0, before), or in the second superstep of its subgroup 0.1. Its records of
    that machine and run stop at the superstep before."""
    for old in places.glob("pub_places.cll.*"):
        old.unlink()
    done = call_run(places, procs, mode, "pub_places", PUB_TIMEOUT="2", OMPI_MCA_odls_base_sigkill_timeout="3")
    last = procs - 1
    assert done.returncode != 0
    assert (f"pub: bsp_oblsync: rank {last} ({processor}): waited 2 s for message 2 of 2 in superstep {step} of "
            f"machine {machine} in run 2 and none arrived: the synchronisation cannot be satisfied") in done.stderr
    assert last_step(places, procs, last, 2, machine) == step - 1


@pytest.mark.parametrize("procs, mode", [(2, "steps"), (4, "steps"), (4, "mean")])
def test_processors_in_different_supersteps_are_named_as_the_trace_numbers_them(places, procs, mode):
    """In run 2, after the partition: processor 0 calls bsp_sync in superstep 3 of machine 0, the
    others after a bsp_oblsync(0) in superstep 4 ("mean": the last one after two, in 5). Each
    processor that speaks names the first one in another superstep than its own; "this one in
    superstep 6, mean 6.75" before (rank 0 at P = 4). With "mean", processors 1 and 2 are in the superstep the
    others average: they passed bsp_sync before (the sum of the supersteps matched theirs),
    and must stop there too, their records ending before it."""
    for old in places.glob("pub_places.cll.*"):
        old.unlink()
    done = call_run(places, procs, mode, "pub_places", PUB_TIMEOUT="2", OMPI_MCA_odls_base_sigkill_timeout="3")
    assert done.returncode != 0
    said = said_by_rank(done, "bsp_sync")
    assert said and not any("mean" in line for line in done.stderr.splitlines() if line.startswith("pub:")), done.stderr
    mine = {rank: 3 if rank == 0 else 5 if mode == "mean" and rank == procs - 1 else 4 for rank in range(procs)}
    for rank, text in said.items():
        differ = sum(mine[other] != mine[rank] for other in mine)
        first = min(other for other in mine if mine[other] != mine[rank])
        more = f" ({differ} processors differ from this one)" if differ > 1 else ""
        assert text.startswith(f"processor {first} (rank {first}) reached bsp_sync in superstep {mine[first]} of "
                               f"machine 0 in run 2 while this one is in superstep {mine[rank]}{more}: every "
                               f"processor of a machine has finished the same number of supersteps"), text
    for rank in range(procs):          # no processor passed its bsp_sync: records end before it
        assert last_step(places, procs, rank, 2, "0") == mine[rank] - 1


def test_a_wait_outside_the_runs_says_so(places):
    """After the runs (no superstep recorded) the count is the library's since bsp_begin: 11
    supersteps finished (each run's barrier and its supersteps of machine 0, 3, 2 and 3: a
    partition is none in the library's count), so the wait is in superstep 12."""
    for old in places.glob("pub_places.cll.*"):
        old.unlink()
    done = call_run(places, 2, "outside", "pub_places", PUB_TIMEOUT="2", OMPI_MCA_odls_base_sigkill_timeout="3")
    assert done.returncode != 0
    assert said_by_rank(done, "bsp_oblsync")[1].startswith(
        "waited 2 s for message 1 of 1 in superstep 12 (not in a run of the trace) and none arrived"), done.stderr
