"""Lex C source just enough to find `#pragma` lines and the code tokens around them.

Comments, string and character literals and line splices are recognised (grammar/ctokens.lark),
so pragma-looking text inside a comment or a string is not a pragma, and a directive continued
with a trailing backslash is joined into one logical line whose characters still map back to
their line and column in the file. A line that begins with the digraph `%:` is a preprocessor
line as one that begins with `#` (C95 and gcc read `%:` as `#`): `%:pragma cll` is a pragma.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from lark.exceptions import UnexpectedCharacters

from cll_grammar.grammars import open_grammar
from cll_grammar.span import Span

SIGNIFICANT = {"IDENT", "PUNCT", "NUMBER", "STRING", "CHAR", "STRAY", "HASH"}
# the digraphs of C95 (gcc reads them as the punctuators they stand for; `%:` is a `#`, _digraph)
DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]"}


@dataclass(frozen=True)
class CodeToken:
    """A token of ordinary C code (not of a preprocessor line): its kind, text and place."""
    kind: str
    text: str
    line: int
    column: int


@dataclass(frozen=True)
class Directive:
    """A preprocessor line. For `#pragma NS BODY`: `namespace` is NS, `body` the text after it
    with splices removed and comments blanked; `positions[i]` is (line, column) of body[i]."""
    line: int
    column: int
    last_line: int
    namespace: str | None
    namespace_column: int
    body: str
    positions: tuple[tuple[int, int], ...]
    operators: tuple[CodeToken, ...] = ()   # the strings of `_Pragma("...")` in a #define's body

    def position(self, index: int) -> tuple[int, int]:
        """(line, column) in the file of body character `index` (clamped to the body's end)."""
        if not self.positions:
            return self.line, self.namespace_column
        if index >= len(self.positions):
            line, col = self.positions[-1]
            return line, col + 1 + index - len(self.positions)
        return self.positions[max(index, 0)]


class CLexError(Exception):
    """C text the lexer cannot read, with its span in the file."""

    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.message, self.span = message, span


def lex(text: str) -> list[CodeToken | Directive]:
    """The file as an ordered stream of code tokens and preprocessor directives."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def place(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    try:
        tokens = list(open_grammar("ctokens.lark", lexer="basic").lex(text))
    except UnexpectedCharacters as err:
        raise CLexError(f"cannot read C text at {text[err.pos_in_stream]!r}",
                        Span.point(err.line, err.column)) from None
    stream: list[CodeToken | Directive] = []
    for line_tokens, end in _logical_lines(tokens, len(text)):
        first = next((t for t in line_tokens if t.type != "COMMENT"), None)
        if first is not None and (first.type == "HASH" or _digraph(line_tokens, first)):
            stream.append(_directive(text, line_tokens, end, place))
        else:
            stream.extend(CodeToken(t.type, DIGRAPHS.get(str(t), str(t)), t.line, t.column)
                          for t in line_tokens if t.type in SIGNIFICANT)
    return stream


def _logical_lines(tokens, text_end: int):
    """Yield (tokens of one logical line, offset where it ends); splices do not end a line."""
    current = []
    for tok in tokens:
        if tok.type == "NEWLINE":
            yield current, tok.start_pos
            current = []
        else:
            current.append(tok)
    if current:
        yield current, text_end


def _digraph(tokens, first) -> bool:
    """Whether a line begins with the digraph `%:`, which C (since C95) and gcc read as `#`:
    `%:pragma cll ...` is a pragma, `%:define` a definition."""
    if first.type != "PUNCT" or str(first) != "%":
        return False
    after = tokens[tokens.index(first) + 1:]
    return bool(after) and str(after[0]) == ":" and after[0].start_pos == first.end_pos


def _directive(text: str, tokens, end: int, place) -> Directive:
    words = [t for t in tokens if t.type not in ("COMMENT", "SPLICE")]
    if words[0].type != "HASH":         # `%:`: its `:` is part of the `#`
        words = words[:1] + words[2:]
    hash_line, hash_col = words[0].line, words[0].column
    last_line = place(max(end - 1, words[0].start_pos))[0]
    is_pragma = len(words) >= 3 and str(words[1]) == "pragma" and words[2].type == "IDENT"
    if not is_pragma:
        return Directive(hash_line, hash_col, last_line, None, 0, "", (), _pragma_operators(words))
    namespace = words[2]
    chars, positions = [], []
    cursor = namespace.end_pos
    for tok in tokens:
        if tok.start_pos < cursor or tok.type not in ("COMMENT", "SPLICE"):
            continue
        _take(text, cursor, tok.start_pos, chars, positions, place)
        if tok.type == "COMMENT":
            chars.append(" ")
            positions.append(place(tok.start_pos))
        cursor = tok.end_pos
    _take(text, cursor, end, chars, positions, place)
    return Directive(hash_line, hash_col, last_line, str(namespace), namespace.column,
                     "".join(chars).rstrip("\r"), tuple(positions))


def _take(text, start, stop, chars, positions, place):
    for offset in range(start, stop):
        chars.append(text[offset])
        positions.append(place(offset))


def _pragma_operators(words) -> tuple[CodeToken, ...]:
    """The string tokens of `_Pragma ( "..." )` among a directive's tokens (a macro that
    would expand to a pragma call never sees)."""
    return tuple(CodeToken(c.type, str(c), c.line, c.column) for a, b, c in zip(words, words[1:], words[2:])
                 if str(a) == "_Pragma" and str(b) == "(" and c.type == "STRING")
