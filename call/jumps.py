"""Where each `break` and `continue` of a C file goes: the loop or switch it leaves.

`#pragma cll for` puts a loop around code that has none in the plain program, so a `break` or
`continue` there that belongs to a loop or switch outside the pragma would bind to the
generated loop instead; an experiment that such a jump leaves is never ended. To see which
jumps do that, this module follows the statement structure of the code tokens (blocks,
if/else, for/while/do/switch with or without braces, labels, case labels, loop macros) far
enough to pair each jump with its construct, and each `case`/`default` label with its
switch (a jump to a label inside an experiment enters it without its begin). A macro whose
replacement holds a `break` or `continue` of its own (`#define STOP_IF(c) if (c) break`) is
such a jump where it is used: the constructs around each use are found too. It never fails:
odd input still ends.
"""
from __future__ import annotations

from call.clex import CodeToken

# C keywords that may stand as `WORD (...) {`: their statements are not loop macros.
NOT_MACROS = frozenset({"if", "return", "sizeof", "_Alignof", "_Generic", "_Static_assert"})

Enclosing = tuple[CodeToken | None, CodeToken | None]   # what a `continue`, a `break` there leaves


def jump_targets(tokens: list[CodeToken]) -> dict[CodeToken, CodeToken | None]:
    """For each `break`/`continue` token, the keyword token (`for`, `while`, `do`, `switch`)
    of the construct it leaves, or None when it stands in no loop (no loop or switch for a
    `break`), where a C compiler rejects it. Labels too, the places a jump may enter: a
    `case`/`default` token gives its switch (the innermost loop or switch, None outside
    any), the name of a goto label None."""
    return _walked(tokens).targets


def macro_uses(tokens: list[CodeToken], names: frozenset[str]) -> dict[CodeToken, Enclosing]:
    """For each identifier token in `names` (macros whose replacement holds a jump:
    jumps_in_macro), the constructs a `continue` and a `break` would leave there, as (loop,
    loop or switch), None where there is none."""
    return _walked(tokens, names).uses if names else {}


def jumps_in_macro(tokens: list[CodeToken]) -> list[str]:
    """The jumps ('break', 'continue') of a macro's replacement `tokens` that leave it: those
    not inside a loop (or, for `break`, a switch) of the replacement itself (`if (c) break`
    does, `do { ... break; } while (0)` does not)."""
    brace = [CodeToken("PUNCT", "{", 0, 0)], [CodeToken("PUNCT", "}", 0, 0)]
    targets = jump_targets(brace[0] + tokens + brace[1])
    return sorted({token.text for token, target in targets.items()
                   if token.text in ("break", "continue") and target is None})


def _walked(tokens: list[CodeToken], names: frozenset[str] = frozenset()) -> "_Walker":
    walker = _Walker(tokens, names)
    try:
        walker.file()
    except RecursionError:   # statements nested a thousand deep: what was paired so far
        pass
    return walker


class _Walker:
    def __init__(self, tokens: list[CodeToken], names: frozenset[str] = frozenset()):
        self.tokens = tokens
        self.i = 0
        self.targets: dict[CodeToken, CodeToken | None] = {}
        self.names = names
        self.uses: dict[CodeToken, Enclosing] = {}

    def peek(self, ahead: int = 0) -> str | None:
        index = self.i + ahead
        return self.tokens[index].text if index < len(self.tokens) else None

    def file(self):
        """File scope: every top-level `{...}` (a function body, or a harmless struct or
        initializer) is walked as a block."""
        while self.i < len(self.tokens):
            if self.peek() == "{":
                self.block(None, None)
            else:
                self.i += 1

    def block(self, loop, breakable):
        self.i += 1
        while self.i < len(self.tokens) and self.peek() != "}":
            self.statement(loop, breakable)
        self.i += 1

    def statement(self, loop, breakable):
        """One statement from the current token; `loop` / `breakable` are the keyword tokens
        a `continue` / `break` here would leave."""
        token = self.tokens[self.i] if self.i < len(self.tokens) else None
        if token is None or token.text == "}":
            return
        word = token.text if token.kind == "IDENT" else None
        if token.text == "{":
            self.block(loop, breakable)
        elif word in ("for", "while", "switch") or (word and self.macro_header()):
            if word in self.names:
                self.uses[token] = (loop, breakable)
            self.i += 1      # a macro `NAME(...)` before a block is taken as a loop (FOREACH)
            self.parens(loop, breakable)
            self.statement(loop if word == "switch" else token, token)
        elif word == "do":
            self.i += 1
            self.statement(token, token)
            self.simple(loop, breakable)        # while (...);
        elif word == "if":
            self.i += 1
            self.parens(loop, breakable)
            self.statement(loop, breakable)
            if self.peek() == "else":
                self.i += 1
                self.statement(loop, breakable)
        elif word in ("case", "default") or (word and self.peek(1) == ":"):
            self.targets[token] = breakable if word in ("case", "default") else None
            while self.i < len(self.tokens) and self.peek() not in (":", "}"):
                self.i += 1
            self.i += self.peek() == ":"
            self.statement(loop, breakable)
        else:
            self.simple(loop, breakable)

    def macro_header(self) -> bool:
        """`NAME ( ... ) {` at the start of a statement: no C statement begins so, a macro
        that expands to a loop header (`list_for_each(p, head) { ... }`) does."""
        if self.peek(1) != "(" or self.peek() in NOT_MACROS:
            return False
        depth, index = 0, self.i + 1
        while index < len(self.tokens):
            depth += {"(": 1, ")": -1}.get(self.tokens[index].text, 0)
            index += 1
            if depth == 0:
                return index < len(self.tokens) and self.tokens[index].text == "{"
        return False

    def parens(self, loop, breakable):
        if self.peek() == "(":
            self.simple(loop, breakable, until=")")

    def simple(self, loop, breakable, until=";"):
        """Up to and including `until` outside brackets (or up to a `}` that closes the block)."""
        depth = 0
        while self.i < len(self.tokens):
            token = self.tokens[self.i]
            if token.text in ("(", "[", "{"):
                depth += 1
            elif token.text == "}" and depth == 0:
                return
            elif token.text in (")", "]", "}"):
                depth = max(depth - 1, 0)
            elif token.kind == "IDENT" and token.text in ("break", "continue"):
                self.targets[token] = breakable if token.text == "break" else loop
            elif token.kind == "IDENT" and token.text in self.names:
                self.uses[token] = (loop, breakable)
            self.i += 1
            if depth == 0 and token.text == until:
                return


def statement_end(tokens: list[CodeToken], start: int) -> CodeToken:
    """The last token of the C statement that begins at `tokens[start]` (a block, a loop with
    its body, an if with its else, a simple statement up to its `;`): the extent of the
    statement an OpenMP construct applies to (call.omp)."""
    walker = _Walker(tokens)
    walker.i = start
    try:
        walker.statement(None, None)
    except RecursionError:   # statements nested a thousand deep: to the end of the file
        walker.i = len(tokens)
    return tokens[min(max(walker.i - 1, start), len(tokens) - 1)]
