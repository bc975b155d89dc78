"""What checking a file yields: the `Program` (its pragmas, experiments, parallel mode and
what the generated code needs to know) and the `Findings` that collect its diagnostics."""
from __future__ import annotations

from dataclasses import dataclass, field

from call.clex import CodeToken, Directive
from call.conditions import Undecided
from call.diagnostics import Diagnostic
from call.pragmas import Begin, For, Parallel, Pragma
from call.shuffle import Nest


@dataclass
class Program:
    """A checked file: its pragmas in order, experiments by name (first begin), parallel mode."""
    file: str
    lines: list[str]
    sites: list[tuple[Directive, Pragma]] = field(default_factory=list)
    experiments: dict[str, Begin] = field(default_factory=dict)
    parallel: Parallel | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    # the warnings about a report's names that no begin of this file has, by name: another
    # file of the same program may begin them (call.check.settle_reports)
    unbegun: list[tuple[str, Diagnostic]] = field(default_factory=list)
    # sites of the begins and ends of experiments that are the unbraced body of a control
    # header: the generated code opens a brace with such a begin and closes it after such an end
    wrapped: set[str] = field(default_factory=set)
    # `break`/`continue` tokens, by (line, column), that leave the body of a sampling loop for
    # a loop or switch outside it: the outermost such `For` they leave
    jumps: dict[tuple[int, int], tuple[str, For]] = field(default_factory=dict)
    # the `For` each `end for` closes, by the end for's site
    closes: dict[str, For] = field(default_factory=dict)
    # the shuffled nest (call.shuffle) each of its sampling loops belongs to, by the for's site
    nests: dict[str, Nest] = field(default_factory=dict)

    def exits(self, loop: For) -> list[str]:
        """The jumps ('break', 'continue') that leave sampling loop `loop` for outside it."""
        return sorted({kind for kind, crossed in self.jumps.values() if crossed is loop})


class Findings:
    """The errors found while checking `program` (its warnings go into the program);
    `undecided`: the conditional groups whose every arm is read (call.conditions)."""

    def __init__(self, program: Program, undecided: list[Undecided] = ()):
        self.program = program
        self.errors: list[Diagnostic] = []
        self.undecided = list(undecided)

    def undecided_notes(self, *pragmas: Pragma) -> list[Diagnostic]:
        """A note when one of `pragmas` stands in an `#if` group whose condition call cannot
        decide: it reads every arm, so what the compiler drops may be what is wrong."""
        for group in self.undecided:
            if any(group.line < p.line < group.end for p in pragmas):
                return [self.diagnostic("note", group.line, 1,
                                        f"call reads every arm of '{group.text}': it cannot tell "
                                        f"which one the compiler keeps (decide the macros with "
                                        f"-D/-U in --cflags or a #define in the file)")]
        return []

    def diagnostic(self, severity, line, column, message, notes=()) -> Diagnostic:
        """A diagnostic at `line`, `column` of the checked file."""
        return Diagnostic(severity, self.program.file, line, column, message, tuple(notes))

    def error(self, at: Pragma | CodeToken, message: str, notes=()) -> None:
        """Record an error at a pragma or a token."""
        self.errors.append(self.diagnostic("error", at.line, at.column, message, notes))

    def warn(self, line: int, column: int, message: str, notes=()) -> None:
        """Record a warning: the program is still translated."""
        self.program.warnings.append(self.diagnostic("warning", line, column, message, notes))

    def note(self, at: Pragma, message: str) -> Diagnostic:
        """A note pointing at a pragma, to attach to an error or warning."""
        return self.diagnostic("note", at.line, at.column, message)
