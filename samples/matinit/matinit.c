/* matinit.c -- the matrix initialisation of Fig. 3 (paper 001), both loop orders.
 *
 * Row-wise order walks memory with stride 1; column-wise order with stride N, so once the
 * matrix outgrows the caches its constants change: llac should find the intervals.
 * The sampling loop sweeps N = 16, 18, 20, ..., 32, 36, 40, ... (eight sizes per octave, the
 * powers of two among them, so that every cache regime holds several sizes) up to MAXN
 * (argument 1, default 8192), REPS times each, the repetition loop outermost so that each
 * size's repetitions are spread over the run (docs/pragma-language.md, Measurement order). Built as plain C (pragmas ignored) it
 * initialises one MAXN x MAXN matrix.
 */
#include <stdio.h>
#include <stdlib.h>

#define REPS 5

/* The next sample size: n plus an eighth of the largest power of two <= n. */
static int next_size(int n) {
    int step = 1;
    while (step * 2 <= n)
        step *= 2;
    return n + step / 8;
}

int main(int argc, char **argv) {
    int maxn = argc > 1 ? atoi(argv[1]) : 8192;
    if (maxn < 16) {
        fprintf(stderr, "usage: matinit [MAXN >= 16]\n");
        return 2;
    }
    double *a = malloc((size_t)maxn * maxn * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "matinit: out of memory for N = %d\n", maxn);
        return 1;
    }
    int N = maxn, rep = 0, last = 0;
    #pragma cll for(rep = 0; rep < REPS; rep++)
    #pragma cll for(N = 16; N <= maxn; N = next_size(N))
    #pragma cll rowinit rowinit[0] + rowinit[1]*N + rowinit[2]*N*N
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[(size_t)i * N + j] = i - j;
    #pragma cll end rowinit
    #pragma cll colinit colinit[0] + colinit[1]*N + colinit[2]*N*N
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            a[(size_t)i * N + j] = i - j + 1;
    #pragma cll end colinit
    last = N;
    #pragma cll end for
    #pragma cll end for
    double sum = 0;
    for (size_t k = 0; k < (size_t)last * last; k++)
        sum += a[k];
    printf("matinit: N = %d, checksum %.1f\n", last, sum);
    #pragma cll report all
    free(a);
    return rep < 0;
}
