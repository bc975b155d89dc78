"""`llac`: the REPL (on a terminal), batch scripts (`llac a.llac b.llac`), `llac -c "..."`,
and trace data piped on stdin with -c (loaded before statements that load nothing themselves).

Standard input is read only when it is the data or the script: by `load "-"`, by -c statements
that load nothing, or as the script when there is neither -c nor a script file. So a script
run inside a `while read` loop, from cron or in CI never trips over an unrelated stdin.

A script stops at its first error: `file:line:col: message`, the line and a caret, exit 1.
An unexpected internal error prints one line and exits 2 (--debug shows the traceback).
"""
from __future__ import annotations

import argparse
import os
import stat
import sys
import warnings

from llac import __version__
from llac.errors import LlacError, internal_error

STDIN = "<stdin>"


def main(argv=None) -> int:
    """Run llac with command-line arguments `argv`; returns the exit status."""
    parser = argparse.ArgumentParser(prog="llac", description="Model program run times from CALL traces.")
    parser.add_argument("scripts", nargs="*", help="llac scripts to run in order (.llac)")
    parser.add_argument("-c", dest="commands", metavar="STATEMENTS", action="append",
                        help="run these statements (after the scripts, if any; several -c run in "
                             "order, as lines of one script); if they load nothing and no script is "
                             "given, a trace piped on stdin is loaded first")
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text",
                        help="print tables and models as text, one JSON document per line, or CSV "
                             "rows (news and warnings then go to stderr)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    parser.add_argument("--version", action="version", version=f"llac {__version__}")
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:          # --help, --version (0) or a usage error: the user's, 1
        return 1 if done.code == 2 else done.code
    if not args.debug:
        # numpy's floating-point warnings (overflow at 1e300, a 0/0 handled as nan) are for
        # developers: the results say what they mean to a user (no value, no interval, a note)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `llac ... | head`: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:  # the one place that turns a bug into one line for the user
        if args.debug:
            raise
        print(internal_error(err), file=sys.stderr)
        return 2


def _run(args) -> int:
    from llac.driver import report, run_source
    from llac.session import Session
    session = Session()
    for path in args.scripts:
        try:
            source = read_script(path)
        except LlacError as err:
            print(f"llac: {err.message}", file=sys.stderr)
            return 1
        if not run_source(session, source, path, fmt=args.format):
            return 1
    if args.commands is not None:
        command = "\n".join(args.commands)        # `-c A -c B`: line 1 and line 2 of <command>
        if not args.scripts and not _loads_data(command) and _stdin_has_data():
            report(lambda: _load_piped(session), STDIN, "", fmt=args.format)
        return 0 if run_source(session, command, "<command>", fmt=args.format) else 1
    if args.scripts:
        return 0
    if sys.stdin.isatty():
        from llac.repl import run_repl
        run_repl(session, debug=args.debug)
        return 0
    source = sys.stdin.read()
    return 0 if run_source(session, source, STDIN, fmt=args.format) else 1


def read_script(path: str) -> str:
    """The text of the script at `path`; a file that cannot be read or is not UTF-8 is one
    LlacError naming the file and, for bad bytes, their line, column and byte offset."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise LlacError(f"cannot read {path!r}: {err.strerror or err}") from None
    from llac.trace import MAGIC
    if data.startswith(MAGIC.encode()):
        raise LlacError(f"{path} is a CALL trace, not an llac script: load it (llac -c 'load "
                        f"\"{path}\"; fit'), or pipe it (cat {path} | llac -c 'fit')")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise LlacError(f"{path}:{line}:{column}: the script is not UTF-8 text: byte "
                        f"0x{data[err.start]:02x} at offset {err.start}") from None


def _loads_data(source: str) -> bool:
    """Whether statements `source` load anything themselves (a syntax error counts as yes:
    stdin is then left alone and the error reported when the statements run)."""
    from llac import ast
    from llac.commands import keywords
    from llac.parse import parse
    try:
        return any(isinstance(statement, ast.Load) for statement in parse(source, keywords()))
    except LlacError:
        return True


def _load_piped(session) -> list:
    """Load the trace piped on stdin; nothing when stdin is empty, a warning (and nothing) when
    it is not a trace: statements that do not need it must still run."""
    from llac.commands.data import load_traces, stdin_traces
    from llac.commands.results import Note
    from llac.trace import EmptyInput, TraceError
    try:
        return load_traces(session, stdin_traces())
    except EmptyInput:
        return []
    except TraceError as err:
        return [Note(f"standard input is ignored: {err}", warning=True)]


def _stdin_has_data() -> bool:
    """True when stdin is a pipe or a file (not a terminal, not /dev/null)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)
