"""`call check` / `call translate` as a user runs them: one clear message per mistake,
file:line:col, the source line and a caret, non-zero exit, never a traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def call(*args, cwd):
    """Run `python -m call ARGS` in `cwd`; (exit status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "call", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def check(tmp_path, body, name="prog.c"):
    (tmp_path / name).write_text(body)
    return call("check", name, cwd=tmp_path)


def in_main(*lines):
    return "int main(void) {\n    int N = 4, x = 0;\n" + "".join(f"    {l}\n" for l in lines) + "    return x;\n}\n"


FIG5 = """void f(int N, int size, int n) {
    int x = 0;
    if (N > 1) {
        #pragma cll D D[0] + D[1] * size
        x++;
        #pragma ll end D
        #pragma cll E E[0] + E[1] * n
        x++;
        #pragma cll end E
    }
}
"""


def test_fig5_typo_ending_the_open_experiment_is_taken_as_its_end_with_a_warning(tmp_path):
    status, _, err = check(tmp_path, FIG5)
    assert status == 0, err
    assert err.startswith("prog.c:6:17: warning: '#pragma ll end D' is taken as '#pragma cll end D', the "
                          "end of experiment 'D' open here: correct the typo (a C compiler ignores "
                          "'#pragma ll')\n        #pragma ll end D\n                ^"), err
    assert "prog.c:4:9: note: experiment 'D' begins here" in err and "is ignored" not in err


def test_a_typo_end_that_ends_no_open_experiment_stays_ignored_and_is_pointed_at(tmp_path):
    """`#pragma ll end E` while D is open: not taken (E is not the open experiment), so D is
    never ended, and the near miss mentioning E is pointed at as E's likely typo elsewhere."""
    status, _, err = check(tmp_path, FIG5.replace("#pragma ll end D", "#pragma ll end E"))
    assert status == 1
    assert "prog.c:4:9: error: experiment 'D' is never ended" in err
    assert "prog.c:6:17: warning: '#pragma ll' is ignored: did you mean '#pragma cll'?" in err
    assert "taken as" not in err


@pytest.mark.parametrize("prefix", ["cl", "call", "clll", "CLL"])
def test_near_miss_prefixes_warn(tmp_path, prefix):
    status, _, err = check(tmp_path, in_main(f"#pragma {prefix} f f[0]"))
    assert status == 0
    assert f"prog.c:3:13: warning: '#pragma {prefix}' is ignored: did you mean '#pragma cll'?" in err


@pytest.mark.parametrize("include, pragma, said", [
    ('#include "pub.h"', "", "'pub.h' is included, but this file has no '#pragma cll parallel PUB NAME'"),
    ("#include <mpi.h>", "#pragma cll parallel OpenMP", "'mpi.h' is included, but this file has no "
                                                         "'#pragma cll parallel MPI'"),
    ("#include <mpi.h>", "#pragma cll parallel MPI", None),
    ('#include "../pub/pub.h"', "#pragma cll parallel PUB b", None),
    ('#include "mpi_helpers.h"', "", None)])
def test_an_mpi_or_pub_header_without_its_parallel_pragma_is_warned(tmp_path, include, pragma, said):
    """call builds such a file with cc, which fails inside pub.h on mpi.h with gcc's words and
    no word of the pragma (a reviewer built docs/pub.md's minimal program with call cc)."""
    status, _, err = check(tmp_path, f"{include}\n{pragma}\n" + in_main())
    assert status == 0
    if said is None:
        assert "is included" not in err
    else:
        assert err.startswith(f"prog.c:1:1: warning: {said}: call builds it with cc, not mpicc, and traces it as "
                              f"a sequential program, unless another file of the program has that pragma"), err


def test_other_pragmas_are_not_near_misses(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma omp barrier", "#pragma acc loop", "#pragma GCC unroll 4"))
    assert (status, err) == (0, "")


def test_a_missing_semicolon_before_a_pragma_is_suggested(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0]", "x = x + N", "#pragma cll end f"))
    assert status == 1
    assert err.startswith("prog.c:5:5: error: '#pragma cll end' inside a statement (after 'N'): it must stand "
                          "where a statement can begin; is a ';' missing at the end of line 4?"), err


def test_end_without_begin(tmp_path):
    status, _, err = check(tmp_path, in_main("x++;", "#pragma cll end f"))
    assert status == 1
    assert "prog.c:4:5: error: 'end f' without a matching '#pragma cll f ...'" in err


def test_two_formulas_under_one_name_point_at_both(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0] + f[1]*N", "#pragma cll end f",
                                             "#pragma cll f f[0] + f[1]*N*N", "#pragma cll end f"))
    assert status == 1
    assert "prog.c:5:5: error: experiment 'f' has two different formulas: 'f[0] + f[1]*N*N' here" in err
    assert "prog.c:3:5: note: and 'f[0] + f[1]*N' here" in err


@pytest.mark.parametrize("command", [("check", "a.c", "b.c"), ("cc", "a.c", "b.c", "-o", "ab")])
def test_two_formulas_under_one_name_in_two_files_of_one_program_point_at_both(tmp_path, command):
    (tmp_path / "a.c").write_text("void work(int N);\n" + in_main("#pragma cll f f[0] + f[1]*N", "work(N);",
                                                                   "#pragma cll end f"))
    (tmp_path / "b.c").write_text("void work(int N) {\n    volatile int s = 0;\n    #pragma cll f f[0] + f[1]*N*N\n"
                                  "    for (int i = 0; i < N; i++) s += i;\n    #pragma cll end f\n}\n")
    status, _, err = call(*command, cwd=tmp_path)
    assert status == 1 and not (tmp_path / "ab").exists()
    assert err == ("b.c:3:5: error: experiment 'f' has two different formulas: 'f[0] + f[1]*N*N' here\n"
                   "    #pragma cll f f[0] + f[1]*N*N\n    ^\n"
                   "a.c:4:5: note: and 'f[0] + f[1]*N' here, in another file of the same program\n"
                   "    #pragma cll f f[0] + f[1]*N\n    ^\n")
    (tmp_path / "b.c").write_text((tmp_path / "b.c").read_text().replace("f[1]*N*N", "f[1]*N bytes 8*N"))
    status, _, err = call(*command, cwd=tmp_path)          # the clauses as written: none is no 'None'
    assert status == 1 and err == ("b.c:3:5: error: experiment 'f' has two different working sets: 'bytes 8*N' "
                                   "here\n    #pragma cll f f[0] + f[1]*N bytes 8*N\n    ^\n"
                                   "a.c:4:5: note: and no 'bytes' clause here, in another file of the same "
                                   "program\n    #pragma cll f f[0] + f[1]*N\n    ^\n")


def test_same_formula_at_two_sites_is_fine(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0] + f[1]*N", "#pragma cll end f",
                                             "#pragma cll f f[0]+f[1] * N", "#pragma cll end f"))
    assert (status, err) == (0, "")


@pytest.mark.parametrize("formula, column, words", [
    ("f[0]*f[1]*N", 24, "has 2 constants"),
    ("N + f[0]", 19, "term N has no constant"),
    ("f[0] + f[2]*N", 26, "f[1] is missing"),
    ("f[0] + g[1]*N", 26, "constant g[1] does not belong to experiment 'f'"),
    ("f[0] + f[1]*a[3]", 31, "constant a[3] does not belong to experiment 'f': its constants are "
                             "f[0], f[1], ... (only they are indexed: a program variable in a "
                             "formula is a plain name such as N, s.n or p->n, so copy an array "
                             "element into one)"),
    ("f[0] + f[1]*N/0", 33, "division by zero: the divisor 0 is 0 whatever the variables"),
    ("f[0] + f[1]*N/(4-2*2)", 34, "division by zero: the divisor 4 - 2*2 is 0 whatever the variables"),
    ("f[0] + f[1]*N/(N-N)", 34, "division by zero: the divisor N - N is 0 whatever the variables"),
    ("f[0] + f[1]*N/(2*N-N-N)", 34, "division by zero: the divisor 2*N - N - N is 0 whatever the variables"),
    ("f[0] + f[1]*N/(0*N)", 34, "division by zero: the divisor 0*N is 0 whatever the variables"),
    ("N*N", 19, "has no constant"),
    ("f[0] +", 25, "ends too early"),
    ("f[0] + f[1]*N*time", 33, "'time' is a column of every trace record, not a program variable"),
    ("f[0] + f[1]*rank", 31, "a formula cannot use it"),
])
def test_non_canonical_formulas_point_at_the_column(tmp_path, formula, column, words):
    status, _, err = check(tmp_path, in_main(f"#pragma cll f {formula}", "#pragma cll end f"))
    assert status == 1
    first = err.splitlines()[0]
    assert first.startswith(f"prog.c:3:{column}: error: ") and words in first
    assert err.splitlines()[2] == " " * (column - 1) + "^"


def test_formula_messages_show_the_experiments_own_constants(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll K K[0] + N", "#pragma cll end K"))
    assert status == 1
    assert err.startswith("prog.c:3:26: error: formula of experiment 'K': term N has no constant: "
                          "in canonical form every term is multiplied by exactly one constant "
                          "such as K[1]\n")


def test_division_by_a_variable_or_nonzero_constant_is_fine(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0] + f[1]*N/(2-1) + f[2]/N",
                                             "#pragma cll end f"))
    assert (status, err) == (0, "")


def test_formula_error_on_a_continuation_line_maps_to_that_line(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0] + \\", "      f[2]*N", "#pragma cll end f"))
    assert status == 1
    assert err.startswith("prog.c:4:11: error:") and "f[1] is missing" in err
    assert "without a matching" not in err  # no cascade from the rejected begin


@pytest.mark.parametrize("clause, column, words", [
    ("1:0:2", 39, "the last count 0 is below the first 1"),
    ("a:b", 29, "malformed procs clause"),
    ("1:8:1", 41, "the factor must be at least 2"),
    ("0:8:2", 37, "at least 1"),
    ("1:100000000000000000000:2", 39, "the last count 100000000000000000000 is more processors than a "
                                      "trace can record (at most 2147483647)"),
])
def test_malformed_procs(tmp_path, clause, column, words):
    status, _, err = check(tmp_path, f"#pragma cll parallel OpenMP procs = {clause}\n" + in_main())
    assert status == 1
    assert err.startswith(f"prog.c:1:{column}: error:")
    assert words in err


def test_a_sync_experiment_of_pub_needs_the_machine_name(tmp_path):
    status, _, err = check(tmp_path, "#pragma cll parallel PUB procs = 1:32:2\n"
                           + in_main("#pragma cll sync f f[0]", "x++;", "#pragma cll end f"))
    assert status == 1
    assert ("prog.c:4:5: error: 'sync' experiment 'f' in a PUB program synchronises the BSP "
            "machine, but '#pragma cll parallel PUB' names none") in err
    assert "prog.c:1:1: note: the parallel line is here" in err
    assert check(tmp_path, "#pragma cll parallel PUB procs = 1:32:2\n"
                 + in_main("#pragma cll f f[0]", "x++;", "#pragma cll end f"))[0] == 0


@pytest.mark.parametrize("line, word, nearest", [
    ("#pragma cll ned f", "ned", "end"), ("#pragma cll repotr all", "repotr", "report"),
    ("#pragma cll paralel OpenMP", "paralel", "parallel"), ("#pragma cll fro(N=1; N<9; N++)", "fro", "for"),
])
def test_unknown_directive_suggests_nearest(tmp_path, line, word, nearest):
    status, _, err = check(tmp_path, in_main(line))
    assert status == 1
    assert f"prog.c:3:17: error: unknown directive {word!r} after '#pragma cll' (did you mean {nearest!r}?)" in err


@pytest.mark.parametrize("keyword", ["return x;", "goto out;"])
def test_return_or_goto_inside_experiment_warns_but_translates(tmp_path, keyword):
    (tmp_path / "prog.c").write_text(in_main("#pragma cll f f[0]", f"if (x) {keyword}", "#pragma cll end f", "out:;"))
    status, _, err = call("translate", "prog.c", cwd=tmp_path)
    assert status == 0
    assert f"prog.c:4:12: warning: '{keyword.split()[0]}' inside experiment 'f'" in err
    assert ("this run of it has no record (the next 'end' in a calling function, or the exit, "
            "counts it as left open; not where the compiler inlines this function" in err) \
        == keyword.startswith("return")   # a goto stays in the function
    assert "prog.c:3:5: note: experiment 'f' begins here" in err
    assert (tmp_path / "prog.cll.c").exists() and (tmp_path / "prog.cll.h").exists()


def test_unbalanced_end_for(tmp_path):
    status, _, err = check(tmp_path, in_main("x++;", "#pragma cll end for"))
    assert status == 1
    assert "prog.c:4:5: error: 'end for' without a matching '#pragma cll for'" in err


def test_for_never_ended(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll for(N = 1; N < 9; N++)", "x++;"))
    assert status == 1
    assert "prog.c:3:5: error: '#pragma cll for' has no 'end for' before the end of the function" in err


def test_end_for_while_experiment_open(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll for(N = 1; N < 9; N++)", "#pragma cll f f[0]",
                                             "#pragma cll end for", "#pragma cll end f"))
    assert status == 1
    assert "prog.c:5:5: error: 'end for' while experiment 'f' is still open" in err


@pytest.mark.parametrize("lines, words", [
    (("if (x)", "#pragma cll for(N = 1; N < 2; N++)", "x++;", "#pragma cll end for"), "directly after 'if (...)'"),
    (("if (x) x++; else", "#pragma cll report all", "x++;"), "directly after 'else'"),
    (("switch (x)", "#pragma cll f f[0]", "{ default: x++; }", "#pragma cll end f"), "directly after 'switch (...)'"),
    (("if (x) x++;", "#pragma cll f f[0]", "else x--;", "#pragma cll end f"), "between an if's statement and its 'else'"),
    (("x = 1 +", "#pragma cll f f[0]", "2;", "#pragma cll end f"), "inside a statement"),
])
def test_pragma_where_a_statement_would_change_the_program_is_rejected(tmp_path, lines, words):
    status, _, err = check(tmp_path, in_main(*lines))
    assert status == 1
    assert err.startswith("prog.c:4:5: error:") and words in err


def test_begin_at_file_scope_is_rejected(tmp_path):
    status, _, err = check(tmp_path, "#pragma cll f f[0]\nint x;\n#pragma cll end f\n")
    assert status == 1
    assert "prog.c:1:1: error: '#pragma cll' experiment begin at file scope" in err


def test_pragma_text_in_comments_and_strings_is_not_a_pragma(tmp_path):
    status, _, err = check(tmp_path, in_main('/* #pragma cll end f */', '// #pragma cll end g \\',
                                             '#pragma cll end h', 'const char *s = "#pragma cll end i";',
                                             "x = '#';"))
    assert (status, err) == (0, "")


def test_missing_file_is_one_clear_error(tmp_path):
    status, _, err = call("check", "nope.c", cwd=tmp_path)
    assert status == 1 and err.startswith("nope.c: error: cannot read")


OMP_SYNC = """#pragma cll parallel OpenMP
static double sink;
int main(void) {{
    int N = 1000;
    #pragma omp parallel
    {{
        #pragma omp {construct}
        {opening}
            #pragma cll sync S S[0] + S[1]*N
            sink += 1;
            #pragma cll end S
        {closing}
        #pragma cll sync T T[0] + T[1]*N
        sink += 1;
        #pragma cll end T
    }}
    #pragma cll report all
    return 0;
}}
"""


@pytest.mark.parametrize("construct, opening, closing, named, reason", [
    ("single", "{", "}", "single' (line 7", "only one thread reaches it"),
    ("master", "{", "}", "master' (line 7", "only one thread reaches it"),
    ("critical (update)", "{", "}", "critical' (line 7", "the threads reach it one at a time"),
    ("for schedule(static)", "for (int i = 0; i < 4; i++) {", "}", "for' (line 7",
     "each iteration runs on one thread"),
    ("for", "for (int i = 0; i < 4; i++)", "", "for' (line 7", "each iteration runs on one thread"),
    ("sections", "{\n#pragma omp section\n{", "}}", "section' (line 9", "each section runs on one thread"),
])
def test_sync_where_not_every_thread_arrives_is_an_error(tmp_path, construct, opening, closing,
                                                         named, reason):
    """Review 21: a sync experiment (a barrier of the team) inside `omp single` passed the
    check and the run waited forever; T, after the construct, stays fine."""
    status, _, err = check(tmp_path, OMP_SYNC.format(construct=construct, opening=opening,
                                                     closing=closing))
    assert status == 1, err
    line = 9 + opening.count("\n")
    assert (f"prog.c:{line}:13: error: a sync experiment synchronises every thread of the team; "
            f"inside '#pragma omp {named}) {reason}, so the run would wait forever") in err, err
    assert err.count("error:") == 1


def test_sync_in_a_parallel_region_and_after_a_single_is_fine(tmp_path):
    status, _, err = check(tmp_path, OMP_SYNC.format(construct="single", opening="{ sink += 2; }",
                                                     closing="").replace("#pragma cll sync S", "#pragma cll S"))
    assert status == 0, err
    # a parallel region nested in the single: a new team, all of whose threads reach S
    status, _, err = check(tmp_path, OMP_SYNC.format(construct="single",
                                                     opening="{\n#pragma omp parallel\n{",
                                                     closing="}}"))
    assert status == 0, err


IF_ARMS = """#include <stdio.h>
#define USE_SQUARE 0
static double sink;
int main(void) {
    int N, rep;
    #pragma cll for(rep = 0; rep < 2; rep++)
    #pragma cll for(N = 100; N <= 200; N *= 2)
#if USE_SQUARE || defined(NEVER_DEFINED_HERE) && 0
    #pragma cll f f[0] + f[1]*N*N
    for (int i = 0; i < N*N; i++) sink += i;
    #pragma cll end f
#elif 1
    #pragma cll f f[0] + f[1]*N
    for (int i = 0; i < N; i++) sink += i;
    #pragma cll end f
#else
    #pragma cll end for
#endif
#ifdef TIMING_G
    #pragma cll g g[0] + g[1]*N
#endif
    #pragma cll end for
    #pragma cll end for
    #pragma cll report all
    printf("%g\\n", sink);
    return 0;
}
"""


def test_pragmas_in_arms_the_compiler_drops_are_not_checked(tmp_path):
    """Review 21: the same experiment with other formulas in `#if 0` / `#else` was 'two
    different formulas', and a begin under `#ifdef NEVER` a cascade of errors. call decides
    `#if` as gcc does where it can: here with -UTIMING_G; the run's trace has the kept
    formula."""
    (tmp_path / "prog.c").write_text(IF_ARMS)
    assert call("check", "--cflags=-O2 -UTIMING_G", "prog.c", cwd=tmp_path)[0] == 0
    status, _, err = call("run", "--cflags=-O1 -U TIMING_G", "prog.c", cwd=tmp_path)
    assert status == 0, err
    header = (tmp_path / "prog.cll.1.dat").read_text().split("\n#experiment: ")[1]
    assert "#  formula: f[0] + f[1]*N\n" in header


def test_an_undecided_condition_is_explained(tmp_path):
    """A macro call cannot know (no -D/-U, no #define): every arm counts, and the error says
    so at the #if."""
    body = IF_ARMS.replace("#define USE_SQUARE 0\n", "").replace("#ifdef TIMING_G", "#if 0")
    status, _, err = check(tmp_path, body)
    assert status == 1
    assert err.startswith("prog.c:12:5: error: experiment 'f' has two different formulas: "
                          "'f[0] + f[1]*N' here\n"), err
    assert ("prog.c:7:1: note: call reads every arm of '#if USE_SQUARE || defined(NEVER_DEFINED_HERE) "
            "&& 0': it cannot tell which one the compiler keeps (decide the macros with -D/-U in "
            "--cflags or a #define in the file)") in err
    status, _, err = call("check", "--cflags=-DUSE_SQUARE=0", "prog.c", cwd=tmp_path)
    assert status == 0, err


def test_two_begins_in_the_arms_of_an_undecided_ifdef_sharing_one_end_say_why(tmp_path):
    """Each arm begins g, one end after #endif: call reads both arms, so one begin stays open;
    the error (and the warning at the return) carry the note at the #ifdef."""
    body = ("int main(void) {\n    int N = 10;\n#ifdef VERBOSE\n    #pragma cll g g[0] + g[1]*N\n#else\n"
            "    #pragma cll g g[0] + g[1]*N\n#endif\n    N++;\n    #pragma cll end g\n    return N;\n}\n")
    status, _, err = check(tmp_path, body)
    assert status == 1 and "prog.c:4:5: error: experiment 'g' is never ended" in err
    assert err.count("prog.c:3:1: note: call reads every arm of '#ifdef VERBOSE'") == 2, err
    assert call("check", "--cflags=-DVERBOSE", "prog.c", cwd=tmp_path)[0] == 0


def test_an_option_value_that_begins_with_a_dash_is_the_options_value(tmp_path):
    """`--cflags -DUSE_SQUARE=0` (one word) was argparse's "expected one argument", as was
    `--largest -1MiB`, which now gets the size's own message (a size is positive, review 24,
    also written `--largest=-1MiB` or without a unit); an option in the value's place still
    says the value is missing."""
    (tmp_path / "prog.c").write_text(IF_ARMS.replace("#define USE_SQUARE 0\n", ""))
    assert call("check", "prog.c", cwd=tmp_path)[0] == 1           # USE_SQUARE undecided
    status, _, err = call("check", "prog.c", "--cflags", "-DUSE_SQUARE=0 -UTIMING_G", cwd=tmp_path)
    assert status == 0, err
    status, _, err = call("run", "--cflags", "-UTIMING_G", "prog.c", cwd=tmp_path)
    assert status == 1 and "'#if USE_SQUARE" in err, err                # its -U counted, not -O2
    status, _, err = call("check", "prog.c", "--cflag", "-DUSE_SQUARE=0", cwd=tmp_path)   # an abbreviation
    assert status == 1 and "expected one argument" not in err and "'#ifdef TIMING_G'" in err, err
    for given, size in ((["--largest", "-1MiB"], "-1MiB"), (["--largest=-1MiB"], "-1MiB"),
                        (["--largest", "-2"], "-2")):
        status, _, err = call("probe", *given, cwd=tmp_path)
        assert (status, err.splitlines()[-1]) == (1, f"call probe: error: argument --largest: '{size}': a size "
                                                     f"is positive: expected a size in bytes such as 536870912, "
                                                     f"512MiB or 1GiB (binary units: K or KiB, M or MiB, G or "
                                                     f"GiB)"), err
    status, _, err = call("run", "--procs", "--cflags", "-O2", "prog.c", cwd=tmp_path)
    assert (status, err.splitlines()[-1]) == (1, "call run: error: argument --procs: expected one argument")


def test_a_misspelt_end_is_the_only_error(tmp_path):
    """Review 21: `#pragma cll ned A` gave 6 errors and a warning, the first a false 'for has
    no end for'. The typo is taken as the `end` it was meant to be: one message."""
    status, _, err = check(tmp_path, in_main(
        "#pragma cll for(x = 0; x < 3; x++)", "#pragma cll for(N = 1; N < 9; N *= 2)",
        "#pragma cll A A[0] + A[1]*N", "x += N;", "#pragma cll ned A",
        "#pragma cll B B[0] + B[1]*N", "x += N;", "#pragma cll end B",
        "#pragma cll ned for", "#pragma cll end for"))
    assert status == 1
    assert [l for l in err.splitlines() if "error:" in l or "warning:" in l] == [
        "prog.c:7:17: error: unknown directive 'ned' after '#pragma cll' (did you mean 'end'?)",
        "prog.c:11:17: error: unknown directive 'ned' after '#pragma cll' (did you mean 'end'?)"]


def test_an_end_for_ends_the_experiments_left_open_inside_its_loop(tmp_path):
    """One error for a missing `end`, not one per `end for` and per open loop after it."""
    status, _, err = check(tmp_path, in_main(
        "#pragma cll for(x = 0; x < 3; x++)", "#pragma cll for(N = 1; N < 9; N *= 2)",
        "#pragma cll A A[0] + A[1]*N", "x += N;", "#pragma cll end for", "#pragma cll end for"))
    assert status == 1
    assert [l for l in err.splitlines() if "error:" in l or "warning:" in l] == [
        "prog.c:7:5: error: 'end for' while experiment 'A' is still open"]


def test_kept_arms_follow_nesting_elif_chains_and_defines():
    from call.clex import CodeToken, lex
    from call.conditions import kept, macros_of
    text = """a0
#define ONE 1
#if ONE && !defined(TWO)
a1
# if 0
a2
# elif defined ONE
a3
# else
a4
# endif
#elif 1
a5
#else
a6
#endif
#ifdef UNKNOWN
#define THREE
u1
#else
u2
#endif
#ifdef THREE
u3
#endif
#if 0
#if UNKNOWN
d1
#else
d2
#endif
#elif X == 2
x1
#endif
"""
    def words(flags):
        items, undecided = kept(lex(text), text.splitlines(), macros_of(flags))
        return [t.text for t in items if isinstance(t, CodeToken)], [u.line for u in undecided]
    assert words([]) == (["a0", "a1", "a3", "a5", "a6", "u1", "u2", "u3", "x1"], [3, 17, 23, 32])
    assert words(["-UTWO"]) == (["a0", "a1", "a3", "u1", "u2", "u3", "x1"], [17, 23, 32])
    assert words(["-DTWO", "-D", "X=2", "-DUNKNOWN"]) == (["a0", "a5", "u1", "u3", "x1"], [])
