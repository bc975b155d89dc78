/* transpose.c -- a transposed copy B = A^T of an n x n matrix of doubles: A is read along its
 * rows, B written down its columns (stride 8*n bytes). Working set 8*n*n*2 bytes. Sizes n = 23
 * (8 KiB), 27, ... (odd, x1.19) up to MAXN (argument 1, default 2897: 128 MiB); REPS (argument
 * 2, default 5) repetitions as the OUTER sampling loop. An unmeasured copy precedes each
 * measured one, so that a working set that fits a cache level is in it.
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) void transpose(double *b, const double *a, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            b[(size_t)j * n + i] = a[(size_t)i * n + j];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 2897, 23), reps = int_argument(argc, argv, 2, 5, 1);
    size_t cells = (size_t)maxn * maxn;
    double *a = allocate(cells, sizeof *a), *b = allocate(cells, sizeof *b);
    for (size_t i = 0; i < cells; i++) {
        a[i] = (double)(i % 11);
        b[i] = 0;
    }
    int n = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(n = 23; n <= maxn; n = next_size(n))
    transpose(b, a, n);
    #pragma cll transpose transpose[0] + transpose[1]*n*n bytes 8*n*n*2
    transpose(b, a, n);
    #pragma cll end transpose
    #pragma cll end for
    #pragma cll end for
    printf("transpose: b[1] = %g\n", b[1]);
    #pragma cll report all
    return rep < 0;
}
