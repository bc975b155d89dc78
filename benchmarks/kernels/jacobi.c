/* jacobi.c -- stencil: SWEEPS Jacobi sweeps of the 5-point Laplace stencil on an N x N grid.
 * Cost: N*N per sweep. Sizes N = 121, 145, ... (odd, x1.19) up to MAXN (argument 1, default
 * 9685); REPS (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

#define SWEEPS 2

static double *jacobi(double *u, double *v, int n) {
    for (int s = 0; s < SWEEPS; s++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                v[(size_t)i * n + j] = 0.25 * (u[(size_t)(i - 1) * n + j] + u[(size_t)(i + 1) * n + j]
                                               + u[(size_t)i * n + j - 1] + u[(size_t)i * n + j + 1]);
        double *t = u;
        u = v;
        v = t;
    }
    return u;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 9685, 121), reps = int_argument(argc, argv, 2, 5, 1);
    double *u = allocate((size_t)maxn * maxn, sizeof *u), *v = allocate((size_t)maxn * maxn, sizeof *v);
    double *result = u, sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 121; N <= maxn; N = next_size(N))
    for (size_t k = 0; k < (size_t)N * N; k++)
        u[k] = v[k] = (double)(k % 7);
    #pragma cll jacobi jacobi[0] + jacobi[1]*N*N bytes 16*N*N
    result = jacobi(u, v, N);
    #pragma cll end jacobi
    sum += result[(size_t)N * N / 2];
    #pragma cll end for
    #pragma cll end for
    printf("jacobi: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
