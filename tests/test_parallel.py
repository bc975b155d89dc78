"""Parallel analysis: balance, comm and the Table 3 layout on MPI/OpenMP traces written per the
MPI contract (tests/support/parallel.py), driven through the session and the CLI."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llac.commands.results import Table, Text
from llac.errors import LlacError
from llac.parallel import goodness
from llac.render import render
from llac.session import Session
from llac.trace import read_trace
from support.traces import write_matinit
from support.parallel import (COMM, REPS, openmp_trace_text, work_of, write_sweep)

REPO = Path(__file__).resolve().parent.parent
SIZES = (1024, 2048, 4096, 8192, 16384)


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_sweep(tmp_path, sizes=SIZES)
    s = Session()
    run(s, 'load "prog.cll.*.dat"')
    return s


def run(session, text):
    return list(session.execute(text))


def table(session, text) -> Table:
    tables = [r for r in run(session, text) if isinstance(r, Table)]
    assert len(tables) == 1
    return tables[0]


def column(t: Table, name: str) -> np.ndarray:
    i = t.headers.index(name)
    return np.array([row[i] for row in t.rows], dtype=float)


def error_of(session, text) -> str:
    with pytest.raises(LlacError) as info:
        run(session, text)
    return str(info.value)


# ------------------------------------------------------------------ the goodness measure

def test_goodness_is_the_coefficient_of_variation_of_p3t():
    assert goodness([2.0, 2.0, 2.0, 2.0]) == 0
    for p in (2, 4, 8):                       # one unit does all the work: sqrt(P - 1)
        assert goodness([1.0] + [0.0] * (p - 1)) == pytest.approx(np.sqrt(p - 1))
    work = np.array([1.0, 2.0, 3.0, 0.0])
    assert goodness(work) == pytest.approx(np.sqrt(np.mean((work - work.mean()) ** 2)) / work.mean())
    assert np.isnan(goodness([0.0, 0.0]))


# ------------------------------------------------------------------ loading a sweep keeps P

def test_parallel_trace_gets_p_from_the_header_when_the_formula_has_none(tmp_path):
    write_sweep(tmp_path, procs=(4,), sizes=(1024,))
    trace = read_trace(tmp_path / "prog.cll.4.dat")
    assert set(trace.experiments["work"].columns["P"]) == {4.0}
    write_matinit(tmp_path / "seq.dat")                     # sequential: no P added
    assert "P" not in read_trace(tmp_path / "seq.dat").experiments["colinit"].columns


def test_merged_sweep_keeps_each_records_p(session):
    work = session.objects["work"]
    for P in (1, 2, 4, 8):
        rows = work.columns["P"] == P
        assert rows.sum() == sum(r + 1 for r in range(P) if not (P == 4 and r == 3)) * len(SIZES)


# ------------------------------------------------------------------ balance

def test_balance_by_rank_sums_each_ranks_work_and_lists_idle_ranks(session):
    t = table(session, "balance work by rank")
    assert t.headers[:4] == ("P", "rank", "records", "work")
    procs, ranks, work = column(t, "P"), column(t, "rank"), column(t, "work")
    for P in (1, 2, 4, 8):
        assert list(ranks[procs == P]) == list(range(P))    # rank 3 at P=4 is listed, idle
        assert work[procs == P] == pytest.approx(work_of(P, SIZES))
    footer = "\n".join(t.footer)
    expected = goodness(work_of(4, SIZES))
    assert f"P=4: optimal (mean) work" in footer and f"goodness wd {expected:.3f}" in footer
    assert "max/mean 2.000" in footer and "(rank 2)" in footer
    assert "P=4: rank 3 ran no record of it (counted as no work)" in footer
    idle = next(row for row in t.rows if row[0] == 4 and row[1] == 3)
    assert idle[t.headers.index("mean time")] is None           # no mean of no record: '-', not nan
    assert "did not finish normally" not in footer


def test_an_idle_rank_in_a_trace_that_did_not_finish_points_at_the_ranks_own_traces(session, tmp_path):
    trace = next(tmp_path.glob("prog.cll.4.dat"))
    text = trace.read_text()
    status = next(line for line in text.splitlines() if line.startswith("#status:"))
    (tmp_path / "died.cll.4.dat").write_text(text.replace(status, "#status: signal SIGTERM"))
    run(session, 'load "died.cll.4.dat"')
    footer = "\n".join(table(session, "balance work@died_cll_4 by rank").footer)
    assert "rank 3 ran no record of it" in footer
    assert ("warning: died.cll.4.dat did not finish normally (status: signal SIGTERM): a rank it lacks may have "
            'left its records in its own trace; load them with it, load "died.cll.4*.dat"') in footer


def test_balance_by_p_gives_one_row_per_p_with_max_mean_and_wd(session):
    t = table(session, "balance work by P")
    assert list(column(t, "P")) == [1, 2, 4, 8]
    for P, mean, top, low, ratio, wd in zip(*(column(t, h) for h in
                                              ("P", "mean work", "max work", "min work", "max/mean", "wd"))):
        work = work_of(int(P), SIZES)
        assert (mean, top, low) == pytest.approx((work.mean(), work.max(), work.min()))
        assert ratio == pytest.approx(work.max() / work.mean())
        assert wd == pytest.approx(goodness(work))
    assert column(t, "wd")[0] == 0                     # one rank: perfectly balanced


def test_balance_defaults_to_threads_in_an_openmp_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "omp.cll.4.dat").write_text(openmp_trace_text(4))
    s = Session()
    run(s, 'load "omp.cll.4.dat"')
    t = table(s, "balance loop")
    assert t.headers[1] == "thread" and list(column(t, "work")) == pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])
    assert f"goodness wd {goodness([1, 2, 3, 4]):.3f}" in "\n".join(t.footer)
    assert not [line for line in t.footer if "compares nothing" in line]
    by_rank = table(s, "balance loop by rank")                 # every thread has rank 0
    assert ("every record of loop has the same rank at each P, so this compares nothing; its records "
            "differ by thread: balance loop by thread") in by_rank.footer


# ------------------------------------------------------------------ comm

def test_comm_by_rank_reports_the_measured_counts_and_times(session):
    t = table(session, "comm f by rank")
    f = session.objects["f"]
    at8 = (f.columns["P"] == 8) & (f.columns["rank"] == 5)
    row = [r for r in t.rows if r[0] == 8 and r[1] == 5][0]
    values = dict(zip(t.headers, row))
    assert values["records"] == REPS * len(SIZES)
    assert values["transfers"] == f.columns["msgs_sent"][at8].sum() == 3 * REPS * len(SIZES)
    assert values["bytes sent"] == sum(N * 16 // 8 * 3 for N in SIZES) * REPS
    assert values["partners"] == 3
    assert values["comm time"] == pytest.approx(f.columns["mpi_time"][at8].sum())
    assert values["comp time"] == pytest.approx((f.columns["time"] - f.columns["mpi_time"])[at8].sum())
    assert values["comm %"] == pytest.approx(10)


def test_comm_by_p_totals_over_the_ranks(session):
    t = table(session, "comm f by P")
    transfers = dict(zip(column(t, "P"), column(t, "transfers")))
    assert transfers == {1: 0, 2: 1 * 2 * REPS * 5, 4: 2 * 4 * REPS * 5, 8: 3 * 8 * REPS * 5}
    max_h = dict(zip(column(t, "P"), column(t, "max h")))
    assert max_h[2] == 2 * 16384 * 16 // 2


def test_comm_without_communication_columns_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.dat")
    s = Session()
    run(s, 'load "m.dat"')
    message = error_of(s, "comm colinit")
    assert "no communication columns" in message and "msgs_sent" in message and "MPI" in message


def test_an_experiment_without_records_is_one_clear_error(tmp_path, session):
    text = (tmp_path / "prog.cll.2.dat").read_text()
    head = text.split("#data\n")[0].replace("records: 30", "records: 0")
    (tmp_path / "empty.cll.2.dat").write_text(head + "#data\n#end\n")
    run(session, 'load "empty.cll.2.dat"')
    assert "f@empty_cll_2 has no records" in error_of(session, "balance f@empty_cll_2 by P")
    assert "has no records to compare with" in error_of(session, "predict f at f@empty_cll_2 by P")


def test_bad_by_words_and_missing_p_are_clear_errors(tmp_path, session):
    assert "by rank or by thread or by P, not 'N'" in error_of(session, "balance work by N")
    write_matinit(tmp_path / "m.dat")
    run(session, 'load "m.dat"')
    assert "colinit has no column 'P'" in error_of(session, "balance colinit by P")


# ------------------------------------------------------------------ plots

def test_plots_are_text_with_the_rank_labels_and_series(session):
    bars = render(run(session, "plot balance work by rank")[0])
    assert "work per rank" in bars and "r7" in bars and "▓ P=2" in bars
    lines = render(run(session, "plot comm f by P")[0])
    assert "communication" in lines and "computation" in lines
    stacked = [r for r in run(session, "plot comm f") if isinstance(r, Text)][0].body
    assert "█ computation, ░ communication" in stacked and "P8 r7" in stacked


def test_balance_and_comm_plots_are_saved_to_a_file_as_plot_is(session, tmp_path):
    """A review: `plot balance` and `plot comm` took no `to "FILE"`, unlike plot, timeline and
    the machine's plots."""
    shown = render(run(session, "plot balance work by rank")[0])
    [said] = run(session, f'plot balance work by rank to "{tmp_path / "b.txt"}"')
    assert said.text == f"wrote the balance chart of work to {tmp_path / 'b.txt'} (text)"
    assert (tmp_path / "b.txt").read_text().rstrip("\n") == shown.rstrip("\n")     # what plot shows
    run(session, f'plot comm f by P to "{tmp_path / "c.html"}"')
    assert "<pre>" in (tmp_path / "c.html").read_text() and "communication" in (tmp_path / "c.html").read_text()
    assert "the file exists" in error_of(session, f'plot comm f by P to "{tmp_path / "c.html"}"')
    run(session, f'plot comm f by P to "{tmp_path / "c.html"}" replace')


# ------------------------------------------------------------------ Table 3

@pytest.fixture
def sweep_with_test(session, tmp_path):
    write_sweep(tmp_path, sizes=(65536,), prefix="big")
    run(session, 'load "big.cll.*.dat"; big = f@big_cll_1; set split off; fit f')
    return session


def test_predict_at_by_p_prints_the_table3_layout_with_llacs_one_sign(sweep_with_test):
    t = table(sweep_with_test, "predict f at big by P")
    assert t.headers[:5] == ("PROCS", "N", "TIME [s]", "PREDICTED [s]", "ERROR %")
    assert list(column(t, "PROCS")) == [1, 2, 4, 8]
    time, predicted, error = column(t, "TIME [s]"), column(t, "PREDICTED [s]"), column(t, "ERROR %")
    assert error == pytest.approx(100 * (predicted - time) / time)
    assert any("ERROR % = 100 (PREDICTED - TIME) / TIME" in line for line in t.footer)
    assert np.abs(error).max() < 3                          # the generating model is the formula
    flags = [row[-1] for row in t.rows]
    assert ["oversubscribed" in f for f in flags] == [False, False, True, True]
    assert all("extrapolated" in f for f in flags)
    assert any("P = 4, 8 exceed the 2 cores of host node-a" in line for line in t.footer)
    from llac.render import tabular                          # --format csv|json: one field per flag
    headers, rows = tabular(t)
    assert headers[-3:] == ("interval", "extrapolated", "oversubscribed")
    assert [row[-3:] for row in rows] == [(1, True, False), (1, True, False), (1, True, True), (1, True, True)]


def test_table3_by_another_variable_names_its_column_and_judges_oversubscription_on_p(sweep_with_test):
    """`by N`: the column is headed N, not PROCS, and a row is oversubscribed by its P (it was
    judged by N, so every size above the core count was flagged)."""
    t = table(sweep_with_test, "predict f at big by N")
    assert t.headers[:2] == ("N", "P")
    flags = {row[1]: "oversubscribed" in row[-1] for row in t.rows}
    assert flags == {1: False, 2: False, 4: True, 8: True}


def test_table3_without_a_core_count_says_it_cannot_tell(session, tmp_path):
    write_sweep(tmp_path, procs=(2, 4), sizes=(65536,), prefix="far", cores=None, host="elsewhere")
    run(session, 'load "far.cll.*.dat"')
    t = table(session, "predict f at f@far_cll_2 by P")
    assert any("does not say how many cores host elsewhere has" in line for line in t.footer)
    assert not any("oversubscribed" in row[-1] for row in t.rows)


def test_table3_errors_name_the_variable_and_the_missing_column(sweep_with_test, tmp_path):
    assert "no variable 'Q'" in error_of(sweep_with_test, "predict f at big by Q")
    write_matinit(tmp_path / "m.dat")
    run(sweep_with_test, 'load "m.dat"')
    message = error_of(sweep_with_test, "predict f at colinit by P")
    assert "colinit has no column 'P', which the formula" in message


# ------------------------------------------------------------------ as a user runs it

def test_cli_script_reports_balance_and_table3(tmp_path):
    write_sweep(tmp_path, sizes=SIZES)
    write_sweep(tmp_path, sizes=(65536,), prefix="big")
    (tmp_path / "sweep.llac").write_text('load "prog.cll.*.dat"\nload "big.cll.*.dat"\n'
                                         'balance work by P\ncomm f by P\nset split off\n'
                                         'predict f at f@big_cll_1 by P\nbalance work by N\n')
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "llac", "sweep.llac"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "work distribution of work by P" in r.stdout and "PROCS" in r.stdout
    assert "oversubscribed" in r.stdout
    assert r.stderr.strip().startswith("sweep.llac:7:17: by rank or by thread or by P") and "Traceback" not in r.stderr
