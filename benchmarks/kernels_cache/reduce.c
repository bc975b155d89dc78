/* reduce.c -- the sum of an array of N doubles, with eight independent partial sums (one
 * would make the additions' latency, not the memory, the limit). Working set 8*N bytes. Sizes
 * N = 1025 (8 KiB), 1221, ... (odd, x1.19) up to MAXN (argument 1, default 16777217: 128 MiB);
 * REPS (argument 2, default 5) repetitions as the OUTER sampling loop. An unmeasured sum
 * precedes each measured one, so that a working set that fits a cache level is in it.
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) double sum(const double *x, int n) {
    double s[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += x[i + k];
    for (; i < n; i++)
        s[0] += x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 16777217, 1025), reps = int_argument(argc, argv, 2, 5, 1);
    double *x = allocate(maxn, sizeof *x), total = 0;
    for (int i = 0; i < maxn; i++)
        x[i] = i % 13;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 1025; N <= maxn; N = next_size(N))
    total += sum(x, N);
    #pragma cll reduce reduce[0] + reduce[1]*N bytes 8*N
    total += sum(x, N);
    #pragma cll end reduce
    #pragma cll end for
    #pragma cll end for
    printf("reduce: total %g\n", total);
    #pragma cll report all
    return rep < 0;
}
