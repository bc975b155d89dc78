/* spmv.c -- sparse, irregular access: y = A x with A in CSR form, N x N with NNZ nonzeros per
 * row at seeded random columns (a random gather from x). Sizes N = 30001, 35701, ... (odd,
 * x1.19) up to MAXN (argument 1, default 1000001); REPS (argument 2, default 7) repetitions as
 * the OUTER sampling loop.
 */
#include "sweep.h"

#define NNZ 8

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
    int maxn = int_argument(argc, argv, 1, 1000001, 30001), reps = int_argument(argc, argv, 2, 7, 1);
    int *start = allocate((size_t)maxn + 1, sizeof *start), *column = allocate((size_t)maxn * NNZ, sizeof *column);
    double *value = allocate((size_t)maxn * NNZ, sizeof *value);
    double *x = allocate(maxn, sizeof *x), *y = allocate(maxn, sizeof *y), sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 30001; N <= maxn; N = next_size(N))
    unsigned long long state = 88172645463325252ULL + N;
    for (int i = 0; i <= N; i++)
        start[i] = i * NNZ;
    for (size_t k = 0; k < (size_t)N * NNZ; k++) {
        column[k] = (int)(next_random(&state) % N);
        value[k] = 1.0 / (1 + k % 5);
    }
    for (int i = 0; i < N; i++)
        x[i] = i % 11;
    #pragma cll spmv spmv[0] + spmv[1]*N
    spmv(start, column, value, x, y, N);
    #pragma cll end spmv
    sum += y[N / 2];
    #pragma cll end for
    #pragma cll end for
    printf("spmv: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
