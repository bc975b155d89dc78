"""Experiments left open by calls that have returned (a `return` or `longjmp` out of an
experiment, review 41): an end pops the frames that deeper calls left open, counts them as
left open, and records its own. Before, in a recursive function whose base case returned
inside the experiment, each caller's end closed the frame its callee left open, so the
records carried the callees' values and times; a caller's other experiment stopped the run
(status 70). Built with `call cc` and run as a user does."""
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

MSORT = """#include <stdio.h>
#include <string.h>
static int tmp[64];
static void msort(int *a, int n) {
    #pragma cll S S[0] + S[1]*n*log(n)
    if (n < 2) return;
    int h = n / 2, i = 0, j = h, k = 0;
    msort(a, h); msort(a + h, n - h);
    while (i < h && j < n) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
    printf("%d ", n);
    #pragma cll end S
}
int main(void) {
    int a[8] = {5, 3, 7, 1, 8, 2, 6, 4};
    #pragma cll T T[0]
    msort(a, 8);
    #pragma cll end T
    printf("| %d %d\\n", a[0], a[7]);
    #pragma cll report all
    return 0;
}
"""

LONGJMP = """#include <stdio.h>
#include <setjmp.h>
static jmp_buf jb;
static int inner_runs, outer_runs;
static __attribute__((noinline)) void work(int k) {
    #pragma cll I I[0] + I[1]*k
    inner_runs++;
    if (k % 2) longjmp(jb, 1);
    #pragma cll end I
}
int main(void) {
    int k;
    for (k = 0; k < 6; k++) {
        #pragma cll O O[0] + O[1]*k
        outer_runs++;
        if (setjmp(jb) == 0) work(k);
        #pragma cll end O
    }
    printf("inner=%d outer=%d\\n", inner_runs, outer_runs);
    #pragma cll report all
    return 0;
}
"""


def build_and_run(tmp_path: Path, name: str, source: str, *flags: str) -> subprocess.CompletedProcess:
    """`call cc FLAGS name.c -o name`, then ./name; the run."""
    (tmp_path / f"{name}.c").write_text(source)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    built = subprocess.run([sys.executable, "-m", "call", "cc", *flags, f"{name}.c", "-o", name],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return subprocess.run([f"./{name}"], cwd=tmp_path, capture_output=True, text=True, timeout=60)


def values(tmp_path: Path, trace: str, experiment: str, column: str) -> list[float]:
    """One column of an experiment's records, through llac's export as a user reads them."""
    out = tmp_path / f"{experiment}.csv"
    subprocess.run([sys.executable, "-m", "llac", "-c", f'load "{trace}"; export {experiment} "{out}" replace'],
                   cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return [float(row[column]) for row in csv.DictReader(out.open())]


@pytest.mark.parametrize("flags", [("-O0",), ("-O2",), ("-O3", "-fomit-frame-pointer")])
def test_a_recursions_records_are_each_calls_own_when_its_base_case_returns_inside(tmp_path, flags):
    run = build_and_run(tmp_path, "msort", MSORT, *flags)
    assert (run.returncode, run.stdout) == (0, "2 2 4 2 2 4 8 | 1 8\n"), run.stderr
    assert values(tmp_path, "msort.cll.1.dat", "S", "n") == [2, 2, 4, 2, 2, 4, 8]
    assert len(values(tmp_path, "msort.cll.1.dat", "T", "time")) == 1    # the caller's own experiment
    assert ("experiment 'S' (begun at msort.c:5:5) was left open 8 times in thread 0"
            in run.stderr), run.stderr                                   # the 8 base cases


def test_a_longjmp_out_of_a_callees_experiment_leaves_it_open_and_the_caller_goes_on(tmp_path):
    """Before: exit 70 at `end O`, no output. (`work` is not inlined: inlined into main, its
    frame would be main's, and the end could not tell its frame from main's own: docs/runtime.md.)"""
    run = build_and_run(tmp_path, "lj", LONGJMP, "-O2")
    assert (run.returncode, run.stdout) == (0, "inner=6 outer=6\n"), run.stderr
    assert values(tmp_path, "lj.cll.1.dat", "O", "k") == [0, 1, 2, 3, 4, 5]
    assert values(tmp_path, "lj.cll.1.dat", "I", "k") == [0, 2, 4]
    assert "experiment 'I' (begun at lj.c:6:5) was left open 3 times" in run.stderr, run.stderr


MPI_RECURSION = """#include <mpi.h>
#include <stdio.h>
#pragma cll parallel MPI
static int depth_sum(int n) {
    #pragma cll R R[0] + R[1]*n
    if (n == 0) return 0;
    int value = n, total = 0;
    MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    total += depth_sum(n - 1);
    #pragma cll end R
    return total;
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int total = depth_sum(3);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("total=%d\\n", total);
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                    reason="MPI is not installed")
def test_in_an_mpi_program_the_returned_calls_frames_leave_the_message_counts_right(tmp_path):
    """The MPI layer keeps its own stack of open experiments: it drops as many as the runtime
    pops, so that each record's message counts are its own call's (n allreduces below n)."""
    (tmp_path / "mr.c").write_text(MPI_RECURSION)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    built = subprocess.run([sys.executable, "-m", "call", "cc", "-O2", "mr.c", "-o", "mr"], cwd=tmp_path,
                           env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ran = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", "./mr"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout) == (0, "total=12\n"), ran.stderr
    ns = values(tmp_path, "mr.cll.2.dat", "R", "n")
    sent = values(tmp_path, "mr.cll.2.dat", "R", "msgs_sent")
    assert sorted(ns) == [1, 1, 2, 2, 3, 3]
    assert all(s > 0 for s in sent)
    by_n = {}
    for n, s in zip(ns, sent):
        by_n.setdefault(n, set()).add(s)
    assert max(by_n[1]) < min(by_n[2]) and max(by_n[2]) < min(by_n[3])   # n calls' allreduces


PUB_OWNER_LEFT_OPEN = """#include <stdio.h>
#include <pub.h>
#pragma cll parallel PUB bsp procs = 2:2:2
static __attribute__((noinline)) int step(t_bsp *bsp, int k) {   /* inlined, its frame is main's */
    #pragma cll sync S S[0] + S[1]*k
    if (k > 0) return k;
    #pragma cll end S
    return 0;
}
int main(int argc, char **argv) {
    t_bsp machine, *bsp = &machine;
    bsp_begin(bsp, &argc, &argv);
    #pragma cll O O[0]
    step(bsp, 1);
    #pragma cll end O
    #pragma cll report all
    bsp_end(bsp);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                    reason="MPI is not installed")
def test_a_pub_run_whose_sync_experiment_a_return_left_open_is_said_to_have_no_end(tmp_path):
    """The experiment that began a run of supersteps (a `sync` one) left open by a return:
    the caller's end pops it, and the PUB layer says that run has no end (before: 'end of O
    does not match the open S')."""
    (tmp_path / "owner.c").write_text(PUB_OWNER_LEFT_OPEN)
    done = subprocess.run([sys.executable, "-m", "call", "run", "owner.c"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert ("experiment 'S', which began the run of its BSP machine, was left open by a return or "
            "longjmp out of it (found at owner.c:15:5): the run has no end") in done.stderr, done.stderr


COUNTDOWN = """#include <stdio.h>
static int f(int n) {
    #pragma cll R R[0] + R[1]*n
    if (n == 0) return 0;
    f(n - 1);
    #pragma cll end R
    return n;
}
int main(void) { f(3); return 0; }
"""


def test_a_frame_left_once_by_a_returned_call_is_said_to_be_left_open_not_open_at_exit(tmp_path):
    """Review 42: the base case's frame, popped by its caller's end, was reported "still open
    at exit"."""
    run = build_and_run(tmp_path, "countdown", COUNTDOWN, "-O0")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ("cll: warning: experiment 'R' (begun at countdown.c:3:5) was left open once in "
                          "thread 0 (a jump out of it skipped its end; that run has no record)\n")
    assert values(tmp_path, "countdown.cll.1.dat", "R", "n") == [1, 2, 3]
