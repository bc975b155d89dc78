"""The `call` command line: translate, cc, run, check, probe."""
from __future__ import annotations

import argparse
import codecs
import re
import shlex
import signal
import sys
import traceback

from call.build import added_flags, compile_program, known_macros, read_source, refuse_standard, translate
from call.check import Program, check_file, check_together, settle_reports
from call.generate import header_name, include_line
from call.diagnostics import CallError, Diagnostic
from cll_grammar.span import printable, suggest

USAGE = """call translate PROG.c [-o DIR]     write PROG.cll.c and PROG.cll.h
call cc [CC ARGS...] PROG.c ...    translate and compile with the tracing runtime ($CC, default cc)
call cc [CC ARGS...] A.o B.o ...   link objects made by `call cc -c` with the tracing runtime
call cc --print-flags [-c]         the flags call cc adds (to link with another compiler)
call run PROG.c [--procs A:B:F] [--cflags FLAGS] [--no-oversubscribe] [-- ARGS]
                                   build if needed, run (MPI: mpirun -np P), print trace paths
call check PROG.c ... [--cflags FLAGS]
                                   diagnostics only (-D/-U in FLAGS decide #if)
call probe [--quick] [--label NAME] [--db PATH] [--largest SIZE] [--procs 1,2,4]
           [--no-oversubscribe]
                                   measure this machine (memory mountain, caches, operation
                                   costs) and store the run in the machine database
call --debug COMMAND ...           an internal error shows its Python traceback
call --version                     the version of call and where its tracing runtime is"""


def _bytes_as_escapes(err: UnicodeEncodeError) -> tuple[str, int]:
    """Codec error handler for call's output: a byte of a file name or source line that is
    not UTF-8 (read as a lone surrogate) prints as `\\xe9` (cll_grammar.span.printable),
    anything else the terminal cannot encode as Python's backslash escape."""
    shown = printable(err.object[err.start:err.end])
    return shown.encode("ascii", "backslashreplace").decode("ascii"), err.end


codecs.register_error("call_bytes", _bytes_as_escapes)


def print_warnings(program: Program) -> None:
    """Print a checked file's warnings on stderr, compiler style."""
    for warning in program.warnings:
        print(warning.render(program.lines), file=sys.stderr)


def check_files(sources: list[str], macros) -> list[Program] | None:
    """Check every file of `call check`, each file's errors or warnings printed in turn (an
    error in one file must not hide the next one's, nor an earlier one's warnings); the checked
    programs, or None when some file had errors."""
    checked: list[Program | CallError] = []
    for source in sources:
        try:
            program = check_file(source, read_source(source), macros)
            include_line(header_name(source), source)    # a name the generated #include cannot hold
            checked.append(program)
        except CallError as err:
            checked.append(err)
    programs = [item for item in checked if isinstance(item, Program)]
    settle_reports(programs)
    for item in checked:
        if isinstance(item, CallError):
            print(item.render(), file=sys.stderr)
        else:
            print_warnings(item)
    return None if len(programs) < len(checked) else programs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="call", description="The #pragma cll compiler.", usage=USAGE)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, prog="call")
    translate_ = commands.add_parser("translate", help="write PROG.cll.c and PROG.cll.h")
    translate_.add_argument("source", type=_file_name)
    translate_.add_argument("-o", dest="out_dir", type=_folder_name, default=None, help="output directory")
    check = commands.add_parser("check", help="report diagnostics only")
    check.add_argument("sources", nargs="+", type=_file_name)
    check.add_argument("--cflags", default="", help="compiler flags: their -D/-U decide #if")
    run = commands.add_parser("run", help="build if needed, run, print where the traces went",
                              usage="call run [-h] [--procs PROCS] [--cflags CFLAGS] [--no-oversubscribe] "
                                    "source [-- ARGS ...]",
                              epilog="ARGS after -- are the program's command-line arguments.")
    run.add_argument("source", type=_file_name, help="the annotated C file")
    run.add_argument("--procs", type=_procs, default=None, help="A:B:F: P = A, A*F, ... <= B")
    run.add_argument("--cflags", default="-O2", help="compiler flags (default: -O2)")
    run.add_argument("--no-oversubscribe", dest="oversubscribe", action="store_false",
                     help="never run more MPI ranks or OpenMP threads than cores (by default "
                          "call run oversubscribes, and says so)")
    commands.add_parser("cc", help="translate and compile; any cc flags pass through")
    probe = commands.add_parser("probe", help="measure this machine, store it in the machine database")
    probe.add_argument("--quick", action="store_true",
                       help="fewer sizes and repetitions (under 20 s with the default mountain)")
    probe.add_argument("--label", type=_label, default=None, help="a note stored with the run")
    probe.add_argument("--largest", type=_byte_count, default=None, metavar="SIZE",
                       help="the largest working set of the memory mountain, e.g. 1GiB: at least "
                            "twice the last cache, at most half the available memory (default: 4x "
                            "the last cache)")
    probe.add_argument("--procs", type=_procs_list, default=None,
                       help="P1,P2,...: also measure BSP's g and L with mpirun -np P for each")
    probe.add_argument("--no-oversubscribe", dest="oversubscribe", action="store_false",
                       help="with --procs: let mpirun refuse more processes than cores")
    probe.add_argument("--db", type=_file_name, default=None,
                       help="the machine database (default: $LLAC_MACHINE_DB, else "
                            "~/.local/share/llac/machines.sqlite)")
    return parser


def _version() -> str:
    """`call VERSION (runtime: LIBRARY)`: the installed package's version and the tracing
    runtime library programs are linked with."""
    from importlib.metadata import PackageNotFoundError, version
    from call.runtime_paths import RUNTIME_DIR
    try:
        number = version("llac")
    except PackageNotFoundError:
        number = "(not installed)"
    return f"call {number} (runtime: {RUNTIME_DIR / 'libcllrt.a'})"


BYTE_UNITS = {None: 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


def _byte_count(text: str) -> int:
    """A number of bytes: digits with an optional binary unit (K, M, G or KiB, MiB, GiB, in
    any case). Decimal-looking units (MB, Gb) are refused rather than read as binary, and a
    negative number (`-1MiB`, `-2.5`) is told that a size is positive."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:([kmg])(?:ib)?)?\s*", text, re.IGNORECASE)
    if not match:
        negative = re.match(r"\s*-\s*\.?\d", text)
        raise argparse.ArgumentTypeError(f"{text!r}: {'a size is positive: ' if negative else ''}expected "
                                         f"a size in bytes such as 536870912, 512MiB or 1GiB (binary "
                                         f"units: K or KiB, M or MiB, G or GiB)")
    return int(match[1]) * BYTE_UNITS[match[2] and match[2].lower()]


def _file_name(text: str) -> str:
    """A file name argument: an empty one (`""`) is said to be empty, not taken for the
    current folder."""
    return _named(text, "file")


def _folder_name(text: str) -> str:
    """A folder name argument (`-o DIR`): an empty one is said to be empty."""
    return _named(text, "folder")


def _named(text: str, what: str) -> str:
    """`text`, the name of a `what` (file, folder), unless it is empty."""
    if not text:
        raise argparse.ArgumentTypeError(f"the {what} name is empty")
    return text


def _procs(text: str) -> tuple[int, int, int]:
    parts = text.split(":")
    try:
        first, last, factor = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected A:B:F, three integers") from None
    from call.pragmas import MAX_PROCS
    if first < 1 or last < first or factor < 2 or last > MAX_PROCS:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 <= A <= B <= {MAX_PROCS} and F >= 2")
    return first, last, factor


def _procs_list(text: str) -> list[int]:
    """`--procs` of call probe: P1,P2,... (call.probe_bsp's rule, imported when used)."""
    from call.probe_bsp import procs_list
    return procs_list(text)


def _label(text: str) -> str:
    """A probe run's label (cll_grammar.machine.label_problem says what it may be)."""
    from cll_grammar.machine import label_problem
    problem = label_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command of `parser`, by name (argparse keeps no public list)."""
    return {name: choice for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, choice in action.choices.items()}


def _parse_arguments(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed (options' values that begin with a dash attached first), or the usage
    error, with a "did you mean" for a misspelt command or option: a misspelt command is
    said with the commands there are, and an argument a command does not know with that
    command's own usage (argparse would show call's)."""
    commands = _commands(parser)
    if argv and not argv[0].startswith("-") and argv[0] not in commands:
        parser.error(f"unknown command {argv[0]!r}{suggest(argv[0], commands)}: the commands are "
                     f"{', '.join(commands)}")
    args, unknown = parser.parse_known_args(_attach_dash_values(parser, argv))
    if unknown:
        command = commands[args.command]
        options = [o for action in command._actions for o in action.option_strings]
        word = next((u.split("=")[0] for u in unknown if u.startswith("-")), "")
        command.error(f"unrecognized arguments: {' '.join(unknown)}{suggest(word, options) if word else ''}")
    return args


def _attach_dash_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`argv` with each value that begins with a dash attached to its option (`--cflags -O2`
    becomes `--cflags=-O2`, `--largest -1MiB` becomes `--largest=-1MiB`), which argparse
    would otherwise take for an option and refuse with "expected one argument". A value that
    is itself one of call's options (`--procs --cflags`) stays apart, so that the missing value
    is still said."""
    value_options, names = set(), set()
    for each in [parser, *_commands(parser).values()]:
        for action in each._actions:
            names.update(action.option_strings)
            if action.nargs is None:                  # exactly one value
                value_options.update(o for o in action.option_strings if o.startswith("--"))
    joined, i = [], 0
    while i < len(argv):
        meant = [o for o in value_options if o.startswith(argv[i])] if argv[i].startswith("--") else []
        if len(meant) == 1 and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1] not in names and argv[i + 1] != "--":      # argparse takes unique prefixes too
            joined.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            joined.append(argv[i])
            i += 1
    return joined


def main(argv: list[str] | None = None) -> int:
    """Run `call`; returns the exit status: 0 on success, 1 on a diagnosed error, 2 on an
    internal error (one line; its traceback only after a leading `--debug`)."""
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="call_bytes")
    debug = argv[:1] == ["--debug"]
    argv = argv[1:] if debug else argv
    try:
        if argv[:1] == ["cc"]:
            if "--print-flags" in argv:
                print(shlex.join(added_flags([a for a in argv[1:] if a != "--print-flags"])))
                return 0
            return compile_program(argv[1:], warn=print_warnings,
                                   notify=lambda note: print(note.render(), file=sys.stderr))
        program_args = argv[argv.index("--") + 1:] if "--" in argv else []
        parser = _parser()
        args = _parse_arguments(parser, argv[:argv.index("--")] if "--" in argv else argv)
        if args.command == "translate":
            output, _ = translate(args.source, args.out_dir, warn=print_warnings, macros=known_macros([]))
            print(f"call: wrote {output} and {output.with_suffix('.h')}", file=sys.stderr)
        elif args.command == "check":
            refuse_standard(shlex.split(args.cflags), "call check")
            programs = check_files(args.sources, known_macros(shlex.split(args.cflags)))
            if programs is None:
                return 1
            check_together(programs)
        elif args.command == "run":
            return run_program_command(args, program_args)
        elif args.command == "probe":
            return probe_machine_command(args)
        return 0
    except CallError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("call: interrupted", file=sys.stderr)
        return 130
    except OSError as err:       # a file that cannot be written, a full disk, ...
        print(f"call: error: {err.filename or ''}{': ' if err.filename else ''}{err.strerror or err}",
              file=sys.stderr)
        return 1
    except SystemExit as done:   # argparse: --help (0) or a usage error (its 2 means ours: 1)
        return 1 if done.code == 2 else done.code
    except Exception as err:   # a bug in call, never the user's fault: say so in one line
        if debug:
            traceback.print_exc()
        else:
            print(f"call: internal error: {type(err).__name__}: {err} (run `call --debug ...` "
                  f"for details)", file=sys.stderr)
        return 2


def run_program_command(args, program_args: list[str]) -> int:
    """`call run`: check the program and print its warnings, then run it with progress on
    stderr (call.run, imported lazily: only it needs subprocess plumbing)."""
    from call.progress import Progress
    from call.run import run_program
    if not args.source.endswith(".c"):
        raise CallError([Diagnostic("error", args.source, 0, 0, "not a .c file: call run builds "
                                                                "and runs one C source file, PROG.c")])
    refuse_standard(shlex.split(args.cflags), "call run")
    program = check_file(args.source, read_source(args.source), known_macros(shlex.split(args.cflags)))
    print_warnings(program)
    return run_program(program, args.procs, args.cflags, program_args, args.oversubscribe, Progress())


def probe_machine_command(args) -> int:
    """`call probe`: measure this machine and store the run (call.probe, imported lazily: it
    needs numpy and the machine database). SIGTERM ends it as Ctrl-C does (status 143): the
    probe program stopped and its folder removed, instead of both left behind."""
    from call.probe import probe_command
    from call.progress import Progress
    from call.stop import Terminated, raise_terminated
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        print(probe_command(args.quick, args.label, args.db, Progress(), args.procs, args.oversubscribe,
                            args.largest))
    except Terminated:
        print("call: terminated (SIGTERM)", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
