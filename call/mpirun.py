"""`call run` for `parallel MPI` programs: build with mpicc, write the sweep scripts, run
`mpirun -np P` for each P, and say where every trace went (or what was kept when a run
failed: rank 0's trace and the `.rank<r>` files of ranks whose records were not gathered)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.pragmas import procs_sequence
from call.run import ensure_built
from call.scripts import cores, launch_environment, mpirun_command, write_scripts

MAX_RANKS_PER_CORE = 32  # beyond this a machine thrashes rather than runs the program


def run_mpi_sweep(program: Program, procs: tuple[int, int, int] | None, cflags: list[str],
                  arguments: list[str], oversubscribe: bool) -> int:
    """Run `program` once per P of `procs` (default: one run on every core) under mpirun;
    returns 0, or the status of the first run that failed (the sweep stops there)."""
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
    executable = ensure_built(Path(source), cflags)
    shell, sbatch = write_scripts(source, executable, counts, arguments, Path.cwd())
    print(f"call: sweep scripts: {shell} (sh), {sbatch} (Slurm sbatch)", file=sys.stderr)
    said: set[str] = set()
    for count in counts:
        status = _run_once(source, launcher, executable, count, arguments, oversubscribe, said)
        if status:
            return status
    return 0


def trace_status(path: Path) -> str:
    """The `#status:` of a trace file's header ('?' if it has none)."""
    with path.open(encoding="utf-8", errors="replace") as text:
        for line in text:
            if line.startswith("#status: "):
                return line[len("#status: "):].strip()
            if line.startswith("#data"):
                break
    return "?"


def _run_once(source: str, launcher: list[str], executable: Path, count: int,
              arguments: list[str], oversubscribe: bool, said_before: set[str]) -> int:
    extra, notes = launch_environment(count, oversubscribe)
    for note in notes:   # each once per sweep
        if note not in said_before:
            print(f"call: {note}", file=sys.stderr)
            said_before.add(note)
    env = {**os.environ, **extra}
    trace = Path(env.get("CLL_TRACE") or f"{executable.name}.cll.{count}.dat")
    rank_files = f"{trace.stem}.rank*{trace.suffix}" if trace.suffix == ".dat" else f"{trace.name}.rank*"
    if "CLL_TRACE" not in os.environ:
        for stale in [trace, *trace.parent.glob(rank_files)]:
            stale.unlink(missing_ok=True)
    command = [*launcher, "-np", str(count), str(executable), *arguments]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    said = []
    for line in process.stderr:   # pass mpirun's and the program's messages through as they come
        sys.stderr.write(line)
        said.append(line)
    status = process.wait()
    for partial in trace.parent.glob(f".{trace.stem}*.tmp.*"):   # a rank killed while writing
        partial.unlink(missing_ok=True)
    label = f" (P={count})"
    kept = ([trace] if trace.exists() else []) + sorted(trace.parent.glob(rank_files))
    listing = ", ".join(f"{path} ({trace_status(path)})" for path in kept)
    if status != 0:
        if not kept:
            hint = (f"; mpirun could not start {count} processes (not enough slots: call run "
                    f"oversubscribes unless --no-oversubscribe is given)"
                    if "not enough slots" in "".join(said) else "; see the messages above")
            print(f"call: {source}{label}: the run failed (status {status}) and wrote no trace "
                  f"for P={count}{hint}", file=sys.stderr)
        else:
            print(f"call: {source}{label}: the program exited with status {status}; "
                  f"records kept in: {listing}", file=sys.stderr)
        return status
    if not trace.exists():
        print(f"call: {source}{label}: the program wrote no trace ({trace} is missing)", file=sys.stderr)
        return 1
    state = trace_status(trace)
    print(f"call: trace{label}: {trace.resolve()}" + (f" (status: {state})" if state != "complete" else ""),
          file=sys.stderr)
    if len(kept) > 1:
        print(f"call: {source}{label}: records of ranks that were not gathered: "
              f"{', '.join(str(p) for p in kept[1:])}", file=sys.stderr)
    return 0
