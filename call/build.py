"""Translate C files and compile them with the tracing runtime: `call translate`, `call cc`,
and the build `call run` keeps in `.cll-build/` (rebuilt when its record, call.manifest, says
something it was made from changed)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from call import manifest
from cll_grammar.outputs import missing_folder
from call.check import Program, check_file, check_together
from call.conditions import macros_of
from call.diagnostics import CallError, Diagnostic
from call.generate import instrumented_header, instrumented_source
from call.progress import Progress


def read_source(path: str) -> str:
    """The text of a C file (without the UTF-8 byte-order mark some editors put first, which
    gcc skips there but not after the lines `call` puts before it), or a CallError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape").removeprefix("\ufeff")
    except OSError as err:
        raise CallError([Diagnostic("error", path, 0, 0, f"cannot read: {err.strerror}")]) from None


Warn = Callable[[Program], None] | None   # what shows a checked file's warnings (None: nothing)


def translate(source: str, out_dir: str | Path | None = None, warn: Warn = None,
              macros: dict[str, str | None] | None = None) -> tuple[Path, Program]:
    """Check `source` and write `<stem>.cll.c` and `<stem>.cll.h` into `out_dir` (default:
    next to the source), a folder that must exist (cll_grammar.outputs); returns the .cll.c
    path and the checked program, whose warnings go to `warn` first (call.cli prints them;
    `call run` has printed them already); `macros`: those the compiler flags define
    (call.conditions.macros_of), which decide `#if`."""
    if out_dir is not None and (problem := missing_folder(out_dir, folder=True)):
        raise CallError([Diagnostic("error", f"-o {out_dir}", 0, 0, problem)])
    program = check_file(source, read_source(source), macros)
    if warn is not None:
        warn(program)
    src = Path(source)
    directory = Path(out_dir) if out_dir is not None else src.parent
    stem = src.name[:-2] if src.name.endswith(".c") else src.name
    header = directory / f"{stem}.cll.h"
    output = directory / f"{stem}.cll.c"
    header.write_text(instrumented_header(program), encoding="utf-8", errors="surrogateescape")
    output.write_text(instrumented_source(program, header.name), encoding="utf-8",
                      errors="surrogateescape")
    return output, program


def c_sources(arguments: list[str]) -> list[str]:
    """The `.c` files among compiler arguments (not options, not the value of -o), once each."""
    return list(dict.fromkeys(a for i, a in enumerate(arguments) if a.endswith(".c")
                              and not a.startswith("-") and (i == 0 or arguments[i - 1] != "-o")))


def build_command(arguments: list[str], translated: dict[str, tuple[Path, Program]]) -> list[str]:
    """The compiler command of `call cc ARGS`, each source in `translated` replaced by its
    translation: $CC (default cc; $MPICC for a `parallel MPI` or `parallel PUB` file, with
    cll_mpi.h's directory and, when linking, the MPI layer's source, and for PUB the BSP
    library's and the PUB layer's), -iquote for each source's
    directory, the runtime's include directory, -fopenmp for a `parallel OpenMP` file and,
    when linking, the runtime library."""
    from call.runtime_paths import (RuntimeMissing, include_dir, link_flags, mpi_include_dir,
                                    mpi_layer_source, pub_layer_source, pub_source)
    programs = [program for _, program in translated.values()]
    try:
        runtime = ["-I", str(include_dir())]
        linking = ["-c", "-S", "-E", "-fsyntax-only"]
        libraries = [] if any(a in linking for a in arguments) else link_flags()
        extra = [flag for source in translated for flag in ("-iquote", str(Path(source).parent))]
        if any(p.parallel and p.parallel.model == "OpenMP" for p in programs) \
                and "-fopenmp" not in arguments:
            extra.append("-fopenmp")
        compiler = os.environ.get("CC", "cc").split()
        models = {p.parallel.model for p in programs if p.parallel}
        if models & {"MPI", "PUB"}:
            compiler = mpi_compiler(needs="a 'parallel MPI' or 'parallel PUB' program")
            extra += ["-I", str(mpi_include_dir())]
            layers = [mpi_layer_source()] + ([pub_source(), pub_layer_source()] if "PUB" in models else [])
            libraries = [str(layer) for layer in layers] + libraries if libraries else []
    except RuntimeMissing as err:
        raise CallError([Diagnostic("error", "call cc", 0, 0, str(err))]) from None
    return compiler + extra + runtime + [str(translated[a][0]) if a in translated else a
                                         for a in arguments] + libraries


def output_path(arguments: list[str]) -> str | None:
    """The file named by `-o FILE` or `-oFILE` among compiler arguments (None without one)."""
    for i, argument in enumerate(arguments):
        if argument == "-o" and i + 1 < len(arguments):
            return arguments[i + 1]
        if argument.startswith("-o") and len(argument) > 2:
            return argument[2:]
    return None


def compile_program(arguments: list[str], warn: Warn = None,
                    work: str | Path | None = None) -> int:
    """`call cc ARGS`: translate every `.c` in ARGS (into `work`, default a temporary
    directory; each checked file's warnings to `warn`), then run the command of
    build_command. The folder of `-o FILE` must exist (cll_grammar.outputs). Returns the
    compiler's exit status."""
    sources = c_sources(arguments)
    if not sources:
        raise CallError([Diagnostic("error", "call cc", 0, 0, "no .c file to compile")])
    output = output_path(arguments)
    if output not in (None, "-") and (problem := missing_folder(output)):
        raise CallError([Diagnostic("error", f"-o {output}", 0, 0, problem)])
    with tempfile.TemporaryDirectory(prefix="call-", dir=work) as directory:
        translated = {}
        for number, source in enumerate(sources):
            (Path(directory) / str(number)).mkdir()
            translated[source] = translate(source, Path(directory) / str(number), warn,
                                           macros_of(arguments))
        check_together([program for _, program in translated.values()])
        return subprocess.run(build_command(arguments, translated)).returncode


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
    try:
        executable.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:       # a read-only checkout, a file in the way
        raise CallError([Diagnostic("error", program.file, 0, 0,
                                    f"cannot make the build folder {executable.parent} beside the source "
                                    f"({err.strerror or err}): call run builds there; copy the source to a "
                                    f"folder you can write")]) from None
    with tempfile.TemporaryDirectory(prefix="call-build-", dir=executable.parent) as work:
        rule = Path(work) / "deps.d"
        status = compile_program(["-MD", "-MF", str(rule), "-MT", manifest.DEPENDENCY_TARGET, *cflags,
                                  program.file, "-o", str(executable)], work=work)
        if status != 0:
            raise CallError([Diagnostic("error", program.file, 0, 0,
                                        f"compilation failed (status {status})")])
        manifest.save(executable, expected, manifest.read_dependencies(rule, Path(work)))
    return executable


MPI_PACKAGES = "apt-get install libopenmpi-dev openmpi-bin (Debian/Ubuntu; or MPICH: mpich)"


def mpi_compiler(who: str = "call cc", needs: str = "a 'parallel MPI' program") -> list[str]:
    """The MPI compiler wrapper for `parallel MPI` programs (and the BSP probe): $MPICC
    (default mpicc); a CallError from `who` naming the packages to install when it is not
    there."""
    command = os.environ.get("MPICC", "mpicc").split()
    if not command or shutil.which(command[0]) is None:
        where = "$MPICC" if "MPICC" in os.environ else "mpicc"
        raise CallError([Diagnostic("error", who, 0, 0,
                                    f"MPI is not installed: {where} ({' '.join(command)}) was not "
                                    f"found; {needs} needs an MPI compiler: {MPI_PACKAGES}")])
    return command
