"""Compiler-style messages: `file:line:col: error: ...`, the source line and a caret."""
from __future__ import annotations

from dataclasses import dataclass, field

from cll_grammar.span import Span, excerpt

Sources = list[str] | dict[str, list[str]] | None    # one file's lines, or each file's by name


@dataclass(frozen=True)
class Diagnostic:
    """One error, warning or note at a place in a source file; `notes` follow it."""
    severity: str
    file: str
    line: int
    column: int
    message: str
    notes: tuple["Diagnostic", ...] = field(default=())

    def render(self, lines: Sources = None) -> str:
        """The message as a C compiler prints it, with the source line and a caret when known
        (`lines`: the file's lines, or each file's by name when the messages span files)."""
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        out = [f"{where}: {self.severity}: {self.message}"]
        mine = lines.get(self.file) if isinstance(lines, dict) else lines
        if mine and 0 < self.line <= len(mine):
            out.append(excerpt(mine[self.line - 1], Span.point(self.line, self.column)))
        out += [note.render(lines) for note in self.notes]
        return "\n".join(out)


class CallError(Exception):
    """Errors that stop `call`; each a Diagnostic (the command prints them and exits 1)."""

    def __init__(self, diagnostics: list[Diagnostic], lines: Sources = None):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.lines = lines

    def render(self) -> str:
        """All the errors, rendered, one after another."""
        return "\n".join(d.render(self.lines) for d in self.diagnostics)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, for 'did you mean' suggestions and near-miss pragma prefixes."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
