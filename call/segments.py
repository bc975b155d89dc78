"""Where the shared-memory segments of the MPI runs call launches live, so that none outlives
its run. Open MPI's ranks on one host talk through files in /dev/shm (its `vader` transport,
4 MiB per rank) that mpirun removes when a run ends, even a failed one, but not when mpirun
itself is killed with SIGKILL (`kill -9`, the out-of-memory killer, a job's time limit): then
they stay until the next reboot and fill /dev/shm run after run. call gives each run its own
directory there (OMPI_MCA_btl_vader_backing_directory) and removes it after the run, however
the run ended. A user's own setting of that variable is kept, and so are MPICH's segments
(its launcher cleans them itself)."""
from __future__ import annotations

import os
import shutil
import tempfile

BACKING_DIRECTORY = "OMPI_MCA_btl_vader_backing_directory"
SHARED_MEMORY = "/dev/shm"


def segment_directory(open_mpi: bool) -> dict[str, str]:
    """A new directory for one run's segments, as the environment addition that points Open
    MPI to it (empty when the run is not Open MPI's, when the user chose a directory, or where
    there is no /dev/shm to put it in). Remove it with remove_segments after the run."""
    if not open_mpi or BACKING_DIRECTORY in os.environ or not os.path.isdir(SHARED_MEMORY):
        return {}
    try:
        return {BACKING_DIRECTORY: tempfile.mkdtemp(prefix="call-run-", dir=SHARED_MEMORY)}
    except OSError:      # a full or read-only /dev/shm: Open MPI's default then says why
        return {}


def remove_segments(extra: dict[str, str]) -> None:
    """Remove the run's segment directory that segment_directory made (nothing if it made none)."""
    if BACKING_DIRECTORY in extra:
        shutil.rmtree(extra[BACKING_DIRECTORY], ignore_errors=True)
