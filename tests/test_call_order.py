"""The measurement order of sampling loops (docs/pragma-language.md, Measurement order): the
warning about a repetition loop inside a size sweep, the samples' order, and `shuffle`, its
rules and its real runs (gcc, the runtime, the trace)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from call.check import check_file
from call.diagnostics import CallError
from call.order import Header, read_header
from test_call_samples import records

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted((REPO / "samples").glob("*/*.c"))
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def program(*lines, head="    int N = 4, M = 2, rep = 0, k = 0, x = 0;\n"):
    return "int main(void) {\n" + head + "".join(f"    {l}\n" for l in lines) + "    return x;\n}\n"


def loop(header):
    """`#pragma cll for(HEADER)`; a HEADER ending in `) shuffle` carries the clause."""
    inside, _, clause = header.partition(") ")
    return f"#pragma cll for({inside}) {clause}".rstrip()


def nest(outer, inner, formula="f[0] + f[1]*N", body="x++;"):
    return program(loop(outer), loop(inner),
                   f"#pragma cll f {formula}", body, "#pragma cll end f",
                   "#pragma cll end for", "#pragma cll end for")


def warnings(text):
    return [w.render(text.splitlines()) for w in check_file("prog.c", text).warnings]


def errors(text):
    with pytest.raises(CallError) as caught:
        check_file("prog.c", text)
    return caught.value.render()


# ---------------------------------------------------------------- the warning

def test_repetitions_inside_a_sweep_warn_at_the_inner_loop_with_a_note_at_the_sweep():
    found = warnings(nest("N = 1; N < 64; N *= 2", "rep = 0; rep < 3; rep++"))
    assert len(found) == 1
    assert found[0].startswith("prog.c:4:5: warning: repetition loop 'rep' runs inside the sweep "
                               "of 'N': a co-runner starting mid-sweep slows every later size; put "
                               "'#pragma cll for(rep ...)' outermost or add 'shuffle' "
                               "(docs/pragma-language.md, Measurement order)\n")
    assert "    ^\nprog.c:3:5: note: the sweep of 'N' is here\n    #pragma cll for(N" in found[0]


@pytest.mark.parametrize("outer, inner, formula", [
    ("rep = 0; rep < 3; rep++", "N = 1; N < 64; N *= 2", "f[0] + f[1]*N"),     # repetitions outermost
    ("N = 1; N < 64; N *= 2", "M = 1; M < 8; M++", "f[0] + f[1]*N*M"),          # two sweeps
    ("rep = 0; rep < 3; rep++", "k = 0; k < 3; k++", "f[0] + f[1]*N"),          # no sweep at all
    ("N = 1; N < 64; N *= 2", "rep = 0; rep < 3; rep++", "f[0] + f[1]*M"),      # N is not modeled
])
def test_no_warning_unless_repetitions_run_inside_a_sweep_of_their_formula(outer, inner, formula):
    assert warnings(nest(outer, inner, formula)) == []


def test_declared_struct_and_comma_headers_count_as_loop_variables():
    text = program("struct { int n; } s = {1};", "#pragma cll for(s.n = 1; s.n < 9; s.n *= 2)",
                   "#pragma cll for(int r = 0, q = 1; r < 3; r++, q++)",
                   "#pragma cll f f[0] + f[1]*s.n", "x++;", "#pragma cll end f",
                   "#pragma cll end for", "#pragma cll end for")
    assert "repetition loop 'r' runs inside the sweep of 's.n'" in warnings(text)[0]
    assert read_header("int r = 0, q = f(1, 2); r < 3; ++r, q += 2") == Header(("r", "q"), ("r", "q"), ())
    assert read_header("p -> n = 1, k = 0; ; p->n <<= 1, k--") == Header(("p->n", "k"), (), ())
    assert read_header("N = 1; ; N = M++, k = (N == 2)") == Header(("N", "k"), (), ("N = M++",))


def test_a_loop_without_experiments_inside_is_no_repetition_loop():
    text = program("#pragma cll for(N = 1; N < 64; N *= 2)", "#pragma cll f f[0] + f[1]*N",
                   "#pragma cll for(rep = 0; rep < 3; rep++)", "x++;", "#pragma cll end for",
                   "#pragma cll end f", "#pragma cll end for")
    assert warnings(text) == []


def test_shuffle_silences_the_warning_only_for_loops_of_its_nest():
    shuffled = program("#pragma cll for(N = 1; N < 64; N *= 2) shuffle",
                       "#pragma cll for(rep = 0; rep < 3; rep++)", "#pragma cll f f[0] + f[1]*N",
                       "x++;", "#pragma cll end f", "#pragma cll end for", "#pragma cll end for")
    assert warnings(shuffled) == []
    apart = shuffled.replace("shuffle\n", "shuffle\n    x++;\n", 1).replace(
        "#pragma cll end for\n    #pragma cll end for", "#pragma cll end for\n    x++;\n    #pragma cll end for")
    assert "repetition loop 'rep' runs inside the sweep of 'N'" in warnings(apart)[0]
    inner = nest("N = 1; N < 64; N *= 2", "rep = 0; rep < 3; rep++) shuffle")   # reps of one N
    assert "repetition loop 'rep' runs inside the sweep of 'N'" in warnings(inner)[0]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_samples_put_their_repetitions_outermost(sample):
    text = sample.read_text()
    assert warnings(text) == []
    loops = [line for line in text.splitlines() if "#pragma cll for(" in line]
    assert "for(rep" in loops[0] and all("for(N" in loop for loop in loops[1:])   # fig1_pub: reps only


def test_call_check_prints_the_warning_and_succeeds(tmp_path):
    (tmp_path / "prog.c").write_text(nest("N = 1; N < 64; N *= 2", "rep = 0; rep < 3; rep++"))
    done = subprocess.run([sys.executable, "-m", "call", "check", "prog.c"], cwd=tmp_path,
                          env=ENV, capture_output=True, text=True)
    assert done.returncode == 0 and "prog.c:4:5: warning: repetition loop 'rep'" in done.stderr


def test_call_check_of_several_files_reports_every_files_errors_and_warnings(tmp_path):
    """A review: `call check warn.c bad.c bad2.c` stopped at bad.c's error; warn.c's warning
    and bad2.c's errors were never printed."""
    (tmp_path / "warn.c").write_text(nest("N = 1; N < 64; N *= 2", "rep = 0; rep < 3; rep++"))
    (tmp_path / "bad.c").write_text("int main(void) {\n#pragma cll e e[0] +\n    return 0;\n}\n")
    (tmp_path / "bad2.c").write_text("int main(void) {\n#pragma cll end q\n    return 0;\n}\n")
    done = subprocess.run([sys.executable, "-m", "call", "check", "warn.c", "bad.c", "bad2.c"], cwd=tmp_path,
                          env=ENV, capture_output=True, text=True)
    said = [line for line in done.stderr.splitlines() if ": warning: " in line or ": error: " in line]
    assert done.returncode == 1 and [line.split(": ")[0] for line in said] == ["warn.c:4:5", "bad.c:2:21", "bad2.c:2:1"], \
        done.stderr


# ---------------------------------------------------------------- shuffle: the rules

SHUFFLE_ERRORS = [
    (nest("int n = 1; n < 64; n *= 2) shuffle", "rep = 0; rep < 3; rep++"),
     "prog.c:3:5: error: 'shuffle' cannot restore 'n', which this header declares"),
    (nest("N = 1; N < 64; N *= 2) shuffle", "rep = 0; rep < 3; k = rep++"),
     "prog.c:4:5: error: 'shuffle' needs headers that only assign their loop variables "
     "(N = ..., N *= 2, rep++): 'k = rep++' is neither"),
    (nest("N = 1; N < 64; N *= 2) shuffle", "rep = 0; rep < 3; next(&rep)"),
     "'next(&rep)' is neither"),
    (nest("; N < 64;) shuffle", "rep = 0; rep < 3; rep++"), "this one assigns none"),
    (program("#pragma cll for(N = 1; N < 64; N *= 2) shuffle", "#pragma cll for(rep = 0; rep < 3; rep++)",
             "x++;", "#pragma cll end for", "x--;", "#pragma cll end for"),
     "prog.c:8:5: error: 'shuffle' needs a perfect nest: code stands between this 'end for'"),
    (program("for (k = 0; k < 2; k++) {", "#pragma cll for(N = 1; N < 64; N *= 2) shuffle",
             "if (N > x) break;", "#pragma cll end for", "}"),
     "prog.c:5:16: error: 'break' leaves a shuffled nest of sampling loops for a loop outside it"),
]


@pytest.mark.parametrize("text, message", SHUFFLE_ERRORS)
def test_shuffle_misuse_is_one_clear_error(text, message):
    assert message in errors(text)


def test_a_break_inside_the_body_that_stays_inside_is_fine():
    text = program("#pragma cll for(N = 1; N < 64; N *= 2) shuffle",
                   "for (k = 0; k < 9; k++) { if (k > N) break; }", "#pragma cll end for")
    assert check_file("prog.c", text).nests


@pytest.mark.parametrize("clause, message", [
    ("shufle", "prog.c:3:44: error: unexpected 'shufle' after the 'for' header: only the clause "
               "'shuffle' may follow it (did you mean 'shuffle'?)"),
    ("shuffle x", "prog.c:3:52: error: unexpected 'x' after the 'for' header: only the clause "
                  "'shuffle' may follow it\n"),
])
def test_junk_after_a_for_header_is_a_syntax_error(clause, message):
    assert message in errors(program(f"#pragma cll for(N = 1; N < 64; N *= 2) {clause}",
                                     "#pragma cll end for"))


# ---------------------------------------------------------------- shuffle: real runs

SWEEP = """#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long N = argc > 1 ? atol(argv[1]) : 3;
    int rep = 0;
    double scale = 0, sum = 0;
    #pragma cll for(rep = 0; rep < 4; rep++) CLAUSE
    #pragma cll for(N = 3, scale = 0.5; N <= 3000; N = N * 3 / 2, scale += 0.25) INNER
    #pragma cll f f[0] + f[1]*N + f[2]*scale
    for (long i = 0; i < N; i++)
        sum += (double)i * scale;
    #pragma cll end f
    #pragma cll end for
    #pragma cll end for
    printf("N = %ld, rep = %d, scale = %g, sum = %.1f\\n", N, rep, scale, sum);
    #pragma cll report all
    return 0;
}
"""


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The sweep built by `call cc` with and without `shuffle`: (directory, executable) each."""
    work = tmp_path_factory.mktemp("shuffle")
    built = {}
    for name, clause, inner in (("plain_order", "", ""), ("shuffled", "shuffle", ""),
                                ("rounds", "", "shuffle")):
        (work / f"{name}.c").write_text(SWEEP.replace("CLAUSE", clause).replace("INNER", inner))
        done = subprocess.run([sys.executable, "-m", "call", "cc", "-O2", "-Wall", "-Werror",
                               f"{name}.c", "-o", name], cwd=work, env=ENV, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        built[name] = work / name
    return work, built


def run(work, executable, seed=None):
    """Run a build; (stdout, the (rep-free) records of f as (N, scale) in trace order)."""
    env = dict(os.environ)
    env.pop("CLL_SHUFFLE_SEED", None)
    if seed is not None:
        env["CLL_SHUFFLE_SEED"] = seed
    done = subprocess.run([str(executable)], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = records(work / f"{executable.name}.cll.1.dat")["f"]
    return done.stdout, [(float(r[3]), float(r[4])) for r in rows]


def test_shuffle_runs_the_same_records_in_another_order_and_ends_as_the_plain_loops(builds):
    work, built = builds
    plain_out, plain = run(work, built["plain_order"])
    out, shuffled = run(work, built["shuffled"])
    assert len(plain) == 4 * 18 and sorted(shuffled) == sorted(plain)   # complete, same points
    assert shuffled != plain
    assert out == plain_out          # the variables after the nest: as the headers left them
    assert out.startswith("N = 3597, rep = 4, scale = 5,")
    # the repetitions of a size are spread over the run, not four in a row
    first = [i for i, (n, _) in enumerate(shuffled) if n == 3.0]
    assert first[-1] - first[0] > 10


def test_the_seed_fixes_the_order_and_the_environment_changes_it(builds):
    work, built = builds
    default = run(work, built["shuffled"])[1]
    assert run(work, built["shuffled"])[1] == default == run(work, built["shuffled"], seed="1")[1]
    other = run(work, built["shuffled"], seed="12345")[1]
    assert other != default and sorted(other) == sorted(default)
    assert run(work, built["shuffled"], seed="12345")[1] == other


def test_shuffle_on_the_sweep_inside_the_repetitions_shuffles_each_round_anew(builds):
    work, built = builds
    out, rounds = run(work, built["rounds"])
    plain_out, plain = run(work, built["plain_order"])
    assert out == plain_out and len(rounds) == len(plain) == 4 * 18
    blocks = [rounds[18 * r:18 * (r + 1)] for r in range(4)]
    assert all(sorted(block) == sorted(plain[:18]) for block in blocks)   # every size once a round
    assert len({tuple(block) for block in blocks}) == 4                    # a new order each round
    assert warnings((work / "rounds.c").read_text()) == []


@pytest.mark.parametrize("seed", ["-3", "12x", "18446744073709551616", "99999999999999999999999"])
def test_a_malformed_seed_stops_the_program_with_one_message(builds, seed):
    """Review 21: a seed above 2^64-1 was silently clamped to it."""
    work, built = builds
    done = subprocess.run([str(built["shuffled"])], cwd=work, capture_output=True, text=True,
                          env=dict(os.environ, CLL_SHUFFLE_SEED=seed))
    assert done.returncode == 2
    assert done.stderr == (f"cll: CLL_SHUFFLE_SEED={seed} is not a decimal unsigned integer from 0 "
                           f"to 18446744073709551615\n")


def test_the_plain_program_ignores_shuffle(builds, tmp_path):
    work, _ = builds
    shutil.copy(work / "shuffled.c", tmp_path / "plain.c")
    subprocess.run(["gcc", "plain.c", "-o", "plain"], cwd=tmp_path, check=True, capture_output=True)
    done = subprocess.run(["./plain"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout == "N = 3, rep = 0, scale = 0, sum = 0.0\n"
