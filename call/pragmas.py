"""Parse and validate one `#pragma cll` line (grammar/pragma.lark) into a directive object."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from call.clex import Directive
from call.diagnostics import CallError, Diagnostic
from cll_grammar.columns import reject_record_columns
from cll_grammar.formula import Formula, FormulaError, Variable, parse_expression, parse_formula, walk
from cll_grammar.grammars import open_grammar
from cll_grammar.span import nearest, quoted, suggest
from cll_grammar.workingset import WorkingSet, parse_working_set

KEYWORDS = ("end", "for", "sync", "parallel", "report")
RESERVED_PREFIX = "cll_"          # the generated code's names (cll_v, cll_exp_NAME, ...)
# `end end[0] + ...`: a begin whose name is a keyword (its constants name it again)
RESERVED_NAME = re.compile(r"\s*(?:sync\s+)?(?P<name>\w+)\s+(?P=name)\s*\[")
# the first token of the text a syntax error stopped at (the pragma grammar's catch-all
# token of `for` headers can hold the rest of the line)
FIRST_TOKEN = re.compile(r"\s*([A-Za-z_]\w*|[0-9.]+(?:[eE][-+]?\d+)?|->|\*\*|[<>=!]=|\S)")
MODELS = ("MPI", "OpenMP", "PUB")


@dataclass(frozen=True)
class Pragma:
    """What every directive knows: the file and the place of its `#`."""
    file: str
    line: int
    column: int

    @property
    def site(self) -> str:
        """`file:line:col`, as the runtime records it."""
        return f"{self.file}:{self.line}:{self.column}"


Place = tuple[int, int]       # (line, column) in the user's file


@dataclass(frozen=True)
class Begin(Pragma):
    name: str
    formula: Formula
    sync: bool
    working_set: WorkingSet | None = None   # the `bytes EXPR` clause
    places: tuple[tuple[str, Place], ...] = field(default=(), compare=False)   # where each variable first appears


@dataclass(frozen=True)
class End(Pragma):
    name: str


@dataclass(frozen=True)
class For(Pragma):
    header: str  # "N = 16; N <= 4096; N *= 2"
    shuffle: bool = False  # run the bodies of its nest in a random order (call.order)
    parts: tuple[tuple[str, Place | None], ...] = field(default=(), compare=False)   # the header's parts, placed


@dataclass(frozen=True)
class EndFor(Pragma):
    pass


@dataclass(frozen=True)
class Parallel(Pragma):
    model: str
    obj: str | None
    procs: tuple[int, int, int] | None
    obj_at: tuple[int, int] | None = None   # line and column of `obj` in the file


@dataclass(frozen=True)
class Report(Pragma):
    names: tuple[str, ...] | None  # None: all


def parse_pragma(directive: Directive, file: str) -> Pragma:
    """The directive object for the body of a `#pragma cll` line; CallError with
    file:line:col when it does not parse or does not validate."""
    reader = _Reader(directive, file)
    try:
        tree = open_grammar("pragma.lark").parse(directive.body).children[0]
    except UnexpectedInput as err:
        reader.unknown_directive()
        reserved = RESERVED_NAME.match(directive.body)
        if reserved and reserved["name"] in KEYWORDS:
            reader.fail(reserved.start("name"), f"{reserved['name']!r} is a word of the '#pragma cll' language "
                                                f"and cannot name an experiment: rename it (the reserved words: "
                                                f"{', '.join(KEYWORDS)})")
        at_end = isinstance(err, UnexpectedEOF) or getattr(err, "token", None) == ""
        index = len(directive.body.rstrip()) if at_end or err.column < 1 else err.column - 1
        reader.fail(index, _syntax_message(err, directive.body))
    return getattr(reader, tree.data)(tree)


def _syntax_message(err: UnexpectedInput, body: str) -> str:
    """What is wrong with the line `body` that `err` stopped at, worded for the directive it
    begins: an experiment without a formula, report names without commas, a clause after a
    formula or a `for` header that is neither `bytes` nor `shuffle`."""
    words = body.split()
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        begun = words[1:] if words[:1] == ["sync"] else words
        if len(begun) == 1 and begun[0] not in KEYWORDS and re.fullmatch(r"[A-Za-z_]\w*", begun[0]):
            return (f"experiment {begun[0]!r} needs a complexity formula after its name, such as "
                    f"'{begun[0]}[0] + {begun[0]}[1]*N'")
        return "this '#pragma cll' line ends too early"
    if isinstance(err, UnexpectedCharacters):
        return f"unexpected character {quoted(body[err.pos_in_stream])} in '#pragma cll' line"
    word = FIRST_TOKEN.match(str(err.token))[0] if str(err.token).strip() else str(err.token)
    if words[:1] == ["report"] and err.token.type == "NAME" and "COMMA" in err.expected:
        return f"unexpected {quoted(word)} in '#pragma cll' line (separate experiment names with commas)"
    before = body[:err.token.start_pos]
    if before.count("(") > before.count(")") and "COMMA" in err.expected:
        return (f"unexpected {quoted(word)} inside parentheses: separate a function's arguments with "
                f"commas (max(N, M)), and write products with '*'")
    if "BYTES" in err.expected and err.token.type == "NAME":
        return (f"unexpected {quoted(word)} after the formula: only the clause 'bytes EXPR' (the "
                f"experiment's working set) may follow it{suggest(word, ['bytes'])}")
    after_header = re.search(r"\)\s*(shuffle\s*)?$", before)
    if body.split("(")[0].strip() == "for" and after_header:
        return (f"unexpected {quoted(word)} after the 'for' header: only the clause 'shuffle' may "
                f"follow it{suggest(word, ['shuffle'])}")
    return f"unexpected {quoted(word)} in '#pragma cll' line"


def _program_formula(text: str, experiment: str) -> Formula:
    """The canonical formula of a pragma, whose variables are the program's: a record column
    (`time`, `rank`, `thread`) is an error at its place."""
    formula = parse_formula(text, experiment=experiment)
    reject_record_columns(parse_expression(text), "a formula")
    return formula


class _Reader:
    """Turns the parse tree of one line into a Pragma, reporting errors at file positions."""

    def __init__(self, directive: Directive, file: str):
        self.directive, self.file = directive, file
        self.place = dict(file=file, line=directive.line, column=directive.column)

    def fail(self, index: int, message: str):
        """Raise an error at body character `index`."""
        line, column = self.directive.position(index)
        raise CallError([Diagnostic("error", self.file, line, column, message)])

    def unknown_directive(self):
        """If the first word is a misspelt keyword, say so (before any other error)."""
        body = self.directive.body
        word = body.split()[0] if body.split() else ""
        word = word.split("(")[0]
        if not word or word in KEYWORDS:
            if not word:
                self.fail(0, "'#pragma cll' needs a directive: an experiment NAME FORMULA, "
                             "'end', 'for', 'parallel' or 'report'")
            return
        guess = nearest(word, KEYWORDS)
        if guess:
            self.fail(body.index(word), f"unknown directive {word!r} after '#pragma cll' "
                                        f"(did you mean {guess!r}?)")

    def begin(self, tree: Tree) -> Begin:
        sync = tree.children[0] if tree.children[0].type == "SYNC" else None
        name, formula_tree, *clause = tree.children[1 if sync else 0:]
        formula = self.expression(formula_tree, f"formula of experiment {str(name)!r}",
                                  lambda text: _program_formula(text, str(name)))
        working_set = None
        if clause:
            working_set = self.expression(clause[0].children[1], f"working set ('bytes') of experiment "
                                                                 f"{str(name)!r}", parse_working_set)
        places = self.variable_places([formula_tree, *(c.children[1] for c in clause)])
        for variable, (line, column) in places:
            if variable.startswith(RESERVED_PREFIX):
                raise CallError([Diagnostic("error", self.file, line, column, (
                    f"variable {variable!r}: names beginning with {RESERVED_PREFIX!r} belong to the code "
                    f"call generates, where this one would not be the program's; rename it"))])
        return Begin(**self.place, name=str(name), formula=formula, sync=bool(sync),
                     working_set=working_set, places=places)

    def variable_places(self, trees: list[Tree]) -> tuple[tuple[str, Place], ...]:
        """Where in the file each program variable of these formula or expression trees first
        appears (the generated code puts its value there, so that gcc's messages point at it)."""
        places: dict[str, Place] = {}
        for tree in trees:
            start = tree.meta.start_pos
            for node in walk(parse_expression(self.directive.body[start:tree.meta.end_pos])):
                if isinstance(node, Variable) and node.span is not None and node.name not in places:
                    places[node.name] = self.directive.position(start + node.span.column - 1)
        return tuple(places.items())

    def expression(self, tree: Tree, what: str, parse):
        """`parse` of the text of `tree` (a formula or expression); its FormulaError is an
        error located in the file, naming `what` was being read."""
        start, stop = tree.meta.start_pos, tree.meta.end_pos
        try:
            return parse(self.directive.body[start:stop])
        except FormulaError as err:
            self.unknown_directive()
            self.fail(start + max(err.column, 1) - 1, f"{what}: {err.message}")

    def end_experiment(self, tree: Tree) -> End:
        return End(**self.place, name=str(tree.children[0]))

    def end_for(self, tree: Tree) -> EndFor:
        return EndFor(**self.place)

    def for_loop(self, tree: Tree) -> For:
        trees = [t for t in tree.children if isinstance(t, Tree)]
        parts = [self.directive.body[t.meta.start_pos:t.meta.end_pos] if not t.meta.empty else "" for t in trees]
        places = [self.directive.position(t.meta.start_pos + len(p) - len(p.lstrip())) if p.strip() else None
                  for t, p in zip(trees, parts)]
        return For(**self.place, header="; ".join(p.strip() for p in parts),
                   shuffle=any(isinstance(t, Token) for t in tree.children),
                   parts=tuple((p.strip(), at) for p, at in zip(parts, places)))

    def parallel(self, tree: Tree) -> Parallel:
        model, *rest = tree.children
        obj = next((t for t in rest if isinstance(t, Token)), None)
        procs = next((t for t in rest if isinstance(t, Tree)), None)
        if str(model) not in MODELS:
            folded = {m.lower(): m for m in MODELS}
            guess = folded[nearest(str(model).lower(), folded, cutoff=0)]
            self.fail(model.start_pos, f"unknown parallel model {str(model)!r}: expected MPI, "
                                       f"OpenMP or PUB (did you mean {guess!r}?)")
        return Parallel(**self.place, model=str(model), obj=str(obj) if obj else None,
                        procs=self.procs(procs) if procs is not None else None,
                        obj_at=self.directive.position(obj.start_pos) if obj else None)

    def procs(self, tree: Tree) -> tuple[int, int, int]:
        values = tree.children
        where = tree.meta.start_pos
        usage = "procs = A:B:F means P = A, A*F, A*F^2, ... up to B (e.g. procs = 1:8:2)"
        if len(values) != 3 or any(v.type != "INT" for v in values):
            self.fail(where, f"malformed procs clause: {usage}")
        first, last, factor = (int(v) for v in values)
        if first < 1:
            self.fail(values[0].start_pos, f"procs: the first count must be at least 1; {usage}")
        if last < first:
            self.fail(values[1].start_pos, f"procs: the last count {last} is below the first "
                                           f"{first}; {usage}")
        if factor < 2:
            self.fail(values[2].start_pos, f"procs: the factor must be at least 2, got {factor}; {usage}")
        if last > MAX_PROCS:
            self.fail(values[1].start_pos, f"procs: the last count {last} is more processors than a "
                                           f"trace can record (at most {MAX_PROCS})")
        return first, last, factor

    def report_all(self, tree: Tree) -> Report:
        return Report(**self.place, names=None)

    def report_names(self, tree: Tree) -> Report:
        return Report(**self.place, names=tuple(str(t) for t in tree.children))


MAX_PROCS = 2 ** 31 - 1     # P is a C int in the runtime (the trace's name, its records)


def procs_sequence(procs: tuple[int, int, int]) -> list[int]:
    """The processor counts a `procs = A:B:F` clause asks for: A, A*F, A*F^2, ... <= B."""
    first, last, factor = procs
    counts = []
    while first <= last:
        counts.append(first)
        first *= factor
    return counts
