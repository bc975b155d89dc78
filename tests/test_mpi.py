"""`#pragma cll parallel MPI` end to end with real mpicc and mpirun (2 and 4 ranks): trace
contents (ranks, P, record counts, measured bytes equal to what the program sent), the
sweep and its scripts, faults (partial report, an aborting rank, no MPI_Init, MPI missing,
bad process counts), multi-file programs, and the compile path with MPICH."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from call.scripts import cores, implementation, launch_environment
from support.runtime import run_bounded

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

MEASURED = ["msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners", "h", "mpi_time"]

EXCHANGE = r"""
#include <mpi.h>
#include <stdlib.h>
#pragma cll parallel MPI procs = 2:4:2
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, N, i;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *out = calloc(4096, sizeof *out), *in = calloc(4096, sizeof *in);
    #pragma cll for(N = 16; N <= 4096; N *= 4)
    #pragma cll both both[0] + both[1]*h
    #pragma cll ring ring[0] + ring[1]*N
    MPI_Sendrecv(out, N, MPI_DOUBLE, right, 0, in, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    #pragma cll end ring
    {
        MPI_Request r[2];
        MPI_Irecv(in, N, MPI_INT, right, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, N, MPI_INT, left, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    #pragma cll end both
    #pragma cll end for
    #pragma cll bcast bcast[0] + bcast[1]*log(P)
    MPI_Bcast(out, 100, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    #pragma cll end bcast
    #pragma cll allgather allgather[0] + allgather[1]*P
    MPI_Allgather(out, 10, MPI_DOUBLE, in, 10, MPI_DOUBLE, MPI_COMM_WORLD);
    #pragma cll end allgather
    #pragma cll alltoall alltoall[0] + alltoall[1]*P
    MPI_Alltoall(out, 30, MPI_INT, in, 30, MPI_INT, MPI_COMM_WORLD);
    #pragma cll end alltoall
    for (i = 0; i <= rank * 300; i++) {
        #pragma cll uneven uneven[0] + uneven[1]*i
        out[0] += i;
        #pragma cll end uneven
    }
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""

FAULTS = r"""
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#pragma cll parallel MPI procs = 4:4:2
char *volatile kept[2];
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ok";
    int rank = 0, N;
    if (strcmp(mode, "noinit")) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    #pragma cll for(N = 1; N <= 5; N++)
    #pragma cll work work[0] + work[1]*N
    { volatile double x = 0; for (int i = 0; i < N * 1000; i++) x += i; }
    #pragma cll end work
    #pragma cll end for
    if (!strcmp(mode, "abort") && rank == 2)
        abort();
    if (!strcmp(mode, "mpi_abort") && rank == 2)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (!strcmp(mode, "corrupt") && rank == 2) {   /* glibc aborts inside free(), its lock held */
        kept[0] = malloc(5000); kept[1] = malloc(5000);
        free(kept[0]); free(kept[0]);
    }
    if (strcmp(mode, "partial") || rank < 2) {
        #pragma cll report all
    }
    if (strcmp(mode, "noinit"))
        MPI_Finalize();
    return 0;
}
"""


def call(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the `call` command as a user does."""
    return run_bounded([sys.executable, "-m", "call", *args], timeout=240, cwd=cwd,
                       env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def header_and_records(path: Path) -> tuple[dict, dict[str, list[dict]], dict[str, list[str]]]:
    """A trace's global header keys, its records as dicts by experiment, and its columns."""
    header, columns, records, current = {}, {}, {}, None
    lines = path.read_text().splitlines()
    assert lines[-1] == "#end"
    data = lines.index("#data")
    for line in lines[:data]:
        if line.startswith("#experiment: "):
            current = line.split(": ", 1)[1]
        elif line.startswith("#  columns: "):
            columns[current] = line.split(": ", 1)[1].split()
        elif line.startswith("#") and ": " in line and current is None:
            key, value = line[1:].split(": ", 1)
            header[key] = value
    for line in lines[data + 1:-1]:
        name, *values = line.split()
        records.setdefault(name, []).append(dict(zip(columns[name], map(float, values))))
    return header, records, columns


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def exchange(tmp_path_factory) -> Path:
    """The exchange program run on 2 and 4 ranks (records sent in 4 KiB chunks)."""
    work = tmp_path_factory.mktemp("exchange")
    write(work, "exchange.c", EXCHANGE)
    done = call("run", "exchange.c", cwd=work, env={"CLL_MPI_CHUNK": "4096"})
    assert done.returncode == 0, done.stderr
    return work


@pytest.mark.parametrize("procs", [2, 4])
def test_trace_has_every_rank_and_the_bytes_each_sent(exchange, procs):
    header, records, columns = header_and_records(exchange / f"exchange.cll.{procs}.dat")
    assert not list(exchange.glob("*.rank*")) and not list(exchange.glob(".*tmp*"))  # copies gone
    assert header["parallel"] == "MPI" and header["procs"] == str(procs)
    assert header["status"] == "complete"
    assert header["ranks"].split() == [str(r) for r in range(procs)]
    offsets = [float(v) for v in header["clock_offsets"].split()]
    assert len(offsets) == procs and offsets[0] == 0 and all(abs(o) < 0.1 for o in offsets)
    assert columns["ring"] == ["rank", "thread", "time", "N", *MEASURED]
    assert columns["both"] == ["rank", "thread", "time", *MEASURED]   # h is measured, not captured
    for rank in range(procs):
        ring = [r for r in records["ring"] if r["rank"] == rank]
        assert sorted(r["N"] for r in ring) == [16, 64, 256, 1024, 4096]
        for r in ring:
            assert (r["msgs_sent"], r["bytes_sent"]) == (1, 8 * r["N"])
            assert (r["msgs_recv"], r["bytes_recv"]) == (1, 8 * r["N"])
            assert r["partners"] == (1 if procs == 2 else 2) and r["h"] == 16 * r["N"]
            assert 0 < r["mpi_time"] <= r["time"]
        both = [r for r in records["both"] if r["rank"] == rank]
        for r, n in zip(both, [16, 64, 256, 1024, 4096]):   # ring + the Isend/Irecv pair (ints)
            assert (r["msgs_sent"], r["bytes_sent"]) == (2, 8 * n + 4 * n)
            assert (r["msgs_recv"], r["bytes_recv"]) == (2, 8 * n + 4 * n)
            assert r["partners"] == (1 if procs == 2 else 2)
        uneven = [r for r in records["uneven"] if r["rank"] == rank]
        assert len(uneven) == rank * 300 + 1            # uneven counts, several 4 KiB chunks
        assert sorted(r["i"] for r in uneven) == list(range(rank * 300 + 1))
        (bcast,) = [r for r in records["bcast"] if r["rank"] == rank]
        sent, received = (procs - 1, 0) if rank == 0 else (0, 1)
        assert (bcast["msgs_sent"], bcast["msgs_recv"]) == (sent, received)
        assert bcast["P"] == procs and bcast["h"] == 800 * max(sent, received)
        for name, block in (("allgather", 80), ("alltoall", 120)):   # a block to/from each other rank
            (r,) = [r for r in records[name] if r["rank"] == rank]
            assert (r["msgs_sent"], r["bytes_sent"]) == (procs - 1, block * (procs - 1))
            assert (r["msgs_recv"], r["bytes_recv"]) == (procs - 1, block * (procs - 1))
            assert r["partners"] == procs - 1


def test_sweep_writes_a_shell_script_that_reruns_it_and_an_sbatch_script(exchange):
    done = call("run", "exchange.c", cwd=exchange)   # the fixture ran it once already
    assert done.returncode == 0, done.stderr
    assert "call: trace (P=2):" in done.stderr and "call: trace (P=4):" in done.stderr
    if os.geteuid() == 0:
        assert "running as root: set OMPI_ALLOW_RUN_AS_ROOT=1" in done.stderr
    if (os.cpu_count() or 1) < 4:
        assert "P=4 > " in done.stderr and "oversubscribing" in done.stderr
    shell, sbatch = exchange / "exchange.cll.sweep.sh", exchange / "exchange.cll.sbatch"
    assert "call: sweep scripts:" in done.stderr and shell.exists() and sbatch.exists()
    for p in (2, 4):
        (exchange / f"exchange.cll.{p}.dat").unlink()
    ran = subprocess.run(["sh", str(shell)], cwd=exchange, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    for p in (2, 4):
        header, records, _ = header_and_records(exchange / f"exchange.cll.{p}.dat")
        assert header["procs"] == str(p) and len(records["bcast"]) == p
    text = sbatch.read_text()
    assert text.startswith("#!/bin/bash\n") and "#SBATCH --ntasks=4\n" in text
    assert 'for P in ${PROCS:-2 4}; do' in text and 'srun --ntasks="$P" "$EXE"' in text
    assert "EXE=${EXE:-./.cll-build/exchange}" in text
    assert subprocess.run(["bash", "-n", str(sbatch)]).returncode == 0


NEEDS_FLAGS = r"""
#include <mpi.h>
#include <string.h>
#pragma cll parallel MPI
#ifndef WORDS
#error built without the flags given to call run
#endif
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = (int)strlen(WORDS);
    #pragma cll step step[0] + step[1]*n
    MPI_Barrier(MPI_COMM_WORLD);
    #pragma cll end step
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


def test_the_sweep_scripts_build_with_the_flags_given_to_call_run(tmp_path):
    write(tmp_path, "flags.c", NEEDS_FLAGS)
    done = call("run", "flags.c", "--procs", "1:1:2", "--cflags", "-O1 '-DWORDS=\"a b\"'", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    build = "call cc -O1 '-DWORDS=\"a b\"' flags.c -o ./.cll-build/flags"
    sbatch = (tmp_path / "flags.cll.sbatch").read_text()
    assert f"build it: mkdir -p .cll-build && {build}\n" in sbatch and "-O2" not in sbatch
    assert f"# EXE was built by `call run` as: {build}\n" in (tmp_path / "flags.cll.sweep.sh").read_text()
    # the script's build step, run as written, builds the program (without the flags it cannot)
    (tmp_path / ".cll-build" / "flags").unlink()
    built = run_bounded(["bash", "-c", f"mkdir -p .cll-build && {build}"], timeout=240, cwd=tmp_path,
                        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert built.returncode == 0, built.stderr
    assert (tmp_path / ".cll-build" / "flags").exists()


@pytest.fixture(scope="module")
def faults(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("faults")
    write(work, "faults.c", FAULTS)
    return work


def all_work_records(directory: Path) -> list[tuple[int, int]]:
    """(rank, N) of every `work` record in the P=4 traces on disk, main and per-rank."""
    found = []
    for path in directory.glob("faults.cll.4*.dat"):
        _, records, _ = header_and_records(path)
        found += [(int(r["rank"]), int(r["N"])) for r in records.get("work", [])]
    return sorted(found)


EVERY_RECORD = sorted((rank, n) for rank in range(4) for n in range(1, 6))


def test_report_reached_by_some_ranks_names_them_and_keeps_every_record(faults):
    done = call("run", "faults.c", "--", "partial", cwd=faults, env={"CLL_MPI_TIMEOUT": "1"})
    assert done.returncode == 0, done.stderr
    assert "ranks 2,3 did not report within 1 s" in done.stderr
    assert "set OMPI_MCA_odls_base_sigkill_timeout=10" in done.stderr     # call's grace time, said
    assert "(status: incomplete: ranks 2,3 did not report)" in done.stderr
    header, records, _ = header_and_records(faults / "faults.cll.4.dat")
    assert header["status"] == "incomplete: ranks 2,3 did not report"
    assert header["ranks"] == "0 1" and {r["rank"] for r in records["work"]} == {0, 1}
    assert "faults.cll.4.rank2.dat" in done.stderr and "faults.cll.4.rank3.dat" in done.stderr
    assert all_work_records(faults) == EVERY_RECORD


def test_a_rank_that_aborts_leaves_every_record_on_disk(faults):
    """Open MPI stops the other ranks with SIGTERM (after the grace time, 3 s here: call's
    default of 10 s is said in the test above) and their handlers save their records."""
    done = call("run", "faults.c", "--", "abort", cwd=faults,
                env={"CLL_MPI_TIMEOUT": "20", "OMPI_MCA_odls_base_sigkill_timeout": "3"})
    assert done.returncode != 0
    assert f"the program exited with status {done.returncode}; records kept in:" in done.stderr
    assert "faults.cll.4.rank2.dat (signal SIGABRT)" in done.stderr
    assert "faults.cll.4.dat (signal SIGTERM)" in done.stderr
    assert "Traceback" not in done.stderr
    assert all_work_records(faults) == EVERY_RECORD


def test_a_rank_that_calls_mpi_abort_leaves_every_record_on_disk(faults):
    """MPI_Abort ends the process without exit's handlers or a signal of its own: the layer's
    MPI_Abort saves the rank's records first; Open MPI stops the others with SIGTERM."""
    for old in faults.glob("faults.cll.4*.dat"):
        old.unlink()
    done = call("run", "faults.c", "--", "mpi_abort", cwd=faults,
                env={"CLL_MPI_TIMEOUT": "20", "OMPI_MCA_odls_base_sigkill_timeout": "3"})
    assert done.returncode == 3, done.stderr
    assert "faults.cll.4.rank2.dat (MPI_Abort with errorcode 3)" in done.stderr, done.stderr
    assert "faults.cll.4.dat (signal SIGTERM)" in done.stderr
    assert all_work_records(faults) == EVERY_RECORD
    loaded = run_bounded([sys.executable, "-m", "llac", "-c", 'load "faults.cll.4*.dat"'], timeout=120,
                         cwd=faults, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert loaded.returncode == 0, loaded.stderr
    assert "created work: 20 records" in loaded.stdout, loaded.stdout
    assert "(status: MPI_Abort with errorcode 3)" in loaded.stderr


def test_a_rank_that_dies_inside_malloc_leaves_every_record_on_disk(faults):
    """MPI processes have threads, so glibc's heap-corruption abort holds malloc's lock; the
    runtime's write on the way out allocates nothing (it used to hang there)."""
    done = call("run", "faults.c", "--", "corrupt", cwd=faults,
                env={"CLL_MPI_TIMEOUT": "20", "OMPI_MCA_odls_base_sigkill_timeout": "3"})
    assert done.returncode != 0 and "double free or corruption" in done.stderr
    assert "faults.cll.4.rank2.dat (signal SIGABRT)" in done.stderr
    assert "could not be saved" not in done.stderr and "Traceback" not in done.stderr
    assert all_work_records(faults) == EVERY_RECORD


def test_a_program_that_never_calls_mpi_init_is_told_so(faults):
    """Before MPI_Init a rank has no P: it writes no trace (every rank wrote prog.cll.1.dat,
    over an earlier sweep's P=1 trace)."""
    earlier = faults / "faults.cll.1.dat"
    earlier.write_text("an earlier sweep's P=1 trace\n")
    done = call("run", "faults.c", "--", "noinit", cwd=faults,
                env={"OMPI_MCA_odls_base_sigkill_timeout": "3"})      # the other ranks have nothing to write
    assert earlier.read_text() == "an earlier sweep's P=1 trace\n"
    assert [path.name for path in faults.glob("faults.cll.1*")] == [earlier.name]
    earlier.unlink()
    assert done.returncode == 70
    assert ("cll: error: experiment 'work' (faults.c:15:5) begins before MPI_Init: a '#pragma cll "
            "parallel MPI' program must call MPI_Init first") in done.stderr
    assert "the run failed (status 70) and wrote no trace for P=4; see the messages above" in done.stderr


def test_mpi_not_installed_names_the_packages(faults):
    done = call("cc", "faults.c", "-o", "x", cwd=faults, env={"MPICC": "/nonexistent/mpicc"})
    assert done.returncode == 1
    assert done.stderr.startswith("call cc: error: MPI is not installed: $MPICC (/nonexistent/mpicc)")
    assert "libopenmpi-dev openmpi-bin" in done.stderr
    done = call("run", "faults.c", cwd=faults, env={"MPIRUN": "no-such-mpirun"})
    assert done.returncode == 1
    assert "call run: error: MPI is not installed: no-such-mpirun was not found" in done.stderr


def test_process_counts_mpi_will_not_start_are_refused(faults, tmp_path):
    done = call("run", "faults.c", "--procs", "0:4:2", cwd=faults)
    assert done.returncode == 1 and "need 1 <= A <= B <= 2147483647 and F >= 2" in done.stderr
    write(tmp_path, "zero.c", FAULTS.replace("procs = 4:4:2", "procs = 0:4:2"))
    done = call("run", "zero.c", cwd=tmp_path)
    assert done.returncode == 1 and "zero.c:5:34: error: procs: the first count must be at least 1" in done.stderr
    huge = 64 * len(os.sched_getaffinity(0))
    done = call("run", "faults.c", "--procs", f"{huge}:{huge}:2", cwd=faults)
    assert done.returncode == 1
    # the count came from the command line: no place in the source is blamed
    assert f"call run: error: --procs asks for P={huge}: more processes than MPI will start here" in done.stderr
    assert "faults.c:" not in done.stderr and "#pragma" not in done.stderr
    # the advice is true: the Slurm script for the large counts is written before refusing
    sbatch = faults / "faults.cll.sbatch"
    assert f"with the Slurm script {sbatch}" in done.stderr and "nothing was run" in done.stderr
    assert f"#SBATCH --ntasks={huge}" in sbatch.read_text()
    assert not list(faults.glob(f"faults.cll.{huge}.dat"))
    write(tmp_path, "huge.c", FAULTS.replace("procs = 4:4:2", f"procs = {huge}:{huge}:2"))
    done = call("run", "huge.c", cwd=tmp_path)   # the pragma's own clause asks: its place
    assert done.returncode == 1 and f"huge.c:5:1: error: procs asks for P={huge}:" in done.stderr
    if len(os.sched_getaffinity(0)) < 4:
        done = call("run", "faults.c", "--no-oversubscribe", cwd=faults)
        assert done.returncode != 0
        assert ("mpirun could not start 4 processes (not enough slots: call run oversubscribes "
                "unless --no-oversubscribe is given)") in done.stderr


MAIN_FILE = r"""
#include <mpi.h>
#pragma cll parallel MPI
void helper(int n);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = 10;
    #pragma cll outer outer[0] + outer[1]*n
    helper(n);
    #pragma cll end outer
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""
HELPER_FILE = r"""
#include <mpi.h>
#pragma cll parallel MPI
void helper(int n) {
    double x[10] = {0};
    #pragma cll inner inner[0] + inner[1]*n
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    #pragma cll end inner
}
"""


def test_a_program_of_two_mpi_files_links_once_and_counts_in_both(tmp_path):
    write(tmp_path, "main.c", MAIN_FILE)
    write(tmp_path, "helper.c", HELPER_FILE)
    built = call("cc", "-O2", "-Wall", "main.c", "helper.c", "-o", "prog", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    ran = subprocess.run(["mpirun", "-np", "2", "./prog"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    header, records, _ = header_and_records(tmp_path / "prog.cll.2.dat")
    assert header["source"] == "main.c,helper.c" or header["source"] == "helper.c,main.c"
    for name in ("outer", "inner"):   # the allreduce counted once, in both nested experiments
        assert [(r["msgs_sent"], r["bytes_sent"], r["partners"]) for r in records[name]] == [(1, 80, 1)] * 2


def build_with_mpich(directory: Path, name: str) -> str:
    """`call cc` NAME.c with MPICH's mpicc (-Wall -Wextra): no warning of the MPI layer; returns
    the program's symbols (nm)."""
    done = call("cc", "-O2", "-Wall", "-Wextra", f"{name}.c", "-o", name, cwd=directory,
                env={"MPICC": "mpicc.mpich"})
    assert done.returncode == 0, done.stderr
    # (GCC 12 warns about MPICH's own MPI_STATUSES_IGNORE in MPI_Waitall, with or without call)
    assert not [line for line in done.stderr.splitlines()
                if ("cll_mpi.h:" in line or "cll_mpi.c:" in line)
                and (": warning:" in line or ": error:" in line)]
    return subprocess.run(["nm", str(directory / name)], capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None, reason="MPICH is not installed (apt-get install mpich)")
def test_mpich_compiles_the_same_program(tmp_path):
    write(tmp_path, "exchange.c", EXCHANGE)
    symbols = build_with_mpich(tmp_path, "exchange")
    assert " W MPI_Sendrecv" in symbols and " W MPI_Init" in symbols


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None,
                    reason="MPICH is not installed (apt-get install mpich)")
def test_under_mpich_call_run_names_no_open_mpi_variable(tmp_path):
    """call run's notes under MPICH: no OMPI_ variable (MPICH ignores them), the
    oversubscription said without one."""
    write(tmp_path, "exchange.c", EXCHANGE)
    done = call("run", "exchange.c", cwd=tmp_path, env={"MPICC": "mpicc.mpich", "MPIRUN": "mpirun.mpich"})
    assert done.returncode == 0, done.stderr
    assert "call: trace (P=4):" in done.stderr and "OMPI_" not in done.stderr, done.stderr
    assert "(P=4): mpirun.mpich -np 4 .cll-build/exchange" in done.stderr    # the launcher that runs
    if cores() < 4:
        assert f"P=4 > {cores()} cores: oversubscribing; ranks share cores" in done.stderr


def test_the_notes_name_the_variables_of_the_implementation_run():
    """Open MPI's launcher gets its variables and notes naming them; MPICH's neither, and it
    is said to oversubscribe even under --no-oversubscribe (Hydra starts the ranks anyway)."""
    assert implementation(("mpirun",)) == "Open MPI" and implementation(("true",)) is None
    extra, notes = launch_environment(cores() + 1, True, ["mpirun"])
    assert extra["OMPI_MCA_rmaps_base_oversubscribe"] == "1" and any("OMPI_MCA_rmaps" in n for n in notes)
    if shutil.which("mpirun.mpich"):
        assert implementation(("mpirun.mpich",)) == "MPICH"
        for oversubscribe in (True, False):
            extra, notes = launch_environment(cores() + 1, oversubscribe, ["mpirun.mpich"])
            assert extra == {} and notes == [f"P={cores() + 1} > {cores()} cores: oversubscribing; ranks "
                                             f"share cores, so times are not those of {cores() + 1} "
                                             f"dedicated processors"]


ABORT_AFTER_REPORT = """#include <mpi.h>
#pragma cll parallel MPI procs = 2:2:2
static volatile double sink;
int main(int argc, char **argv) {
    int me;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (long k = 0; k < 5; k++) {
        #pragma cll fx fx[0] + fx[1]*k
        sink = k;
        #pragma cll end fx
    }
    #pragma cll report all
    for (long k = 1000; k < 1003; k++) {
        #pragma cll fx fx[0] + fx[1]*k
        sink = k;
        #pragma cll end fx
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1 && argc > 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.parametrize("abort", [True, False])
def test_records_measured_after_a_gathered_report_survive_an_abort_or_the_end(tmp_path, abort):
    """Review 44: after rank 0 had gathered a report, the 3 records per rank measured before
    MPI_Abort vanished (the trace said `complete`), and at a normal end only a warning said
    so; each rank now writes its own file (rank 0's as .rank0, beside the gathered trace), and
    llac reads every record once."""
    write(tmp_path, "late.c", ABORT_AFTER_REPORT)
    done = call("run", "late.c", *(["--", "abort"] if abort else []), cwd=tmp_path)
    assert (done.returncode != 0) == abort, done.stderr
    assert "late.cll.2.rank0.dat" in done.stderr and "late.cll.2.rank1.dat" in done.stderr, done.stderr
    header, records, _ = header_and_records(tmp_path / "late.cll.2.dat")
    assert header["status"] == "complete" and len(records["fx"]) == 10          # the gathered report
    loaded = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "late.cll.2*.dat"; describe fx'],
                            cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "created fx: 16 records" in loaded.stdout, loaded.stdout + loaded.stderr


LATE_RANK_0 = """#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>
#pragma cll parallel MPI procs = 3:3:2
static volatile double sink;
int main(int argc, char **argv) {
    int me, reports = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int rep = 0; rep < reports; rep++) {
        for (long k = 0; k < 5; k++) {
            long kk = k + 100 * rep;
            #pragma cll fx fx[0] + fx[1]*kk
            sink = kk;
            #pragma cll end fx
        }
        if (me == 0 && rep == 0)
            sleep(3);                       /* rank 0 reaches report after the others gave up */
        #pragma cll report all
    }
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.parametrize("reports", ["1", "2"])
def test_rank_0_late_at_report_neither_hangs_nor_loses_records(tmp_path, reports):
    """Review 44: rank 0 reaching report after the others stopped waiting answered their counts
    with a go and waited for their records forever (the run hung until killed; with two
    reports a rank took the stale go of the first). Each rank now keeps its records in its
    own file, rank 0's trace says which were not gathered, and llac reads every record."""
    write(tmp_path, "late0.c", LATE_RANK_0)
    done = call("run", "late0.c", "--", reports, cwd=tmp_path, env={"CLL_MPI_TIMEOUT": "1"})
    assert done.returncode == 0, done.stderr
    header, _, _ = header_and_records(tmp_path / "late0.cll.3.dat")
    assert header["status"] == "incomplete: ranks 1,2 were not gathered", header
    loaded = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "late0.cll.3*.dat"'], cwd=tmp_path,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert f"created fx: {15 * int(reports)} records" in loaded.stdout, loaded.stdout + loaded.stderr
    alone = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "late0.cll.3.dat"'], cwd=tmp_path,
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert ("late0.cll.3.rank1.dat, late0.cll.3.rank2.dat next to late0.cll.3.dat hold records it lacks"
            in alone.stderr), alone.stderr                     # the gathered trace alone says so


TINY = """#include <mpi.h>
#pragma cll parallel MPI procs = 2:2:2
static volatile double sink;
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (long k = 0; k < 3; k++) {
        #pragma cll fx fx[0] + fx[1]*k
        sink = k;
        #pragma cll end fx
    }
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


def test_a_report_setting_that_is_no_number_is_said_once_and_the_default_stands(tmp_path):
    """Review 44: CLL_MPI_CHUNK=100 or CLL_MPI_TIMEOUT=abc fell back to the default silently."""
    write(tmp_path, "tiny.c", TINY)
    done = call("run", "tiny.c", cwd=tmp_path, env={"CLL_MPI_TIMEOUT": "abc", "CLL_MPI_CHUNK": "100"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("cll: warning: CLL_MPI_CHUNK=100 is not a number of bytes of at least 4096: "
                             "1048576 is used") == 1, done.stderr
    assert "cll: warning: CLL_MPI_TIMEOUT=abc is not a number of seconds above 0: 60 is used" in done.stderr
    _, records, _ = header_and_records(tmp_path / "tiny.cll.2.dat")
    assert len(records["fx"]) == 6
