"""`call` never prints a traceback: a begin/for/end/end-for crossing, formulas of thousands
of terms (in `call` and in llac, which share grammar/formula.py), internal errors (exit 2,
`--debug`), and source files whose names are not ASCII or hold a space."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from call import cli
from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO))
TERMS = 2000


def run(tool, *args, cwd):
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr
    return done


def long_formula(name="f", terms=TERMS):
    """NAME[0]*N^(0/1000) + NAME[1]*N^(1/1000) + ...: distinct terms (the same term twice is an error)."""
    return " + ".join(f"{name}[{i}]*N^({i}/1000)" for i in range(terms))


def test_begin_for_end_end_for_crossing_is_a_positioned_error(tmp_path):
    (tmp_path / "cross.c").write_text(
        "int main(void) {\n    int N = 1;\n    #pragma cll f f[0]*N\n"
        "    #pragma cll for(N = 1; N < 4; N++)\n    N++;\n    #pragma cll end f\n"
        "    #pragma cll end for\n    return 0;\n}\n")
    done = run("call", "check", "cross.c", cwd=tmp_path)
    assert done.returncode == 1
    assert "cross.c:6:5: error: 'end f' while '#pragma cll for', begun inside it, is still open" in done.stderr


def test_formula_of_thousands_of_terms_translates_and_compiles(tmp_path):
    (tmp_path / "big.c").write_text(f"int main(void) {{\n    int N = 10;\n    #pragma cll f {long_formula()}\n"
                                    "    N++;\n    #pragma cll end f\n    return N == 11 ? 0 : 1;\n}\n")
    assert run("call", "check", "big.c", cwd=tmp_path).returncode == 0
    done = run("call", "cc", "big.c", "-o", "big", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    subprocess.run(["./big"], cwd=tmp_path, check=True)
    header = (tmp_path / "big.cll.1.dat").read_text()
    assert f"f[{TERMS - 1}]*N^({TERMS - 1}/1000)" in header


def test_deeply_nested_formula_is_one_positioned_error(tmp_path):
    (tmp_path / "deep.c").write_text("int main(void) {\n    int N = 10;\n"
                                     f"    #pragma cll f f[0]*{'-' * 3000}N\n"
                                     "    N++;\n    #pragma cll end f\n    return 0;\n}\n")
    done = run("call", "check", "deep.c", cwd=tmp_path)
    assert done.returncode == 1 and "deep.c:3:3024: error: formula of experiment 'f': the expression nests too deeply" in done.stderr
    source, carets = done.stderr.splitlines()[1:3]           # the innermost N, the line cut around it
    assert source.startswith("...") and source.endswith("-N") and len(source) <= 130
    assert carets.index("^") == len(source) - 1


def test_llac_with_and_where_of_thousands_of_terms(tmp_path):
    write_matinit(tmp_path / "m.dat")
    total = " + ".join(["N"] * TERMS)
    every = " and ".join(["N > 0"] * TERMS)
    script = (f'load "m.dat"; c = colinit with t = {total}; d = c where t == {TERMS}*N and {every}; '
              f'g = colinit formula "{long_formula("colinit")}"; list')
    done = run("llac", "-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[:500]
    assert "created d: 24 records" in done.stdout
    assert f"colinit[{TERMS - 1}]*N^({TERMS - 1}/1000)" in done.stdout


def test_a_source_that_begins_with_a_byte_order_mark_builds_and_traces(tmp_path):
    (tmp_path / "bom.c").write_bytes(b"\xef\xbb\xbf#include <stdio.h>\nint main(void) {\n    int N = 10;\n"
                                     b"    #pragma cll f f[0] + f[1]*N\n    N++;\n    #pragma cll end f\n"
                                     b"    printf(\"%d\\n\", N);\n    return 0;\n}\n")
    done = run("call", "run", "bom.c", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "11\n", done.stderr
    assert "\nf 0 0 " in (tmp_path / "bom.cll.1.dat").read_text()


def test_llac_deep_nesting_is_one_clear_error(tmp_path):
    done = run("llac", "-c", "x = e with t = " + "-" * 3000 + "N", cwd=tmp_path)
    assert done.returncode == 1 and "<command>:1:3016: the expression nests too deeply" in done.stderr
    assert len(done.stderr) < 400 and "Traceback" not in done.stderr


def test_llac_points_at_the_deepest_part_of_a_nested_condition_and_formula_string(tmp_path):
    """The position is the innermost part of the nesting (it was none, or the formula's start)."""
    write_matinit(tmp_path / "m.dat")
    nested = "log(" * 1500 + "N" + ")" * 1500
    done = run("llac", "-c", f'load "m.dat"\nx = colinit where {nested} > 1', cwd=tmp_path)
    column = len("x = colinit where ") + len("log(") * 1500 + 1
    assert done.returncode == 1 and f"<command>:2:{column}: the expression nests too deeply" in done.stderr, done.stderr
    done = run("llac", "-c", f'load "m.dat"; g = colinit formula "colinit[0]*{"-" * 3000}N"', cwd=tmp_path)
    column = len('load "m.dat"; g = colinit formula "colinit[0]*') + 3000 + 1
    assert done.returncode == 1 and f"<command>:1:{column}: bad formula: the expression nests too deeply" in done.stderr, done.stderr


def test_internal_error_is_one_line_and_exit_2_with_debug_for_the_traceback(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.c").write_text("int main(void) { return 0; }\n")
    monkeypatch.chdir(tmp_path)

    def broken(file, text, macros=None):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(cli, "check_file", broken)
    assert cli.main(["check", "p.c"]) == 2
    err = capsys.readouterr().err
    assert err == "call: internal error: ZeroDivisionError: a bug (run `call --debug ...` for details)\n"
    assert cli.main(["--debug", "check", "p.c"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError: a bug" in err


@pytest.mark.parametrize("name", ["matriz_ñ.c", "mat riz.c", "матрица 2.c"])
def test_non_ascii_and_spaced_source_names_build_and_trace(tmp_path, name):
    shutil.copy(REPO / "samples" / "matinit" / "matinit.c", tmp_path / name)
    done = run("call", "run", name, "--", "64", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stem = name[:-2]
    trace = (tmp_path / f"{stem}.cll.1.dat").read_text(encoding="utf-8")
    assert f"#source: {name}\n" in trace and "\ncolinit 0 " in trace


def test_non_ascii_name_keeps_compiler_positions(tmp_path):
    (tmp_path / "ñ.c").write_text("int main(void) {\n    int N = 1;\n    #pragma cll f f[0]*N\n"
                                  "    N = ;\n    #pragma cll end f\n    return 0;\n}\n")
    done = run("call", "cc", "-c", "ñ.c", cwd=tmp_path)
    assert done.returncode != 0 and "ñ.c:4:" in done.stderr


def test_gcc_points_at_an_undeclared_variable_of_a_pragma_where_the_user_wrote_it(tmp_path):
    """A formula's variable, a `for` header's part and a variable on a continuation line: gcc's
    line and column are those of the user's text (the column was the generated code's)."""
    (tmp_path / "unk.c").write_text(
        "int main(void) {\n    int N = 10;\n"
        "    #pragma cll f f[0]+f[1]*Q\n    N++;\n    #pragma cll end f\n"
        "    #pragma cll for(N = 1; N < undefined_var; N++)\n    N++;\n    #pragma cll end for\n"
        "    #pragma cll g g[0] + g[1]*N \\\n       + g[2]*M bytes 8*N*K\n    N++;\n    #pragma cll end g\n"
        "    return N;\n}\n")
    done = run("call", "cc", "-c", "unk.c", cwd=tmp_path)
    assert done.returncode != 0
    located = [line.split(" error: ")[0] for line in done.stderr.splitlines() if " error: " in line]
    assert located == ["unk.c:3:29:", "unk.c:6:32:", "unk.c:10:15:", "unk.c:10:27:"], done.stderr


def test_the_generated_lines_keep_the_users_line_numbers_after_a_placed_variable(tmp_path):
    (tmp_path / "p.c").write_text("int main(void) {\n    int N = 10;\n    #pragma cll f f[0]+f[1]*N\n"
                                  "    N = ;\n    #pragma cll end f\n    return N;\n}\n")
    done = run("call", "cc", "-c", "p.c", cwd=tmp_path)
    assert done.returncode != 0 and "p.c:4:9: error:" in done.stderr, done.stderr


def test_source_name_that_is_not_utf8_builds_and_is_shown_as_its_bytes(tmp_path):
    """A Latin-1 file name (byte 0xe9) builds and traces (#line holds it as a C escape);
    call's messages show the byte as \\xe9."""
    name = os.fsdecode(b"lat\xe9.c")
    shutil.copy(REPO / "samples" / "matinit" / "matinit.c", tmp_path / name)
    done = run("call", "translate", name, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == "call: wrote lat\\xe9.cll.c and lat\\xe9.cll.h\n"
    assert b'#line 1 "lat\\351.c"' in (tmp_path / os.fsdecode(b"lat\xe9.cll.c")).read_bytes()
    done = run("call", "run", name, "--", "64", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "call: trace: " in done.stderr and "lat\\xe9.cll.1.dat" in done.stderr
    trace = (tmp_path / os.fsdecode(b"lat\xe9.cll.1.dat")).read_bytes()
    assert b"#source: lat\xe9.c\n" in trace and b"\ncolinit 0 " in trace


def test_pragma_byte_that_is_not_utf8_is_shown_as_its_bytes_at_its_column(tmp_path):
    (tmp_path / "p.c").write_bytes(b"int main(void) {\n#pragma cll f f[0]*n\xe9 + f[1]\n"
                                   b"#pragma cll end f\nreturn 0; }\n")
    done = run("call", "check", "p.c", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("p.c:2:21: error: unexpected '\\xe9' in '#pragma cll' line\n"
                           "#pragma cll f f[0]*n\\xe9 + f[1]\n"
                           "                    ^^^^\n")


@pytest.mark.parametrize("command", ["translate", "check"])
def test_source_name_an_include_cannot_hold_is_one_error_and_writes_nothing(tmp_path, command):
    (tmp_path / 'q"x.c').write_text("int main(void) { return 0; }\n")
    done = run("call", command, 'q"x.c', cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == """q"x.c: error: the generated header 'q"x.cll.h' cannot be #included: its name holds '"'; rename the file\n"""
    assert sorted(p.name for p in tmp_path.iterdir()) == ['q"x.c']      # no header left behind


@pytest.mark.parametrize("args, words", [
    (["bogus"], "unknown command 'bogus': the commands are translate, check, run, cc, probe"),
    (["run", "p.c", "--procs", "1:2"], "expected A:B:F, three integers"),
    (["translate", "p.c", "-o", "/proc/no-such-dir"], "-o /proc/no-such-dir: error: the folder /proc/no-such-dir does not exist"),
])
def test_usage_and_file_system_errors_exit_1_with_one_message(tmp_path, args, words):
    (tmp_path / "p.c").write_text("int main(void) { return 0; }\n")
    done = run("call", *args, cwd=tmp_path)
    assert done.returncode == 1 and words in done.stderr
