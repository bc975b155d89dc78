"""`export` never overwrites by surprise, writes CSV that reads back whatever the column names
hold, and text from files reaches the terminal with its control characters escaped (issue 8
item 9). Driven as a user does: `python -m llac -c ...` in a subprocess."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llac.csvio import read_csv, write_csv
from cll_grammar.span import printable
from llac.trace import read_trace

REPO = Path(__file__).resolve().parent.parent
ESC = "\x1b"
TRACE = (f"#cll-trace 1\n#program: evil{ESC}]0;pwned\x07\n#procs: 1\n#status: complete\n"
         f"#host: h{ESC}[2J{ESC}[31m\u202eredaeh\n"
         "#experiment: f\n#  formula: f[0] + f[1]*N\n"
         f"#  columns: rank thread time N a,b q\"x col{ESC}[1m\n#data\n"
         "f 0 0 1e-06 16 1 2 3\nf 0 0 2e-06 32 4 5 6\nf 0 0 7e-06 64 7 8 9\n#end\n")


def llac(statements: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", "-c", statements], cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture
def work(tmp_path):
    (tmp_path / "evil.dat").write_text(TRACE)
    return tmp_path


def test_header_values_and_column_names_are_printed_escaped(work):
    r = llac('load "evil.dat"; describe f; show f; list', work)
    assert r.returncode == 0, r.stderr
    for stream in (r.stdout, r.stderr):
        assert ESC not in stream and "\x07" not in stream and "\u202e" not in stream
    assert "program: evil\\x1b]0;pwned\\x07" in r.stdout
    assert "host: h\\x1b[2J\\x1b[31m\\u202eredaeh" in r.stdout
    assert "col\\x1b[1m" in r.stdout and 'q"x' in r.stdout


def test_warnings_quoting_a_file_are_escaped(work):
    (work / "bad.dat").write_text(TRACE.replace("f 0 0 2e-06 32 4 5 6", f"f 0 0 2e-06{ESC}[31m 32 4 5 6"))
    r = llac('load "bad.dat"', work)
    assert r.returncode == 0 and ESC not in r.stderr
    assert "'2e-06\\x1b[31m' is not a number (column time)" in r.stderr


def test_export_refuses_to_overwrite_unless_replace(work):
    out = work / "f.csv"
    out.write_text("precious\n")
    r = llac('load "evil.dat"; export f "f.csv"', work)
    assert r.returncode == 1 and out.read_text() == "precious\n"
    assert r.stderr.startswith("<command>:1:18: 'f.csv' exists; to overwrite it: export f \"f.csv\" replace\n")
    r = llac('load "evil.dat"; export f "f.csv" replace', work)
    assert r.returncode == 0 and "wrote 3 records of f to f.csv (csv)" in r.stdout
    assert out.read_text().startswith('rank,thread,time,N,"a,b","q""x",')
    (work / "link.csv").symlink_to(work / "nowhere.csv")          # a dangling link is not followed
    r = llac('load "evil.dat"; export f "link.csv" as csv', work)
    assert r.returncode == 1 and "exists" in r.stderr and not (work / "nowhere.csv").exists()


def test_csv_round_trip_with_commas_quotes_and_escapes_in_names(work):
    experiment = read_trace(work / "evil.dat").experiments["f"]
    write_csv(experiment, work / "f.csv")
    back, problems = read_csv(work / "f.csv", "f[0] + f[1]*N")
    assert problems == () and back.column_names == experiment.column_names
    assert back.column_names[-3:] == ("a,b", 'q"x', f"col{ESC}[1m")
    for name in experiment.column_names:
        assert np.array_equal(back.columns[name], experiment.columns[name])


@pytest.mark.parametrize("text, shown", [
    ("plain ü text", "plain ü text"), ("a\tb\r\n", "a\\tb\\r\\n"), ("\x00\x7f\x9b", "\\x00\\x7f\\x9b"),
    ("\u2066x\u2069", "\\u2066x\\u2069")])
def test_printable(text, shown):
    assert printable(text) == shown
