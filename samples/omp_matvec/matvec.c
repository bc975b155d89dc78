/* matvec.c -- an OpenMP matrix-vector product y = A x, timed as K[0] + K[1]*N*N/P + K[2]*P
 * for N = 128, 160, 192, 224, 256, ... (four sizes per octave) up to MAXN
 * (argument 1, default 8192) and P = 1, 2, 4 threads (`call run`
 * runs it once per P with OMP_NUM_THREADS=P). Experiment R times each thread's share inside
 * the parallel region, after a `sync` (a barrier), so the trace has one record per thread.
 * REPS rounds each sweep every size (repetitions outermost: docs/pragma-language.md,
 * Measurement order).
 */
#include <stdio.h>
#include <stdlib.h>

#define REPS 5

#pragma cll parallel OpenMP procs = 1:4:2

/* The next sample size: n plus a quarter of the largest power of two <= n. */
static int next_size(int n) {
    int step = 1;
    while (step * 2 <= n)
        step *= 2;
    return n + step / 4;
}

int main(int argc, char **argv) {
    int maxn = argc > 1 ? atoi(argv[1]) : 8192;
    if (maxn < 128) {
        fprintf(stderr, "usage: matvec [MAXN >= 128]\n");
        return 2;
    }
    double *a = malloc(sizeof *a * maxn * maxn), *x = malloc(sizeof *x * maxn);
    double *y = malloc(sizeof *y * maxn);
    if (!a || !x || !y) {
        fprintf(stderr, "matvec: out of memory for N = %d\n", maxn);
        return 1;
    }
    for (size_t k = 0; k < (size_t)maxn * maxn; k++)
        a[k] = (double)(k % 13) - 6;
    for (int k = 0; k < maxn; k++)
        x[k] = 1.0 / (k + 1);
    int N = maxn, rep = 0, last = 0;
    #pragma cll for(rep = 0; rep < REPS; rep++)
    #pragma cll for(N = 128; N <= maxn; N = next_size(N))
    #pragma cll K K[0] + K[1]*N*N/P + K[2]*P
    #pragma omp parallel
    {
        #pragma cll sync R R[0] + R[1]*N*N/P
        #pragma omp for
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (int j = 0; j < N; j++)
                s += a[(size_t)i * N + j] * x[j];
            y[i] = s;
        }
        #pragma cll end R
    }
    #pragma cll end K
    last = N;
    #pragma cll end for
    #pragma cll end for
    double sum = 0;
    for (int i = 0; i < last; i++)
        sum += y[i];
    printf("matvec: N = %d, checksum %.6f\n", last, sum);
    #pragma cll report all
    free(a);
    free(x);
    free(y);
    return rep < 0;
}
