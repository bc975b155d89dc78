"""An experiment that is the whole unbraced body of if/else/for/while/do (the paper's Fig. 5,
lines 45-48): `call` wraps begin, statement and end in braces, so the instrumented program
runs the experiment exactly when the plain one runs the statement. Real gcc builds and runs."""
import pytest

from test_call_diagnostics import call, check, in_main
from support.generated import compiled_lines
from test_call_samples import plain_output, records

CONTROL = """#include <stdio.h>
int main(void) {
    int i = 0, n = 0, hits = 0;
    for (i = 0; i < 3; i++)
        #pragma cll L L[0] + L[1]*i
        hits += i;
        #pragma cll end L
    while (n < 5)
    #pragma cll W W[0] + W[1]*n
    { n++; hits += n; }
    #pragma cll end W
    do
    #pragma cll D D[0]
        n--;
    #pragma cll end D
    while (n > 2);
    if (n == 2)
    #pragma cll T T[0]
        hits += 100;
    #pragma cll end T
    else hits -= 1;
    if (n == 99)
    #pragma cll U U[0]
        hits += 1000;
    #pragma cll end U
    else
    #pragma cll E E[0] + E[1]*n
        ;
    #pragma cll end E
    printf("hits %d n %d\\n", hits, n);
    return 0;
}
"""

# Fig. 5 of the paper, lines 45-48 verbatim, in a sequential program with a real recursive FFT
FIG5 = """#include <math.h>
#include <stdio.h>
typedef struct { double re, im; } Complex;

static void seqDandCFFT(Complex *A, Complex *a, Complex *W, int N, int stride) {
    if (N == 1) { A[0] = a[0]; return; }
    int n = N / 2;
    seqDandCFFT(A, a, W, n, stride * 2);
    seqDandCFFT(A + n, a + stride, W, n, stride * 2);
    for (int k = 0; k < n; k++) {
        Complex w = W[k * stride], b = A[k], c = A[k + n];
        Complex t = {w.re * c.re - w.im * c.im, w.re * c.im + w.im * c.re};
        A[k].re = b.re + t.re; A[k].im = b.im + t.im;
        A[k + n].re = b.re - t.re; A[k + n].im = b.im - t.im;
    }
}

static void fft(Complex *A, Complex *a, Complex *W, int N, int stride, int nprocs) {
    if (nprocs > 1) {
        A[0].re = -1;
        } else
        #pragma cll G G[0] + G[1] * N * log(N)
        seqDandCFFT(A, a, W, N, stride);
        #pragma cll end G
}

int main(void) {
    static Complex A[64], a[64], W[64];
    for (int N = 16; N <= 64; N *= 2) {
        for (int k = 0; k < N; k++) {
            a[k].re = k % 3; a[k].im = 0;
            W[k].re = cos(-2 * M_PI * k / N); W[k].im = sin(-2 * M_PI * k / N);
        }
        fft(A, a, W, N, 1, 1);
        printf("N %d X1 %.3f %.3f\\n", N, A[1].re, A[1].im);
    }
    fft(A, a, W, 64, 1, 2);
    printf("parallel branch %.1f\\n", A[0].re);
    return 0;
}
"""


def run_both(tmp_path, name, text):
    """`call run` the program and build it as plain C; (its records, instrumented output,
    plain output)."""
    source = tmp_path / name
    source.write_text(text)
    done = call("run", name, cwd=tmp_path)
    assert done[0] == 0, done[2]
    trace = tmp_path / name.replace(".c", ".cll.1.dat")
    return records(trace), done[1], plain_output(source, tmp_path)


def test_unbraced_bodies_run_exactly_when_the_plain_program_runs_them(tmp_path):
    found, output, plain = run_both(tmp_path, "control.c", CONTROL)
    assert output == plain == "hits 118 n 2\n"
    counts = {name: len(rows) for name, rows in found.items()}
    # for: 3 iterations; while: 5; do: 3 (n = 5 -> 2); if taken once; if not taken: never,
    # its else once
    assert counts == {"L": 3, "W": 5, "D": 3, "T": 1, "E": 1}
    assert [float(r[3]) for r in found["L"]] == [0, 1, 2]      # rank thread time i
    assert [float(r[3]) for r in found["W"]] == [0, 1, 2, 3, 4]
    header = (tmp_path / "control.cll.1.dat").read_text()
    assert "#experiment: U\n" in header and "#  records: 0\n" in header


def test_fig5_fragment_as_printed_times_the_sequential_branch(tmp_path):
    found, output, plain = run_both(tmp_path, "fig5.c", FIG5)
    assert output == plain and "parallel branch -1.0" in output
    assert set(found) == {"G"}
    assert [float(r[3]) for r in found["G"]] == [16, 32, 64]  # not the nprocs = 2 call


def test_translation_keeps_every_line_and_braces_the_body(tmp_path):
    (tmp_path / "fig5.c").write_text(FIG5)
    status, _, err = call("translate", "fig5.c", cwd=tmp_path)
    assert status == 0, err
    original = FIG5.splitlines()
    body = compiled_lines((tmp_path / "fig5.cll.c").read_text())
    assert len(body) == len(original)
    line = original.index("        } else")
    assert body[line] == "        } else"
    assert body[line + 1].startswith("        { { double cll_v[] = {(double)(N)}; cll_begin(&cll_exp_G")
    assert body[line + 2] == original[line + 2]
    assert body[line + 3] == '        cll_end(&cll_exp_G, "fig5.c:24:9", CLL_HERE); }'


def test_compiler_errors_in_a_wrapped_statement_point_at_the_original_line(tmp_path):
    (tmp_path / "bad.c").write_text(in_main("if (x)", "#pragma cll f f[0]", "x += undeclared;",
                                            "#pragma cll end f"))
    status, _, err = call("cc", "bad.c", "-o", "bad", cwd=tmp_path)
    assert status != 0
    assert "bad.c:5:10: error:" in err and "undeclared" in err


@pytest.mark.parametrize("lines, line, column, words", [
    (("if (x)", "#pragma cll f f[0]", "x++;", "x--;", "#pragma cll end f"), 6, 5,
     "only one statement may stand between '#pragma cll f' and '#pragma cll end f' here: "
     "the experiment is the body of 'if (...)' without braces"),
    (("if (x) x++; else", "#pragma cll f f[0]", "if (N) x--;", "#pragma cll end f"), 5, 5,
     "is the body of 'else' without braces and encloses a nested 'if' statement"),
    (("while (x)", "#pragma cll f f[0]", "#pragma cll end f"), 5, 5,
     "'#pragma cll end' before the statement of experiment 'f'"),
    (("do", "#pragma cll f f[0]", "{ x++;", "#pragma cll end f", "} while (x < 3);"), 6, 5,
     "'#pragma cll end' inside the statement that experiment 'f' encloses"),
    (("for (;;)", "#pragma cll f f[0]", "x++;", "#pragma cll report all", "#pragma cll end f"), 6, 5,
     "'#pragma cll report' between the statement of experiment 'f' and its 'end f'"),
])
def test_what_an_unbraced_body_experiment_may_not_enclose(tmp_path, lines, line, column, words):
    status, _, err = check(tmp_path, in_main(*lines))
    assert status == 1
    first = err.splitlines()[0]
    assert first.startswith(f"prog.c:{line}:{column}: error: ") and words in first, err
    assert err.count("error:") == 1  # one mistake, one message (no cascade at 'end f')
    assert "prog.c:4:5: note: experiment 'f' begins here, after" in err
