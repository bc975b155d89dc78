/* colsum.c -- the column sums of an n x n matrix of doubles stored by rows, summed column by
 * column (each column read at a stride of 8*n bytes, one line per element once the matrix
 * leaves the cache): working set 8*n*n bytes. Sizes n = 33 (8.5 KiB), 39, ... (odd, x1.19) up
 * to MAXN (argument 1, default 4097: 128 MiB); REPS (argument 2, default 5) repetitions as the
 * OUTER sampling loop. An unmeasured pass precedes each measured one. Held aside (session 25).
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) double colsum(double *sums, const double *a, int n) {
    double total = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += a[(size_t)i * n + j];
        sums[j] = s;
        total += s;
    }
    return total;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 4097, 33), reps = int_argument(argc, argv, 2, 5, 1);
    size_t cells = (size_t)maxn * maxn;
    double *a = allocate(cells, sizeof *a), *sums = allocate(maxn, sizeof *sums), total = 0;
    for (size_t i = 0; i < cells; i++)
        a[i] = (double)(i % 13);
    int n = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(n = 33; n <= maxn; n = next_size(n))
    total += colsum(sums, a, n);
    #pragma cll colsum colsum[0] + colsum[1]*n*n bytes 8*n*n
    total += colsum(sums, a, n);
    #pragma cll end colsum
    #pragma cll end for
    #pragma cll end for
    printf("colsum: total %g\n", total);
    #pragma cll report all
    return rep < 0;
}
