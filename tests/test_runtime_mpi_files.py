"""The MPI gather path keeps another run's trace too: real mpicc (through `call cc`) and mpirun."""
import os
import shutil
import subprocess
import sys

import pytest

from support.runtime import read_trace

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed")

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#pragma cll parallel MPI
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n = 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    #pragma cll work work[0] + work[1]*n
    { volatile double x = 0; for (int i = 0; i < 1000; i++) x += i; }
    #pragma cll end work
    if (rank == 0 && argc > 1) {   /* another run's trace appears meanwhile */
        FILE *f = fopen("prog.cll.2.dat", "w");
        fputs("theirs\n", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


def mpirun(directory, *args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLL_")}
    env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    return subprocess.run(["mpirun", "-np", "2", "./prog", *args], cwd=directory, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_gathered_trace_goes_to_a_unique_name_when_another_run_wrote_it(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM)
    built = subprocess.run([sys.executable, "-m", "call", "cc", "-O2", "prog.c", "-o", "prog"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stderr
    (tmp_path / "prog.cll.2.dat").write_text("an earlier run's\n")
    again = mpirun(tmp_path)   # a file from before the run is replaced
    assert again.returncode == 0 and "another run" not in again.stderr, again.stderr
    assert read_trace(tmp_path / "prog.cll.2.dat").header["status"] == "complete"
    ran = mpirun(tmp_path, "other")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "prog.cll.2.dat").read_text() == "theirs\n"
    (unique,) = [p for p in tmp_path.glob("prog.cll.2.*.dat")]
    assert f"this run's trace is {unique}" in ran.stderr and ran.stderr.count("another run") == 1
    trace = read_trace(unique)
    assert trace.header["status"] == "complete" and trace.header["ranks"] == "0 1"
    assert sorted(r[0] for r in trace.records["work"]) == ["0", "1"]
    assert not list(tmp_path.glob("*rank*")) and not list(tmp_path.glob(".prog*"))
