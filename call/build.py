"""Translate C files and compile them with the tracing runtime: `call translate` and `call cc`."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from call.check import Program, check_file
from call.diagnostics import CallError, Diagnostic
from call.generate import instrumented_header, instrumented_source


def print_warnings(program: Program) -> None:
    """Print a checked file's warnings on stderr, compiler style."""
    for warning in program.warnings:
        print(warning.render(program.lines), file=sys.stderr)


def read_source(path: str) -> str:
    """The text of a C file, or a CallError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as err:
        raise CallError([Diagnostic("error", path, 0, 0, f"cannot read: {err.strerror}")]) from None


def translate(source: str, out_dir: str | Path | None = None) -> tuple[Path, Program]:
    """Check `source` and write `<stem>.cll.c` and `<stem>.cll.h` into `out_dir` (default:
    next to the source); returns the .cll.c path and the checked program (warnings printed)."""
    program = check_file(source, read_source(source))
    print_warnings(program)
    src = Path(source)
    directory = Path(out_dir) if out_dir is not None else src.parent
    directory.mkdir(parents=True, exist_ok=True)
    stem = src.name[:-2] if src.name.endswith(".c") else src.name
    header = directory / f"{stem}.cll.h"
    output = directory / f"{stem}.cll.c"
    header.write_text(instrumented_header(program), encoding="utf-8", errors="surrogateescape")
    output.write_text(instrumented_source(program, header.name), encoding="utf-8",
                      errors="surrogateescape")
    return output, program


def compile_program(arguments: list[str]) -> int:
    """`call cc ARGS`: translate every `.c` in ARGS, then run $CC (default cc) on the same
    arguments with the translations in their place, the runtime's include directory and, when
    linking, the runtime library. `-fopenmp` is added when a file says `parallel OpenMP`; a
    file that says `parallel MPI` makes the compiler $MPICC (default mpicc) and adds cll_mpi.h's
    directory. Returns the compiler's exit status."""
    from call.runtime_paths import RuntimeMissing, include_dir, link_flags, mpi_include_dir
    sources = [a for i, a in enumerate(arguments)
               if a.endswith(".c") and not a.startswith("-") and (i == 0 or arguments[i - 1] != "-o")]
    if not sources:
        raise CallError([Diagnostic("error", "call cc", 0, 0, "no .c file to compile")])
    try:
        runtime = ["-I", str(include_dir())]
        linking = ["-c", "-S", "-E", "-fsyntax-only"]
        libraries = [] if any(a in linking for a in arguments) else link_flags()
    except RuntimeMissing as err:
        raise CallError([Diagnostic("error", "call cc", 0, 0, str(err))]) from None
    with tempfile.TemporaryDirectory(prefix="call-") as work:
        replaced, extra, translated = {}, [], []
        for number, source in enumerate(dict.fromkeys(sources)):
            output, program = translate(source, Path(work) / str(number))
            replaced[source] = str(output)
            translated.append(program)
            extra += ["-iquote", str(Path(source).parent or ".")]
        if any(p.parallel and p.parallel.model == "OpenMP" for p in translated) \
                and "-fopenmp" not in arguments:
            extra.append("-fopenmp")
        compiler = os.environ.get("CC", "cc").split()
        if any(p.parallel and p.parallel.model == "MPI" for p in translated):
            compiler = mpi_compiler()
            try:
                extra += ["-I", str(mpi_include_dir())]
            except RuntimeMissing as err:
                raise CallError([Diagnostic("error", "call cc", 0, 0, str(err))]) from None
        command = compiler + extra + runtime + [replaced.get(a, a) for a in arguments] + libraries
        return subprocess.run(command).returncode


MPI_PACKAGES = "apt-get install libopenmpi-dev openmpi-bin (Debian/Ubuntu; or MPICH: mpich)"


def mpi_compiler() -> list[str]:
    """The MPI compiler wrapper for `parallel MPI` programs: $MPICC (default mpicc); a
    CallError naming the packages to install when it is not there."""
    command = os.environ.get("MPICC", "mpicc").split()
    if not command or shutil.which(command[0]) is None:
        where = "$MPICC" if "MPICC" in os.environ else "mpicc"
        raise CallError([Diagnostic("error", "call cc", 0, 0,
                                    f"MPI is not installed: {where} ({' '.join(command)}) was not "
                                    f"found; a 'parallel MPI' program needs an MPI compiler: "
                                    f"{MPI_PACKAGES}")])
    return command
