"""`call run`: build an instrumented program when needed (call.build, call.manifest decides),
run it once, or once per processor count of an OpenMP or MPI sweep (one loop over a
call.launch `Launch`, call.mpirun's for MPI), with progress on stderr, and say where each
trace went, also when the run is interrupted."""
from __future__ import annotations

import shlex
import signal
import subprocess
import threading
from pathlib import Path

from call.build import ensure_built
from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.launch import Launch, label, status_note
from call.mpirun import prepare_mpi
from call.pragmas import procs_sequence
from call.progress import Progress

INTERRUPTED = 130   # the shell's status for a command ended by SIGINT
TERMINATED = 143    # ... and by SIGTERM


class _Terminated(Exception):
    """call run got SIGTERM (a `timeout`, a batch system, `kill`) while its child ran."""


def _raise_terminated(signum, frame):
    raise _Terminated


def _sigint_received(pid: int) -> bool:
    """Whether process `pid` already has SIGINT: pending, or no longer caught because the
    runtime's one-shot handler is running (Linux /proc; False when unknown). A terminal's
    Ctrl-C reaches the whole process group, and a second SIGINT would kill the program
    while it writes its trace."""
    bit = 1 << (signal.SIGINT - 1)
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":" in line)
        pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
        caught = int(fields["SigCgt"], 16)
    except (OSError, KeyError, ValueError):
        return False
    return bool(pending & bit) or not caught & bit


def run_child(command: list[str], env: dict, progress: Progress,
              forward_interrupt: bool = True) -> tuple[int, str, bool]:
    """Run a program (or mpirun) with its stdout untouched and its stderr passed on line by
    line through `progress`; returns its status, what it said on stderr, and whether it was
    interrupted. On Ctrl-C the child is waited for, so that it writes its trace; with
    `forward_interrupt` it gets SIGINT too unless it has it already (mpirun does not: a
    second SIGINT makes Open MPI kill the ranks at once, losing their records, and whether
    it got the first one cannot be told). A second Ctrl-C kills the child. SIGTERM to call run
    is passed on to the child (mpirun passes it to the ranks, whose runtime writes their
    records) and the child is waited for: it is never left running without call."""
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    said = []
    watch = threading.current_thread() is threading.main_thread()   # only it may set handlers
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if watch else None
    try:
        for line in process.stderr:
            progress.relay(line)
            said.append(line)
        return process.wait(), "".join(said), False
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        process.send_signal(signal.SIGTERM)
        for line in process.stderr:
            progress.relay(line)
        process.wait()
        return TERMINATED, "".join(said), True
    except KeyboardInterrupt:
        if forward_interrupt and process.poll() is None and not _sigint_received(process.pid):
            process.send_signal(signal.SIGINT)
        try:
            for line in process.stderr:
                progress.relay(line)
            process.wait()
        except KeyboardInterrupt:
            process.kill()
            process.wait()
        return INTERRUPTED, "".join(said), True
    finally:
        if watch:
            signal.signal(signal.SIGTERM, previous)


def say_interrupted(progress: Progress, where: str, kept: list[Path], status: int) -> int:
    """Tell where the records of an interrupted (Ctrl-C) or terminated (SIGTERM) run are
    kept; returns the exit status, `status`."""
    listing = ", ".join(f"{path.resolve()}{status_note(path)}" for path in kept)
    what = "terminated (SIGTERM)" if status == TERMINATED else "interrupted"
    progress.note(f"{what} {where}; " + (f"the partial trace is kept: {listing}" if kept
                                         else "the program wrote no trace"))
    return status


def set_aside(files: list[Path]) -> list[Path]:
    """Rename the traces of an earlier run to `NAME.previous` (replacing older ones), so that
    none passes for this run's, and none is lost if this run fails: returns the new paths."""
    moved = []
    for path in files:
        moved.append(path.replace(path.with_name(path.name + ".previous")))
    return moved


def previous_note(previous: list[Path]) -> str:
    """What to say about the earlier run's traces when this run did not finish."""
    return ("the previous run's trace is kept as " + ", ".join(str(p.resolve()) for p in previous)
            + " (rename it back to use it)")


def sweep(source: str, launch: Launch, counts: list[int | None], progress: Progress) -> int:
    """Run `launch` once per count, saying where each trace went; returns 0, or the status
    of the first run that failed or was interrupted (the sweep stops there)."""
    said: set[str] = set()
    for number, count in enumerate(counts, 1):
        where = f"run {number} of {len(counts)}{label(count)}"
        progress.step(f"{where}: {launch.shown(count)}")
        env, notes = launch.environment(count)
        for note in notes:   # each once per sweep
            if note not in said:
                progress.note(note)
                said.add(note)
        # no stale trace may pass for this run's, and none is lost if this run fails
        previous = set_aside(launch.kept(count)) if "CLL_TRACE" not in env else []
        status, told, interrupted = run_child(launch.command(count), env, progress, launch.forward_interrupt)
        launch.tidy(count)
        kept = launch.kept(count)
        if previous and (interrupted or status != 0 or not launch.trace(count).exists()):
            progress.note(previous_note(previous))
        if interrupted:
            return say_interrupted(progress, f"in {where}", kept, status)
        if status != 0:
            progress.note(launch.failed(source, count, status, told, kept))
            return launch.exit_status(status)
        trace = launch.trace(count)
        if not trace.exists():
            progress.note(f"{source}{label(count)}: the program wrote no trace ({trace} is missing)")
            return 1
        for path in previous:
            path.unlink(missing_ok=True)
        progress.note(f"trace{label(count)}: {trace.resolve()}{status_note(trace)}")
        if len(kept) > 1:
            progress.note(f"{source}{label(count)}: records of ranks that were not gathered: "
                          f"{', '.join(str(p) for p in kept[1:])}")
    return 0


def run_program(program: Program, procs: tuple[int, int, int] | None, cflags: str,
                arguments: list[str], oversubscribe: bool, progress: Progress) -> int:
    """`call run` of a checked program: build it if needed, run it once (sequential) or once
    per P of the procs clause (or --procs), with OMP_NUM_THREADS=P (OpenMP) or under
    `mpirun -np P` (MPI, PUB), telling `progress` the steps and each trace path. Returns the exit
    status."""
    source = program.file
    model = program.parallel.model if program.parallel is not None else None
    if procs is not None and model is None:
        raise CallError([Diagnostic("error", source, 0, 0, "--procs needs a program with "
                                    "'#pragma cll parallel OpenMP', 'parallel MPI' or 'parallel PUB'")])
    if model in ("MPI", "PUB"):
        launch, counts = prepare_mpi(program, procs, shlex.split(cflags),
                                     arguments, oversubscribe, progress)
    else:
        launch = Launch(ensure_built(program, shlex.split(cflags), progress), arguments)
        openmp = procs or (program.parallel.procs if model == "OpenMP" else None)
        counts = procs_sequence(openmp) if openmp else [None]
    return sweep(source, launch, counts, progress)
