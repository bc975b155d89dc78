/* chase.c -- a pointer chase: N nodes of one 64-byte cache line each, linked into one random
 * cycle (Sattolo's shuffle, seeded), followed for N steps. Each step's load depends on the
 * previous one, so the time per step is the latency of the level that holds the working set,
 * 64*N bytes. Sizes N = 129 (8 KiB), 155, ... (odd, x1.19) up to MAXN (argument 1, default
 * 2097153: 128 MiB); REPS (argument 2, default 5) repetitions as the OUTER sampling loop. The
 * cycle is built before each measurement, and a linear read of the nodes precedes it, so that
 * a working set that fits a cache level is in it.
 */
#include "../kernels/sweep.h"

typedef struct node {
    struct node *next;
    char pad[64 - sizeof(struct node *)];
} node;

/* Link nodes[0..n) into one random cycle through `order` (n slots of scratch). */
static void link_cycle(node *nodes, int *order, int n, unsigned long long *state) {
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {           /* Sattolo: a single cycle */
        int j = (int)(next_random(state) % (unsigned long long)i);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; i++)
        nodes[order[i]].next = &nodes[order[(i + 1) % n]];
}

/* Read every node's link in address order (brings a working set that fits into the caches). */
static __attribute__((noinline)) size_t touch(const node *nodes, int n) {
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += (size_t)nodes[i].next;
    return sum;
}

static __attribute__((noinline)) const node *chase(const node *p, int steps) {
    for (int i = 0; i < steps; i++)
        p = p->next;
    return p;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 2097153, 129), reps = int_argument(argc, argv, 2, 5, 1);
    node *nodes = allocate(maxn, sizeof *nodes);
    int *order = allocate(maxn, sizeof *order);
    unsigned long long state = 88172645463325252ULL;
    size_t check = 0;
    const node *end = nodes;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 129; N <= maxn; N = next_size(N))
    link_cycle(nodes, order, N, &state);
    check += touch(nodes, N);
    #pragma cll chase chase[0] + chase[1]*N bytes 64*N
    end = chase(nodes, N);
    #pragma cll end chase
    #pragma cll end for
    #pragma cll end for
    printf("chase: ended at node %td (check %zu)\n", end - nodes, check % 1000);
    #pragma cll report all
    return rep < 0;
}
