"""Two defects a review of call found (session 38), each run as a user meets it:

1. `-Wp,-MMD,FILE` and `-Wp,-MD,FILE` (dependencies asked of the preprocessor directly, as
   kernel-style and autotools Makefiles do): the rule FILE named the temporary translation
   (/tmp/call-.../main.c), so the next `make CC="call cc"` stopped with `No rule to make
   target`. A real Makefile, make and gcc.
2. A `#pragma cll` inside the braces of a compound literal (`(struct point){ ... }`,
   `f((int[]){1, 2, ...})`) passed `call check`, and gcc then failed on the translation; it is
   one error now, as inside an initializer's braces, while the blocks after `if (x)`, a
   function's parameters (returning a pointer, a struct, a function pointer) and the like
   stay places for a pragma (their files compile with `call cc`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from test_call_cc_make import MAIN, MAKEFILE, environment, run, work  # noqa: F401 (work: a fixture)
from test_call_review32 import REPO, call_check, in_main

# ---- 1. -Wp,-MD,FILE and -Wp,-MMD,FILE

KERNEL_STYLE = MAKEFILE + """%.o: %.c
\t$(CC) $(CFLAGS) -Wp,{flag},$(@:.o=.d) -c $< -o $@
-include main.d util.d
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("flag", ["-MMD", "-MD"])
def test_dependencies_asked_of_the_preprocessor_name_the_sources_and_make_follows_them(work, flag):
    """The rule names main.c and util.h (spaces of the temporary folder's path escaped, and
    that path gone), the second make has nothing to do, and a touched header rebuilds main.o."""
    (work / "util.h").write_text("double work(int n);\n")
    (work / "main.c").write_text(MAIN.replace("double work(int n);\n", '#include "util.h"\n'))
    (work / "Makefile").write_text(KERNEL_STYLE.format(flag=flag))
    (work / "t mp").mkdir()
    env = environment(work, TMPDIR=str(work / "t mp"))
    first = run("make", "CC=call cc", cwd=work, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    rule = (work / "main.d").read_text()
    assert rule.startswith("main.o: main.c ") and "util.h" in rule, rule
    assert "t\\ mp" not in rule and "/tmp/call-" not in rule and "main.cll.h" not in rule, rule
    again = run("make", "CC=call cc", cwd=work, env=env)
    assert again.returncode == 0 and "'prog' is up to date" in again.stdout, again.stdout + again.stderr
    os.utime(work / "util.h", (time.time() + 5, time.time() + 5))
    rebuilt = run("make", "CC=call cc", cwd=work, env=env)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert "-c main.c -o main.o" in rebuilt.stdout and "-c util.c" not in rebuilt.stdout, rebuilt.stdout


# ---- 2. a pragma inside the braces of a compound literal

POINT = "struct point { int x, y; };\ntypedef struct point point_t;\nstatic int first(const int *a) { return a[0]; }\n"
COMPOUND = "error: '#pragma cll' experiment begin inside the braces of a compound literal (`(type){ ... }`): it " \
           "becomes a statement, so it must stand where a statement can begin"


@pytest.mark.parametrize("lines", [
    ["struct point p;", "p = (struct point){", "#pragma cll work work[0]+work[1]*N", "    .x = 1, .y = 2 };",
     "#pragma cll end work", "x = p.x;"],
    ["x = first((int[]){1, 2,", "#pragma cll work work[0]+work[1]*N", "    3});", "#pragma cll end work"],
    ["point_t q = { 0, 0 };", "q = (point_t){", "#pragma cll work work[0]", "    1, 2 };", "#pragma cll end work"],
    ["struct line { struct point a, b; } l;", "l = (struct line){ { 1,", "#pragma cll work work[0]",
     "    2 }, { 3, 4 } };", "#pragma cll end work"],
    ["x = sizeof (struct point){", "#pragma cll work work[0]", "    1, 2 };", "#pragma cll end work"],
])
def test_a_pragma_inside_a_compound_literals_braces_is_one_error_at_its_place(tmp_path, lines):
    """The braces after `(type)` in an expression (nested braces too): one error at the
    pragma's line and column, none at the `end` (it ends what was never begun)."""
    (tmp_path / "p.c").write_text(POINT + in_main(*lines))
    status, err = call_check("p.c", cwd=tmp_path)
    line = 6 + next(i for i, text in enumerate(lines) if text.startswith("#pragma"))
    assert status == 1 and err.startswith(f"p.c:{line}:5: {COMPOUND}\n"), err
    assert err.count("error:") == 1, err


def test_a_returned_compound_literal_is_refused_too(tmp_path):
    (tmp_path / "p.c").write_text(POINT + "struct point make(int N) {\n    return (struct point){\n"
                                  "    #pragma cll m m[0] + m[1]*N\n    .x = N };\n}\n")
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1 and err.startswith(f"p.c:6:5: {COMPOUND}\n") and err.count("error:") == 1, err


BLOCKS = POINT + """struct point make(int N) {
    #pragma cll a a[0] + a[1]*N
    struct point p = (struct point){ .x = N, .y = 0 };
    #pragma cll end a
    return p;
}
int *pointer(int *v, int N) {
    #pragma cll b b[0] + b[1]*N
    v[0] = N;
    #pragma cll end b
    return v;
}
static int twice(int n) { return 2 * n; }
int (*pick(int N))(int) {
    #pragma cll c c[0] + c[1]*N
    N++;
    #pragma cll end c
    return twice;
}
int main(void) {
    int N = 4, x = 0, v[1];
    if (x == 0) {
        #pragma cll d d[0] + d[1]*N
        x += first((int[]){1, 2});
        #pragma cll end d
    }
    while (sizeof(struct point) > (size_t)N) {
        #pragma cll e e[0]
        N++;
        #pragma cll end e
    }
    for (int i = 0; i < N; i++) {
        #pragma cll f f[0] + f[1]*N
        x += i;
        #pragma cll end f
    }
    switch (sizeof(struct point)) {
    case 8:
        #pragma cll g g[0]
        x++;
        #pragma cll end g
        break;
    }
    do {
        #pragma cll h h[0]
        x--;
        #pragma cll end h
    } while (0);
    if ((struct point){ 1, 2 }.x) {
        #pragma cll i i[0]
        x++;
        #pragma cll end i
    }
    x += ({ int t = N; t * 2; });
    #pragma cll j j[0]
    x += make(N).x + *pointer(v, N) + pick(N)(1);
    #pragma cll end j
    return x > 0 ? 0 : 1;
}
"""


def test_blocks_after_a_parenthesis_stay_places_for_a_pragma_and_compile(tmp_path):
    """`if (x) {`, `while (sizeof(struct point) > N) {` (the struct keyword inside the
    condition opens no members), `for`, `switch`, `do`, functions returning a struct, a
    pointer and a function pointer, and code after a statement expression: `call check` is
    silent and `call cc` compiles the translation."""
    (tmp_path / "p.c").write_text("#include <stddef.h>\n" + BLOCKS)
    assert call_check("p.c", cwd=tmp_path) == (0, "")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    built = subprocess.run([sys.executable, "-m", "call", "cc", "-c", "p.c"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert built.returncode == 0 and built.stderr == "", built.stderr
