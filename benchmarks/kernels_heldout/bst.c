/* bst.c -- pointer chasing: N insertions of seeded random keys into a binary search tree (not
 * rebalanced: random keys give it an expected depth of about 2 ln N), then N lookups, half of
 * them of absent keys; O(N log N) expected. The nodes come from one pool, linked by index.
 * Sizes N = 10001, 11901, ... (odd, x1.19) up to MAXN (argument 1, default 774177); REPS
 * (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

#define NONE (-1)

struct node {
    unsigned long long key;
    int left, right;        /* indices into the pool, NONE for no child */
};

/* Build the tree of keys[0..n) in pool[0..n) (root pool[0]), then count how many of
 * probes[0..n) it holds. */
static int insert_and_look_up(struct node *pool, const unsigned long long *keys,
                              const unsigned long long *probes, int n) {
    pool[0] = (struct node){keys[0], NONE, NONE};
    for (int i = 1; i < n; i++) {
        pool[i] = (struct node){keys[i], NONE, NONE};
        int *link = NULL;
        for (int p = 0; p != NONE; p = *link)
            link = keys[i] < pool[p].key ? &pool[p].left : &pool[p].right;
        *link = i;
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
        int p = 0;
        while (p != NONE && pool[p].key != probes[i])
            p = probes[i] < pool[p].key ? pool[p].left : pool[p].right;
        found += p != NONE;
    }
    return found;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 774177, 10001), reps = int_argument(argc, argv, 2, 5, 1);
    struct node *pool = allocate(maxn, sizeof *pool);
    unsigned long long *keys = allocate(maxn, sizeof *keys), *probes = allocate(maxn, sizeof *probes);
    long long found = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 10001; N <= maxn; N = next_size(N))
    unsigned long long state = 5573589319906701683ULL + N;
    for (int i = 0; i < N; i++)
        keys[i] = next_random(&state);
    for (int i = 0; i < N; i++)
        probes[i] = i % 2 ? keys[(int)((next_random(&state) >> 32) * N >> 32)]
                          : next_random(&state);
    #pragma cll bst bst[0] + bst[1]*N*log(N) bytes 32*N
    found += insert_and_look_up(pool, keys, probes, N);
    #pragma cll end bst
    #pragma cll end for
    #pragma cll end for
    printf("bst: %lld keys found\n", found);
    #pragma cll report all
    return rep < 0;
}
