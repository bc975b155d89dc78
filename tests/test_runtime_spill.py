"""Volume: 10 million records spill to disk with bounded memory and none is lost; a spill's
time is not in the experiments' times."""
import os
import subprocess
import sys

import pytest

from support.runtime import begin, build, c_program, end, read_trace, run

N = 10_000_000


def test_ten_million_records_spill_with_bounded_memory(tmp_path):
    src = c_program({"s": ("s[0] + s[1]*i", ["i"])}, f"""
        for (long i = 0; i < {N}; i++) {{ {begin("s", "i")} {end("s")} }}
        printf("spilled %llu of %llu\\n", (unsigned long long)cll_spilled_count(),
               (unsigned long long)cll_record_count());
        system("ls -a . > files-before-report");
        cll_report(0, 0);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) fputs(line, stdout);
        return 0;""", prelude="#include <string.h>")
    result = run(build(tmp_path, {"prog.c": src}), timeout=120)
    assert result.returncode == 0, result.stderr
    spilled_line, hwm_line = result.stdout.splitlines()
    spilled, _, total = spilled_line.split()[1:]
    assert int(total) == N and int(spilled) > N * 9 // 10
    peak_kib = int(hwm_line.split()[1])
    assert peak_kib < 64 * 1024, hwm_line     # 10M records are ~240 MB: far more than this
    assert ".prog.cll.1.dat.spill0." in (tmp_path / "files-before-report").read_text()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]   # spills removed
    # every record present and in order: count lines and check the variable column
    expected = 0
    with open(tmp_path / "prog.cll.1.dat") as trace:
        for line in trace:
            if line.startswith("s "):
                assert line.rsplit(" ", 1)[1] == f"{expected}\n"
                expected += 1
            elif line.startswith("#  records:"):
                assert line == f"#  records: {N}\n"
    assert expected == N


SLOW_WRITEV = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/uio.h>
#include <time.h>
ssize_t writev(int fd, const struct iovec *iov, int n)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real)
        real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    nanosleep(&(struct timespec){0, 200000000}, NULL);   /* every spill takes 0.2 s more */
    return real(fd, iov, n);
}
"""


def test_a_spill_is_not_in_the_time_of_the_experiments_open_around_it(tmp_path):
    """Spills (made 0.2 s slow with an LD_PRELOAD writev) happen inside `outer`, which runs
    300000 short `inner` records (several full buffers): outer's time excludes them, and so
    does the time of the inner record whose end spilled."""
    (tmp_path / "slow.c").write_text(SLOW_WRITEV)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "slow.c", "-o", "slow.so", "-ldl"],
                   cwd=tmp_path, check=True)
    src = c_program({"outer": ("o[0]", []), "inner": ("i[0] + i[1]*k", ["k"])}, f"""
        {begin("outer")}
        for (long k = 0; k < 300000; k++) {{ {begin("inner", "k")} {end("inner")} }}
        {end("outer", 98)}
        printf("spilled %llu\\n", (unsigned long long)cll_spilled_count());
        cll_report(0, 0);
        return 0;""")
    exe = build(tmp_path, {"prog.c": src})
    result = run(exe, env={"LD_PRELOAD": str(tmp_path / "slow.so")}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.split()[1]) > 0   # the buffer did spill
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert float(trace.records["outer"][0][2]) < 0.15   # rank thread time
    assert max(float(r[2]) for r in trace.records["inner"]) < 0.15


RACE = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile long cur;
static volatile double sink;
static void *worker(void *arg) {
    (void)arg;
    for (long i = 0; i < 6000000; i++) {
        #pragma cll t t[0] + t[1]*i
        sink += i;
        #pragma cll end t
        cur = i;
    }
    return NULL;
}
int main(void) {
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    while (cur < 1500000);            /* the worker has spilled */
    #pragma cll report all
    if (system("cp race.cll.1.dat reported.dat"))      /* the exit writes the file again */
        return 1;
    pthread_join(th, NULL);
    return 0;
}
"""


def test_a_report_while_another_thread_records_writes_what_it_counted(tmp_path):
    """A review: a report while another thread recorded read that thread's spill file as it
    grew, until the thread stopped (a thread that never stops filled the disk), and its header
    counted fewer records than it wrote. The report now writes the records stored when it
    began, as many as its header says."""
    (tmp_path / "race.c").write_text(RACE)
    subprocess.run([sys.executable, "-m", "call", "cc", "-O2", "race.c", "-o", "race", "-pthread"], cwd=tmp_path,
                   check=True, capture_output=True)
    done = subprocess.run(["./race"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "reported.dat").read_text()
    header = int(text.split("#experiment: t\n", 1)[1].split("#  records: ", 1)[1].split("\n", 1)[0])
    assert header == sum(1 for line in text.splitlines() if line.startswith("t "))


DEEP = r"""
#include <stdio.h>
#include <stdlib.h>
long rec(long d, long a, long b, long c) {
    long r;
    #pragma cll R R[0] + R[1]*d + R[2]*a + R[3]*b + R[4]*c
    r = d ? rec(d - 1, a, b, c) + 1 : 0;
    #pragma cll end R
    return r;
}
int main(int argc, char **argv) {
    printf("%ld\n", rec(atol(argv[1]), 1, 2, 3));
    #pragma cll report all
    return 0;
}
"""


def test_a_recursion_deeper_than_the_open_experiments_stack_is_said_to_be_so(tmp_path):
    """A review: 400,000 levels of an experiment of 4 variables stopped with "end of 'R' but no
    experiment is open", blaming the pragmas, where the 16 MiB stack of open experiments had
    cut the outer frames (the docs said ~500,000 levels, which holds for one variable)."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    if hard != resource.RLIM_INFINITY and hard < 1 << 28:
        pytest.skip("the stack cannot grow to 256 MiB here")
    (tmp_path / "deep.c").write_text(DEEP)
    subprocess.run([sys.executable, "-m", "call", "cc", "-O0", "deep.c", "-o", "deep"], cwd=tmp_path,
                   check=True, capture_output=True)

    def big_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))
    done = subprocess.run(["./deep", "400000"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          preexec_fn=big_stack)
    assert done.returncode == 70 and "after the stack of open experiments was full (16 MiB: " in done.stderr \
        and "about 262144 levels of nesting of it" in done.stderr, done.stderr
    assert subprocess.run(["./deep", "200000"], cwd=tmp_path, capture_output=True, timeout=120,
                          preexec_fn=big_stack).returncode == 0
