"""`call run` rebuilds exactly when what the program was built from changes (issue 8, item 3):
real gcc builds tracked by the compiler's dependency output and a build record in
.cll-build/, and `call cc -o DIR/prog` creating DIR."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from call import manifest
from call.runtime_paths import RUNTIME_DIR, link_flags

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO))

PROGRAM = """#include <stdio.h>
#include "my size.h"
#ifndef SIZE
#define SIZE 1
#endif
int main(void) {
    int N = SIZE * HEADER_FACTOR;
    double x = 0;
    #pragma cll f f[0] + f[1]*N
    for (int i = 0; i < N; i++) x += i;
    #pragma cll end f
    #pragma cll report f
    printf("N=%d x=%g\\n", N, x);
    return 0;
}
"""


def call(*args, cwd, env=None):
    done = subprocess.run([sys.executable, "-m", "call", *args], cwd=cwd, env=env or ENV,
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done


def program(tmp_path: Path) -> Path:
    """prog.c including a header whose name has a space (escaped in gcc's make rule)."""
    (tmp_path / "my size.h").write_text("#define HEADER_FACTOR 2\n")
    (tmp_path / "prog.c").write_text(PROGRAM)
    return tmp_path / "prog.c"


def build_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "building .cll-build/prog" in line]


def test_unchanged_inputs_do_not_rebuild_and_a_touch_alone_does_not_either(tmp_path):
    program(tmp_path)
    first = call("run", "prog.c", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert build_lines(first.stderr) == ["call: building .cll-build/prog: first build"]
    exe = tmp_path / ".cll-build" / "prog"
    built = exe.stat().st_mtime_ns
    os.utime(tmp_path / "my size.h")             # newer, same bytes
    again = call("run", "prog.c", cwd=tmp_path)
    assert again.returncode == 0 and build_lines(again.stderr) == []
    assert exe.stat().st_mtime_ns == built and again.stdout == "N=2 x=1\n"


def test_a_changed_header_rebuilds_and_says_which(tmp_path):
    program(tmp_path)
    assert call("run", "prog.c", cwd=tmp_path).returncode == 0
    (tmp_path / "my size.h").write_text("#define HEADER_FACTOR 5\n")
    done = call("run", "prog.c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert build_lines(done.stderr) == ["call: rebuilding .cll-build/prog: my size.h changed"]
    assert done.stdout == "N=5 x=10\n"
    assert "#  f " not in done.stderr and (tmp_path / "prog.cll.1.dat").exists()


def test_changed_cflags_rebuild_with_the_old_and_new_flags(tmp_path):
    program(tmp_path)
    assert call("run", "prog.c", "--cflags=-O2 -DSIZE=3", cwd=tmp_path).stdout == "N=6 x=15\n"
    done = call("run", "prog.c", "--cflags=-O2 -DSIZE=4", cwd=tmp_path)
    assert build_lines(done.stderr) == [
        "call: rebuilding .cll-build/prog: --cflags changed: '-O2 -DSIZE=3' -> '-O2 -DSIZE=4'"]
    assert done.stdout == "N=8 x=28\n"
    assert build_lines(call("run", "prog.c", "--cflags=-O2 -DSIZE=4", cwd=tmp_path).stderr) == []


def test_a_changed_source_compiler_variable_or_replaced_binary_rebuilds(tmp_path):
    source = program(tmp_path)
    assert call("run", "prog.c", cwd=tmp_path).returncode == 0
    source.write_text(PROGRAM.replace("x += i", "x += 2 * i"))
    assert build_lines(call("run", "prog.c", cwd=tmp_path).stderr) == [
        "call: rebuilding .cll-build/prog: prog.c changed"]
    done = call("run", "prog.c", cwd=tmp_path, env=dict(ENV, CC="gcc -fno-inline"))
    assert build_lines(done.stderr) == [
        "call: rebuilding .cll-build/prog: $CC changed: (unset) -> gcc -fno-inline"]
    shutil.copy("/bin/true", tmp_path / ".cll-build" / "prog")
    done = call("run", "prog.c", cwd=tmp_path, env=dict(ENV, CC="gcc -fno-inline"))
    assert build_lines(done.stderr) == [
        "call: rebuilding .cll-build/prog: the executable was replaced since call built it"]
    assert done.stdout == "N=2 x=2\n"


RUN_WITH_RUNTIME = """import sys
from pathlib import Path
import call.runtime_paths
call.runtime_paths.RUNTIME_DIR = Path(sys.argv[1])
from call.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_a_changed_runtime_library_rebuilds(tmp_path):
    """The runtime is a copy of the installed one; a real object added to its archive."""
    runtime = tmp_path / "runtime"
    shutil.copytree(RUNTIME_DIR, runtime)
    work = tmp_path / "work"
    work.mkdir()
    program(work)
    run = [sys.executable, "-c", RUN_WITH_RUNTIME, str(runtime), "run", "prog.c"]
    first = subprocess.run(run, cwd=work, env=ENV, capture_output=True, text=True)
    assert first.returncode == 0 and build_lines(first.stderr), first.stderr
    (tmp_path / "extra.c").write_text("int cll_test_extra(void) { return 1; }\n")
    subprocess.run(["gcc", "-c", str(tmp_path / "extra.c"), "-o", str(tmp_path / "extra.o")], check=True)
    subprocess.run(["ar", "rs", str(runtime / "libcllrt.a"), str(tmp_path / "extra.o")], check=True,
                   capture_output=True)
    done = subprocess.run(run, cwd=work, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert build_lines(done.stderr) == [
        "call: rebuilding .cll-build/prog: the tracing runtime library changed"]
    same = subprocess.run(run, cwd=work, env=ENV, capture_output=True, text=True)
    assert build_lines(same.stderr) == []


def test_the_record_holds_the_headers_gcc_read_but_not_the_temporary_translation(tmp_path):
    program(tmp_path)
    assert call("run", "prog.c", cwd=tmp_path).returncode == 0
    record = manifest.load(tmp_path / ".cll-build" / "prog")
    inputs = record["inputs"]
    assert str(tmp_path / "my size.h") in inputs and "/usr/include/stdio.h" in inputs
    assert any(p.endswith("/include/cll.h") for p in inputs)
    assert not any(".cll.c" in p or ".cll.h" in p for p in inputs)
    flags = link_flags()   # the library, -lpapi when built with PAPI, -lm -pthread
    assert flags[0] == str(RUNTIME_DIR / "libcllrt.a")
    assert record["command"][-len(flags):] == flags
    assert not list((tmp_path / ".cll-build").glob("call-build-*"))   # the work folder is gone


def test_a_failed_rebuild_never_falls_back_to_the_old_binary(tmp_path):
    source = program(tmp_path)
    assert call("run", "prog.c", cwd=tmp_path).returncode == 0
    source.write_text(PROGRAM.replace("return 0;", "return undeclared;"))
    for _ in range(2):   # the second run tries again rather than running the old build
        failed = call("run", "prog.c", cwd=tmp_path)
        assert failed.returncode == 1 and "compilation failed" in failed.stderr
        assert build_lines(failed.stderr) == ["call: rebuilding .cll-build/prog: prog.c changed"]
        assert failed.stdout == ""
    source.write_text(PROGRAM.replace("x += i", "x += 3 * i"))
    done = call("run", "prog.c", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "N=2 x=3\n"


def test_cc_and_translate_make_no_folder_the_user_names(tmp_path):
    """The rule of every output option (cll_grammar.outputs): a missing folder is one message
    with the command that makes it, and nothing is created; the cluster recipe of docs/mpi.md
    (mkdir -p .cll-build && call cc -O2 PROG.c -o .cll-build/PROG) then builds."""
    program(tmp_path)
    for args, named in ((("cc", "-O2", "prog.c", "-o", ".cll-build/prog"), ".cll-build"),
                        (("cc", "-c", "prog.c", "-oobjects/deep/prog.o"), "objects/deep"),
                        (("translate", "prog.c", "-o", "new/dir"), "new/dir")):
        done = call(*args, cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.endswith(f"error: the folder {named} does not exist (make it first: "
                                    f"mkdir -p {named})\n")
        assert not (tmp_path / named.split("/")[0]).exists()
    (tmp_path / ".cll-build").mkdir()
    done = call("cc", "-O2", "prog.c", "-o", ".cll-build/prog", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert subprocess.run(["./.cll-build/prog"], cwd=tmp_path, capture_output=True,
                          text=True).stdout == "N=2 x=1\n"


def test_dependency_rules_with_escapes_and_continuations(tmp_path):
    rule = tmp_path / "deps.d"
    work = tmp_path / "work"
    rule.write_text(f"cll-build: {work}/0/p.cll.c /usr/include/stdio.h \\\n"
                    f" a\\ b.h c$$d.h \\\n  sub/e.h\n")
    got = manifest.read_dependencies(rule, work)
    assert got == sorted([os.path.abspath("a b.h"), os.path.abspath("c$d.h"),
                          os.path.abspath("sub/e.h"), "/usr/include/stdio.h"])


def test_run_refuses_a_source_that_is_not_a_c_file_up_front(tmp_path):
    """Review 21: `call run prog.txt` said it was rebuilding, then 'no .c file to compile'."""
    (tmp_path / "prog.txt").write_text("int main(void) { return 0; }\n")
    done = call("run", "prog.txt", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "prog.txt: error: not a .c file: call run builds and runs one C source file, PROG.c\n"
    assert not (tmp_path / ".cll-build").exists()


def test_a_build_folder_that_cannot_be_made_is_one_message(tmp_path):
    """Found in session 22: in a read-only checkout `call run` said only
    'call: error: .cll-build: Read-only file system'. A file in the folder's place fails the
    same way, also as root."""
    program(tmp_path)
    (tmp_path / ".cll-build").write_text("")
    done = call("run", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "prog.c: error: cannot make the build folder .cll-build beside the source (File exists): "
        "call run builds there; copy the source to a folder you can write")
