"""The one model of a complexity formula, shared by `call` (validation, which variables to
record) and `llac` (design matrices, evaluation, conditions).

A formula is in canonical form when it is a sum of terms and each term holds exactly one
constant `NAME[i]` as a multiplicative factor, e.g. `f[0] + f[1]*N*log(N)`; the indices are
0..k-1, each once. Every other identifier is a program variable, except function names.
Arithmetic is real (`N/P` is not C integer division) and `log` is the natural logarithm, as
in C's <math.h>.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
from lark import Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from cll_grammar.grammars import open_grammar
from cll_grammar.span import Span, quoted

FUNCTIONS: dict[str, tuple[int, Callable]] = {
    "log": (1, np.log), "log2": (1, np.log2), "log10": (1, np.log10), "sqrt": (1, np.sqrt),
    "exp": (1, np.exp), "floor": (1, np.floor), "ceil": (1, np.ceil), "abs": (1, np.abs),
    "pow": (2, np.power), "min": (2, np.minimum), "max": (2, np.maximum),
}


class FormulaError(ValueError):
    """A formula or expression that does not parse or is not canonical.

    `span` is the offending part in the parsed text (None when no part is to blame): line 1
    for a formula parsed alone, so callers turn it into file:line:col by adding the formula's
    own position; the source's own lines and columns for an expression inside an llac command.
    """

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    @property
    def column(self) -> int:
        """The 1-based column where the offending part starts, 0 when no part is to blame."""
        return self.span.column if self.span else 0


# ---------------------------------------------------------------- expression nodes

@dataclass(frozen=True)
class Node:
    """Base of the immutable expression tree; `span` is where the node is in the parsed text
    (None for a node made by rewriting, such as the 1 left where a constant was)."""
    span: Span | None = field(default=None, compare=False, kw_only=True)


@dataclass(frozen=True)
class Number(Node):
    value: float

    def __str__(self):
        whole = self.value == int(self.value) and abs(self.value) < 1e16   # 1e300 stays 1e+300
        return str(int(self.value)) if whole else repr(self.value)


@dataclass(frozen=True)
class Variable(Node):
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Constant(Node):
    name: str
    index: int

    def __str__(self):
        return f"{self.name}[{self.index}]"


@dataclass(frozen=True)
class Call(Node):
    function: str
    args: tuple[Node, ...]

    def __str__(self):
        return f"{self.function}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Neg(Node):
    operand: Node

    def __str__(self):
        return f"-{_wrap(self.operand, 3)}"


@dataclass(frozen=True)
class Not(Node):
    operand: Node

    def __str__(self):
        return f"not {self.operand}"


@dataclass(frozen=True)
class BinOp(Node):
    """Arithmetic (+ - * / ^), comparison (< <= == != >= >) or boolean (and, or) operation."""
    op: str
    left: Node
    right: Node

    def __str__(self):
        prec = PRECEDENCE[self.op]
        right_prec = prec + (0 if self.op in ("*", "+", "and", "or") else 1)
        if self.op == "^":
            return f"{_wrap(self.left, prec + 1)}^{_wrap(self.right, prec)}"
        spaced = self.op in ("+", "-") or prec <= 1
        sep = f" {self.op} " if spaced else self.op
        return f"{_wrap(self.left, prec)}{sep}{_wrap(self.right, right_prec)}"


@dataclass(frozen=True)
class Chain(Node):
    """A flat left-to-right chain of operators of one precedence level: `a + b - c`,
    `a*b/c`, `a and b and c`, `a or b`. One node for the whole chain (not nested pairs) keeps
    a formula of thousands of terms a shallow tree, which every tool walks without recursion
    limits. `rest` pairs each operator with its right operand."""
    first: Node
    rest: tuple[tuple[str, Node], ...]

    @property
    def operands(self) -> tuple[Node, ...]:
        """Every operand, in order."""
        return (self.first,) + tuple(operand for _, operand in self.rest)

    def __str__(self):
        prec = PRECEDENCE[self.rest[0][0]]
        out = [_wrap(self.first, prec)]
        for op, operand in self.rest:
            sep = f" {op} " if prec <= 2 else op
            out.append(sep + _wrap(operand, prec + (0 if op in ("*", "+", "and", "or") else 1)))
        return "".join(out)


PRECEDENCE = {"or": 0, "and": 0.5, "<": 1, "<=": 1, "==": 1, "!=": 1, ">=": 1, ">": 1,
              "+": 2, "-": 2, "*": 3, "/": 3, "^": 4}


def _wrap(node: Node, min_prec: float) -> str:
    text = str(node)
    if isinstance(node, BinOp) and PRECEDENCE[node.op] < min_prec:
        return f"({text})"
    if isinstance(node, Chain) and PRECEDENCE[node.rest[0][0]] < min_prec:
        return f"({text})"
    if isinstance(node, Neg) and min_prec > 3:
        return f"({text})"
    return text


# ---------------------------------------------------------------- parse tree -> nodes

@v_args(meta=True)
class ExpressionBuilder(Transformer):
    """Turns formula.lark parse trees into immutable `Node`s. Reuse it from other grammars
    with `lark.visitors.merge_transformers(..., formula=ExpressionBuilder())`."""

    def number(self, meta, children):
        value = float(children[0])
        if not math.isfinite(value):
            raise FormulaError(f"the number {children[0]} is beyond the floating-point range (±1.8e308)",
                               Span.of(children[0]))
        return Number(value, span=Span.of(children[0]))

    def constant(self, meta, children):
        name, index = children
        return Constant(str(name), int(index), span=Span.of(name))

    def variable(self, meta, children):
        return Variable("".join(str(c) for c in children), span=Span.of(children[0], children[-1]))

    def call(self, meta, children):
        """A function call, checked here so every grammar importing formula.lark rejects an
        unknown function or a wrong argument count at its place."""
        name, *args = children
        args = tuple(a for a in args if a is not None)
        function = str(name)
        if function not in FUNCTIONS:
            raise FormulaError(f"unknown function {function!r} (known: {', '.join(sorted(FUNCTIONS))})",
                               Span.of(name))
        arity = FUNCTIONS[function][0]
        if len(args) != arity:
            raise FormulaError(f"{function}() takes {arity} argument{'s' * (arity > 1)}, "
                               f"got {len(args)}", Span.of(name))
        return Call(function, args, span=Span.of(name))

    def neg(self, meta, children):
        return Neg(children[0], span=Span.of(meta))

    def not_(self, meta, children):
        return Not(children[0], span=Span.of(meta))

    def compare(self, meta, children):
        left, op, right = children
        return BinOp(str(op), left, right, span=Span.of(meta))

    def pow(self, meta, children):
        return BinOp("^", children[0], children[-1], span=Span.of(meta))

    def chain(self, meta, children):
        """A flat chain: children alternate operand, operator token, operand, ..."""
        rest = tuple((str(children[i]), children[i + 1]) for i in range(1, len(children), 2))
        return Chain(children[0], rest, span=Span.of(meta))

    sum_chain = product_chain = and_chain = or_chain = chain

    def formula(self, meta, children):
        return children[0]

    def start(self, meta, children):
        return children[0]


def _parse(text: str) -> Node:
    tree = None
    try:
        tree = open_grammar("formula.lark", start="formula").parse(text)
        return ExpressionBuilder().transform(tree)
    except UnexpectedInput as err:
        at_end = isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END")
        column = len(text.rstrip()) + 1 if at_end or err.column <= 0 else err.column
        raise FormulaError(_describe_syntax_error(err, text), Span.point(1, column)) from None
    except VisitError as err:
        if isinstance(err.orig_exc, FormulaError):
            raise err.orig_exc from None
        if isinstance(err.orig_exc, RecursionError):
            raise FormulaError(TOO_DEEP, deepest_span(tree)) from None
        raise
    except RecursionError:
        raise FormulaError(TOO_DEEP, deepest_span(tree)) from None


def parse_expression(text: str) -> Node:
    """The tree of an arithmetic expression (formula.lark's `expr`, constants allowed), e.g.
    a working set `8*N*3`; FormulaError with the span of a syntax error."""
    return _parse(text)


# Sums, products, `and` and `or` are flat; only signs, powers and `not` nest (parentheses
# leave no node), and Python's recursion limit stops them at about a thousand levels.
TOO_DEEP = "the expression nests too deeply (signs, powers or 'not' a thousand levels deep)"


def deepest_span(tree: Tree | Node | None) -> Span:
    """Where the most deeply nested part of a parse tree (Lark's, or of expression nodes)
    starts: the place to show with TOO_DEEP, found without recursion since recursion is what
    failed. Line 1, column 1 when no part carries a position."""
    deepest, depth_of, pending = None, -1, [(tree, 0)]
    while pending:
        node, depth = pending.pop()
        span = _span_of(node)
        if span is not None and depth > depth_of:
            deepest, depth_of = span, depth
        pending.extend((child, depth + 1) for child in reversed(_subtrees(node)))   # leftmost first
    return deepest or Span.point(1, 1)


def _span_of(node) -> Span | None:
    if isinstance(node, Tree):
        return None if node.meta.empty else Span.point(node.meta.line, node.meta.column)
    return node.span if isinstance(node, Node) else None


def _subtrees(node) -> list:
    if isinstance(node, Tree):
        return [child for child in node.children if isinstance(child, Tree)]
    return list(_children(node)) if isinstance(node, Node) else []


def _describe_syntax_error(err: UnexpectedInput, text: str) -> str:
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        return "the expression ends too early"
    if isinstance(err, UnexpectedCharacters):
        return f"unexpected character {quoted(text[err.pos_in_stream])}"
    if isinstance(err, UnexpectedToken):
        return f"unexpected {quoted(str(err.token))}"
    return "syntax error"


# ---------------------------------------------------------------- evaluation

def walk(node: Node):
    """Yield `node` and every node below it, depth first (with a stack, not recursion)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, (Neg, Not)):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Chain):
        return node.operands
    return ()


def variables_of(node: Node) -> tuple[str, ...]:
    """The variable names in `node`, in order of first appearance."""
    return tuple(dict.fromkeys(n.name for n in walk(node) if isinstance(n, Variable)))


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "^": np.power,
          "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal,
          ">=": np.greater_equal, ">": np.greater, "and": np.logical_and, "or": np.logical_or}


def evaluate(node: Node, columns: Mapping[str, np.ndarray],
             constants: Mapping[tuple[str, int], float] | None = None):
    """Evaluate `node` with numpy over `columns` (name -> array), in real arithmetic.

    Raises KeyError naming the first variable that is not a column; constants are looked up
    in `constants` as (name, index) -> value.
    """
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Variable):
        if node.name not in columns:
            raise KeyError(node.name)
        return np.asarray(columns[node.name], dtype=float)
    if isinstance(node, Constant):
        if constants is None or (node.name, node.index) not in constants:
            raise KeyError(str(node))
        return constants[(node.name, node.index)]
    if isinstance(node, Neg):
        return np.negative(evaluate(node.operand, columns, constants))
    if isinstance(node, Not):
        return np.logical_not(evaluate(node.operand, columns, constants))
    if isinstance(node, Call):   # log(0), sqrt(-1): nan or inf, which the callers report
        arguments = [evaluate(a, columns, constants) for a in node.args]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return FUNCTIONS[node.function][1](*arguments)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if isinstance(node, Chain):
            value = evaluate(node.first, columns, constants)
            for op, operand in node.rest:
                value = _ARITH[op](value, evaluate(operand, columns, constants))
            return value
        return _ARITH[node.op](evaluate(node.left, columns, constants),
                               evaluate(node.right, columns, constants))


# ---------------------------------------------------------------- canonical formulas

@dataclass(frozen=True)
class Term:
    """One term of a canonical formula: `constant * factor` (factor is Number(1) for `f[0]`)."""
    constant: Constant
    factor: Node

    def __str__(self):
        if isinstance(self.factor, Neg):
            return "-" + str(Term(self.constant, self.factor.operand))
        if _is_one(self.factor):
            return str(self.constant)
        return f"{self.constant}*{_wrap(self.factor, 3)}"


@dataclass(frozen=True)
class Formula:
    """A validated canonical formula: its constants' family name, terms and variables."""
    text: str
    name: str
    terms: tuple[Term, ...]
    variables: tuple[str, ...]

    @property
    def constants(self) -> tuple[str, ...]:
        """Constant names in index order: ('f[0]', 'f[1]', ...)."""
        return tuple(str(t.constant) for t in self.terms)

    def __str__(self):
        return " + ".join(str(t) for t in self.terms).replace("+ -", "- ")

    def design_matrix(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The n x k matrix whose column i is term i's factor evaluated on the data."""
        n = len(next(iter(columns.values()))) if columns else 1
        cols = [np.broadcast_to(np.asarray(evaluate(t.factor, columns), dtype=float), (n,))
                for t in self.terms]
        return np.column_stack(cols) if cols else np.empty((n, 0))

    def evaluate(self, constants: Sequence[float], columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The formula's value for the given constants (in index order) over `columns`."""
        return self.design_matrix(columns) @ np.asarray(constants, dtype=float)

    def without(self, indices) -> "Formula":
        """This formula with the terms of the given constant indices dropped (names kept)."""
        drop = set(indices)
        kept = tuple(t for t in self.terms if t.constant.index not in drop)
        if not kept:
            raise FormulaError("a formula needs at least one term")
        text = " + ".join(str(t) for t in kept).replace("+ -", "- ")
        variables = tuple(dict.fromkeys(v for t in kept for v in variables_of(t.factor)))
        return Formula(text, self.name, kept, variables)


def parse_formula(text: str, experiment: str | None = None) -> Formula:
    """Parse and validate a canonical formula; `experiment`, when given, must name its constants.

    Raises FormulaError with the span of the offending part.
    """
    root = _parse(text)
    try:          # validating and printing recurse more deeply than parsing does
        return _canonical(root, text, experiment)
    except RecursionError:
        raise FormulaError(TOO_DEEP, deepest_span(root)) from None


def _canonical(root: Node, text: str, experiment: str | None) -> Formula:
    """The Formula of the parsed `root` of `text` (parse_formula)."""
    check_divisions(root)
    if experiment:   # before the terms: a[3] is a foreign constant, not a term's second one
        foreign = next((n for n in walk(root) if isinstance(n, Constant) and n.name != experiment), None)
        if foreign is not None:
            raise _foreign_constant(foreign, experiment, f"experiment {experiment!r}")
    example = experiment or "f"
    terms = [_split_term(node, sign, example) for node, sign in _signed_terms(root, 1)]
    if not terms:
        raise FormulaError(f"a formula needs at least one constant such as {example}[0]", Span.point(1, 1))
    name = experiment or terms[0].constant.name
    for term in terms:
        if term.constant.name != name:
            raise _foreign_constant(term.constant, name, f"the first term ({name}[...])")
    _check_indices(terms, name)
    terms.sort(key=lambda t: t.constant.index)
    _check_distinct(terms)
    variables = tuple(dict.fromkeys(v for t in terms for v in variables_of(t.factor)))
    return Formula(text.strip(), name, tuple(terms), variables)


def _foreign_constant(constant: Constant, name: str, whose: str) -> FormulaError:
    """The error for `constant`, a NAME[i] of another name than the formula's `name`: only
    name[i] are constants, and a program variable is a plain name (an array element is
    neither)."""
    return FormulaError(f"constant {constant} does not belong to {whose}: its constants are "
                        f"{name}[0], {name}[1], ... (only they are indexed: a program variable "
                        f"in a formula is a plain name such as N, s.n or p->n, so copy an array "
                        f"element into one)", constant.span)


def _check_distinct(terms: list[Term]) -> None:
    """Two terms whose factors are proportional whatever the variables (`f[1]*N + f[2]*N`,
    `f[1]*N + f[2]*2*N`, `f[0] + f[1]*2`) cost the same at every input: no measurement can
    tell their constants apart. An error at the second term's constant. (Each factor's values
    at the probes, relative to its first that is not 0, are compared by hashing: a formula has
    thousands of terms at most.)"""
    seen: dict[tuple, Term] = {}
    variables = tuple(dict.fromkeys(v for t in terms for v in variables_of(t.factor)))
    for term in terms:
        values = probe_values(term.factor, variables)
        if not np.all(np.isfinite(values)) or not np.any(values):
            continue
        earlier = seen.setdefault(_shape_key(values), term)
        if earlier is not term:
            raise FormulaError(f"terms {earlier} and {term} cost the same up to a factor whatever "
                               f"the variables: no measurement can tell {earlier.constant} and "
                               f"{term.constant} apart; keep one term", term.constant.span)


def check_divisions(root: Node) -> None:
    """A division by an operand that is 0 whatever the variables (`N/0`, `N/(2-2)`,
    `N/(N-N)`, `N/(0*M)`) makes its term infinite (or undefined) on every record: an error at
    that operand."""
    for node in walk(root):
        for op, operand in node.rest if isinstance(node, Chain) else ():
            if op == "/" and _is_zero_whatever_the_variables(operand):
                raise FormulaError(f"division by zero: the divisor {operand} is 0 whatever the variables",
                                   operand.span)


PROBE_COUNT = 16          # inputs at which a node is tried
_probes: list[np.ndarray] = []


def probes(place: int) -> np.ndarray:
    """The inputs at which the variable in `place` is tried: PROBE_COUNT whole numbers from 2 to
    65537 (so that a polynomial with whole coefficients is computed exactly: `(N+1)^2 - N^2 -
    2*N - 1` is 0.0, not a rounding error), spread evenly in log (most of them small), the same
    for a place on every call and shared with no other place (`N - M` is 0 at none of them; a
    rotation of one list of 8 made the ninth variable the first again, and the product of eight
    variables a constant)."""
    while len(_probes) <= place:        # each place from its own seed: the same whatever the order of calls
        used = {v for p in _probes for v in p}
        rng, chosen = np.random.default_rng(len(_probes)), []
        while len(chosen) < PROBE_COUNT:
            v = float(np.round(np.exp(rng.uniform(np.log(2), np.log(65537)))))
            if v not in used:
                used.add(v)
                chosen.append(v)
        _probes.append(np.array(chosen))
    return _probes[place]


def probe_values(node: Node, variables: Sequence[str] = ()) -> np.ndarray:
    """`node` (free of constants) at each probe of its variables (`probes`): what it is
    "whatever the variables", as far as a few inputs can tell. Each variable takes those of
    its place in `variables` (default: its own), so that nodes probed with the same
    `variables` see the same inputs."""
    variables = variables or variables_of(node)
    values = {v: probes(i) for i, v in enumerate(variables)}
    with np.errstate(all="ignore"):
        return np.broadcast_to(np.asarray(evaluate(node, values), dtype=float), (PROBE_COUNT,))


def _shape_key(values: np.ndarray) -> tuple:
    """The values relative to the first that is not 0, to 9 significant digits: equal for two
    factors that are proportional whatever their scale (N^20 and 3*N^20), different for N^6 and
    N^7 (scaled by the largest and rounded to 9 decimals, every value but the largest was 0
    from N^6 on)."""
    with np.errstate(all="ignore"):
        relative = values / values[np.flatnonzero(values)[0]]
    return tuple(float(f"{v:.9g}") for v in relative)


def _is_zero_whatever_the_variables(node: Node) -> bool:
    """Whether `node`, free of constants, is 0 at every probe of its variables (`N - N`,
    `2*N - N - N`, `log(N) - log(N)`, `0*M`): then it is 0 whatever they are, as far as a
    divisor can be told apart from one that is 0 somewhere only."""
    if any(isinstance(n, Constant) for n in walk(node)):
        return False
    return bool(np.all(probe_values(node) == 0))


def _signed_terms(node: Node, sign: int):
    """The terms of a sum (also of parenthesised sums inside it) with their signs."""
    if isinstance(node, Chain) and node.rest[0][0] in "+-":
        yield from _signed_terms(node.first, sign)
        for op, operand in node.rest:
            yield from _signed_terms(operand, sign if op == "+" else -sign)
    else:
        yield node, sign


def _split_term(node: Node, sign: int, example: str) -> Term:
    """The Term of one summand `node`; `example` names the constants the messages show."""
    constants = [n for n in walk(node) if isinstance(n, Constant)]
    if not constants:
        raise FormulaError(f"term {node} has no constant: in canonical form every term is "
                           f"multiplied by exactly one constant such as {example}[1]", node.span)
    if len(constants) > 1:
        raise FormulaError(f"term {node} has {len(constants)} constants ({', '.join(map(str, constants))}): "
                           f"in canonical form each term has exactly one", constants[1].span)
    factor = _factor_without(node, constants[0])
    if sign < 0:
        factor = Neg(factor, span=factor.span)
    return Term(constants[0], _simplify(factor))


def _factor_without(node: Node, constant: Constant) -> Node:
    """`node` with `constant` replaced by 1, provided it is a multiplicative factor of it."""
    if node is constant:
        return Number(1.0, span=node.span)
    if isinstance(node, Neg):
        return Neg(_factor_without(node.operand, constant), span=node.span)
    if isinstance(node, Chain) and node.rest[0][0] in "*/":
        ops = ("*",) + tuple(op for op, _ in node.rest)
        at = next(i for i, operand in enumerate(node.operands)
                  if any(n is constant for n in walk(operand)))
        if ops[at] == "*":
            operands = list(node.operands)
            operands[at] = _factor_without(operands[at], constant)
            return Chain(operands[0], tuple(zip(ops[1:], operands[1:])), span=node.span)
        where = "a denominator"
    else:
        where = _context(node)
    raise FormulaError(f"constant {constant} must multiply its term, not stand inside "
                       f"{where}: write the term as {constant}*(...)", constant.span)


def _context(node: Node) -> str:
    if isinstance(node, Call):
        return f"{node.function}(...)"
    if isinstance(node, BinOp):
        return f"an operand of '{node.op}'"
    if isinstance(node, Chain):
        return f"an operand of '{node.rest[0][0]}'"
    return str(node)


def _simplify(node: Node) -> Node:
    """Drop the `1*` and `*1` left where the constant was, so terms print naturally."""
    if isinstance(node, Chain) and node.rest[0][0] in "*/":
        first = _simplify(node.first)
        rest = [(op, _simplify(operand)) for op, operand in node.rest]
        rest = [(op, operand) for op, operand in rest if not _is_one(operand)]
        if _is_one(first) and rest and rest[0][0] == "*":
            first, rest = rest[0][1], rest[1:]
        return Chain(first, tuple(rest), span=node.span) if rest else first
    if isinstance(node, Neg):
        inner = _simplify(node.operand)
        return Neg(inner, span=node.span)
    return node


def _is_one(node: Node) -> bool:
    return isinstance(node, Number) and node.value == 1


def _check_indices(terms: list[Term], name: str) -> None:
    seen: dict[int, Term] = {}
    for term in terms:
        if term.constant.index in seen:
            raise FormulaError(f"constant {term.constant} appears in two terms", term.constant.span)
        seen[term.constant.index] = term
    missing = sorted(set(range(len(terms))) - set(seen))
    if missing:
        extra = max(seen)
        raise FormulaError(f"constants must be numbered {name}[0]..{name}[{len(terms) - 1}]: "
                           f"{name}[{missing[0]}] is missing", seen[extra].constant.span)
