"""The working-set clause `bytes EXPR` end to end: `call` checks it and captures its variables,
the runtime writes it in the experiment's header, llac reads it (a bad one is a warning and the
experiment loads without it), keeps it through its operations and model files, and
`working_set_bytes` evaluates it."""
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from call import cli
from cll_grammar.formula import FormulaError
from cll_grammar.workingset import parse_working_set
from llac.experiment import NoWorkingSet, working_set_bytes
from llac.modelio import read_model, write_model
from llac.model import fit_experiment
from llac.tables import aggregate_experiment, merge_experiments
from llac.trace import read_trace, write_trace

from test_call_samples import ENV, REPO, call

PROGRAM = r"""#include <stdlib.h>
int main(void) {
    int N, M = 3;
    #pragma cll for(N = 16; N <= 256; N *= 4)
    for (int r = 0; r < 2; r++) {
        double *a = calloc(N, 8);
        #pragma cll t t[0] + t[1]*N bytes 8 * N*M
        for (int i = 0; i < N; i++) a[i] = a[i] * 2 + 1;
        #pragma cll end t
        free(a);
    }
    #pragma cll end for
    #pragma cll report all
    return 0;
}
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    """The trace of PROGRAM, run by `call run`."""
    work = tmp_path_factory.mktemp("ws")
    (work / "prog.c").write_text(PROGRAM)
    done = call("run", "prog.c", cwd=work)
    assert done.returncode == 0, done.stderr
    return work / "prog.cll.1.dat"


def test_the_trace_header_carries_the_working_set_and_its_extra_variable(traced):
    header = traced.read_text().split("#data\n")[0]
    assert "#experiment: t\n#  formula: t[0] + t[1]*N\n#  bytes: 8*N*M\n" in header
    assert "#  columns: rank thread time N M\n" in header   # M: only the working set needs it


def test_llac_loads_it_and_evaluates_it(traced):
    trace = read_trace(traced)
    experiment = trace.experiments["t"]
    assert trace.problems == () and experiment.working_set == "8*N*M"
    assert sorted(set(working_set_bytes(experiment, experiment.columns))) == [384, 1536, 6144]
    points = {"N": np.array([1.0, 1024.0]), "M": np.array([3.0, 1.0])}
    assert working_set_bytes(experiment, points).tolist() == [24.0, 8192.0]


def test_it_survives_where_with_merge_export_and_model_files(traced, tmp_path):
    experiment = read_trace(traced).experiments["t"]
    derived = experiment.select(experiment.columns["N"] > 16).with_column("x", 1.0)
    assert derived.working_set == "8*N*M"
    assert merge_experiments([experiment, derived]).working_set == "8*N*M"
    assert merge_experiments([experiment, derived.replace(working_set="8*N")]).working_set is None
    assert aggregate_experiment(experiment).working_set == "8*N*M"
    write_trace([derived], tmp_path / "out.dat")
    assert read_trace(tmp_path / "out.dat").experiments["t"].working_set == "8*N*M"
    model = fit_experiment(experiment)
    assert model.working_set == "8*N*3"      # M, not a formula variable, is 3 in every record
    write_model(model, "m", str(tmp_path / "m.json"))
    assert read_model(str(tmp_path / "m.json"))[1].working_set == "8*N*3"
    assert working_set_bytes(model, {"N": [2]}).tolist() == [48.0]


def test_a_model_keeps_an_extra_variable_only_where_it_has_one_value(traced):
    experiment = read_trace(traced).experiments["t"]
    varied = experiment.with_column("M", np.where(experiment.columns["N"] > 16, 3.0, 5.0))
    model = fit_experiment(varied)
    assert model.working_set == "8*N*M"
    with pytest.raises(NoWorkingSet, match=r"needs M, which the points lack .* `where M == \.\.\.`"):
        working_set_bytes(model, model.sample_points)


def test_redefining_time_drops_it(traced):
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "{traced}"\nc = t with time = N*2\ndescribe c'],
                          env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "time is redefined: the working set is dropped" in done.stdout and "bytes:" not in done.stdout


def test_llac_session_shows_it(traced):
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "{traced}"\ndescribe t'],
                          env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "bytes: 8*N*M" in done.stdout, done.stderr


def test_working_set_bytes_says_what_is_missing(traced):
    experiment = read_trace(traced).experiments["t"]
    with pytest.raises(NoWorkingSet, match=r"needs M, which the points lack"):
        working_set_bytes(experiment, {"N": np.array([1.0])})
    with pytest.raises(NoWorkingSet, match="states no working set"):
        working_set_bytes(experiment.replace(working_set=None), experiment.columns)


def _with_bytes(traced: Path, tmp_path: Path, value: str) -> Path:
    path = tmp_path / "bad.dat"
    path.write_text(traced.read_text().replace("#  bytes: 8*N*M", f"#  bytes: {value}"))
    return path


@pytest.mark.parametrize("value, message", [
    ("8*N*", "bad working set 'bytes: 8*N*' at column 5: the expression ends too early"),
    ("t[0]*N", "bad working set 'bytes: t[0]*N' at column 1: the working set cannot hold a constant"),
    ("8*K", "the working set 'bytes: 8*K' needs K, which the columns lack"),
    ("8*time", "'time' is a column of every trace record"),
])
def test_a_bad_working_set_in_a_trace_is_a_warning_and_the_experiment_loads(traced, tmp_path, value, message):
    path = _with_bytes(traced, tmp_path, value)
    trace = read_trace(path)
    experiment = trace.experiments["t"]
    assert len(experiment) == 6 and experiment.working_set is None and "bytes" not in experiment.header
    (problem,) = trace.problems
    bytes_line = path.read_text().splitlines().index(f"#  bytes: {value}") + 1
    assert problem.line == bytes_line and message in problem.message
    assert "(the experiment loads without its working set)" in problem.message


def check(tmp_path: Path, pragma_line: str, name: str = "p.c") -> tuple[int, str]:
    """`call check` of PROGRAM with the experiment's begin line replaced."""
    text = PROGRAM.replace("#pragma cll t t[0] + t[1]*N bytes 8 * N*M", pragma_line)
    (tmp_path / name).write_text(text)
    done = call("check", name, cwd=tmp_path)
    return done.returncode, done.stderr


@pytest.mark.parametrize("line, where, message", [
    ("#pragma cll t t[0]*N bytes", "p.c:7:35", "this '#pragma cll' line ends too early"),
    ("#pragma cll t t[0]*N bytes 8*", "p.c:7:38", "this '#pragma cll' line ends too early"),
    ("#pragma cll t t[0]*N bytes 8*(N", "p.c:7:40", "this '#pragma cll' line ends too early"),
    ("#pragma cll t t[0]*N bytes 8*t[1]*N", "p.c:7:38", "cannot hold a constant such as t[1]"),
    ("#pragma cll t t[0]*N bytes 8*N > 4", "p.c:7:40", "unexpected '>'"),
    ("#pragma cll t t[0]*N bytes (N > 4)*8", "p.c:7:37", "comparisons and 'and', 'or', 'not' have no place"),
    ("#pragma cll t t[0]*N bytes 8*thread", "p.c:7:38", "'thread' is a column of every trace record"),
    ("#pragma cll t t[0]*N bytes 8*foo(N)", "p.c:7:38", "unknown function 'foo'"),
    ("#pragma cll t t[0]*N byte 8*N", "p.c:7:30", "unexpected 'byte' after the formula: only the "
                                                 "clause 'bytes EXPR' (the experiment's working set) "
                                                 "may follow it (did you mean 'bytes'?)"),
    ("#pragma cll t t[0]*max(N M)", "p.c:7:34", "unexpected 'M' inside parentheses: separate a "
                                                "function's arguments with commas (max(N, M))"),
    ("#pragma cll t t[0]*N bytes 8*max(N M)", "p.c:7:44", "unexpected 'M' inside parentheses"),
    ("#pragma cll t t[0]*N bytes 8*N/(N-N)", "p.c:7:41", "division by zero: the divisor N - N is 0"),
    ("#pragma cll t t[0]*N bytes -8*N", "p.c:7:36", "the working set -8*N is no size"),
    ("#pragma cll t t[0]*N bytes 0", "p.c:7:36", "the working set 0 is no size"),
    ("#pragma cll t t[0] + t[1]*N + t[2]*2*N", "p.c:7:39", "terms t[1]*N and t[2]*2*N cost the same"),
])
def test_malformed_clauses_are_located_errors(tmp_path, line, where, message):
    status, err = check(tmp_path, line)
    assert status == 1 and f"{where}: error: " in err and message in err, err


def test_two_working_sets_for_one_experiment_are_an_error(tmp_path):
    text = PROGRAM.replace("        free(a);", "        #pragma cll t t[0] + t[1]*N bytes 16*N\n"
                                              "        #pragma cll end t\n        free(a);")
    (tmp_path / "p.c").write_text(text)
    done = call("check", "p.c", cwd=tmp_path)
    assert done.returncode == 1
    assert "p.c:10:9: error: experiment 't' has two different working sets: 'bytes 16*N' here" in done.stderr
    assert "p.c:7:9: note: and 'bytes 8*N*M' here" in done.stderr


def test_two_translation_units_with_different_working_sets_stop_the_run(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM.replace("return 0;", "other(4); return 0;")
                                     .replace("int main", "void other(int);\nint main"))
    (tmp_path / "other.c").write_text("void other(int N) {\n    int M = 1;\n"
                                      "    #pragma cll t t[0] + t[1]*N bytes 16*N*M\n"
                                      "    #pragma cll end t\n}\n")
    together = call("cc", "prog.c", "other.c", "-o", "prog", cwd=tmp_path)      # refused at build time
    assert together.returncode == 1 and "other.c:3:5: error: experiment 't' has two different working sets" \
        in together.stderr and not (tmp_path / "prog").exists()
    built = call("cc", "-c", "other.c", "-o", "other.o", cwd=tmp_path)          # apart: the runtime tells
    assert built.returncode == 0, built.stderr
    built = call("cc", "prog.c", "other.o", "-o", "prog", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    done = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 70
    assert "experiment 't' has two working sets: " in done.stderr
    assert "'8*N*M' at prog.c:8:9" in done.stderr and "'16*N*M' at other.c:3:5" in done.stderr


# ------------------------------------------------------------------ fuzz

CLAUSE_ALPHABET = st.sampled_from(list("NMs.->t[0]()*/+-^ 8e9_,<") + ["bytes", "log", "sqrt", "time", "f"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(clause=st.lists(CLAUSE_ALPHABET, max_size=8).map("".join))
def test_fuzzed_clauses_never_crash_call_or_the_reader(tmp_path, clause):
    """`call check` of a begin line with a random clause: exit 0 or 1, never a traceback; what
    call accepts, parse_working_set accepts with the same canonical text, and the trace
    reader never raises on it as a header value."""
    line = f"#pragma cll t t[0] + t[1]*N bytes {clause}"
    err = io.StringIO()
    (tmp_path / "f.c").write_text(PROGRAM.replace("#pragma cll t t[0] + t[1]*N bytes 8 * N*M", line))
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["check", str(tmp_path / "f.c")])
    assert status in (0, 1) and "Traceback" not in err.getvalue(), err.getvalue()
    try:
        parsed = parse_working_set(clause)
    except FormulaError:
        parsed = None
    if "//" not in clause and "/*" not in clause:     # else C's comment cuts the pragma line
        assert (status == 0) == (parsed is not None), (clause, err.getvalue())
    trace = tmp_path / "t.dat"
    trace.write_text("#cll-trace 1\n#experiment: t\n#  formula: t[0]*N\n"
                     f"#  bytes: {clause}\n#  columns: rank thread time N\n#data\nt 0 0 1 2\n#end\n")
    assert len(read_trace(trace).experiments["t"]) == 1


@pytest.mark.parametrize("kernel, smallest, working_set", [
    ("triad", 343, "8*N*3"), ("transpose", 23, "8*n*n*2"), ("reduce", 1025, "8*N"), ("chase", 129, "64*N"),
    ("copy", 513, "8*N*2"), ("dot", 513, "8*N*2"), ("stencil", 513, "8*N*2"), ("scale", 1025, "8*N"),
    ("colsum", 33, "8*n*n"), ("gather", 683, "12*N")])
def test_the_cache_kernels_run_and_state_their_working_sets(tmp_path, kernel, smallest, working_set):
    """Each kernel of benchmarks/kernels_cache, at its three smallest sizes, once: its
    working set loads and starts at 8 KiB (8.5 KiB for colsum's odd n = 33)."""
    source = REPO / "benchmarks" / "kernels_cache" / f"{kernel}.c"
    done = call("run", str(source), "--", str(int(smallest * 1.19 ** 2) + 4), "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    trace = read_trace(tmp_path / f"{kernel}.cll.1.dat")
    experiment = trace.experiments[kernel]
    assert trace.problems == () and experiment.working_set == working_set and len(experiment) == 3
    sizes = working_set_bytes(experiment, experiment.columns)
    assert 8 * 2**10 <= sizes.min() <= 8.5 * 2**10 + 8 and np.all(np.diff(sizes) > 0)


def test_the_clause_after_sync_and_a_continuation_line():
    from call.clex import Directive, lex
    from call.pragmas import parse_pragma
    text = "#pragma cll sync f f[0] + f[1]*N \\\n    bytes 8 * s.n*N + 64"
    begin = parse_pragma(next(d for d in lex(text) if isinstance(d, Directive)), "t.c")
    assert begin.sync and begin.name == "f" and str(begin.formula) == "f[0] + f[1]*N"
    assert begin.working_set.text == "8*s.n*N + 64" and begin.working_set.variables == ("s.n", "N")


@pytest.mark.parametrize("text, values, expected", [
    ("8*N*M", {"M": 3}, "8*N*3"),
    ("s.n*p->len + M^2", {"s.n": 2.5, "M": -2}, "2.5*p->len + (-2)^2"),
    ("8*N", {"M": 3}, "8*N"),
])
def test_fixed_variables_are_replaced_by_their_values(text, values, expected):
    from cll_grammar.workingset import with_values
    fixed = with_values(parse_working_set(text), values)
    assert fixed.text == expected
    assert set(fixed.variables) == set(parse_working_set(text).variables) - set(values)


def test_an_extra_variable_that_varies_within_a_sample_point_is_a_warning_at_fit(traced):
    traced_once = read_trace(traced).experiments["t"]
    # the records twice, once at M = 1 and once at M = 2, which costs twice as much
    experiment = traced_once.replace(columns={k: np.concatenate([v, v]) for k, v in traced_once.columns.items()})
    m = np.repeat([1.0, 2.0], len(traced_once))
    varied = experiment.with_column("M", m).with_column("time", experiment.columns["time"] * m)
    [warning] = [w for w in fit_experiment(varied).warnings if "(of the working set)" in w]
    assert warning.startswith("M (of the working set) takes several values within a sample point (1, 2) "
                              "but is not a variable of the formula")
    assert "`where M == 1`" in warning
    by_size = experiment.with_column("M", experiment.columns["N"] / 16)      # one M per size: fine
    assert not [w for w in fit_experiment(by_size).warnings if "(of the working set)" in w]
    idle = experiment.with_column("M", m)                   # M varies, the time does not follow it: fine
    assert not [w for w in fit_experiment(idle).warnings if "(of the working set)" in w]
