"""The measurement order of sampling loops (docs/pragma-language.md, Measurement order).

Two checks while a file is read: a repetition loop (a sampling loop whose variables appear in
no formula of the experiments inside it) nested inside a size sweep (a sampling loop whose
variables appear in a formula of those experiments) gets a warning, since a co-runner that
starts mid-sweep slows every later size; and a `shuffle` clause opens a nest (it and the
sampling loops that directly follow it) that must be perfect, with headers that plainly
assign their variables: the call.shuffle.Nest the generated code needs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from call.pragmas import Begin, EndFor, For
from call.program import Findings
from call.shuffle import Nest

_LVALUE = r"[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*"
_ASSIGNMENT = re.compile(rf"\s*(?P<declaration>(?:[A-Za-z_]\w*\s+|\*\s*)*)(?P<variable>{_LVALUE})"
                         rf"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_CHANGES = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)")   # a right-hand side that assigns too
_INCREMENT = re.compile(rf"\s*(?:(?:\+\+|--)\s*(?P<before>{_LVALUE})|(?P<after>{_LVALUE})\s*(?:\+\+|--))\s*$")


@dataclass(frozen=True)
class Header:
    """What a sampling loop's header assigns: its variables (in order), those it declares,
    and the parts of INIT and STEP that are neither a plain assignment (whose right-hand side
    assigns nothing) nor an increment."""
    variables: tuple[str, ...]
    declared: tuple[str, ...]
    other: tuple[str, ...]


def read_header(header: str) -> Header:
    """The variables of a `for` header "INIT; COND; STEP" (`N = 16`, `int rep = 0`, `N *= 2`,
    `rep++`, `s.n = 1`, comma lists): the names its INIT and STEP assign."""
    init, _, step = header.split(";")
    variables, declared, other = [], [], []
    initial = _top_level_parts(init)
    for part in initial + _top_level_parts(step):
        assignment, increment = _ASSIGNMENT.match(part), _INCREMENT.match(part)
        if assignment and not _CHANGES.search(part[assignment.end():]):
            name = re.sub(r"\s+", "", assignment["variable"])
            first = _ASSIGNMENT.match(initial[0])
            if part in initial and first and first["declaration"].strip():   # `int r = 0, q = 1`
                declared.append(name)
        elif increment:
            name = re.sub(r"\s+", "", increment["before"] or increment["after"])
        else:
            other.append(part.strip())
            continue
        if name not in variables:
            variables.append(name)
    return Header(tuple(variables), tuple(declared), tuple(other))


def _top_level_parts(text: str) -> list[str]:
    """`text` split at the commas outside parentheses and brackets, blank parts dropped."""
    parts, depth, start = [], 0, 0
    for index, ch in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


@dataclass
class _Loop:
    """An open sampling loop, what is known of it so far."""
    pragma: For
    variables: tuple[str, ...]
    used: set[str] = field(default_factory=set)   # formula variables of experiments inside
    timed: bool = False                           # an experiment begins inside
    nest: list[For] | None = None                 # the shuffled nest it belongs to


class Order:
    """Follows the sampling loops open in a function: warns about repetition loops inside
    size sweeps and records shuffled nests (`findings.program.nests`) or says why not."""

    def __init__(self, findings: Findings):
        self.findings = findings
        self.stack: list[_Loop] = []
        self.last: For | EndFor | None = None   # the pragma just before, if a for / end for
        self.closed: For | None = None          # the loop the `end for` just before closed

    def code(self) -> None:
        """Something other than `for` / `end for` stands here: nests are no longer perfect."""
        self.last = self.closed = None

    def clear(self) -> None:
        """The end of a function: nothing stays open."""
        self.stack.clear()
        self.code()

    def experiment(self, begin: Begin) -> None:
        """An experiment begins inside the open sampling loops."""
        for loop in self.stack:
            loop.used.update(begin.formula.variables)
            loop.timed = True
        self.code()

    def loop_begins(self, pragma: For) -> None:
        """A sampling loop begins: with `shuffle` it opens a shuffled nest (the loops before
        it stay outside, in their plain order); without, it joins the nest whose innermost
        loop it directly follows, if any."""
        header = read_header(pragma.header)
        entry = _Loop(pragma, header.variables)
        outer = self.stack[-1] if self.stack and self.last is self.stack[-1].pragma else None
        if pragma.shuffle:      # a new nest, also right inside another loop (one per round)
            entry.nest = [pragma]
        elif outer is not None and outer.nest is not None and outer.nest[-1] is outer.pragma:
            entry.nest = outer.nest
            entry.nest.append(pragma)
        if entry.nest is not None:
            self._check_header(pragma, header, entry.nest[0])
        self.stack.append(entry)
        self.last, self.closed = pragma, None

    def _check_header(self, pragma: For, header: Header, outermost: For) -> None:
        """A shuffled loop's header must plainly assign variables declared before the nest."""
        note = [] if pragma is outermost else [self.findings.note(outermost, "'shuffle' is here")]
        if header.declared:
            self.findings.error(pragma, f"'shuffle' cannot restore {header.declared[0]!r}, which this "
                                        f"header declares: declare it before the loop", note)
        elif header.other:
            self.findings.error(pragma, f"'shuffle' needs headers that only assign their loop "
                                        f"variables (N = ..., N *= 2, rep++): {header.other[0]!r} "
                                        f"is neither", note)
        elif not header.variables:
            self.findings.error(pragma, "'shuffle' needs headers that assign their loop variables: "
                                        "this one assigns none, so its values cannot be enumerated "
                                        "apart from the body", note)

    def loop_ends(self, pragma: EndFor, loop: For | None) -> None:
        """The `end for` of `loop` (None: it matched none, already an error)."""
        index = next((i for i, o in enumerate(self.stack) if o.pragma is loop), None)
        if index is None:
            self.code()
            return
        entry = self.stack.pop(index)
        del self.stack[index:]
        self._warn_repetitions(entry)
        if entry.nest is not None:
            self._close_nested(pragma, entry)
        self.last, self.closed = pragma, loop

    def _warn_repetitions(self, entry: _Loop) -> None:
        """Warn when `entry` repeats experiments inside a sweep over their formula's variables."""
        if not entry.timed or not entry.variables or entry.used.intersection(entry.variables):
            return
        sweep = next((o for o in reversed(self.stack) if entry.used.intersection(o.variables)
                      and not (entry.nest is not None and entry.nest is o.nest)), None)
        if sweep is None:
            return
        repeat = entry.variables[0]
        size = next(v for v in sweep.variables if v in entry.used)
        self.findings.warn(entry.pragma.line, entry.pragma.column,
                           f"repetition loop {repeat!r} runs inside the sweep of {size!r}: a "
                           f"co-runner starting mid-sweep slows every later size; put "
                           f"'#pragma cll for({repeat} ...)' outermost or add 'shuffle' "
                           f"(docs/pragma-language.md, Measurement order)",
                           [self.findings.note(sweep.pragma, f"the sweep of {size!r} is here")])

    def _close_nested(self, pragma: EndFor, entry: _Loop) -> None:
        """A loop of a shuffled nest ends: the `end for` lines of a nest must follow each other
        (nothing may run after an inner loop), and the outermost records the nest."""
        nest, position = entry.nest, entry.nest.index(entry.pragma)
        if position + 1 < len(nest) and self.closed is not nest[position + 1]:
            self.findings.error(pragma, "'shuffle' needs a perfect nest: code stands between this "
                                        "'end for' and that of the loop inside it, so it would run "
                                        "after that loop's values",
                                [self.findings.note(nest[0], "'shuffle' is here")])
        if position == 0:
            self._check_jumps(pragma, nest)
            variables = []
            for loop in nest:
                variables += [v for v in read_header(loop.header).variables if v not in variables]
            shuffled = Nest(tuple(nest), tuple(variables))
            self.findings.program.nests.update({loop.site: shuffled for loop in nest})

    def _check_jumps(self, pragma: EndFor, nest: list[For]) -> None:
        """No `break`/`continue` in the body may leave the nest for a loop outside it."""
        start, end = (nest[0].line, nest[0].column), (pragma.line, pragma.column)
        for (line, column), (kind, crossed) in sorted(self.findings.program.jumps.items()):
            if start < (line, column) < end and (crossed.line, crossed.column) <= start:
                self.findings.errors.append(self.findings.diagnostic(
                    "error", line, column,
                    f"'{kind}' leaves a shuffled nest of sampling loops for a loop outside it: "
                    f"not supported with 'shuffle'", [self.findings.note(nest[0], "'shuffle' is here")]))
