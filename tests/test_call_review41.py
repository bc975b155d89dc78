"""Defects a review of call found (session 41), each met as a user meets it:

1. `longjmp` out of an experiment left it open (the run then stopped at the next `end` of
   an experiment around it, status 70) without a word from call; an experiment in a signal
   handler interleaved with the program's. Both are warned about now.
2. `_Pragma("omp parallel")` right before a `#pragma cll` begin or end passed, where
   `#pragma omp parallel` is refused: the inserted code became the parallel region.
3. A `break` hidden in a macro (`#define STOP_IF(c) if (c) break`) in a sampling loop's body
   left only the sampling loop, silently: a warning at the macro's use now.
4. `-std=c89` (`-ansi`, ...) and `-Wdeclaration-after-statement -Werror` passed `call check`
   and then failed inside the generated code: refused up front, with one message.
6. `%:pragma cll` (the digraph of `#`, which gcc reads as `#pragma`) was ignored silently.
10. In nested OpenMP regions the thread column repeated 0, 1, 2 over six threads.
11. A function that begins a `sync` experiment, called inside `#pragma omp single`, hung the
   run (the check saw only experiments written inside the construct): refused at the call.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import pytest

from test_call_diagnostics import call, check, in_main
from call.check import check_file

# ---- 1. longjmp out of an experiment, experiments in signal handlers

LONGJMP = """#include <setjmp.h>
static jmp_buf jb;
static void work(int k) {
    #pragma cll I I[0] + I[1]*k
    if (k % 2) longjmp(jb, 1);
    #pragma cll end I
    if (k > 4) siglongjmp(jb, 2);
}
int main(void) {
    int k;
    for (k = 0; k < 6; k++) {
        #pragma cll O O[0] + O[1]*k
        if (setjmp(jb) == 0) work(k);
        #pragma cll end O
    }
    return 0;
}
"""


def test_a_longjmp_inside_an_experiment_is_warned_at_the_call(tmp_path):
    """One warning, at `longjmp` (line 5, column 16), with a note at the begin; none for the
    `siglongjmp` after the `end`."""
    status, _, err = check(tmp_path, LONGJMP)
    assert status == 0, err
    assert err.startswith("prog.c:5:16: warning: 'longjmp' inside experiment 'I': a longjmp to a "
                          "setjmp outside the experiment leaves it open: this run of it has no "
                          "record (the runtime counts it as left open); to a setjmp in this same "
                          "function (or one it is inlined into), the program then stops at the next 'end' of an "
                          "experiment open around it (status 70"), err
    assert "prog.c:4:5: note: experiment 'I' begins here" in err, err
    assert err.count("warning:") == 1, err


SETJMP_INSIDE = """#include <setjmp.h>
static jmp_buf jb;
int main(void) {
    int k = 0;
    #pragma cll K K[0]
    if (setjmp(jb) < 3) {
        k++;
        longjmp(jb, k);
    }
    #pragma cll end K
    return 0;
}
"""


def test_a_longjmp_back_to_a_setjmp_inside_the_same_experiment_is_not_warned(tmp_path):
    """The docs' own advice (keep the setjmp inside the experiment) drew the warning (review 42)."""
    status, _, err = check(tmp_path, SETJMP_INSIDE)
    assert status == 0 and "warning" not in err, err


HANDLER = """#include <signal.h>
static volatile sig_atomic_t count;
static void on_alarm(int s) {
    int h = count;
    #pragma cll H H[0] + H[1]*h
    count++;
    #pragma cll end H
}
static void on_fault(int s, siginfo_t *info, void *context) {
    #pragma cll F F[0]
    count++;
    #pragma cll end F
}
static void helper(int n) {
    #pragma cll G G[0] + G[1]*n
    count += n;
    #pragma cll end G
}
int main(void) {
    struct sigaction sa = { .sa_sigaction = &on_fault };
    sigaction(SIGSEGV, &sa, 0);
    signal(SIGALRM, on_alarm);
    helper(3);
    return 0;
}
"""


def test_an_experiment_in_a_function_installed_as_a_signal_handler_is_warned(tmp_path):
    """`signal(SIGALRM, on_alarm)` and `.sa_sigaction = &on_fault`: a warning at each begin in
    them, with a note where it is installed; none for `helper`, which is no handler."""
    status, _, err = check(tmp_path, HANDLER)
    assert status == 0, err
    assert ("prog.c:5:5: warning: experiment 'H' in 'on_alarm', which this file installs as a "
            "signal handler (line 22): the runtime is not async-signal-safe") in err, err
    assert "prog.c:22:21: note: 'on_alarm' is installed as a signal handler here" in err, err
    assert "prog.c:10:5: warning: experiment 'F' in 'on_fault', which this file installs as a signal " \
           "handler (line 20)" in err, err
    assert "'G'" not in err and err.count("warning:") == 2, err


# ---- 2. _Pragma("omp ...") before a begin or an end

@pytest.mark.parametrize("lines, line", [
    (['_Pragma("omp parallel")', "#pragma cll B B[0] + B[1]*N", "{ x++; }", "#pragma cll end B"], 5),
    (["#pragma cll B B[0] + B[1]*N", "x++;", '_Pragma("omp parallel for")', "#pragma cll end B",
      "for (x = 0; x < N; x++) ;"], 7),
])
def test_an_omp_pragma_operator_before_a_begin_or_end_is_refused_as_the_directive_is(tmp_path, lines, line):
    status, _, err = check(tmp_path, "#include <omp.h>\n" + in_main(*lines))
    assert status == 1, err
    what = "'#pragma cll' experiment begin" if line == 5 else "'#pragma cll end'"
    assert err.startswith(f"prog.c:{line}:5: error: {what} directly after '{lines[line - 5]}' (a '#pragma omp'), "
                          f"which applies to the next statement: the inserted code would become that "
                          f"statement; move the '#pragma cll' line before it\n"), err
    assert err.count("error:") == 1, err


def test_a_standalone_omp_pragma_operator_before_a_pragma_is_fine(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll B B[0] + B[1]*N", "x++;", '_Pragma("omp barrier")',
                                             "#pragma cll end B", '_Pragma("GCC diagnostic push")',
                                             "#pragma cll report all"))
    assert status == 0 and err == "", err


# ---- 3. a break or continue hidden in a macro, in a sampling loop's body

MACRO_BREAK = """#include <stdio.h>
#define STOP_IF(c) if (c) break
#define SKIP \\
    continue
#define SAFE(c) do { if (c) break; } while (0)
int main(void) {
    int i, j, N = 1, iters = 0;
    for (i = 0; i < 5; i++) {
        iters++;
        #pragma cll for(N = 1; N <= 2; N++)
        #pragma cll A A[0] + A[1]*N
        N = N;
        #pragma cll end A
        for (j = 0; j < 2; j++) { STOP_IF(j == 1); SKIP; }
        SAFE(i == 7);
        STOP_IF(i == 2);
        if (i == 4) SKIP;
        #pragma cll end for
    }
    printf("i=%d iters=%d\\n", i, iters);
    #pragma cll report all
    return 0;
}
"""


def test_a_macro_that_breaks_out_of_a_sampling_loops_body_is_warned_at_its_use(tmp_path):
    """`STOP_IF(i == 2)` (line 16) and `SKIP` (line 17) leave the sampling loop for the user's
    loop: a warning at each use with notes at the `for` and the `#define`; the uses inside the
    inner loop (line 14) and the `do ... while (0)` macro are fine."""
    status, _, err = check(tmp_path, MACRO_BREAK)
    assert status == 0, err
    assert err.startswith("prog.c:16:9: warning: macro 'STOP_IF' expands to a 'break' that leaves the "
                          "body of '#pragma cll for': in the instrumented program it leaves only the "
                          "sampling loop, not the loop or switch it leaves in the plain program"), err
    assert "prog.c:10:9: note: the 'for' is here" in err, err
    assert "prog.c:2:9: note: macro 'STOP_IF' is defined here" in err, err
    assert "prog.c:17:21: warning: macro 'SKIP' expands to a 'continue' that leaves the body" in err, err
    assert "prog.c:3:9: note: macro 'SKIP' is defined here" in err, err
    assert err.count("warning:") == 2, err


def test_a_macro_undefined_before_its_use_or_defined_after_it_is_not_warned(tmp_path):
    body = MACRO_BREAK.replace("        STOP_IF(i == 2);\n", "#undef STOP_IF\n#define STOP_IF(c) (void)(c)\n"
                                                             "        STOP_IF(i == 2);\n")
    body = body.replace("        if (i == 4) SKIP;\n", "        if (i == 4) LATER;\n").replace(
        "    return 0;\n}\n", "    return 0;\n}\n#define LATER break\n")
    status, _, err = check(tmp_path, body)
    assert status == 0 and "warning" not in err, err


# ---- 4. C89 and -Wdeclaration-after-statement -Werror

NEEDS_C99 = "the code call generates needs C99 or later"
DECLARATION = in_main("#pragma cll A A[0] + A[1]*N", "int m = N * 2;", "x = m;", "#pragma cll end A")


@pytest.mark.parametrize("flags", ["-std=c89", "-ansi", "-std=c90", "-std=iso9899:1990", "-O2 -std=iso9899:199409",
                                   "-std=gnu89 -pedantic-errors", "-std=gnu90 -pedantic -Werror"])
def test_a_c89_standard_is_refused_up_front_by_check_cc_and_run(tmp_path, flags):
    """One message from each command, status 1, before any compiler runs (no gcc error about
    the generated header)."""
    (tmp_path / "prog.c").write_text(DECLARATION)
    status, _, err = call("check", "--cflags", flags, "prog.c", cwd=tmp_path)
    assert status == 1 and err.startswith("call check: error: ") and NEEDS_C99 in err, err
    assert err.count("\n") == 1, err
    status, _, err = call("cc", *flags.split(), "-c", "prog.c", cwd=tmp_path)
    assert status == 1 and err.startswith("call cc: error: ") and NEEDS_C99 in err, err
    assert not (tmp_path / "prog.o").exists()
    status, _, err = call("run", "--cflags", flags, "prog.c", cwd=tmp_path)
    assert status == 1 and err.startswith("call run: error: ") and NEEDS_C99 in err, err


@pytest.mark.parametrize("flags, warning", [("-Wdeclaration-after-statement -Werror", "declaration-after-statement"),
                                            ("-Werror=declaration-after-statement", "declaration-after-statement"),
                                            ("-Wc90-c99-compat -Werror", "c90-c99-compat"),
                                            ("-Werror=c90-c99-compat", "c90-c99-compat")])
def test_a_warning_of_the_generated_code_as_an_error_is_refused_up_front(tmp_path, flags, warning):
    """-Wc90-c99-compat -Werror failed inside the generated code (review 42)."""
    (tmp_path / "prog.c").write_text(DECLARATION)
    for command in (["check", "--cflags", flags, "prog.c"], ["cc", *flags.split(), "-c", "prog.c"]):
        status, _, err = call(*command, cwd=tmp_path)
        assert status == 1 and f"error: -W{warning} with -Werror: " in err and \
            "fails in the instrumented program though the plain program builds" in err, err


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("flags", ["-std=gnu89", "-std=c89 -std=c99", "-std=c11 -Wdeclaration-after-statement",
                                   "-Wdeclaration-after-statement -Werror -Wno-error=declaration-after-statement",
                                   "-Wc90-c99-compat"])
def test_flags_that_build_the_instrumented_program_are_not_refused(tmp_path, flags):
    (tmp_path / "prog.c").write_text(DECLARATION)
    status, _, err = call("check", "--cflags", flags, "prog.c", cwd=tmp_path)
    assert status == 0, err
    status, _, err = call("cc", *flags.split(), "-c", "prog.c", cwd=tmp_path)
    assert status == 0 and (tmp_path / "prog.o").exists(), err


# ---- 6. the digraph %:pragma

DIGRAPH = """#include <stdio.h>
int main(void) {
    int m = 4;
    %:pragma cll D D[0] + D[1]*m
    m++;
    %: pragma cll end D
    %:pragma cl report all
    printf("%d\\n", m);
    return 0;
}
"""


def test_a_digraph_pragma_is_a_pragma(tmp_path):
    """`%:pragma cll` begins and ends experiment D (gcc reads `%:` as `#`); a near miss
    written so gets the near-miss warning."""
    program = check_file("prog.c", DIGRAPH)
    assert list(program.experiments) == ["D"]
    assert [w.message for w in program.warnings] == ["'#pragma cl' is ignored: did you mean '#pragma cll'?"]
    assert (program.warnings[0].line, program.warnings[0].column) == (7, 14)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_a_digraph_pragmas_experiment_is_traced(tmp_path):
    (tmp_path / "prog.c").write_text(DIGRAPH.replace("%:pragma cl report", "%:pragma cll report"))
    status, _, err = call("cc", "prog.c", "-o", "prog", cwd=tmp_path)
    assert status == 0, err
    done = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "5\n", done.stderr
    trace = (tmp_path / "prog.cll.1.dat").read_text()
    assert "#experiment: D" in trace and "\nD 0 0 " in trace, trace


# ---- 11. a function that begins a sync experiment, called inside `omp single`

SYNC_IN_SINGLE = """#include <stdio.h>
#pragma cll parallel OpenMP
static int work = 0;
static void step(int n) {
    #pragma cll sync S S[0] + S[1]*n
    work += n;
    #pragma cll end S
}
int main(void) {
    #pragma omp parallel num_threads(2)
    {
        step(1);
        #pragma omp single
        step(5);
        #pragma omp parallel num_threads(2)
        step(2);
    }
    printf("work=%d\\n", work);
    return 0;
}
"""


def test_a_call_inside_omp_single_of_a_function_that_begins_a_sync_experiment_is_refused(tmp_path):
    """The review's program hung (only one thread reaches the experiment's barrier); the call
    in the whole team (line 12) and the one in a parallel region of its own (line 16) are fine."""
    status, _, err = check(tmp_path, SYNC_IN_SINGLE)
    assert status == 1, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert errors == ["prog.c:14:9: error: 'step' begins the sync experiment 'S', which synchronises "
                      "every thread of the team; this call is inside '#pragma omp single' (line 13), "
                      "where only one thread reaches it, so the run would wait forever: call it "
                      "outside that construct or drop 'sync'"], err
    assert "prog.c:5:5: note: sync experiment 'S' begins here" in err


# ---- 10. nested OpenMP regions: every thread its own number

NESTED = """#include <stdio.h>
#include <omp.h>
#pragma cll parallel OpenMP
int main(void) {
    omp_set_max_active_levels(2);
    #pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
        #pragma omp parallel num_threads(3)
        {
            int id = outer * 10 + omp_get_thread_num();
            #pragma cll N N[0] + N[1]*id
            id += 0;
            #pragma cll end N
        }
    }
    #pragma cll report all
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_the_threads_of_nested_parallel_regions_have_numbers_of_their_own(tmp_path):
    """The review's program recorded threads 0, 1, 2 twice over six threads (each inner
    team's omp_get_thread_num); now outer * 3 + inner, one number per thread."""
    (tmp_path / "nest.c").write_text(NESTED)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    built = subprocess.run([sys.executable, "-m", "call", "cc", "-fopenmp", "nest.c", "-o", "nest"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run(["./nest"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert ran.returncode == 0, ran.stderr
    trace = next(tmp_path.glob("nest.cll.*.dat"))
    subprocess.run([sys.executable, "-m", "llac", "-c", f'load "{trace.name}"; export N "n.csv"'],
                   cwd=tmp_path, capture_output=True, text=True, check=True)
    pairs = {(int(r["thread"]), int(float(r["id"]))) for r in csv.DictReader((tmp_path / "n.csv").open())}
    assert pairs == {(outer * 3 + inner, outer * 10 + inner) for outer in range(2) for inner in range(3)}


MACRO_LEAVES_EXPERIMENT = """#define STOP_IF(c) if (c) break
static volatile double s;
int main(void) {
    for (int N = 1; N <= 5; N++) {
        #pragma cll A A[0] + A[1]*N
        s += N;
        STOP_IF(N == 3);
        #pragma cll end A
    }
    return 0;
}
"""


def test_a_macro_that_breaks_out_of_an_experiment_is_warned_as_a_break_there_is(tmp_path):
    """Review 42: A's run at N = 3 lost its record without a word (a written `break` is warned)."""
    status, _, err = check(tmp_path, MACRO_LEAVES_EXPERIMENT)
    assert status == 0, err
    assert err.startswith("prog.c:7:9: warning: macro 'STOP_IF' expands to a 'break' that leaves "
                          "experiment 'A': on that path the experiment is never ended"), err
    assert "prog.c:1:9: note: macro 'STOP_IF' is defined here" in err, err


DIGRAPH_BRACES = """%:include <stdio.h>
static volatile double s;
int main(void)
<%
    int a<:3:> = {0};
    for (int N = 1; N <= 3; N++) <%
        %:pragma cll A A[0] + A[1]*N
        a<:N - 1:> = N;
        %:pragma cll end A
    %>
    printf("%d\\n", a<:2:>);
    return 0;
%>
"""


def test_digraph_braces_are_braces(tmp_path):
    """Review 42: with `<% %>` every pragma was "at file scope"; gcc reads them as `{ }`."""
    (tmp_path / "d.c").write_text(DIGRAPH_BRACES)
    built = subprocess.run([sys.executable, "-m", "call", "cc", "d.c", "-o", "d"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run(["./d"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, "3\n"), ran.stderr
    assert (tmp_path / "d.cll.1.dat").read_text().count("\nA ") == 3


CAST_HANDLER = """#include <signal.h>
#include <string.h>
static volatile double s;
static void on_usr1(int sig) {
    #pragma cll H H[0]
    s += sig;
    #pragma cll end H
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = (void (*)(int))on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    signal(SIGUSR2, (void (*)(int)) &on_usr1);
    return 0;
}
"""


def test_a_handler_installed_through_a_cast_is_seen(tmp_path):
    """Review 42: `sa.sa_handler = (void (*)(int))on_usr1` was not warned about."""
    status, _, err = check(tmp_path, CAST_HANDLER)
    assert status == 0, err
    assert err.startswith("prog.c:5:5: warning: experiment 'H' in 'on_usr1', which this file installs as "
                          "a signal handler (line 12)"), err
