/* spmv.c -- sparse, irregular access: y = A x with A in CSR form, N x N with NNZ nonzeros per
 * row at seeded random columns (a random gather from x). Sizes N = 30001, 35701, ... (odd,
 * x1.19) up to MAXN (argument 1, default 7846259); REPS (argument 2, default 5) repetitions as
 * the OUTER sampling loop. The random numbers are drawn once; a size scales them to 0..N-1.
 */
#include "sweep.h"

#define NNZ 4

static void spmv(const int *start, const int *column, const double *value, const double *x,
                 double *y, int n) {
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = start[i]; k < start[i + 1]; k++)
            s += value[k] * x[column[k]];
        y[i] = s;
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 7846259, 30001), reps = int_argument(argc, argv, 2, 5, 1);
    size_t nonzeros = (size_t)maxn * NNZ;
    int *start = allocate((size_t)maxn + 1, sizeof *start), *column = allocate(nonzeros, sizeof *column);
    unsigned *random = allocate(nonzeros, sizeof *random);
    double *value = allocate(nonzeros, sizeof *value);
    double *x = allocate(maxn, sizeof *x), *y = allocate(maxn, sizeof *y), sum = 0;
    unsigned long long state = 88172645463325252ULL;
    for (size_t k = 0; k < nonzeros; k++) {
        random[k] = (unsigned)(next_random(&state) >> 32);
        value[k] = 1.0 / (1 + k % 5);
    }
    for (int i = 0; i < maxn; i++) {
        start[i] = i * NNZ;
        x[i] = i % 11;
    }
    start[maxn] = maxn * NNZ;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 30001; N <= maxn; N = next_size(N))
    for (size_t k = 0; k < (size_t)N * NNZ; k++)
        column[k] = (int)(((unsigned long long)random[k] * N) >> 32);
    #pragma cll spmv spmv[0] + spmv[1]*N bytes 68*N
    spmv(start, column, value, x, y, N);
    #pragma cll end spmv
    sum += y[N / 2];
    #pragma cll end for
    #pragma cll end for
    printf("spmv: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
