/* hash.c -- hash table: N inserts of seeded random keys into an open-addressing table (linear
 * probing, 2N+1 slots: load factor 1/2 at every N), then N lookups, half of them of absent keys.
 * Sizes N = 30001, 35701, ... (odd, x1.19) up to MAXN (argument 1, default 7846259); REPS
 * (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include <string.h>
#include "sweep.h"

static size_t slot_of(unsigned long long key, size_t slots) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) % slots;
}

/* Insert keys[0..n) (non-zero) into table[0..slots), then count how many of probes[0..n) it holds. */
static int insert_and_look_up(unsigned long long *table, size_t slots, const unsigned long long *keys,
                              const unsigned long long *probes, int n) {
    for (int i = 0; i < n; i++) {
        size_t s = slot_of(keys[i], slots);
        while (table[s] != 0 && table[s] != keys[i])
            s = s + 1 == slots ? 0 : s + 1;
        table[s] = keys[i];
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
        size_t s = slot_of(probes[i], slots);
        while (table[s] != 0 && table[s] != probes[i])
            s = s + 1 == slots ? 0 : s + 1;
        found += table[s] == probes[i];
    }
    return found;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 7846259, 30001), reps = int_argument(argc, argv, 2, 5, 1);
    unsigned long long *table = allocate(2 * (size_t)maxn + 1, sizeof *table);
    unsigned long long *keys = allocate(maxn, sizeof *keys), *probes = allocate(maxn, sizeof *probes);
    long long found = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 30001; N <= maxn; N = next_size(N))
    unsigned long long state = 1181783497276652981ULL + N;
    memset(table, 0, (2 * (size_t)N + 1) * sizeof *table);
    for (int i = 0; i < N; i++)
        keys[i] = next_random(&state) | 1;
    for (int i = 0; i < N; i++)
        probes[i] = i % 2 ? keys[(i * 7) % N] : next_random(&state) | 1;
    #pragma cll hash hash[0] + hash[1]*N bytes 32*N
    found += insert_and_look_up(table, 2 * (size_t)N + 1, keys, probes, N);
    #pragma cll end hash
    #pragma cll end for
    #pragma cll end for
    printf("hash: %lld keys found\n", found);
    #pragma cll report all
    return rep < 0;
}
