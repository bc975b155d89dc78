"""The Lark grammars of llac and call, shipped inside the installed package as `cll_grammar`.

The `.lark` files live here (`llac.grammars.open_grammar` loads them), and the column names
both tools share (`columns`).
"""
