"""Experiments that are the unbraced body of a control header (`if (c) #pragma cll a ...
stmt; #pragma cll end a`): each must enclose exactly one statement, a `{...}` block or a
simple statement up to its `;`, then its `end`; the generated code wraps them in braces."""
from __future__ import annotations

from dataclasses import dataclass

from call.balance import Balance
from call.ccontext import CContext
from call.clex import CodeToken
from call.pragmas import Begin, End, Pragma
from call.program import Findings

# control headers whose unbraced body may be one experiment (not `switch`: a jump to a case
# label inside the body would skip the begin)
WRAPPABLE = {"if", "for", "while", "else", "do"}
# a wrapped statement may not itself be a control statement
NESTED_CONTROL = {"if", "for", "while", "do", "switch", "else"}


@dataclass(eq=False)
class _Wrap:
    """An experiment begun as the unbraced body of `header`: it must enclose one statement."""
    begin: Begin
    header: str             # 'else', 'do', 'if (...)', ...
    depth: int              # brace depth at the begin
    first: CodeToken | None = None  # the statement's first token
    done: bool = False      # the statement is complete; only its `end` may follow


class Wraps:
    """The unbraced-body experiments pending at the current point, innermost last, followed
    through the C context `context`; a misuse is reported to `findings` once and the
    experiment forgotten by `balance`."""

    def __init__(self, findings: Findings, balance: Balance, context: CContext):
        self.findings = findings
        self.balance = balance
        self.context = context
        self.pending: list[_Wrap] = []

    def begin(self, pragma: Begin, header: str) -> None:
        """Experiment `pragma` begins as the unbraced body of `header`."""
        self.pending.append(_Wrap(pragma, header, self.context.depth))

    def clear(self) -> None:
        """The end of a function: nothing is pending across it."""
        self.pending.clear()

    def code(self, token: CodeToken) -> None:
        """Follow one token of C code in every pending statement."""
        for wrap in list(self.pending):   # a failure drops a wrap and those inside it
            if wrap in self.pending:
                self._follow(token, wrap)

    def governs(self, pragma: Pragma) -> bool:
        """Whether `pragma` stands where the innermost pending experiment allows only its
        statement and then its end (so wrapped() decides about it)."""
        wrap = self.pending[-1] if self.pending else None
        return wrap is not None and (wrap.first is None or wrap.done or self.context.depth == wrap.depth
                                     or isinstance(pragma, End) and self.balance.innermost() is wrap.begin)

    def wrapped(self, pragma: Pragma, what: str) -> bool:
        """A pragma (described as `what`) where governs() holds: True for the experiment's
        own `end` after its statement, an error otherwise."""
        wrap = self.pending[-1]
        name = wrap.begin.name
        if isinstance(pragma, End) and pragma.name == name and wrap.done:
            self.pending.pop()
            self.findings.program.wrapped.update((wrap.begin.site, pragma.site))
            return True
        if wrap.first is None:
            problem = f"before the statement of experiment {name!r}"
        elif not wrap.done:
            problem = f"inside the statement that experiment {name!r} encloses"
        else:
            problem = f"between the statement of experiment {name!r} and its 'end {name}'"
        self._failed(wrap, pragma, f"{what} {problem}: experiment {name!r} is the body of "
                                   f"'{wrap.header}' without braces, so it must enclose exactly "
                                   f"one statement; add braces")
        return False

    def _follow(self, token: CodeToken, wrap: _Wrap) -> None:
        """Follow the one statement an unbraced-body experiment encloses: a `{...}` block or a
        simple statement up to its `;`; anything else there is an error."""
        name = wrap.begin.name
        depth = self.context.depth
        if depth < wrap.depth:
            return self._failed(wrap, token, f"'#pragma cll end {name}' is missing before this "
                                f"'}}': experiment {name!r} is the body of '{wrap.header}' "
                                f"without braces, so one statement and then its 'end' follow it")
        if wrap.done:
            return self._failed(wrap, token, f"only one statement may stand between "
                                f"'#pragma cll {name}' and '#pragma cll end {name}' here: the "
                                f"experiment is the body of '{wrap.header}' without braces; "
                                f"add braces to time more")
        if wrap.first is None:
            wrap.first = token
            if token.kind == "IDENT" and token.text in NESTED_CONTROL:
                return self._failed(wrap, token, f"experiment {name!r} is the body of "
                                    f"'{wrap.header}' without braces and encloses a nested "
                                    f"'{token.text}' statement, which it cannot wrap: add braces")
        closing = "}" if wrap.first.text == "{" else ";"
        wrap.done = token.text == closing and depth == wrap.depth and not self.context.parens

    def _failed(self, wrap: _Wrap, at: Pragma | CodeToken, message: str) -> None:
        """Report a misused unbraced-body experiment once: forget it so its `end` and the end of
        the function do not report it again."""
        self.findings.error(at, message, [self.findings.note(wrap.begin, f"experiment {wrap.begin.name!r} "
                                                                         f"begins here, after '{wrap.header}'")])
        del self.pending[self.pending.index(wrap):]
        self.balance.forget(wrap.begin)
