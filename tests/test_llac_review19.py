"""The llac-side findings of the new-user review (19): predictions over a product of ranges
are capped, `X.model` holds X's model and nothing else, records loaded or merged twice are
refused, hand-edited traces are read strictly, and messages say the right thing."""
import contextlib
import os
import subprocess
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from llac.errors import LlacError
from llac.experiment import Experiment
from llac.session import Session
from support.traces import trace_text, write_matinit
from test_llac_cli import llac
from test_session_llac import error_of, run, session, text_of  # noqa: F401 (session: the fixture)


# ---- 1. the product of ranges
def test_a_product_of_ranges_beyond_the_cap_is_one_error_naming_it(tmp_path):
    write_matinit(tmp_path / "m.dat")
    done = llac("-c", 'load "m.dat"; c = colinit with P = N; c = c formula "c[0] + c[1]*N*P"; '
                'predict c N=1..100000 step 1 P=1..100000 step 1', cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "100,000 x 100,000 = 10,000,000,000 points to predict: at most 100,000" in done.stderr
    assert done.stdout.count("\n") < 10


def test_a_product_within_the_cap_predicts_every_combination(session):
    run(session, 'c = colinit with P = N; c = c formula "c[0] + c[1]*N*P"')
    assert len(run(session, "predict c N=1..100 P=1..1000")[-1].rows) == 100_000
    assert "1,000 x 101 = 101,000 points" in error_of(session, "predict c N=1..1000 P=0..100").message


# ---- 2. X.model
def test_only_xs_model_may_be_called_x_model(session):
    for statement, message in [
            ("colinit.model = rowinit", "colinit.model is the name of colinit's model: an experiment cannot"),
            ("rename rowinit colinit.model", "colinit.model is the name of colinit's model: an experiment cannot"),
            ("colinit.model = fit rowinit", "colinit.model is the name of colinit's model, and this is a model of rowinit"),
            ("m = fit rowinit; rename m colinit.model", "and this is a model of rowinit")]:
        assert message in error_of(session, statement).message
        assert "rowinit" in session.objects and not isinstance(session.objects.get("colinit.model"), Experiment)
    run(session, "m = fit colinit; rename m colinit.model")
    assert session.objects["colinit.model"].name == "colinit" and "m" not in session.objects
    assert "predicted" in text_of(run(session, "predict colinit N=100; report"))


def test_a_refused_rename_keeps_the_object(tmp_path):
    write_matinit(tmp_path / "m.dat")
    done = llac("-c", 'load "m.dat"; rename rowinit colinit.model', cwd=tmp_path)
    assert done.returncode == 1 and "internal error" not in done.stderr
    done = llac("-c", 'load "m.dat"; colinit.model = fit rowinit; predict colinit N=100', cwd=tmp_path)
    assert "this is a model of rowinit" in done.stderr and "predicted" not in done.stdout


NAMES = ["colinit", "rowinit", "colinit.model", "rowinit.model", "m", "m.model", "x"]
name = st.sampled_from(NAMES)
model_statement = st.one_of(
    st.builds("{} = {}".format, name, name), st.builds("{} = fit {}".format, name, name),
    st.builds("{} = drop {}".format, name, name), st.builds("rename {} {}".format, name, name),
    st.builds("fit {}".format, name), st.builds("delete {}".format, name),
    st.builds("predict {} N=100".format, name), st.builds("predict {} at {}".format, name, name),
    st.builds("describe {}".format, name), st.just("report"), st.just("predict"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statements=st.lists(model_statement, min_size=1, max_size=6))
def test_no_statement_sequence_puts_anything_but_xs_model_under_x_model(tmp_path, statements):
    write_matinit(tmp_path / "m.dat")
    with contextlib.chdir(tmp_path):
        session = Session()
        run(session, 'load "m.dat"')
        for statement in statements:
            with contextlib.suppress(LlacError):
                run(session, statement)
            for key, obj in session.objects.items():
                if key.endswith(".model"):
                    assert not isinstance(obj, Experiment) and obj.name == key.removesuffix(".model")


# ---- 3. records loaded or merged twice
def test_a_copy_of_a_trace_in_one_load_is_left_out_with_a_warning(tmp_path):
    write_matinit(tmp_path / "m.dat")
    (tmp_path / "m2.dat").write_bytes((tmp_path / "m.dat").read_bytes())
    done = llac("-c", 'load "m.dat", "m2.dat"; describe colinit', cwd=tmp_path)
    assert "warning: m2.dat: its colinit holds the same records as m.dat's" in done.stderr + done.stdout
    assert "created colinit: 24 records" in done.stdout
    piped = llac("-c", 'load "-", "m.dat"', cwd=tmp_path, stdin=(tmp_path / "m.dat").read_text())
    assert "m.dat: its colinit holds the same records as <stdin>'s" in piped.stderr + piped.stdout
    assert "created colinit: 24 records" in piped.stdout


def test_another_run_merges_and_a_copy_loaded_later_is_flagged(session, tmp_path):
    write_matinit(tmp_path / "other.dat", seed=5)
    (tmp_path / "copy.dat").write_bytes((tmp_path / "matinit.cll.1.dat").read_bytes())
    assert "same records" not in text_of(run(session, 'load "other.dat"; x = merge colinit, colinit@other'))
    out = text_of(run(session, 'load "copy.dat"'))
    assert "copy.dat: its colinit holds records of colinit (loaded already from matinit.cll.1.dat)" in out
    assert "would count twice" in error_of(session, "x = merge colinit, colinit@copy").message


def test_overlapping_subsets_and_derived_copies_are_not_merged(session):
    run(session, "a = colinit where N < 64; b = colinit where N >= 32; e = colinit with extra = 1")
    assert "a and b share" in error_of(session, "x = merge a, b").message
    assert "e and colinit share 24 of their records" in error_of(session, "x = merge e, colinit").message
    run(session, "b = colinit where not (N < 64); x = merge a, b")
    assert len(session.objects["x"]) == len(session.objects["colinit"])


# ---- 4. hand-edited traces
def edited(tmp_path, edit) -> str:
    """The lines of the matinit test trace, changed by `edit` (a function of the list), in m.dat."""
    lines = write_matinit(tmp_path / "m.dat").read_text().splitlines()
    (tmp_path / "m.dat").write_text("\n".join(edit(lines)) + "\n")
    return lines


def test_a_second_formula_line_makes_its_experiment_invalid_at_its_line(tmp_path):
    edited(tmp_path, lambda lines: [*lines[:6], "#  formula: colinit[0] + colinit[1]*N", *lines[6:]])
    done = llac("-c", 'load "m.dat"', cwd=tmp_path)
    assert ("m.dat:7: experiment 'colinit': 'formula:' is given twice (also at line 6): which one holds "
            "is unclear (the experiment and its records are ignored)") in done.stderr
    assert "created colinit" not in done.stdout and "created rowinit" in done.stdout


def test_a_second_status_line_is_an_error_at_its_line(tmp_path):
    edited(tmp_path, lambda lines: [*lines[:4], "#status: signal SIGKILL", *lines[4:]])
    done = llac("-c", 'load "m.dat"', cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "m.dat:5: the header gives 'status:' twice (also at line 4)" in done.stderr


def test_records_with_a_variable_nan_or_a_fractional_rank_are_left_out_at_their_line(tmp_path):
    lines = edited(tmp_path, lambda lines: lines)
    data = lines.index("#data") + 1          # file line data + 1 is the first record
    lines[data] = lines[data].rsplit(" ", 1)[0] + " nan"
    lines[data + 1] = lines[data + 1].replace("colinit 0 0 ", "colinit 0.5 0 ", 1)
    (tmp_path / "m.dat").write_text("\n".join(lines) + "\n")
    done = llac("-c", 'load "m.dat"; fit colinit', cwd=tmp_path)
    assert f"m.dat:{data + 1}: record of 'colinit': N = nan is not a finite number; it is left out" in done.stderr
    assert f"m.dat:{data + 2}: record of 'colinit': rank = 0.5 is not a whole number >= 0; it is left out" in done.stderr
    assert "created colinit: 22 records" in done.stdout and done.returncode == 0


def test_a_byte_order_mark_before_the_first_line_is_accepted(tmp_path):
    write_matinit(tmp_path / "m.dat")
    (tmp_path / "bom.dat").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "m.dat").read_bytes())
    done = llac("-c", 'load "bom.dat"', cwd=tmp_path)
    assert done.returncode == 0 and "created colinit: 24 records" in done.stdout
    piped = llac("-c", 'load "-"', cwd=tmp_path, stdin=(tmp_path / "bom.dat").read_bytes().decode())
    assert piped.returncode == 0 and "created colinit: 24 records" in piped.stdout


# ---- 5. wording
def test_fit_warnings_have_one_prefix_and_a_zero_prediction_says_why_it_has_no_interval(tmp_path):
    (tmp_path / "m.dat").write_text(trace_text({"tiny": ("tiny[0] + tiny[1]*N", ["N"],
                                                         [(3e-8 * (1 + 0.01 * (k % 3)), n) for n in (1, 2, 4, 8, 16)
                                                          for k in range(3)])}).replace(
        "#status: complete", "#status: complete\n#overhead: 2.3e-08"))
    done = llac("-c", 'load "m.dat"; fit tiny; predict tiny N=0', cwd=tmp_path)
    assert "sample points take less than 10x the timer's own cost" in done.stdout + done.stderr
    assert "warning: warning:" not in done.stdout + done.stderr


def test_a_zero_prediction_has_no_interval_and_says_so(session):
    run(session, 'z = colinit formula "z[0]*N"')
    out = text_of(run(session, "predict z N=0"))
    assert "no prediction interval at N=0: the prediction there is 0 s" in out and "overflows" not in out


def test_where_warns_of_compared_values_that_are_not_finite(session):
    out = text_of(run(session, "a = colinit where time/0 > 1"))
    assert "warning: time/0 (compared): 24 of 24 values are not finite" in out
    assert "not finite" not in text_of(run(session, "b = colinit where N > 100 and log(N - 100) < 10"))


def test_a_machine_database_that_is_not_sqlite_says_what_to_do(tmp_path):
    (tmp_path / "db.sqlite").write_text("not a database\n")
    done = subprocess.run([sys.executable, "-m", "llac", "-c", "machine list"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "LLAC_MACHINE_DB": str(tmp_path / "db.sqlite")})
    assert "not a usable machine database" in done.stderr and "measures this machine" not in done.stderr
    assert "move that file away and run `call probe` to make a new one" in done.stderr


def test_predict_at_another_experiment_says_so_and_at_a_subset_does_not(session):
    out = text_of(run(session, "predict colinit at rowinit by N"))
    assert "the model of colinit (colinit[0] + colinit[1]*N*N) is compared with the times of rowinit, " \
           "another experiment" in out
    assert "another experiment" in text_of(run(session, "predict colinit at rowinit"))
    run(session, "small = colinit where N < 512; big = colinit where N >= 512")
    assert "another experiment" not in text_of(run(session, "predict small at big; predict small at big by N"))


def test_predict_at_the_same_experiment_of_another_program_says_so(tmp_path, monkeypatch):
    """A review: fft_pub's f against fft_mpi's f, both declared f, got no note."""
    monkeypatch.chdir(tmp_path)
    records = [(1e-9 * n, n) for n in (100, 200, 400, 800) for _ in range(2)]
    for program in ("one", "two"):
        (tmp_path / f"{program}.cll.1.dat").write_text(trace_text({"f": ("f[0] + f[1]*N", ["N"], records)},
                                                                   program=program))
    session = Session()
    run(session, 'load "one.cll.1.dat", "two.cll.1.dat"; fit f@one')
    assert "f@two, an experiment of another program (two)" in text_of(run(session, "predict f@one at f@two"))
