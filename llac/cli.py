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
from llac.errors import LlacError, format_error

STDIN = "<stdin>"


def main(argv=None) -> int:
    """Run llac with command-line arguments `argv`; returns the exit status."""
    parser = argparse.ArgumentParser(prog="llac", description="Model program run times from CALL traces.")
    parser.add_argument("scripts", nargs="*", help="llac scripts to run in order (.llac)")
    parser.add_argument("-c", dest="command", metavar="STATEMENTS",
                        help="run these statements; trace data piped on stdin is loaded first")
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text",
                        help="print tables and models as text, one JSON document per line, or CSV "
                             "rows (news and warnings then go to stderr)")
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
        print(f"internal error: {type(err).__name__}: {err} (run with --debug for details)", file=sys.stderr)
        return 2


def _run(args) -> int:
    from llac.session import Session
    session = Session()
    if args.command is not None:
        if _stdin_has_data():
            data = sys.stdin.read()
            if data.strip() and not _report(lambda: _load_stdin(session, data), STDIN, data, fmt=args.format):
                return 1
        return 0 if _report(lambda: session.execute(args.command), "<command>", args.command,
                            fmt=args.format) else 1
    if args.scripts:
        for path in args.scripts:
            try:
                with open(path, encoding="utf-8") as f:
                    source = f.read()
            except OSError as err:
                print(f"llac: cannot read {path!r}: {err.strerror or err}", file=sys.stderr)
                return 1
            if not _report(lambda: session.execute(source), path, source, fmt=args.format):
                return 1
        return 0
    if sys.stdin.isatty():
        from llac.repl import run_repl
        run_repl(session)
        return 0
    source = sys.stdin.read()
    return 0 if _report(lambda: session.execute(source), STDIN, source, fmt=args.format) else 1


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


def _report(produce, filename: str, source: str, out=None, err=None, fmt: str = "text") -> bool:
    """Render what `produce()` yields as it comes (warnings to stderr; with a machine `fmt`,
    tables and models as JSON or CSV and every note to stderr); on LlacError print it located
    in `source` and return False."""
    from llac.render import machine, render
    from llac.commands.results import ModelReport, Note, Table
    out, err = out or sys.stdout, err or sys.stderr
    try:
        for result in produce():
            if fmt != "text" and isinstance(result, (Table, ModelReport)):
                print(machine(result, fmt), file=out, flush=True)
                continue
            to_err = isinstance(result, Note) and (result.warning or fmt != "text")
            print(render(result), file=err if to_err else out, flush=True)
    except LlacError as error:
        print(format_error(error, filename, source), file=err, flush=True)
        return False
    return True
