"""Experiments loaded from several trace files, on real MPI runs (call cc, mpirun -np 2): what
the files disagree on is no file's alone (the machine for cache-aware prediction and
oversubscription, the timer's cost), and a rank's own `.rank<r>` copy of records the gathered
trace holds too is not counted twice."""
import os
import shutil
import subprocess
import sys

import pytest

from cll_grammar.machinedb import MachineDB
from support.machines import probe_run
from support.runtime import read_trace, run_bounded

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed")

# The rank's own copy survives the gather, as when a rank is killed between rank 0's
# acknowledgement and the deletion of its copy (docs/mpi.md, "Faults"): unlink of a `.rank`
# file is made to do nothing by linking with -Wl,--wrap=unlink.
PROGRAM = r"""
#include <mpi.h>
#include <string.h>
#pragma cll parallel MPI
int __real_unlink(const char *path);
int __wrap_unlink(const char *path) { return strstr(path, ".rank") ? 0 : __real_unlink(path); }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int n = 1000; n <= 8000; n *= 2)
        for (int r = 0; r < 3; r++) {
            #pragma cll work work[0] + work[1]*n*P bytes 8*n
            { volatile double x = 0; for (int i = 0; i < n; i++) x += i; }
            #pragma cll end work
        }
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two executions of the program on 2 ranks, in folders a and b: each has the gathered
    trace prog.cll.2.dat (24 records) and rank 1's own copy prog.cll.2.rank1.dat (its 12)."""
    root = tmp_path_factory.mktemp("merged")
    (root / "prog.c").write_text(PROGRAM)
    built = subprocess.run([sys.executable, "-m", "call", "cc", "-O2", "prog.c", "-o", "prog",
                            "-Wl,--wrap=unlink"], cwd=root, capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLL_")}
    env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    for name in ("a", "b"):
        (root / name).mkdir()
        ran = run_bounded(["mpirun", "-np", "2", str(root / "prog")], 120, cwd=root / name, env=env)
        assert ran.returncode == 0, ran.stderr
        assert (root / name / "prog.cll.2.rank1.dat").exists()
    return root


def llac(folder, script: str) -> subprocess.CompletedProcess:
    """`llac -c script` in `folder`, with an empty machine database of its own."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(folder / "machines.sqlite")}
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def edited(source, target, **fields) -> None:
    """A copy of the trace `source` whose header lines `#KEY: ...` say `fields` instead."""
    lines = source.read_text().splitlines(keepends=True)
    for key, value in fields.items():
        lines = [f"#{key}: {value}\n" if line.startswith(f"#{key}: ") else line for line in lines]
    target.write_text("".join(lines))


# ---- the rank's own copy of gathered records
def test_a_rank_file_of_records_the_gathered_trace_holds_is_left_out(runs):
    done = llac(runs / "a", 'load "prog.cll.2*.dat"; describe work')
    assert done.returncode == 0, done.stderr
    assert ("warning: prog.cll.2.rank1.dat: its work holds the same records as prog.cll.2.dat's (the same "
            "run read twice, or a rank's own copy of records the gathered trace holds") in done.stderr
    assert "created work: 24 records" in done.stdout


def test_loaded_first_the_rank_file_keeps_its_records_and_the_gathered_trace_the_others(runs):
    done = llac(runs / "a", 'load "prog.cll.2.rank1.dat", "prog.cll.2.dat"; '
                            'n = work where rank == 1')
    assert done.returncode == 0, done.stderr
    assert ("warning: prog.cll.2.dat: 12 of its 24 work records are in prog.cll.2.rank1.dat already"
            in done.stderr)
    assert "created work: 24 records" in done.stdout and "created n: 12 records" in done.stdout


def test_another_execution_s_rank_file_is_merged(runs):
    shutil.copy(runs / "b" / "prog.cll.2.rank1.dat", runs / "a" / "other.rank1.dat")
    done = llac(runs / "a", 'load "prog.cll.2.dat", "other.rank1.dat"')
    assert done.returncode == 0, done.stderr
    assert "count twice" not in done.stderr and "created work: 36 records" in done.stdout


def test_a_rank_file_loaded_later_or_merged_is_flagged(runs):
    done = llac(runs / "a", 'load "prog.cll.2.dat"; load "prog.cll.2.rank1.dat"; x = merge work, work@prog_cll_2_rank1')
    assert "holds records of work (loaded already from prog.cll.2.dat)" in done.stderr
    assert "share 12 of their records" in done.stderr and done.returncode != 0


# ---- what the files disagree on
def test_data_from_two_machines_have_no_one_machine(runs):
    edited(runs / "b" / "prog.cll.2.dat", runs / "b" / "other.cll.2.dat", host="othernode")
    edited(runs / "a" / "prog.cll.2.dat", runs / "b" / "same.cll.2.dat", host="othernode")
    with MachineDB(runs / "b" / "machines.sqlite") as db:
        db.store(probe_run(host="othernode", cpu=read_trace(runs / "b" / "prog.cll.2.dat").header["cpu"]))
    script = 'load "{}", "other.cll.2.dat"; fit work; predict work at work by P; describe work'
    mixed = llac(runs / "b", script.format("../a/prog.cll.2.dat"))
    assert mixed.returncode == 0, mixed.stderr
    note = "the merged data come from 2 machines: "
    assert mixed.stdout.count(f"no cache-aware prediction: {note}") >= 1
    assert f"{note}" in mixed.stdout and "othernode" in mixed.stdout
    assert ": which runs were oversubscribed (more processes than cores) is not judged" in mixed.stdout
    assert "host: " not in mixed.stdout        # describe: the host is no longer a field they agree on
    one = llac(runs / "b", script.format("same.cll.2.dat"))     # the two runs on othernode
    assert one.returncode == 0, one.stderr
    assert "created work: 48 records" in one.stdout
    assert note not in one.stdout and "every run had at most the 2 cores of host" in one.stdout
    assert " on othernode@1; fitted points per level" in one.stdout   # one machine: found in the database


def test_the_timer_floor_is_the_largest_of_the_files(runs):
    edited(runs / "b" / "prog.cll.2.dat", runs / "b" / "slowtimer.cll.2.dat", overhead="0.01")
    floor = "the timer's own cost (0.01 s"
    slow_second = llac(runs / "b", 'load "../a/prog.cll.2.dat", "slowtimer.cll.2.dat"; fit work')
    assert slow_second.returncode == 0, slow_second.stderr
    assert floor in slow_second.stdout
    alone = llac(runs / "b", 'load "../a/prog.cll.2.dat"; fit work')
    assert "timer's own cost" not in alone.stdout
