"""Where the C code stands at each token of a file, as far as `#pragma cll` placement needs:
the brace depth (and whether the innermost brace opens a struct, union or enum body, an
initializer or a compound literal), the open parentheses (with the word before each), the
previous token, the control header a `)` just closed, and a pending statement pragma
(`#pragma omp for` ..., or the same written `_Pragma("omp for")`)."""
from __future__ import annotations

from call.clex import CodeToken, Directive

CONTROL = {"if", "for", "while", "switch"}
AGGREGATES = {"struct", "union", "enum"}      # keywords whose `{` opens members, not statements
ATTRIBUTES = {"__attribute__", "__attribute", "__declspec", "_Alignas", "alignas"}   # may stand before a tag
INITIALIZER = "initializer"                   # the kind of a `{` that opens `= { ... }`
COMPOUND_LITERAL = "compound literal"         # the kind of a `{` that opens `(type){ ... }`
# keywords after which `(` begins an expression (`return (struct p){ ... }`), not a header
EXPRESSION_KEYWORDS = {"return", "sizeof", "case", "_Alignof", "alignof", "__alignof__", "__extension__"}
# pragmas that apply to the statement after them (OpenMP, OpenACC, loop hints)
STATEMENT_PRAGMAS = {"omp", "acc", "GCC", "clang", "ivdep", "unroll", "simd", "loop"}
STANDALONE = {"barrier", "flush", "taskwait", "taskyield", "threadprivate", "declare", "requires",
              "wait", "update", "diagnostic", "push_options", "pop_options", "optimize", "visibility"}


class CContext:
    """The C context after the tokens and directives seen so far (see the module docstring)."""

    def __init__(self):
        self.depth = 0
        self.braces: list[str] = []       # for each open '{': its aggregate keyword, INITIALIZER,
                                          # COMPOUND_LITERAL, or ''
        self.tag: tuple[str, int, int] | None = None   # struct/union/enum, its paren level, names after it
        self.parens: list[str] = []       # for each open '(', the word before it
        self.closed_pragma_operator = False       # the previous ')' closed `_Pragma(...)`
        self.previous: CodeToken | None = None
        self.closed_control: str | None = None  # the keyword, if the previous ')' closed a control header
        self.closed_type_name = False     # the previous ')' closed what may be `(type-name)`
        self.statement_pragma: str | None = None  # e.g. 'omp' right after '#pragma omp ...'
        self.pragma_operator: str | None = None   # `_Pragma("omp parallel")` when that set it
        self.operator_string: str | None = None   # the string of the `_Pragma(` open now

    def token(self, token: CodeToken) -> None:
        """Follow one token of C code."""
        text = token.text
        closed_pragma_operator = False
        if text == "{":
            self.depth += 1
            self.braces.append(self._brace())
        elif text == "}":
            self.depth -= 1
            if self.braces:
                self.braces.pop()
        elif text == "(":
            self.parens.append(self.previous.text if self.previous else "")
        elif text == ")" and self.parens:
            word = self.parens.pop()
            self.closed_control = word if word in CONTROL else None
            self.closed_type_name = _before_type_name(word)
            closed_pragma_operator = word == "_Pragma"
        elif token.kind == "STRING" and self.parens[-1:] == ["_Pragma"]:
            self.operator_string = text
        self._follow_tag(token)
        self.previous, self.closed_pragma_operator = token, closed_pragma_operator
        self.statement_pragma = self.pragma_operator = None
        if closed_pragma_operator and self.operator_string is not None:
            # `_Pragma("omp parallel")` is `#pragma omp parallel`: it applies to the next statement
            words = self.operator_string.strip('"').replace('\\"', '"').split()
            if len(words) > 1 and words[0] in STATEMENT_PRAGMAS and words[1] not in STANDALONE:
                self.statement_pragma = words[0]
                self.pragma_operator = f"_Pragma({self.operator_string})"
        if closed_pragma_operator:
            self.operator_string = None

    def _follow_tag(self, token: CodeToken) -> None:
        """Follow `struct [attributes] [NAME] {`: the keyword, then only attributes (with
        their parentheses) and at most one name before the brace; anything else (`=`, `;`, a
        second name as in `struct S f(void) {`) ends it."""
        if token.text in AGGREGATES:
            self.tag = (token.text, len(self.parens), 0)
        elif self.tag is not None and token.text != "{":
            keyword, level, names = self.tag
            inside = len(self.parens) > level or (token.text == ")" and len(self.parens) == level)
            if inside:
                return
            if token.kind == "IDENT" and token.text not in ATTRIBUTES and names == 0:
                self.tag = (keyword, level, 1)
            elif token.kind != "IDENT" or token.text not in ATTRIBUTES:
                self.tag = None

    def _brace(self) -> str:
        """The kind of a `{` here: the keyword of the struct, union or enum whose body it
        opens (`struct {`, `union U {`, `struct __attribute__((packed)) P {`),
        COMPOUND_LITERAL after `(type-name)`, INITIALIZER after `=`, the kind of the initializer
        or compound literal it stands in, or '' for a block."""
        tag, self.tag = self.tag, None
        if tag is not None:
            return tag[0]
        previous = self.previous.text if self.previous else ""
        if previous == ")" and self.closed_type_name:
            return COMPOUND_LITERAL
        if previous == "=":
            return INITIALIZER
        return self.initializer

    @property
    def aggregate(self) -> str:
        """The keyword of the struct, union or enum whose members stand here, or ''."""
        return self.braces[-1] if self.braces and self.braces[-1] in AGGREGATES else ""

    @property
    def initializer(self) -> str:
        """The kind of the innermost brace when it holds an initializer list: INITIALIZER
        (`= { ... }`) or COMPOUND_LITERAL (`(type){ ... }`); '' otherwise."""
        kind = self.braces[-1] if self.braces else ""
        return kind if kind in (INITIALIZER, COMPOUND_LITERAL) else ""

    def directive(self, directive: Directive) -> None:
        """Follow a `#pragma` line: one that applies to the next statement is remembered."""
        words = directive.body.split()
        if directive.namespace in STATEMENT_PRAGMAS and words and words[0] not in STANDALONE:
            self.statement_pragma = directive.namespace
            self.pragma_operator = None

    def header(self) -> str | None:
        """The control header whose body begins here ('else', 'do', 'if (...)'), if any."""
        previous = self.previous.text if self.previous else None
        if previous in ("else", "do"):
            return previous
        return f"{self.closed_control} (...)" if previous == ")" and self.closed_control else None


def _before_type_name(word: str) -> bool:
    """Whether parentheses opened after `word` (the token before the `(`) and followed by `{`
    held a type name, making the brace a compound literal's: after an operator, `(`, `,`, `;`
    or a keyword that begins an expression (`return`, `sizeof`). After another identifier (a
    control keyword, a function's or a macro's name, `__attribute__`) or after `)` or `]` (a
    declarator's parameters: `int (*pick(int n))(int) {`) they held a header or parameters,
    and the brace opens a block."""
    name = word[:1].isalpha() or word[:1] == "_"
    return word in EXPRESSION_KEYWORDS or not (name or word in (")", "]"))
