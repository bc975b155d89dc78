"""CSV import and export: exact round trip, bad rows with line numbers, unusable files."""
import numpy as np
import pytest

from cll_grammar.formula import FormulaError, parse_formula
from llac.csvio import CsvError, read_csv, write_csv
from llac.errors import InputError
from llac.experiment import Experiment
from llac.trace import TraceError, read_trace


def write(tmp_path, text: str, name: str = "d.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(5)
    n = 500
    exp = Experiment("f", parse_formula("f[0] + f[1]*N*log(N)"),
                     {"rank": rng.integers(0, 8, n), "thread": np.zeros(n), "time": rng.random(n) * 1e-3,
                      "N": 2.0 ** rng.integers(4, 20, n), "flops": rng.random(n) * 1e9})
    exp = exp.with_column("time", np.where(np.arange(n) == 7, np.nan, exp.columns["time"]))
    path = tmp_path / "f.csv"
    write_csv(exp, path)
    lines = path.read_text().split("\n")
    assert lines[0] == "rank,thread,time,N,flops"
    assert lines[1].split(",")[0].isdigit() and ",nan," in lines[8]
    back, problems = read_csv(path, "f[0] + f[1]*N*log(N)")
    assert problems == () and back.name == "f" and back.column_names == exp.column_names
    for c in exp.column_names:
        assert np.array_equal(back.columns[c], exp.columns[c], equal_nan=True)
    assert back.formula.variables == ("N",) and back.origin == str(path)


def test_bad_rows_are_reported_and_good_rows_kept(tmp_path):
    path = write(tmp_path, "N,time,host\n"
                           "16,1e-6,a\n"        # 2: host is text: that column is dropped, once
                           "32,oops,b\n"        # 3: time not a number
                           "64,3e-6\n"          # 4: a field missing
                           "\n"                 # 5: blank lines are skipped
                           "x,4e-6,c\n"         # 6: N not a number
                           "128,5e-6,d\n"       # 7: good
                           "1e400,1,e\n")       # 8: N is a number, but not a finite one
    exp, problems = read_csv(path, "g[0] + g[1]*N")
    assert [str(p).rpartition("/")[2] for p in problems] == [
        "d.csv:2: column 'host' holds 'a', not a number; the column is not loaded",
        "d.csv:3: 'oops' in column 'time' is not a number; the row is ignored",
        "d.csv:4: row has 2 fields, the header names 3; it is ignored",
        "d.csv:6: 'x' in column 'N' is not a number; the row is ignored",
        "d.csv:8: N = inf is not a finite number; the row is ignored",
    ]
    assert exp.column_names == ("N", "time")
    assert exp.columns["N"].tolist() == [16, 128] and exp.columns["time"].tolist() == [1e-6, 5e-6]


def test_time_column_can_be_named_and_name_given(tmp_path):
    path = write(tmp_path, "\ufeffsize , seconds\n10, 0.5\n20, 1.5\n")
    exp, problems = read_csv(path, "k[0] + k[1]*size", name="k", time="seconds")
    assert problems == () and exp.name == "k"
    assert exp.column_names == ("size", "time") and exp.columns["time"].tolist() == [0.5, 1.5]


@pytest.mark.parametrize("text, formula, message", [
    ("", "f[0]", r"is empty"),
    ("N,secs\n1,2\n", "f[0] + f[1]*N", r"has no column 'time' \(llac's load takes the times from the column named 'time': name the "
                                          r"column of times so in the header row\); "
                                       r"its columns are N, secs"),
    ("time,M\n1,2\n", "f[0] + f[1]*N", r"has no column 'N'; its columns are time, M"),
    ("time,N,N\n1,2,3\n", "f[0]", r"column 'N' appears twice"),
    ("time,,N\n1,2,3\n", "f[0]", r"column 2 of the header row has no name"),
])
def test_unusable_files_raise_csv_error(tmp_path, text, formula, message):
    path = write(tmp_path, text)
    with pytest.raises(CsvError, match=message) as err:
        read_csv(path, formula)
    assert isinstance(err.value, InputError) and "d.csv" in str(err.value)


def test_missing_file_and_bad_formula(tmp_path):
    with pytest.raises(TraceError, match="cannot read .*nope.csv"):
        read_csv(tmp_path / "nope.csv", "f[0]")
    path = write(tmp_path, "time,N\n1,2\n")
    with pytest.raises(FormulaError) as err:
        read_csv(path, "f[0] * f[1]*N")
    assert err.value.column > 0


def test_csv_of_a_trace_experiment(tmp_path):
    trace_path = tmp_path / "t.dat"
    trace_path.write_text("#cll-trace 1\n#experiment: e\n#  formula: e[0] + e[1]*N\n"
                          "#  columns: rank thread time N\n#data\ne 0 1 2.5e-07 16\ne 0 0 1e-06 64\n#end\n")
    write_csv(read_trace(trace_path).experiments["e"], tmp_path / "e.csv")
    assert (tmp_path / "e.csv").read_text() == "rank,thread,time,N\n0,1,2.5e-07,16\n0,0,1e-06,64\n"


def test_binary_file_is_refused_from_its_first_bytes(tmp_path):
    """A 2 GB sparse file of zeros named .csv is refused at once, not read whole."""
    path = tmp_path / "zeros.csv"
    with open(path, "wb") as f:
        f.truncate(2 << 30)
    with pytest.raises(TraceError, match=r"zeros\.csv' holds NUL bytes: it is not a text file"):
        read_csv(path, "f[0]")
