"""An experiment's working set: the `bytes EXPR` clause of its `#pragma cll` line, shared by
`call` (which checks it and captures its variables) and `llac` (which reads it back from the
trace header and evaluates it).

EXPR is an arithmetic expression of the program's variables (formula.lark's `expr`: numbers,
variables such as `N`, `s.n`, `p->n`, + - * / ^ and the formulas' functions), for example
`8*N*3` for three arrays of N doubles. It holds no constant `f[i]` (it is not fitted) and no
comparison or boolean operator (it is a size), and it cannot name the columns every trace
record carries (`time`, `rank`, `thread`), which are not program variables.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from cll_grammar.columns import reject_record_columns
from cll_grammar.formula import BinOp, Chain, Constant, FormulaError, Node, Not, Number, Variable, \
    check_divisions, evaluate, parse_expression, probe_values, variables_of, walk
from cll_grammar.span import Span


@dataclass(frozen=True)
class WorkingSet:
    """A validated working-set expression: its canonical `text` (what the trace header
    carries), its tree, and the variables it needs, in order of first appearance."""
    text: str
    node: Node
    variables: tuple[str, ...]

    def __str__(self):
        return self.text

    def bytes_at(self, points: Mapping[str, np.ndarray]) -> np.ndarray:
        """The working set in bytes at the given variable values (name -> equal-length
        arrays), one value per point; KeyError naming the first variable that `points` lacks."""
        values = evaluate(self.node, points)
        size = max((np.size(v) for v in points.values()), default=1)
        return np.broadcast_to(np.asarray(values, dtype=float), (size,)).copy()


def with_values(working_set: WorkingSet, values: Mapping[str, float]) -> WorkingSet:
    """`working_set` with the variables of `values` replaced by those numbers: how a model
    keeps a working-set variable that is not a formula variable but has one value in every
    record (`bytes 8*N*M` with M = 3 throughout), since its sample points carry only the
    formula's variables."""
    text = working_set.text
    spans = sorted(((n.span.column, n.span.end_column, n.name) for n in walk(parse_expression(text))
                    if isinstance(n, Variable) and n.name in values and n.span), reverse=True)
    for start, end, name in spans:
        number = Number(abs(values[name]))
        text = f"{text[:start - 1]}{number if values[name] >= 0 else f'(-{number})'}{text[end - 1:]}"
    return parse_working_set(text)


def parse_working_set(text: str) -> WorkingSet:
    """Parse and validate a working-set expression; FormulaError with the span (line 1, columns
    of `text`) of the offending part."""
    node = parse_expression(text)
    for part in walk(node):
        if isinstance(part, Constant):
            raise FormulaError(f"the working set cannot hold a constant such as {part}: it is an "
                               f"expression of the program's variables, e.g. 8*N*3", part.span)
        if isinstance(part, Not) or (isinstance(part, BinOp) and part.op not in "+-*/^") or \
                (isinstance(part, Chain) and part.rest[0][0] in ("and", "or")):
            raise FormulaError("the working set is a size in bytes: comparisons and 'and', 'or', "
                               "'not' have no place in it", part.span or Span.point(1, 1))
    reject_record_columns(node, "the working set")
    check_divisions(node)
    if not np.any(probe_values(node) > 0):
        raise FormulaError(f"the working set {node} is no size: it is 0 or negative whatever the "
                           f"variables (a count of bytes, e.g. 8*N*3)", node.span or Span.point(1, 1))
    return WorkingSet(str(node), node, variables_of(node))
