"""The errors a user can cause in llac (statements: LlacError; data files: InputError) and how they are shown (file:line:col + caret)."""
from __future__ import annotations

from cll_grammar.span import Span, excerpt


class LlacError(Exception):
    """A mistake in a statement or its data: one clear sentence, and where it is when known."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    def at(self, span: Span | None) -> "LlacError":
        """This error located at `span`, unless it already knows a more precise place."""
        if self.span is None and span is not None:
            self.span = span
        return self


class InputError(Exception):
    """A data file llac reads or writes that cannot be used (a trace, CSV, Extra-P or model
    file): the base of each reader's error, so that the session converts them in one place."""


def format_error(error: LlacError, filename: str, source: str) -> str:
    """`file:line:col: message`, then the source line and a caret under the column."""
    span = error.span
    if span is None:
        return f"{filename}: {error.message}"
    lines = source.splitlines()
    text = lines[span.line - 1] if 0 < span.line <= len(lines) else ""
    return f"{filename}:{span.line}:{span.column}: {error.message}\n{excerpt(text, span, '    ')}"


def internal_error(error: BaseException) -> str:
    """The one line shown for a bug in llac (not the user's mistake): its type and text, and
    how to see the traceback."""
    return f"internal error: {type(error).__name__}: {error} (run with --debug for details)"
