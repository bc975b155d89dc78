"""Extra-P text export (exact text, 1 and 2 parameters, repetitions) and import."""
import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.extrap import ExtrapError, read_extrap, write_extrap


def experiment(name: str, formula: str, **columns) -> Experiment:
    return Experiment(name, parse_formula(formula, experiment=name), columns)


ROW = experiment("rowinit", "rowinit[0] + rowinit[1]*N", rank=[0, 1, 0, 1, 0], N=[32, 16, 16, 32, 64],
                 time=[2.5e-06, 1e-06, 1.5e-06, 3e-06, 0.125])
COL = experiment("colinit", "colinit[0] + colinit[1]*N", N=[16, 32, 64], time=[4, 5, 6])


def test_one_parameter_with_repetitions(tmp_path):
    write_extrap([ROW, COL], tmp_path / "x.txt")
    assert (tmp_path / "x.txt").read_text() == (
        "PARAMETER N\n"
        "\n"
        "POINTS 16 32 64\n"
        "\n"
        "REGION rowinit\n"
        "METRIC time\n"
        "DATA 1e-06 1.5e-06\n"
        "DATA 2.5e-06 3e-06\n"
        "DATA 0.125\n"
        "\n"
        "REGION colinit\n"
        "METRIC time\n"
        "DATA 4\n"
        "DATA 5\n"
        "DATA 6\n")


FFT = experiment("f", "f[0] + f[1]*N*log(N)/P + f[2]*P", N=[1024, 1024, 2048, 1024, 2048, 2048.5],
                 P=[2, 1, 1, 2, 2, 1], time=[0.5, 1.25, 2.5, 0.75, 1.5, 3])


def test_two_parameters_with_repetitions(tmp_path):
    write_extrap(FFT, tmp_path / "f.txt")
    assert (tmp_path / "f.txt").read_text() == (
        "PARAMETER N\n"
        "PARAMETER P\n"
        "\n"
        "POINTS ( 1024 1 ) ( 1024 2 ) ( 2048 1 ) ( 2048 2 ) ( 2048.5 1 )\n"
        "\n"
        "REGION f\n"
        "METRIC time\n"
        "DATA 1.25\n"
        "DATA 0.5 0.75\n"
        "DATA 2.5\n"
        "DATA 1.5\n"
        "DATA 3\n")


def test_parameters_can_be_chosen(tmp_path):
    write_extrap(FFT, tmp_path / "f.txt", parameters=["P"])
    text = (tmp_path / "f.txt").read_text()
    assert text.startswith("PARAMETER P\n\nPOINTS 1 2\n") and "DATA 1.25 2.5 3\nDATA 0.5 0.75 1.5\n" in text


@pytest.mark.parametrize("exps, parameters, message", [
    ([ROW, COL.select(np.array([True, True, False]))], None, "other points than 'rowinit'"),
    ([COL], ["N", "P"], "'colinit' has no column 'P'"),
    ([experiment("c", "c[0]", time=[1.0])], None, "1 to 4 parameters, not 0"),
    ([COL.select(np.zeros(3, bool))], None, "no records"),
    ([COL.with_column("N", [1, np.nan, 2])], None, "NaN or infinite"),
    ([], None, "no experiment"),
])
def test_what_extrap_cannot_hold(tmp_path, exps, parameters, message):
    with pytest.raises(ExtrapError, match=message):
        write_extrap(exps, tmp_path / "x.txt", parameters)
    assert not (tmp_path / "x.txt").exists()


def test_import_of_an_export(tmp_path):
    write_extrap(FFT, tmp_path / "f.txt")
    (got,) = read_extrap(tmp_path / "f.txt")
    assert got.name == "f" and got.formula.text == "f[0]" and got.header["metric"] == "time"
    order = np.lexsort((FFT.columns["P"], FFT.columns["N"]))
    for c in ("N", "P", "time"):
        assert sorted(zip(got.columns["N"], got.columns["P"], got.columns[c])) == \
            sorted(zip(FFT.columns["N"][order], FFT.columns["P"][order], FFT.columns[c][order]))


def test_import_of_extrap_style_file(tmp_path):
    (tmp_path / "e.txt").write_text(
        "# comment\nPARAMETER x y\n\nPOINTS ( 20 1 ) \nPOINTS (20 2)\n\n"
        "REGION main->solve\nMETRIC time\nDATA 1 1.5\nDATA 2\nMETRIC visits\nDATA 7\nDATA 8 9\n")
    solve_time, solve_visits = read_extrap(tmp_path / "e.txt")
    assert solve_time.name == "main__solve_time" and solve_time.header["region"] == "main->solve"
    assert solve_time.columns["x"].tolist() == [20, 20, 20] and solve_time.columns["y"].tolist() == [1, 1, 2]
    assert solve_time.columns["time"].tolist() == [1, 1.5, 2]
    assert solve_visits.name == "main__solve_visits" and solve_visits.columns["time"].tolist() == [7, 8, 9]


@pytest.mark.parametrize("text, message", [
    ("PARAMETER n\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", "e.txt:6: more DATA lines than the 2 POINTS"),
    ("PARAMETER n\nPOINTS 1 x\n", "e.txt:2: 'x' is not a number"),
    ("PARAMETER n m\nPOINTS 1 2\n", "e.txt:2: each point needs 2 values"),
    ("POINTS 1 2\n", "e.txt:1: POINTS need 1 to 4 PARAMETER names"),
    ("PARAMETER n\nPOINTS 1\nEXPERIMENT q\n", "e.txt:3: expected PARAMETER, POINTS, REGION, METRIC or DATA"),
    ("PARAMETER n\nPOINTS 1\n", "holds no DATA lines"),
])
def test_import_errors(tmp_path, text, message):
    (tmp_path / "e.txt").write_text(text)
    with pytest.raises(ExtrapError, match=message):
        read_extrap(tmp_path / "e.txt")


def test_load_reads_what_export_as_extrap_wrote_and_a_model_exported_under_a_csv_name(tmp_path, monkeypatch):
    """A user's round trips through files: `export ... as extrap` then `load`, and a model
    exported to a .csv name then `load` (both were refused: 'not a CALL trace', 'a CSV file
    is loaded alone, with a name and a formula')."""
    from support.traces import write_matinit
    from test_session_llac import run, text_of
    from llac.session import Session
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.cll.1.dat")
    session = Session()
    run(session, 'load "m.cll.1.dat"; export colinit "c.txt" as extrap; fit colinit; export colinit.model "m.csv"')
    out = text_of(run(session, 'load "c.txt" as c2; g = c2 formula "c2[0] + c2[1]*N*N"; fit g'))
    assert "created c2: 24 records, c2[0]" in out and "Extra-P's format has no formulas" in out
    original, loaded = session.objects["colinit"], session.objects["c2"]
    assert sorted(loaded.columns["time"]) == sorted(original.columns["time"])
    out = text_of(run(session, 'load "m.csv" as m2; predict m2 N=100; predict colinit.model N=100'))
    first, second = [line.split()[1] for line in out.splitlines() if line.startswith("100 ")]
    assert first == second
