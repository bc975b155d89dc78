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
from typing import IO, Callable

from call.build import ensure_built
from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.launch import Launch, finished, label, status_note
from call.mpirun import prepare_mpi
from call.pragmas import procs_sequence
from call.progress import Progress
from call.scripts import cores
from call.stop import Terminated, raise_terminated

INTERRUPTED = 130   # the shell's status for a command ended by SIGINT
TERMINATED = 143    # ... and by SIGTERM


def run_child(command: list[str], env: dict, progress: Progress,
              stop: Callable[[subprocess.Popen, int], None]) -> tuple[int, str, bool]:
    """Run a program (or mpirun) with its stdout untouched and its stderr passed on line by
    line through `progress` (by a thread, so that call can act while the child runs); returns
    its status, what it said on stderr, and whether it was interrupted. On SIGTERM or Ctrl-C
    to call run, `stop` (the launch's) ends the child with that signal so that its records
    are written, and waits for it; a second Ctrl-C makes it kill the child. The child is
    never left running without call."""
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    said: list[str] = []
    relay = threading.Thread(target=_relay, args=(process.stderr, progress, said), daemon=True)
    relay.start()
    watch = threading.current_thread() is threading.main_thread()   # only it may set handlers
    previous = signal.signal(signal.SIGTERM, raise_terminated) if watch else None
    try:
        status, interrupted = process.wait(), False
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop(process, signal.SIGTERM)
        status, interrupted = TERMINATED, True
    except KeyboardInterrupt:
        try:
            stop(process, signal.SIGINT)
        except (KeyboardInterrupt, Terminated):   # a second Ctrl-C, or SIGTERM meanwhile
            stop(process, signal.SIGKILL)
        status, interrupted = INTERRUPTED, True
    finally:
        if watch:
            signal.signal(signal.SIGTERM, previous)
    relay.join()
    return status, "".join(said), interrupted


def _relay(stream: IO[str], progress: Progress, said: list[str]) -> None:
    """Pass each line of the child's `stream` (stderr) through `progress`, keeping it in `said`."""
    for line in stream:
        progress.relay(line)
        said.append(line)


def say_interrupted(progress: Progress, where: str, kept: list[Path], status: int) -> int:
    """Tell where the records of an interrupted (Ctrl-C) or terminated (SIGTERM) run are
    kept; returns the exit status, `status`."""
    listing = _listing(kept)
    what = "terminated (SIGTERM)" if status == TERMINATED else "interrupted"
    if not kept:
        kept_note = "the program wrote no trace"
    elif all(map(finished, kept)):   # it ended before the signal reached it
        kept_note = f"the program had finished: its trace is kept: {listing}"
    else:
        kept_note = f"the partial trace is kept: {listing}"
    progress.note(f"{what} {where}; {kept_note}")
    return status


def set_aside(files: list[Path], progress: Progress) -> list[Path]:
    """Rename the traces of an earlier run (its trace first) to `NAME.previous`, so that none
    passes for this run's, and none is lost if this run fails: returns the `.previous` paths.
    A complete `.previous` is never replaced by an unfinished trace (one of a run interrupted
    after a complete one, when this run is a second re-run): those files are removed, with a
    note, and the complete trace stays."""
    if not files:
        return []
    before = _previous(files[0])
    if finished(before) and not finished(files[0]):
        listing = _listing(files)
        for path in files:
            path.unlink()
        progress.note(f"removed the trace of an earlier run that did not finish ({listing}): the "
                      f"complete trace of the run before it stays in {before.resolve()} until this "
                      f"run writes a complete one")
        return [before]
    return [path.replace(_previous(path)) for path in files]


def _listing(paths: list[Path]) -> str:
    """The traces at `paths`, each with its status (`status_note`), for a message."""
    return ", ".join(f"{path.resolve()}{status_note(path)}" for path in paths)


def _previous(path: Path) -> Path:
    """Where set_aside keeps the trace `path` of an earlier run."""
    return path.with_name(path.name + ".previous")


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
        previous = set_aside(launch.kept(count), progress) if "CLL_TRACE" not in env else []
        status, told, interrupted = run_child(launch.command(count), env, progress, launch.stop)
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
        counts = thread_counts(procs_sequence(openmp), oversubscribe, progress) if openmp else [None]
    return sweep(source, launch, counts, progress)


def thread_counts(counts: list[int], oversubscribe: bool, progress: Progress) -> list[int]:
    """An OpenMP sweep's thread counts: those above this machine's cores run with a note (their
    threads share cores, as oversubscribed MPI ranks do) or, `oversubscribe` False
    (--no-oversubscribe), are left out with a note."""
    many = [c for c in counts if c > cores()]
    if not many:
        return counts
    shown = ", ".join(map(str, many))
    if oversubscribe:
        progress.note(f"P={shown} > {cores()} cores: more threads than cores; they share cores, so times "
                      f"are not those of dedicated processors (--no-oversubscribe leaves them out)")
        return counts
    kept = [c for c in counts if c <= cores()]
    if not kept:
        raise CallError([Diagnostic("error", "call run", 0, 0, f"--no-oversubscribe leaves no P to run: every "
                                    f"count (P={shown}) is above this machine's {cores()} cores")])
    progress.note(f"--no-oversubscribe: P={shown} left out, more threads than this machine's {cores()} cores")
    return kept
