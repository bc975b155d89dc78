"""The runtime as generated code drives it: hand-written C programs shaped like `call`'s
output, built with gcc against libcllrt.a, run, and their trace files checked."""
import re

import pytest

from support.runtime import begin, build, c_program, end, read_trace, run

LOOP = {"f": ("f[0] + f[1]*N", ["N"]), "g": ("g[0] + g[1]*N*M", ["N", "M"])}


def loop_program(tail: str = "cll_report(0, 0); return 0;") -> str:
    """f around each of 5 sizes, g nested inside f with a second variable."""
    return c_program(LOOP, f"""
        volatile double s = 0;
        for (int N = 1; N <= 5; N++) {{
            {begin("f", "N")}
            for (int i = 0; i < N * 1000; i++) s += i;
            {begin("g", "N", "N * 0.5")}
            s += 1;
            {end("g", 20)}
            {end("f", 21)}
        }}
        {tail}""")


def test_counts_values_and_header(tmp_path):
    exe = build(tmp_path, {"prog.c": loop_program()})
    result = run(exe)
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.ended
    h = trace.header
    assert h["program"] == "prog" and h["source"] == "prog.c" and h["status"] == "complete"
    assert h["parallel"] == "none" and h["procs"] == "1"
    assert h["timer"] in ("tsc", "monotonic")
    assert 0 < float(h["timer_resolution"]) <= 1e-9
    assert 0 < float(h["overhead"]) < 1e-5
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", h["date"])
    f, g = trace.experiments["f"], trace.experiments["g"]
    assert f == {"formula": "f[0] + f[1]*N", "source": "prog.c:10:1",
                 "columns": "rank thread time N", "records": "5"}
    assert g["columns"] == "rank thread time N M" and g["records"] == "5"
    assert [r[3] for r in trace.records["f"]] == ["1", "2", "3", "4", "5"]
    assert [float(r[4]) for r in trace.records["g"]] == [0.5, 1.0, 1.5, 2.0, 2.5]
    assert all(r[:2] == ["0", "0"] for r in trace.records["f"])
    f_times = [float(r[2]) for r in trace.records["f"]]
    g_times = [float(r[2]) for r in trace.records["g"]]
    # f encloses g and a loop growing with N
    assert all(ft > gt > 0 for ft, gt in zip(f_times, g_times))
    assert f_times[-1] > f_times[0]


def test_report_of_named_experiments_only(tmp_path):
    src = loop_program('const char *const only[] = {"g"}; cll_report(only, 1); return 0;')
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert list(trace.experiments) == ["g"] and len(trace.records["g"]) == 5


def test_recursion_nests_to_any_depth(tmp_path):
    src = c_program({"r": ("r[0] + r[1]*n", ["n"])}, "rec(999); cll_report(0, 0); return 0;",
                    functions=f"""
        static void rec(int n) {{
            {begin("r", "n")}
            if (n > 0) rec(n - 1);
            {end("r", 30)}
        }}""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    records = read_trace(tmp_path / "prog.cll.1.dat").records["r"]
    assert [int(r[3]) for r in records] == list(range(1000))   # innermost ends first
    times = [float(r[2]) for r in records]
    assert times == sorted(times)


@pytest.mark.parametrize("ending, status", [("return 0;", "exit-without-report"), ("return 3;", "exit with status 3"),
                                            ("quick_exit(3);", "quick_exit")])
def test_exit_without_report_still_writes_the_trace(tmp_path, ending, status):
    result = run(build(tmp_path, {"prog.c": loop_program(ending)}))
    assert result.returncode == int(ending.rstrip(";)").split()[-1].split("(")[-1])   # quick_exit: review 41
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == status and trace.ended
    assert len(trace.records["f"]) == 5


def test_segfault_leaves_the_records_measured_before_it(tmp_path):
    src = loop_program("volatile int *p = 0; *p = 1; return 0;")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == -11    # killed by SIGSEGV, as without the runtime
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "signal SIGSEGV" and trace.ended
    assert len(trace.records["f"]) == 5 and len(trace.records["g"]) == 5
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_sigterm_writes_trace_with_open_experiment(tmp_path):
    src = c_program(LOOP, f"""{begin("f", "7")} raise(SIGTERM); return 0;""",
                    prelude="#include <signal.h>")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == -15
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "signal SIGTERM"
    assert trace.header["open"] == "f (thread 0, begun at prog.c:10:1)"


def test_mismatched_end_is_one_clear_error_exit_70(tmp_path):
    src = c_program(LOOP, f"""
        {begin("f", "1")} {end("f", 20)}
        {begin("f", "2")} {end("g", 42)}
        cll_report(0, 0); return 0;""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 70
    message = ("prog.c:42:1: error: end of 'g' at prog.c:42:1 does not match the open "
               "experiment 'f' (begun at prog.c:10:1)")
    assert result.stderr.strip() == message
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "error: " + message.split("error: ", 1)[1]
    assert [r[3] for r in trace.records["f"]] == ["1"]


def test_end_without_begin_is_an_error(tmp_path):
    result = run(build(tmp_path, {"prog.c": c_program(LOOP, f"{end('g', 5)} return 0;")}))
    assert result.returncode == 70
    assert result.stderr.strip() == ("prog.c:5:1: error: end of 'g' at prog.c:5:1 but no "
                                     "experiment is open")


def test_open_at_exit_is_reported_not_dropped(tmp_path):
    src = c_program(LOOP, f"""{begin("f", "1")} {end("f")} {begin("f", "2")} return 0;""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0
    assert "experiment 'f' (begun at prog.c:10:1) still open at exit in thread 0" in result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["open"] == "f (thread 0, begun at prog.c:10:1)"
    assert len(trace.records["f"]) == 1


@pytest.mark.parametrize("timer", ["tsc", "monotonic"])
def test_env_chooses_timer_and_trace_path(tmp_path, timer):
    exe = build(tmp_path, {"prog.c": loop_program()})
    (tmp_path / "out").mkdir()
    result = run(exe, {"CLL_TIMER": timer, "CLL_TRACE": "out/t.dat"})
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "prog.cll.1.dat").exists()
    trace = read_trace(tmp_path / "out" / "t.dat")
    assert trace.header["timer"] == timer
    resolution = float(trace.header["timer_resolution"])
    assert resolution == 1e-9 if timer == "monotonic" else resolution < 1e-9
    times = [float(r[2]) for r in trace.records["f"]]
    assert all(1e-8 < t < 0.1 for t in times)


def test_bad_timer_name_is_one_clear_error(tmp_path):
    result = run(build(tmp_path, {"prog.c": loop_program()}), {"CLL_TIMER": "rdtsc"})
    assert result.returncode == 70
    assert result.stderr.strip() == "cll: error: CLL_TIMER must be 'tsc' or 'monotonic', not 'rdtsc'"


def test_unwritable_trace_path_is_one_clear_error(tmp_path):
    result = run(build(tmp_path, {"prog.c": loop_program()}), {"CLL_TRACE": "nodir/t.dat"})
    assert result.returncode == 70
    assert result.stderr.strip() == (f"cll: error: cannot write trace {tmp_path}/nodir/t.dat: "
                                     "No such file or directory (its folder, checked at start-up: "
                                     "nothing was measured)")


def _unit(name: str, formula: str, fn: str) -> str:
    """A second translation unit registering experiment `name` and timing it in `fn`."""
    return c_program({name: (formula, ["N"])}, "", source=f"{fn}.c", functions=f"""
        void {fn}(int N) {{ {begin(name, "N")} {end(name)} }}""").split("int main(")[0]


def test_translation_units_merge_same_experiment(tmp_path):
    main = c_program(LOOP, f"""other(5); {begin("f", "1")} {end("f")}
                     cll_report(0, 0); return 0;""", prelude="void other(int);")
    sources = {"prog.c": main, "other.c": _unit("f", "f[0] + f[1]*N", "other")}
    result = run(build(tmp_path, sources))
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["source"] in ("prog.c,other.c", "other.c,prog.c")
    assert sorted(r[3] for r in trace.records["f"]) == ["1", "5"]
    assert trace.experiments["f"]["records"] == "2"


def test_one_name_two_formulas_is_fatal_naming_both(tmp_path):
    main = c_program(LOOP, "other(5); return 0;", prelude="void other(int);")
    sources = {"prog.c": main, "other.c": _unit("f", "f[0]*N", "other")}
    result = run(build(tmp_path, sources))
    assert result.returncode == 70
    assert "experiment 'f' has two formulas" in result.stderr
    assert "'f[0] + f[1]*N' at prog.c:10:1" in result.stderr
    assert "'f[0]*N' at other.c:10:1" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_forked_child_leaves_the_parents_trace_alone(tmp_path):
    src = c_program(LOOP, f"""
        {begin("f", "1")} {end("f")}
        pid_t pid = fork();
        if (pid == 0) {{ {begin("f", "2")} {end("f")} exit(0); }}
        waitpid(pid, 0, 0);
        puts(access("prog.cll.1.dat", F_OK) ? "no trace yet" : "child wrote a trace");
        {begin("f", "3")} {end("f")}
        return 0;""", prelude="#include <unistd.h>\n#include <sys/wait.h>")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no trace yet\n"
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert [r[3] for r in trace.records["f"]] == ["1", "3"]


def test_unregistered_experiment_is_one_clear_error(tmp_path):
    src = c_program(LOOP, f"{begin('h')} {end('h')} return 0;", prelude=(
        'static cll_experiment cll_exp_h = {"h", "h[0]", "prog.c:3:1", 0, 0, -1, 0};'))
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 70
    assert result.stderr.strip() == ("prog.c:3:1: error: experiment 'h' begins but was never "
                                     "registered (cll_register)")
