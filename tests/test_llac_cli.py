"""End-to-end: run `python -m llac` as a user does (scripts, -c, trace piped on stdin)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent


def llac(*args, cwd, stdin=None):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "llac", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120,
                          **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))


@pytest.fixture
def work(tmp_path):
    write_matinit(tmp_path / "matinit.cll.1.dat")
    return tmp_path


def test_command_mode_fits_and_predicts(work):
    r = llac("-c", 'load "matinit.cll.1.dat"; fit rowinit; predict rowinit N=4096', cwd=work)
    assert r.returncode == 0, r.stderr
    assert "created rowinit" in r.stdout and "model of rowinit" in r.stdout
    assert "4096" in r.stdout and "extrapolated" in r.stdout and r.stderr == ""


def test_several_c_options_run_in_order_as_lines_of_one_command(work):
    """A review: `llac -c 'load ...' -c 'fit colinit'` ran only the last -c, which then found
    nothing loaded."""
    r = llac("-c", 'load "matinit.cll.1.dat"', "-c", "fit colinit", cwd=work)
    assert r.returncode == 0 and "created colinit" in r.stdout and "model of colinit" in r.stdout, r.stderr
    r = llac("-c", 'load "matinit.cll.1.dat"', "-c", "fitt colinit", cwd=work)
    assert r.returncode == 1 and r.stderr.startswith("<command>:2:1: unknown command 'fitt'"), r.stderr


def test_trace_piped_on_stdin_is_loaded_before_the_statements(work):
    data = (work / "matinit.cll.1.dat").read_text()
    r = llac("-c", "fit colinit; predict colinit N=8192", cwd=work, stdin=data)
    assert r.returncode == 0, r.stderr
    assert "created colinit" in r.stdout and "model of colinit" in r.stdout and "8192" in r.stdout


def test_script_stops_at_first_error_with_location_and_caret(work):
    (work / "a.llac").write_text('load "matinit.cll.1.dat"\nlist\nsmall = colinit where NN < 3\nlist\n')
    r = llac("a.llac", cwd=work)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith("a.llac:3:23: colinit has no column 'NN' (did you mean 'N'?)")
    assert lines[1] == "    small = colinit where NN < 3" and lines[2] == " " * 26 + "^^"
    assert r.stdout.count("objects") == 1        # the second list never ran
    assert "Traceback" not in r.stderr


def test_syntax_error_stops_before_anything_runs(work):
    r = llac("-c", 'load "matinit.cll.1.dat"; fitt colinit', cwd=work)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("<command>:1:27: unknown command 'fitt' (did you mean 'fit'?)")


def test_several_scripts_share_one_session(work):
    (work / "one.llac").write_text('load "matinit.cll.1.dat"\n')
    (work / "two.llac").write_text("describe colinit\n")
    r = llac("one.llac", "two.llac", cwd=work)
    assert r.returncode == 0 and "sample points" in r.stdout


def test_scripts_then_statements_share_one_session(work):
    (work / "one.llac").write_text('load "matinit.cll.1.dat"\n')
    r = llac("one.llac", "-c", "describe colinit", cwd=work, stdin="not read")
    assert r.returncode == 0 and "created colinit" in r.stdout and "sample points" in r.stdout, r.stderr
    failed = llac("one.llac", "-c", "describe nothing", cwd=work)
    assert failed.returncode == 1 and failed.stderr.startswith("<command>:1:10: no object called 'nothing'")


def test_damaged_trace_warns_on_stderr_and_goes_on(work):
    text = (work / "matinit.cll.1.dat").read_text().replace("#end\n", "colinit 0 0 oops 16\n")
    (work / "bad.dat").write_text(text)
    r = llac("-c", 'load "bad.dat"; list', cwd=work)
    assert r.returncode == 0
    line = len(text.splitlines())
    assert f"warning: bad.dat:{line}:" in r.stderr and "cut short" in r.stderr
    assert "colinit  experiment       24" in r.stdout


def test_garbage_on_stdin_is_one_clear_warning(work):
    r = llac("-c", "list", cwd=work, stdin="hello\n")
    assert r.returncode == 0 and r.stdout == "no objects yet: use load\n"
    assert r.stderr == ("warning: standard input is ignored: '<stdin>' is not a CALL trace: "
                        "its first line is 'hello', not '#cll-trace 1'\n")


def test_missing_script_and_help_output(work):
    r = llac("nope.llac", cwd=work)
    assert r.returncode == 1 and "cannot read 'nope.llac'" in r.stderr
    r = llac("-c", "help fit", cwd=work)
    assert r.returncode == 0 and r.stdout.startswith("fit EXPERIMENT")


def test_help_does_not_import_statsmodels_or_plotext(work):
    code = ("import sys; from llac.cli import main; main(['-c', 'help']); "
            "print(sorted(m for m in ('statsmodels', 'plotext', 'scipy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL, timeout=60)
    assert r.stdout.strip().endswith("[]"), r.stdout


def test_plot_in_a_script_is_plain_text(work):
    r = llac("-c", 'load "matinit.cll.1.dat"; plot colinit loglog', cwd=work)
    assert r.returncode == 0 and "fitted it with the current settings" in r.stdout
    assert "\x1b" not in r.stdout and "measured" in r.stdout


def test_internal_error_is_one_line_and_exit_2_unless_debug(work, monkeypatch, capsys):
    from llac import cli
    from llac.session import Session

    def broken(self, statement):
        raise RuntimeError("boom")
    monkeypatch.setattr(Session, "run", broken)
    monkeypatch.setattr(cli, "_stdin_has_data", lambda: False)
    assert cli.main(["-c", "list"]) == 2
    assert capsys.readouterr().err == "internal error: RuntimeError: boom (run with --debug for details)\n"
    with pytest.raises(RuntimeError):
        cli.main(["--debug", "-c", "list"])


def test_export_that_extrap_cannot_hold_is_one_clear_error(tmp_path):
    """An experiment with no variables has no Extra-P parameters: an error, not a traceback."""
    data = tmp_path / "c.csv"
    data.write_text("time\n1.0\n1.1\n")
    out = tmp_path / "c.txt"
    result = subprocess.run([sys.executable, "-m", "llac", "-c",
                             f'load "{data}" as c formula "c[0]"; export c "{out}" as extrap'],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "<command>:1:" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("statement, words", [
    ('export rowinit "new/dir/r.csv"', "cannot write 'new/dir/r.csv': "),
    ('fit rowinit; export rowinit.model "new/dir/r.json"', "cannot write 'new/dir/r.json': "),
    ('plot rowinit to "new/dir/r.txt"', "cannot write 'new/dir/r.txt': "),
    ('machine export node1 "new/dir/m.json"', "cannot write 'new/dir/m.json': "),
])
def test_an_output_file_in_a_missing_folder_is_one_message_and_no_folder(work, statement, words):
    """The rule of every output option (cll_grammar.outputs; call's -o and --db too): the
    folder must exist; llac says which, how to make it, and makes none."""
    from cll_grammar.machinedb import MachineDB
    from support.machines import probe_run
    db = work / "machines.sqlite"
    with MachineDB(db) as machines:
        machines.store(probe_run())
    env_db = {"LLAC_MACHINE_DB": str(db)}
    r = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "matinit.cll.1.dat"; {statement}'],
                       cwd=work, env={**os.environ, "PYTHONPATH": str(REPO), **env_db}, text=True,
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert words + "the folder new/dir does not exist (make it first: mkdir -p new/dir)" in r.stderr
    assert not (work / "new").exists() and "Traceback" not in r.stderr


def test_json_tables_write_whole_numbers_as_integers_as_csv_does(work):
    """A review: JSON rows wrote counts and sizes as 2.0, 16384.0 where CSV writes 2, 16384."""
    import json
    r = llac("--format", "json", "-c", 'load "matinit.cll.1.dat"; describe colinit', cwd=work)
    rows = json.loads(r.stdout.splitlines()[0])["rows"]
    n = next(row for row in rows if row["column"] == "N")
    assert type(n["min"]) is int and type(n["distinct"]) is int
    assert type(next(row for row in rows if row["column"] == "time")["min"]) is float
