"""Regression tests for the tracebacks that fuzzing found in llac (issue 8, item 11): huge and
infinite numbers, settings out of range, extreme times, log plots of non-positive values,
`predict ... at ... by ...` across formulas, and scripts that are not UTF-8."""
import re
import subprocess
import sys

import numpy as np
import pytest

from llac.commands.results import Note, Table
from llac.render import render
from llac.session import Session
from support.traces import trace_text
from test_session_llac import error_of, run, session, text_of  # noqa: F401 (session: the fixture)


@pytest.mark.parametrize("statement, column", [
    ("drop colinit colinit[1e400]", 22), ("show colinit limit 1e400", 20),
    ("x = colinit with y = N*1e400", 24), ("x = colinit where N < 1e400", 23),
    ("predict colinit N=1e400", 19)])
def test_numbers_beyond_the_float_range_are_located_errors(session, statement, column):
    error = error_of(session, statement)
    assert "1e400 is beyond the floating-point range" in error.message
    assert (error.span.line, error.span.column) == (1, column)


def test_a_formula_with_an_infinite_number_is_refused(session):
    assert "1e400 is beyond the floating-point range" in error_of(session, 'x = colinit formula "f[0] + f[1]*N^1e400"').message
    assert "x" not in session.objects


@pytest.mark.parametrize("statement", ["show colinit limit -1", "show colinit limit 2.5",
                                       "drop colinit colinit[1.5]"])
def test_counts_and_indices_are_whole_numbers(session, statement):
    assert "expected a whole number >= 0" in error_of(session, statement).message


@pytest.mark.parametrize("statement, message", [
    ("set seed inf", "seed takes a whole number from 0 to 4294967295, not inf"),
    ("set seed 1e400", "seed takes a whole number from 0 to 4294967295, not 1e400"),
    ("set bootstrap nan", "bootstrap takes a whole number from 1 to 9999, not nan"),
    ("set bootstrap 1e6", "bootstrap takes a whole number from 1 to 9999, not 1e6"),
    ("set maxpieces 0", "maxpieces takes a whole number from 1 to 1000, not 0"),
    ("set alpha nan", "alpha is a fraction between 0 and 1"),
    ("set threshold inf", "threshold is a fraction at least 0 and below 1"),
    ("set threshold -1%", "threshold is a fraction at least 0 and below 1")])
def test_settings_out_of_range_are_refused(session, statement, message):
    assert message in error_of(session, statement).message
    assert session.changed_settings == {}


def test_threshold_0_splits_whenever_the_statistics_allow(session):
    """docs/method.md uses `threshold 0` (every cut the test accepts); it was refused."""
    list(session.execute("set threshold 0"))
    assert session.changed_settings == {"threshold": 0.0}
    assert session.fit_settings().threshold == 0.0


def test_bootstrap_at_its_bound_is_accepted(session):
    assert text_of(run(session, "set bootstrap 9999")) == "bootstrap = 9999"


def test_predictions_that_overflow_are_no_prediction(session):
    results = run(session, "fit colinit; predict colinit N=1e200")
    table = results[-1]
    assert isinstance(table, Table) and table.rows[0][1] is None
    assert re.search(r"^1e\+200\s+-\s", render(table), re.M)
    assert "no value at N=1e+200" in text_of(results) and "no prediction" in text_of(results)


def test_the_values_predict_was_asked_for_are_shown_in_full(session):
    table = run(session, "fit colinit; predict colinit N=1000,1000.25,1000.5,1000.75,1001,12345.678")[-1]
    assert [line.split()[0] for line in render(table).splitlines()[3:9]] == \
        ["1000", "1000.25", "1000.5", "1000.75", "1001", "12345.678"]


def test_a_value_below_zero_where_all_measured_are_above_has_no_interval_rather_than_a_narrow_one(session):
    results = run(session, "fit colinit; predict colinit N=-5,2")
    table = results[-1]
    below, near = table.rows
    assert below[0] == -5 and below[2] is None and below[3] is None        # was 6.2e-09 .. 2.2e-08
    assert near[2] is not None and near[2] < near[1] < near[3]
    assert ("no prediction interval at N=-5: N is 0 or negative there, and every measured value is above 0"
            in text_of(results))


@pytest.mark.parametrize("factor", ["1e-300", "1e300", "0 + 1e-300", "0 + 1e300", "0 + 1"])
def test_extreme_and_equal_times_fit(session, factor):
    """Relative least squares does not depend on the unit of time: 1e-300 s fits like 1 s."""
    run(session, f"x = colinit with time = time*{factor}")
    report = text_of(run(session, "fit x"))
    assert re.search(r"relative error .*: median", report)
    x = session.objects["x"]
    measured = np.median(x.columns["time"][x.columns["N"] == 64])
    predicted = session.objects["x.model"].predict({"N": [64.0]}).values[0]
    assert predicted == pytest.approx(measured, rel=0.05)


def test_extreme_times_give_the_same_relative_model(session):
    run(session, "fit colinit; tiny = colinit with time = time*1e-300; fit tiny")
    plain, tiny = session.objects["colinit.model"], session.objects["tiny.model"]
    assert len(plain.pieces) == len(tiny.pieces)
    for a, b in zip(plain.pieces, tiny.pieces):
        assert np.allclose(b.constants, a.constants * 1e-300, rtol=1e-6)
        assert np.allclose(b.pvalues, a.pvalues, rtol=1e-6, equal_nan=True)


def test_a_numerically_singular_fit_is_one_clear_error(session):
    run(session, "x = colinit with time = time^50")
    assert "numerically singular" in error_of(session, "fit x").message


def test_loglog_plot_leaves_out_non_positive_points_with_a_note(session):
    run(session, "x = colinit with N = N - 16")
    out = text_of(run(session, "plot x loglog"))
    assert "note: 1 sample point with N <= 0 left out (a log axis" in out
    assert "┌" in out


def test_loglog_plot_with_nothing_positive_says_so(session):
    run(session, "x = colinit with N = -N")
    assert "nothing to plot on log axes: 8 sample points with N <= 0" in text_of(run(session, "plot x loglog"))


def test_log_plot_of_equal_times_keeps_a_linear_axis(session):
    run(session, "x = colinit with time = time*0 + 1")
    out = text_of(run(session, "plot x log"))
    assert re.search(r"^ *1┤ *x", out, re.M)     # one y tick, at the one value


def test_predict_at_an_experiment_with_another_formula(tmp_path, monkeypatch):
    """The model's variables group the data, not the other experiment's formula (was KeyError 'P')."""
    monkeypatch.chdir(tmp_path)
    records = [(1e-3 * n / p + 1e-4 * p, n, p) for n in (100, 200, 400, 800) for p in (1, 2, 4, 8)
               for _ in range(2)]
    (tmp_path / "f.dat").write_text(trace_text({"f": ("f[0]*N/P + f[1]*P", ["N", "P"], records)}))
    s = Session()
    run(s, 'load "f.dat"; g = f formula "f[0]*N + f[1]"; fit f')
    for statement in ("predict f at g by P", "predict f at g"):
        table = run(s, statement)[-1]
        assert isinstance(table, Table) and len(table.rows) == 16
    notes = [r for r in run(s, "predict f at g by N") if isinstance(r, Note)]
    assert not notes


def test_a_script_that_is_not_utf8_is_one_message(tmp_path):
    script = tmp_path / "bad.llac"
    script.write_bytes(b"list\nshow x # caf\xe9\n")
    done = subprocess.run([sys.executable, "-m", "llac", str(script)], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"llac: {script}:2:13: the script is not UTF-8 text: byte 0xe9 at offset 17"


def test_huge_numbers_in_formulas_print_in_exponent_form(session):
    note = text_of(run(session, 'x = colinit formula "a[0] + a[1]*N^1e300"'))
    assert note.endswith("a[0] + a[1]*N^1e+300")
    assert "N^1e+300 is not finite" in error_of(session, "fit x").message


def test_a_column_with_values_that_are_not_finite_is_a_warning_that_says_where(session, recwarn):
    notes = run(session, "x = colinit with N = log(N - 16)")
    [warning] = [n.text for n in notes if isinstance(n, Note) and n.warning]
    assert re.fullmatch(r"N: \d+ of \d+ values are not finite \(NaN or inf; the log of a number <= 0, "
                        r"a division by zero \.\.\.\), the first at N=16, time=\S+", warning), warning
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]   # numpy stays silent
