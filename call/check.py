"""Check the `#pragma cll` lines of one C file in their C context and describe the program.

Finds every pragma (call.clex), parses it (call.pragmas), and checks what a C compiler
cannot: experiments and sampling loops balance within each function, one name keeps one
formula, a pragma stands where a statement may begin (never at file scope, never as the
body of an unbraced if/else/for/while/do/switch — except an experiment enclosing exactly that
one body statement, which the generated code wraps in braces), `return`/`goto` inside an open
experiment and a `break`/`continue` that leaves one, the `break`/`continue` statements that
leave a sampling loop's body for a loop or switch outside it (the generated code carries them
past the sampling loop, call.jumps finds them), and near-miss prefixes such as `#pragma ll`
that a compiler would silently ignore; call.order checks the measurement order (repetition
loops inside size sweeps, `shuffle` nests). It warns about what it cannot carry out: a
`longjmp` inside an experiment, an experiment in a function the file installs as a signal
handler, and a macro of the file that expands to a `break`/`continue` leaving a sampling
loop's body.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from call.balance import Balance
from call.ccontext import COMPOUND_LITERAL, INITIALIZER, CContext
from call.clex import CLexError, CodeToken, Directive, lex
from call.conditions import kept
from call.diagnostics import CallError, Diagnostic, edit_distance
from call.jumps import jump_targets, jumps_in_macro, macro_uses
from call.omp import Partial, partial_constructs
from call.order import Order
from call.pragmas import MODELS, Begin, End, EndFor, For, Parallel, Pragma, Report, parse_pragma
from call.program import Findings, Program
from cll_grammar.span import nearest
from call.wrap import WRAPPABLE, Wraps

PLACED = (Begin, End, For, EndFor, Report)  # pragmas that become statements
# the braces of an initializer list, by kind (call.ccontext), as a message names them
INITIALIZER_BRACES = {INITIALIZER: "an initializer (`= { ... }`)", COMPOUND_LITERAL: "a compound literal (`(type){ ... }`)"}


def check_file(file: str, text: str, macros: dict[str, str | None] | None = None) -> Program:
    """Check `text` (the contents of `file`), without the arms of `#if` the compiler drops
    (call.conditions; `macros`: those the compiler flags define, macros_of); CallError
    listing every error found, else the Program with its warnings."""
    lines = text.splitlines()
    try:
        stream = lex(text)
    except CLexError as err:
        where = err.span
        raise CallError([Diagnostic("error", file, where.line, where.column, err.message)], lines) from None
    stream, undecided = kept(stream, lines, macros or {})
    findings = Findings(Program(file, lines), undecided)
    code = [t for t in stream if isinstance(t, CodeToken)]
    definitions = _definitions(stream, lines)
    jumping = frozenset(m.name for m in definitions.values() if m.jumps)
    _Checker(findings, jump_targets(code), partial_constructs(stream), definitions,
             macro_uses(code, jumping)).run(stream, code)
    if findings.errors:
        found = sorted(findings.errors + findings.program.warnings, key=lambda d: (d.line, d.column))
        raise CallError(found, lines)
    return findings.program


def check_together(programs: list[Program]) -> None:
    """Files built into one program (`call check a.c b.c`, `call cc a.c b.c`): one experiment
    name keeps one formula and one working set across them too, which the runtime would refuse
    only when the program starts; CallError with an error at each later begin, a note at the first."""
    first: dict[str, Begin] = {}
    errors = []
    for program in programs:
        for name, begin in program.experiments.items():
            known = first.setdefault(name, begin)
            clash = _clash(known, begin)
            if clash:
                what, here, there = clash
                errors.append(Diagnostic("error", begin.file, begin.line, begin.column,
                                         f"experiment {name!r} has two different {what}: {here} here",
                                         (Diagnostic("note", known.file, known.line, known.column,
                                                     f"and {there} here, in another file of the same program"),)))
    if errors:
        raise CallError(errors, {program.file: program.lines for program in programs})


def settle_reports(programs: list[Program]) -> None:
    """Files built into one program: a report's name that another of them begins is no
    cause for a warning (`call check main.c util.c`, where util.c begins what main.c
    reports), so that warning is dropped from its program."""
    for program in programs:
        begun = {name for other in programs if other is not program for name in other.experiments}
        settled = [warning for name, warning in program.unbegun if name in begun]
        program.warnings = [w for w in program.warnings if not any(w is s for s in settled)]
        program.unbegun = [(name, w) for name, w in program.unbegun if name not in begun]


def _clash(first: Begin, later: Begin) -> tuple[str, str, str] | None:
    """What two begins of one experiment disagree on, and how each states it, for the messages:
    ("formulas", "'LATER'", "'FIRST'") or the same of their working sets (`bytes` clauses);
    None when they agree."""
    if str(first.formula) != str(later.formula):
        return "formulas", f"'{later.formula}'", f"'{first.formula}'"
    if str(first.working_set) != str(later.working_set):
        return "working sets", _clause(later), _clause(first)
    return None


class _Checker:
    """Walks a file's tokens and directives: follows the C context (call.ccontext), the
    balance of experiments and sampling loops (call.balance) and the experiments that are
    an unbraced body (call.wrap), checks where each pragma stands, and describes the program."""

    def __init__(self, findings: Findings, targets: dict[CodeToken, CodeToken | None],
                 partials: list[Partial], definitions: dict[Directive, "_Macro"],
                 uses: dict[CodeToken, tuple[CodeToken | None, CodeToken | None]]):
        self.findings = findings
        self.program = findings.program
        self.targets = targets            # break/continue -> the loop or switch it leaves, labels
        self.partials = partials          # OpenMP constructs' statements (call.omp)
        self.definitions = definitions    # the file's #define/#undef lines (_definitions)
        self.macros: dict[str, _Macro] = {}   # the macros defined at this point of the file
        self.uses = uses                  # uses of macros holding a jump -> (loop, loop or switch) there
        self.function: str | None = None  # the name of the function whose body this is
        self.declared: str | None = None  # the name before the last outermost '(' at file scope
        self.begun_in: list[tuple[Begin, str]] = []   # each experiment begin and its function
        self.context = CContext()
        self.balance = Balance(findings)
        self.wraps = Wraps(findings, self.balance, self.context)
        self.order = Order(findings)
        self.rejected_models: list[str] = []   # the model word of each `parallel` line that did not parse

    def run(self, stream, code: list[CodeToken]):
        """Check every item of the lexed file (`code`: its code tokens alone), then what is
        still open at its end."""
        for index, item in enumerate(stream):
            if isinstance(item, CodeToken):
                self.code(item)
                continue
            if item.namespace == "cll" or (_near_miss(item.namespace) and self.balance.taken_typo(item)):
                following = next((t for t in stream[index + 1:] if isinstance(t, CodeToken)), None)
                self.pragma(item, following)
            else:
                self.order.code()
                if _near_miss(item.namespace):
                    self.balance.near_miss(item)
                for string in item.operators:
                    self.pragma_operator(string)
                if item in self.definitions:
                    macro = self.definitions[item]
                    self.macros[macro.name] = macro
            self.context.directive(item)
        self.close_function(None)
        self.sync_needs_machine()
        self.sync_reaches_team(code)
        self.mpi_include_needs_parallel(stream)
        self.reports_name_experiments()
        self.experiments_in_signal_handlers(code)

    def experiments_in_signal_handlers(self, code: list[CodeToken]):
        """A warning at each experiment begun in a function this file installs as a signal
        handler (`signal(SIG, f)`, `sa.sa_handler = f`): the runtime is not async-signal-safe,
        and the handler's experiment would open and end inside whatever experiment the signal
        interrupts."""
        handlers = _signal_handlers(code)
        for begin, function in self.begun_in:
            if function in handlers:
                installed = handlers[function]
                self.findings.warn(begin.line, begin.column,
                                   f"experiment {begin.name!r} in {function!r}, which this file "
                                   f"installs as a signal handler (line {installed.line}): the "
                                   f"runtime is not async-signal-safe, and an experiment in a "
                                   f"handler interleaves with those of the code the signal "
                                   f"interrupts (the run stops at an 'end' with status 70, or its "
                                   f"records are wrong); time that work outside the handler",
                                   [self.findings.note(installed, f"{function!r} is installed as a "
                                                                  f"signal handler here")])

    def mpi_include_needs_parallel(self, stream):
        """A warning at `#include "pub.h"` (or <mpi.h>) in a file without a `parallel PUB` (or
        MPI) pragma: call then builds it with cc, which does not find mpi.h (an error from gcc
        inside pub.h that named no pragma), and traces it as a sequential program. None when
        such a pragma is there but did not parse (`procs = 0:4:2`, `parallel pub`): its error
        says what to fix, and the file does have it."""
        parallel = self.program.parallel
        if parallel is not None and parallel.model in ("MPI", "PUB"):
            return
        wanted = {"pub.h": ("PUB", "PUB NAME"), "mpi.h": ("MPI", "MPI")}
        for item in stream:
            if not isinstance(item, Directive) or item.namespace is not None:
                continue
            found = INCLUDE.match(self.program.lines[item.line - 1]) if item.line <= len(self.program.lines) else None
            if not found or found[1] not in wanted or self.rejected_as(wanted[found[1]][0]):
                continue
            self.findings.warn(item.line, item.column,
                               f"'{found[1]}' is included, but this file has no '#pragma cll parallel "
                               f"{wanted[found[1]][1]}': call builds it with cc, not mpicc, and traces it as a "
                               f"sequential program, unless another file of the program has that pragma")
            return

    def rejected_as(self, model: str) -> bool:
        """Whether a `parallel` line of this file that did not parse may be meant as `parallel
        MODEL`: its model word is MODEL, or none that call knows (`pub`, `BSP`, none at all)."""
        return any(word == model or word not in MODELS for word in self.rejected_models)

    def sync_needs_machine(self):
        """A `sync` experiment of a `parallel PUB` program synchronises the BSP machine the
        pragma names: without a NAME, each such begin is an error."""
        parallel = self.program.parallel
        if parallel is None or parallel.model != "PUB" or parallel.obj:
            return
        for _, pragma in self.program.sites:
            if isinstance(pragma, Begin) and pragma.sync:
                self.findings.error(pragma, f"'sync' experiment {pragma.name!r} in a PUB program "
                                            f"synchronises the BSP machine, but "
                                            f"'#pragma cll parallel PUB' names none: write "
                                            f"'#pragma cll parallel PUB NAME', NAME a t_bsp or "
                                            f"t_bsp * variable in scope here",
                                    [self.findings.note(parallel, "the parallel line is here")])

    def sync_reaches_team(self, code: list[CodeToken]):
        """A `sync` experiment of a `parallel OpenMP` program is a barrier of the team: inside
        `#pragma omp single` (critical, the body of `omp for`...) not every thread reaches it
        together and the run would wait forever, so each such begin is an error; so is a call,
        inside one, of a function of this file that begins a sync experiment (by its name)."""
        parallel = self.program.parallel
        if parallel is None or parallel.model != "OpenMP":
            return
        for _, pragma in self.program.sites:
            construct = self.partial_around(pragma.line, pragma.column)
            if isinstance(pragma, Begin) and pragma.sync and construct:
                self.findings.error(pragma, f"a sync experiment synchronises every thread of the "
                                            f"team; inside '#pragma {construct.name}' (line "
                                            f"{construct.line}) {construct.reason}, so the run "
                                            f"would wait forever: move {pragma.name!r} outside it "
                                            f"or drop 'sync'")
        syncing = {function: begin for begin, function in reversed(self.begun_in) if begin.sync}
        for at, token in enumerate(code[:-1]):
            begin = syncing.get(token.text) if token.kind == "IDENT" and code[at + 1].text == "(" else None
            construct = self.partial_around(token.line, token.column) if begin else None
            if construct:
                self.findings.error(token, f"{token.text!r} begins the sync experiment {begin.name!r}, "
                                           f"which synchronises every thread of the team; this call is "
                                           f"inside '#pragma {construct.name}' (line {construct.line}), "
                                           f"where {construct.reason}, so the run would wait forever: "
                                           f"call it outside that construct or drop 'sync'",
                                    [self.findings.note(begin, f"sync experiment {begin.name!r} "
                                                               f"begins here")])

    def partial_around(self, line: int, column: int) -> Partial | None:
        """The innermost OpenMP construct around (line, column) if the team does not run its
        statement together (call.omp); None outside one or inside a `parallel` region in it."""
        inside = [p for p in self.partials if p.holds(line, column)]
        return inside[-1] if inside and inside[-1].reason else None

    # ------------------------------------------------------------ C code

    def code(self, token: CodeToken):
        """One token of C code: the end of a function, a jump that leaves experiments or
        sampling loops, the statement of an unbraced-body experiment."""
        previous = self.context.previous
        self.context.token(token)
        self.order.code()
        if token.kind == "STRING" and previous is not None and previous.text == "(" \
                and self.context.parens[-1:] == ["_Pragma"]:
            self.pragma_operator(token)
        self.follow_function(token, previous)
        if token.kind == "IDENT" or token.text == "(":
            self.macro_jump(token, previous)
        if token.text == "(" and previous is not None and previous.kind == "IDENT" \
                and previous.text in LONG_JUMPS:
            self.balance.long_jump(previous)
        if token.text == "(" and previous is not None and previous.kind == "IDENT" \
                and previous.text in SET_JUMPS:
            self.balance.set_jump()
        if token.text == "}" and self.context.depth == 0:
            self.close_function(token)
        elif token.text == "return" and token.kind == "IDENT":
            self.balance.leaving(token, (0, 0))
        elif previous is not None and previous.text == "goto" and previous.kind == "IDENT":
            self.balance.goto(previous, token)   # `goto *p`: no label, so it leaves all
        elif token in self.targets and token.text in ("break", "continue"):
            self.balance.jump(token, self.targets[token])
        elif token in self.targets:
            self.balance.label(token, self.targets[token])
        self.wraps.code(token)

    def follow_function(self, token: CodeToken, previous: CodeToken | None):
        """The name of the function whose body the code is in: the identifier before the last
        outermost `(` at file scope, when a block's `{` follows (`void on_alarm(int s) {`)."""
        if token.text == "(" and self.context.depth == 0 and len(self.context.parens) == 1 \
                and previous is not None and previous.kind == "IDENT":
            self.declared = previous.text
        elif token.text == "{" and self.context.depth == 1 and self.context.braces == [""]:
            self.function = self.declared

    def macro_jump(self, token: CodeToken, previous: CodeToken | None):
        """A macro of this file whose replacement holds a `break` or `continue` of its own
        (`#define STOP_IF(c) if (c) break`), used where that jump would leave a sampling
        loop's body: call does not see it, so it leaves only the sampling loop, a warning
        (call.balance). Object-like at its name, function-like at its `(`."""
        use = previous if token.text == "(" else token
        macro = self.macros.get(use.text) if use is not None and use in self.uses else None
        if macro is None or macro.function_like != (use is previous):
            return
        loop, breakable = self.uses[use]
        for kind in macro.jumps:
            definition = self.findings.diagnostic("note", macro.line, macro.column,
                                                  f"macro {macro.name!r} is defined here")
            if self.balance.macro_jump(use, kind, breakable if kind == "break" else loop, definition):
                return

    def pragma_operator(self, token: CodeToken):
        """`_Pragma("cll ...")` (in a macro, say): call reads only `#pragma cll` lines, so it
        would be ignored without a word; a warning says so (a near miss `ll` too)."""
        words = token.text.partition('"')[2].rstrip('"').split()
        if words and (words[0] == "cll" or _near_miss(words[0])):
            self.findings.warn(token.line, token.column,
                               f"_Pragma(\"{words[0]} ...\") is not read by call (nor is a pragma a "
                               f"macro expands to): write '#pragma cll {' '.join(words[1:])}' on a "
                               f"line of its own")

    def close_function(self, token: CodeToken | None):
        """The end of a function or of the file: nothing stays open across it."""
        self.function = self.declared = None
        self.balance.close_function(token)
        self.wraps.clear()
        self.order.clear()

    # ------------------------------------------------------------ pragmas

    def pragma(self, directive: Directive, following: CodeToken | None):
        """A `#pragma cll` line, `following` the token after it: parse, place, handle."""
        try:
            pragma = parse_pragma(directive, self.program.file)
        except CallError as err:
            self.findings.errors.extend(err.diagnostics)
            words = directive.body.split()[:2]
            self.balance.reject(words)  # no cascade at its `end`
            self.order.code()
            if words[:1] == ["parallel"]:
                self.rejected_models.append(words[1] if len(words) > 1 else "")
            place = dict(file=self.program.file, line=directive.line, column=directive.column)
            if _malformed_for(words):               # its loop opens all the same
                self.balance.open(For(**place, header=""), self.context.depth)
            elif len(words) == 2 and nearest(words[0], ("end",)):   # `ned A`: taken as `end A`
                if words[1] == "for":
                    self.end_loop(EndFor(**place))
                else:
                    self.balance.end(End(**place, name=words[1]))
            return
        if not isinstance(pragma, (Begin, For, EndFor)):
            self.order.code()
        if not isinstance(pragma, PLACED) or self.placement_ok(pragma, following):
            self.program.sites.append((directive, pragma))
        elif self.context.depth <= 0 or self.context.aggregate or self.context.initializer:
            # outside any function nothing opens or ends: its `end` is no second error
            if isinstance(pragma, (Begin, End)):
                self.balance.reject([pragma.name])
            return
        handlers = {Begin: self.begin, End: self.balance.end, For: self.sampling_loop,
                    EndFor: self.end_loop, Parallel: self.parallel,
                    Report: lambda _: None}    # its names: reports_name_experiments, at the file's end
        handlers[type(pragma)](pragma)

    def placement_ok(self, pragma: Pragma, following: CodeToken | None) -> bool:
        """Whether a pragma that becomes a statement stands where a statement may begin
        (an error says why not)."""
        context = self.context
        previous = context.previous.text if context.previous else None
        what = _describe(pragma)
        header = context.header()
        if self.wraps.governs(pragma):
            return self.wraps.wrapped(pragma, what)
        if context.depth <= 0:
            self.findings.error(pragma, f"{what} at file scope: it becomes a statement, so it must "
                                        f"stand inside a function body")
        elif context.aggregate:
            article = "an" if context.aggregate == "enum" else "a"
            self.findings.error(pragma, f"{what} among the members of {article} {context.aggregate} definition: "
                                        f"it becomes a statement, so it must stand inside a function "
                                        f"body, where a statement can begin")
        elif context.initializer:
            self.findings.error(pragma, f"{what} inside the braces of {INITIALIZER_BRACES[context.initializer]}: "
                                        f"it becomes a statement, so it must stand where a statement can begin")
        elif context.parens:
            self.findings.error(pragma, f"{what} inside parentheses: it must stand where a statement "
                                        f"can begin")
        elif header and isinstance(pragma, Begin) and header.split()[0] in WRAPPABLE:
            self.wraps.begin(pragma, header)
            return True
        elif header:
            self.findings.error(pragma, f"{what} directly after '{header}' without braces: the "
                                        f"inserted code would become the body and change the "
                                        f"program; add braces (only an experiment that encloses "
                                        f"exactly the one body statement of an if/else/for/while/do "
                                        f"may stand there)")
        elif context.statement_pragma:
            after = (f"'{context.pragma_operator}' (a '#pragma {context.statement_pragma}')"
                     if context.pragma_operator else f"a '#pragma {context.statement_pragma}' line")
            self.findings.error(pragma, f"{what} directly after {after}, which applies to the next "
                                        f"statement: the inserted code would become that statement; "
                                        f"move the '#pragma cll' line before it")
        elif previous not in (";", "{", "}", ":") and not context.closed_pragma_operator:
            line = context.previous.line if context.previous else pragma.line
            ends_an_expression = previous in (")", "]") or (previous or " ")[0].isalnum() or previous == "_"
            missing = f"; is a ';' missing at the end of line {line}?" if line < pragma.line and ends_an_expression else ""
            self.findings.error(pragma, f"{what} inside a statement (after {previous!r}): it must "
                                        f"stand where a statement can begin{missing}")
        elif following is not None and following.text == "else":
            self.findings.error(pragma, f"{what} between an if's statement and its 'else': the "
                                        f"inserted code would separate them; add braces")
        else:
            return True
        return False

    def begin(self, pragma: Begin):
        """An experiment begins: one name keeps one formula and one working set."""
        first = self.program.experiments.setdefault(pragma.name, pragma)
        clash = _clash(first, pragma)
        if clash:
            what, here, there = clash
            undecided = self.findings.undecided_notes(first, pragma) if what == "formulas" else []
            self.findings.error(pragma, f"experiment {pragma.name!r} has two different {what}: "
                                        f"{here} here",
                                [self.findings.note(first, f"and {there} here")] + undecided)
        self.balance.open(pragma, self.context.depth)
        self.order.experiment(pragma)
        if self.function is not None:
            self.begun_in.append((pragma, self.function))

    def sampling_loop(self, pragma: For):
        """A sampling loop begins."""
        self.balance.open(pragma, self.context.depth)
        self.order.loop_begins(pragma)

    def end_loop(self, pragma: EndFor):
        """A sampling loop ends: the generated code needs to know which."""
        loop = self.balance.end_loop(pragma, self.context.depth)
        if loop is not None:
            self.program.closes[pragma.site] = loop
        self.order.loop_ends(pragma, loop)

    def parallel(self, pragma: Parallel):
        """The parallel mode: one per file."""
        known = self.program.parallel
        if known is not None and (known.model, known.procs) != (pragma.model, pragma.procs):
            self.findings.error(pragma, "a second, different '#pragma cll parallel' line",
                                [self.findings.note(known, "the first is here")])
        self.program.parallel = known or pragma

    def reports_name_experiments(self):
        """A warning for each name a report gives that no begin of this file has (at the
        file's end: a function above the one that begins an experiment may report it), but
        none for a begin that did not parse (its error said enough)."""
        for _, pragma in self.program.sites:
            for name in (pragma.names or ()) if isinstance(pragma, Report) else ():
                if name not in self.program.experiments and name not in self.balance.rejected:
                    self.findings.warn(pragma.line, pragma.column,
                                       f"report names {name!r}, which no '#pragma cll' in this file "
                                       f"begins: unless another file of the program begins it, the "
                                       f"trace holds nothing of it")
                    self.program.unbegun.append((name, self.program.warnings[-1]))


def _malformed_for(words: list[str]) -> bool:
    """Whether a pragma that does not parse, whose first `words` these are, is a `for`
    (`for(N = 1; N < 9; N++` without its `)`, `fro(N = 1; ...)`): taken as opening its loop,
    its `end for` is no second error. A word near `for` that is not followed by `(` may be an
    experiment's name (`fork`)."""
    head = words[0].split("(")[0] if words else ""
    return head == "for" or (bool(words) and head != words[0] and bool(nearest(head, ("for",))))


@dataclass(frozen=True)
class _Macro:
    """A `#define` of the file (an `#undef`: `jumps` empty): its name, whether it takes
    arguments, the jumps of its replacement that leave it (call.jumps.jumps_in_macro) and
    where it is defined."""
    name: str
    function_like: bool
    jumps: tuple[str, ...]
    line: int
    column: int


DEFINE = re.compile(r"\s*(?:#|%:)\s*(define|undef)\s+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.S)


def _definitions(stream: list[CodeToken | Directive], lines: list[str]) -> dict[Directive, _Macro]:
    """The `#define` and `#undef` lines among the kept items of a file, by directive."""
    found = {}
    for item in stream:
        if not isinstance(item, Directive) or item.namespace is not None:
            continue
        text = re.sub(r"\\[ \t]*\r?\n", "", "\n".join(lines[item.line - 1:item.last_line]))
        match = DEFINE.match(text)
        if match is None:
            continue
        word, name, parameters, replacement = match.groups()
        jumps: list[str] = []
        if word == "define":
            try:
                jumps = jumps_in_macro([t for t in lex(replacement) if isinstance(t, CodeToken)])
            except CLexError:
                pass
        found[item] = _Macro(name, parameters is not None and word == "define", tuple(jumps),
                             item.line, match.start(2) + 1)
    return found


SIGNAL_FUNCTIONS = {"signal", "sigset", "bsd_signal", "sysv_signal"}   # f(SIG, HANDLER)
HANDLER_FIELDS = {"sa_handler", "sa_sigaction"}                       # struct sigaction's
LONG_JUMPS = {"longjmp", "siglongjmp", "_longjmp", "__builtin_longjmp"}
SET_JUMPS = {"setjmp", "sigsetjmp", "_setjmp", "__builtin_setjmp"}


def _signal_handlers(code: list[CodeToken]) -> dict[str, CodeToken]:
    """The functions a file installs as signal handlers, by name, with the place of the first
    installation: the last argument of `signal(SIG, f)` (`sigset`...), and what is assigned to
    a `sa_handler` or `sa_sigaction` member (`sa.sa_handler = f`, `.sa_handler = &f`)."""
    found: dict[str, CodeToken] = {}
    for i, token in enumerate(code):
        start = None
        if token.kind != "IDENT":
            continue
        if token.text in HANDLER_FIELDS and code[i + 1:i + 2] and code[i + 1].text == "=":
            start = i + 2
        elif token.text in SIGNAL_FUNCTIONS and code[i + 1:i + 2] and code[i + 1].text == "(":
            depth, j = 0, i + 1
            while j < len(code):
                text = code[j].text
                depth += (text in ("(", "[", "{")) - (text in (")", "]", "}"))
                if depth == 0:
                    break
                if text == "," and depth == 1:
                    start = j + 1
                j += 1
        if start is not None:
            start = _past_cast(code, start)
            start += start < len(code) and code[start].text == "&"
            name = code[start] if start < len(code) else None
            after = code[start + 1].text if start + 1 < len(code) else None
            if name is not None and name.kind == "IDENT" and after in (")", ";", ",", "}"):
                found.setdefault(name.text, name)
    return found


def _past_cast(code: list[CodeToken], at: int) -> int:
    """Where the expression at `at` goes on after a cast to a function pointer
    (`(void (*)(int))on_usr1`): the token after its closing parenthesis; `at` itself when no
    such cast stands there."""
    if at >= len(code) or code[at].text != "(" or at + 1 >= len(code) or code[at + 1].kind != "IDENT":
        return at
    depth, j = 0, at
    while j < len(code):
        depth += (code[j].text == "(") - (code[j].text == ")")
        if depth == 0:
            break
        j += 1
    inside = [t.text for t in code[at:j]]
    return j + 1 if "*" in inside and j + 1 < len(code) else at


INCLUDE = re.compile(r'\s*#\s*include\s*[<"](?:.*/)?([^/>"]+)[>"]')   # the header an #include line names


def _near_miss(namespace: str | None) -> bool:
    """`ll`, `cl`, `call`, `clll`, `CLL`...: probably meant `cll` (a compiler ignores them)."""
    return namespace is not None and namespace != "cll" and edit_distance(namespace.lower(), "cll") <= 1


def _clause(begin: Begin) -> str:
    """How a begin states its working set, for messages."""
    return f"'bytes {begin.working_set}'" if begin.working_set else "no 'bytes' clause"


def _describe(pragma: Pragma) -> str:
    return {Begin: "'#pragma cll' experiment begin", End: "'#pragma cll end'",
            For: "'#pragma cll for'", EndFor: "'#pragma cll end for'",
            Report: "'#pragma cll report'"}[type(pragma)]
