"""The llac-side findings of the new-user review (24): a trace given as a script, a trace cut
inside its first line, a bad command-line option's exit status, empty file names, whole
numbers in notes, and the residual plot's zero line."""
import os
import subprocess
import sys

import pytest

from support.traces import write_matinit
from test_session_llac import error_of, run, session, text_of  # noqa: F401 (session: the fixture)


def llac(folder, *args: str) -> subprocess.CompletedProcess:
    """Run `llac ARGS` in `folder` (stdin empty)."""
    done = subprocess.run([sys.executable, "-m", "llac", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONWARNINGS": "always"})
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr
    return done


def test_a_trace_given_as_a_script_is_told_to_be_loaded(tmp_path):
    """`llac prog.cll.1.dat` said `prog.cll.1.dat:26:1: unknown command 'psum'`."""
    write_matinit(tmp_path / "m.cll.1.dat")
    done = llac(tmp_path, "m.cll.1.dat")
    assert done.returncode == 1
    assert done.stderr == ("llac: m.cll.1.dat is a CALL trace, not an llac script: load it (llac -c 'load "
                           "\"m.cll.1.dat\"; fit'), or pipe it (cat m.cll.1.dat | llac -c 'fit')\n")


def test_a_trace_cut_inside_its_first_line_is_cut_short_not_another_version(tmp_path):
    """A file cut to its first 10 bytes was 'a CALL trace of version (none)'."""
    write_matinit(tmp_path / "m.dat")
    (tmp_path / "cut.dat").write_bytes((tmp_path / "m.dat").read_bytes()[:10])
    done = llac(tmp_path, "-c", 'load "cut.dat"')
    assert done.returncode == 1
    assert "'cut.dat' is cut short: it ends inside its first line ('#cll-trace', where '#cll-trace 1' " \
           "and the header should follow)" in done.stderr
    (tmp_path / "cut5.dat").write_text("#cll-")                          # inside the word itself
    assert "'cut5.dat' is cut short: it ends inside its first line ('#cll-'" in llac(tmp_path, "-c", 'load "cut5.dat"').stderr
    (tmp_path / "v2.dat").write_text("#cll-trace\n#program: p\n")       # a whole line: the version is missing
    assert "is a CALL trace of version (none)" in llac(tmp_path, "-c", 'load "v2.dat"').stderr


@pytest.mark.parametrize("args", [["--format", "xml"], ["--formt", "json"]])
def test_a_bad_option_exits_1_as_a_user_error(tmp_path, args):
    """Exit status 2 is an internal error's (docs/llac-language.md): argparse's was 2."""
    done = llac(tmp_path, *args)
    assert done.returncode == 1 and "llac: error: " in done.stderr
    assert llac(tmp_path, "--version").returncode == 0


@pytest.mark.parametrize("statement", ['load ""', 'export colinit "" as csv', 'machine export vm ""',
                                       'plot colinit to ""', 'machine import ""'])
def test_an_empty_file_name_is_an_error_at_the_quotes(session, statement):
    """`load ""` was "'.' is a folder", `export f ""` a bare "cannot write ''"."""
    error = error_of(session, statement)
    assert error.message == "the file name is empty: name a file between the quotes"
    assert error.span.column == statement.index('""') + 1


def test_csv_output_writes_whole_numbers_and_flags_as_the_docs_say(tmp_path):
    """`predict ... --format csv` wrote `0.0` and Python's `True`; docs/data-formats.md says
    whole numbers have no fraction, and the flags are true/false as in JSON."""
    write_matinit(tmp_path / "m.cll.1.dat")
    done = llac(tmp_path, "-c", 'load "m.cll.1.dat"; fit colinit; predict colinit N=4096,1e308', "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    header = rows.index("N,predicted [s],low [s],high [s],interval,extrapolated")
    assert rows[header + 1].startswith("4096,") and rows[header + 1].endswith(",true")
    assert rows[header + 2].startswith("1e+308,,")          # no prediction (an overflow): empty
    assert ".0," not in done.stdout and "True" not in done.stdout


@pytest.mark.parametrize("statement, example", [('export colinit "{d}" as csv', "colinit.csv"),
                                                ('export colinit "{d}" as extrap', "colinit.txt"),
                                                ('fit colinit; export colinit.model "{d}"', "colinit.model.json")])
def test_exporting_to_a_folder_suggests_a_file_of_the_format_written(session, tmp_path, statement, example):
    """A CSV export to a folder suggested `.../out.json`."""
    message = error_of(session, statement.format(d=tmp_path)).message
    assert message == f"{str(tmp_path)!r} is a folder: name a file in it, e.g. {str(tmp_path / example)!r}"


def test_a_constant_held_at_its_bound_has_an_empty_p_in_csv(tmp_path):
    """Review 24 (2): `fit` in CSV wrote `nan` for the p-value of a constant held at 0, where
    text shows none and the docs say a value that does not exist is an empty field."""
    from support.traces import trace_text
    rows = [(1e-9 * n - 2e-7, n) for n in (400, 800, 1600, 3200, 6400) for _ in range(3)]   # intercept < 0
    (tmp_path / "b.cll.1.dat").write_text(trace_text({"e": ("e[0] + e[1]*N", ["N"], rows)}))
    done = llac(tmp_path, "-c", 'load "b.cll.1.dat"; set split off; fit e', "--format", "csv")
    assert done.returncode == 0, done.stderr
    constants = {r.split(",")[3]: r.split(",") for r in done.stdout.splitlines() if r.startswith("e,")}
    assert constants["e[0]"][4:] == ["0", "", ""] and "nan" not in done.stdout, done.stdout   # no stderr either
