"""The runtime's stack of open experiments, where experiments with different numbers of
variables nest: each frame's variables come back in its own record, the stack grows past its
first allocation, an experiment ended from another translation unit closes the right frame,
and the open ones are listed outermost first."""
from support.runtime import begin, build, c_program, end, read_trace, run

MIXED = {"z": ("z[0]", []), "a": ("a[0] + a[1]*N", ["N"]),
         "w": ("w[0] + w[1]*N*M*K*L*Q", ["N", "M", "K", "L", "Q"])}


def test_mixed_sizes_nest_deeply_and_keep_their_values(tmp_path):
    # 300 levels of w(5 variables) > a(1) > z(0): far more than the first allocation
    src = c_program(MIXED, "rec(299); cll_report(0, 0); return 0;", functions=f"""
        static void rec(int n) {{
            {begin("w", "n", "n + 1", "n + 2", "n + 3", "n + 4")}
            {begin("a", "-n")}
            {begin("z")}
            if (n > 0) rec(n - 1);
            {end("z", 30)}
            {end("a", 31)}
            {end("w", 32)}
        }}""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert len(trace.records["z"]) == 300
    assert [float(r[3]) for r in trace.records["a"]] == [-n for n in range(300)]
    assert [[float(v) for v in r[3:]] for r in trace.records["w"]] == [
        [n, n + 1, n + 2, n + 3, n + 4] for n in range(300)]
    w_times = [float(r[2]) for r in trace.records["w"]]
    a_times = [float(r[2]) for r in trace.records["a"]]
    assert all(wt > at > 0 for wt, at in zip(w_times, a_times))


def test_open_experiments_listed_outermost_first(tmp_path):
    src = c_program(MIXED, f"""
        {begin("a", "1")} {begin("w", "1", "2", "3", "4", "5")} {begin("z")}
        {begin("a", "2")} {end("a")}
        cll_report(0, 0); return 0;""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["open"] == ("a (thread 0, begun at prog.c:11:1), "
                                    "w (thread 0, begun at prog.c:12:1), "
                                    "z (thread 0, begun at prog.c:10:1)")
    assert [r[3] for r in trace.records["a"]] == ["2"]
    assert result.stderr.count("still open at exit") == 3


def test_mismatch_under_other_sizes_names_the_innermost(tmp_path):
    src = c_program(MIXED, f"""
        {begin("w", "1", "2", "3", "4", "5")} {begin("z")} {end("w", 42)} return 0;""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 70
    assert result.stderr.strip() == ("prog.c:42:1: error: end of 'w' at prog.c:42:1 does not "
                                     "match the open experiment 'z' (begun at prog.c:10:1)")


def test_end_from_another_unit_closes_the_frame_begun_here(tmp_path):
    # other.c's struct for w is another object with the same id: it ends prog.c's frame (in
    # another function, which generated code never does: its frame is given as not known, 0)
    other = c_program({"w": MIXED["w"]}, "", source="other.c", functions="""
        void close_w(void) { cll_end(&cll_exp_w, "prog.c:7:1", 0); }""").split("int main(")[0]
    main = c_program(MIXED, f"""
        {begin("a", "9")} {begin("w", "1", "2", "3", "4", "5")} close_w(); {end("a")}
        cll_report(0, 0); return 0;""", prelude="void close_w(void);")
    result = run(build(tmp_path, {"prog.c": main, "other.c": other}))
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert [r[3:] for r in trace.records["w"]] == [["1", "2", "3", "4", "5"]]
    assert [r[3] for r in trace.records["a"]] == ["9"]
    assert "open" not in trace.header


def test_experiments_left_open_again_and_again_are_counted_in_bounded_memory(tmp_path):
    """Review 21: a `break` out of an experiment in a long loop left one more frame open each
    pass: 80,000 identical stderr lines, a 2.8 MB `#open:` line and a stack that grew without
    bound. Each experiment left open is now reported once with its count, the stack stays
    under its limit (16 MiB; the 1.5 M frames of `a` would take 48 MiB), and every record of
    the experiment that ends is kept."""
    src = c_program(MIXED, f"""
        for (int i = 0; i < 1500000; i++) {{ {begin("a", "i")} {begin("z")} {end("z")} }}
        cll_report(0, 0);
        char line[256]; FILE *status = fopen("/proc/self/status", "r");
        while (fgets(line, sizeof line, status))   /* this program's peak memory, in kB */
            if (strncmp(line, "VmHWM:", 6) == 0) fputs(line + 6, stdout);
        return 0;""", prelude="#include <string.h>")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.split()[0]) < 40000     # kB: the stack stayed bounded
    assert result.stderr.splitlines() == [
        "cll: warning: experiment 'a' (begun at prog.c:11:1) was left open 1500000 times in "
        "thread 0 (a jump out of it skipped its end; those runs have no record)"]
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["open"] == "a (thread 0, begun at prog.c:11:1, 1500000 times)"
    assert len(trace.records["z"]) == 1500000


def test_an_end_in_another_call_than_its_begin_says_so(tmp_path):
    """Generated code begins and ends an experiment in one call of one function; an end in a
    function called inside it (hand-written here) names that, not a mismatch of names."""
    src = c_program(MIXED, f"""
        {begin("a", "9")} end_a(); return 0;""",
                    functions=f"""static __attribute__((noinline)) void end_a(void) {{ {end("a", 7)} }}""")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 70
    assert result.stderr.strip() == (
        "prog.c:7:1: error: end of 'a' at prog.c:7:1 is not in the function call that began the open "
        "'a' (begun at prog.c:11:1): an experiment ends in the call of the function that began it")
