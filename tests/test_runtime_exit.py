"""How a run ends, as `call run` and `llac` see it: records measured after the last `report`
are not lost, an exit status other than 0 marks the trace (and the .previous rule keeps the
complete trace of the run before), and a trace folder that cannot be written stops the
program before it measures anything. Real gcc builds through `call run`."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in dict(os.environ, PYTHONPATH=str(REPO)).items() if not k.startswith("CLL_")}

# f and g over four sizes, `report all`, then f again over the same sizes; `exit1` as the
# argument makes the second sweep end the program with exit(1) at N = 4000, inside f
PROGRAM = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static double work(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
int main(int argc, char **argv) {
    int N = 0, failing = argc > 1 && !strcmp(argv[1], "exit1");
    double s = 0;
    #pragma cll for(N = 1000; N <= 8000; N *= 2)
    #pragma cll f f[0] + f[1]*N
    s += work(N);
    #pragma cll end f
    #pragma cll g g[0] + g[1]*N
    s += work(N);
    #pragma cll end g
    #pragma cll end for
    #pragma cll report all
    #pragma cll for(N = 1000; N <= 8000; N *= 2)
    #pragma cll f f[0] + f[1]*N
    s += work(N);
    if (failing && N == 4000) exit(1);
    #pragma cll end f
    #pragma cll end for
    printf("%g\n", s);
    return 0;
}
"""


def call_run(folder: Path, *arguments: str, env: dict = ENV) -> subprocess.CompletedProcess:
    """`call run prog.c [-- ARGUMENTS]` in `folder`; never a traceback."""
    extra = ["--", *arguments] if arguments else []
    done = subprocess.run([sys.executable, "-m", "call", "run", "prog.c", *extra], cwd=folder,
                          env=env, capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done


def header_and_counts(path: Path) -> tuple[dict, dict]:
    """A trace's header fields and its record count per experiment."""
    header, counts = {}, {}
    for line in path.read_text().splitlines():
        if line.startswith("#") and ": " in line and not line.startswith("#  "):
            key, value = line[1:].split(": ", 1)
            header[key] = value
        elif line and not line.startswith("#"):
            name = line.split()[0]
            counts[name] = counts.get(name, 0) + 1
    return header, counts


def test_records_measured_after_the_last_report_are_written_at_exit(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM)
    done = call_run(tmp_path)
    assert done.returncode == 0, done.stderr
    header, counts = header_and_counts(tmp_path / "prog.cll.1.dat")
    # the report wrote 4 f and 4 g; the 4 f after it were lost at exit before
    assert header["status"] == "complete" and counts == {"f": 8, "g": 4}


def test_an_exit_status_marks_the_trace_and_two_failed_reruns_keep_the_complete_one(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM)
    assert call_run(tmp_path).returncode == 0
    trace, previous = tmp_path / "prog.cll.1.dat", tmp_path / "prog.cll.1.dat.previous"
    for _ in range(2):
        done = call_run(tmp_path, "exit1")
        assert done.returncode == 1
        assert "(status: exit with status 1)" in done.stderr and "normal end" not in done.stderr
    header, counts = header_and_counts(trace)
    assert header["status"] == "exit with status 1" and counts == {"f": 6, "g": 4}
    assert header["open"].startswith("f (thread 0")
    kept_header, kept_counts = header_and_counts(previous)     # the complete run's, both times
    assert kept_header["status"] == "complete" and kept_counts == {"f": 8, "g": 4}
    loaded = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "prog.cll.1.dat"'], cwd=tmp_path,
                            env=ENV, capture_output=True, text=True)
    assert "the program did not finish normally (status: exit with status 1)" in loaded.stderr + loaded.stdout


def test_a_trace_folder_that_cannot_be_written_stops_the_program_before_it_measures(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM)
    missing = tmp_path / "no" / "such" / "x.dat"
    done = call_run(tmp_path, env=dict(ENV, CLL_TRACE=str(missing)))
    assert done.returncode == 70
    assert (f"cll: error: cannot write trace {missing}: No such file or directory (its folder, checked "
            f"at start-up: nothing was measured)") in done.stderr
    assert done.stdout == ""            # main never ran: the sweep's sum is not printed
