"""How `call run` launches MPI programs, and the sweep scripts it writes so that the same
sweep runs by hand (`PROG.cll.sweep.sh`) or on a Slurm cluster (`PROG.cll.sbatch`)."""
from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from call.build import MPI_PACKAGES
from call.diagnostics import CallError, Diagnostic

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
OVERSUBSCRIBE_ENV = {"OMPI_MCA_rmaps_base_oversubscribe": "1"}
# When a rank fails, Open MPI sends the others SIGTERM and SIGKILL 1 s later: too soon for a
# busy machine's ranks to write their records. 10 s gives them time.
GRACE_ENV = {"OMPI_MCA_odls_base_sigkill_timeout": "10"}


def grace_seconds() -> float:
    """The seconds ranks get to write their records when a run is ended: Open MPI's kill
    timeout as call run sets it (GRACE_ENV) or as the environment does."""
    name, default = next(iter(GRACE_ENV.items()))
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return float(default)


def mpirun_command(who: str = "call run") -> list[str]:
    """The MPI launcher: $MPIRUN (default mpirun); a CallError from `who` naming the
    packages when it is not installed."""
    command = shlex.split(os.environ.get("MPIRUN", "mpirun"))
    if not command or shutil.which(command[0]) is None:
        raise CallError([Diagnostic("error", who, 0, 0,
                                    f"MPI is not installed: {' '.join(command) or 'mpirun'} was not "
                                    f"found; {MPI_PACKAGES}")])
    return command


def cores() -> int:
    """Processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=None)
def implementation(launcher: tuple[str, ...]) -> str | None:
    """The MPI implementation of `launcher` (the mpirun command), as its --version says:
    "Open MPI", "MPICH" (its Hydra launcher), or None when it says neither or fails; asked
    once per launcher and call (a few ms), so that the notes name what the run uses."""
    try:
        said = subprocess.run([*launcher, "--version"], capture_output=True, text=True,
                              errors="replace", timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = said.stdout + said.stderr
    return "Open MPI" if "Open MPI" in text else "MPICH" if "HYDRA" in text or "MPICH" in text else None


def open_mpi_launcher(launcher: list[str] | None = None) -> bool:
    """Whether `launcher` (None: mpirun_command()'s) is to get Open MPI's variables: it is
    Open MPI's, or neither Open MPI's nor MPICH's (others ignore them)."""
    return implementation(tuple(launcher or mpirun_command())) != "MPICH"


def launch_environment(procs: int, oversubscribe: bool,
                       launcher: list[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """Environment additions for `launcher -np procs` here (None: mpirun_command()'s), and
    one sentence per addition or fact worth knowing, saying what was done and why. Open MPI
    refuses root and more ranks than cores by default and kills a failed run's ranks after
    1 s; MPICH does none of this (and oversubscribes even with `oversubscribe` False), so
    under it nothing is added and no Open MPI variable named; under a launcher that is
    neither, the Open MPI variables are set (others ignore them)."""
    open_mpi = open_mpi_launcher(launcher)
    extra, notes = {}, []
    if open_mpi and "OMPI_MCA_odls_base_sigkill_timeout" not in os.environ:
        extra.update(GRACE_ENV)
        notes.append("set OMPI_MCA_odls_base_sigkill_timeout=10: if a rank fails, the others "
                     "get 10 s (not 1 s) to write their records before Open MPI kills them (a "
                     "failed run then takes some 20 s to end: Open MPI waits as long before its SIGTERM)")
    if open_mpi and hasattr(os, "geteuid") and os.geteuid() == 0:
        extra.update(ROOT_ENV)
        notes.append("running as root: set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
    if procs > cores() and (oversubscribe or not open_mpi):   # MPICH's Hydra always starts them
        how = ""
        if open_mpi:
            extra.update(OVERSUBSCRIBE_ENV)
            how = " (OMPI_MCA_rmaps_base_oversubscribe=1)"
        notes.append(f"P={procs} > {cores()} cores: oversubscribing{how}; ranks share cores, so "
                     f"times are not those of {procs} dedicated processors")
    return extra, notes


def _quoted(executable: Path, arguments: list[str]) -> tuple[str, str]:
    exe = os.path.relpath(executable)
    exe = exe if exe.startswith(("/", "./", "../")) else f"./{exe}"
    return shlex.quote(exe), " ".join(shlex.quote(a) for a in arguments)


def build_command(source: str, executable: Path, cflags: list[str]) -> str:
    """The `call cc` command that builds `executable` from `source` with `cflags` as `call run`
    did, quoted for the shell, for a script's comment (a newline, say in a -D value, would end
    the comment: it is shown as \\n)."""
    exe, _ = _quoted(executable, [])
    command = f"call cc {shlex.join([*cflags, source])} -o {exe}"
    return command.replace("\n", "\\n")


def shell_script(source: str, executable: Path, counts: list[int], arguments: list[str],
                 cflags: list[str]) -> str:
    """A POSIX sh script running the sweep with mpirun, one trace per P, with the same
    root/oversubscription handling as `call run`; it says how EXE was built (`cflags`)."""
    exe, args = _quoted(executable, arguments)
    ps = " ".join(map(str, counts))
    return f"""#!/bin/sh
# The MPI sweep of {source}, written by `call run`: P = {ps}, one trace PROG.cll.<P>.dat each.
# Run it from this directory: sh {Path(executable).name}.cll.sweep.sh
# EXE was built by `call run` as: {build_command(source, executable, cflags)}
# MPIRUN chooses the launcher (default mpirun), PROCS the counts (default "{ps}").
set -e
EXE=${{EXE:-{exe}}}
MPIRUN=${{MPIRUN:-mpirun}}
CORES=$(nproc 2>/dev/null || echo 1)
# if a rank fails, give the others 10 s (Open MPI: 1 s) to write their records
export OMPI_MCA_odls_base_sigkill_timeout=${{OMPI_MCA_odls_base_sigkill_timeout:-10}}
if [ "$(id -u)" = 0 ]; then   # Open MPI refuses root unless told
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
for P in ${{PROCS:-{ps}}}; do
    if [ "$P" -gt "$CORES" ]; then   # more ranks than cores: Open MPI must be told
        export OMPI_MCA_rmaps_base_oversubscribe=1
        echo "sweep: P=$P > $CORES cores: oversubscribed" >&2
    fi
    $MPIRUN -np "$P" "$EXE" {args}
done
"""


def sbatch_script(source: str, executable: Path, counts: list[int], arguments: list[str],
                  cflags: list[str]) -> str:
    """A Slurm batch script: one allocation of max(P) tasks runs the whole sweep with srun;
    PROCS=P restricts it to one count, so one job per P is a loop of sbatch calls. Its build
    step uses `cflags`, those of `call run`'s own build."""
    exe, args = _quoted(executable, arguments)
    ps = " ".join(map(str, counts))
    stem = Path(executable).name
    return f"""#!/bin/bash
#SBATCH --job-name={stem}-cll
#SBATCH --ntasks={max(counts)}
#SBATCH --time=01:00:00
#SBATCH --output={stem}.cll.sweep.%j.out
# The MPI sweep of {source}, written by `call run`, for a Slurm cluster.
#   1. copy the source there and build it: mkdir -p {shlex.quote(os.path.dirname(os.path.relpath(executable)) or ".")} && {build_command(source, executable, cflags)}
#   2. one allocation runs every P:   sbatch {stem}.cll.sbatch
#      or one job per P:              for P in {ps}; do sbatch --ntasks=$P --export=ALL,PROCS=$P {stem}.cll.sbatch; done
# Each run writes {stem}.cll.<P>.dat in the submission directory; copy them back for llac.
set -e
cd "${{SLURM_SUBMIT_DIR:-.}}"
EXE=${{EXE:-{exe}}}
for P in ${{PROCS:-{ps}}}; do
    srun --ntasks="$P" "$EXE" {args}
done
"""


def write_scripts(source: str, executable: Path, counts: list[int], arguments: list[str],
                  cflags: list[str], directory: Path) -> list[Path]:
    """Write `<prog>.cll.sweep.sh` and `<prog>.cll.sbatch` (built with `cflags`) into
    `directory`; their paths."""
    stem = executable.name
    written = []
    for name, write in ((f"{stem}.cll.sweep.sh", shell_script), (f"{stem}.cll.sbatch", sbatch_script)):
        text = write(source, executable, counts, arguments, cflags)
        path = directory / name
        path.write_text(text, encoding="utf-8", errors="surrogateescape")   # a non-UTF-8 name
        path.chmod(0o755)
        written.append(path)
    return written
