/* fft.c -- a sequential radix-2 recursive FFT (decimation in time), timed as
 * G[0] + G[1]*N*log(N) for N = 2^8 ... MAXN (argument 1, default 2^24), REPS times each:
 * the repetition loop is outermost, so each size's repetitions are spread over the run
 * (docs/pragma-language.md, Measurement order).
 * Built as plain C (pragmas ignored) it transforms one signal of MAXN points.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 5

/* out[0..n) = DFT of in[0], in[stride], ...; w holds the maxn-th roots of unity. */
static void fft(double complex *out, const double complex *in, int n, int stride,
                const double complex *w, int maxn) {
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    int half = n / 2;
    fft(out, in, half, 2 * stride, w, maxn);
    fft(out + half, in + stride, half, 2 * stride, w, maxn);
    for (int k = 0; k < half; k++) {
        double complex even = out[k], odd = w[(size_t)k * (maxn / n)] * out[k + half];
        out[k] = even + odd;
        out[k + half] = even - odd;
    }
}

int main(int argc, char **argv) {
    int maxn = argc > 1 ? atoi(argv[1]) : 1 << 24;
    if (maxn < 256 || (maxn & (maxn - 1)) != 0) {
        fprintf(stderr, "usage: fft [MAXN: a power of two >= 256]\n");
        return 2;
    }
    double complex *in = malloc(sizeof *in * maxn), *out = malloc(sizeof *out * maxn);
    double complex *w = malloc(sizeof *w * maxn);
    if (!in || !out || !w) {
        fprintf(stderr, "fft: out of memory for N = %d\n", maxn);
        return 1;
    }
    for (int k = 0; k < maxn; k++)
        w[k] = cexp(-2.0 * M_PI * I * k / maxn);
    int N = maxn, rep = 0, last = 0;
    #pragma cll for(rep = 0; rep < REPS; rep++)
    #pragma cll for(N = 256; N <= maxn; N *= 2)
    for (int k = 0; k < N; k++)
        in[k] = sin(0.001 * k) + I * cos(0.003 * k);
    #pragma cll G G[0] + G[1]*N*log(N)
    fft(out, in, N, 1, w, maxn);
    #pragma cll end G
    last = N;
    #pragma cll end for
    #pragma cll end for
    double complex sum = 0;
    for (int k = 0; k < last; k++)
        sum += out[k] * (k % 7 + 1);
    printf("fft: N = %d, checksum %.6e %+.6e\n", last, creal(sum), cimag(sum));
    #pragma cll report all
    free(in);
    free(out);
    free(w);
    return rep < 0;
}
