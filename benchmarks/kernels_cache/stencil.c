/* stencil.c -- a three-point average b[i] = (a[i-1] + a[i] + a[i+1]) / 3 over N doubles:
 * working set 8*N*2 bytes (a read, b written). Sizes N = 513 (8 KiB), 611, ... (odd, x1.19)
 * up to MAXN (argument 1, default 8388609: 128 MiB); REPS (argument 2, default 5) repetitions
 * as the OUTER sampling loop. An unmeasured sweep precedes each measured one. Held aside
 * (session 25).
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) void stencil(double *b, const double *a, int n) {
    b[0] = a[0];
    for (int i = 1; i < n - 1; i++)
        b[i] = (a[i - 1] + a[i] + a[i + 1]) * (1.0 / 3.0);
    b[n - 1] = a[n - 1];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 8388609, 513), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate(maxn, sizeof *a), *b = allocate(maxn, sizeof *b);
    for (int i = 0; i < maxn; i++) {
        a[i] = i % 11;
        b[i] = 0;
    }
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 513; N <= maxn; N = next_size(N))
    stencil(b, a, N);
    #pragma cll stencil stencil[0] + stencil[1]*N bytes 8*N*2
    stencil(b, a, N);
    #pragma cll end stencil
    #pragma cll end for
    #pragma cll end for
    printf("stencil: b[%d] = %g\n", maxn / 2, b[maxn / 2]);
    #pragma cll report all
    return rep < 0;
}
