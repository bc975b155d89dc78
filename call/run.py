"""`call run`: build an instrumented program when needed, run it (once per processor count
for OpenMP sweeps) and say where each trace went."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from call.build import compile_program, print_warnings, read_source
from call.check import check_file
from call.diagnostics import CallError, Diagnostic
from call.pragmas import procs_sequence


def build_path(source: Path) -> Path:
    """Where `call run` keeps the executable for `source`: `.cll-build/<stem>` beside it."""
    return source.parent / ".cll-build" / source.stem


def ensure_built(source: Path, cflags: list[str]) -> Path:
    """Build `source` unless its executable is newer than it and the runtime library;
    CallError if the compiler fails."""
    from call.runtime_paths import static_library
    executable = build_path(source)
    inputs = [source, static_library()]
    stale = not executable.exists() or any(p.stat().st_mtime > executable.stat().st_mtime for p in inputs)
    if stale:
        executable.parent.mkdir(parents=True, exist_ok=True)
        status = compile_program([*cflags, str(source), "-o", str(executable)])
        if status != 0:
            raise CallError([Diagnostic("error", str(source), 0, 0,
                                        f"compilation failed (status {status})")])
    return executable


def run_program(source: str, procs: tuple[int, int, int] | None, cflags: str,
                arguments: list[str], oversubscribe: bool = True) -> int:
    """`call run`: run the program once (sequential) or once per P of the procs clause (or
    --procs), with OMP_NUM_THREADS=P (OpenMP) or under `mpirun -np P` (MPI), printing each
    trace path. Returns the exit status."""
    program = check_file(source, read_source(source))
    print_warnings(program)
    model = program.parallel.model if program.parallel is not None else None
    openmp = model == "OpenMP"
    if procs is not None and model is None:
        raise CallError([Diagnostic("error", source, 0, 0, "--procs needs a program with "
                                    "'#pragma cll parallel OpenMP' or 'parallel MPI'")])
    if model == "MPI":
        from call.mpirun import run_mpi_sweep
        return run_mpi_sweep(program, procs or program.parallel.procs, shlex.split(cflags),
                             arguments, oversubscribe)
    executable = ensure_built(Path(source), shlex.split(cflags))
    sweep = procs or (program.parallel.procs if openmp else None)
    counts = procs_sequence(sweep) if sweep else [None]
    for count in counts:
        env = dict(os.environ)
        if count is not None:
            env["OMP_NUM_THREADS"] = str(count)
        trace = Path(env.get("CLL_TRACE") or f"{executable.name}.cll.{count or 1}.dat")
        if trace.exists() and "CLL_TRACE" not in os.environ:
            trace.unlink()
        status = subprocess.run([str(executable), *arguments], env=env).returncode
        label = f" (P={count})" if count is not None else ""
        if status != 0:
            print(f"call: {source}{label}: the program exited with status {status}", file=sys.stderr)
            return status
        if not trace.exists():
            print(f"call: {source}{label}: the program wrote no trace ({trace} is missing)",
                  file=sys.stderr)
            return 1
        print(f"call: trace{label}: {trace.resolve()}", file=sys.stderr)
    return 0
