"""Source positions shared by call and llac: one `Span`, one caret renderer, one suggester.

Every message that points into a text (a C file, an llac script, a formula in a string)
locates itself with a `Span` and shows the place with `excerpt`; every "did you mean"
comes from `nearest` (worded by `suggest`).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Span:
    """Where a piece of source is: 1-based line and column of its start, and of the column
    just after its end (`end_column` is exclusive, as Lark counts)."""
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int, width: int = 1) -> "Span":
        """`width` characters on one line from (line, column): a caret position or a word."""
        return cls(line, column, line, column + width)

    @classmethod
    def of(cls, first, last=None) -> "Span | None":
        """From the start of `first` to the end of `last` (default `first`), both Lark tokens
        or tree metas; None when `first` carries no position (an empty rule)."""
        last = first if last is None else last
        if not getattr(first, "line", None):
            return None
        return cls(first.line, first.column, last.end_line, last.end_column)


def excerpt(text: str, span: Span, indent: str = "") -> str:
    """The source line `text` of `span` and a caret line under the span's columns, as
    compilers show it. Tabs before the column are kept so that the caret lines up; the
    carets cover the span on its first line, at least one, at most to the end of the line."""
    text = text.rstrip("\r\n")
    pad = "".join(c if c == "\t" else " " for c in text[:max(span.column - 1, 0)])
    width = max(1, span.end_column - span.column) if span.end_line == span.line else 1
    carets = "^" * min(width, max(1, len(text) - span.column + 1))
    return f"{indent}{text}\n{indent}{pad}{carets}"


def nearest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate most like `word` by difflib's similarity ratio, or None when none
    reaches `cutoff` (0 always answers, for a word that must be one of the candidates)."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return close[0] if close else None


def suggest(word: str, candidates: Iterable[str]) -> str:
    """' (did you mean X?)' for the nearest candidate, or '' when none is close."""
    close = nearest(word, candidates)
    return f" (did you mean {close!r}?)" if close else ""
