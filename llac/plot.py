"""Plots of a model and its measurements with plotext (imported only here, lazily): text for
a terminal (sized to it, coloured where it has colour), for a file or a pipe (80 columns,
no colour), or a web page.

One figure: the measured times (per sample point, summarised as in the fit) as one marker per
interval, or per series under `by` (noisy points, `llac.noise`, with their own marker, except
under `by`, where the series' marker wins and the legend counts them; points of several series
in one place drawn as their count, a digit, named in the legend), drawn after every line, the
model as one line per interval, dotted vertical lines at the cuts of the x variable, or the
relative residuals; the legend goes below the figure, where it hides no data. Log axes are
drawn as log10 of the values with readable ticks (1e3, 1e4 ...), so cut lines stay visible;
an integer variable (P, N) is ticked at whole numbers, and a single value gets an axis
around it (`axis_ticks`). The line charts of other commands follow the same rules.
"""
from __future__ import annotations

import math

import html
import os
import shutil
import textwrap
from dataclasses import dataclass, field

import numpy as np

from llac.errors import LlacError
from llac.noise import NOISY_FACTOR, model_spread, noisy, typical
from llac.render import region_text

WIDTH, HEIGHT = 78, 22          # a plot in a script, a pipe or a text file: 80 columns
HTML_WIDTH, HTML_HEIGHT = 110, 32
MODEL_POINTS = 60
MEASURED_MARKERS = ("x", "o", "+", "*", "#", "%", "&", "$")   # per interval (per series under by): points
LINE_MARKERS = (".", ":", "~", "=", "-", "'", "^", "_")        # per interval (per series): the model's line
VALUE_TICKS = 8                 # an integer variable with at most this many values: ticks at them
NOISY_MARKER = "@"                                    # a noisy sample point (llac.noise)
COLORS = ("blue", "red", "green", "magenta", "cyan", "orange")


@dataclass(frozen=True)
class Canvas:
    """Where a figure goes: its size in characters and whether it may use colour."""
    width: int = WIDTH
    height: int = HEIGHT
    color: bool = False


NARROWEST = 40      # columns: a plot's axes, labels and legend need them


def terminal_canvas(stream) -> Canvas:
    """The canvas for text printed on `stream`: the terminal's size and colour when `stream`
    is a terminal (colour unless NO_COLOR is set and not empty, or TERM is dumb), else 80
    columns without colour, so that a script's or a pipe's output reads in a file. A terminal
    narrower than NARROWEST + 2 columns is an error that says so (LlacError)."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return Canvas()
    columns, lines = shutil.get_terminal_size((WIDTH + 2, HEIGHT + 8))
    if columns - 2 < NARROWEST:          # drawn wider, every row would wrap into the next
        raise LlacError(f"the terminal is {columns} columns wide, and a plot needs {NARROWEST + 2}: widen it, "
                        f"or save the plot with `to \"FILE\"` (text, or .html)")
    color = not os.environ.get("NO_COLOR") and os.environ.get("TERM", "") != "dumb"
    return Canvas(min(columns - 2, 240), min(max(lines - 8, 12), 80), color)


@dataclass
class _Axes:
    """The axes of one model figure: names, log or linear, and the legend collected while drawing."""
    x_name: str
    logx: bool
    logy: bool
    legend: list[str] = field(default_factory=list)
    left_out: dict = field(default_factory=dict)    # variable -> points a log axis cannot show
    shown: int = 0
    drawn: list = field(default_factory=list)        # (x, y) of the points drawn, for the axes' ranges

    def leave_out(self, x: np.ndarray, y: np.ndarray, y_name: str) -> np.ndarray:
        """Which points can be drawn (`keep`); those a log axis cannot show are counted by the
        variable at fault, for the note that says so."""
        keep = self.keep(x, y)
        for name, values, logarithmic in ((self.x_name, x, self.logx), (y_name, y, self.logy)):
            if logarithmic and (count := int(np.sum(~(values > 0) & np.isfinite(values)))):
                self.left_out[name] = self.left_out.get(name, 0) + count
        self.shown += int(keep.sum())
        self.drawn.append((x[keep], y[keep]))
        return keep

    def notes(self) -> list[str]:
        """One note per variable whose non-positive values a log axis left out."""
        return [f"{count} sample point{'s' * (count != 1)} with {name} <= 0 left out (a log "
                f"axis shows only positive values)" for name, count in self.left_out.items()]

    def x(self, values: np.ndarray) -> np.ndarray:
        """x values as drawn (log10 on a log axis)."""
        return np.log10(values) if self.logx else values

    def y(self, values: np.ndarray) -> np.ndarray:
        """y values as drawn (log10 on a log axis)."""
        return np.log10(values) if self.logy else values

    def keep(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Which points can be drawn: finite, and positive on a log axis."""
        ok = np.isfinite(x) & np.isfinite(y)
        return ok & (x > 0 if self.logx else True) & (y > 0 if self.logy else True)


def plot_model(model, vs: str | None = None, by: str | None = None, scale: str = "linear",
               residuals: bool = False, canvas: Canvas = Canvas(), levels=()) -> str:
    """The figure as text: the measurements (one marker per interval), the model's line per
    interval, the cuts of the x variable as dotted lines, the values of x where the working
    set leaves a cache level (`levels`: (name, x) pairs) as double lines, and a legend below
    the figure (so that it hides no data); ANSI colours when `canvas.color`."""
    built = _model_figure(model, vs, by, scale, residuals, canvas, levels)
    if isinstance(built, str):
        return built
    figure, legend = built
    return figure.build().string(colorless=not canvas.color) + "\n" + legend


def plot_model_html(model, vs: str | None = None, by: str | None = None, scale: str = "linear",
                    residuals: bool = False, levels=()) -> str:
    """The figure as a web page: the coloured figure, its legend and the table of the
    measured sample points it shows."""
    built = _model_figure(model, vs, by, scale, residuals, Canvas(HTML_WIDTH, HTML_HEIGHT, True), levels)
    title = html.escape(f"{model.name}: {model.formula}")
    if isinstance(built, str):
        body = f"<p>{html.escape(built)}</p>"
    else:
        figure, legend = built
        body = f"{figure.build().html()}\n<pre>{html.escape(legend)}</pre>\n{_data_table(model)}"
    return (f"<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            "<style>pre {font-family: monospace; line-height: 1.05} "
            "td, th {padding: 0 0.8em; text-align: right; font-family: monospace}</style>\n"
            f"</head>\n<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n")


def text_page(title: str, text: str) -> str:
    """A figure drawn as text (line_chart's), as a web page: its title and the text as it is."""
    title = html.escape(title)
    return (f"<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            "<style>pre {font-family: monospace; line-height: 1.05}</style>\n"
            f"</head>\n<body>\n<h1>{title}</h1>\n<pre>{html.escape(text)}</pre>\n</body>\n</html>\n")


def _data_table(model) -> str:
    """The measured sample points as an HTML table: variables, time, records, spread (with
    the noisy ones marked), interval."""
    data, names = model.sample_points, list(model.formula.variables)
    piece = model.predict({v: data[v] for v in names}).piece if names else np.zeros(len(data["time"]), int)
    spread = model_spread(data)
    marked = noisy(spread)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in [*names, "time (s)", "records", "spread", "interval"])
    rows = ["<tr>" + "".join(f"<td>{data[v][i]:g}</td>" for v in names)
            + f"<td>{data['time'][i]:.6g}</td><td>{int(data['count'][i])}</td>"
            + f"<td>{_spread_cell(spread[i], marked[i])}</td><td>{piece[i] + 1}</td></tr>"
            for i in range(len(data["time"]))]
    return f"<table>\n<tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"


def _spread_cell(spread: float, marked: bool) -> str:
    """'2.3%', '38% noisy' or '-' (fewer than two repetitions, or a model saved without it)."""
    return "-" if not np.isfinite(spread) else f"{spread:.1%}" + (" noisy" if marked else "")


def _model_figure(model, vs, by, scale, residuals, canvas: Canvas, levels=()):
    """plotext's figure of the model and its legend text, or a one-line message when the
    formula has no variable to plot against."""
    variables = model.formula.variables
    x_name = vs or (variables[0] if variables else None)
    if x_name is None:
        return f"{model.name}: the formula {model.formula} has no variable to plot against"
    axes = _Axes(x_name, scale == "loglog", scale in ("log", "loglog") and not residuals)
    figure = _figure(canvas.width, canvas.height, canvas.color)
    data = model.sample_points
    groups = np.unique(data[by]) if by else [None]
    drawn = [_Group(model, axes, np.ones(len(data["time"]), bool) if value is None else data[by] == value,
                    None if value is None else g, residuals) for g, value in enumerate(groups)]
    for group in drawn:          # every line before any point: a later series' line covers no point
        group.draw_lines(figure, canvas.color)
    shared, merged = _coinciding(drawn, axes, canvas.height)
    for group, together in zip(drawn, shared):
        group.draw_points(figure, canvas.color, together)
    if by:
        axes.legend += _coinciding_note(drawn, shared, merged, [f"{by}={value:g}" for value in groups], residuals)
    for cut in model.cuts:
        if cut.variable == x_name and not residuals and (cut.value > 0 or not axes.logx):
            figure.line(float(axes.x(np.array(cut.value))), orientation="vertical", style="dotted")
            axes.legend.append(f"┊ cut {x_name}={cut.value:.4g}")
    for label, at in levels:
        if at > 0 or not axes.logx:
            figure.line(float(axes.x(np.array(at))), orientation="vertical", style="double")
            axes.legend.append(f"║ the working set leaves {label} at {x_name}≈{at:.4g}")
    _ticks(figure, axes, canvas.width)
    if residuals:
        _residual_axis(figure, axes, scale == "loglog")
    figure.title(f"{model.name}: {'relative error of the model' if residuals else model.formula}")
    figure.label(x_name + (" (log scale)" if axes.logx else ""), "x")
    if not axes.shown:
        return f"{model.name}: nothing to plot on log axes: {'; '.join(axes.notes())}"
    axes.legend += [f"note: {note}" for note in axes.notes()]
    legend = _legend(model, axes, [f"{by}={value:g}" for value in groups] if by else [], residuals)
    return figure, "\n".join(textwrap.fill(line, canvas.width, subsequent_indent="    ") for line in legend)


def _legend(model, axes: _Axes, series: list[str], residuals: bool = False) -> list[str]:
    """One line per interval with its markers and region; under `by`, one per series with its
    markers, then the intervals' regions (the cuts tell them apart); then the noisy marker,
    the cuts and notes. Of `residuals`, the model is the zero line."""
    def markers(i: int) -> str:
        model_line = "" if residuals else f", {LINE_MARKERS[i % len(LINE_MARKERS)]} model"
        return f"{MEASURED_MARKERS[i % len(MEASURED_MARKERS)]} measured{model_line}"
    regions = [f"interval {i + 1} ({region_text(piece.region, digits=4)})" for i, piece in enumerate(model.pieces)]
    if series:
        lines = [f"{markers(g)}: {name}" for g, name in enumerate(series)]
        lines.append(f"model: {', '.join(regions)}")
        if len(series) > len(MEASURED_MARKERS):
            lines.append(f"note: {len(series)} series share {len(MEASURED_MARKERS)} markers (pick fewer with where)")
    else:
        lines = [f"{markers(i)}: {region}" for i, region in enumerate(regions)]
    spread = model_spread(model.sample_points)
    count = int(noisy(spread).sum())
    if count and series:
        many = count > 1
        lines.append(f"{count} noisy point{'s' if many else ''} (repetitions vary more than "
                     f"{NOISY_FACTOR:g}x the typical {typical(spread):.1%}) "
                     f"{'keep their' if many else 'keeps its'} series' marker; a plot without by "
                     f"marks {'them' if many else 'it'} {NOISY_MARKER}")
    elif count:
        lines.append(f"{NOISY_MARKER} measured, noisy: repetitions vary more than {NOISY_FACTOR:g}x "
                     f"the typical {typical(spread):.1%}")
    return lines + axes.legend


def _residual_axis(figure, axes: _Axes, loglog: bool) -> None:
    """The residual plot's y axis: from the lowest relative error (0 at most) to the highest
    (0 at least), ticks in percent with 0 among them, and the model drawn as the zero line
    (the legend says so). Its y axis is linear under `loglog` too, which a note says: a
    relative error can be 0 or negative."""
    ys = np.concatenate([drawn[1] for drawn in axes.drawn]) if axes.drawn else np.zeros(1)
    ys = ys[np.isfinite(ys)]
    low, high = min(float(ys.min(initial=0.0)), -0.01), max(float(ys.max(initial=0.0)), 0.01)   # ±1% at least
    positions, _ = linear_ticks(low, high)
    figure.ruler("y").ticks(positions, [f"{100 * p:.4g}%" for p in positions]).lim(low, high)
    figure.line(0.0, orientation="horizontal", style="dotted")
    axes.legend.append("┈ the model: zero relative error; relative error = (model - measured) / measured")
    if loglog:
        axes.legend.append("note: the y axis stays linear (a relative error can be 0 or negative); "
                           "loglog makes x logarithmic")


def _ticks(figure, axes: _Axes, width: int) -> None:
    """Readable ticks and ranges (`axis_ticks`) for the points drawn: on the x axis, and on a
    log y axis; a linear y axis keeps plotext's ticks unless all its values are one."""
    xs, ys = (np.concatenate([drawn[i] for drawn in axes.drawn]) for i in (0, 1))
    _set_axes(figure, xs, ys, axes.logx, axes.logy, width)


def _set_axes(figure, xs, ys, logx: bool, logy: bool, width: int) -> None:
    """Set the x axis's ticks and range for the values `xs`, and the y axis's for `ys` when it
    is logarithmic or all its values are one (a linear y axis keeps plotext's own ticks,
    which also span the model's lines)."""
    for axis, values, logarithmic in (("x", xs, logx), ("y", ys, logy)):
        finite = values[np.isfinite(values)]
        if axis == "x" or logarithmic or (len(finite) and finite.min() == finite.max()):
            found = axis_ticks(values, logarithmic, width - 10)
            if found:
                low, high, positions, labels = found
                figure.ruler(axis).ticks(positions, labels).lim(low, high)


def axis_ticks(values, logarithmic: bool, room: int):
    """The range (as drawn: log10 on a log axis) and the ticks (positions, labels) of an axis
    that shows `values` (those finite, and positive on a log axis), or None when there is none.
    The range spans the values, not only the ticks (plotext would cut the points beyond the
    outer ticks); a single value gets a range around it (a tenth to ten times it on a log axis,
    0 to twice it on a linear one). An integer variable (P, N, threads) gets integer ticks
    only: at its values when it has at most VALUE_TICKS of them (as many as stand apart in
    `room` characters), else at round whole steps."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & ((values > 0) if logarithmic else True)]
    if not len(values):
        return None
    low, high = float(values.min()), float(values.max())
    distinct = np.unique(values)
    integer = bool(np.all(distinct == np.round(distinct)))
    label = (lambda v: f"{v:.0f}" if abs(v) < 1e6 else tick_label(v)) if integer else tick_label
    if low == high and not logarithmic:
        half = abs(low) or 1.0
        positions = [low - half, low, low + half]
        return low - half, low + half, positions, [label(p) for p in positions]
    low, high = (low / 10, high * 10) if low == high else (low, high)
    drawn = np.log10 if logarithmic else np.asarray
    if integer and len(distinct) <= VALUE_TICKS:
        labels = [label(v) for v in distinct]
        ticks = _spaced([float(p) for p in drawn(distinct)], labels, room / float(drawn(high) - drawn(low)))
    else:
        ticks = log_ticks(low, high) if logarithmic else linear_ticks(low, high, integer=integer)
    return float(drawn(low)), float(drawn(high)), *ticks


def _spaced(positions: list, labels: list, per_unit: float) -> tuple[list, list]:
    """The ticks (increasing positions) whose labels stand apart at `per_unit` characters per
    unit of position: the first, each next one at least a label's width further, and the last
    in place of the one before it when they would touch."""
    gap = max(map(len, labels)) + 1
    kept = [0]
    for i in range(1, len(positions)):
        if (positions[i] - positions[kept[-1]]) * per_unit >= gap:
            kept.append(i)
    if kept[-1] != len(positions) - 1 and len(kept) > 1:
        kept[-1] = len(positions) - 1
    return [positions[i] for i in kept], [labels[i] for i in kept]


def linear_ticks(low: float, high: float, most: int = 7, integer: bool = False) -> tuple[list[float], list[str]]:
    """Ticks at multiples of a round step (1, 2 or 5 times a power of ten) from `low` to
    `high`; a whole step at least when `integer` (the axis of an integer variable)."""
    raw = (high - low) / (most - 1)
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(step, 1.0) if integer else step
    positions = np.arange(np.ceil(low / step), np.floor(high / step) + 1) * step
    return [float(p) for p in positions], [tick_label(float(p)) for p in positions]


def log_ticks(low: float, high: float, most: int = 8) -> tuple[list[float], list[str]]:
    """Tick positions (log10 of the values) and labels for a log axis from `low` to `high`
    (both > 0): the powers of ten inside, with 2 and 5 times them when fewer than three
    powers fit, at most `most` ticks."""
    lo, hi = np.log10(low), np.log10(high)
    inside = lambda p: lo - 1e-9 <= p <= hi + 1e-9
    values = [10.0 ** d for d in range(int(np.floor(lo)), int(np.ceil(hi)) + 1) if inside(d)]
    if len(values) < 3:
        values = [m * 10.0 ** d for d in range(int(np.floor(lo)), int(np.ceil(hi)) + 1)
                  for m in (1, 2, 5) if inside(np.log10(m * 10.0 ** d))] or sorted({low, high})
    values = values[::-(-len(values) // most)]
    return [float(np.log10(v)) for v in values], [tick_label(v) for v in values]


def tick_label(value: float) -> str:
    """A short axis label: 0.01 ... 9999 as they are, else 1e4, 2e-5, 5e6."""
    if value == 0 or 0.01 <= abs(value) < 10_000:
        return f"{value:.4g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def _figure(width: int, height: int, color: bool = False):
    """plotext's figure, cleared and sized; without colour unless `color` (plain text reads
    in a file)."""
    import plotext

    figure = plotext.figure
    figure.clear()
    figure.parent().limit(False, False)      # the size asked for, not capped to the terminal's
    figure.plot_size(width, height)
    figure.theme("simple" if color else "colorless")
    return figure


def bar_chart(title: str, labels, series, markers, stacked: bool = False,
              width: int = WIDTH, height: int = HEIGHT) -> str:
    """Bars at the text `labels`, one group per label with a bar per series (side by side, or
    `stacked`), each series drawn with its marker from `markers` (the title should say which
    is which: a legend would cover the bars). Every bar is at least a column wide and a blank
    column parts each group from the next: where the groups do not fit in one chart they are
    drawn in several, one under the other, on the same scale."""
    labels, series = list(labels), [list(s) for s in series]
    across = 1 if stacked else len(series)                     # bars side by side in a group
    fits = max(1, (width - BAR_MARGIN) // (across + BAR_GAP))
    fits = -(-len(labels) // -(-len(labels) // fits))          # as many in each chart
    top = max(max(map(sum, zip(*series))) if stacked else max(map(max, series)), 0.0)
    charts = []
    for first in range(0, len(labels), fits):
        shown = slice(first, first + fits)
        part = title if len(labels) <= fits else \
            f"{title} [bars {first + 1}-{min(first + fits, len(labels))} of {len(labels)}]"
        charts.append(_bars(part, labels[shown], [s[shown] for s in series], markers, stacked, top,
                            width, height))
    return "\n".join(charts)


BAR_MARGIN, BAR_GAP = 10, 2     # columns beside the plot area (y ticks, frame); per group beyond its bars


def _bars(title, labels, series, markers, stacked, top, width, height) -> str:
    """One chart of bar_chart's: the groups at 1, 2, ... on an x axis from 0.5 that gives each
    group the same columns, each bar a whole number of them minus a margin (plotext rounds a
    bar's edges to columns: bars of fractional widths touch or come out uneven)."""
    figure = _figure(width, height)
    per_group = (width - BAR_MARGIN) / len(labels)
    across = 1 if stacked else len(series)
    columns = max(1, math.floor((per_group - BAR_GAP + 0.5) / across))      # per bar
    bar_width = (columns - 0.5) / per_group
    for i, values in enumerate([series] if stacked else [[s] for s in series]):
        offset = (i - (across - 1) / 2) * columns / per_group
        figure.draw(figure.bar([g + 1 + offset for g in range(len(labels))],
                               values[0] if len(values) == 1 else values, stacked=stacked,
                               marker=markers[i] if not stacked else list(markers)[:len(series)],
                               width=bar_width))
    figure.ruler("x").lim(0.5, len(labels) + 0.5).ticks(*_spaced(list(range(1, len(labels) + 1)),
                                                                 labels, per_group))
    figure.ruler("y").lim(0, top or 1)
    figure.title(title)
    return figure.build().string(colorless=True)


def line_chart(title: str, x, series: dict, x_label: str, width: int = WIDTH, height: int = HEIGHT,
               log_x: bool = False, log_y: bool = False) -> str:
    """One line per named series over the values `x` (e.g. times by P), each with its own
    marker, told in a legend below the figure (where it covers no line) that reads without
    colours; `log_x` and `log_y` space an axis by its logarithm (sizes from KiB to GiB, costs
    from 0.2 to 200 ns). Ticks and ranges as `axis_ticks` gives them (P at whole numbers)."""
    figure = _figure(width, height)
    at = np.log10(np.asarray(x, dtype=float)) if log_x else list(x)
    legend = []
    for i, (name, values) in enumerate(series.items()):
        marker = MEASURED_MARKERS[i % len(MEASURED_MARKERS)]
        heights = np.log10(np.asarray(values, dtype=float)) if log_y else list(values)
        figure.draw(figure.signal(list(at), list(heights), marker=marker).lines())
        legend.append(f"{marker} {name}")
    shown = [v for values in series.values() for v in values]
    _set_axes(figure, np.asarray(x, dtype=float), np.asarray(shown, dtype=float), log_x, log_y, width)
    figure.title(title)
    figure.label(x_label, "x")
    return figure.build().string(colorless=True) + "\n" + "\n".join(legend)


class _Group:
    """The measurements of one group (all of them, or one series under `by`) and the model's
    line for each interval: their markers and colour are the interval's, or under `by` the
    `series`'s (the number of the group), so that intervals, or series, read apart without
    colour (in a file, under NO_COLOR)."""

    def __init__(self, model, axes: _Axes, rows: np.ndarray, series: int | None, residuals: bool):
        data = model.sample_points
        self.model, self.axes, self.series, self.residuals = model, axes, series, residuals
        self.x, self.time = data[axes.x_name][rows], data["time"][rows]
        self.others = {v: data[v][rows] for v in model.formula.variables if v != axes.x_name}
        self.measured = model.predict({axes.x_name: self.x, **self.others})
        self.y = (self.measured.values - self.time) / self.time if residuals else self.time
        self.keep = axes.leave_out(self.x, self.y, "relative error" if residuals else "time")
        # under `by` the series' marker wins: a noisy mark shared by every series would hide it
        self.noisy = noisy(model_spread(data))[rows] & (series is None)

    def marker(self, symbols, interval: int, color: bool):
        """The interval's (or the series') symbol of `symbols`, in its colour when `color`."""
        import plotext

        i = interval if self.series is None else self.series
        symbol, tint = symbols[i % len(symbols)], COLORS[i % len(COLORS)]
        return plotext.marker(symbol, plotext.pixel(tint)) if color else symbol

    def draw_lines(self, figure, color: bool) -> None:
        """The model's line over the group's drawn points (none for residuals)."""
        if not self.residuals and self.keep.any():
            _draw_model(figure, self.model, self.axes, self.x[self.keep], self.others,
                        lambda i: self.marker(LINE_MARKERS, i, color))

    def draw_points(self, figure, color: bool, together: np.ndarray) -> None:
        """The measured points, each with its interval's (series') marker, noisy ones with
        NOISY_MARKER; those where `together` counts other series (`_coinciding`) as that
        count of series, a digit."""
        alone = self.keep & (together == 0)
        for i in np.unique(self.measured.piece[self.keep]):
            for inside, symbols in ((alone & (self.measured.piece == i) & ~self.noisy, MEASURED_MARKERS),
                                    (alone & (self.measured.piece == i) & self.noisy,
                                     (NOISY_MARKER,) * len(MEASURED_MARKERS))):
                self._draw(figure, inside, self.marker(symbols, max(int(i), 0), color))
        for count in np.unique(together[together > 0]):
            self._draw(figure, together == count, str(min(int(count), 9)))

    def _draw(self, figure, inside: np.ndarray, marker) -> None:
        """The points where `inside`, with `marker`."""
        if inside.any():
            figure.draw(figure.signal(list(self.axes.x(self.x[inside])), list(self.axes.y(self.y[inside])),
                                      marker=marker))


def _coinciding(groups: list[_Group], axes: _Axes, height: int) -> tuple[list[np.ndarray], list[list]]:
    """Per group, at each point, how many series' points (its own included) lie within one
    character row of it at the same x (0 where it stands alone): drawn there, the last
    series' marker would hide the others'. The rows are the figure's plot area (its `height`
    less title, frame and x labels) over the span of the points drawn. Also the runs of
    points so merged, each a list of (series, index)."""
    counts = [np.zeros(len(g.x), int) for g in groups]
    merged: list[list] = []
    if len(groups) < 2:
        return counts, merged
    ys = np.concatenate([axes.y(g.y[g.keep]) for g in groups])
    row = (ys.max() - ys.min()) / max(height - 5, 1) if len(ys) else 0.0
    points = [(axes.y(g.y[i]), s, i) for s, g in enumerate(groups) for i in np.flatnonzero(g.keep)]
    at_x: dict = {}
    for y, s, i in points:
        at_x.setdefault(float(groups[s].x[i]), []).append((y, s, i))
    for members in at_x.values():
        members.sort()
        start = 0
        for end in range(1, len(members) + 1):    # runs of points within one row of their lowest
            if end == len(members) or members[end][0] - members[start][0] > row:
                run = members[start:end]
                series = len({s for _, s, _ in run})
                for _, s, i in run if series > 1 else ():
                    counts[s][i] = series
                if series > 1:
                    merged.append([(s, i) for _, s, i in run])
                start = end
    return counts, merged


def _coinciding_note(groups: list[_Group], shared: list[np.ndarray], merged: list[list], names: list[str],
                     residuals: bool) -> list[str]:
    """The legend's line for the digits `_coinciding` drew: which series, at how many values
    of x, and how far apart the times (errors) merged into one digit are at most."""
    involved = [name for name, together in zip(names, shared) if together.any()]
    if not involved:
        return []
    values = {float(groups[s].x[i]) for run in merged for s, i in run}
    apart = 0.0
    for run in merged:
        here = [float(groups[s].y[i]) for s, i in run]
        apart = max(apart, max(here) - min(here) if residuals else max(here) / min(here) - 1)
    how = (f"their relative errors at most {apart:.2%} apart" if residuals else
           f"their times within {apart:.1%} of each other; where model lines meet, {involved[-1]}'s is on top")
    digits = ", ".join(str(min(int(c), 9)) for c in np.unique(np.concatenate(shared)) if c)
    return [f"{digits} measured: that many series in one place (one series' marker would hide the others'): "
            f"{', '.join(involved)} at {len(values)} value{'s' * (len(values) != 1)} of "
            f"{groups[0].axes.x_name} ({how})"]


def _draw_model(figure, model, axes: _Axes, x: np.ndarray, others: dict, marker) -> None:
    """The model's line over the range of `x`, one per interval (`marker(i)`), the other
    variables at their median."""
    low, high = x.min(), x.max()
    grid = np.unique(np.concatenate([np.geomspace(low, high, MODEL_POINTS) if low > 0
                                     else np.linspace(low, high, MODEL_POINTS), x]))
    fixed = {v: np.full(len(grid), np.median(vals)) for v, vals in others.items()}
    prediction = model.predict({axes.x_name: grid, **fixed})
    drawable = axes.keep(grid, prediction.values)
    for i in np.unique(prediction.piece):
        inside = drawable & (prediction.piece == i)
        if i >= 0 and inside.sum() > 1:
            figure.draw(figure.signal(list(axes.x(grid[inside])), list(axes.y(prediction.values[inside])),
                                      marker=marker(int(i))).lines())
