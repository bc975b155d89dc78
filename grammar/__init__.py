"""The shared core of llac and call, installed as the package `cll_grammar`.

The Lark grammars (`*.lark`), their loading (`grammars`), the formula model (`formula`),
source positions (`span`: one `Span`, one caret renderer, one "did you mean" suggester) and
the column names both tools share (`columns`). `call` and `llac` both import it and never
each other.
"""
