"""`call run` for `parallel MPI` and `parallel PUB` programs: check the processor counts,
build with mpicc, write the sweep scripts, and launch each run as `mpirun -np P` (an `MpiLaunch`, which also
says what was kept when a run failed: rank 0's trace and the `.rank<r>` files of ranks whose
records were not gathered)."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from call.build import ensure_built
from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.launch import Launch, ending, label, trace_status
from call.pragmas import procs_sequence
from call.progress import Progress
from call.scripts import (cores, grace_seconds, launch_environment, mpirun_command, open_mpi_launcher,
                          write_scripts)
from call.scratch import remove_run_directories, run_directories
from call.stop import stop_mpi

MAX_RANKS_PER_CORE = 32  # beyond this a machine thrashes rather than runs the program


class MpiLaunch(Launch):
    """Runs of an MPI program under `launcher -np P`."""

    def __init__(self, launcher: list[str], executable: Path, arguments: list[str],
                 oversubscribe: bool):
        super().__init__(executable, arguments)
        self.launcher = launcher
        self.oversubscribe = oversubscribe
        self.scratch: dict[str, str] = {}      # the running run's own directories (call.scratch)

    def shown(self, count: int | None) -> str:
        """The command as the progress step shows it: the launcher that runs (`mpirun`, or
        what $MPIRUN names), then the program and its arguments as a sequential run shows them."""
        return f"{shlex.join(self.launcher)} -np {count} {super().shown(count)}"

    def command(self, count: int | None) -> list[str]:
        """The mpirun command of the run with `count` ranks."""
        return [*self.launcher, "-np", str(count), *super().command(count)]

    def environment(self, count: int | None) -> tuple[dict[str, str], list[str]]:
        """The environment with call.scripts' additions for `count` ranks, and why, and the
        run's own directories for its shared-memory segments and session folder (removed by
        tidy)."""
        extra, notes = launch_environment(count, self.oversubscribe, self.launcher)
        self.scratch = run_directories(open_mpi_launcher(self.launcher))
        return {**os.environ, **extra, **self.scratch}, notes

    def stop(self, process: subprocess.Popen, signum: int) -> None:
        """End the running mpirun `process` on call run's SIGTERM or Ctrl-C: call signals the
        ranks itself and ends mpirun once they are gone (call.stop: Open MPI would wait 10 s
        before passing the signal on), giving them the grace they get when a rank fails."""
        stop_mpi(process, signum, self.executable, grace_seconds())

    def kept(self, count: int | None) -> list[Path]:
        """Rank 0's trace, then the `.rank<r>` files of ranks whose records were not gathered."""
        trace = self.trace(count)
        rank_files = f"{trace.stem}.rank*{trace.suffix}" if trace.suffix == ".dat" else f"{trace.name}.rank*"
        return super().kept(count) + sorted(trace.parent.glob(rank_files))

    def tidy(self, count: int | None) -> None:
        """Remove the temporary files of ranks killed while writing their records, and the
        run's own directories (its shared-memory segments and session folder)."""
        trace = self.trace(count)
        for partial in trace.parent.glob(f".{trace.stem}*.tmp.*"):
            partial.unlink(missing_ok=True)
        remove_run_directories(self.scratch)
        self.scratch = {}

    def failed(self, source: str, count: int | None, status: int, said: str, kept: list[Path]) -> str:
        """What to say when mpirun ended with `status` != 0: the files kept, or why no rank
        wrote one (mpirun could not start them all)."""
        if kept:
            listing = ", ".join(f"{path} ({trace_status(path)})" for path in kept)
            return f"{source}{label(count)}: the program exited with status {status}; records kept in: {listing}"
        if status < 0:       # killed from outside call (kill -9, the out-of-memory killer)
            return f"{source}{label(count)}: mpirun {ending(status)}, and no rank wrote a trace for P={count}"
        hint = (f"; mpirun could not start {count} processes (not enough slots: call run "
                f"oversubscribes unless --no-oversubscribe is given)"
                if "not enough slots" in said else "; see the messages above")
        return f"{source}{label(count)}: the run failed (status {status}) and wrote no trace for P={count}{hint}"


def prepare_mpi(program: Program, procs: tuple[int, int, int] | None, cflags: list[str],
                arguments: list[str], oversubscribe: bool,
                progress: Progress) -> tuple[MpiLaunch, list[int]]:
    """The launch and the rank counts of `program`'s sweep over `procs` (--procs; None: the
    pragma's procs clause, default one run on every core), after building and writing the
    sweep scripts; a CallError naming the Slurm script when the counts are more than this
    machine will start (the sweep runs on a cluster instead), at --procs or at the pragma,
    whichever gave the counts."""
    source = program.file
    sweep = procs or program.parallel.procs
    counts = procs_sequence(sweep) if sweep else [cores()]
    limit = MAX_RANKS_PER_CORE * cores()
    launcher = mpirun_command() if max(counts) <= limit else None
    executable = ensure_built(program, cflags, progress)
    shell, sbatch = write_scripts(source, executable, counts, arguments, cflags, Path.cwd())
    progress.note(f"sweep scripts: {shell} (sh), {sbatch} (Slurm sbatch)")
    if launcher is None:   # the scripts are written: the large counts can run elsewhere
        # the counts came from --procs (no place in the source) or from the pragma's clause
        where, what = ((("call run", 0, 0), "--procs") if procs else
                       ((source, program.parallel.line, program.parallel.column), "procs"))
        raise CallError([Diagnostic(
            "error", *where,
            f"{what} asks for P={max(counts)}: more processes than MPI will start here "
            f"({cores()} cores, at most {MAX_RANKS_PER_CORE} ranks per core oversubscribed); "
            f"nothing was run. Run the large counts on a cluster with the Slurm script "
            f"{sbatch} written for this sweep (docs/mpi.md), or give --procs with counts up "
            f"to {limit}")],
            program.lines)
    return MpiLaunch(launcher, executable, arguments, oversubscribe), counts
