"""Diagnostics of `call check` that a review of call found missing or misleading (session 31):
pragmas among a struct's members, the
token a syntax error quotes, reserved words and names, `_Pragma("cll ...")`. Each is run as
a user runs `call check`, and read as printed."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def call_check(*files, cwd):
    """`call check FILES` in `cwd`: (exit status, stderr); never a traceback."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "call", "check", *files], cwd=cwd, env=env,
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr


def in_main(*lines):
    return "int main(void) {\n    int N = 4, x = 0;\n" + "".join(f"    {l}\n" for l in lines) + "    return x;\n}\n"


STRUCT = """struct S {
    int a;
    #pragma cll u u[0]
    int b;
    #pragma cll end u
};
int main(void) { struct S s = {1, 2}; return s.a - 1; }
"""


def test_a_pragma_among_a_structs_members_is_an_error_at_each_line_and_no_cascade(tmp_path):
    (tmp_path / "p.c").write_text(STRUCT)
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1
    assert err.count("error:") == 2, err
    assert ("p.c:3:5: error: '#pragma cll' experiment begin among the members of a struct definition: it "
            "becomes a statement, so it must stand inside a function body") in err
    assert "p.c:5:5: error: '#pragma cll end' among the members of a struct definition" in err
    assert "never ended" not in err


@pytest.mark.parametrize("opening, kind", [("struct T {", "struct"), ("union {", "union"),
                                           ("typedef struct {", "struct"), ("enum E {", "enum")])
def test_inside_a_function_a_struct_union_or_enum_body_is_no_place_for_a_pragma(tmp_path, opening, kind):
    member = "A, B" if kind == "enum" else "int a; int b;"
    (tmp_path / "p.c").write_text(in_main(opening, f"    {member}", "    #pragma cll report all", "} v;"))
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1
    article = "an" if kind == "enum" else "a"
    assert f"p.c:5:9: error: '#pragma cll report' among the members of {article} {kind} definition" in err, err


def test_a_block_that_follows_a_struct_keyword_elsewhere_is_still_a_function_body(tmp_path):
    """`struct S s = {...}` then an ordinary block: only the brace after struct/union/enum
    [NAME] opens members."""
    (tmp_path / "p.c").write_text(in_main("struct P { int a; } p = {1};", "if (p.a) {",
                                          "    #pragma cll a a[0] + a[1]*N", "    x++;",
                                          "    #pragma cll end a", "}"))
    status, err = call_check("p.c", cwd=tmp_path)
    assert (status, err) == (0, "")


@pytest.mark.parametrize("body, at, token", [
    ("b b[0] + b[1]*(*p).a.b", "*p", "'*'"),
    ("c c[0] + c[1]*N bytes N % 2", "%", "'%'"),
])
def test_a_syntax_error_quotes_the_token_it_stopped_at_not_the_rest_of_the_line(tmp_path, body, at, token):
    (tmp_path / "p.c").write_text(in_main("int *p = &x;", f"#pragma cll {body}", "x++;"))
    status, err = call_check("p.c", cwd=tmp_path)
    column = 5 + len("#pragma cll ") + body.index(at)
    assert status == 1
    assert err.startswith(f"p.c:4:{column}: error: unexpected {token} in '#pragma cll' line\n"), err


@pytest.mark.parametrize("body, word", [("end end[0] + end[1]*N", "end"), ("report report[0]", "report"),
                                        ("sync sync[0]", "sync"), ("parallel parallel[0]", "parallel")])
def test_an_experiment_named_by_a_reserved_word_is_told_so_at_the_name(tmp_path, body, word):
    (tmp_path / "p.c").write_text(in_main(f"#pragma cll {body}", "x++;"))
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1
    assert err.startswith(f"p.c:3:17: error: '{word}' is a word of the '#pragma cll' language and "
                          f"cannot name an experiment: rename it"), err


def test_a_formula_variable_with_the_generated_codes_prefix_is_refused_at_its_place(tmp_path):
    """`cll_v` is the generated code's array of values: `(double)(cll_v)` would read it, not
    the program's variable (gcc then said 'pointer value used where a floating-point was expected')."""
    (tmp_path / "p.c").write_text(in_main("int cll_v = 3;", "#pragma cll d d[0] + d[1]*cll_v", "x++;",
                                          "#pragma cll end d"))
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1
    assert err.startswith("p.c:4:31: error: variable 'cll_v': names beginning with 'cll_' belong to the "
                          "code call generates"), err
    assert err.count("error:") == 1


def test_pragma_operator_with_cll_is_warned_about_in_code_and_in_a_macro(tmp_path):
    (tmp_path / "p.c").write_text('#define MEASURE _Pragma("cll b b[0] + b[1]*N")\n'
                                  + in_main('_Pragma("cll c c[0]")', "x++;", '_Pragma("omp barrier")'))
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 0
    assert ("p.c:1:25: warning: _Pragma(\"cll ...\") is not read by call (nor is a pragma a macro "
            "expands to): write '#pragma cll b b[0] + b[1]*N' on a line of its own") in err, err
    assert "p.c:4:13: warning: _Pragma(\"cll ...\") is not read by call" in err
    assert err.count("warning:") == 2


REPORT_ABOVE = """void finish(void) {
    #pragma cll report b, k
}
int main(void) {
    int n = 3;
    #pragma cll b b[0] + b[1]*n
    n++;
    #pragma cll end b
    finish();
    return 0;
}
"""


def test_a_report_above_the_function_that_begins_its_experiment_is_not_warned_about(tmp_path):
    """Only `k`, which no begin of the file has, is warned about; `b` begins below the report."""
    (tmp_path / "p.c").write_text(REPORT_ABOVE)
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 0
    assert err.count("warning:") == 1, err
    assert err.startswith("p.c:2:5: warning: report names 'k', which no '#pragma cll' in this file begins: "
                          "unless another file of the program begins it, the trace holds nothing of it"), err


@pytest.mark.parametrize("command", ["check", "cc"])
def test_a_report_of_an_experiment_another_file_of_the_program_begins_is_not_warned_about(tmp_path, command):
    """`call check main.c util.c` and `call cc main.c util.c`: util.c begins K, which main.c
    reports; M is begun nowhere and is still warned about, once."""
    (tmp_path / "main.c").write_text("void work(int n);\nint main(void) {\n    work(5);\n"
                                     "    #pragma cll report K, M\n    return 0;\n}\n")
    (tmp_path / "util.c").write_text("void work(int n) {\n    #pragma cll K K[0] + K[1]*n\n    n++;\n"
                                     "    #pragma cll end K\n}\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    extra = ["-o", "prog"] if command == "cc" else []
    done = subprocess.run([sys.executable, "-m", "call", command, "main.c", "util.c", *extra], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning:") == 1, done.stderr
    assert "report names 'M'" in done.stderr and "'K'" not in done.stderr


GNUC_ARMS = """int main(void) {
    int n = 3;
#ifdef __GNUC__
    #pragma cll C C[0] + C[1]*n
#else
    #pragma cll C C[0] + C[1]*n
#endif
    n++;
    #pragma cll end C
#if defined(_MSC_VER)
    #pragma cll D D[0]
#endif
    return n - 4;
}
"""


@pytest.mark.parametrize("command", ["check", "translate"])
def test_the_compilers_identity_macros_decide_an_if_as_the_compiler_does(tmp_path, command):
    """`#ifdef __GNUC__` / `#else` with the same begin in both arms: call read both arms, one
    after the other, and said 'experiment C is never ended'; `_MSC_VER` is no gcc's."""
    (tmp_path / "g.c").write_text(GNUC_ARMS)
    status, err = call_check("g.c", cwd=tmp_path) if command == "check" else (None, None)
    if command == "translate":
        env = dict(os.environ, PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, "-m", "call", "translate", "g.c"], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        status, err = done.returncode, done.stderr.replace("call: wrote g.cll.c and g.cll.h\n", "")
        assert "cll_begin(&cll_exp_D" not in (tmp_path / "g.cll.c").read_text()
    assert (status, err) == (0, ""), err


@pytest.mark.parametrize("lines, message", [
    (["struct __attribute__((packed)) P {", "    int a;", "    #pragma cll x x[0]", "};"],
     "p.c:3:5: error: '#pragma cll' experiment begin among the members of a struct definition"),
    (["int main(void) {", "    int a[] = { 1,", "    #pragma cll y y[0]", "    2 };", "    return a[0];", "}"],
     "p.c:3:5: error: '#pragma cll' experiment begin inside the braces of an initializer (`= { ... }`)"),
])
def test_a_pragma_in_an_attributed_struct_or_an_initializer_is_refused(tmp_path, lines, message):
    """A second review: both passed call check, and gcc then failed on the translation."""
    (tmp_path / "p.c").write_text("\n".join(lines) + "\nint f(void) { return 0; }\n")
    status, err = call_check("p.c", cwd=tmp_path)
    assert status == 1 and err.startswith(message) and err.count("error:") == 1, err


def test_a_function_returning_a_struct_and_a_pragma_operator_statement_are_bodies_as_before(tmp_path):
    """`struct S make(int n) {` opens a function body, not a struct's members; after a
    `_Pragma("GCC diagnostic push")` statement a pragma may stand (it was 'is a ; missing?')."""
    (tmp_path / "p.c").write_text(
        "struct S { int a; };\n"
        "struct S make(int n) {\n"
        "    struct S s = { 0 };\n"
        "    _Pragma(\"GCC diagnostic push\")\n"
        "    #pragma cll m m[0] + m[1]*n\n"
        "    s.a = n;\n"
        "    #pragma cll end m\n"
        "    _Pragma(\"GCC diagnostic pop\")\n"
        "    return s;\n"
        "}\n"
        "int main(void) { return make(3).a - 3; }\n")
    assert call_check("p.c", cwd=tmp_path) == (0, "")
