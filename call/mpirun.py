"""`call run` for `parallel MPI` programs: build with mpicc, write the sweep scripts, run
`mpirun -np P` for each P, and say where every trace went (or what was kept when a run
failed: rank 0's trace and the `.rank<r>` files of ranks whose records were not gathered)."""
from __future__ import annotations

import os
from pathlib import Path

from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.pragmas import procs_sequence
from call.progress import Progress
from call.run import ensure_built, run_child, say_interrupted, status_note, trace_status
from call.scripts import cores, launch_environment, mpirun_command, write_scripts

MAX_RANKS_PER_CORE = 32  # beyond this a machine thrashes rather than runs the program


def run_mpi_sweep(program: Program, procs: tuple[int, int, int] | None, cflags: list[str],
                  arguments: list[str], oversubscribe: bool, progress: Progress) -> int:
    """Run `program` once per P of `procs` (default: one run on every core) under mpirun;
    returns 0, or the status of the first run that failed or was interrupted (the sweep
    stops there)."""
    source = program.file
    counts = procs_sequence(procs) if procs else [cores()]
    limit = MAX_RANKS_PER_CORE * cores()
    if max(counts) > limit:
        raise CallError([Diagnostic(
            "error", source, program.parallel.line, program.parallel.column,
            f"procs asks for P={max(counts)}: more processes than MPI will start here "
            f"({cores()} cores, at most {MAX_RANKS_PER_CORE} ranks per core oversubscribed); "
            f"run the large counts on a cluster with the sbatch script (docs/mpi.md)")],
            program.lines)
    launcher = mpirun_command()
    executable = ensure_built(program, cflags, progress)
    shell, sbatch = write_scripts(source, executable, counts, arguments, Path.cwd())
    progress.note(f"sweep scripts: {shell} (sh), {sbatch} (Slurm sbatch)")
    said: set[str] = set()
    for number, count in enumerate(counts, 1):
        progress.step(f"run {number} of {len(counts)} (P={count}): mpirun -np {count} {executable}")
        status = _run_once(source, launcher, executable, count, arguments, oversubscribe,
                           said, progress)
        if status is None:
            return say_interrupted(progress, f"in run {number} of {len(counts)} (P={count})",
                                   _kept(executable, count))
        if status:
            return status
    return 0


def _trace_files(executable: Path, count: int) -> tuple[Path, str]:
    """The trace of the run with `count` ranks and the glob of its `.rank<r>` files."""
    trace = Path(os.environ.get("CLL_TRACE") or f"{executable.name}.cll.{count}.dat")
    return trace, (f"{trace.stem}.rank*{trace.suffix}" if trace.suffix == ".dat" else f"{trace.name}.rank*")


def _kept(executable: Path, count: int) -> list[Path]:
    """The files holding records of the run with `count` ranks: rank 0's trace first."""
    trace, rank_files = _trace_files(executable, count)
    return ([trace] if trace.exists() else []) + sorted(trace.parent.glob(rank_files))


def _run_once(source: str, launcher: list[str], executable: Path, count: int, arguments: list[str],
              oversubscribe: bool, said_before: set[str], progress: Progress) -> int | None:
    """One mpirun of the sweep: its status (0: a trace, said where), or None if interrupted."""
    extra, notes = launch_environment(count, oversubscribe)
    for note in notes:   # each once per sweep
        if note not in said_before:
            progress.note(note)
            said_before.add(note)
    trace, rank_files = _trace_files(executable, count)
    if "CLL_TRACE" not in os.environ:
        for stale in [trace, *trace.parent.glob(rank_files)]:
            stale.unlink(missing_ok=True)
    command = [*launcher, "-np", str(count), str(executable), *arguments]
    status, said, interrupted = run_child(command, {**os.environ, **extra}, progress,
                                          forward_interrupt=False)
    for partial in trace.parent.glob(f".{trace.stem}*.tmp.*"):   # a rank killed while writing
        partial.unlink(missing_ok=True)
    if interrupted:
        return None
    label = f" (P={count})"
    kept = _kept(executable, count)
    listing = ", ".join(f"{path} ({trace_status(path)})" for path in kept)
    if status != 0:
        if not kept:
            hint = (f"; mpirun could not start {count} processes (not enough slots: call run "
                    f"oversubscribes unless --no-oversubscribe is given)"
                    if "not enough slots" in said else "; see the messages above")
            progress.note(f"{source}{label}: the run failed (status {status}) and wrote no trace "
                          f"for P={count}{hint}")
        else:
            progress.note(f"{source}{label}: the program exited with status {status}; "
                          f"records kept in: {listing}")
        return status
    if not trace.exists():
        progress.note(f"{source}{label}: the program wrote no trace ({trace} is missing)")
        return 1
    progress.note(f"trace{label}: {trace.resolve()}{status_note(trace)}")
    if len(kept) > 1:
        progress.note(f"{source}{label}: records of ranks that were not gathered: "
                      f"{', '.join(str(p) for p in kept[1:])}")
    return 0
