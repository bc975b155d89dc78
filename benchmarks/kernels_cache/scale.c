/* scale.c -- an in-place scaling a[i] = s*a[i] + t of N doubles: working set 8*N bytes, read
 * and written back. Sizes N = 1025 (8 KiB), 1221, ... (odd, x1.19) up to MAXN (argument 1,
 * default 16777217: 128 MiB); REPS (argument 2, default 5) repetitions as the OUTER sampling
 * loop. An unmeasured pass precedes each measured one (s and t keep the values bounded:
 * a -> a/2 + 1 tends to 2). Held aside (session 25).
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) void scale(double *a, double s, double t, int n) {
    for (int i = 0; i < n; i++)
        a[i] = s * a[i] + t;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 16777217, 1025), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate(maxn, sizeof *a);
    for (int i = 0; i < maxn; i++)
        a[i] = i % 5;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 1025; N <= maxn; N = next_size(N))
    scale(a, 0.5, 1.0, N);
    #pragma cll scale scale[0] + scale[1]*N bytes 8*N
    scale(a, 0.5, 1.0, N);
    #pragma cll end scale
    #pragma cll end for
    #pragma cll end for
    printf("scale: a[%d] = %g\n", maxn / 2, a[maxn / 2]);
    #pragma cll report all
    return rep < 0;
}
