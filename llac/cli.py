"""`llac`: the REPL (on a terminal), batch scripts (`llac a.llac b.llac`), `llac -c "..."`,
and trace data piped on stdin with -c (loaded before the statements).

A script stops at its first error: `file:line:col: message`, the line and a caret, exit 1.
An unexpected internal error prints one line and exits 2 (--debug shows the traceback).
"""
from __future__ import annotations

import argparse
import os
import stat
import sys

from llac import __version__
from llac.errors import LlacError, format_error, internal_error

STDIN = "<stdin>"


def main(argv=None) -> int:
    """Run llac with command-line arguments `argv`; returns the exit status."""
    parser = argparse.ArgumentParser(prog="llac", description="Model program run times from CALL traces.")
    parser.add_argument("scripts", nargs="*", help="llac scripts to run in order (.llac)")
    parser.add_argument("-c", dest="command", metavar="STATEMENTS",
                        help="run these statements; trace data piped on stdin is loaded first")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    parser.add_argument("--version", action="version", version=f"llac {__version__}")
    args = parser.parse_args(argv)
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
    from llac.session import Session
    session = Session()
    if args.command is not None:
        if _stdin_has_data():
            data = sys.stdin.read()
            if data.strip() and not _report(lambda: _load_stdin(session, data), STDIN, data):
                return 1
        return 0 if _report(lambda: session.execute(args.command), "<command>", args.command) else 1
    if args.scripts:
        for path in args.scripts:
            try:
                source = read_script(path)
            except LlacError as err:
                print(f"llac: {err.message}", file=sys.stderr)
                return 1
            if not _report(lambda: session.execute(source), path, source):
                return 1
        return 0
    if sys.stdin.isatty():
        from llac.repl import run_repl
        run_repl(session, debug=args.debug)
        return 0
    source = sys.stdin.read()
    return 0 if _report(lambda: session.execute(source), STDIN, source) else 1


def read_script(path: str) -> str:
    """The text of the script at `path`; a file that cannot be read or is not UTF-8 is one
    LlacError naming the file and, for bad bytes, their line, column and byte offset."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise LlacError(f"cannot read {path!r}: {err.strerror or err}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise LlacError(f"{path}:{line}:{column}: the script is not UTF-8 text: byte "
                        f"0x{data[err.start]:02x} at offset {err.start}") from None


def _load_stdin(session, data: str):
    """Load trace text that arrived on stdin, as if from a file called <stdin>."""
    from llac.commands.data import load_traces
    from llac.trace import TraceError, read_trace
    try:
        trace = read_trace(STDIN, text=data)
    except TraceError as err:
        raise LlacError(f"the data on stdin is not a trace: {err}") from None
    return load_traces(session, [trace])


def _stdin_has_data() -> bool:
    """True when stdin is a pipe or a file (not a terminal, not /dev/null)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _report(produce, filename: str, source: str, out=None, err=None) -> bool:
    """Render what `produce()` yields as it comes (warnings to stderr); on LlacError print it
    located in `source` and return False."""
    from llac.render import render
    from llac.commands.results import Note
    out, err = out or sys.stdout, err or sys.stderr
    try:
        for result in produce():
            warning = isinstance(result, Note) and result.warning
            print(render(result), file=err if warning else out, flush=True)
    except LlacError as error:
        print(format_error(error, filename, source), file=err, flush=True)
        return False
    return True
