"""`call run`: build an instrumented program when needed (call.manifest decides), run it
(once per processor count for OpenMP sweeps) with progress on stderr, and say where each
trace went, also when the run is interrupted."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
from pathlib import Path

from call import manifest
from call.build import build_command, compile_program, print_warnings, read_source
from call.check import Program, check_file
from call.diagnostics import CallError, Diagnostic
from call.generate import instrumented_header, instrumented_source
from call.pragmas import procs_sequence
from call.progress import Progress

INTERRUPTED = 130   # the shell's status for a command ended by SIGINT


def build_path(source: Path) -> Path:
    """Where `call run` keeps the executable for `source`: `.cll-build/<stem>` beside it."""
    return source.parent / ".cll-build" / source.stem


def expected_build(program: Program, cflags: list[str], executable: Path) -> dict:
    """What a build of `program` into `executable` would be made from, for manifest: the
    command (the translation's temporary path replaced by a placeholder), the flags, the
    environment, the compiler binary, the runtime library, the source and its translation."""
    from call.runtime_paths import static_library
    source = program.file
    placeholder = Path("<translation>") / (Path(source).stem + ".cll.c")
    command = build_command([*cflags, source, "-o", str(executable)], {source: (placeholder, program)})
    header = Path(source).stem + ".cll.h"
    return {"command": command, "cflags": " ".join(cflags), "compiler": manifest.compiler_identity(command),
            "environment": {name: os.environ[name] for name in manifest.ENVIRONMENT if name in os.environ},
            "runtime": manifest.digest(static_library()), "source_path": os.path.abspath(source),
            "source": manifest.digest(source),
            "translation": manifest.text_digest(instrumented_header(program),
                                                instrumented_source(program, header))}


def ensure_built(program: Program, cflags: list[str], progress: Progress) -> Path:
    """Build `program` into `.cll-build/<stem>` unless its build record (call.manifest) shows
    that nothing it was built from changed, saying in one line why it (re)builds; CallError
    if the compiler fails."""
    executable = build_path(Path(program.file))
    expected = expected_build(program, cflags, executable)
    reason = manifest.stale_reason(executable, expected)
    if reason is None:
        return executable
    verb = "building" if reason == "first build" else "rebuilding"
    progress.note(f"{verb} {executable}: {reason}")
    executable.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="call-build-", dir=executable.parent) as work:
        rule = Path(work) / "deps.d"
        status = compile_program(["-MD", "-MF", str(rule), "-MT", manifest.DEPENDENCY_TARGET, *cflags,
                                  program.file, "-o", str(executable)], warn=False, work=work)
        if status != 0:
            raise CallError([Diagnostic("error", program.file, 0, 0,
                                        f"compilation failed (status {status})")])
        manifest.save(executable, expected, manifest.read_dependencies(rule, Path(work)))
    return executable


def trace_status(path: Path) -> str:
    """The `#status:` of a trace file's header ('?' if it has none)."""
    with path.open(encoding="utf-8", errors="replace") as text:
        for line in text:
            if line.startswith("#status: "):
                return line[len("#status: "):].strip()
            if line.startswith("#data"):
                break
    return "?"


def status_note(path: Path) -> str:
    """What to say after a trace's path about its status: nothing when `complete`, a calm
    word for `exit-without-report` (the runtime saving the trace at exit is the normal way
    for a program without `report`), the status itself otherwise."""
    state = trace_status(path)
    if state == "complete":
        return ""
    if state == "exit-without-report":
        return " (saved when the program ended: it has no report, which is fine)"
    return f" (status: {state})"


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
    it got the first one cannot be told). A second Ctrl-C kills the child."""
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    said = []
    try:
        for line in process.stderr:
            progress.relay(line)
            said.append(line)
        return process.wait(), "".join(said), False
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


def ending(status: int) -> str:
    """How a program ended, from its exit status (negative: killed by that signal)."""
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def say_interrupted(progress: Progress, where: str, kept: list[Path]) -> int:
    """Tell where the records of an interrupted run are kept; returns the exit status."""
    listing = ", ".join(f"{path.resolve()}{status_note(path)}" for path in kept)
    progress.note(f"interrupted {where}; " + (f"the partial trace is kept: {listing}" if kept
                                              else "the program wrote no trace"))
    return INTERRUPTED


def run_program(source: str, procs: tuple[int, int, int] | None, cflags: str,
                arguments: list[str], oversubscribe: bool = True) -> int:
    """`call run`: run the program once (sequential) or once per P of the procs clause (or
    --procs), with OMP_NUM_THREADS=P (OpenMP) or under `mpirun -np P` (MPI), showing
    progress and printing each trace path. Returns the exit status."""
    program = check_file(source, read_source(source))
    print_warnings(program)
    model = program.parallel.model if program.parallel is not None else None
    if procs is not None and model is None:
        raise CallError([Diagnostic("error", source, 0, 0, "--procs needs a program with "
                                    "'#pragma cll parallel OpenMP' or 'parallel MPI'")])
    progress = Progress()
    if model == "MPI":
        from call.mpirun import run_mpi_sweep
        return run_mpi_sweep(program, procs or program.parallel.procs, shlex.split(cflags),
                             arguments, oversubscribe, progress)
    executable = ensure_built(program, shlex.split(cflags), progress)
    sweep = procs or (program.parallel.procs if model == "OpenMP" else None)
    counts = procs_sequence(sweep) if sweep else [None]
    for number, count in enumerate(counts, 1):
        env = dict(os.environ)
        if count is not None:
            env["OMP_NUM_THREADS"] = str(count)
        trace = Path(env.get("CLL_TRACE") or f"{executable.name}.cll.{count or 1}.dat")
        if trace.exists() and "CLL_TRACE" not in os.environ:
            trace.unlink()
        label = f" (P={count})" if count is not None else ""
        progress.step(f"run {number} of {len(counts)}{label}: {executable} {shlex.join(arguments)}".rstrip())
        status, _, interrupted = run_child([str(executable), *arguments], env, progress)
        if interrupted:
            return say_interrupted(progress, f"in run {number} of {len(counts)}{label}",
                                   [trace] if trace.exists() else [])
        if status != 0:
            kept = f"; records kept in: {trace.resolve()}{status_note(trace)}" if trace.exists() else ""
            progress.note(f"{source}{label}: the program {ending(status)}{kept}")
            return status if status > 0 else 128 - status
        if not trace.exists():
            progress.note(f"{source}{label}: the program wrote no trace ({trace} is missing)")
            return 1
        progress.note(f"trace{label}: {trace.resolve()}{status_note(trace)}")
    return 0
