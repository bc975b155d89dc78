/* triad.c -- the streaming triad a = b + s*c over three arrays of N doubles: working set
 * 8*N*3 bytes. Sizes N = 343 (8 KiB), 409, ... (odd, x1.19) up to MAXN (argument 1, default
 * 5592405: 128 MiB); REPS (argument 2, default 5) repetitions as the OUTER sampling loop.
 * An unmeasured pass precedes each measured one, so that a working set that fits a cache
 * level is in it when the measured pass starts.
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) void triad(double *a, const double *b, const double *c, double s, int n) {
    for (int i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 5592405, 343), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate(maxn, sizeof *a), *b = allocate(maxn, sizeof *b), *c = allocate(maxn, sizeof *c);
    for (int i = 0; i < maxn; i++) {
        a[i] = 0;
        b[i] = i % 7;
        c[i] = i % 5;
    }
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 343; N <= maxn; N = next_size(N))
    triad(a, b, c, 3.0, N);
    #pragma cll triad triad[0] + triad[1]*N bytes 8*N*3
    triad(a, b, c, 3.0, N);
    #pragma cll end triad
    #pragma cll end for
    #pragma cll end for
    printf("triad: a[%d] = %g\n", maxn / 2, a[maxn / 2]);
    #pragma cll report all
    return rep < 0;
}
