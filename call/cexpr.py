"""The value of a C `#if` expression once its macros are replaced, as gcc computes it
(C11 6.10.1): integers of 64 bits (intmax_t, uintmax_t), hexadecimal, octal and binary
literals with their `u`/`l` suffixes, character constants, division that truncates toward
zero, the remainder with the dividend's sign, unsigned arithmetic modulo 2^64 when either
operand is unsigned (so `-1 < 0u` is false), and `&&`, `||`, `?:` that leave the operand
they skip unevaluated (`0 && 1/0` is 0).

Whatever gcc itself refuses or only warns about with a result of its own (a division by zero
that is evaluated, a floating or malformed literal, a shift by 64 or more, a name left after
the macros were replaced) is undecided: `truth` returns None and call then reads every arm
of the conditional, as it does for a macro it does not know.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token, Tree
from lark.exceptions import LarkError

from cll_grammar.grammars import open_grammar

BITS = 64
MASK = (1 << BITS) - 1
INTMAX = (1 << (BITS - 1)) - 1
ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27,
           "\\": 92, "'": 39, '"': 34, "?": 63}


class Undecided(Exception):
    """The expression has no value call can be sure gcc gives it."""


@dataclass(frozen=True)
class Value:
    """An integer of the preprocessor: its value in its type's range, and the type."""
    number: int
    unsigned: bool = False


def truth(expression: str) -> bool | None:
    """Whether `#if EXPRESSION` keeps its arm, as gcc decides it; None when undecided.
    `expression` has no macros left (the caller replaced them and `defined`)."""
    try:
        tree = open_grammar("ccondition.lark").parse(expression)
        return evaluate(tree, live=True).number != 0
    except (LarkError, Undecided, RecursionError):
        return None


def evaluate(tree: Tree | Token, live: bool) -> Value:
    """The Value of a ccondition.lark tree. `live` False: an operand C leaves unevaluated
    (a division by zero there is no error; its type still counts)."""
    kind = tree.data if isinstance(tree, Tree) else tree.type
    if kind == "number":
        return literal(str(tree.children[0]))
    if kind == "char":
        return character(str(tree.children[0]))
    if kind == "unary":
        operator, operand = tree.children
        return unary(str(operator), evaluate(operand, live))
    if kind == "logical":
        left, operator, right = tree.children
        first = evaluate(left, live).number != 0
        skips = first if str(operator) == "||" else not first
        second = evaluate(right, live and not skips).number != 0
        return Value(int(first or second) if str(operator) == "||" else int(first and second))
    if kind == "ternary":
        condition, yes, no = tree.children
        chosen = evaluate(condition, live).number != 0
        a, b = evaluate(yes, live and chosen), evaluate(no, live and not chosen)
        unsigned = a.unsigned or b.unsigned
        return convert(a if chosen else b, unsigned)
    if kind == "binary":
        left, operator, right = tree.children
        return binary(evaluate(left, live), str(operator), evaluate(right, live), live)
    raise Undecided(kind)          # a name no macro replaced: gcc would read 0, with a header's say


def wrap(number: int, unsigned: bool) -> Value:
    """`number` reduced to its type's range (modulo 2^64, as gcc's preprocessor wraps)."""
    number &= MASK
    if not unsigned and number > INTMAX:
        number -= 1 << BITS
    return Value(number, unsigned)


def convert(value: Value, unsigned: bool) -> Value:
    """`value` in the unsigned type when `unsigned` (the usual arithmetic conversions)."""
    return wrap(value.number, True) if unsigned and not value.unsigned else value


def literal(text: str) -> Value:
    """An integer literal: decimal, 0x hexadecimal, 0b binary (a GNU extension), 0 octal,
    with suffixes u, l, ll in any case and order. One too large for intmax_t is unsigned."""
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)([uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?",
                         text)
    if not match:
        raise Undecided(text)      # a floating constant, a bad digit or suffix: gcc refuses it
    digits, suffix = match.groups()
    if digits[:2] in ("0x", "0X"):
        number = int(digits[2:], 16)
    elif digits[:2] in ("0b", "0B"):
        number = int(digits[2:], 2)
    elif digits.startswith("0") and len(digits) > 1:
        if not re.fullmatch(r"[0-7]+", digits):
            raise Undecided(text)  # 08, 09: not octal
        number = int(digits, 8)
    else:
        number = int(digits)
    if number > MASK:
        raise Undecided(text)      # too large for any integer type
    return Value(number, bool(suffix and "u" in suffix.lower()) or number > INTMAX)


def character(text: str) -> Value:
    """A plain character constant ('a', '\\n', '\\x41', '\\101') as an int: gcc's char is
    signed here, so '\\377' is -1. Wide, multi-character and other forms are undecided."""
    body = text[1:-1] if text.startswith("'") else None
    if body is None:
        raise Undecided(text)
    if len(body) == 1:
        number = ord(body)
    elif re.fullmatch(r"\\[0-7]{1,3}", body):
        number = int(body[1:], 8)
    elif re.fullmatch(r"\\x[0-9a-fA-F]{1,2}", body):
        number = int(body[2:], 16)
    elif len(body) == 2 and body[0] == "\\" and body[1] in ESCAPES:
        number = ESCAPES[body[1]]
    else:
        raise Undecided(text)
    if number > 255:
        raise Undecided(text)
    return Value(number - 256 if number > 127 else number)


def unary(operator: str, value: Value) -> Value:
    """+x, -x, ~x (in x's type) and !x (an int 0 or 1)."""
    if operator == "!":
        return Value(int(value.number == 0))
    if operator == "-":
        return wrap(-value.number, value.unsigned)
    if operator == "~":
        return wrap(~value.number, value.unsigned)
    return value


def binary(left: Value, operator: str, right: Value, live: bool) -> Value:
    """`left OPERATOR right` with C's rules (see the module's docstring)."""
    if operator in ("<<", ">>"):
        return shift(left, operator, right)
    unsigned = left.unsigned or right.unsigned
    a, b = convert(left, unsigned).number, convert(right, unsigned).number
    if operator in ("==", "!=", "<", ">", "<=", ">="):
        return Value(int({"==": a == b, "!=": a != b, "<": a < b, ">": a > b,
                          "<=": a <= b, ">=": a >= b}[operator]))
    if operator in ("/", "%"):
        if b == 0:
            if live:
                raise Undecided("division by zero")   # gcc: an error
            return Value(0, unsigned)
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)   # toward zero
        return wrap(quotient if operator == "/" else a - quotient * b, unsigned)
    result = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[operator]
    return wrap(result, unsigned)


def shift(left: Value, operator: str, right: Value) -> Value:
    """A shift: the result has the left operand's type; a count that is negative or not
    below 64 is undecided (gcc warns and picks a value of its own)."""
    count = right.number
    if count < 0 or count >= BITS:
        raise Undecided("shift count")
    if operator == "<<":
        return wrap(left.number << count, left.unsigned)
    return wrap(left.number >> count, left.unsigned)     # arithmetic for a negative signed value
