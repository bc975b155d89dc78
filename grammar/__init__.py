"""The Lark grammars of llac and call, shipped inside the installed package as `cll_grammar`.

Only `.lark` files live here; `llac.grammars.open_grammar` loads them.
"""
