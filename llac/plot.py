"""Terminal plots of a model and its measurements with plotext (imported only here, lazily).

One figure: the measured times (median per sample point) as markers, the model as one line
per interval, dotted vertical lines at the cuts of the x variable; or the relative residuals.
"""
from __future__ import annotations

import numpy as np

WIDTH, HEIGHT = 78, 22
MODEL_POINTS = 60
SERIES_MARKERS = ("x", "o", "+", "*")


def plot_model(model, vs: str | None = None, by: str | None = None, scale: str = "linear",
               residuals: bool = False, width: int = WIDTH, height: int = HEIGHT) -> str:
    """The figure as plain text, `width` columns wide (readable in 80 columns)."""
    variables = model.formula.variables
    x_name = vs or (variables[0] if variables else None)
    if x_name is None:
        return f"{model.name}: the formula {model.formula} has no variable to plot against"
    data = model.sample_points
    shown, notes = _on_log_axes(data, x_name, scale, residuals)
    if not shown.any():
        return f"{model.name}: nothing to plot on log axes: {'; '.join(notes)}"
    figure = _figure(width, height)
    groups = np.unique(data[by][shown]) if by else [None]
    for value in groups:
        rows = shown if value is None else shown & (data[by] == value)
        suffix = "" if value is None else f"{by}={value:g}"
        _draw_group(figure, model, x_name, rows, suffix, residuals, scale != "linear")
    for cut in model.cuts:
        if cut.variable == x_name and not residuals and (scale != "loglog" or cut.value > 0):
            figure.line(cut.value, orientation="vertical", style="dotted", label=f"cut {x_name}={cut.value:g}")
    if scale in ("log", "loglog") and not residuals:
        _log_scale(figure, "y", data["time"][shown], notes)
    if scale == "loglog":
        _log_scale(figure, "x", data[x_name][shown], notes)
    figure.title(f"{model.name}: {'relative error of the model' if residuals else model.formula}")
    figure.label(x_name, "x")
    return "\n".join([figure.build().string(colorless=True), *(f"note: {n}" for n in notes)])


def _on_log_axes(data: dict, x_name: str, scale: str, residuals: bool) -> tuple[np.ndarray, list[str]]:
    """Which sample points a log axis can show (x > 0 on `loglog`, time > 0 on a log y axis),
    and a note for each kind left out, so that no point disappears silently."""
    shown, notes = np.ones(len(data["time"]), bool), []
    checks = [(x_name, scale == "loglog"), ("time", scale in ("log", "loglog") and not residuals)]
    for name, logarithmic in checks:
        bad = logarithmic & ~(data[name] > 0)
        if (count := int(bad.sum())):
            notes.append(f"{count} sample point{'s' * (count != 1)} with {name} <= 0 "
                         f"left out (a log axis shows only positive values)")
            shown &= ~bad
    return shown, notes


def _log_scale(figure, axis: str, values: np.ndarray, notes: list[str]) -> None:
    """Make `axis` logarithmic, unless every value on it is the same: plotext pads such a
    range down to 0 and fails on its logarithm, so the axis stays linear (with a note)."""
    if len(values) and values.min() == values.max():
        notes.append(f"the {axis} axis stays linear: every value on it is {values[0]:g}")
        return
    figure.ruler(axis).scale("log")


def _figure(width: int, height: int):
    """plotext's figure, cleared, sized and colourless (terminal text that reads in a file)."""
    import plotext

    figure = plotext.figure
    figure.clear()
    figure.plot_size(width, height)
    figure.theme("colorless")
    return figure


def bar_chart(title: str, labels, series, markers, stacked: bool = False,
              width: int = WIDTH, height: int = HEIGHT) -> str:
    """Bars at the text `labels`, one group per series (side by side, or `stacked`), each
    series drawn with its marker from `markers` (the title should say which is which: a
    legend would cover the bars)."""
    figure = _figure(width, height)
    heights = series[0] if len(series) == 1 else [list(s) for s in series]
    figure.draw(figure.bar(list(labels), heights, marker=list(markers)[:len(series)], stacked=stacked))
    figure.title(title)
    return figure.build().string(colorless=True)


def line_chart(title: str, x, series: dict, x_label: str, width: int = WIDTH, height: int = HEIGHT) -> str:
    """One line per named series over the values `x` (e.g. times by P), each with its own
    marker, so the legend reads without colours."""
    figure = _figure(width, height)
    for i, (name, values) in enumerate(series.items()):
        marker = SERIES_MARKERS[i % len(SERIES_MARKERS)]
        figure.draw(figure.signal(list(x), list(values), marker=marker).lines().label(name))
    figure.title(title)
    figure.label(x_label, "x")
    return figure.build().string(colorless=True)


def _draw_group(figure, model, x_name: str, rows: np.ndarray, suffix: str, residuals: bool,
                logy: bool) -> None:
    """Markers for the measurements of one group, and the model's line for each interval
    (on a log axis, values <= 0 are left out)."""
    data = model.sample_points
    rows = rows & (data["time"] > 0) if logy and not residuals else rows
    x, time = data[x_name][rows], data["time"][rows]
    others = {v: data[v][rows] for v in model.formula.variables if v != x_name}
    if residuals:
        predicted = model.predict({x_name: x, **others}).values
        figure.draw(figure.signal(list(x), list((predicted - time) / time), marker="x")
                    .label(suffix or "(model-measured)/measured"))
        return
    if not len(x):
        return
    fixed = {v: np.median(vals) for v, vals in others.items()}
    grid = np.unique(np.concatenate([np.geomspace(x.min(), x.max(), MODEL_POINTS) if x.min() > 0
                                     else np.linspace(x.min(), x.max(), MODEL_POINTS), x]))
    prediction = model.predict({x_name: grid, **{v: np.full(len(grid), c) for v, c in fixed.items()}})
    first = prediction.piece.max() if len(prediction.piece) else -1
    for i in np.unique(prediction.piece):
        inside = (prediction.piece == i) & ((prediction.values > 0) | (not logy))
        if i >= 0 and inside.sum() > 1:
            line = figure.signal(list(grid[inside]), list(prediction.values[inside])).lines()
            if not suffix or i == first:   # grouped: one legend entry per group
                line.label(suffix or f"model, interval {i + 1}")
            figure.draw(line)
    measured = figure.signal(list(x), list(time), marker="x")
    figure.draw(measured if suffix else measured.label("measured"))
