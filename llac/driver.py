"""Run llac statements and print what they yield: the one loop shared by the command line
(`llac.cli`) and the REPL (`llac.repl`). Results are rendered as they come (`llac.render`);
a LlacError is printed located in its source and ends the run."""
from __future__ import annotations

import sys

from llac.commands.results import ModelReport, Note, Table
from llac.errors import LlacError, format_error
from llac.render import machine, render


def run_source(session, source: str, filename: str, out=None, err=None, fmt: str = "text",
               say_rest: bool = False) -> bool:
    """Run the statements `source` (read from `filename`) in `session` and print their
    results; False after an error. With `say_rest` (the REPL, where a pasted script is one
    input) an error before the input's last statement line says that the rest was not run."""
    try:
        return report(lambda: session.execute(source), filename, source, out, err, fmt, reraise=say_rest)
    except LlacError as error:
        lines = [n for n, line in enumerate(source.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")]
        rest = [n for n in lines if error.span is not None and n > error.span.end_line]
        if len(lines) > 1 and not _parses(source):
            print("nothing of this input was run: it is read whole before its first statement runs",
                  file=err or sys.stderr, flush=True)
        elif rest:
            which = f"line {rest[0]}" if len(rest) == 1 else f"lines {rest[0]}-{rest[-1]}"
            print(f"the rest of this input ({which}) was not run", file=err or sys.stderr, flush=True)
        return False


def _parses(source: str) -> bool:
    """Whether `source` parses (an error in it was then one of running it)."""
    from llac.commands import keywords
    from llac.parse import parse
    try:
        parse(source, keywords())
    except LlacError:
        return False
    return True


def report(produce, filename: str, source: str, out=None, err=None, fmt: str = "text",
           reraise: bool = False) -> bool:
    """Render what `produce()` yields as it comes (warnings to stderr; with a machine `fmt`,
    tables and models as JSON or CSV on stdout and everything else, notes, plots and text, to
    stderr); on LlacError print it located in `source` and return False (`reraise`: raise it
    again after printing it)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        for result in produce():
            if fmt != "text" and isinstance(result, (Table, ModelReport)):
                print(machine(result, fmt), file=out, flush=True)
                continue
            # with a machine format stdout holds only its documents: news, plots and text go to stderr
            to_err = fmt != "text" or (isinstance(result, Note) and result.warning)
            print(render(result), file=err if to_err else out, flush=True)
    except LlacError as error:
        print(format_error(error, filename, source), file=err, flush=True)
        if reraise:
            raise
        return False
    return True
