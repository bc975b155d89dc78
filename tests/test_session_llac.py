"""Session-level tests: drive llac.session.Session with real traces, fits and plots."""
import re

import numpy as np
import pytest

from llac.commands.results import ModelReport, Note, Table, Text
from llac.errors import LlacError
from llac.render import render
from llac.session import Session
from support.traces import trace_text, write_matinit


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "matinit.cll.1.dat")
    s = Session()
    run(s, 'load "matinit.cll.1.dat"')
    return s


def run(session, text):
    return list(session.execute(text))


def text_of(results):
    return "\n".join(render(r) for r in results)


def error_of(session, text) -> LlacError:
    with pytest.raises(LlacError) as info:
        run(session, text)
    return info.value


def test_load_creates_objects_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.dat")
    s = Session()
    out = text_of(run(s, 'load "m.dat"'))
    assert "created colinit: 24 records" in out and "created rowinit" in out
    assert len(s.objects["colinit"]) == 24


def test_second_load_gets_qualified_names_never_overwrites(session, tmp_path):
    write_matinit(tmp_path / "run2.dat", seed=7)
    before = session.objects["colinit"]
    out = text_of(run(session, 'load "run2.dat"'))
    assert "created colinit@run2" in out
    assert session.objects["colinit"] is before
    assert not np.array_equal(session.objects["colinit@run2"].columns["time"], before.columns["time"])


def test_one_load_of_several_files_merges_same_experiment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "p.cll.1.dat")
    write_matinit(tmp_path / "p.cll.2.dat", seed=3)
    s = Session()
    run(s, 'load "p.cll.*.dat"')
    assert len(s.objects["colinit"]) == 48 and "p.cll.2.dat" in s.objects["colinit"].origin


def test_one_load_never_merges_the_experiments_of_different_programs(tmp_path, monkeypatch):
    """A review: `load "*.cll.*.dat"` in a folder of several programs' traces merged their
    experiments of one name (fft_mpi's and fft_pub's `f`), fitting one program's times as
    repetitions of another's; and a third program's `f` of another formula split fft_mpi's own
    P = 1 and P = 2 files apart. Each program's files now merge, apart from the others'."""
    monkeypatch.chdir(tmp_path)
    fft = "f[0] + f[1]*N*log(N)"
    for program, procs, formula, scale in (("fft_mpi", 1, fft, 1.0), ("fft_mpi", 2, fft, 1.0),
                                           ("fft_pub", 1, fft, 3.0), ("fig1_pub", 2, "f[0]*w", 1.0)):
        records = [(scale * 1e-8 * n * np.log(n), n) for n in (1024, 2048, 4096) for _ in range(2)]
        variable = "w" if formula == "f[0]*w" else "N"
        (tmp_path / f"{program}.cll.{procs}.dat").write_text(
            trace_text({"f": (formula, [variable], records)}, program=program, procs=procs))
    s = Session()
    said = text_of(run(s, 'load "*.cll.*.dat"'))
    assert sorted(n for n in s.objects if n.startswith("f")) == ["f@fft_mpi", "f@fft_pub", "f@fig1_pub"]
    assert len(s.objects["f@fft_mpi"]) == 12 and len(s.objects["f@fft_pub"]) == 6
    assert ("warning: these files are the traces of several programs (fft_mpi, fft_pub, fig1_pub): "
            "experiments of one name from different programs (f) are kept apart") in said
    run(s, "delete f@fft_mpi, f@fft_pub, f@fig1_pub")
    said = text_of(run(s, 'load "fft_mpi.cll.*.dat"'))         # one program: merged, no warning
    assert len(s.objects["f"]) == 12 and "warning" not in said


def test_damaged_trace_reports_lines_and_keeps_good_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = trace_text({"f": ("f[0] + f[1]*N", ["N"], [(1e-3, 10), (2e-3, 20), (3e-3, 30)])}, complete=False)
    text = text.replace("f 0 0 0.002 20.0", "f 0 0 zz 20.0")
    (tmp_path / "bad.dat").write_text(text)
    s = Session()
    results = run(s, 'load "bad.dat"')
    warnings = [r.text for r in results if isinstance(r, Note) and r.warning]
    data_line = text.splitlines().index("f 0 0 zz 20.0") + 1
    assert any(w.startswith(f"bad.dat:{data_line}:") for w in warnings)
    assert any("cut short" in w for w in warnings)
    assert list(s.objects["f"].columns["N"]) == [10, 30]


def test_missing_file_is_one_clear_error(session):
    assert "no such file" in error_of(session, 'load "nope.dat"').message


def test_exporting_onto_a_folder_names_the_folder(session, tmp_path):
    assert f"{str(tmp_path)!r} is a folder: name a file in it" in error_of(session, f'export colinit "{tmp_path}"').message


@pytest.mark.parametrize("statement, message", [
    ('load "."', "'.' is a folder, not a trace file (a glob such as '*.dat' loads the traces in it)"),
    ('load "/dev/null"', "'/dev/null' is not a regular file (a device, a pipe or a socket)"),
    ('load "matinit.cll.1.dat", "./matinit.cll.1.dat"', "'./matinit.cll.1.dat' is named twice (also as "
                                                        "'matinit.cll.1.dat'): its records would count twice"),
    ('load "*.dat", "matinit.cll.1.dat"', "'matinit.cll.1.dat' is named twice"),
    ("m = merge colinit, rowinit, colinit", "colinit is named twice: its records would count twice"),
])
def test_what_is_not_one_trace_file_once_is_one_clear_error(session, statement, message):
    assert message in error_of(session, statement).message
    assert "m" not in session.objects


def test_where_subset_and_empty_selection(session):
    run(session, "small = colinit where N <= 64 and rank == 0")
    assert set(session.objects["small"].columns["N"]) == {16, 32, 64}
    err = error_of(session, "none = colinit where N > 1e9")
    assert "selects none" in err.message and "none" not in session.objects


def test_unknown_column_points_at_it_and_suggests(session):
    err = error_of(session, "s = colinit where NN <= 3")
    assert "no column 'NN'" in err.message and "did you mean 'N'" in err.message
    assert err.span.column == 19


def test_unknown_object_suggests_nearest(session):
    err = error_of(session, "show colnit")
    assert "no object called 'colnit'" in err.message and "did you mean 'colinit'" in err.message
    assert (err.span.line, err.span.column) == (1, 6)


def test_with_transforms_and_adds_columns(session):
    run(session, "us = colinit with time = time * 1e6, n2 = N*N")
    us = session.objects["us"]
    assert np.allclose(us.columns["time"], session.objects["colinit"].columns["time"] * 1e6)
    assert np.allclose(us.columns["n2"], us.columns["N"] ** 2)


def test_merge_same_formula_and_refuse_different(session, tmp_path):
    write_matinit(tmp_path / "b.dat", seed=5)
    run(session, 'load "b.dat"')
    run(session, "both = merge colinit, colinit@b")
    assert len(session.objects["both"]) == 48
    err = error_of(session, "x = merge colinit, rowinit")
    assert "formulas differ" in err.message and "x" not in session.objects


def test_aggregate_one_record_per_point(session):
    run(session, "agg = aggregate colinit by min")
    agg = session.objects["agg"]
    assert len(agg) == 8 and set(agg.columns["count"]) == {3}
    times = session.objects["colinit"].columns["time"][session.objects["colinit"].columns["N"] == 16]
    assert agg.columns["time"][agg.columns["N"] == 16][0] == times.min()
    assert "aggregate by" in error_of(session, "a = aggregate colinit by mode").message


def test_aggregate_of_an_experiment_without_records_says_so(session):
    empty = session.objects["colinit"]
    session.objects["none"] = empty.replace(name="none", columns={c: v[:0] for c, v in empty.columns.items()})
    assert error_of(session, "a = aggregate none").message == "cannot aggregate none: it has no records"


def test_aggregate_skips_invalid_times_as_the_fit_does(session):
    run(session, "bad = colinit with time = time * (N != 16 or time > 0) / (N != 32)")
    agg = run(session, "agg = aggregate bad") and session.objects["agg"]
    assert agg.columns["N"].tolist() == [16, 64, 128, 256, 512, 1024, 2048]  # N=32 was all inf
    assert np.isfinite(agg.columns["time"]).all()
    run(session, "none = colinit with time = 0 * time")
    assert "no valid times" in error_of(session, "agg = aggregate none").message


def test_reformulate_validates(session):
    run(session, 'g = colinit formula "g[0] + g[1]*N*N*N"')
    assert str(session.objects["g"].formula) == "g[0] + g[1]*N*N*N"
    err = error_of(session, 'g = colinit formula "g[0] * g[1]*N"')
    assert "bad formula" in err.message and err.span.column > 20
    assert "not a column" in error_of(session, 'g = colinit formula "g[0] + g[1]*M"').message


def test_settings_show_change_and_reject(session):
    run(session, "set threshold 2%; set split off; set aggregate min")
    settings = session.fit_settings()
    assert (settings.threshold, settings.split, settings.aggregate) == (0.02, False, "min")
    table = run(session, "set")[0]
    assert ("threshold", 0.02, "changed") in table.rows
    assert "did you mean 'threshold'" in error_of(session, "set treshold 3").message
    assert "between 0 and 1" in error_of(session, "set alpha 2").message
    assert "on or off" in error_of(session, "set split maybe").message


def test_fit_finds_the_cache_step_and_reports_it(session):
    results = run(session, "fit colinit")
    report = next(r for r in results if isinstance(r, ModelReport))
    model = session.objects["colinit.model"]
    assert report.model is model and len(model.pieces) == 2
    assert 256 < model.cuts[0].value < 512  # the fixture's cache step is at N = 512
    out = text_of(results)
    assert "interval 2:" in out and "cut at N =" in out and "±" in out
    aleph = out.split("sets ℵ")[1].splitlines()
    slope = next(i for i, line in enumerate(aleph) if line.strip().startswith("colinit[1]"))
    assert "for N <= " in aleph[slope] and "for N > " in aleph[slope + 1]  # the paper's Table 2


def test_named_fit_and_model_refused_where_an_experiment_is_needed(session):
    run(session, "m = fit rowinit")
    assert "is a model" in error_of(session, "x = m where N <= 64").message


def test_fit_errors_are_one_sentence(session):
    run(session, "few = colinit where N <= 16")
    assert "need at least 2 distinct points" in error_of(session, "fit few").message
    run(session, "z = colinit with time = time * 0")
    assert "24 records" in error_of(session, "fit z").message
    run(session, 'pp = colinit formula "pp[0] + pp[1]*N + pp[2]*max(N, 10)"')     # N >= 16: max(N, 10) is N
    assert "cannot be told apart" in error_of(session, "fit pp").message


def test_non_positive_times_are_counted(session):
    run(session, "neg = colinit with time = time - 1e-5")
    out = text_of(run(session, "fit neg"))
    assert "9 records were left out" in out


def test_two_plot_scales_are_named_as_the_user_wrote_them(session):
    assert error_of(session, "plot colinit log loglog").message == \
        "plot: two scales (log and loglog): give one, log or loglog"


def test_drop_refits_without_constants(session):
    run(session, "fit rowinit")
    assert "can be dropped without making the fit worse" in error_of(session, "drop rowinit").message
    run(session, "drop rowinit rowinit[0]")
    assert session.objects["rowinit.model"].formula.constants == ("rowinit[1]",)
    assert "not a constant" in error_of(session, "drop rowinit rowinit[7]").message
    assert "rowinit[1] is named twice" in error_of(session, "drop rowinit rowinit[1], rowinit[1]").message


def test_drop_on_a_model_kept_under_its_own_name_replaces_it(session):
    full = session.objects["colinit"].formula.constants
    run(session, "m = fit colinit")
    out = text_of(run(session, "drop m colinit[1]"))
    assert "replaced m: model of colinit" in out and "colinit.model" not in session.objects
    assert session.objects["m"].formula.constants == tuple(c for c in full if c != "colinit[1]")


def test_a_formula_that_cannot_be_fitted_names_the_drop_that_can(session):
    run(session, 'pp = colinit formula "pp[0] + pp[1]*N + pp[2]*max(N, 10) + pp[3]*log(N)"')
    message = error_of(session, "fit pp").message
    assert message.endswith("`drop pp pp[2]` fits the formula without it")
    assert "cannot fit pp" in error_of(session, "drop pp").message      # no named constant: nothing to go on
    out = text_of(run(session, "drop pp pp[2]"))
    assert out.startswith("cannot fit pp: constants") and "dropped pp[2]: median relative error" in out
    assert session.objects["pp.model"].formula.constants == ("pp[0]", "pp[1]", "pp[3]")


def test_predict_fits_first_and_marks_extrapolation(session):
    results = run(session, "predict colinit N=8192")
    assert "had no model: fitted it" in render(results[0])
    warnings = len(session.objects["colinit.model"].warnings)    # said, since predict does not show them
    assert render(results[1]) == ("the fit of colinit gave 1 warning: `fit colinit` shows it" if warnings == 1 else
                                  f"the fit of colinit gave {warnings} warnings: `fit colinit` shows them")
    table = results[-1]
    assert table.rows[0][0] == 8192 and "extrapolated" in table.rows[0][-1]
    assert table.rows[0][2] <= table.rows[0][1] <= table.rows[0][3]


def test_predict_ranges_lists_and_errors(session):
    table = run(session, "predict rowinit N=1024..65536 *2")[-1]
    assert [r[0] for r in table.rows] == [1024 * 2 ** k for k in range(7)]
    table = run(session, "predict rowinit N=100..300 step 100")[-1]
    assert [r[0] for r in table.rows] == [100, 200, 300]
    assert "no variable 'M'" in error_of(session, "predict rowinit M=3").message


def test_predict_at_dataset_and_at_sample_points(session):
    run(session, "big = colinit where N >= 1024")
    table = run(session, "predict colinit at big")[-1]
    assert table.headers[:3] == ("N", "measured [s]", "predicted [s]") and len(table.rows) == 2
    assert any(line.startswith("error = (predicted - measured) / measured; |error|: median")
               for line in table.footer)
    table = run(session, "predict colinit")[-1]
    assert len(table.rows) == 8


def test_plot_is_text_in_80_columns(session):
    out = run(session, "plot colinit vs N log")[-1]
    assert isinstance(out, Text) and "measured" in out.body and "cut N=" in out.body
    assert max(len(line) for line in out.body.splitlines()) <= 80
    assert "\x1b" not in out.body
    assert "no variable 'P'" in error_of(session, "plot colinit by P").message
    assert "must differ" in error_of(session, "plot colinit by N").message


def test_export_csv_round_trip_and_unwritable_path(session, tmp_path):
    run(session, 'export colinit "c.csv"')
    run(session, 'back = load "c.csv" as back formula "back[0] + back[1]*N*N"'.replace("back = ", ""))
    assert np.allclose(session.objects["back"].columns["time"], session.objects["colinit"].columns["time"])
    assert "cannot write" in error_of(session, f'export colinit "{tmp_path}/no/such/dir/x.csv"').message
    assert "say which format" in error_of(session, 'export colinit "x.dat"').message


def test_rename_delete_list(session):
    [renamed, _] = run(session, "rename colinit c; delete rowinit")
    assert renamed.text.startswith("renamed colinit to c: ")
    table = run(session, "list")[0]
    assert isinstance(table, Table) and [r[0] for r in table.rows] == ["c"]
    assert "already in use" in error_of(session, "b = c; rename b c").message
    err = error_of(session, "delete c, b, c")          # a review: "deleted c, b, c"
    assert err.message == "c is named twice" and err.span.column == 14 and {"b", "c"} <= set(session.objects)


def test_an_experiments_model_goes_with_it_when_it_is_renamed(session):
    run(session, "fit colinit")
    fitted = session.objects["colinit.model"]
    said = text_of(run(session, "rename colinit c"))
    assert "renamed colinit.model to c.model" in said and "colinit.model" not in session.objects
    assert session.objects["c.model"].name == "c" and session.objects["c.model"].pieces == fitted.pieces
    assert "had no model" not in text_of(run(session, "predict c N=100"))      # not fitted again


def test_load_as_one_name_merges_one_experiment_from_several_files(session, tmp_path):
    from support.machines import write_stream_trace
    write_stream_trace(tmp_path / "a.cll.1.dat", [1024, 2048])
    write_stream_trace(tmp_path / "b.cll.1.dat", [4096, 8192], seed=2)
    said = text_of(run(session, 'load "a.cll.1.dat", "b.cll.1.dat" as both'))
    assert "created both: 12 records" in said
    assert sorted(set(session.objects["both"].columns["N"])) == [1024, 2048, 4096, 8192]
    assert "names a single experiment" in error_of(session, 'load "matinit.cll.1.dat" as two').message


def test_predict_at_an_unknown_name_fits_nothing(session):
    assert "no object called 'nosuch'" in error_of(session, "predict colinit at nosuch").message
    assert "colinit.model" not in session.objects


def test_replacing_an_experiment_drops_its_stale_model(session):
    run(session, "fit colinit")
    run(session, "colinit = colinit where N <= 256")
    assert "colinit.model" not in session.objects


def test_help_lists_every_command_and_explains_one(session):
    out = text_of(run(session, "help"))
    for name in ("load", "fit", "predict", "report", "plot", "export"):
        assert re.search(rf"^  {re.escape(name)}\s", out, re.M)
    assert re.search(r"^  EXPERIMENT where CONDITION\s+help where$", out, re.M)
    detail = text_of(run(session, "help predict"))
    assert "Examples:" in detail and "N=1024..65536 *2" in detail
    assert "did you mean 'predict'" in error_of(session, "help predikt").message


def test_csv_load_needs_name_and_formula_and_reports_bad_rows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("N,time\n10,1e-3\n20,oops\n30,3e-3\n")
    s = Session()
    assert "with a name and a formula" in error_of(s, 'load "d.csv"').message
    results = run(s, 'load "d.csv" as d formula "d[0] + d[1]*N"')
    assert any(isinstance(r, Note) and r.warning and r.text.startswith("d.csv:3:") for r in results)
    assert list(s.objects["d"].columns["N"]) == [10, 30]
    err = error_of(s, 'load "d.csv" as e formula "e[0] + e[0]*N"')
    assert "bad formula" in err.message and err.span.column > 27


@pytest.mark.parametrize("variable, said", [("time", "'time' is the time the formula models, not a variable"),
                                             ("rank", "'rank' is measured with the time of each record")])
def test_csv_load_refuses_what_the_formula_command_refuses(tmp_path, monkeypatch, variable, said):
    """A review: `load "c.csv" as c formula "c[0] + c[1]*time"` loaded, and fitted the time
    against itself (R² 1, error 0%); the formula command refuses it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("N,rank,time\n10,0,1e-3\n20,1,2e-3\n30,0,3e-3\n")
    err = error_of(Session(), f'load "d.csv" as d formula "d[0] + d[1]*{variable}"')
    assert err.message.startswith(said) and err.span.column == 40     # the variable, inside the string


def test_describe_of_a_subset_and_of_its_parts_merged_back_counts_what_they_hold(session):
    """A review: describe of a subset printed the trace header's `records: 48` under its own
    count, and a merge of two subsets of one trace said it was merged from 2 trace files,
    listing that file twice."""
    said = text_of(run(session, "small = colinit where N <= 64; describe small"))
    assert "records:" not in said and "columns:" not in said and "program: matinit" in said
    said = text_of(run(session, "a = colinit where N < 100; b = colinit where N >= 100; m = merge a, b; describe m"))
    assert "merged from" not in said and "origin: matinit.cll.1.dat" in said
    assert f"{len(session.objects['colinit'])} records at" in said


def test_load_as_names_a_single_experiment_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.dat").write_text(trace_text({"f": ("f[0] + f[1]*N", ["N"], [(1e-3, 10), (2e-3, 20)])}))
    write_matinit(tmp_path / "two.dat")
    s = Session()
    run(s, 'load "one.dat" as g')
    assert "g" in s.objects and "f" not in s.objects
    assert "single experiment" in error_of(s, 'load "two.dat" as h').message


def test_predict_at_measures_with_the_estimator_the_model_was_fitted_with(session):
    """`set aggregate min` before the fit: the measured column is the minimum of each point's
    repetitions, also after the setting changed back (issue 10: it showed the median)."""
    run(session, "set aggregate min; fit colinit; set aggregate median")
    table = run(session, "predict colinit at colinit")[-1]
    colinit = session.objects["colinit"]
    N, time = colinit.columns["N"], colinit.columns["time"]
    measured = {row[0]: row[1] for row in table.rows}
    assert measured == {n: time[N == n].min() for n in np.unique(N)}
    assert "measured = the min of each sample point's repetitions, as in the fit" in table.footer
