"""Translate C files and compile them with the tracing runtime: `call translate`, `call cc`,
and the build `call run` keeps in `.cll-build/` (rebuilt when its record, call.manifest, says
something it was made from changed)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, NamedTuple

from call import manifest
from cll_grammar.outputs import missing_folder
from call.check import Program, check_file, check_together, settle_reports
from call.conditions import compiler_macros, macros_of
from call.diagnostics import CallError, Diagnostic
from call.generate import header_name, instrumented_header, instrumented_source
from call.progress import Progress


def read_source(path: str) -> str:
    """The text of a C file (without the UTF-8 byte-order mark some editors put first, which
    gcc skips there but not after the lines `call` puts before it), or a CallError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape").removeprefix("\ufeff")
    except OSError as err:
        raise CallError([Diagnostic("error", path, 0, 0, f"cannot read: {err.strerror}")]) from None


Warn = Callable[[Program], None] | None   # what shows a checked file's warnings (None: nothing)
Notify = Callable[[Diagnostic], None] | None   # what shows call cc's notes (None: nothing)


def known_macros(flags: list[str]) -> dict[str, str | None]:
    """The macros that decide `#if` for compiler `flags`: the C compiler's identity macros
    (call.conditions.compiler_macros; for MPI, mpicc wraps the same compiler), then those of
    the flags' -D/-U (macros_of), which win."""
    compiler, _ = c_compiler()
    return {**compiler_macros(tuple(compiler), tuple(flags)), **macros_of(flags)}


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
    directory = Path(out_dir) if out_dir is not None else Path(source).parent
    header = directory / header_name(source)
    output = header.with_name(header.name[:-len(".h")] + ".c")
    text = instrumented_source(program, header.name)     # first: a name #include cannot hold writes nothing
    header.write_text(instrumented_header(program), encoding="utf-8", errors="surrogateescape")
    output.write_text(text, encoding="utf-8", errors="surrogateescape")
    return output, program


# the -std= values of C89/C90 (-ansi is one): the code call generates is C99 (its header's
# inline functions, an experiment's array of values known at run time, a begin's statement
# before the declarations that follow it); GNU C89 has all three as extensions
C89_STANDARDS = {"c89", "c90", "iso9899:1990", "iso9899:199409"}
GNU_C89_STANDARDS = {"gnu89", "gnu90"}
NEEDS_C99 = ("the code call generates needs C99 or later: an experiment's begin is a statement "
             "that may stand before your declarations, it fills an array with values known at run "
             "time, and the generated header has inline functions")


# warnings that the generated code itself triggers (a begin is a statement before the
# declarations after it; the header has inline functions): as errors, they fail the
# instrumented program though the plain one builds
GENERATED_CODE_WARNINGS = {"declaration-after-statement": "each '#pragma cll' line becomes a statement, so a "
                                                          "declaration after one",
                           "c90-c99-compat": "the generated code uses C99 (a statement before "
                                             "declarations, inline functions), so it"}


def standard_problem(flags: list[str]) -> str | None:
    """Why compiler `flags` cannot build the instrumented program, though they build the plain
    one, or None: a C89/C90 standard (`-std=c89`, `-ansi`: the last -std/-ansi counts; GNU
    C89, `-std=gnu89`, builds, unless its pedantic warnings are errors), or a warning the
    generated code triggers made an error (GENERATED_CODE_WARNINGS: -Wdeclaration-after-statement
    or -Wc90-c99-compat with -Werror, or -Werror=... of them)."""
    standard, pedantic, pedantic_errors, werror = None, False, False, False
    enabled: dict[str, bool] = {}              # each such warning: on or off
    as_error: dict[str, bool] = {}             # made an error (or not) by name, whatever -Werror says
    for flag in flags:
        warning = flag[len("-Wno-"):] if flag.startswith("-Wno-") else flag[len("-W"):] if flag.startswith("-W") else ""
        erring = flag.split("=", 1)[1] if flag.startswith(("-Werror=", "-Wno-error=")) else ""
        if flag == "-ansi" or flag.startswith("-std="):
            standard = flag
        elif flag in ("-pedantic", "-Wpedantic"):
            pedantic = True
        elif flag in ("-pedantic-errors", "-Werror=pedantic"):
            pedantic = pedantic_errors = True
        elif flag in ("-Werror", "-Wno-error"):
            werror = flag == "-Werror"
        elif warning in GENERATED_CODE_WARNINGS:
            enabled[warning] = not flag.startswith("-Wno-")
        elif erring in GENERATED_CODE_WARNINGS:
            as_error[erring] = flag.startswith("-Werror=")
            enabled[erring] = enabled.get(erring, False) or as_error[erring]
    name = "c90" if standard == "-ansi" else standard[len("-std="):] if standard else None
    choose = "compile with -std=c99, -std=gnu99, -std=c11 or a later standard (or none: gcc's default is gnu17)"
    if name in C89_STANDARDS:
        return f"{standard} selects C89/C90, but {NEEDS_C99}; {choose}"
    if name in GNU_C89_STANDARDS and (pedantic_errors or (pedantic and werror)):
        errors = "-pedantic-errors" if pedantic_errors else "-pedantic with -Werror"
        return (f"{standard} with {errors} makes an error of each GNU extension of C89, but "
                f"{NEEDS_C99}; {choose}, or drop {errors.split()[0]}")
    for warning, why in GENERATED_CODE_WARNINGS.items():
        if enabled.get(warning) and as_error.get(warning, werror):
            return (f"-W{warning} with -Werror: {why} fails in the instrumented program though "
                    f"the plain program builds; build it without them, or add -Wno-error={warning}")
    return None


def refuse_standard(flags: list[str], who: str) -> None:
    """A CallError from `who` (`call cc`, `call check`, `call run`) when compiler `flags`,
    after the flags of $CC, cannot build the instrumented program (standard_problem)."""
    problem = standard_problem(c_compiler()[0][1:] + list(flags))
    if problem:
        raise CallError([Diagnostic("error", who, 0, 0, problem)])


# gcc options whose value is the next argument (`-o FILE`, `-I DIR`, `-MF FILE`): that
# argument is no input file
VALUE_OPTIONS = {"-o", "-x", "-I", "-L", "-l", "-D", "-U", "-MF", "-MT", "-MQ", "-include",
                 "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix", "-iwithprefix",
                 "-iwithprefixbefore", "-isysroot", "-imultilib", "-Xlinker", "-Xassembler",
                 "-Xpreprocessor", "-T", "-u", "-e", "-z", "-A", "-aux-info", "-dumpbase",
                 "-dumpdir", "--param"}
NOT_LINKING = ("-c", "-S", "-E", "-fsyntax-only")   # the compiler stops before the link
# the runtime functions that an object compiled from a `parallel` file calls, by model: what
# a link of objects alone needs beyond the sequential runtime follows from them
MODEL_SYMBOLS = {"PUB": b"cll_pub_", "MPI": b"cll_mpi_", "OpenMP": b"cll_set_thread_id_function"}
# set in the environment of the compiler call cc runs: a call cc started under it (a $CC that
# runs call cc by a route call cannot see) refuses instead of starting itself again
COMPILER_MARKER = "CALL_CC_COMPILER"


def input_files(arguments: list[str]) -> list[str]:
    """The input files among compiler arguments, once each: neither options nor the value of
    an option that takes the next argument (VALUE_OPTIONS: the file of `-o`, the folder of
    `-I`, ...)."""
    return list(dict.fromkeys(a for i, a in enumerate(arguments) if not a.startswith("-")
                              and (i == 0 or arguments[i - 1] not in VALUE_OPTIONS)))


def c_sources(arguments: list[str]) -> list[str]:
    """The `.c` files among compiler arguments (input_files), which call cc translates."""
    return [a for a in input_files(arguments) if a.endswith(".c")]


def links(arguments: list[str]) -> bool:
    """Whether compiler arguments make a link (none of -c, -S, -E, -fsyntax-only): only then
    does call cc add the runtime library."""
    return not any(a in NOT_LINKING for a in arguments)


def object_files(arguments: list[str]) -> list[str]:
    """The object files and libraries among compiler arguments' input files: `.o`, `.a`,
    `.so` and `.so.N`, which a link step of call cc links with the runtime."""
    return [a for a in input_files(arguments) if a.endswith((".o", ".a", ".so")) or ".so." in a]


def object_models(arguments: list[str]) -> set[str]:
    """The parallel models of the object files and archives (`.o`, `.a`) among compiler
    arguments, read from the runtime functions they call (MODEL_SYMBOLS: an object that
    `call cc -c` made from a `parallel MPI` file calls cll_mpi_begin, ...): so a link of
    objects alone gets the compiler, layers and -fopenmp that a build from the sources would.
    A file that cannot be read adds nothing (the compiler then says what is wrong with it)."""
    models = set()
    for name in object_files(arguments) + _archives(arguments):
        if name.endswith((".o", ".a")):
            try:
                data = Path(name).read_bytes()
            except OSError:
                continue
            models |= {model for model, symbol in MODEL_SYMBOLS.items() if symbol in data}
    return models


def _archives(arguments: list[str]) -> list[str]:
    """The static libraries that `-lNAME` finds in the `-L` folders among compiler arguments
    (`libNAME.a`; `-l:FILE` names the file): a library of the user's made from parallel
    files is read for its model as a named archive is."""
    folders, found = [], []
    for i, argument in enumerate(arguments):
        value = argument[2:] or (arguments[i + 1] if i + 1 < len(arguments) else "")
        if argument.startswith("-L"):
            folders.append(value)
        elif argument.startswith("-l") and value:
            name = value[1:] if value.startswith(":") else f"lib{value}.a"
            found += [str(Path(folder) / name) for folder in folders if (Path(folder) / name).is_file()][:1]
    return found


def _runs_call(word: str) -> bool:
    """Whether the program `word` (a name found on $PATH, or a path) is call itself: its real
    path (symbolic links resolved) is named `call`, or is the script running now."""
    path = os.path.realpath(shutil.which(word) or word)
    if Path(path).name == "call":
        return True
    try:
        return os.path.samefile(path, sys.argv[0])
    except (OSError, ValueError):
        return False


def flags_after_call(command: list[str]) -> list[str] | None:
    """When `command` runs call itself (`call cc FLAGS`, `/path/to/call cc FLAGS`, `python -m
    call cc FLAGS`), the FLAGS after it; None for any other command."""
    if command and _runs_call(command[0]):
        rest = command[1:]
    elif command[1:3] == ["-m", "call"]:
        rest = command[3:]
    else:
        return None
    rest = rest[1:] if rest[:1] == ["--debug"] else rest
    return rest[1:] if rest[:1] == ["cc"] else rest


def c_compiler() -> tuple[list[str], str | None]:
    """The C compiler of a program that is not MPI, as words: $CC split as the shell splits it
    (default cc), and None; but when $CC runs call itself (`make CC="call cc"` exports CC so),
    running it would start call cc again and again, so cc with the flags that follow `call cc`
    in $CC, and the note that says so."""
    try:
        command = shlex.split(os.environ.get("CC", "")) or ["cc"]
    except ValueError as err:    # an unbalanced quote
        raise CallError([Diagnostic("error", "call cc", 0, 0,
                                    f"$CC ({os.environ['CC']}) cannot be split into words: {err}")]) from None
    flags = flags_after_call(command)
    if flags is None:
        return command, None
    return ["cc", *flags], (f"$CC ({os.environ['CC']}) is call itself: compiling with "
                            f"{shlex.join(['cc', *flags])}")


class Command(NamedTuple):
    """The compiler command of `call cc ARGS` in parts: what runs, the flags call adds before
    the user's arguments and after them, and a note to show before it runs."""
    compiler: list[str]
    before: list[str]           # -iquote per source, -fopenmp, the runtime's -I
    after: list[str]            # when linking: the layers' sources and the runtime library
    note: str | None = None     # $CC was call itself (c_compiler)

    def line(self, arguments: list[str], translated: dict[str, tuple[Path, Program]]) -> list[str]:
        """The whole command, each source in `translated` replaced by its translation."""
        return self.compiler + self.before + [str(translated[a][0]) if a in translated else a
                                              for a in arguments] + self.after


def command_parts(arguments: list[str], translated: dict[str, tuple[Path, Program]]) -> Command:
    """The compiler command of `call cc ARGS` (translations in `translated`), in parts: $CC
    (c_compiler; $MPICC for a `parallel MPI` or `parallel PUB` file, with cll_mpi.h's
    directory and, when linking, the MPI layer's source, and for PUB the BSP library's and the
    PUB layer's), -iquote for each source's directory, the runtime's include directory,
    -fopenmp for a `parallel OpenMP` file and, when linking, the runtime library. The models
    are those of the translated files and, when linking, of the objects (object_models)."""
    from call.runtime_paths import (RuntimeMissing, include_dir, link_flags, mpi_include_dir,
                                    mpi_layer_source, pub_layer_source, pub_source)
    linking = links(arguments)
    models = {program.parallel.model for _, program in translated.values() if program.parallel}
    models |= object_models(arguments) if linking else set()
    try:
        runtime = ["-I", str(include_dir())]
        libraries = link_flags() if linking else []
        extra = [flag for source in translated for flag in ("-iquote", str(Path(source).parent))]
        if "OpenMP" in models and "-fopenmp" not in arguments:
            extra.append("-fopenmp")
        if models & {"MPI", "PUB"}:
            compiler, note = mpi_compiler(needs="a 'parallel MPI' or 'parallel PUB' program"), None
            extra += ["-I", str(mpi_include_dir())] if mpi_include_dir() != include_dir() else []   # once
            layers = [mpi_layer_source()] + ([pub_source(), pub_layer_source()] if "PUB" in models else [])
            libraries = [str(layer) for layer in layers] + libraries if libraries else []
        else:
            compiler, note = c_compiler()
    except RuntimeMissing as err:
        raise CallError([Diagnostic("error", "call cc", 0, 0, str(err))]) from None
    return Command(compiler, extra + runtime, libraries, note)


def build_command(arguments: list[str], translated: dict[str, tuple[Path, Program]]) -> list[str]:
    """The compiler command of `call cc ARGS`, each source in `translated` replaced by its
    translation (command_parts)."""
    return command_parts(arguments, translated).line(arguments, translated)


def added_flags(arguments: list[str]) -> list[str]:
    """`call cc --print-flags [ARGS]`: the flags call cc adds to a compiler command with the
    options ARGS (and objects, whose models count), for a build that cannot run through call
    cc, such as a link by a C++ or Fortran compiler: the runtime's -I and, when linking, the
    runtime library and what it needs."""
    if sources := c_sources(arguments):
        raise CallError([Diagnostic("error", "call cc", 0, 0,
                                    f"--print-flags compiles nothing: drop {sources[0]} (the flags "
                                    f"for a .c file are those of its translation by `call translate`)")])
    parts = command_parts(arguments, {})
    # the layers' C sources stay C for a C++ or Fortran driver (`g++ ... $(call cc --print-flags)`)
    after = [word for flag in parts.after for word in (["-x", "c", flag, "-x", "none"] if flag.endswith(".c") else [flag])]
    return parts.before + after


def output_path(arguments: list[str]) -> str | None:
    """The file named by `-o FILE` or `-oFILE` among compiler arguments (None without one)."""
    for i, argument in enumerate(arguments):
        if argument == "-o" and i + 1 < len(arguments):
            return arguments[i + 1]
        if argument.startswith("-o") and len(argument) > 2:
            return argument[2:]
    return None


def _refuse_recursion() -> None:
    """A CallError when this call cc was started by the compiler a call cc runs
    (COMPILER_MARKER): a $CC that runs call cc by a route c_compiler cannot see (a wrapper
    script of the user's) would otherwise start call cc within call cc without end."""
    if COMPILER_MARKER in os.environ:
        raise CallError([Diagnostic("error", "call cc", 0, 0,
                                    f"started by the compiler that call cc runs "
                                    f"({os.environ[COMPILER_MARKER]}), which runs call cc again: "
                                    f"set $CC to a C compiler such as gcc, not to a command that "
                                    f"runs call")])


def _run(command: Command, arguments: list[str], translated: dict[str, tuple[Path, Program]],
         notify: Notify = None) -> int:
    """Run `command` on `arguments` (its note first, to `notify`) with COMPILER_MARKER in the
    compiler's environment, and $CC set to the compiler when $CC was call itself (for a
    compiler wrapper that reads $CC); the compiler's exit status."""
    environment = dict(os.environ, **{COMPILER_MARKER: shlex.join(command.compiler)})
    if command.note:
        if notify is not None and "MAKELEVEL" not in os.environ:   # under make it is what make CC="call cc" asks
            notify(Diagnostic("note", "call cc", 0, 0, command.note))
        environment["CC"] = shlex.join(command.compiler)
    return subprocess.run(command.line(arguments, translated), env=environment).returncode


def compile_program(arguments: list[str], warn: Warn = None,
                    work: str | Path | None = None, notify: Notify = None) -> int:
    """`call cc ARGS`: translate every `.c` in ARGS (into `work`, default a temporary
    directory; each checked file's warnings to `warn`, once every file is checked, so that a
    report's name that another file begins is no warning; call cc's notes to `notify`), then run the command of
    command_parts. Each translation is named as its source (in a folder of its own), so the
    compiler's default outputs are those of a plain build: `call cc -c a.c` writes a.o. ARGS
    without a `.c` file that link objects (`call cc a.o b.o -o prog`) link them with the
    runtime. The folder of `-o FILE` must exist (cll_grammar.outputs). Returns the
    compiler's exit status."""
    _refuse_recursion()
    sources = c_sources(arguments)
    if sources:
        refuse_standard(arguments, "call cc")
    if not sources and not (links(arguments) and (object_files(arguments) or _archives(arguments))):
        what = " and no object file to link" if links(arguments) else ""
        raise CallError([Diagnostic("error", "call cc", 0, 0, f"no .c file to compile{what}")])
    output = output_path(arguments)
    if output not in (None, "-") and (problem := missing_folder(output)):
        raise CallError([Diagnostic("error", f"-o {output}", 0, 0, problem)])
    with tempfile.TemporaryDirectory(prefix="call-", dir=work) as directory:
        translated = {}
        try:
            for number, source in enumerate(sources):
                folder = Path(directory) / str(number)
                folder.mkdir()
                translation, program = translate(source, folder, None, known_macros(arguments))
                translated[source] = (translation.rename(folder / Path(source).name), program)
        finally:        # the warnings of the files checked, also when a later one has errors
            programs = [program for _, program in translated.values()]
            settle_reports(programs)
            for program in programs if warn is not None else ():
                warn(program)
        check_together(programs)
        started = time.time()
        status = _run(command_parts(arguments, translated), arguments, translated, notify)
        if status == 0:
            _own_dependencies(arguments, translated, directory, started)
        return status


def _own_dependencies(arguments: list[str], translated: dict[str, tuple[Path, Program]], directory: str,
                      started: float) -> None:
    """With -MD or -MMD the compiler writes a make rule naming what it read: the translation
    in the temporary `directory`, which is gone when make next reads the rule (`No rule to make
    target /tmp/call-...`). Each rule written since `started` gets the source instead of its
    translation, and loses the generated header (made again by every call cc). The rules of
    `-Wp,-MD,FILE` and `-Wp,-MMD,FILE` (preprocessor_rules) are rewritten the same way."""
    by_preprocessor = preprocessor_rules(arguments)
    if not by_preprocessor and not any(a in ("-MD", "-MMD") for a in arguments):
        return
    output = output_path(arguments)
    written = by_preprocessor + [a[3:] if len(a) > 3 else arguments[i + 1] for i, a in enumerate(arguments)
                                 if a.startswith("-MF") and (len(a) > 3 or i + 1 < len(arguments))]
    written += [str(Path(output).with_suffix(".d"))] if output not in (None, "-") else []
    written += [f"{Path(source).stem}.d" for source in translated]
    written += [str(Path(output).parent / f"{Path(output).stem}-{Path(source).stem}.d")
                for source in translated if output not in (None, "-")]
    folder = re.escape(_in_make(directory))        # a path in a rule, its spaces escaped as gcc writes them
    temporary = re.compile(r"(?m)^" + folder + r"(?:\\ |\S)*:.*\n?|[ \t]+" + folder + r"(?:\\ |\S)*")
    for rule in dict.fromkeys(written):
        path = Path(rule)
        try:
            if path.stat().st_mtime < started:
                continue
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            continue
        text = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)           # one line per rule
        for source, (translation, _) in translated.items():      # the whole name, not a prefix of main.cll.h
            text = re.sub(re.escape(_in_make(str(translation))) + r"(?=[\s:]|$)", lambda _: _in_make(source), text)
        text = temporary.sub("", text)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")


def preprocessor_rules(arguments: list[str]) -> list[str]:
    """The make rules that compiler arguments ask of the preprocessor directly, as kernel-style
    and autotools Makefiles do: the FILE of each `-Wp,-MD,FILE` or `-Wp,-MMD,FILE` (the options
    of one -Wp are separated by commas; `-Wp,-MMD,a.d,-MP` names a.d)."""
    rules = []
    for argument in arguments:
        if argument.startswith("-Wp,"):
            words = argument.split(",")[1:]
            rules += [rule for option, rule in zip(words, words[1:]) if option in ("-MD", "-MMD")]
    return rules


def _in_make(path: str) -> str:
    """`path` as a make rule writes it: spaces escaped with a backslash (as gcc's -MD does)."""
    return path.replace(" ", "\\ ")


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
    header = header_name(source)
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
