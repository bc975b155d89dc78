"""How llac writes a number inside a sentence (notes, warnings, errors): a whole number as it
is (`N=4194304`, where Python's `:g` gives `4.1943e+06` and loses the value), a large one
without an exponent, the others with `digits` significant digits (`0.0125`, `2.5e-07`)."""
from __future__ import annotations

import math

WHOLE = 1e15        # beyond this a float's whole value is not exact


def number_text(value: float, digits: int = 6) -> str:
    """`value` for a sentence: whole numbers exactly, 10⁴ and more rounded to `digits`
    significant digits but written out (`131100`), the rest as `:g` with `digits`."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < WHOLE:
        return str(int(value))
    if 1e4 <= abs(value) < WHOLE:
        return f"{float(f'{value:.{digits}g}'):.0f}"
    return f"{value:.{digits}g}"
