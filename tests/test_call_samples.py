"""End to end: `call cc` / `call run` on the samples with real gcc and the real runtime,
checking the traces, the `#line` mapping, and that the plain C build prints the same."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.generated import compiled_lines

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def call(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "call", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    return done


def records(trace: Path) -> dict[str, list[list[str]]]:
    """Experiment name -> its data lines split into fields, and checks the header counts."""
    text = trace.read_text()
    assert text.startswith("#cll-trace 1\n") and text.rstrip().endswith("#end")
    header, data = text.split("#data\n")
    found: dict[str, list[list[str]]] = {}
    for line in data.splitlines()[:-1]:
        name, *fields = line.split()
        found.setdefault(name, []).append(fields)
    for name, rows in found.items():
        assert f"#experiment: {name}\n" in header
    return found


def plain_output(source: Path, tmp_path: Path, *args) -> str:
    """Build `source` as ordinary C (the pragmas ignored) and return what it prints."""
    exe = tmp_path / "plain"
    subprocess.run(["gcc", "-O2", "-fopenmp", str(source), "-o", str(exe), "-lm"], check=True,
                   capture_output=True)
    return subprocess.run([str(exe), *args], check=True, capture_output=True, text=True).stdout


def test_matinit_run_writes_both_experiments_with_the_swept_sizes(tmp_path):
    source = tmp_path / "matinit.c"
    shutil.copy(SAMPLES / "matinit" / "matinit.c", source)
    done = call("run", "matinit.c", "--", "128", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    trace = tmp_path / "matinit.cll.1.dat"
    assert f"call: trace: {trace}" in done.stderr
    found = records(trace)
    assert set(found) == {"rowinit", "colinit"}
    sizes = [*range(16, 32, 2), *range(32, 64, 4), *range(64, 129, 8)]  # eight per octave
    for rows in found.values():
        assert len(rows) == 5 * len(sizes)
        assert sorted({int(float(r[3])) for r in rows}) == sizes
        assert all(float(r[2]) > 0 for r in rows)
    assert done.stdout == plain_output(source, tmp_path, "128") == "matinit: N = 128, checksum 16384.0\n"


def test_fft_cc_builds_and_traces_n_log_n_sizes(tmp_path):
    source = SAMPLES / "fft" / "fft.c"
    done = call("cc", "-O2", str(source), "-o", "fft", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = subprocess.run(["./fft", "4096"], cwd=tmp_path, capture_output=True, text=True, check=True)
    found = records(tmp_path / "fft.cll.1.dat")
    assert list(found) == ["G"]
    assert sorted({int(float(r[3])) for r in found["G"]}) == [256, 512, 1024, 2048, 4096]
    assert len(found["G"]) == 5 * 5
    assert "#  formula: G[0] + G[1]*N*log(N)\n" in (tmp_path / "fft.cll.1.dat").read_text()
    assert run.stdout == plain_output(source, tmp_path, "4096")


def test_openmp_sample_runs_once_per_thread_count(tmp_path):
    source = tmp_path / "matvec.c"
    shutil.copy(SAMPLES / "omp_matvec" / "matvec.c", source)
    done = call("run", "matvec.c", "--", "256", cwd=tmp_path)  # N = 128, 160, 192, 224, 256
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain_output(source, tmp_path, "256") * 3
    for procs in (1, 2, 4):
        trace = tmp_path / f"matvec.cll.{procs}.dat"
        assert f"call: trace (P={procs}): {trace}" in done.stderr
        found = records(trace)
        assert "#parallel: OpenMP\n#procs: %d\n" % procs in trace.read_text()
        assert len(found["K"]) == 5 * 5 and {r[4] for r in found["K"]} == {f"{procs}"}
        assert sorted({int(float(r[3])) for r in found["K"]}) == [128, 160, 192, 224, 256]
        # R is timed inside the parallel region: one record per thread per repetition
        assert len(found["R"]) == 5 * 5 * procs
        assert {int(r[1]) for r in found["R"]} == set(range(procs))


def test_run_with_procs_option_overrides_the_clause(tmp_path):
    shutil.copy(SAMPLES / "omp_matvec" / "matvec.c", tmp_path / "matvec.c")
    done = call("run", "matvec.c", "--procs", "2:2:2", "--", "128", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.glob("*.dat")] == ["matvec.cll.2.dat"]


def test_openmp_threads_above_the_cores_are_said_and_left_out_with_no_oversubscribe(tmp_path):
    """A review: --procs 1:8:2 ran 4 and 8 threads on 2 cores without a note, and
    --no-oversubscribe was ignored for OpenMP."""
    shutil.copy(SAMPLES / "omp_matvec" / "matvec.c", tmp_path / "matvec.c")
    many = 2 * len(os.sched_getaffinity(0))
    done = call("run", "matvec.c", "--procs", f"1:{many}:{many}", "--", "128", cwd=tmp_path)
    assert done.returncode == 0 and f"call: P={many} > {many // 2} cores: more threads than cores" in done.stderr
    (tmp_path / f"matvec.cll.{many}.dat").unlink()
    done = call("run", "matvec.c", "--procs", f"1:{many}:{many}", "--no-oversubscribe", "--", "128", cwd=tmp_path)
    assert done.returncode == 0 and f"--no-oversubscribe: P={many} left out" in done.stderr, done.stderr
    assert [p.name for p in tmp_path.glob("*.dat")] == ["matvec.cll.1.dat"]


def test_a_report_of_no_experiment_of_the_program_keeps_the_trace(tmp_path):
    """A review: `#pragma cll report nosuch` after `report a` rewrote the trace with no
    experiment and no record, silently."""
    (tmp_path / "rep.c").write_text(
        "int main(void) {\n    int N;\n    for (N = 0; N < 3; N++) {\n        #pragma cll a a[0] + a[1]*N\n"
        "        N += 0;\n        #pragma cll end a\n    }\n    #pragma cll report a\n"
        "    #pragma cll report nosuch\n    #pragma cll report a, other\n    return 0;\n}\n")
    done = call("run", "rep.c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("nosuch", "other"):
        assert f"cll: warning: report names '{name}', which is no experiment of this program" in done.stderr
    assert f"this report names no experiment of the program: {tmp_path / 'rep.cll.1.dat'} is left as it was" \
        in done.stderr
    assert len(records(tmp_path / "rep.cll.1.dat")["a"]) == 3


def test_a_header_of_the_program_named_cll_h_does_not_stand_in_for_the_runtimes(tmp_path):
    """A review: the generated header's `#include "cll.h"` found the program's own cll.h (the
    source's folder is on the quote path) and every build failed."""
    (tmp_path / "cll.h").write_text("#define LOG_LEVEL 2\n")
    (tmp_path / "app.c").write_text('#include "cll.h"\nint main(void) {\n    int n = LOG_LEVEL;\n'
                                    "    #pragma cll a a[0] + a[1]*n\n    n++;\n    #pragma cll end a\n"
                                    "    #pragma cll report all\n    return 0;\n}\n")
    done = call("run", "app.c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r[3] for r in records(tmp_path / "app.cll.1.dat")["a"]] == ["2"]


def test_compiler_errors_point_at_the_original_line(tmp_path):
    (tmp_path / "bad.c").write_text("#include <stdio.h>\nint main(void) {\n    int N = 3;\n"
                                    "    #pragma cll f f[0] + f[1]*N + \\\n        f[2]*N*N\n"
                                    "    printf(\"%d\\n\", N);\n    #pragma cll end f\n"
                                    "    undeclared_thing = 1;\n    return 0;\n}\n")
    done = call("cc", "bad.c", "-o", "bad", cwd=tmp_path)
    assert done.returncode != 0
    assert "bad.c:8:5: error:" in done.stderr and "undeclared_thing" in done.stderr


def test_translate_writes_files_and_program_keeps_behaviour(tmp_path):
    (tmp_path / "p.c").write_text(
        '#include <stdio.h>\nstruct S { int n; };\nint main(void) {\n'
        '    struct S s = {7}; struct S *q = &s; int N = 5; long sum = 0;\n'
        '    #pragma cll f f[0] + f[1]*s.n + f[2]*q->n*N + f[3]*P\n'
        '    for (int i = 0; i < N; i++) sum += i; /* #pragma cll end f */\n'
        '    #pragma cll end f\n    printf("%ld #pragma cll end g\\n", sum);\n'
        '    #pragma cll report f\n    return 0;\n}\n')
    (tmp_path / "out").mkdir()
    done = call("translate", "p.c", "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "p.cll.c").read_text()
    generated = compiled_lines(text)
    assert text.splitlines()[1] == '#line 1 "p.c"' and len(generated) == 11
    assert generated[6].strip() == 'cll_end(&cll_exp_f, "p.c:7:5", CLL_HERE);'
    assert call("cc", "p.c", "-o", "p", cwd=tmp_path).returncode == 0
    run = subprocess.run(["./p"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert run.stdout == "10 #pragma cll end g\n"
    found = records(tmp_path / "p.cll.1.dat")
    assert found["f"] == [["0", "0", found["f"][0][2], "7", "7", "5", "1"]]
    assert "#  columns: rank thread time s.n q->n N P\n" in (tmp_path / "p.cll.1.dat").read_text()


def test_nested_and_recursive_experiments(tmp_path):
    (tmp_path / "r.c").write_text(
        'int fib(int n) {\n    int r;\n    #pragma cll F F[0] + F[1]*n\n'
        '    if (n < 2) { r = n; } else { r = fib(n - 1) + fib(n - 2); }\n'
        '    #pragma cll end F\n    return r;\n}\n'
        'int main(void) {\n    int N = 6;\n    #pragma cll outer outer[0] + outer[1]*N\n'
        '    int v = fib(N);\n    #pragma cll end outer\n    #pragma cll report all\n    return v != 8;\n}\n')
    assert call("cc", "r.c", "-o", "r", cwd=tmp_path).returncode == 0
    subprocess.run(["./r"], cwd=tmp_path, check=True)
    found = records(tmp_path / "r.cll.1.dat")
    assert len(found["outer"]) == 1 and len(found["F"]) == 25  # fib(6) makes 25 calls
