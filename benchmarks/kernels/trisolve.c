/* trisolve.c -- triangular solver: forward substitution L x = b with a dense lower triangular
 * N x N matrix (about N*N/2 multiply-adds). Sizes N = 121, 145, ... (odd, x1.19) up to MAXN
 * (argument 1, default 13715); REPS (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

static void forward_substitution(const double *l, const double *b, double *x, int n) {
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int j = 0; j < i; j++)
            s -= l[(size_t)i * n + j] * x[j];
        x[i] = s / l[(size_t)i * n + i];
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 13715, 121), reps = int_argument(argc, argv, 2, 5, 1);
    double *l = allocate((size_t)maxn * maxn, sizeof *l);
    double *b = allocate(maxn, sizeof *b), *x = allocate(maxn, sizeof *x), sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 121; N <= maxn; N = next_size(N))
    for (int i = 0; i < N; i++) {
        b[i] = 1.0 + i % 3;
        for (int j = 0; j < i; j++)
            l[(size_t)i * N + j] = 1e-3 * ((i + j) % 5) / N;
        l[(size_t)i * N + i] = 1.0;
    }
    #pragma cll trisolve trisolve[0] + trisolve[1]*N + trisolve[2]*N*N bytes 8*N*N + 16*N
    forward_substitution(l, b, x, N);
    #pragma cll end trisolve
    sum += x[N - 1];
    #pragma cll end for
    #pragma cll end for
    printf("trisolve: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
