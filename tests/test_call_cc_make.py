"""`call cc` as a build system drives it: `make CC="call cc"` on a two-file Makefile (make puts
CC="call cc" in the environment, where call cc must not run itself), separate compilation
(`call cc -c` per file, then `call cc A.o B.o -o prog`: the link step adds the runtime, and
for objects of a `parallel OpenMP` or `parallel MPI` file what their model needs), a $CC that
runs call cc by another route (refused in one line, not recursing), and `--print-flags`.
Real gcc, make and the `call` command in subprocesses."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.runtime import run_bounded

REPO = Path(__file__).resolve().parent.parent
REFUSED = "call cc: error: started by the compiler that call cc runs ("

UTIL = """double work(int n) {
    double x = 0;
    #pragma cll W W[0] + W[1]*n
    for (int i = 0; i < n; i++) x += i * 0.5;
    #pragma cll end W
    return x;
}
"""

MAIN = """#include <stdio.h>
#ifndef SCALE
#define SCALE 1
#endif
double work(int n);
int main(void) {
    double s = 0;
    for (int n = 1000; n <= 8000; n *= 2) {
        #pragma cll M M[0] + M[1]*n
        for (int r = 0; r < 3; r++) s += work(n);
        #pragma cll end M
    }
    printf("scale %d s %g\\n", SCALE, s);
    return 0;
}
"""

MAKEFILE = """CFLAGS = -O2 -Wall
prog: main.o util.o
\t$(CC) $(LDFLAGS) main.o util.o $(LDLIBS) -o $@
"""

OPENMP = """#include <stdio.h>
#pragma cll parallel OpenMP procs = 1:2:2
int main(void) {
    double x = 0;
    for (int n = 100; n <= 400; n *= 2) {
        #pragma cll L L[0] + L[1]*n
        #pragma omp parallel for reduction(+:x)
        for (int i = 0; i < n; i++) x += i;
        #pragma cll end L
    }
    printf("x %g\\n", x);
    return 0;
}
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with main.c and util.c (one experiment each) and `bin/call`, a `call` command
    that runs this checkout's call, first on $PATH (as the installed script is)."""
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "util.c").write_text(UTIL)
    script(tmp_path / "bin" / "call", 'exec {python} -m call "$@"')
    return tmp_path


def script(path: Path, body: str) -> Path:
    """An executable shell script at `path` running `body` ({python}: this interpreter)."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body.format(python=shlex.quote(sys.executable))}\n")
    path.chmod(0o755)
    return path


def environment(work: Path, **variables: str) -> dict[str, str]:
    """The environment of a user whose $PATH finds `call` in work/bin, with `variables`."""
    env = {name: value for name, value in os.environ.items() if name not in ("CC", "CALL_CC_COMPILER")}
    return {**env, "PYTHONPATH": str(REPO), "PATH": f"{work / 'bin'}{os.pathsep}{env['PATH']}",
            **variables}


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command in `cwd` as a user does (bounded: a recursing call cc is killed, and the
    test fails, instead of hanging); no Python traceback may reach its stderr."""
    done = run_bounded(list(args), timeout=120, cwd=cwd, env=env or environment(cwd))
    assert "Traceback" not in done.stderr, done.stderr
    return done


def call(*args: str, cwd: Path, **variables: str) -> subprocess.CompletedProcess:
    """`call ARGS` through the `call` command on $PATH."""
    return run("call", *args, cwd=cwd, env=environment(cwd, **variables))


def llac_describes(work: Path, trace: str, *experiments: str) -> str:
    """What llac says loading `trace` and describing `experiments` (it must succeed)."""
    command = f'load "{trace}"; ' + "; ".join(f"describe {name}" for name in experiments)
    done = run(sys.executable, "-m", "llac", "-c", command, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def runs_and_traces(work: Path, program: str, *experiments: str) -> str:
    """Run ./`program` (it must succeed); llac's description of the trace it writes."""
    ran = run(f"./{program}", cwd=work)
    assert ran.returncode == 0 and "s 6.37388e+07" in ran.stdout, ran.stdout + ran.stderr
    return llac_describes(work, f"{program}.cll.1.dat", *experiments)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_with_cc_set_to_call_cc_builds_a_two_file_program_that_writes_its_trace(work):
    (work / "Makefile").write_text(MAKEFILE)
    done = run("make", "CC=call cc", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "call cc  main.o util.o  -o prog" in done.stdout           # the link step is call cc's
    assert done.stderr == "", done.stderr                              # under make: no note (MAKELEVEL)
    described = runs_and_traces(work, "prog", "M", "W")
    assert "created M: 4 records" in described and "created W: 12 records" in described
    assert "source: util.c:3:5" in described and "source: main.c:9:9" in described
    again = run("make", "CC=call cc", cwd=work)                        # the objects are main.o, util.o
    assert again.returncode == 0 and "'prog' is up to date" in again.stdout, again.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_with_generated_dependencies_names_the_sources_not_the_translations(work):
    """CFLAGS += -MMD -MP: the rules gcc writes named the temporary translation
    (/tmp/call-.../0/main.c), so the next make stopped with `No rule to make target`."""
    (work / "util.h").write_text("double work(int n);\n")
    (work / "main.c").write_text(MAIN.replace("double work(int n);\n", '#include "util.h"\n'))
    (work / "Makefile").write_text(MAKEFILE.replace("CFLAGS = -O2 -Wall", "CFLAGS = -O2 -Wall -MMD -MP")
                                   + "-include main.d util.d\n")
    assert run("make", "CC=call cc", cwd=work).returncode == 0
    rule = (work / "main.d").read_text()
    assert rule.startswith("main.o: main.c") and "util.h" in rule and "/tmp/call-" not in rule, rule
    assert "cll.h" in rule and "main.cll.h" not in rule, rule      # the runtime's header, not the generated one
    again = run("make", "CC=call cc", cwd=work)
    assert again.returncode == 0 and "'prog' is up to date" in again.stdout, again.stdout + again.stderr
    (work / "util.h").touch()
    os.utime(work / "util.h", (time.time() + 5, time.time() + 5))
    rebuilt = run("make", "CC=call cc", cwd=work)
    assert rebuilt.returncode == 0 and "-c -o main.o main.c" in rebuilt.stdout, rebuilt.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_generated_dependencies_of_a_source_in_a_folder_with_a_space(work):
    """The rule named `src dir/main.c` unescaped (make: No rule to make target 'src'), and with
    a space in TMPDIR it kept the temporary paths."""
    (work / "src dir").mkdir()
    (work / "src dir" / "util.h").write_text("double work(int n);\n")
    (work / "src dir" / "main.c").write_text(MAIN.replace("double work(int n);\n", '#include "util.h"\n'))
    (work / "Makefile").write_text('main.o: src\\ dir/main.c\n\t$(CC) -MMD -MP -c "$<" -o $@\n-include main.d\n')
    (work / "t mp").mkdir()
    env = environment(work, TMPDIR=str(work / "t mp"))
    assert run("make", "CC=call cc", cwd=work, env=env).returncode == 0
    rule = (work / "main.d").read_text()
    assert rule.startswith("main.o: src\\ dir/main.c ") and "t\\ mp" not in rule and "src\\ dir/util.h" in rule, rule
    again = run("make", "CC=call cc", cwd=work, env=env)
    assert again.returncode == 0 and "'main.o' is up to date" in again.stdout, again.stdout + again.stderr


def test_separate_compilation_then_a_link_of_the_objects_alone(work):
    compiled = call("cc", "-O2", "-c", "main.c", "util.c", cwd=work)
    assert compiled.returncode == 0, compiled.stderr
    assert sorted(p.name for p in work.glob("*.o")) == ["main.o", "util.o"]    # as plain gcc names them
    linked = call("cc", "main.o", "util.o", "-o", "prog", cwd=work)
    assert linked.returncode == 0 and linked.stderr == "", linked.stderr
    described = runs_and_traces(work, "prog", "M", "W")
    assert "created M: 4 records" in described and "created W: 12 records" in described


def test_a_source_and_an_object_link_together(work):
    assert call("cc", "-c", "util.c", "-o", "util.o", cwd=work).returncode == 0
    linked = call("cc", "-O2", "main.c", "util.o", "-o", "prog", cwd=work)
    assert linked.returncode == 0, linked.stderr
    described = runs_and_traces(work, "prog", "M", "W")
    assert "created M: 4 records" in described and "created W: 12 records" in described


@pytest.mark.parametrize("cc", ["call cc -DSCALE=3", "{bin}/other-name cc -DSCALE=3",
                                "{python} -m call cc -DSCALE=3", "call --debug cc -DSCALE=3"])
def test_a_cc_that_is_call_itself_compiles_with_cc_and_the_flags_after_it(work, cc):
    """Before, call cc ran $CC, which was call cc: dozens of nested processes until 'File
    name too long'. `other-name` is a symbolic link to the `call` script."""
    (work / "bin" / "other-name").symlink_to(work / "bin" / "call")
    cc = cc.format(bin=work / "bin", python=sys.executable)
    done = call("cc", "main.c", "util.c", "-o", "prog", cwd=work, CC=cc)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"call cc: note: $CC ({cc}) is call itself: compiling with cc -DSCALE=3\n"
    ran = run("./prog", cwd=work)
    assert ran.stdout.startswith("scale 3 "), ran.stdout      # the flags after `call cc` were kept


def test_a_cc_that_runs_call_cc_by_another_route_is_refused_in_one_line(work):
    script(work / "mycc", 'exec {python} -m call cc "$@"')        # not named call: not recognised
    done = call("cc", "-c", "util.c", "-o", "util.o", cwd=work, CC="./mycc")
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [f"{REFUSED}./mycc), which runs call cc again: set $CC to a C compiler such "
                      f"as gcc, not to a command that runs call"], done.stderr
    assert not (work / "util.o").exists()


def test_objects_of_an_openmp_file_link_with_openmp(work):
    """call cc adds -fopenmp to compile a `parallel OpenMP` file; the link of its object alone
    needs it too (else: undefined reference to omp_get_max_threads)."""
    (work / "omp.c").write_text(OPENMP)
    assert call("cc", "-c", "omp.c", "-o", "omp.o", cwd=work).returncode == 0
    linked = call("cc", "omp.o", "-o", "omp", cwd=work)
    assert linked.returncode == 0, linked.stderr
    ran = run("./omp", cwd=work, env=environment(work, OMP_NUM_THREADS="2"))
    assert ran.returncode == 0 and ran.stdout == "x 104650\n", ran.stdout + ran.stderr
    assert "#parallel: OpenMP" in (work / "omp.cll.2.dat").read_text()
    # the same object in a static library linked with -L. -lomp_kern: its model is read too
    assert run("ar", "rcs", "libomp_kern.a", "omp.o", cwd=work).returncode == 0
    from_library = call("cc", "-L.", "-lomp_kern", "-o", "omp_lib", cwd=work)
    assert from_library.returncode == 0, from_library.stderr


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                    reason="MPI is not installed")
def test_objects_of_mpi_files_link_with_mpicc_and_the_mpi_layer(work):
    from test_mpi import HELPER_FILE, MAIN_FILE, header_and_records
    (work / "main.c").write_text(MAIN_FILE)
    (work / "helper.c").write_text(HELPER_FILE)
    for name in ("main", "helper"):
        assert call("cc", "-O2", "-c", f"{name}.c", "-o", f"{name}.o", cwd=work).returncode == 0
    linked = call("cc", "main.o", "helper.o", "-o", "prog", cwd=work)
    assert linked.returncode == 0, linked.stderr
    ran = run("mpirun", "-np", "2", "./prog", cwd=work,
              env=environment(work, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    assert ran.returncode == 0, ran.stderr
    header, records, _ = header_and_records(work / "prog.cll.2.dat")
    assert header["parallel"] == "MPI" and header["procs"] == "2"
    assert [r["bytes_sent"] for r in records["inner"]] == [80, 80]
    # a C++ driver links them with the printed flags: the layer's C source stays C (-x c)
    if shutil.which("mpicxx"):
        flags = call("cc", "--print-flags", "main.o", "helper.o", cwd=work).stdout.split()
        assert flags[flags.index("-x") : flags.index("-x") + 2] == ["-x", "c"], flags
        assert flags.count("-I") == 1, flags          # the MPI layer's headers are cll.h's folder
        cxx = run("mpicxx", "main.o", "helper.o", *flags, "-o", "prog_cxx", cwd=work)
        assert cxx.returncode == 0, cxx.stderr


def test_print_flags_links_the_objects_with_another_compiler_driver(work):
    from call.runtime_paths import include_dir, link_flags
    assert call("cc", "-c", "main.c", "util.c", cwd=work).returncode == 0
    flags = call("cc", "--print-flags", cwd=work)
    assert flags.returncode == 0 and shlex.split(flags.stdout) == ["-I", str(include_dir()), *link_flags()]
    linked = run("gcc", "main.o", "util.o", *shlex.split(flags.stdout), "-o", "prog", cwd=work)
    assert linked.returncode == 0, linked.stderr
    assert "created W: 12 records" in runs_and_traces(work, "prog", "W")
    compiling = call("cc", "--print-flags", "-c", cwd=work)
    assert shlex.split(compiling.stdout) == ["-I", str(include_dir())]
    refused = call("cc", "--print-flags", "main.c", cwd=work)
    assert refused.returncode == 1 and refused.stderr.startswith(
        "call cc: error: --print-flags compiles nothing: drop main.c") and refused.stderr.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["-O2"], "no .c file to compile and no object file to link"),
    (["-c", "main.o"], "no .c file to compile"),
    (["notes.txt", "-o", "prog"], "no .c file to compile and no object file to link"),
])
def test_nothing_to_compile_or_link_is_one_error(work, args, message):
    done = call("cc", *args, cwd=work)
    assert done.returncode == 1 and done.stderr == f"call cc: error: {message}\n"
