/* dot.c -- the dot product of two arrays of N doubles, with four independent partial sums:
 * working set 8*N*2 bytes, two read streams. Sizes N = 513 (8 KiB), 611, ... (odd, x1.19) up
 * to MAXN (argument 1, default 8388609: 128 MiB); REPS (argument 2, default 5) repetitions as
 * the OUTER sampling loop. An unmeasured product precedes each measured one. Held aside
 * (session 25).
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) double dot(const double *x, const double *y, int n) {
    double s[4] = {0};
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            s[k] += x[i + k] * y[i + k];
    for (; i < n; i++)
        s[0] += x[i] * y[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 8388609, 513), reps = int_argument(argc, argv, 2, 5, 1);
    double *x = allocate(maxn, sizeof *x), *y = allocate(maxn, sizeof *y), total = 0;
    for (int i = 0; i < maxn; i++) {
        x[i] = i % 7;
        y[i] = i % 3;
    }
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 513; N <= maxn; N = next_size(N))
    total += dot(x, y, N);
    #pragma cll dot dot[0] + dot[1]*N bytes 8*N*2
    total += dot(x, y, N);
    #pragma cll end dot
    #pragma cll end for
    #pragma cll end for
    printf("dot: total %g\n", total);
    #pragma cll report all
    return rep < 0;
}
