"""The accuracy table (markdown) and the check of issue 5's targets against it."""
from __future__ import annotations

import math

from .evaluate import Row

HEADER = ("case", "tool", "model", "held-out median", "held-out max", "vs truth median", "vs truth max")
TWO_TIMES_BETTER = ("two-params", "regime-slope-x3", "jump", "three-regimes")
REAL_TARGET = 0.05


def percent(x: float) -> str:
    """A relative error as a percentage; `-` where there is none."""
    if math.isnan(x):
        return "-"
    return "inf" if math.isinf(x) else f"{100 * x:.1f}%"


def table(rows: list[Row]) -> str:
    """The rows as a markdown table (model texts shortened, `|` escaped)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        model = r.model if len(r.model) <= 90 else r.model[:87] + "..."
        cells = (r.case, r.tool, model.replace("|", "\\|"), percent(r.median), percent(r.max),
                 percent(r.median_truth), percent(r.max_truth))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(rows: list[Row]) -> list[str]:
    """One line per case judging issue 5's targets: llac (defaults) median held-out error
    <= 5% on a real case; on a synthetic case (error against the truth) no worse than
    Extra-P's best modeler, and 2x better on regime changes and two parameters."""
    lines = []
    for case in dict.fromkeys(r.case for r in rows):
        mine = {r.tool: r for r in rows if r.case == case}
        llac = mine.get("llac")
        if llac is None:
            continue
        if math.isnan(llac.median_truth):
            ok = llac.median <= REAL_TARGET
            lines.append(f"{'ok  ' if ok else 'MISS'} {case}: llac median {percent(llac.median)} "
                         f"(target <= {percent(REAL_TARGET)})")
            continue
        extrap = [r.median_truth for t, r in mine.items() if t.startswith("extrap") and not math.isnan(r.median_truth)]
        if not extrap:
            continue
        factor = 2.0 if case in TWO_TIMES_BETTER else 1.0
        ok = round(llac.median_truth * factor, 3) <= round(min(extrap), 3)   # as the table shows
        lines.append(f"{'ok  ' if ok else 'MISS'} {case}: llac {percent(llac.median_truth)} vs best "
                     f"Extra-P {percent(min(extrap))} against the truth"
                     + (" (target: 2x better)" if factor > 1 else " (target: no worse)"))
    return lines
