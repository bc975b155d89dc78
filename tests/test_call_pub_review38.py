"""Three defects a new user's review of call found in PUB and MPI programs (session 38), each
met as the user met it (`call check`, `call cc`, `call run` with real mpicc and mpirun):

1. A `#pragma cll parallel PUB NAME` line with an error of its own (`procs = 1:4`, `procs =
   0:4:2`, `parallel pub`) got, beside its error, the warning that `pub.h` is included in a
   file without that pragma: the file has it, malformed. A rejected line meant as another
   model (`parallel OpenMP procs = 0:4:2`) keeps the warning.
2. An undeclared NAME in `parallel PUB NAME` was reported by gcc at the end of a `sync` line
   (`p6.c:9:38`); it points at NAME in the `parallel` line now, as a NAME of another type does.
3. `call run`'s progress line of an MPI or PUB run left out the program's arguments
   (`mpirun -np 1 .cll-build/pfx`): they are shown, quoted for the shell, as for a
   sequential run.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from call.launch import Launch
from call.mpirun import MpiLaunch
from support.runtime import run_bounded

REPO = Path(__file__).resolve().parent.parent
NEEDS_MPI = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                               reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

PROGRAM = """#include "pub.h"
#include <stdlib.h>
#pragma cll parallel {parallel}
int main(int argc, char **argv) {{
    t_bsp gbsp;
    int N;
    bsp_begin(&gbsp, &argc, &argv);
    #pragma cll for(N = 1; N <= 4; N *= 2)
    #pragma cll sync f f[0] + f[1]*N
    bsp_sync(&gbsp);
    #pragma cll end f
    #pragma cll end for
    #pragma cll report all
    bsp_end(&gbsp);
    return 0;
}}
"""
INCLUDED = "'pub.h' is included, but this file has no '#pragma cll parallel PUB NAME'"


def call(*args, cwd) -> tuple[int, str]:
    """`python -m call ARGS` in `cwd`: (exit status, stderr); never a traceback."""
    done = run_bounded([sys.executable, "-m", "call", *args], timeout=300, cwd=cwd,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


# ---- 1. a malformed `parallel PUB` line is no missing one

MALFORMED = {   # a `parallel` line meant as PUB, with an error: the error call gives
    "PUB gbsp procs = 1:4": "p.c:3:31: error: malformed procs clause",
    "PUB gbsp procs = 0:4:2": "p.c:3:39: error: procs: the first count must be at least 1",
    "pub gbsp procs = 1:4:2": "p.c:3:22: error: unknown parallel model 'pub'",
    "BSP gbsp procs = 1:4:2": "p.c:3:22: error: unknown parallel model 'BSP'",
}


@pytest.mark.parametrize("parallel, error", MALFORMED.items())
def test_a_malformed_parallel_line_gets_its_error_and_no_warning_that_it_is_missing(tmp_path, parallel, error):
    (tmp_path / "p.c").write_text(PROGRAM.format(parallel=parallel))
    status, said = call("check", "p.c", cwd=tmp_path)
    assert status == 1 and error in said, said
    assert INCLUDED not in said and "warning" not in said, said


def test_a_malformed_line_of_another_model_keeps_the_warning(tmp_path):
    """`parallel OpenMP` with an error: the file has no `parallel PUB` line, malformed or not."""
    (tmp_path / "p.c").write_text(PROGRAM.format(parallel="OpenMP procs = 0:4:2"))
    status, said = call("check", "p.c", cwd=tmp_path)
    assert status == 1 and "p.c:3:37: error: procs: the first count must be at least 1" in said, said
    assert f"p.c:1:1: warning: {INCLUDED}" in said, said


# ---- 2. an undeclared NAME is reported at NAME

UNDECLARED_ELSEWHERE = """#include "pub.h"
#pragma cll parallel PUB gbsp procs = 1:2:2
static void work(int N) {
    #pragma cll sync f f[0] + f[1]*N
    N++;
    #pragma cll end f
}
int main(int argc, char **argv) {
    t_bsp gbsp;
    bsp_begin(&gbsp, &argc, &argv);
    work(4);
    #pragma cll report all
    bsp_end(&gbsp);
    return 0;
}
"""


@NEEDS_MPI
def test_an_undeclared_machine_name_is_a_compile_error_at_the_name(tmp_path):
    (tmp_path / "p6.c").write_text(PROGRAM.format(parallel="PUB nosuch procs = 1:4:2"))
    status, said = call("cc", "-c", "p6.c", "-o", "p6.o", cwd=tmp_path)
    assert status != 0
    assert re.search(r"p6\.c:3:26: error: .nosuch. undeclared", said), said
    assert "#pragma cll parallel PUB nosuch procs = 1:4:2\n      |                          ^~~~~~\n" in said, said
    assert "p6.c:9:" not in said, said


@NEEDS_MPI
def test_a_name_out_of_scope_at_a_sync_experiment_names_its_function_and_the_parallel_line(tmp_path):
    (tmp_path / "p.c").write_text(UNDECLARED_ELSEWHERE)
    status, said = call("cc", "-c", "p.c", "-o", "p.o", cwd=tmp_path)
    assert status != 0
    assert re.search(r"p\.c: In function .work.:\np\.c:2:26: error: .gbsp. undeclared", said), said


@NEEDS_MPI
def test_a_machine_name_in_scope_still_compiles_without_a_warning(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM.format(parallel="PUB gbsp procs = 1:4:2"))
    status, said = call("cc", "-Wall", "-Werror", "-c", "p.c", "-o", "p.o", cwd=tmp_path)
    assert status == 0 and (tmp_path / "p.o").exists(), said


# ---- 3. the progress line shows the program's arguments

def test_the_shown_command_holds_the_arguments_quoted_for_the_shell():
    arguments = ["524288", "a b", "it's"]
    executable = Path(".cll-build/my prog")
    assert Launch(executable, arguments).shown(None) == "'.cll-build/my prog' 524288 'a b' 'it'\"'\"'s'"
    mpi = MpiLaunch(["mpirun"], executable, arguments, oversubscribe=True)
    assert mpi.shown(2) == "mpirun -np 2 '.cll-build/my prog' 524288 'a b' 'it'\"'\"'s'"
    assert MpiLaunch(["mpirun"], Path(".cll-build/pfx"), [], True).shown(1) == "mpirun -np 1 .cll-build/pfx"


@NEEDS_MPI
def test_an_mpi_run_shows_its_arguments_as_the_sweep_script_runs_them(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM.format(parallel="PUB gbsp procs = 1:1:2"))
    status, said = call("run", "p.c", "--", "524288", "a b", cwd=tmp_path)
    assert status == 0, said
    assert "call: run 1 of 1 (P=1): mpirun -np 1 .cll-build/p 524288 'a b'\n" in said, said
    assert "524288 'a b'" in (tmp_path / "p.cll.sweep.sh").read_text()


def test_a_sequential_run_shows_its_arguments(tmp_path):
    (tmp_path / "s.c").write_text("int main(int argc, char **argv) {\n    int N = argc;\n"
                                  "    #pragma cll f f[0] + f[1]*N\n    N++;\n    #pragma cll end f\n"
                                  "    #pragma cll report all\n    return 0;\n}\n")
    status, said = call("run", "s.c", "--", "7", "a b", cwd=tmp_path)
    assert status == 0, said
    assert "call: run 1 of 1: .cll-build/s 7 'a b'\n" in said, said
