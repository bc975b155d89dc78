"""llac: the analyzer of CALL traces (fit, interval splitting, prediction, plots).

Kept free of imports so that `import cll_grammar.formula` from the `call` compiler stays cheap.
"""
__version__ = "0.1.0"
