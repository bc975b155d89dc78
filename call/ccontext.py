"""Where the C code stands at each token of a file, as far as `#pragma cll` placement needs:
the brace depth (and whether the innermost brace opens a struct, union or enum body), the
open parentheses (with the word before each), the previous token, the control header a `)`
just closed, and a pending statement pragma (`#pragma omp for` ...)."""
from __future__ import annotations

from call.clex import CodeToken, Directive

CONTROL = {"if", "for", "while", "switch"}
AGGREGATES = {"struct", "union", "enum"}      # keywords whose `{` opens members, not statements
# pragmas that apply to the statement after them (OpenMP, OpenACC, loop hints)
STATEMENT_PRAGMAS = {"omp", "acc", "GCC", "clang", "ivdep", "unroll", "simd", "loop"}
STANDALONE = {"barrier", "flush", "taskwait", "taskyield", "threadprivate", "declare", "requires",
              "wait", "update", "diagnostic", "push_options", "pop_options", "optimize", "visibility"}


class CContext:
    """The C context after the tokens and directives seen so far (see the module docstring)."""

    def __init__(self):
        self.depth = 0
        self.braces: list[str] = []       # for each open '{', the aggregate keyword it belongs to, or ''
        self.before_previous: CodeToken | None = None
        self.parens: list[str] = []       # for each open '(', the word before it
        self.previous: CodeToken | None = None
        self.closed_control: str | None = None  # the keyword, if the previous ')' closed a control header
        self.statement_pragma: str | None = None  # e.g. 'omp' right after '#pragma omp ...'

    def token(self, token: CodeToken) -> None:
        """Follow one token of C code."""
        text = token.text
        if text == "{":
            self.depth += 1
            self.braces.append(self._aggregate())
        elif text == "}":
            self.depth -= 1
            if self.braces:
                self.braces.pop()
        elif text == "(":
            self.parens.append(self.previous.text if self.previous else "")
        elif text == ")" and self.parens:
            word = self.parens.pop()
            self.closed_control = word if word in CONTROL else None
        self.before_previous, self.previous = self.previous, token
        self.statement_pragma = None

    def _aggregate(self) -> str:
        """The keyword of the struct, union or enum whose body a `{` here opens
        (`struct {`, `union U {`), or '' for any other brace."""
        words = [t.text if t else "" for t in (self.before_previous, self.previous)]
        if words[1] in AGGREGATES:
            return words[1]
        named = self.previous is not None and self.previous.kind == "IDENT"
        return words[0] if named and words[0] in AGGREGATES else ""

    @property
    def aggregate(self) -> str:
        """The keyword of the struct, union or enum whose members stand here, or ''."""
        return self.braces[-1] if self.braces else ""

    def directive(self, directive: Directive) -> None:
        """Follow a `#pragma` line: one that applies to the next statement is remembered."""
        words = directive.body.split()
        if directive.namespace in STATEMENT_PRAGMAS and words and words[0] not in STANDALONE:
            self.statement_pragma = directive.namespace

    def header(self) -> str | None:
        """The control header whose body begins here ('else', 'do', 'if (...)'), if any."""
        previous = self.previous.text if self.previous else None
        if previous in ("else", "do"):
            return previous
        return f"{self.closed_control} (...)" if previous == ")" and self.closed_control else None
