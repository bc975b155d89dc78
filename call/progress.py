"""Progress of `call run` on stderr: which build, which P, which run of how many. On a
terminal the current step is one line redrawn in place; elsewhere (a pipe, a log file, or a
terminal that the program's own standard output also writes to, where a redrawn line would
be glued to the program's output) every step is a plain line."""
from __future__ import annotations

import os
import sys

CLEAR_LINE = "\r\x1b[K"


def _same_file(first, second) -> bool:
    try:
        a, b = os.fstat(first.fileno()), os.fstat(second.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)


def live_terminal(stream, output=None) -> bool:
    """Whether `stream` is a terminal the current step can be redrawn on: a tty, not
    TERM=dumb, and not also where standard output (`output`) goes."""
    output = sys.stdout if output is None else output
    try:
        tty = stream.isatty()
    except (ValueError, AttributeError):
        return False
    return tty and os.environ.get("TERM") != "dumb" and not _same_file(stream, output)


class Progress:
    """Writes `call: ...` steps and notes on stderr (see the module docstring)."""

    def __init__(self, stream=None, live: bool | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.live = live_terminal(self.stream) if live is None else live
        self.step_text = ""   # the step on screen (live mode)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def step(self, text: str) -> None:
        """Show the current step: redrawn in place on a live terminal, a line otherwise."""
        if self.live:
            self.step_text = f"call: {text}"
            self._write(CLEAR_LINE + self.step_text)
        else:
            self._write(f"call: {text}\n")

    def note(self, text: str) -> None:
        """A line that stays (a trace path, a rebuild reason): replaces the step on screen."""
        self._write((CLEAR_LINE if self.step_text else "") + f"call: {text}\n")
        self.step_text = ""

    def end(self) -> None:
        """End the step on screen (live mode), so that an error message has its own line."""
        if self.step_text:
            self._write(CLEAR_LINE)
            self.step_text = ""

    def relay(self, line: str) -> None:
        """Pass on a line the program (or mpirun) wrote to stderr, the step redrawn below it."""
        if self.step_text:
            self._write(CLEAR_LINE + line + ("" if line.endswith("\n") else "\n") + self.step_text)
        else:
            self._write(line)
