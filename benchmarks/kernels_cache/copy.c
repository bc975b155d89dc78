/* copy.c -- a copy b = a of N doubles (memcpy's work, written as a loop): working set 8*N*2
 * bytes, one read and one write stream. Sizes N = 513 (8 KiB), 611, ... (odd, x1.19) up to
 * MAXN (argument 1, default 8388609: 128 MiB); REPS (argument 2, default 5) repetitions as the
 * OUTER sampling loop. An unmeasured copy precedes each measured one, so that a working set
 * that fits a cache level is in it. Held aside (session 25) to judge the machine-aware
 * prediction's sequential traffic.
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) void copy(double *b, const double *a, int n) {
    for (int i = 0; i < n; i++)
        b[i] = a[i];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 8388609, 513), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate(maxn, sizeof *a), *b = allocate(maxn, sizeof *b);
    for (int i = 0; i < maxn; i++) {
        a[i] = i % 9;
        b[i] = 0;
    }
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 513; N <= maxn; N = next_size(N))
    copy(b, a, N);
    #pragma cll copy copy[0] + copy[1]*N bytes 8*N*2
    copy(b, a, N);
    #pragma cll end copy
    #pragma cll end for
    #pragma cll end for
    printf("copy: b[%d] = %g\n", maxn / 2, b[maxn / 2]);
    #pragma cll report all
    return rep < 0;
}
