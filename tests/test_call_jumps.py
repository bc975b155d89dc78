"""`break`/`continue` inside `#pragma cll for`: the instrumented program leaves the same user
loops and switches as the plain one (real gcc builds, plain vs `call cc` runs), a jump that
leaves an experiment is warned, one in no loop is a positioned error."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from call.clex import CodeToken, lex
from call.jumps import jump_targets

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO))
# warnings are errors, so the generated code adds none (unused labels, dangling else...)
FLAGS = ["-Wall", "-Wextra", "-Wno-unknown-pragmas", "-Wno-unused-variable",
         "-Wno-unused-but-set-variable", "-Wno-misleading-indentation", "-Werror"]


def call(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "call", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done


def plain_and_instrumented(tmp_path, body):
    """What the program prints built plainly and built by `call cc` (and call's stderr)."""
    source = tmp_path / "prog.c"
    source.write_text("#include <stdio.h>\nint main(void) {\n" + body + "\n}\n")
    subprocess.run(["gcc", *FLAGS, str(source), "-o", str(tmp_path / "plain")],
                   check=True, capture_output=True)
    built = call("cc", *FLAGS, "prog.c", "-o", "inst", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    run = lambda exe: subprocess.run([str(tmp_path / exe)], cwd=tmp_path, check=True,
                                     capture_output=True, text=True).stdout
    return run("plain"), run("inst"), built.stderr


COUNT = """    int i, j, rep, size = 1, outer = 0;
    for (i = 0; i < 6; i++) {{
        outer++;
        {pragmas}
        {code}
        {ends}
    }}
    printf("outer %d i %d\\n", outer, i);
    return 0;"""


@pytest.mark.parametrize("code", [
    "if (i == 2) break;",                                      # the case: 3 outer iterations
    "if (i == 2) continue; if (i == 4) break;",
    "switch (i) { case 3: break; default: if (i == 4) break; }",  # the switch's own breaks
    "for (j = 0; j < 5; j++) if (j == 1) break; if (i == j + 1) break;",
    "while (1) { if (i >= 0) break; } if (i > 2) { continue; } else if (i == 1) break;",
    "do { continue; } while (0); if (i == 3) break;",
    "if (i == 2) { break; }",                                  # braces: `if (...) {` is no loop macro
])
@pytest.mark.parametrize("pragmas, ends", [
    ("#pragma cll for(rep = 0; rep < 3; rep++)", "#pragma cll end for"),
    ("#pragma cll for(size = 1; size <= 4; size *= 2)\n#pragma cll for(rep = 0; rep < 2; rep++)",
     "#pragma cll end for\n#pragma cll end for"),
])
def test_jumps_in_sampling_loops_leave_what_they_leave_in_the_plain_program(tmp_path, code, pragmas, ends):
    plain, instrumented, _ = plain_and_instrumented(tmp_path, COUNT.format(pragmas=pragmas, code=code, ends=ends))
    assert plain == instrumented


def test_break_inside_a_switch_around_the_sampling_loop(tmp_path):
    body = """    int x = 1, rep, hits = 0, after = 0;
    switch (x) {
    case 1:
        #pragma cll for(rep = 0; rep < 4; rep++)
        hits++;
        break;
        #pragma cll end for
        after = 1;
    }
    printf("hits %d after %d\\n", hits, after);
    return 0;"""
    plain, instrumented, _ = plain_and_instrumented(tmp_path, body)
    assert plain == instrumented == "hits 1 after 0\n"


def test_break_leaving_an_experiment_is_warned(tmp_path):
    body = """    int i, N = 4;
    for (i = 0; i < 3; i++) {
        #pragma cll f f[0]*N
        if (i == 1) break;
        while (N > 100) break;
        #pragma cll end f
    }
    printf("i %d\\n", i);
    return 0;"""
    plain, instrumented, stderr = plain_and_instrumented(tmp_path, body)
    assert plain == instrumented == "i 1\n"
    assert stderr.count("warning") == 1
    assert "prog.c:6:21: warning: 'break' inside experiment 'f': on this path the experiment is never ended" in stderr


def test_break_leaving_an_experiment_inside_a_sampling_loop_is_warned(tmp_path):
    body = """    int i, n = 0, x = 0;
    for (i = 0; i < 3; i++) {
        #pragma cll for(n = 1; n <= 4; n++)
        #pragma cll f f[0]*n
        {
            x += n;
            if (x > 5) { break; }
        }
        #pragma cll end f
        #pragma cll end for
    }
    printf("i %d x %d\\n", i, x);
    return 0;"""
    plain, instrumented, stderr = plain_and_instrumented(tmp_path, body)
    assert plain == "i 3 x 0\n" and instrumented == "i 0 x 6\n"   # the sampling loop runs n
    assert stderr.count("warning") == 1
    assert "prog.c:9:26: warning: 'break' inside experiment 'f': on this path the experiment is never ended" in stderr
    assert "prog.c:6:9: note: experiment 'f' begins here" in stderr


def test_jump_in_no_loop_inside_a_sampling_loop_is_a_positioned_error(tmp_path):
    (tmp_path / "prog.c").write_text("int main(void) {\n    int rep;\n"
                                     "    #pragma cll for(rep = 0; rep < 3; rep++)\n"
                                     "    if (rep) continue;\n    #pragma cll end for\n    return 0;\n}\n")
    done = call("check", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("prog.c:4:14: error: 'continue' inside '#pragma cll for' but in no loop of the program")
    assert "    if (rep) continue;\n             ^\n" in done.stderr and "prog.c:3:5: note: the 'for' is here" in done.stderr


def targets(code):
    tokens = [t for t in lex(code) if isinstance(t, CodeToken)]
    return {(j.text, j.line): t and (t.text, t.line) for j, t in jump_targets(tokens).items()}


def test_jump_targets_follow_unbraced_bodies_labels_and_cases():
    code = """int f(int i, int n) {
    for (;;) {
        switch (i) { case 1: continue; default: break; }
        while (n) if (n++) break; else continue;
        do { if (i) break; } while (0);
        if (i) break;
        label: continue;
        FOREACH(n, i) { if (n) break; }
        if (i) { break; } else if (n) { continue; }
    }
    break;
}"""
    assert targets(code) == {("case", 3): ("switch", 3), ("default", 3): ("switch", 3),
                             ("label", 7): None,
                             ("continue", 3): ("for", 2), ("break", 3): ("switch", 3),
                             ("break", 4): ("while", 4), ("continue", 4): ("while", 4),
                             ("break", 5): ("do", 5), ("break", 6): ("for", 2),
                             ("continue", 7): ("for", 2), ("break", 8): ("FOREACH", 8),
                             ("break", 9): ("for", 2), ("continue", 9): ("for", 2),
                             ("break", 11): None}


@pytest.mark.parametrize("code", ["}}} break; ) ] { for ( ; while do", "int f() { if (", "{" * 5000 + "break;"])
def test_jump_targets_end_on_any_input(code):
    targets(code)


SWITCH_INTO = """#include <stdio.h>
static double sink;
int main(void) {
    int N, tries = 0;
    #pragma cll for(N = 1; N <= 4; N++)
    switch (N % 2) {
    case 0:
        #pragma cll f f[0] + f[1]*N
        sink += 1;
    case 1:
        sink += 2;
        #pragma cll end f
        #pragma cll h h[0] + h[1]*N
        switch (tries) { case 0: sink++; break; default: break; }
        #pragma cll end h
        break;
    }
    #pragma cll end for
    #pragma cll g g[0] + g[1]*N
again:
    sink += 1;
    if (++tries < 2) goto again;
    #pragma cll end g
    #pragma cll k k[0] + k[1]*N
retry:
    sink += 1;
    #pragma cll end k
    if (++tries < 4) goto retry;
    #pragma cll report all
    printf("%g\\n", sink);
    return 0;
}
"""


def test_a_jump_to_a_label_inside_an_experiment_is_an_error(tmp_path):
    """Review 21: `case 1:` between f's begin and end passed the check and the run stopped at
    `end f` (status 70); so does a goto into k from after its end. A switch wholly inside h
    and a goto that stays inside g are fine."""
    (tmp_path / "prog.c").write_text(SWITCH_INTO)
    done = call("check", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    errors = [l for l in done.stderr.splitlines() if ": error: " in l]
    assert errors == [
        "prog.c:10:5: error: 'case' label inside experiment 'f': the switch at line 6 jumps to it "
        "from outside, so it enters the experiment without its begin, and the run stops at 'end f' "
        "(status 70); move the begin after the label or before the jump",
        "prog.c:25:1: error: label 'retry' inside experiment 'k': the 'goto' at line 28 jumps to it "
        "from outside, so it enters the experiment without its begin, and the run stops at 'end k' "
        "(status 70); move the begin after the label or before the jump"]
    assert "prog.c:8:9: note: experiment 'f' begins here" in done.stderr
    assert "warning" not in done.stderr    # the goto to `again` stays inside g


def test_a_case_label_inside_a_sampling_loop_is_an_error(tmp_path):
    (tmp_path / "prog.c").write_text("int main(void) {\n    int N = 0, x = 0;\n    switch (x) {\n"
                                     "    case 0:\n    #pragma cll for(N = 1; N < 3; N++)\n"
                                     "    x++;\n    default:\n    x++;\n    #pragma cll end for\n"
                                     "    }\n    return x;\n}\n")
    done = call("check", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("prog.c:7:5: error: 'default' label inside '#pragma cll for': the "
                                  "switch at line 3 jumps to it from outside, so it enters the sampling "
                                  "loop without its 'for'; move the 'for' after the label or before the jump")


def test_a_break_that_leaves_an_experiment_inside_another_open_one_is_an_error(tmp_path):
    """Review 21: a break out of I inside O was only warned about, and the run stopped at
    `end O` (status 70) on its first pass with 0 records of O."""
    (tmp_path / "prog.c").write_text("""int main(void) {
    int N = 4, x = 0;
    #pragma cll O O[0] + O[1]*N
    for (int k = 0; k < 3; k++) {
        #pragma cll I I[0] + I[1]*N
        x += k;
        if (k == 1) break;
        #pragma cll end I
    }
    #pragma cll end O
    return x;
}
""")
    done = call("check", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "prog.c:7:21: error: 'break' leaves experiment 'I' open inside experiment 'O', which stays "
        "open where the jump goes: the run stops at 'end O' (status 70, it does not match the open "
        "experiment 'I'); end 'I' before the jump\n")
    assert "prog.c:5:9: note: experiment 'I' begins here" in done.stderr
    assert "prog.c:3:5: note: experiment 'O' begins here" in done.stderr


def test_a_goto_is_judged_by_what_is_open_at_its_label(tmp_path):
    """A goto to a label inside the same experiments leaves none (no warning); one that leaves
    I for a label still inside O stops the run at `end O`, an error."""
    (tmp_path / "prog.c").write_text("""int main(void) {
    int N = 4, x = 0;
    #pragma cll O O[0] + O[1]*N
    #pragma cll I I[0] + I[1]*N
again:
    if (++x < 3) goto again;
    if (x == 5) goto out;
    #pragma cll end I
out:
    #pragma cll end O
    return x;
}
""")
    done = call("check", "prog.c", cwd=tmp_path)
    assert done.returncode == 1
    assert [l for l in done.stderr.splitlines() if "error:" in l or "warning:" in l] == [
        "prog.c:7:17: error: 'goto' leaves experiment 'I' open inside experiment 'O', which stays "
        "open where the jump goes: the run stops at 'end O' (status 70, it does not match the open "
        "experiment 'I'); end 'I' before the jump"]
