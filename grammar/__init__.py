"""The shared core of llac and call, installed as the package `cll_grammar`.

The Lark grammars (`*.lark`), their loading (`grammars`), the formula model (`formula`) and
source positions (`span`: one `Span`, one caret renderer, one "did you mean" suggester).
`call` and `llac` both import it and never each other.
"""
