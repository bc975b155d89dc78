"""The scratch directories of the Open MPI runs call launches, so that none outlives its run.
Open MPI's ranks on one host talk through shared-memory files in /dev/shm (its `vader`
transport, 4 MiB per rank), and mpirun keeps a session folder under /tmp
(`ompi.<host>.<uid>/pid.<n>`, 8 MB of PMIx files). mpirun removes both when a run ends, even
a failed one, but not when it is killed with SIGKILL (`kill -9`, the out-of-memory killer, a
job's time limit): then they stay until the next reboot, run after run. call gives each run
its own directory for each (OMPI_MCA_btl_vader_backing_directory in /dev/shm,
OMPI_MCA_orte_tmpdir_base in the temporary folder) and removes them after the run, however
the run ended; only a SIGKILL of call itself leaves them (empty, or with what the run still
running wrote). A user's own setting of either variable is kept, and MPICH's runs get
neither (its launcher cleans up itself)."""
from __future__ import annotations

import os
import shutil
import tempfile

SHARED_MEMORY = "/dev/shm"
DIRECTORIES = {"OMPI_MCA_btl_vader_backing_directory": SHARED_MEMORY,   # variable -> where its directory goes
               "OMPI_MCA_orte_tmpdir_base": None}                      # None: the temporary folder


def run_directories(open_mpi: bool) -> dict[str, str]:
    """New directories for one run's segments and session folder, as the environment
    additions that point Open MPI to them (none for a run that is not Open MPI's, for a
    variable the user set, or where the place cannot take one: Open MPI's default then
    applies and says why). Remove them with remove_run_directories after the run."""
    made = {}
    for variable, place in DIRECTORIES.items() if open_mpi else ():
        if variable in os.environ or (place is not None and not os.path.isdir(place)):
            continue
        try:
            made[variable] = tempfile.mkdtemp(prefix="call-run-", dir=place)
        except OSError:      # a full or read-only place
            continue
    return made


def remove_run_directories(extra: dict[str, str]) -> None:
    """Remove the directories run_directories made (those in `extra`)."""
    for variable in DIRECTORIES:
        if variable in extra:
            shutil.rmtree(extra[variable], ignore_errors=True)
