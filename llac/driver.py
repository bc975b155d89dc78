"""Run llac statements and print what they yield: the one loop shared by the command line
(`llac.cli`) and the REPL (`llac.repl`). Results are rendered as they come (`llac.render`);
a LlacError is printed located in its source and ends the run."""
from __future__ import annotations

import sys

from llac.commands.results import ModelReport, Note, Table
from llac.errors import LlacError, format_error
from llac.render import machine, render


def run_source(session, source: str, filename: str, out=None, err=None, fmt: str = "text") -> bool:
    """Run the statements `source` (read from `filename`) in `session` and print their
    results; False after an error."""
    return report(lambda: session.execute(source), filename, source, out, err, fmt)


def report(produce, filename: str, source: str, out=None, err=None, fmt: str = "text") -> bool:
    """Render what `produce()` yields as it comes (warnings to stderr; with a machine `fmt`,
    tables and models as JSON or CSV on stdout and everything else, notes, plots and text, to
    stderr); on LlacError print it located in `source` and return False."""
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
        return False
    return True
