"""The user's day (issue 8, items 14, 16, 19, 7): the promised pipe `cat trace | llac -c "fit f;
predict"`, `fit` and `predict` alone, `report`, the help listing, models shown, exported and
loaded back as JSON, `--format json|csv`, one error sign with units, and the `drop` hint.

The trace is real: samples/matinit built and run by `call run` (N up to 512)."""
import csv
import io
import json
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
from llac.commands.modeling import droppable
from llac.session import Session
from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """samples/matinit's trace, from a real `call run` (sizes 16..512, 5 repetitions)."""
    work = tmp_path_factory.mktemp("matinit")
    shutil.copy(REPO / "samples" / "matinit" / "matinit.c", work)
    done = subprocess.run([sys.executable, "-m", "call", "run", "matinit.c", "--", "512"], cwd=work,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return work / "matinit.cll.1.dat"


def llac(*args, cwd, stdin=None):
    done = subprocess.run([sys.executable, "-m", "llac", *args], cwd=cwd, env=ENV, text=True,
                          capture_output=True, timeout=120,
                          **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))
    assert "Traceback" not in done.stderr
    return done


def pipe(trace: Path, statements: str, *options):
    """`cat TRACE | llac -c STATEMENTS`, through a real shell pipe as the README writes it."""
    command = f'cat "{trace}" | "{sys.executable}" -m llac -c "$STATEMENTS" ' + " ".join(options)
    done = subprocess.run(["sh", "-c", command], cwd=trace.parent, capture_output=True, text=True,
                          env={**ENV, "STATEMENTS": statements}, timeout=120)
    assert "Traceback" not in done.stderr
    return done


def session_with(trace: Path) -> Session:
    session = Session()
    list(session.execute(f'load "{trace}"'))
    return session


# ---------------------------------------------------------------- item 14: the pipe, fit, predict, report

def test_the_promised_pipe_fits_and_predicts_the_last_model_at_its_points(trace):
    done = pipe(trace, "fit rowinit; predict")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model of rowinit" in out and "prediction by the model of rowinit" in out
    table = out[out.index("prediction by the model"):].splitlines()
    assert table[1].split()[:3] == ["N", "measured", "[s]"]
    rows = [line.split() for line in table[3:] if re.match(r"\s*\d", line)]
    assert [float(r[0]) for r in rows][:3] == [16, 18, 20] and float(rows[-1][0]) == 512
    measured, predicted, error = (np.array([float(r[i]) for r in rows]) for i in (1, 2, 5))
    # the sign: positive when the model predicts more (4 printed digits: within 0.1 points)
    np.testing.assert_allclose(error, 100 * (predicted - measured) / measured, atol=0.1)
    assert "error = (predicted - measured) / measured; |error|: median" in out


def test_fit_alone_fits_every_experiment_compactly_and_predict_takes_the_last(trace):
    done = pipe(trace, "fit; list; predict")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("model of rowinit:") == 1 and out.count("model of colinit:") == 1
    assert "sets ℵ" not in out and "  interval 1: " in out          # compact: one line an interval
    assert re.search(r"^rowinit\.model\s+model", out, re.M) and re.search(r"^colinit\.model\s+model", out, re.M)
    assert "prediction by the model of colinit" in out               # the last one fitted


def test_predict_alone_before_any_fit_is_one_clear_error(trace):
    done = pipe(trace, "predict")
    assert done.returncode == 1
    assert "no model to predict with yet: fit an experiment first" in done.stderr
    done = llac("-c", "fit", cwd=trace.parent)
    assert done.returncode == 1 and "no experiments to fit: load a trace first" in done.stderr


def test_report_summarises_every_experiments_model_in_one_table(trace):
    done = pipe(trace, "report", "--format", "json")
    assert done.returncode == 0, done.stderr
    [table] = [json.loads(line) for line in done.stdout.splitlines()]
    # for programs: one row per constant and interval, every field filled, numbers unrounded
    assert table["columns"] == ["experiment", "formula", "interval", "region", "constant", "value",
                                "median |error| %", "max |error| %", "warnings"]
    assert list(dict.fromkeys(row["experiment"] for row in table["rows"])) == ["rowinit", "colinit"]
    assert table["rows"][0]["formula"] == "rowinit[0] + rowinit[1]*N + rowinit[2]*N*N"
    model = json.loads(pipe(trace, "fit rowinit", "--format", "json").stdout)
    rows = [row for row in table["rows"] if row["experiment"] == "rowinit"]
    assert [row["value"] for row in rows] == [c for piece in model["pieces"] for c in piece["constants"]]
    assert [row["median |error| %"] for row in rows[::3]] == \
        [100 * piece["median_rel_error"] for piece in model["pieces"]]
    assert all(isinstance(row["warnings"], int) and isinstance(row["interval"], int) for row in rows)
    assert "had no model: fitted it" in done.stderr                  # news goes to stderr
    assert "warning" not in done.stderr                              # counted in the table's column
    text = pipe(trace, "report").stdout
    assert len(text.splitlines()) < 25 and max(map(len, text.splitlines())) < 160
    assert re.search(r"^rowinit\s+rowinit\[0\].*\d\*?, \S+, \S+\s+\d+\.\d\d%\s+\d+\.\d\d%\s+\d+$", text, re.M)
    assert ("0*: held at its bound 0" in text) == any("*" in line for line in text.splitlines()[:-1])
    rows = list(csv.reader(io.StringIO(pipe(trace, "report", "--format", "csv").stdout)))
    assert rows[0] == table["columns"] and len(rows) == 1 + len(table["rows"])
    assert [float(r[5]) for r in rows[1:]] == [row["value"] for row in table["rows"]]


def test_every_machine_table_has_named_columns_and_numbers_not_text(trace):
    """set, suggest, describe: no column without a name, percentages as numbers (issue: a
    new-user review found "7.21%" strings and unnamed columns)."""
    done = pipe(trace, "set; suggest rowinit; describe rowinit", "--format", "json")
    assert done.returncode == 0, done.stderr
    settings, ranking, columns, points = [json.loads(line) for line in done.stdout.splitlines()]
    assert settings["columns"] == ["setting", "value", "state"]
    assert {"setting": "threshold", "value": 0.05, "state": "default"} in settings["rows"]
    assert ranking["columns"][-1] == "note" and [r["note"] for r in ranking["rows"]].count("yours") == 1
    assert points["columns"][-2:] == ["spread %", "noisy"]
    # numbers (a spread of exactly 0, identical repetitions, is written 0 as every whole number is)
    assert all(type(r["spread %"]) in (int, float) for r in points["rows"]), points["rows"]
    text = pipe(trace, "set; suggest rowinit; describe rowinit").stdout
    assert re.search(r"^setting\s+value\s+state$", text, re.M)
    assert re.search(r"^rank\s+formula.*intervals\s+at 4x \[s\]\s+tied\s+note$", text, re.M)
    assert re.search(r"^\s*16\s+5\s+\d+\.\d%", text, re.M)            # people still read percentages


# ---------------------------------------------------------------- item 16: help, show, JSON, --format

def test_help_lists_what_can_be_typed_and_the_object_making_sources_apart(trace):
    out = llac("-c", "help", cwd=trace.parent).stdout
    commands, making = out.split("Making objects:")
    listed = re.findall(r"^  (\S+)\s", commands, re.M)
    assert {"load", "fit", "predict", "report", "plot", "help"} <= set(listed)
    assert not {"=", "copy", "where", "with", "formula", "table3", "merge", "aggregate"} & set(listed)
    for word in ("copy", "where", "with", "formula", "merge", "aggregate"):
        assert re.search(rf"\shelp {word}$", making, re.M)
    for topic in ("where", "table3", "copy"):
        done = llac("-c", f"help {topic}", cwd=trace.parent)
        assert done.returncode == 0 and "Examples:" in done.stdout


def test_show_and_describe_of_a_model_reprint_its_intervals_and_constants(trace):
    done = pipe(trace, "m = fit rowinit; show m; describe m")
    assert done.returncode == 0, done.stderr
    reports = done.stdout.split("model of rowinit: ")
    assert len(reports) == 4                                         # fit, show, describe
    assert reports[2].strip() == reports[3].strip()
    assert "interval 1:" in reports[2] and "rowinit[2]" in reports[2] and " ± " in reports[2]


def test_a_model_exported_as_json_predicts_the_same_after_load_in_another_process(trace):
    work = trace.parent
    done = llac("-c", f'load "{trace.name}"; fit rowinit; drop rowinit rowinit[1]; '
                f'export rowinit.model "m.json"; predict rowinit N=10..20000 *1.5',
                "--format", "json", cwd=work)
    assert done.returncode == 0, done.stderr
    before = json.loads(done.stdout.splitlines()[-1])
    document = json.loads((work / "m.json").read_text())
    assert document["formula"]["text"] == "rowinit[0] + rowinit[2]*N*N"
    assert {"pieces", "settings", "cuts", "warnings", "median_rel_error"} <= set(document)
    again = llac("-c", 'load "m.json" as m; predict m N=10..20000 *1.5', "--format", "json", cwd=work)
    assert again.returncode == 0, again.stderr
    after = json.loads(again.stdout)
    assert after["rows"] == before["rows"] and after["notes"] == before["notes"]


def test_with_a_machine_format_stdout_holds_only_its_documents(trace):
    done = llac("-c", f'load "{trace.name}"; fit rowinit; plot rowinit; describe rowinit', "--format", "json",
                cwd=trace.parent)
    assert done.returncode == 0, done.stderr
    documents = [json.loads(line) for line in done.stdout.splitlines()]    # every line is JSON
    assert documents and "x measured" in done.stderr                        # the plot went to stderr


def test_a_model_file_is_in_report_and_drop_on_it_says_what_it_needs(trace):
    work = trace.parent
    llac("-c", f'load "{trace.name}"; fit rowinit; export rowinit.model "r.json" replace', cwd=work)
    done = llac("-c", 'load "r.json" as m; report', cwd=work)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^m\s+rowinit\[0\] \+ rowinit\[1\]\*N", done.stdout, re.M)
    done = llac("-c", 'load "r.json" as m; drop m rowinit[1]', cwd=work)
    assert done.returncode == 1 and "drop refits the experiment rowinit, which is not loaded" in done.stderr


def test_a_model_exported_under_another_suffix_loads_as_a_model(trace):
    work = trace.parent
    llac("-c", f'load "{trace.name}"; fit rowinit; export rowinit.model "r.model" replace', cwd=work)
    done = llac("-c", 'load "r.model"; predict rowinit.model N=100', cwd=work)
    assert done.returncode == 0, done.stderr
    assert "created rowinit.model: model of rowinit" in done.stdout


def test_loading_a_json_that_is_not_a_model_is_one_message(tmp_path):
    (tmp_path / "x.json").write_text('{"a": 1}')
    (tmp_path / "bad.json").write_text('{"a": ')
    for name, message in (("x.json", "is not a llac model file"), ("bad.json", "cannot read model file")):
        done = llac("-c", f'load "{name}"', cwd=tmp_path)
        assert done.returncode == 1 and message in done.stderr


def test_a_hand_edited_model_that_no_fit_could_write_is_refused_naming_what(trace, tmp_path):
    llac("-c", f'load "{trace}"; fit rowinit; export rowinit.model "m.json"', cwd=tmp_path)
    document = json.loads((tmp_path / "m.json").read_text())
    backwards = json.loads(json.dumps(document))
    backwards["pieces"][0]["region"]["N"] = [1000, 5]
    negative = json.loads(json.dumps(document))
    negative["pieces"][0]["constants"][-1] = -1e-9
    settings = [({"constants": "bogus"}, "its settings: constants is one of nonnegative, free, not 'bogus'"),
                ({"aggregate": "max"}, "its settings: aggregate is one of median, min, mean, not 'max'"),
                ({"alpha": 7}, "its settings: alpha is a fraction between 0 and 1 (or a percentage), not 7"),
                ({"prune": 1}, "its settings: prune is 1, not a value of its kind (bool)"),
                ({"bootstrap": 5}, "its settings: alpha 0.05 with bootstrap 5: the split test's p-value")]
    edits = [("b.json", backwards, "interval 1: its region of N runs from 1000 down to 5"),
             ("n.json", negative, "rowinit[2] = -1e-09, below 0 where its settings keep it >= 0")]
    for number, (changed, message) in enumerate(settings):
        edits.append((f"s{number}.json", {**document, "settings": {**document["settings"], **changed}}, message))
    for name, edited, message in edits:
        (tmp_path / name).write_text(json.dumps(edited))
        done = llac("-c", f'load "{name}"', cwd=tmp_path)
        assert done.returncode == 1 and "is a damaged llac model file" in done.stderr and message in done.stderr


def test_format_csv_gives_parseable_rows_for_fit_and_predict(trace):
    done = pipe(trace, "fit colinit; predict colinit N=1000,2000", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["model", "interval", "region", "constant", "value", "stderr", "p"]
    start = rows.index(["N", "predicted [s]", "low [s]", "high [s]", "interval", "extrapolated"])
    constants = rows[1:start]
    assert {r[3] for r in constants} == {"colinit[0]", "colinit[1]", "colinit[2]"}
    assert all(float(r[4]) == float(r[4]) for r in constants)
    assert [float(r[0]) for r in rows[start + 1:]] == [1000, 2000]
    assert all(float(r[1]) > 0 for r in rows[start + 1:])
    assert all(r[4].isdigit() and r[5] in ("true", "false") for r in rows[start + 1:])  # one field each
    assert "created colinit" in done.stderr and "created colinit" not in done.stdout


@given(st.lists(st.floats(1, 1e7, allow_nan=False), min_size=1, max_size=8))
def test_json_round_trip_predicts_identically_anywhere(trace_model, values):
    from llac.modelio import read_model
    model, path = trace_model
    _, loaded = read_model(path)
    a, b = model.predict({"N": values}), loaded.predict({"N": values})
    for field in ("values", "lower", "upper", "piece", "extrapolated"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.notes == b.notes


@pytest.fixture(scope="module")
def trace_model(trace, tmp_path_factory):
    from llac.modelio import write_model
    session = session_with(trace)
    list(session.execute("fit rowinit"))
    path = tmp_path_factory.mktemp("json") / "rowinit.json"
    write_model(session.objects["rowinit.model"], "rowinit.model", str(path))
    return session.objects["rowinit.model"], str(path)


# ---------------------------------------------------------------- item 7: the drop hint

def test_the_drop_hint_never_suggests_what_makes_the_fit_worse(trace):
    done = pipe(trace, "fit rowinit; drop rowinit")
    session = session_with(trace)
    list(session.execute("fit rowinit"))
    model = session.objects["rowinit.model"]
    suggested = droppable(model, session.objects["rowinit"])
    for name in suggested:      # only constants insignificant in every interval
        i = model.formula.constants.index(name)
        assert all(p.pvalues[i] > model.settings.alpha or name in p.at_bound for p in model.pieces)
    if suggested:
        assert f"try: drop rowinit {', '.join(suggested)}" in done.stdout
        before, after = map(float, re.search(r"median relative error ([\d.]+)% -> ([\d.]+)%",
                                             done.stdout).groups())
        assert after <= 1.2 * before + 0.01                          # DROP_TOLERANCE, 2 digits
    else:
        assert "try: drop" not in done.stdout
        assert done.returncode == 1 and "can be dropped without making the fit worse" in done.stderr


def test_a_drop_that_makes_the_fit_worse_says_so_with_the_errors_before_and_after(tmp_path):
    """On a trace whose N*N term is certain (not on a real run: at N <= 512 a loaded machine
    can make the quadratic term look no better than noise). Dropping the only term with N
    leaves one sample point of its own; the error is judged at the full model's points (it
    read 0.00% there before)."""
    trace = tmp_path / "m.cll.1.dat"
    write_matinit(trace)
    done = pipe(trace, "fit rowinit; drop rowinit rowinit[1]")
    assert done.returncode == 0, done.stderr
    found = re.search(r"dropped rowinit\[1\]: median relative error ([\d.]+)% -> ([\d.]+)%", done.stdout)
    before, after = map(float, found.groups())
    assert after > 1.2 * before
    assert f"warning: dropping rowinit[1] made the fit worse (median relative error {before:.2f}% " \
           f"-> {after:.2f}%)" in done.stderr


def test_a_constant_that_is_zero_everywhere_is_suggested_and_one_insignificant_in_one_interval_is_not():
    from test_model import grid, synthetic, N_VALUES
    from llac.model import FitSettings, fit_experiment
    data = synthetic("f[0] + f[1]*N", grid(reps=3, N=N_VALUES), [1e-12, 1e-9], noise=0.03, seed=5)
    model = fit_experiment(data, FitSettings(prune=False))
    assert droppable(model, data) == ("f[0]",)
    # f[1] carries N > 64 but is negligible below: it must not be suggested
    n = np.repeat(np.array(N_VALUES, dtype=float), 3)
    rng = np.random.default_rng(3)
    time = np.where(n <= 64, 1e-6, 1e-6 + 1e-8 * n * n) * rng.normal(1, 0.01, len(n))
    two = data.replace(columns={"N": n, "time": time}, formula=parse_formula("f[0] + f[1]*N*N"))
    model = fit_experiment(two, FitSettings(prune=False))
    if len(model.pieces) > 1:
        assert "f[1]" not in droppable(model, two)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=6)


@given(st.data())
def test_a_damaged_model_file_is_refused_with_one_message(trace_model, tmp_path_factory, data):
    """Any value replaced anywhere in a model document: loaded, or one ModelFileError; and one
    that loads predicts, shows and plots, or says why in one LlacError (a review: an interval's
    `df` of null or -1, or a list inside its `at_bound`, loaded and then gave an internal error
    in predict and show)."""
    from llac.errors import LlacError
    from llac.modelio import ModelFileError, read_model
    from llac.render import render
    _, path = trace_model
    document = json.loads(Path(path).read_text())
    node = document
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = data.draw(st.sampled_from(keys))
        if not isinstance(node[key], (dict, list)) or not node[key] or data.draw(st.booleans()):
            break
        node = node[key]
    node[key] = data.draw(JSON_VALUES)
    damaged = tmp_path_factory.mktemp("damaged") / "m.json"
    damaged.write_text(json.dumps(document))
    try:
        name, _ = read_model(str(damaged))
    except ModelFileError as err:
        assert "m.json" in str(err)
        assert not re.search(r"\w+Error\b|object has no attribute|not iterable", str(err)), str(err)
        return
    session = Session()
    for command in (f'load "{damaged}"', f"predict {name} N=1000, 4096", f"show {name}", f"plot {name}"):
        try:
            for result in session.execute(command):
                render(result)
        except LlacError:
            pass


@pytest.mark.parametrize("field, value, said", [
    ("df", None, "an interval's df is None, not a whole number >= 0"),
    ("df", -1, "an interval's df is -1, not a whole number >= 0"),
    ("npoints", 2.5, "an interval's npoints is 2.5, not a whole number >= 1"),
    ("at_bound", [["rowinit[0]"]], "an interval's at_bound is [['rowinit[0]']], not a list of constants' names"),
    ("dropped", ["zz[0]"], "an interval names 'zz[0]' among its dropped or bounded constants")])
def test_an_interval_no_fit_writes_is_refused_at_load_naming_its_field(trace_model, tmp_path, field, value, said):
    """A review: these loaded, and predict or show then gave an internal error."""
    _, path = trace_model
    document = json.loads(Path(path).read_text())
    document["pieces"][0][field] = value
    (tmp_path / "m.json").write_text(json.dumps(document))
    done = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "m.json"; predict rowinit.model N=1000'],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and said in done.stderr and "internal error" not in done.stderr, done.stderr


def test_predict_alone_after_its_model_was_deleted_and_json_of_an_experiment_say_what_to_do(trace):
    from llac.errors import LlacError
    session = session_with(trace)
    list(session.execute("fit rowinit; delete rowinit.model"))
    with pytest.raises(LlacError, match=r"the last model made, rowinit\.model, is gone"):
        list(session.execute("predict"))
    with pytest.raises(LlacError, match=r"json is for models, e.g. export rowinit\.model"):
        list(session.execute('export rowinit "x.json"'))


def test_a_table_column_without_a_name_is_refused():
    from llac.commands.results import Table
    with pytest.raises(ValueError, match="without a name"):
        Table("t", ("a", ""), (("x", "y"),))
    with pytest.raises(ValueError, match="without a name"):
        Table("t", ("a",), (("x",),), machine=(("a", ""), ()))
