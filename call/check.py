"""Check the `#pragma cll` lines of one C file in their C context and describe the program.

Finds every pragma (call.clex), parses it (call.pragmas), and checks what a C compiler
cannot: experiments and sampling loops balance within each function, one name keeps one
formula, a pragma stands where a statement may begin (never at file scope, never as the
body of an unbraced if/else/for/while/do/switch — except an experiment enclosing exactly that
one body statement, which the generated code wraps in braces), `return`/`goto` inside an open
experiment and a `break`/`continue` that leaves one, the `break`/`continue` statements that
leave a sampling loop's body for a loop or switch outside it (the generated code carries them
past the sampling loop, call.jumps finds them), and near-miss prefixes such as `#pragma ll`
that a compiler would silently ignore.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from call.clex import CLexError, CodeToken, Directive, lex
from call.diagnostics import CallError, Diagnostic, edit_distance
from call.jumps import jump_targets
from call.pragmas import Begin, End, EndFor, For, Parallel, Pragma, Report, parse_pragma

CONTROL = {"if", "for", "while", "switch"}
# control headers whose unbraced body may be one experiment (not `switch`: a jump to a case
# label inside the body would skip the begin)
WRAPPABLE = {"if", "for", "while", "else", "do"}
# a wrapped statement may not itself be a control statement
NESTED_CONTROL = {"if", "for", "while", "do", "switch", "else"}
# pragmas that apply to the statement after them (OpenMP, OpenACC, loop hints)
STATEMENT_PRAGMAS = {"omp", "acc", "GCC", "clang", "ivdep", "unroll", "simd", "loop"}
STANDALONE = {"barrier", "flush", "taskwait", "taskyield", "threadprivate", "declare", "requires",
              "wait", "update", "diagnostic", "push_options", "pop_options", "optimize", "visibility"}
PLACED = (Begin, End, For, EndFor, Report)  # pragmas that become statements


@dataclass
class Program:
    """A checked file: its pragmas in order, experiments by name (first begin), parallel mode."""
    file: str
    lines: list[str]
    sites: list[tuple[Directive, Pragma]] = field(default_factory=list)
    experiments: dict[str, Begin] = field(default_factory=dict)
    parallel: Parallel | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    # sites of the begins and ends of experiments that are the unbraced body of a control
    # header: the generated code opens a brace with such a begin and closes it after such an end
    wrapped: set[str] = field(default_factory=set)
    # `break`/`continue` tokens, by (line, column), that leave the body of a sampling loop for
    # a loop or switch outside it: the outermost such `For` they leave
    jumps: dict[tuple[int, int], tuple[str, For]] = field(default_factory=dict)
    # the `For` each `end for` closes, by the end for's site
    closes: dict[str, For] = field(default_factory=dict)

    def exits(self, loop: For) -> list[str]:
        """The jumps ('break', 'continue') that leave sampling loop `loop` for outside it."""
        return sorted({kind for kind, crossed in self.jumps.values() if crossed is loop})


@dataclass
class _Open:
    pragma: Begin | For
    depth: int


@dataclass(eq=False)
class _Wrap:
    """An experiment begun as the unbraced body of `header`: it must enclose one statement."""
    begin: Begin
    header: str             # 'else', 'do', 'if (...)', ...
    depth: int              # brace depth at the begin
    first: CodeToken | None = None  # the statement's first token
    done: bool = False      # the statement is complete; only its `end` may follow


def check_file(file: str, text: str) -> Program:
    """Check `text` (the contents of `file`); CallError listing every error found, else the
    Program with its warnings."""
    lines = text.splitlines()
    try:
        stream = lex(text)
    except CLexError as err:
        where = err.span
        raise CallError([Diagnostic("error", file, where.line, where.column, err.message)], lines) from None
    checker = _Checker(Program(file, lines), jump_targets([t for t in stream if isinstance(t, CodeToken)]))
    checker.run(stream)
    if checker.errors:
        found = sorted(checker.errors + checker.program.warnings, key=lambda d: (d.line, d.column))
        raise CallError(found, lines)
    return checker.program


class _Checker:
    def __init__(self, program: Program, targets: dict[CodeToken, CodeToken | None]):
        self.program = program
        self.targets = targets            # break/continue -> the loop or switch it leaves
        self.errors: list[Diagnostic] = []
        self.stack: list[_Open] = []
        self.near_misses: list[Directive] = []
        self.rejected: set[str] = set()   # names of begins that did not parse
        self.depth = 0
        self.parens: list[str] = []       # for each open '(', the word before it
        self.previous: CodeToken | None = None
        self.closed_control: str | None = None  # the keyword, if the previous ')' closed a control header
        self.wraps: list[_Wrap] = []      # experiments pending as unbraced bodies, innermost last
        self.statement_pragma: str | None = None  # e.g. 'omp' right after '#pragma omp ...'

    def diagnostic(self, severity, line, column, message, notes=()):
        return Diagnostic(severity, self.program.file, line, column, message, tuple(notes))

    def error(self, at: Pragma | CodeToken, message: str, notes=()):
        self.errors.append(self.diagnostic("error", at.line, at.column, message, notes))

    def note(self, at: Pragma, message: str) -> Diagnostic:
        return self.diagnostic("note", at.line, at.column, message)

    def run(self, stream):
        for index, item in enumerate(stream):
            if isinstance(item, CodeToken):
                self.code(item)
            elif item.namespace == "cll":
                following = next((t for t in stream[index + 1:] if isinstance(t, CodeToken)), None)
                self.pragma(item, following)
            elif item.namespace and _near_miss(item.namespace):
                self.near_miss(item)
            if isinstance(item, Directive) and item.namespace in STATEMENT_PRAGMAS \
                    and item.body.split()[:1] != [] and item.body.split()[0] not in STANDALONE:
                self.statement_pragma = item.namespace
            elif isinstance(item, CodeToken):
                self.statement_pragma = None
        self.close_function(None)

    # ------------------------------------------------------------ C code

    def code(self, token: CodeToken):
        text = token.text
        if text == "{":
            self.depth += 1
        elif text == "}":
            self.depth -= 1
            if self.depth == 0:
                self.close_function(token)
        elif text == "(":
            self.parens.append(self.previous.text if self.previous else "")
        elif text == ")" and self.parens:
            word = self.parens.pop()
            self.closed_control = word if word in CONTROL else None
        elif text in ("return", "goto") and token.kind == "IDENT":
            self.leaving(token, (0, 0))
        elif token in self.targets:
            self.jump(token, self.targets[token])
        self.previous = token
        for wrap in list(self.wraps):   # a failure drops a wrap and those inside it
            if wrap in self.wraps:
                self.wrapped_code(token, wrap)

    def wrapped_code(self, token: CodeToken, wrap: _Wrap):
        """Follow the one statement an unbraced-body experiment encloses: a `{...}` block or a
        simple statement up to its `;`; anything else there is an error."""
        name = wrap.begin.name
        if self.depth < wrap.depth:
            return self.wrap_failed(wrap, token, f"'#pragma cll end {name}' is missing before this "
                                    f"'}}': experiment {name!r} is the body of '{wrap.header}' "
                                    f"without braces, so one statement and then its 'end' follow it")
        if wrap.done:
            return self.wrap_failed(wrap, token, f"only one statement may stand between "
                                    f"'#pragma cll {name}' and '#pragma cll end {name}' here: the "
                                    f"experiment is the body of '{wrap.header}' without braces; "
                                    f"add braces to time more")
        if wrap.first is None:
            wrap.first = token
            if token.kind == "IDENT" and token.text in NESTED_CONTROL:
                return self.wrap_failed(wrap, token, f"experiment {name!r} is the body of "
                                        f"'{wrap.header}' without braces and encloses a nested "
                                        f"'{token.text}' statement, which it cannot wrap: add braces")
        closing = "}" if wrap.first.text == "{" else ";"
        wrap.done = token.text == closing and self.depth == wrap.depth and not self.parens

    def wrap_failed(self, wrap: _Wrap, at: Pragma | CodeToken, message: str):
        """Report a misused unbraced-body experiment once: forget it so its `end` and the end of
        the function do not report it again."""
        self.error(at, message, [self.note(wrap.begin, f"experiment {wrap.begin.name!r} begins "
                                                       f"here, after '{wrap.header}'")])
        del self.wraps[self.wraps.index(wrap):]
        self.stack = [o for o in self.stack if o.pragma is not wrap.begin]
        self.rejected.add(wrap.begin.name)

    def jump(self, token: CodeToken, target: CodeToken | None):
        """A `break`/`continue`: one that leaves sampling loops for the loop or switch
        `target` before them is recorded for the translation (None: there is none, which the
        plain program's compiler rejects as well); one that leaves experiments is warned."""
        after = (target.line, target.column) if target else (0, 0)
        crossed = [o.pragma for o in self.stack if isinstance(o.pragma, For) and _at(o.pragma) > after]
        if crossed and target is None:
            where = "loop or switch" if token.text == "break" else "loop"
            self.error(token, f"'{token.text}' inside '#pragma cll for' but in no {where} of the "
                              f"program: it would leave the generated sampling loop, and the plain "
                              f"program does not compile", [self.note(crossed[-1], "the 'for' is here")])
        elif crossed:
            self.program.jumps[_at(token)] = (token.text, crossed[0])
        self.leaving(token, after)

    def leaving(self, token: CodeToken, after: tuple[int, int]):
        """Warn when `token` (return, goto, break, continue) leaves experiments begun after
        position `after`: they are never ended on that path."""
        open_experiments = [o.pragma for o in self.stack
                            if isinstance(o.pragma, Begin) and _at(o.pragma) > after]
        if open_experiments:
            inner = open_experiments[-1]
            self.program.warnings.append(self.diagnostic(
                "warning", token.line, token.column,
                f"'{token.text}' inside experiment {inner.name!r}: on this path the experiment "
                f"is never ended", [self.note(inner, f"experiment {inner.name!r} begins here")]))

    def close_function(self, token: CodeToken | None):
        where = "before the end of the function" if token else "before the end of the file"
        for entry in self.stack:
            what = (f"experiment {entry.pragma.name!r} is never ended {where}"
                    if isinstance(entry.pragma, Begin) else f"'#pragma cll for' has no 'end for' {where}")
            name = entry.pragma.name if isinstance(entry.pragma, Begin) else "for"
            self.error(entry.pragma, what, self.typo_notes(name))
        self.stack.clear()
        self.wraps.clear()

    # ------------------------------------------------------------ pragmas

    def near_miss(self, directive: Directive):
        self.near_misses.append(directive)
        self.program.warnings.append(self.diagnostic(
            "warning", directive.line, directive.namespace_column,
            f"'#pragma {directive.namespace}' is ignored: did you mean '#pragma cll'?"))

    def typo_notes(self, name: str) -> list[Diagnostic]:
        """Notes pointing at near-miss pragma lines that mention `name`: likely typos."""
        return [self.diagnostic("note", d.line, d.namespace_column,
                                f"'#pragma {d.namespace}{d.body.rstrip()}' looks like a typo for "
                                f"'#pragma cll{d.body.rstrip()}'")
                for d in self.near_misses if name in d.body.split()]

    def pragma(self, directive: Directive, following: CodeToken | None):
        try:
            pragma = parse_pragma(directive, self.program.file)
        except CallError as err:
            self.errors.extend(err.diagnostics)
            self.rejected.update(directive.body.split()[:2])  # no cascade at its `end`
            return
        if not isinstance(pragma, PLACED) or self.placement_ok(pragma, following):
            self.program.sites.append((directive, pragma))
        handlers = {Begin: self.begin, End: self.end, For: self.sampling_loop,
                    EndFor: self.end_loop, Parallel: self.parallel, Report: self.report}
        handlers[type(pragma)](pragma)

    def placement_ok(self, pragma: Pragma, following: CodeToken | None) -> bool:
        previous = self.previous.text if self.previous else None
        what = _describe(pragma)
        header = previous if previous in ("else", "do") else \
            f"{self.closed_control} (...)" if previous == ")" and self.closed_control else None
        wrap = self.wraps[-1] if self.wraps else None
        if wrap is not None and (wrap.first is None or wrap.done or self.depth == wrap.depth
                                 or isinstance(pragma, End) and self.stack and self.stack[-1].pragma is wrap.begin):
            return self.wrap_pragma(wrap, pragma)
        if self.depth <= 0:
            self.error(pragma, f"{what} at file scope: it becomes a statement, so it must stand "
                               f"inside a function body")
        elif self.parens:
            self.error(pragma, f"{what} inside parentheses: it must stand where a statement can begin")
        elif header and isinstance(pragma, Begin) and header.split()[0] in WRAPPABLE:
            self.wraps.append(_Wrap(pragma, header, self.depth))
            return True
        elif header:
            self.error(pragma, f"{what} directly after '{header}' without braces: the inserted "
                               f"code would become the body and change the program; add braces "
                               f"(only an experiment that encloses exactly the one body "
                               f"statement of an if/else/for/while/do may stand there)")
        elif self.statement_pragma:
            self.error(pragma, f"{what} directly after a '#pragma {self.statement_pragma}' line, "
                               f"which applies to the next statement: the inserted code would "
                               f"become that statement; move the '#pragma cll' line before it")
        elif previous not in (";", "{", "}", ":"):
            self.error(pragma, f"{what} inside a statement (after {previous!r}): it must stand "
                               f"where a statement can begin")
        elif following is not None and following.text == "else":
            self.error(pragma, f"{what} between an if's statement and its 'else': the inserted "
                               f"code would separate them; add braces")
        else:
            return True
        return False

    def wrap_pragma(self, wrap: _Wrap, pragma: Pragma) -> bool:
        """A pragma where an unbraced-body experiment allows only its statement, then its end."""
        name = wrap.begin.name
        if isinstance(pragma, End) and pragma.name == name and wrap.done:
            self.wraps.pop()
            self.program.wrapped.update((wrap.begin.site, pragma.site))
            return True
        if wrap.first is None:
            problem = f"before the statement of experiment {name!r}"
        elif not wrap.done:
            problem = f"inside the statement that experiment {name!r} encloses"
        else:
            problem = f"between the statement of experiment {name!r} and its 'end {name}'"
        self.wrap_failed(wrap, pragma, f"{_describe(pragma)} {problem}: experiment {name!r} is "
                                       f"the body of '{wrap.header}' without braces, so it must "
                                       f"enclose exactly one statement; add braces")
        return False

    def begin(self, pragma: Begin):
        first = self.program.experiments.setdefault(pragma.name, pragma)
        if str(first.formula) != str(pragma.formula):
            self.error(pragma, f"experiment {pragma.name!r} has two different formulas: "
                               f"'{pragma.formula}' here",
                       [self.note(first, f"and '{first.formula}' here")])
        self.stack.append(_Open(pragma, self.depth))

    def end(self, pragma: End):
        names = [o.pragma.name for o in self.stack if isinstance(o.pragma, Begin)]
        if self.stack and isinstance(self.stack[-1].pragma, Begin) and names[-1] == pragma.name:
            self.stack.pop()
        elif pragma.name in names:
            inner = self.stack[-1].pragma
            label = f"experiment {inner.name!r}" if isinstance(inner, Begin) else "'#pragma cll for'"
            self.error(pragma, f"'end {pragma.name}' while {label}, begun inside it, is still open",
                       [self.note(inner, f"{label} begins here")] + self.typo_notes(getattr(inner, "name", "for")))
            while not _begins(self.stack.pop().pragma, pragma.name):
                pass
        elif pragma.name not in self.rejected:
            self.error(pragma, f"'end {pragma.name}' without a matching '#pragma cll {pragma.name} ...' "
                               f"open in this function", self.typo_notes(pragma.name))

    def sampling_loop(self, pragma: For):
        self.stack.append(_Open(pragma, self.depth))

    def end_loop(self, pragma: EndFor):
        top = self.stack[-1] if self.stack else None
        if top is None or not any(isinstance(o.pragma, For) for o in self.stack):
            self.error(pragma, "'end for' without a matching '#pragma cll for'")
        elif isinstance(top.pragma, Begin):
            self.error(pragma, f"'end for' while experiment {top.pragma.name!r} is still open",
                       [self.note(top.pragma, f"experiment {top.pragma.name!r} begins here")]
                       + self.typo_notes(top.pragma.name))
        elif top.depth != self.depth:
            self.error(pragma, "'end for' is not in the same block as its 'for': the generated "
                               "loop's braces would not match the program's",
                       [self.note(top.pragma, "the 'for' is here")])
        else:
            self.program.closes[pragma.site] = self.stack.pop().pragma

    def parallel(self, pragma: Parallel):
        known = self.program.parallel
        if known is not None and (known.model, known.procs) != (pragma.model, pragma.procs):
            self.error(pragma, "a second, different '#pragma cll parallel' line",
                       [self.note(known, "the first is here")])
        self.program.parallel = known or pragma

    def report(self, pragma: Report):
        for name in pragma.names or ():
            if name not in self.program.experiments:
                self.program.warnings.append(self.diagnostic(
                    "warning", pragma.line, pragma.column,
                    f"report names {name!r}, which no '#pragma cll' before it in this file begins"))


def _at(item: Pragma | CodeToken) -> tuple[int, int]:
    return item.line, item.column


def _begins(pragma: Begin | For, name: str) -> bool:
    return isinstance(pragma, Begin) and pragma.name == name


def _near_miss(namespace: str) -> bool:
    """`ll`, `cl`, `call`, `clll`, `CLL`...: probably meant `cll` (a compiler ignores them)."""
    return namespace != "cll" and edit_distance(namespace.lower(), "cll") <= 1


def _describe(pragma: Pragma) -> str:
    return {Begin: "'#pragma cll' experiment begin", End: "'#pragma cll end'",
            For: "'#pragma cll for'", EndFor: "'#pragma cll end for'",
            Report: "'#pragma cll report'"}[type(pragma)]
