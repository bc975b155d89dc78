/* lu.c -- dense factorisation: LU decomposition A = L U of a seeded random N x N matrix, in
 * place (right-looking Doolittle, no pivoting: the matrix is strictly diagonally dominant), about
 * 2/3 N^3 flops. Sizes N = 31, 37, ... (odd, x1.19) up to MAXN (argument 1, default 1849); REPS
 * (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

/* Factor the n x n row-major matrix a in place: U on and above the diagonal, the multipliers
 * of the unit lower triangular L below it. */
static void lu_factor(double *a, int n) {
    for (int k = 0; k < n; k++) {
        const double *pivot_row = a + (size_t)k * n;
        for (int i = k + 1; i < n; i++) {
            double *row = a + (size_t)i * n;
            double l = row[k] /= pivot_row[k];
            for (int j = k + 1; j < n; j++)
                row[j] -= l * pivot_row[j];
        }
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 1849, 31), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate((size_t)maxn * maxn, sizeof *a), sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 31; N <= maxn; N = next_size(N))
    unsigned long long state = 3935559000370003845ULL + N;
    for (size_t k = 0; k < (size_t)N * N; k++)
        a[k] = (next_random(&state) >> 11) * 0x1.0p-53;     /* in [0, 1) */
    for (int i = 0; i < N; i++)
        a[(size_t)i * N + i] = N;                           /* above its row's other N-1 */
    #pragma cll lu lu[0] + lu[1]*N*N*N bytes 8*N*N
    lu_factor(a, N);
    #pragma cll end lu
    for (int i = 0; i < N; i++)
        sum += a[(size_t)i * N + i] / N;
    #pragma cll end for
    #pragma cll end for
    printf("lu: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
