/* histogram.c -- N random increments into a table of N 8-byte counters (a histogram of keys
 * drawn once, seeded): each increment's address is known in advance and none depends on
 * another, so the memory system overlaps them. Working set 12*N bytes: the table and the
 * 4-byte keys. Sizes N = 129, 155, ... (odd, x1.19) up to MAXN (argument 1, default 11184811:
 * 128 MiB); REPS (argument 2, default 5) repetitions as the OUTER sampling loop. The table is
 * cleared before each measurement, which also brings a table that fits a cache level into it.
 */
#include <string.h>
#include "../kernels/sweep.h"

static __attribute__((noinline)) void count(unsigned long long *table, const unsigned *keys, int n) {
    for (int i = 0; i < n; i++)
        table[keys[i]]++;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 11184811, 129), reps = int_argument(argc, argv, 2, 5, 1);
    unsigned long long *table = allocate(maxn, sizeof *table);
    unsigned *random = allocate(maxn, sizeof *random), *keys = allocate(maxn, sizeof *keys);
    unsigned long long state = 88172645463325252ULL, check = 0;
    for (int i = 0; i < maxn; i++)
        random[i] = (unsigned)(next_random(&state) >> 32);
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 129; N <= maxn; N = next_size(N))
    for (int i = 0; i < N; i++)
        keys[i] = (unsigned)(((unsigned long long)random[i] * (unsigned)N) >> 32);
    memset(table, 0, (size_t)N * sizeof *table);
    #pragma cll histogram histogram[0] + histogram[1]*N bytes 12*N
    count(table, keys, N);
    #pragma cll end histogram
    check += table[N / 2];
    #pragma cll end for
    #pragma cll end for
    printf("histogram: check %llu\n", check);
    #pragma cll report all
    return rep < 0;
}
