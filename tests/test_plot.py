"""Plots (issue 8, item 17): saved to text and HTML files, sized to the terminal, intervals
told apart by markers (and colours), a legend below the figure, cut markers on log scales,
readable log-axis labels. Driven as a user does (`python -m llac -c ...`) and by unit."""
import html.parser
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cll_grammar.formula import parse_formula
from llac.commands import keywords
from llac.experiment import Experiment
from llac.model import fit_experiment
from llac.parse import parse
from llac.plot import Canvas, axis_ticks, log_ticks, linear_ticks, plot_model, terminal_canvas, tick_label
from support.parallel import write_sweep
from support.runtime import run_bounded
from support.traces import trace_text, write_matinit

REPO = Path(__file__).resolve().parent.parent


def llac(command: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", "-c", command], cwd=cwd, text=True,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env})


@pytest.fixture
def work(tmp_path):
    write_matinit(tmp_path / "matinit.cll.1.dat")
    return tmp_path


def frame(text: str) -> list[str]:
    """The lines of the figure's plotting area (between the box's top and bottom edges)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[top + 1:bottom]


def test_plot_to_a_text_file_tells_intervals_apart_with_cut_and_readable_log_labels(work):
    r = llac('load "matinit.cll.1.dat"; fit colinit; plot colinit loglog to "p.txt"', work)
    assert r.returncode == 0, r.stderr
    assert "wrote the plot of colinit to p.txt (text)" in r.stdout
    text = (work / "p.txt").read_text()
    area = "\n".join(frame(text))
    assert "x" in area and "o" in area            # the measured points of intervals 1 and 2
    assert "." in area and ":" in area            # the model's line in each interval
    assert "┊" in area                            # the cut, on log scales too
    legend = text.split("└", 1)[1].split("\n", 1)[1]     # below the bottom edge
    assert "x measured, . model: interval 1 (N <= 362)" in legend
    assert "o measured, : model: interval 2 (N > 362)" in legend and "┊ cut N=362" in legend
    x_labels = next(line for line in legend.splitlines() if line.strip()).split()
    assert x_labels == ["16", "32", "64", "128", "256", "512", "1024", "2048"]    # N's values
    y_labels = [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line]
    assert y_labels == ["0.01", "1e-3", "1e-4", "1e-5"]
    assert "\x1b" not in text and max(map(len, text.splitlines())) <= 80


def test_plot_to_an_html_file_is_a_page_with_the_figure_and_the_data(work):
    r = llac('load "matinit.cll.1.dat"; plot colinit log to "p.html"', work)
    assert r.returncode == 0, r.stderr
    page = (work / "p.html").read_text()
    assert page.startswith("<!DOCTYPE html>\n<html>") and page.rstrip().endswith("</html>")
    tags = []

    class Tags(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append(tag)

    Tags().feed(page)
    assert {"html", "head", "meta", "title", "body", "pre", "span", "table", "td"} <= set(tags)
    for n in (16, 256, 2048):                     # sample points of the fixture
        assert f"<td>{n}</td>" in page
    assert page.count("<tr>") == 1 + 8 and "interval 2" in page and "color:" in page


def test_plot_to_a_bad_or_unwritable_file_is_one_clear_error(work):
    r = llac('load "matinit.cll.1.dat"; plot colinit to "p.png"', work)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "<command>:1:" in r.stderr and "name a .txt file (text) or an .html file" in r.stderr
    r = llac('load "matinit.cll.1.dat"; plot colinit to "no/such/dir/p.txt"', work)
    assert r.returncode == 1 and "cannot write 'no/such/dir/p.txt'" in r.stderr


def test_plot_to_an_existing_file_refuses_unless_replace(work):
    (work / "p.txt").write_text("keep me\n")
    r = llac('load "matinit.cll.1.dat"; plot colinit to "p.txt"', work)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "plot to 'p.txt': the file exists; write `replace` after its name" in r.stderr
    assert (work / "p.txt").read_text() == "keep me\n"
    r = llac('load "matinit.cll.1.dat"; plot colinit to "p.txt" replace', work)
    assert r.returncode == 0, r.stderr
    assert "wrote the plot of colinit to p.txt" in r.stdout and "┊ cut N=362" in (work / "p.txt").read_text()


def test_plot_in_a_pipe_is_80_columns_without_colour_even_with_a_wide_terminal_setting(work):
    r = llac('load "matinit.cll.1.dat"; plot colinit', work, COLUMNS="200", LINES="60")
    assert r.returncode == 0 and "\x1b" not in r.stdout
    lines = r.stdout.splitlines()
    figure = lines[next(i for i, line in enumerate(lines) if "┌" in line) - 1:]   # from the title
    assert max(map(len, figure)) <= 80 and max(map(len, figure)) >= 76


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_canvas_follows_the_terminal_size_and_no_color(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    monkeypatch.setenv("LINES", "50")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert terminal_canvas(Terminal()) == Canvas(130, 42, True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert terminal_canvas(Terminal()) == Canvas(130, 42, False)
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not terminal_canvas(Terminal()).color
    assert terminal_canvas(io.StringIO()) == Canvas()          # not a terminal: 80 columns


def model_of(formula: str, columns: dict):
    return fit_experiment(Experiment("e", parse_formula(formula), columns))


def test_colour_canvas_gives_ansi_colours_and_its_width():
    N = 2.0 ** np.arange(4, 14)
    model = model_of("f[0] + f[1]*N", {"N": N, "time": 1e-6 + 1e-9 * N})
    text = plot_model(model, scale="loglog", canvas=Canvas(120, 30, True))
    assert "\x1b[" in text
    plain = plot_model(model, scale="loglog", canvas=Canvas(120, 30, False))
    assert max(map(len, plain.splitlines())) == 120 and "\x1b" not in plain


def test_series_have_their_own_markers_told_in_the_legend():
    N, P = (a.ravel() for a in np.meshgrid(2.0 ** np.arange(6, 16), [1.0, 4.0]))
    model = model_of("f[0] + f[1]*N/P", {"N": N, "P": P, "time": 1e-6 + 1e-8 * N / P})
    text = plot_model(model, by="P", scale="loglog")
    area = "\n".join(frame(text))
    assert "." in area and ":" in area and "x" in area and "o" in area
    assert "x measured, . model: P=1" in text and "o measured, : model: P=4" in text
    assert "model: interval 1 (everywhere)" in text


def test_series_in_one_place_are_drawn_as_their_count_and_named_in_the_legend():
    """Under `by`, the last series' marker covered the others' where their times coincide:
    P=1 and P=2 take the same time, P=4 a quarter of it."""
    N, P = (a.ravel() for a in np.meshgrid(2.0 ** np.arange(6, 16), [1.0, 2.0, 4.0]))
    time = (1e-6 + 1e-8 * N) * np.where(P == 4, 0.25, 1.0) * (1 + 0.001 * (P == 2))
    model = model_of("f[0] + f[1]*N + f[2]*N*P + f[3]*P", {"N": N, "P": P, "time": time})
    for residuals in (False, True):
        text = plot_model(model, by="P", scale="loglog", residuals=residuals)
        area = "\n".join(frame(text))
        assert area.count("2") >= 5 and "x" not in area and "o" not in area and "+" in area
        legend = " ".join(text.split("└")[1].split())
        note = legend[legend.index("2 measured: "):]
        assert note.startswith("2 measured: that many series in one place"), text
        assert "P=1, P=2 at 10 values of N" in note and "P=4" not in note
        assert ("their relative errors at most" if residuals else "their times within 0.1% of each other") in note
    apart = plot_model(model_of("f[0]*P + f[1]*N*P", {"N": N, "P": P, "time": (1e-6 + 1e-8 * N) * P}),
                       by="P", scale="loglog")
    assert "series in one place" not in apart


def test_the_note_on_series_in_one_place_measures_only_the_points_merged_into_one_digit():
    """Two pairs of series, each pair in one place (0.1% apart), the pairs 10 times apart: the
    spread shown is the pairs' own, not the 900% between them (it said 675.8% on fft_mpi)."""
    N, P = (a.ravel() for a in np.meshgrid(2.0 ** np.arange(6, 16), [1.0, 2.0, 3.0, 4.0]))
    time = (1e-6 + 1e-8 * N) * np.where(P >= 3, 10.0, 1.0) * (1 + 0.001 * (P % 2 == 0))
    model = model_of("f[0] + f[1]*N + f[2]*N*P + f[3]*P", {"N": N, "P": P, "time": time})
    legend = " ".join(plot_model(model, by="P", scale="loglog").split("└")[1].split())
    assert "P=1, P=2, P=3, P=4 at 10 values of N (their times within 0.1% of each other; where model " \
           "lines meet, P=4's is on top)" in legend, legend


def test_non_positive_values_are_left_out_of_a_log_scale_and_said():
    N = np.array([0.0, 16, 32, 64, 128, 256, 512])
    model = model_of("f[0] + f[1]*N", {"N": N, "time": 1e-6 + 1e-9 * N})
    text = plot_model(model, scale="loglog")
    assert "1 sample point with N <= 0 left out" in text


@pytest.mark.parametrize("scale", ["linear", "log", "loglog"])
def test_every_sample_point_is_drawn_also_beyond_the_outer_ticks(scale):
    N = 1024 * 2.0 ** np.arange(7)                 # the outer points lie beyond the outer ticks
    model = model_of("f[0] + f[1]*N", {"N": N, "time": 1e-6 + 2e-9 * N})
    assert "".join(frame(plot_model(model, scale=scale))).count("x") == len(N)


def test_tick_labels():
    assert log_ticks(16, 2048)[1] == ["20", "50", "100", "200", "500", "1000", "2000"]
    positions, labels = log_ticks(1e-7, 3.0)
    assert labels == ["1e-7", "1e-6", "1e-5", "1e-4", "1e-3", "0.01", "0.1", "1"]
    assert positions == pytest.approx(list(range(-7, 1)))
    assert len(log_ticks(1.0, 1e30)[1]) <= 8 and log_ticks(1.0, 1e30)[1][0] == "1"
    assert [tick_label(v) for v in (0, 1e4, 2e-5, 5e6, 1234.5, -3e5)] == \
        ["0", "1e4", "2e-5", "5e6", "1234", "-3e5"]
    assert linear_ticks(16, 2048) == ([0.0 + 500 * k for k in range(1, 5)], ["500", "1000", "1500", "2000"])


def test_plot_to_parses():
    (p,) = parse('plot f vs N loglog to "x.html"', keywords())
    assert (p.vs.text, p.scale, p.path, p.replace) == ("N", "loglog", "x.html", False)
    (p,) = parse('plot f to "x.txt" replace residuals', keywords())
    assert (p.path, p.replace, p.residuals) == ("x.txt", True, True)
    (p,) = parse('plot replace', keywords())             # `replace` is still a fine name
    assert p.obj.text == "replace" and p.path is None


@given(st.floats(-12, 12), st.floats(0, 24))
def test_log_ticks_are_few_increasing_inside_and_read_as_their_values(low_exponent, span):
    low, high = 10.0 ** low_exponent, 10.0 ** (low_exponent + span)
    positions, labels = log_ticks(low, high)
    assert 1 <= len(positions) <= 8 and len(labels) == len(positions)
    assert all(a < b for a, b in zip(positions, positions[1:]))
    assert all(np.log10(low) - 1e-9 <= p <= np.log10(high) + 1e-9 for p in positions)
    for position, label in zip(positions, labels):
        assert len(label) <= 8 and float(label) == pytest.approx(10.0 ** position, rel=5e-3)   # 3 digits


def x_labels(text: str) -> list[str]:
    """The x axis's tick labels: the line below the figure's bottom edge."""
    lines = text.splitlines()
    return lines[next(i for i, line in enumerate(lines) if "└" in line) + 1].split()


def y_labels(text: str) -> list[str]:
    """The y axis's tick labels, top down (a tick on a drawn horizontal line is `┼`)."""
    return [re.split("[┤┼]", line)[0].strip() for line in text.splitlines() if re.search("[0-9%] *[┤┼]", line)]


@pytest.fixture
def sweep(tmp_path):
    """MPI traces of f (formula in N and P) at P = 1, 2, 4, 8 (tests/support/parallel.py)."""
    write_sweep(tmp_path)
    return tmp_path


def test_each_p_has_its_own_marker_in_a_file_without_colour(sweep):
    """A new-user review: under `by P` every series' points were `x`, told apart only by
    colour, which a text file and NO_COLOR do not have."""
    r = llac('load "prog.cll.*.dat"; plot f vs N by P loglog to "p.txt"', sweep, NO_COLOR="1")
    assert r.returncode == 0, r.stderr
    text = (sweep / "p.txt").read_text()
    area = "\n".join(frame(text))
    for marker, line, P in (("x", ".", 1), ("o", ":", 2), ("+", "~", 4), ("*", "=", 8)):
        assert f"{marker} measured, {line} model: P={P}" in text
        assert area.count(marker) >= 3, (marker, area)      # 5 sizes; a few may share a cell
    assert "\x1b" not in text


@pytest.mark.parametrize("procs, script, labels", [
    ((1, 2), "plot f vs P by N", ["1", "2"]),                      # was 1 1.17 1.33 ... 2
    ((1, 2, 4, 8), "plot f vs P by N", ["1", "2", "4", "8"]),
    ((1, 2, 4, 8), "plot f vs P by N loglog", ["1", "2", "4", "8"]),
    ((1, 2), "plot balance f by P", ["1", "2"]),
    ((1, 2, 4), "plot comm f by P", ["1", "2", "4"])])
def test_p_gets_ticks_at_its_values_never_fractions(tmp_path, procs, script, labels):
    write_sweep(tmp_path, procs=procs)
    r = llac(f'load "prog.cll.*.dat"; {script}', tmp_path)
    assert r.returncode == 0, r.stderr
    assert x_labels(r.stdout) == labels


def test_an_experiment_with_one_sample_point_gets_axes_around_it(tmp_path):
    """One size N = 1000, time 1 ms: the axes were -1..1 (the point drawn at 0.00) and 999 ..
    1001, and plotext warned on stderr that the values were too close together."""
    (tmp_path / "one.cll.1.dat").write_text(trace_text({"e": ("e[0]*N", ["N"], [(1e-3, 1000)] * 3)}))
    r = llac('load "one.cll.1.dat"; fit e; plot e to "lin.txt"; plot e loglog to "log.txt"; '
             'plot e residuals to "res.txt"', tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    linear, logarithmic, residuals = ((tmp_path / f).read_text() for f in ("lin.txt", "log.txt", "res.txt"))
    assert x_labels(linear) == ["0", "1000", "2000"] and y_labels(linear) == ["2e-3", "1e-3", "0"]
    assert x_labels(logarithmic) == ["1000"] and y_labels(logarithmic) == ["0.01", "1e-3", "1e-4"]
    assert y_labels(residuals) == ["1%", "0.5%", "0%", "-0.5%", "-1%"]    # 0%: the zero line, the model
    for text in (linear, logarithmic, residuals):
        area = frame(text)
        [row] = [i for i, line in enumerate(area) if "x" in line]
        inside = re.split("[┤│┼]", area[row], 1)[1][:-1]
        assert row == len(area) // 2 and abs(inside.index("x") - len(inside) // 2) <= 1


@given(st.lists(st.integers(1, 10 ** 7), min_size=1, max_size=30), st.booleans())
def test_integer_values_get_whole_ticks_inside_their_axis(values, logarithmic):
    low, high, positions, labels = axis_ticks(np.array(values, float), logarithmic, 70)
    shown = np.log10(values) if logarithmic else np.array(values, float)
    assert low <= shown.min() <= shown.max() <= high and low < high
    assert positions == sorted(positions) and len(positions) == len(labels) >= 1
    for position, label in zip(positions, labels):
        value = 10 ** position if logarithmic else position
        assert low - 1e-9 <= position <= high + 1e-9
        assert float(label) == pytest.approx(value, rel=5e-3) and round(value) == pytest.approx(value)
        assert "." not in label or value >= 1e4            # 1.5e4, not 1.17
    if len(set(values)) <= 8 and len(set(values)) > 1:
        assert all(round(10 ** p if logarithmic else p) in values for p in positions)   # at the values


SAME_WORK_ON_EVERY_P = r"""
#include <mpi.h>
#pragma cll parallel MPI procs = 1:4:2
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int n = 1000; n <= 64000; n *= 2)
        for (int r = 0; r < 5; r++) {
            #pragma cll work work[0] + work[1]*n + work[2]*P
            { volatile double x = 0; for (int i = 0; i < n; i++) x += i; }
            #pragma cll end work
        }
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None, reason="MPI is not installed")
def test_a_real_sweep_whose_series_take_the_same_time_shows_every_series(tmp_path):
    """Each rank does the same work whatever P: the series of `plot work vs n by P` lie on
    one another. Every series is seen: its own marker in the figure, or the legend's digits
    naming it among the series in one place."""
    (tmp_path / "prog.c").write_text(SAME_WORK_ON_EVERY_P)
    ran = run_bounded([sys.executable, "-m", "call", "run", "prog.c"], 300, cwd=tmp_path,
                      env={k: v for k, v in os.environ.items() if not k.startswith("CLL_")})
    assert ran.returncode == 0, ran.stderr
    r = llac('load "prog.cll.*.dat"; fit work; plot work vs n by P loglog', tmp_path, NO_COLOR="1")
    assert r.returncode == 0, r.stderr
    area = "\n".join(frame(r.stdout))
    legend = " ".join(r.stdout.split("└")[1].split())
    together = legend[legend.index(" measured: that many series"):] if "series in one place" in legend else ""
    for marker, P in (("x", 1), ("o", 2), ("+", 4)):
        assert f"{marker} measured" in legend and (marker in area or f"P={P}" in together), r.stdout


def _bar_rows(chart: str) -> list[list[int]]:
    """Per chart of a bar_chart's text: the widths of the runs of bar characters on its bottom
    row (every bar reaches it: each value is at least 1)."""
    charts = [c for c in chart.split("└") if "┤" in c]
    return [[len(run) for run in "".join(ch if ch in "█▓▒░" else " " for ch in
                                         [line for line in c.splitlines() if "┤" in line][-1]
                                         .split("┤", 1)[1]).split()] for c in charts]


@pytest.mark.parametrize("groups, series, stacked", [(15, 2, True), (8, 4, False), (6, 3, False),
                                                     (60, 2, True), (40, 2, False)])
def test_bars_never_touch_and_crowded_ones_go_to_several_charts(groups, series, stacked):
    """Review: `plot comm f by rank` of a sweep to P=8 drew 15 stacked bars that touched (read
    as one block), and plotext dropped labels at random. Every group of bars is parted from
    the next by a blank column, bars are at least a column wide, the labels shown stand at
    regular intervals, and groups that cannot fit go to several charts on the same scale."""
    from llac.plot import WIDTH, bar_chart
    labels = [f"P8 r{i}" for i in range(groups)]
    values = [[1 + (i + s) % 3 for i in range(groups)] for s in range(series)]
    chart = bar_chart("t", labels, values, ["█", "▓", "▒", "░"][:series], stacked=stacked)
    rows = _bar_rows(chart)
    assert sum(map(len, rows)) == groups                   # one run per group: none touch
    assert all(max(r) - min(r) <= 1 for r in rows)         # as wide as each other, give or take a column
    titles = [line.strip() for line in chart.splitlines() if line.strip().startswith("t")]
    if len(rows) > 1:
        assert titles[0] == f"t [bars 1-{len(rows[0])} of {groups}]" and titles[-1].endswith(f"of {groups}]")
        lines = chart.splitlines()
        tops = {lines[i + 1].split("┤")[0].strip() for i, line in enumerate(lines) if "┌" in line}
        assert len(tops) == 1                              # the same scale in every chart
    ticks = [line for line in chart.splitlines() if "r0" in line][0].split()
    step = int(ticks[3][1:]) - int(ticks[1][1:]) if len(ticks) > 3 else 1
    assert ticks[1] == "r0" and all(int(ticks[i][1:]) == step * (i // 2) for i in range(1, len(ticks) - 2, 2))
    assert all(len(line) <= WIDTH + 2 for line in chart.splitlines())


def test_a_residual_plot_draws_the_model_as_the_zero_line_with_percent_ticks(tmp_path):
    """Review 24: the legend said `. model` but no model was drawn, the y ticks (0.025, 0.013,
    0.001, -0.011) missed 0, and loglog said nothing of the y axis it could not make log."""
    rows = [(1e-6 * n * (1.2 if n == 64 else 1.0), n) for n in (16, 32, 64, 128, 256) for _ in range(3)]
    (tmp_path / "r.cll.1.dat").write_text(trace_text({"e": ("e[0] + e[1]*N", ["N"], rows)}))
    r = llac('load "r.cll.1.dat"; set split off; fit e; plot e residuals loglog to "res.txt"', tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = (tmp_path / "res.txt").read_text()
    labels = y_labels(text)
    assert "0%" in labels and all(label.endswith("%") for label in labels), labels
    [zero] = [line for line in frame(text) if re.match(r" *0% *┼", line)]
    assert zero.count("┈") > 40                            # the model, across the plot
    legend = text.split("└", 1)[1]
    assert "x measured: interval 1" in legend and ". model" not in legend
    assert "┈ the model: zero relative error" in legend
    assert "note: the y axis stays linear" in " ".join(legend.split())
