"""SIGKILL cannot be caught: the spill files a killed run leaves are self-describing, and
llac loads what they hold, saying the run did not finish. Real gcc-built programs, real
`python -m llac` runs."""
import signal
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llac.spill import read_spill, spill_files_for
from llac.trace import TraceError
from support.runtime import begin, build, c_program, end

RECORDS = 300_000   # more than a 2 MiB buffer holds: some records spill, some stay in memory


def killed(tmp_path, body: str, experiments: dict, prelude: str = ""):
    """Build a program that records (`body`), prints "ready" and waits; SIGKILL it."""
    src = c_program(experiments, body + ' puts("ready"); fflush(stdout); for (;;) pause();',
                    prelude="#include <unistd.h>\n" + prelude)
    exe = build(tmp_path, {"prog.c": src})
    process = subprocess.Popen([str(exe)], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return process.pid


def llac(tmp_path, script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_llac_loads_the_spilled_records_of_a_killed_run(tmp_path):
    pid = killed(tmp_path, f"for (long i = 0; i < {RECORDS}; i++) {{ {begin('s', 'i', 'i % 7')} "
                           f"{end('s')} }}", {"s": ("s[0] + s[1]*i + s[2]*j", ["i", "j"])})
    assert not (tmp_path / "prog.cll.1.dat").exists()
    spills = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    assert len(spills) == 1 and ".prog.cll.1.dat.spill0." in spills[0]
    trace = read_spill(spills[0])
    s = trace.experiments["s"]
    spilled = len(s)
    per_spill = (2 << 20) // 32   # records of two variables: 32 bytes
    assert spilled > 0 and spilled % per_spill == 0 and spilled < RECORDS
    assert list(s.columns["i"]) == list(range(spilled))           # every spilled record, in order
    assert list(s.columns["j"][:10]) == [i % 7 for i in range(10)]
    assert (s.columns["time"] > 0).all() and np.isfinite(s.columns["time"]).all()   # seconds
    assert trace.header["pid"] == str(pid) and not trace.complete
    result = llac(tmp_path, 'load "prog.cll.1.dat"; describe s')
    assert result.returncode == 0, result.stderr
    assert f"spill file of a run (pid {pid}) that did not finish" in result.stdout + result.stderr
    assert f"{spilled} records" in result.stdout
    direct = llac(tmp_path, f'load "{spills[0]}"; list')
    assert direct.returncode == 0 and str(spilled) in direct.stdout, direct.stderr


def test_spill_files_of_several_threads_and_experiments_load_together(tmp_path):
    body = f"""
        pthread_t t[2];
        for (int k = 0; k < 2; k++) pthread_create(&t[k], 0, work, 0);
        for (int k = 0; k < 2; k++) pthread_join(t[k], 0);"""
    functions = f"""static void *work(void *arg) {{
        (void)arg;
        for (long i = 0; i < {RECORDS}; i++) {{
            {begin('a', 'i')} {end('a')}
            if (i % 2) {{ {begin('b')} {end('b')} }}
        }}
        return 0;
    }}"""
    src_experiments = {"a": ("a[0] + a[1]*n", ["n"]), "b": ("b[0]", [])}
    src = c_program(src_experiments, body + ' puts("ready"); fflush(stdout); for (;;) pause();',
                    prelude="#include <unistd.h>\n#include <pthread.h>", functions=functions)
    exe = build(tmp_path, {"prog.c": src}, flags=("-pthread",))
    process = subprocess.Popen([str(exe)], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n"
    process.kill()
    process.wait(timeout=30)
    spills = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    assert len(spills) == 2
    traces = [read_spill(p) for p in spills]
    for trace in traces:
        a, b = trace.experiments["a"], trace.experiments["b"]
        assert len(a) > 0 and len(b) > 0
        assert list(a.columns["n"]) == list(range(len(a)))    # per thread, in order
        assert abs(len(a) - 2 * len(b)) <= 1
        assert set(a.columns["thread"]) == {float(trace.header["thread"])}
    result = llac(tmp_path, 'load "prog.cll.1.dat"; list')
    assert result.returncode == 0, result.stderr
    total = sum(len(t.experiments["a"]) for t in traces)
    assert str(total) in result.stdout


def test_a_spill_file_cut_inside_a_chunk_keeps_its_complete_records(tmp_path):
    killed(tmp_path, f"for (long i = 0; i < {RECORDS}; i++) {{ {begin('s', 'i')} {end('s')} }}",
           {"s": ("s[0] + s[1]*i", ["i"])})
    (spill,) = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    whole = read_spill(spill)
    data = open(spill, "rb").read()
    with open(spill, "wb") as f:   # as if killed in the middle of the second spill
        f.write(data[:len(data) - 24 * 1000 - 5])
    cut = read_spill(spill)
    assert len(cut.experiments["s"]) == len(whole.experiments["s"]) - 1001
    assert any("cut short" in p.message for p in cut.problems)


@pytest.fixture(scope="module")
def small_spill(tmp_path_factory) -> bytes:
    """A real spill file's header and first 500 records (two experiments, one with a variable)."""
    tmp_path = tmp_path_factory.mktemp("spill")
    killed(tmp_path, f"for (long i = 0; i < {RECORDS}; i++) {{ {begin('s', 'i')} {end('s')} "
                     f"{begin('t')} {end('t')} }}", {"s": ("s[0] + s[1]*i", ["i"]), "t": ("t[0]", [])})
    (spill,) = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    data = open(spill, "rb").read()
    return data[:data.index(b"#data\n") + 6 + 8 + 500 * 20]


@given(st.data())
def test_a_damaged_spill_file_is_read_or_refused_in_one_message(tmp_path_factory, small_spill, data):
    """Bytes changed anywhere in the header or the first records, or the file cut anywhere:
    llac reads what it can (with problems) or refuses the file with a TraceError."""
    damaged = bytearray(small_spill)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] = data.draw(st.sampled_from([0, 9, 10, 32, 35, 58, 255, ord("x"), ord("1")]))
    damaged = damaged[:data.draw(st.integers(1, len(damaged)))]
    path = tmp_path_factory.getbasetemp() / "damaged.spill"
    path.write_bytes(bytes(damaged))
    try:
        trace = read_spill(str(path))
    except TraceError:
        return
    assert not trace.complete and trace.problems
    for experiment in trace.experiments.values():
        assert set(experiment.columns) >= {"rank", "thread", "time"}


def earlier_then_killed(tmp_path, kill_first: bool = False):
    """A program run twice in one folder: once to its end (it writes prog.cll.1.dat, 5 records)
    and once SIGKILLed after spilling (an argument makes it record RECORDS and wait); the
    killed run first when `kill_first`. Returns the killed run's spill files."""
    body = (f"long n = argc > 1 ? {RECORDS} : 5; for (long i = 0; i < n; i++) {{ {begin('s', 'i')} {end('s')} }} "
            'if (argc > 1) { puts("ready"); fflush(stdout); for (;;) pause(); } return 0;')
    exe = build(tmp_path, {"prog.c": c_program({"s": ("s[0] + s[1]*i", ["i"])}, body,
                                               prelude="#include <unistd.h>")})
    def to_end():
        subprocess.run([str(exe)], cwd=tmp_path, check=True, timeout=60)
    def to_kill():
        process = subprocess.Popen([str(exe), "wait"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline() == "ready\n"
        process.kill()
        process.wait(timeout=30)
    first, second = (to_kill, to_end) if kill_first else (to_end, to_kill)
    first()
    second()
    spills = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    assert len(spills) == 1 and (tmp_path / "prog.cll.1.dat").exists()
    return spills


def test_a_trace_with_a_later_killed_runs_spill_files_beside_it_says_it_is_the_earlier_run(tmp_path):
    [spill] = earlier_then_killed(tmp_path)
    result = llac(tmp_path, 'load "prog.cll.1.dat"; list')
    assert result.returncode == 0, result.stderr
    assert "created s: 5 records" in result.stdout          # the trace is still what load reads
    name = spill.rsplit("/", 1)[-1]
    assert (f'warning: prog.cll.1.dat is an earlier run\'s: spill files next to it are newer, the records of '
            f'a later run killed before it wrote its trace; load "{name}" reads them') in result.stderr
    later = llac(tmp_path, f'load "{name}"; list')          # as the warning says
    assert later.returncode == 0 and f"created s: {len(read_spill(spill).experiments['s'])} records" in later.stdout


def test_spill_files_older_than_the_trace_are_an_earlier_killed_runs_and_pass_without_a_word(tmp_path):
    earlier_then_killed(tmp_path, kill_first=True)
    result = llac(tmp_path, 'load "prog.cll.1.dat"')
    assert result.returncode == 0 and "spill" not in result.stderr, result.stderr


def test_a_glob_takes_the_spill_files_of_a_trace_it_would_match_that_was_never_written(tmp_path):
    [spill] = earlier_then_killed(tmp_path)
    (tmp_path / "prog.cll.1.dat").rename(tmp_path / "prog.cll.2.dat")     # P = 2 finished, P = 1 was killed
    spilled = len(read_spill(spill).experiments["s"])
    result = llac(tmp_path, 'load "prog.cll.*.dat"; describe s')
    assert result.returncode == 0, result.stderr
    assert "that did not finish" in result.stderr and f"{spilled + 5} records" in result.stdout
    (tmp_path / "prog.cll.2.dat").unlink()                                 # only the killed run's records
    alone = llac(tmp_path, 'load "prog.cll.*.dat"; list')
    assert alone.returncode == 0 and f"created s: {spilled} records" in alone.stdout, alone.stderr
    none = llac(tmp_path, 'load "other.cll.*.dat"')
    assert none.returncode == 1 and "no file matches 'other.cll.*.dat'" in none.stderr


KILLED_PROGRAM = """#include <signal.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int N, n = atoi(argv[1]);
    volatile double x = 0;
#pragma cll for(N = 1; N <= n; N++)
    #pragma cll f f[0] + f[1]*N
    x += N;
    #pragma cll end f
#pragma cll end for
    raise(SIGKILL);
#pragma cll report all
    return 0;
}
"""


def test_call_run_says_where_a_killed_runs_spilled_records_are_and_llac_reads_them_so(tmp_path):
    (tmp_path / "prog.c").write_text(KILLED_PROGRAM)
    run = subprocess.run([sys.executable, "-m", "call", "run", "prog.c", "--", str(RECORDS)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    [spill] = spill_files_for(str(tmp_path / "prog.cll.1.dat"))
    name = spill.rsplit("/", 1)[-1]
    assert run.returncode == 128 + signal.SIGKILL
    assert (f"prog.c: the program was killed by SIGKILL; the records it had spilled to disk are in {name} "
            f"(those still in its memory were lost): llac's load \"prog.cll.1.dat\" reads them") in run.stderr
    loaded = llac(tmp_path, 'load "prog.cll.1.dat"; list')          # as call run says
    assert loaded.returncode == 0 and f"created f: {len(read_spill(spill).experiments['f'])} records" in loaded.stdout
