"""When llac reads standard input (issue 8 item 21), with real processes and real pipes.

Stdin is read only when it is the data (`load "-"`, or -c statements that load nothing) or
the script (no -c, no script file): a script run in a `while read` loop, under cron or in CI
must not fail because stdin holds something else.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
LLAC = f"{sys.executable} -m llac"


def shell(command: str, cwd) -> subprocess.CompletedProcess:
    """Run a shell pipeline in which `llac` is this llac."""
    return subprocess.run(["bash", "-c", command.replace("llac ", LLAC + " ")], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def work(tmp_path):
    write_matinit(tmp_path / "m.dat")
    (tmp_path / "names.txt").write_text("colinit\nrowinit\n")
    return tmp_path


def test_script_that_loads_a_file_ignores_stdin_inside_a_while_read_loop(work):
    r = shell("""while read name; do llac -c "load 'm.dat'; describe $name" | grep -x -e colinit -e rowinit; done < names.txt""", work)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == "colinit\nrowinit\n"       # both lines of names.txt reached the loop


def test_statements_that_load_nothing_read_the_piped_trace(work):
    r = shell("cat m.dat | llac -c 'describe colinit'", work)
    assert r.returncode == 0 and r.stderr == "" and "created colinit" in r.stdout
    assert "origin: <stdin>" in r.stdout


def test_load_dash_reads_stdin_with_other_files(work):
    write_matinit(work / "c.dat", seed=7)       # another run (a copy of m.dat is left out: test_llac_review19)
    r = shell("cat m.dat | llac -c 'load \"-\", \"c.dat\"; list'", work)
    assert r.returncode == 0 and r.stderr == ""
    assert "colinit  experiment       48" in r.stdout      # 24 records from each source, merged


def test_load_dash_refuses_what_is_not_a_trace(work):
    r = shell("printf 'a,b\\n\\x1b[31m\\n' | llac -c 'load \"-\"'", work)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == ("<command>:1:1: '<stdin>' is not a CALL trace: its first line is 'a,b', "
                                        "not '#cll-trace 1'")
    r = shell("llac -c 'load \"-\"' < /dev/null", work)
    assert r.returncode == 1 and "'<stdin>' is empty" in r.stderr


def test_stdin_that_is_not_a_trace_is_a_warning_when_nothing_needs_it(work):
    r = shell("echo 'not a trace' | llac -c 'help load'", work)
    assert r.returncode == 0 and r.stdout.startswith("load ")
    assert r.stderr.startswith("warning: standard input is ignored: '<stdin>' is not a CALL trace")
    r = shell("true | llac -c 'help load'", work)              # an empty pipe: nothing to say
    assert r.returncode == 0 and r.stderr == ""


def test_script_file_and_script_on_stdin(work):
    (work / "s.llac").write_text("load 'm.dat'\nlist\n")
    r = shell("echo garbage | llac s.llac", work)           # a script file: stdin is not read
    assert r.returncode == 0 and r.stderr == "" and "colinit" in r.stdout
    r = shell("llac < s.llac", work)                         # no script, no -c: stdin is the script
    assert r.returncode == 0 and "colinit  experiment" in r.stdout
    r = shell("printf 'load \"-\"\\n' | llac", work)         # the script itself cannot be the data
    assert r.returncode == 1 and "'<stdin>' is empty" in r.stderr


def test_syntax_error_does_not_read_stdin(work):
    r = shell("cat m.dat | llac -c 'fitt colinit'", work)
    assert r.returncode == 1 and r.stdout == "" and "unknown command 'fitt'" in r.stderr
