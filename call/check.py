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

from dataclasses import dataclass

from call.balance import Balance
from call.ccontext import CContext
from call.clex import CLexError, CodeToken, Directive, lex
from call.diagnostics import CallError, Diagnostic, edit_distance
from call.jumps import jump_targets
from call.pragmas import Begin, End, EndFor, For, Parallel, Pragma, Report, parse_pragma
from call.program import Findings, Program

# control headers whose unbraced body may be one experiment (not `switch`: a jump to a case
# label inside the body would skip the begin)
WRAPPABLE = {"if", "for", "while", "else", "do"}
# a wrapped statement may not itself be a control statement
NESTED_CONTROL = {"if", "for", "while", "do", "switch", "else"}
PLACED = (Begin, End, For, EndFor, Report)  # pragmas that become statements


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
        raise CallError([Diagnostic("error", file, err.line, err.column, err.message)], lines) from None
    findings = Findings(Program(file, lines))
    _Checker(findings, jump_targets([t for t in stream if isinstance(t, CodeToken)])).run(stream)
    if findings.errors:
        found = sorted(findings.errors + findings.program.warnings, key=lambda d: (d.line, d.column))
        raise CallError(found, lines)
    return findings.program


class _Checker:
    """Walks a file's tokens and directives: follows the C context (call.ccontext) and the
    balance of experiments and sampling loops (call.balance), checks where each pragma
    stands, follows experiments that are an unbraced body, and describes the program."""

    def __init__(self, findings: Findings, targets: dict[CodeToken, CodeToken | None]):
        self.findings = findings
        self.program = findings.program
        self.targets = targets            # break/continue -> the loop or switch it leaves
        self.context = CContext()
        self.balance = Balance(findings)
        self.wraps: list[_Wrap] = []      # experiments pending as unbraced bodies, innermost last

    def run(self, stream):
        """Check every item of the lexed file, then what is still open at its end."""
        for index, item in enumerate(stream):
            if isinstance(item, CodeToken):
                self.code(item)
                continue
            if item.namespace == "cll":
                following = next((t for t in stream[index + 1:] if isinstance(t, CodeToken)), None)
                self.pragma(item, following)
            elif item.namespace and _near_miss(item.namespace):
                self.balance.near_miss(item)
            self.context.directive(item)
        self.close_function(None)

    # ------------------------------------------------------------ C code

    def code(self, token: CodeToken):
        """One token of C code: the end of a function, a jump that leaves experiments or
        sampling loops, the statement of an unbraced-body experiment."""
        self.context.token(token)
        if token.text == "}" and self.context.depth == 0:
            self.close_function(token)
        elif token.text in ("return", "goto") and token.kind == "IDENT":
            self.balance.leaving(token, (0, 0))
        elif token in self.targets:
            self.balance.jump(token, self.targets[token])
        for wrap in list(self.wraps):   # a failure drops a wrap and those inside it
            if wrap in self.wraps:
                self.wrapped_code(token, wrap)

    def wrapped_code(self, token: CodeToken, wrap: _Wrap):
        """Follow the one statement an unbraced-body experiment encloses: a `{...}` block or a
        simple statement up to its `;`; anything else there is an error."""
        name = wrap.begin.name
        depth = self.context.depth
        if depth < wrap.depth:
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
        wrap.done = token.text == closing and depth == wrap.depth and not self.context.parens

    def wrap_failed(self, wrap: _Wrap, at: Pragma | CodeToken, message: str):
        """Report a misused unbraced-body experiment once: forget it so its `end` and the end of
        the function do not report it again."""
        self.findings.error(at, message, [self.findings.note(wrap.begin, f"experiment {wrap.begin.name!r} "
                                                                         f"begins here, after '{wrap.header}'")])
        del self.wraps[self.wraps.index(wrap):]
        self.balance.forget(wrap.begin)

    def close_function(self, token: CodeToken | None):
        """The end of a function or of the file: nothing stays open across it."""
        self.balance.close_function(token)
        self.wraps.clear()

    # ------------------------------------------------------------ pragmas

    def pragma(self, directive: Directive, following: CodeToken | None):
        """A `#pragma cll` line, `following` the token after it: parse, place, handle."""
        try:
            pragma = parse_pragma(directive, self.program.file)
        except CallError as err:
            self.findings.errors.extend(err.diagnostics)
            self.balance.reject(directive.body.split()[:2])  # no cascade at its `end`
            return
        if not isinstance(pragma, PLACED) or self.placement_ok(pragma, following):
            self.program.sites.append((directive, pragma))
        handlers = {Begin: self.begin, End: self.balance.end, For: self.sampling_loop,
                    EndFor: self.end_loop, Parallel: self.parallel, Report: self.report}
        handlers[type(pragma)](pragma)

    def placement_ok(self, pragma: Pragma, following: CodeToken | None) -> bool:
        """Whether a pragma that becomes a statement stands where a statement may begin
        (an error says why not)."""
        context = self.context
        previous = context.previous.text if context.previous else None
        what = _describe(pragma)
        header = context.header()
        wrap = self.wraps[-1] if self.wraps else None
        if wrap is not None and (wrap.first is None or wrap.done or context.depth == wrap.depth
                                 or isinstance(pragma, End) and self.balance.innermost() is wrap.begin):
            return self.wrap_pragma(wrap, pragma)
        if context.depth <= 0:
            self.findings.error(pragma, f"{what} at file scope: it becomes a statement, so it must "
                                        f"stand inside a function body")
        elif context.parens:
            self.findings.error(pragma, f"{what} inside parentheses: it must stand where a statement "
                                        f"can begin")
        elif header and isinstance(pragma, Begin) and header.split()[0] in WRAPPABLE:
            self.wraps.append(_Wrap(pragma, header, context.depth))
            return True
        elif header:
            self.findings.error(pragma, f"{what} directly after '{header}' without braces: the "
                                        f"inserted code would become the body and change the "
                                        f"program; add braces (only an experiment that encloses "
                                        f"exactly the one body statement of an if/else/for/while/do "
                                        f"may stand there)")
        elif context.statement_pragma:
            self.findings.error(pragma, f"{what} directly after a '#pragma {context.statement_pragma}' "
                                        f"line, which applies to the next statement: the inserted "
                                        f"code would become that statement; move the '#pragma cll' "
                                        f"line before it")
        elif previous not in (";", "{", "}", ":"):
            self.findings.error(pragma, f"{what} inside a statement (after {previous!r}): it must "
                                        f"stand where a statement can begin")
        elif following is not None and following.text == "else":
            self.findings.error(pragma, f"{what} between an if's statement and its 'else': the "
                                        f"inserted code would separate them; add braces")
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
        """An experiment begins: one name keeps one formula."""
        first = self.program.experiments.setdefault(pragma.name, pragma)
        if str(first.formula) != str(pragma.formula):
            self.findings.error(pragma, f"experiment {pragma.name!r} has two different formulas: "
                                        f"'{pragma.formula}' here",
                                [self.findings.note(first, f"and '{first.formula}' here")])
        self.balance.open(pragma, self.context.depth)

    def sampling_loop(self, pragma: For):
        """A sampling loop begins."""
        self.balance.open(pragma, self.context.depth)

    def end_loop(self, pragma: EndFor):
        """A sampling loop ends: the generated code needs to know which."""
        loop = self.balance.end_loop(pragma, self.context.depth)
        if loop is not None:
            self.program.closes[pragma.site] = loop

    def parallel(self, pragma: Parallel):
        """The parallel mode: one per file."""
        known = self.program.parallel
        if known is not None and (known.model, known.procs) != (pragma.model, pragma.procs):
            self.findings.error(pragma, "a second, different '#pragma cll parallel' line",
                                [self.findings.note(known, "the first is here")])
        self.program.parallel = known or pragma

    def report(self, pragma: Report):
        """A report naming experiments: warn about those not begun before it."""
        for name in pragma.names or ():
            if name not in self.program.experiments:
                self.findings.warn(pragma.line, pragma.column,
                                   f"report names {name!r}, which no '#pragma cll' before it in "
                                   f"this file begins")


def _near_miss(namespace: str) -> bool:
    """`ll`, `cl`, `call`, `clll`, `CLL`...: probably meant `cll` (a compiler ignores them)."""
    return namespace != "cll" and edit_distance(namespace.lower(), "cll") <= 1


def _describe(pragma: Pragma) -> str:
    return {Begin: "'#pragma cll' experiment begin", End: "'#pragma cll end'",
            For: "'#pragma cll for'", EndFor: "'#pragma cll end for'",
            Report: "'#pragma cll report'"}[type(pragma)]
