"""The balance of `#pragma cll` begin/end and for/end for within each function of a file:
the open experiments and sampling loops, `return`/`goto`/`break`/`continue` that leave them
(and `longjmp`, and macros that expand to a `break` or `continue`),
what is never ended, and near-miss prefixes (`#pragma ll ...`) pointed at as likely typos
when something does not balance."""
from __future__ import annotations

from dataclasses import dataclass

from call.clex import CodeToken, Directive
from call.diagnostics import Diagnostic
from call.pragmas import Begin, End, EndFor, For, Pragma
from call.program import Findings


@dataclass
class _Open:
    pragma: Begin | For
    depth: int


class Balance:
    """The experiments and sampling loops open at the current point of a function, checked
    as they begin and end; errors and warnings go to `findings`."""

    def __init__(self, findings: Findings):
        self.findings = findings
        self.stack: list[_Open] = []
        self.near_misses: list[Directive] = []
        self.rejected: set[str] = set()   # names of begins that did not parse
        # in the current function: each goto label and each goto's label name, with what
        # is open there
        self.labels: list[tuple[CodeToken, list[Begin | For]]] = []
        self.gotos: list[tuple[CodeToken, CodeToken, list[Begin | For]]] = []
        self.setjmp_inside: set[int] = set()   # id() of the experiments a setjmp is called in

    def innermost(self) -> Begin | For | None:
        """The experiment or sampling loop begun last and still open."""
        return self.stack[-1].pragma if self.stack else None

    def forget(self, begin: Begin) -> None:
        """Drop an experiment already reported as misused: its `end` reports nothing more."""
        self.stack = [o for o in self.stack if o.pragma is not begin]
        self.rejected.add(begin.name)

    def reject(self, words: list[str]) -> None:
        """A pragma that did not parse: no cascade of errors at an `end` naming these words."""
        self.rejected.update(words)

    def taken_typo(self, directive: Directive) -> bool:
        """Whether a near-miss `#pragma ll end NAME` is taken as `#pragma cll end NAME`: when
        NAME is the experiment open innermost here, as in the CALL paper's own Fig. 5, whose
        program then builds as printed; said in a warning. Any other near miss is not."""
        words, inner = directive.body.split(), self.innermost()
        if not (len(words) == 2 and words[0] == "end" and isinstance(inner, Begin) and inner.name == words[1]):
            return False
        self.findings.warn(directive.line, directive.namespace_column,
                           f"'#pragma {directive.namespace} end {inner.name}' is taken as '#pragma cll end "
                           f"{inner.name}', the end of experiment {inner.name!r} open here: correct "
                           f"the typo (a C compiler ignores '#pragma {directive.namespace}')",
                           [self.findings.note(inner, f"experiment {inner.name!r} begins here")])
        return True

    def near_miss(self, directive: Directive) -> None:
        """Warn about `#pragma ll ...` and the like, and remember it for the typo notes."""
        self.near_misses.append(directive)
        self.findings.warn(directive.line, directive.namespace_column,
                           f"'#pragma {directive.namespace}' is ignored: did you mean '#pragma cll'?")

    def typo_notes(self, name: str) -> list[Diagnostic]:
        """Notes pointing at near-miss pragma lines that mention `name`: likely typos."""
        return [self.findings.diagnostic("note", d.line, d.namespace_column,
                                         f"'#pragma {d.namespace}{d.body.rstrip()}' looks like a typo for "
                                         f"'#pragma cll{d.body.rstrip()}'")
                for d in self.near_misses if name in d.body.split()]

    def jump(self, token: CodeToken, target: CodeToken | None) -> None:
        """A `break`/`continue`: one that leaves sampling loops for the loop or switch
        `target` before them is recorded for the translation (None: there is none, which the
        plain program's compiler rejects as well); one that leaves experiments is warned."""
        after = (target.line, target.column) if target else (0, 0)
        crossed = [o.pragma for o in self.stack if isinstance(o.pragma, For) and _at(o.pragma) > after]
        if crossed and target is None:
            where = "loop or switch" if token.text == "break" else "loop"
            self.findings.error(token, f"'{token.text}' inside '#pragma cll for' but in no {where} of "
                                       f"the program: it would leave the generated sampling loop, and "
                                       f"the plain program does not compile",
                                [self.findings.note(crossed[-1], "the 'for' is here")])
        elif crossed:
            self.findings.program.jumps[_at(token)] = (token.text, crossed[0])
        self.leaving(token, after)

    def macro_jump(self, use: CodeToken, kind: str, target: CodeToken | None, definition: Diagnostic) -> bool:
        """A use of a macro whose replacement holds a `break` or `continue` (`kind`) of its
        own, which there leaves for `target` (None: no loop or switch): when that leaves a
        sampling loop's body, a warning, since call cannot carry a jump it does not see past
        the sampling loop (jump); whether it warned."""
        after = (target.line, target.column) if target else (0, 0)
        crossed = [o.pragma for o in self.stack if isinstance(o.pragma, For) and _at(o.pragma) > after]
        if not crossed:
            left = [o.pragma for o in self.stack if isinstance(o.pragma, Begin) and _at(o.pragma) > after]
            if left:
                self.findings.warn(use.line, use.column,
                                   f"macro {use.text!r} expands to a '{kind}' that leaves experiment "
                                   f"{left[-1].name!r}: on that path the experiment is never ended "
                                   f"(that run of it has no record)",
                                   [self.findings.note(left[-1], f"experiment {left[-1].name!r} begins here"),
                                    definition])
            return bool(left)
        self.findings.warn(use.line, use.column,
                           f"macro {use.text!r} expands to a '{kind}' that leaves the body of "
                           f"'#pragma cll for': in the instrumented program it leaves only the "
                           f"sampling loop, not the loop or switch it leaves in the plain program "
                           f"(call does not see a jump inside a macro); write the '{kind}' itself "
                           f"here, outside the macro",
                           [self.findings.note(crossed[-1], "the 'for' is here"), definition])
        return True

    def set_jump(self) -> None:
        """A call of `setjmp` (`sigsetjmp`...): a `longjmp` inside the innermost open experiment
        may return into it, so that one is not warned about."""
        experiments = [o.pragma for o in self.stack if isinstance(o.pragma, Begin)]
        if experiments:
            self.setjmp_inside.add(id(experiments[-1]))

    def long_jump(self, token: CodeToken) -> None:
        """A call of `longjmp` (`siglongjmp`...) inside an open experiment: one to a `setjmp`
        outside it leaves it open, a warning (none where a `setjmp` inside it came first)."""
        experiments = [o.pragma for o in self.stack if isinstance(o.pragma, Begin)]
        if not experiments or id(experiments[-1]) in self.setjmp_inside:
            return
        inner = experiments[-1]
        self.findings.warn(token.line, token.column,
                           f"'{token.text}' inside experiment {inner.name!r}: a {token.text} to a "
                           f"setjmp outside the experiment leaves it open: this run of it has no "
                           f"record (the runtime counts it as left open); to a setjmp in this same "
                           f"function (or one it is inlined into), the program then stops at the "
                           f"next 'end' of an experiment open around it (status 70: it does not "
                           f"match the open {inner.name!r}); end {inner.name!r} before the "
                           f"{token.text}, or call the setjmp inside it",
                           [self.findings.note(inner, f"experiment {inner.name!r} begins here")]
                           + self.findings.undecided_notes(inner))

    def leaving(self, token: CodeToken, after: tuple[int, int]) -> None:
        """When `token` (return, break, continue) leaves experiments begun after
        position `after`: they are never ended on that path, a warning; an error if an
        experiment begun before `after` stays open where the jump goes, since the run then
        stops at its `end` (it finds the one left open innermost)."""
        experiments = [o.pragma for o in self.stack if isinstance(o.pragma, Begin)]
        self.left(token, [e for e in experiments if _at(e) > after],
                  [e for e in experiments if _at(e) <= after])

    def left(self, token: CodeToken, left: list[Begin], outer: list[Begin]) -> None:
        """The jump `token` leaves the experiments `left` open while `outer` stay open where
        it goes (leaving)."""
        if not left:
            return
        inner = left[-1]
        notes = [self.findings.note(inner, f"experiment {inner.name!r} begins here")] \
            + self.findings.undecided_notes(inner)
        if outer:
            self.findings.error(token, f"'{token.text}' leaves experiment {inner.name!r} open "
                                       f"inside experiment {outer[-1].name!r}, which stays open "
                                       f"where the jump goes: the run stops at 'end "
                                       f"{outer[-1].name}' (status 70, it does not match the open "
                                       f"experiment {inner.name!r}); end {inner.name!r} before "
                                       f"the jump",
                                notes + [self.findings.note(outer[-1], f"experiment "
                                                                       f"{outer[-1].name!r} begins here")])
        else:
            caller = (f": this run of it has no record (the next 'end' in a calling function, "
                      f"or the exit, counts it as left open; not where the compiler inlines this "
                      f"function: the caller's 'end' then stops the run, status 70, or, of "
                      f"{inner.name!r} itself, records this call's values)" if token.text == "return" else "")
            self.findings.warn(token.line, token.column,
                               f"'{token.text}' inside experiment {inner.name!r}: on this path the "
                               f"experiment is never ended{caller}", notes)

    def label(self, token: CodeToken, switch: CodeToken | None) -> None:
        """A label: a `case`/`default` of `switch` inside an experiment or sampling loop
        begun after that switch is an error (the switch jumps into it past its begin); a goto
        label is remembered for the gotos of the function (close_function)."""
        if token.text not in ("case", "default"):
            self.labels.append((token, [o.pragma for o in self.stack]))
        elif switch is not None and switch.text == "switch":   # (a loop in Duff's device: not followed)
            self.entered(token, f"'{token.text}' label", f"the switch at line {switch.line}",
                         [o.pragma for o in self.stack if _at(o.pragma) > _at(switch)])

    def goto(self, keyword: CodeToken, name: CodeToken) -> None:
        """A `goto NAME`: remembered with what is open there (close_function)."""
        self.gotos.append((keyword, name, [o.pragma for o in self.stack]))

    def entered(self, label: CodeToken, what: str, source: str, inside: list[Begin | For]) -> None:
        """An error at `label` if `inside` (what is open at the label but not where `source`
        jumps from) holds an experiment or sampling loop: the jump enters it past its begin."""
        if not inside:
            return
        inner = inside[-1]
        if isinstance(inner, Begin):
            entered, opener = f"experiment {inner.name!r}", "begin"
            enters = f"the experiment without its begin, and the run stops at 'end {inner.name}' (status 70)"
        else:
            entered, opener = "'#pragma cll for'", "'for'"
            enters = "the sampling loop without its 'for'"
        self.findings.error(label, f"{what} inside {entered}: {source} jumps to it from outside, "
                                   f"so it enters {enters}; move the {opener} after the label or "
                                   f"before the jump",
                            [self.findings.note(inner, f"{entered} begins here")])

    def close_function(self, token: CodeToken | None) -> None:
        """The end of a function (`token`, its `}`) or of the file (None): report what is
        still open, goto labels that a goto enters past a begin, and gotos that leave
        experiments (those open at the goto but not at its label, all without one)."""
        for label, open_there in self.labels:
            entering = ((name, [p for p in open_there if p not in open_at_goto])
                        for _, name, open_at_goto in self.gotos if name.text == label.text)
            name, inside = next(((n, i) for n, i in entering if i), (None, []))
            if name is not None:
                self.entered(label, f"label {label.text!r}", f"the 'goto' at line {name.line}", inside)
        targets = {label.text: open_there for label, open_there in self.labels}
        for keyword, name, open_at_goto in self.gotos:
            open_there = targets.get(name.text, [])
            self.left(keyword, [p for p in open_at_goto if isinstance(p, Begin) and p not in open_there],
                      [p for p in open_at_goto if isinstance(p, Begin) and p in open_there])
        self.labels.clear()
        self.gotos.clear()
        where = "before the end of the function" if token else "before the end of the file"
        for entry in self.stack:
            what = (f"experiment {entry.pragma.name!r} is never ended {where}"
                    if isinstance(entry.pragma, Begin) else f"'#pragma cll for' has no 'end for' {where}")
            name = entry.pragma.name if isinstance(entry.pragma, Begin) else "for"
            self.findings.error(entry.pragma, what, self.typo_notes(name) + self.findings.undecided_notes(entry.pragma))
        self.stack.clear()

    def open(self, pragma: Begin | For, depth: int) -> None:
        """An experiment or sampling loop begins at brace depth `depth`."""
        self.stack.append(_Open(pragma, depth))

    def end(self, pragma: End) -> None:
        """An `end NAME`: it closes the innermost open experiment, which must be NAME."""
        names = [o.pragma.name for o in self.stack if isinstance(o.pragma, Begin)]
        if self.stack and isinstance(self.stack[-1].pragma, Begin) and names[-1] == pragma.name:
            self.stack.pop()
        elif pragma.name in names:
            inner = self.stack[-1].pragma
            label = f"experiment {inner.name!r}" if isinstance(inner, Begin) else "'#pragma cll for'"
            self.findings.error(pragma, f"'end {pragma.name}' while {label}, begun inside it, is still open",
                                [self.findings.note(inner, f"{label} begins here")]
                                + self.typo_notes(getattr(inner, "name", "for")))
            while not _begins(self.stack.pop().pragma, pragma.name):
                pass
        elif pragma.name not in self.rejected:
            self.findings.error(pragma, f"'end {pragma.name}' without a matching '#pragma cll "
                                        f"{pragma.name} ...' open in this function",
                                self.typo_notes(pragma.name) + self.findings.undecided_notes(pragma))

    def end_loop(self, pragma: EndFor, depth: int) -> For | None:
        """An `end for` at brace depth `depth`: the sampling loop it closes, None if it closes none."""
        if not any(isinstance(o.pragma, For) for o in self.stack):
            self.findings.error(pragma, "'end for' without a matching '#pragma cll for'")
            return None
        top = self.stack[-1]
        if isinstance(top.pragma, Begin):
            if top.pragma.name not in self.rejected:
                self.findings.error(pragma, f"'end for' while experiment {top.pragma.name!r} is still open",
                                    [self.findings.note(top.pragma, f"experiment {top.pragma.name!r} begins here")]
                                    + self.typo_notes(top.pragma.name)
                                    + self.findings.undecided_notes(top.pragma))
            while isinstance(self.stack[-1].pragma, Begin):   # taken as ended here: no cascade
                self.stack.pop()
            top = self.stack[-1]
        if top.depth != depth:
            self.findings.error(pragma, "'end for' is not in the same block as its 'for': the "
                                        "generated loop's braces would not match the program's",
                                [self.findings.note(top.pragma, "the 'for' is here")])
        else:
            return self.stack.pop().pragma
        return None


def _at(item: Pragma | CodeToken) -> tuple[int, int]:
    return item.line, item.column


def _begins(pragma: Begin | For, name: str) -> bool:
    return isinstance(pragma, Begin) and pragma.name == name
