"""The llac-side findings of the new-user review (21): a fit stopped by the interval budget says
so (not "no statistically real cut"), settings the split test can never satisfy are refused
(alpha against bootstrap, minpoints below the constants + 1), `fit` and `report` with
experiments that cannot be fitted, variable names that are C members or llac keywords, `time`
in a formula, concatenated traces on stdin, the negative-prediction warning, and `-` for a
missing bound in text tables."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from support.traces import trace_text
from test_session_llac import error_of, run, session, text_of  # noqa: F401 (session: the fixture)


def llac_c(folder, script: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run `llac -c script` in `folder` with every Python warning shown: none may reach the user."""
    env = {**os.environ, "PYTHONWARNINGS": "always"}
    done = subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120,
                          **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr
    return done


# ---- 1. the interval budget, not the statistics, stopped the split
@pytest.mark.parametrize("setting", ["maxintervals", "maxpieces"])
def test_a_fit_stopped_by_the_interval_budget_blames_the_budget(session, setting):
    assert "cut at N" in text_of(run(session, "fit colinit"))   # the default cuts colinit
    out = text_of(run(session, f"set {setting} 1; fit colinit"))
    assert f"the interval budget (`set {setting} 1`) allows no further cut; a larger one lets the fit " \
           f"cut at N = " in out
    assert "no statistically real cut" not in out


def test_a_fit_stopped_by_minpoints_blames_minpoints(session):
    """A review: with `set minpoints` larger than the data allow, the warning blamed the data
    ("no statistically real cut lowers it")."""
    cut = re.search(r"cut at N = ([\d.]+):", text_of(run(session, "fit colinit")))[1]
    out = text_of(run(session, "set minpoints 1000; fit colinit"))
    assert (f"`set minpoints 1000` leaves too few sample points for a cut; a smaller one lets the fit cut at "
            f"N = {cut} (p = ") in out and "no statistically real cut" not in out


def test_the_cut_the_budget_warning_promises_is_the_one_a_larger_budget_makes(tmp_path):
    """A review: with `set maxintervals 1` the warning promised a cut at the trend test's
    middle point, with the trend test's p, while `set maxintervals 2` cut elsewhere. Here the
    cost per N*N doubles at N = 250 and then keeps rising (a cache edge, then a trend)."""
    rng = np.random.default_rng(1)
    records = [(1e-9 * (1.0 if n < 250 else 2.0 * (n / 250) ** 0.5) * n * n * rng.lognormal(0, 0.01), n)
               for n in np.unique(np.round(np.geomspace(16, 2048, 30))) for _ in range(5)]
    (tmp_path / "c.cll.1.dat").write_text(trace_text({"c": ("c[0] + c[1]*N + c[2]*N*N", ["N"], records)}))
    said = llac_c(tmp_path, 'load "c.cll.1.dat"; set maxintervals 1; fit c').stdout
    promised = re.search(r"lets the fit cut at N = ([\d.]+) \((the trend test, )?p = ", said)
    assert promised, said
    assert f"cut at N = {promised[1]}:" in llac_c(tmp_path, 'load "c.cll.1.dat"; set maxintervals 2; fit c').stdout


def test_without_a_real_cut_the_warning_still_says_so(session):
    out = text_of(run(session, "set threshold 0.1%; fit rowinit"))
    assert "no statistically real cut lowers it" in out and "interval budget" not in out


@pytest.mark.parametrize("script, message", [
    ("set bootstrap 10", "alpha 0.05 with bootstrap 10: the split test's p-value is at least 1/(bootstrap+1) "
                         "= 1/11 = 0.0909, never below alpha, so no cut could ever be accepted; keep "
                         "bootstrap at 20 or more, or set alpha above 0.0909 first"),
    ("set bootstrap 19", "= 1/20 = 0.05, never below alpha"),
    ("set alpha 0.001", "alpha 0.001 with bootstrap 199: the split test's p-value is at least "
                        "1/(bootstrap+1) = 1/200 = 0.005, never below alpha, so no cut could ever be "
                        "accepted; set bootstrap 1000 or more first"),
    ("set alpha 1e-320", "alpha must be above 1/(9999+1) = 0.0001 (bootstrap is at most 9999)")])
def test_alpha_the_bootstrap_cannot_reach_is_refused(session, script, message):
    assert message in error_of(session, script).message
    assert session.fit_settings().alpha == 0.05 and session.fit_settings().bootstrap == 199


def test_alpha_and_bootstrap_that_fit_together_are_taken(session):
    run(session, "set bootstrap 20; set bootstrap 1000; set alpha 0.001")
    assert (session.fit_settings().alpha, session.fit_settings().bootstrap) == (0.001, 1000)


def test_the_smallest_alpha_predicts_without_a_python_warning(tmp_path):
    from support.traces import trace_text, write_matinit
    write_matinit(tmp_path / "m.dat")
    done = llac_c(tmp_path, 'load "m.dat"; set bootstrap 9999; set alpha 0.00011; predict colinit N=1e30,1e300,-5')
    assert done.returncode == 0, done.stderr
    # one residual degree of freedom: a huge t quantile, bounds beyond the float range
    (tmp_path / "small.dat").write_text(trace_text({"f": ("f[0] + f[1]*N", ["N"], [
        (1e-6 * n * (1 + 0.01 * (n % 3)), n) for n in (100, 200, 400)])}))
    done = llac_c(tmp_path, 'load "small.dat"; set bootstrap 9999; set alpha 0.00011; predict f N=1e10,1e200')
    assert "no prediction interval at N=1e+200: its arithmetic overflows so far beyond the data" in done.stdout


# ---- 2. minpoints below the constants + 1
@pytest.mark.parametrize("minpoints", [1, 2])
def test_minpoints_below_the_constants_plus_one_is_raised_with_a_warning(session, minpoints):
    run(session, "fit colinit")
    default = session.objects["colinit.model"]
    out = text_of(run(session, f"set minpoints {minpoints}; fit colinit"))
    assert f"minpoints {minpoints} is below the formula's 2 constants + 1: each side of a cut keeps a residual " \
           f"degree of freedom, so the fit used minpoints 3" in out
    model = session.objects["colinit.model"]
    assert [(c.variable, c.value) for c in model.cuts] == [(c.variable, c.value) for c in default.cuts]


def test_minpoints_at_the_constants_plus_one_gives_no_warning(session):
    run(session, "set minpoints 3")
    assert "minpoints" not in text_of(run(session, "fit colinit"))


# ---- 3. fit and report with experiments that cannot be fitted
def mixed_trace(folder):
    """A trace with a good experiment `f` and `one`, measured at one sample point only."""
    from support.traces import trace_text
    good = [(1e-6 * n * (1 + 0.001 * r), n) for n in (1000, 2000, 4000, 8000, 16000) for r in range(3)]
    text = trace_text({"f": ("f[0] + f[1]*N", ["N"], good),
                       "one": ("one[0] + one[1]*K", ["K"], [(1e-3, 5.0)] * 3)}, program="mix")
    (folder / "mix.cll.1.dat").write_text(text)
    return text


def test_piped_fit_and_report_give_the_table_of_what_can_be_fitted(tmp_path):
    done = llac_c(tmp_path, "fit; report", stdin=mixed_trace(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "f           f[0] + f[1]*N" in done.stdout and "one  " not in done.stdout
    assert "warning: not in the report: cannot fit one: 1 sample point for 2 constants" in done.stderr


@pytest.mark.parametrize("command", ["fit", "report"])
def test_fit_and_report_with_nothing_fittable_are_errors_with_the_reasons(tmp_path, command):
    from support.traces import trace_text
    (tmp_path / "bad.dat").write_text(trace_text({
        "O": ("O[0] + O[1]*N", ["N"], []), "I": ("I[0] + I[1]*N", ["N"], [(1e-3, 4.0)])}))
    done = llac_c(tmp_path, f'load "bad.dat"; {command}')
    assert done.returncode == 1
    assert "no experiment could be fitted (2 tried): cannot fit O: no records to fit; cannot fit I: 1 sample " \
           "point for 2 constants" in done.stderr


# ---- 4. variables that are struct members or llac keywords
@pytest.fixture
def members(tmp_path, monkeypatch):
    """A session with B over the member `p->len`, A over `s.len` and g over a C variable `on`."""
    from llac.session import Session
    from support.traces import trace_text
    monkeypatch.chdir(tmp_path)
    sizes = [1000 * 2 ** i for i in range(7)]
    records = [(1e-9 * n * (1 + 0.001 * r), n) for n in sizes for r in range(3)]
    (tmp_path / "mem.dat").write_text(trace_text({
        "A": ("A[0] + A[1]*s.len", ["s.len"], records), "B": ("B[0] + B[1]*p->len", ["p->len"], records),
        "g": ("g[0] + g[1]*on", ["on"], records)}, program="mem"))
    session = Session()
    run(session, 'load "mem.dat"')
    return session


@pytest.mark.parametrize("statement, variable", [
    ("predict B p->len=128000", "p->len"), ("predict A s.len=128000", "s.len"),
    ("predict g on=128000", "on"), ("predict g on = 128000, 256000", "on"), ("predict g at=1", "at")])
def test_predict_takes_members_and_keywords_as_variables(members, statement, variable):
    if variable == "at":   # parsed as a variable: the formula has none called so
        assert "the formula g[0] + g[1]*on has no variable 'at'" in error_of(members, statement).message
        return
    (table,) = [r for r in run(members, statement) if hasattr(r, "rows")]
    assert table.headers[0] == variable and table.rows[0][0] == 128000
    assert abs(table.rows[0][1] / 1.28e-4 - 1) < 0.01


def test_on_followed_by_a_machine_is_still_the_keyword(members):
    assert "predict on vm" in error_of(members, "predict g on vm").message


@pytest.mark.parametrize("statement", ["plot B vs p->len", "plot g vs on", "plot A vs s.len log"])
def test_plot_takes_members_and_keywords_as_variables(members, statement):
    assert "model" in text_of(run(members, statement))


def test_with_and_where_name_members_and_keywords(members):
    run(members, "x = g with on = on * 2; y = B with p->len = p->len / 2; z = y where p->len <= 4000")
    assert members.objects["x"].columns["on"].max() == 128000
    assert members.objects["z"].columns["p->len"].max() == 4000


def test_predict_at_by_a_member(members):
    assert "p->len" in text_of(run(members, "predict B at B by p->len"))


# ---- 5. a formula's variables are the program's
@pytest.mark.parametrize("formula, message, column", [
    ("colinit[0] + colinit[1]*time", "'time' is the time the formula models, not a variable: a formula's "
                                     "variables are the program's (N)", 46),
    ("colinit[0] + colinit[1]*N + colinit[2]*thread", "'thread' is measured with the time of each record of "
                                                     "colinit, not a variable", 61),
    ("colinit[0] + colinit[1]*M", "the formula uses 'M', which is not a column of colinit", 46)])
def test_formula_refuses_columns_that_are_not_variables_at_the_variable(session, formula, message, column):
    error = error_of(session, f'g = colinit formula "{formula}"')
    assert error.message.startswith(message) and (error.span.line, error.span.column) == (1, column)
    assert "g" not in session.objects


def test_a_measured_column_copied_by_with_is_a_variable(session):
    run(session, 'x = colinit with t = time; g = x formula "colinit[0] + colinit[1]*t"')
    assert session.objects["g"].formula.variables == ("t",)


def test_mpi_columns_are_measured_not_variables(tmp_path, monkeypatch):
    from llac.session import Session
    from support.parallel import write_sweep
    monkeypatch.chdir(tmp_path)
    write_sweep(tmp_path, procs=(2,))
    session = Session()
    run(session, 'load "prog.cll.2.dat"')
    name = next(n for n, o in session.objects.items() if "bytes_sent" in getattr(o, "columns", {}))
    error = error_of(session, f'g = {name} formula "{name}[0] + {name}[1]*bytes_sent"')
    assert "'bytes_sent' is measured with the time of each record" in error.message


# ---- 6. traces concatenated on stdin
def test_every_trace_piped_one_after_another_is_loaded(tmp_path):
    from support.traces import write_matinit
    first = write_matinit(tmp_path / "m.cll.1.dat").read_text()
    second = write_matinit(tmp_path / "m.cll.2.dat", seed=5).read_text()
    piped = llac_c(tmp_path, "list", stdin=first + second)
    loaded = llac_c(tmp_path, 'load "m.cll.*.dat"; list')
    assert piped.returncode == 0 and "after #end" not in piped.stderr, piped.stderr
    assert "colinit  experiment       48" in piped.stdout
    assert piped.stdout.split("objects", 1)[1] == loaded.stdout.split("objects", 1)[1]


def test_the_same_trace_piped_twice_counts_once(tmp_path):
    from support.traces import write_matinit
    text = write_matinit(tmp_path / "m.cll.1.dat").read_text()
    done = llac_c(tmp_path, 'load "-"; list', stdin=text + text)
    assert "colinit  experiment       24" in done.stdout
    assert "<stdin>#2: its colinit holds the same records as <stdin>#1's" in done.stderr


def test_a_cut_trace_piped_before_a_whole_one_is_split_where_the_whole_one_starts(tmp_path):
    """`cat cut.dat whole.dat | llac`: the cut trace's last record has no end of line, so `cat`
    glues the next trace's `#cll-trace` line to it; its records are then the same run's twice."""
    from support.traces import write_matinit
    text = write_matinit(tmp_path / "m.cll.1.dat").read_text()
    cut = text[:text.index("\ncolinit", text.index("#data")) + 5]           # mid-record
    done = llac_c(tmp_path, 'load "-"; list', stdin=cut + text)
    assert "colinit  experiment       24" in done.stdout, done.stdout + done.stderr
    assert "<stdin>#1:" in done.stderr and "record of unknown experiment" not in done.stderr


# ---- 7. a negative prediction names its cause
def test_a_negative_prediction_blames_the_variable_outside_the_measured_range(members):
    out = text_of(run(members, "predict A s.len=-1000"))
    assert "the model predicts no time (<= 0 s) at 1 point(s), first s.len=-1000 (interval 1): there the term " \
           "A[1]*s.len is negative (s.len=-1000 is outside the measured 1000..64000)" in out
    assert "set constants free" not in out and "held at its bound" not in out


# ---- 9. a bound that does not exist is '-' in text, empty in CSV
def test_a_missing_prediction_bound_is_a_dash_in_text_and_empty_in_csv(tmp_path):
    from support.traces import trace_text
    (tmp_path / "small.dat").write_text(trace_text({"f": ("f[0] + f[1]*N", ["N"], [
        (1e-6 * n * (1 + 0.01 * (n % 3)), n) for n in (100, 200, 400)])}))
    text = llac_c(tmp_path, 'load "small.dat"; predict f N=1e200').stdout
    assert "1e+200     1.013e+194        -         -  1 extrapolated" in text and "nan" not in text
    done = subprocess.run([sys.executable, "-m", "llac", "--format", "csv", "-c", 'load "small.dat"; predict f N=1e200'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert "1e+200,1.0133114754098362e+194,,,1,true" in done.stdout
