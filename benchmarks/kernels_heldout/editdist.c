/* editdist.c -- dynamic programming: the edit (Levenshtein) distance between two seeded random
 * DNA strings of N letters, row by row with two rows of the N+1 x N+1 table; N*N cells. Sizes
 * N = 501, 597, ... (odd, x1.19) up to MAXN (argument 1, default 32795); REPS (argument 2,
 * default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

/* The fewest insertions, deletions and substitutions that turn a[0..n) into b[0..n);
 * previous, current: room for n + 1 each. */
static int edit_distance(const char *a, const char *b, int n, int *previous, int *current) {
    for (int j = 0; j <= n; j++)
        previous[j] = j;
    for (int i = 1; i <= n; i++) {
        current[0] = i;
        for (int j = 1; j <= n; j++) {
            int replace = previous[j - 1] + (a[i - 1] != b[j - 1]);
            int erase = previous[j] + 1, add = current[j - 1] + 1;
            int best = replace < erase ? replace : erase;
            current[j] = best < add ? best : add;
        }
        int *t = previous;
        previous = current;
        current = t;
    }
    return previous[n];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 32795, 501), reps = int_argument(argc, argv, 2, 5, 1);
    char *a = allocate(maxn, 1), *b = allocate(maxn, 1);
    int *previous = allocate((size_t)maxn + 1, sizeof *previous), *current = allocate((size_t)maxn + 1, sizeof *current);
    long long sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 501; N <= maxn; N = next_size(N))
    unsigned long long state = 1442695040888963407ULL + N;
    for (int i = 0; i < N; i++) {
        a[i] = "ACGT"[next_random(&state) >> 62];
        b[i] = "ACGT"[next_random(&state) >> 62];
    }
    #pragma cll editdist editdist[0] + editdist[1]*N*N bytes 10*N
    sum += edit_distance(a, b, N, previous, current);
    #pragma cll end editdist
    #pragma cll end for
    #pragma cll end for
    printf("editdist: distance sum %lld\n", sum);
    #pragma cll report all
    return rep < 0;
}
