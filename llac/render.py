"""The one renderer: turns command results into text. Nothing else formats output."""
from __future__ import annotations

import csv
import io
import json
from functools import singledispatch

import numpy as np

from cll_grammar.span import printable
from llac.commands.results import Exact, ModelReport, Note, Percent, Table, Text
from llac.numbers import number_text

# C0 and C1 control characters (ESC, CR, TAB, DEL, ...) and the bidirectional overrides
def number(value) -> str:
    """A number in a table: integers as integers, others with 4 significant digits; a
    `Percent` as a percentage, None (no value) and a Percent of NaN as '-'."""
    if value is None:
        return "-"
    if isinstance(value, Percent):      # one that does not exist (NaN) is no value, as None
        return f"{value.fraction:.{value.digits}%}" if np.isfinite(value.fraction) else "-"
    if isinstance(value, (str, bool)):
        return str(value)
    if isinstance(value, Exact):
        from llac.trace import format_numbers
        return str(format_numbers([float(value)])[0])
    value = float(value)
    if not np.isfinite(value):
        return str(value)   # nan, inf, -inf
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


@singledispatch
def render(result) -> str:
    """Text for one result."""
    return str(result)


@render.register
def _(result: Note) -> str:
    return f"warning: {printable(result.text)}" if result.warning else printable(result.text)


@render.register
def _(result: Text) -> str:
    return result.body


@render.register
def _(result: Table) -> str:
    return table_text(result.title, result.headers, result.rows, result.footer)


def table_text(title: str, headers, rows, footer=()) -> str:
    """An aligned text table: numbers right-aligned, text left-aligned, then footer lines
    (text escaped with `printable`: names and header values come from files)."""
    title, headers, footer = printable(title), [printable(h) for h in headers], [printable(f) for f in footer]
    cells = [[printable(number(v)) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(not isinstance(row[i], str) for row in rows) for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()
    out = [title, line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells]
    return "\n".join(out + list(footer))


@render.register
def _(result: ModelReport) -> str:
    model = result.model
    out = [f"model of {model.name}: {model.formula}",
           f"  {int(model.sample_points['count'].sum())} records at {len(model.sample_points['time'])} "
           f"sample points; relative error |predicted - measured| / measured: median "
           f"{model.median_rel_error:.2%}, max {model.max_rel_error:.2%}"]
    if model.excluded:
        out.append(f"  {model.excluded} records were left out (time not a positive finite number)")
    if result.compact:
        for i, piece in enumerate(model.pieces):
            values = ", ".join(f"{name} = {value:.4g}"
                               for name, value in zip(model.formula.constants, piece.constants))
            out.append(f"  interval {i + 1}: {region_text(piece.region)}: {values}")
            out += [f"    beyond the data: {piece.trend.text()}"] if piece.trend else []
        out += [f"  {line}" for line in _hint(result) + _noisy(model)] + [f"  warning: {w}" for w in model.warnings]
        return "\n".join(out)
    for i, piece in enumerate(model.pieces):
        out.append(f"interval {i + 1}: {region_text(piece.region)}  ({piece.npoints} points, "
                   f"{piece.nrecords} records; error median {piece.median_rel_error:.2%}, "
                   f"max {piece.max_rel_error:.2%}, R² {piece.r2:.4f})")
        for name, value, err, p in zip(model.formula.constants, piece.constants, piece.stderr, piece.pvalues):
            out.append(f"  {name:<14} = {_constant_text(name, value, err, p, piece)}")
        out += [f"  beyond the data: {piece.trend.text()}"] if piece.trend else []
    for cut in model.cuts:
        out.append(f"cut at {cut.variable} = {number_text(cut.value)}: {_test_text(cut)}, "
                   f"ΔBIC = {cut.delta_bic:.3g}, RMS error {cut.error_before:.2%} -> {cut.error_after:.2%}")
    if len(model.pieces) > 1:
        out.append("sets ℵ (each constant's values and where they hold):")
        for name, entries in model.aleph().items():
            out += [f"  {name if i == 0 else '':<14} = {value: .4e}  for {region_text(region)}"
                    for i, (value, region) in enumerate(entries)]
    out += _hint(result) + _noisy(model) + [f"warning: {w}" for w in model.warnings]
    return "\n".join(out)


def _constant_text(name: str, value: float, err: float, p: float, piece) -> str:
    """A constant's value with its standard error and p-value, or why it is 0."""
    if name in piece.at_bound:
        return f"{0.0: .4e}   held at its bound 0 (see warning)"
    if name in piece.dropped:
        return f"{0.0: .4e}   set to 0: not significant (p = {p:.2g})"
    return f"{value: .4e} ± {err:.2e}   p = {p:.2g}"


def region_text(region, digits: int = 6) -> str:
    """'16 < N <= 512, P <= 4' for a piece's box, bounds to `digits` significant digits;
    'everywhere' for the whole space."""
    parts = []
    for var, (low, high) in region.items():
        if np.isfinite(low) and np.isfinite(high):
            parts.append(f"{low:.{digits}g} < {var} <= {high:.{digits}g}")
        elif np.isfinite(low):
            parts.append(f"{var} > {low:.{digits}g}")
        elif np.isfinite(high):
            parts.append(f"{var} <= {high:.{digits}g}")
    return ", ".join(parts) or "everywhere"


def _test_text(cut) -> str:
    """What accepted `cut`: the Chow test of a step in the constants, or the trend of the
    residuals in the interval predictions beyond the data use (llac.split)."""
    if cut.test == "trend":
        way = "rise" if cut.F > 0 else "fall"
        return (f"the residuals {way} with {cut.variable} through the last interval (Spearman {cut.F:.2f}, "
                f"p = {cut.p_value:.2g}): predictions beyond the data use its upper half (if the cost per "
                f"unit of work never levels off, the formula misses a term: `suggest` ranks others)")
    return f"F = {cut.F:.3g}, p = {cut.p_value:.2g}"


def _noisy(model) -> list[str]:
    """The lines naming the model's noisy sample points (`llac.noise`), if it has any."""
    from llac.noise import noisy_lines
    return noisy_lines(model)


def _hint(result: ModelReport) -> list[str]:
    """The insignificant constants, and `try: drop` only for those whose drop does not hurt."""
    if not result.model.insignificant:
        return []
    hint = "" if result.droppable is None else \
        f" — try: drop {result.name} {', '.join(result.droppable)}" if result.droppable else \
        " (keep them: dropping would make the fit worse or they matter in another interval)"
    bound = {name for piece in result.model.pieces for name in piece.at_bound}
    why = "p > alpha or held at 0" if bound & set(result.model.insignificant) else "p > alpha"
    return [f"insignificant ({why}) somewhere: {', '.join(result.model.insignificant)}{hint}"]


def machine(result, fmt: str) -> str:
    """A table or model as one JSON document on one line (`fmt` json) or as CSV rows with a
    header (`fmt` csv), for `llac --format`; a number that is not finite is null in JSON
    (standard JSON has none), nan, inf or -inf in CSV."""
    from llac.modelio import model_document, plain
    headers, rows = tabular(result)
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([headers, *([_csv_cell(v) for v in row]
                                                                   for row in plain(rows, finite=False))])
        return out.getvalue().rstrip("\n")
    if isinstance(result, ModelReport):
        document = {**model_document(result.model, result.name),
                    "droppable": list(result.droppable or ())}
    else:
        document = {"table": result.title, "columns": list(headers),
                    "rows": [dict(zip(headers, map(_json_cell, plain(row)))) for row in rows],
                    "notes": list(result.footer)}
    return json.dumps(document, ensure_ascii=False, allow_nan=False)


def _json_cell(value):
    """A table's number as CSV writes it (`16`, not `16.0`): a whole float that a double holds
    exactly is a JSON integer, so that counts and sizes read the same in both formats."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2 ** 53:
        return int(value)
    return value


def _csv_cell(value):
    """A CSV field as the trace and `export` write numbers (docs/data-formats.md, "Numbers":
    shortest exact, `16` not `16.0`), a flag as `true`/`false` (as JSON spells it)."""
    from llac.trace import format_numbers
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(format_numbers([value])[0]) if isinstance(value, float) else value


def tabular(result) -> tuple[tuple[str, ...], list[tuple]]:
    """The headers and rows of a table for a program (its `machine` form if it has one, every
    `Percent` in percent, its column's name saying so, even when all of them are NaN, which
    become None); of a model, one row per constant
    and interval."""
    if isinstance(result, Table):
        headers, rows = result.machine or (result.headers, result.rows)
        percent = [any(isinstance(row[i], Percent) for row in rows) for i in range(len(headers))]
        headers = tuple(f"{h} %" if p and not h.endswith("%") else h for h, p in zip(headers, percent))
        return headers, [tuple((100 * v.fraction if np.isfinite(v.fraction) else None) if isinstance(v, Percent)
                               else v for v in row) for row in rows]
    model = result.model
    # a constant set to 0 (pruned) or held at its bound has no standard error: none, as in text
    rows = [(result.name, i + 1, region_text(p.region), name, value,
             None if name in p.dropped or name in p.at_bound else err,
             None if np.isnan(pvalue) else pvalue)           # none, as `-` in text: a constant at its bound
            for i, p in enumerate(model.pieces)
            for name, value, err, pvalue in zip(model.formula.constants, p.constants, p.stderr, p.pvalues)]
    return ("model", "interval", "region", "constant", "value", "stderr", "p"), rows
