/* bfs.c -- graph traversal, irregular access: breadth-first search from vertex 0 of a seeded
 * random undirected graph of N vertices and 4N edges (average degree 8) in compressed sparse
 * row form; O(vertices + edges) = O(N). Sizes N = 30001, 35701, ... (odd, x1.19) up to MAXN
 * (argument 1, default 2321847); REPS (argument 2, default 5) repetitions as the OUTER
 * sampling loop. The graph is built for each size outside the measured region.
 */
#include <string.h>
#include "sweep.h"

#define EDGES_PER_VERTEX 4

/* The two ends of a random edge r of a graph of n vertices. */
static int first_end(unsigned long long r, int n) { return (int)(((r >> 32) * (unsigned long long)n) >> 32); }
static int second_end(unsigned long long r, int n) { return (int)(((r & 0xFFFFFFFFULL) * n) >> 32); }

/* A random graph of n vertices and EDGES_PER_VERTEX * n edges drawn from seed: the neighbours
 * of v are adjacent[start[v] .. start[v + 1]). start: room for n + 2; adjacent: for 2 edges. */
static void random_graph(int n, unsigned long long seed, int *start, int *adjacent) {
    size_t edges = (size_t)n * EDGES_PER_VERTEX;
    unsigned long long state = seed;
    memset(start, 0, ((size_t)n + 2) * sizeof *start);
    for (size_t e = 0; e < edges; e++) {           /* degrees, counted two places on */
        unsigned long long r = next_random(&state);
        start[first_end(r, n) + 2]++;
        start[second_end(r, n) + 2]++;
    }
    for (int v = 2; v <= n + 1; v++)                /* start[v + 1]: where v's neighbours begin */
        start[v] += start[v - 1];
    state = seed;
    for (size_t e = 0; e < edges; e++) {           /* the same edges again, placed */
        unsigned long long r = next_random(&state);
        int u = first_end(r, n), w = second_end(r, n);
        adjacent[start[u + 1]++] = w;
        adjacent[start[w + 1]++] = u;
    }                                               /* now start[v + 1]: where v's neighbours end */
}

/* Breadth-first search from vertex 0: distance[v] = the fewest edges from 0 to v, -1 when v is
 * not reached. Returns the number of vertices reached, in queue[0..) in the order visited. */
static int breadth_first(const int *start, const int *adjacent, int n, int *distance, int *queue) {
    for (int v = 0; v < n; v++)
        distance[v] = -1;
    int head = 0, tail = 0;
    distance[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int v = queue[head++];
        for (int k = start[v]; k < start[v + 1]; k++) {
            int w = adjacent[k];
            if (distance[w] < 0) {
                distance[w] = distance[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    return tail;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 2321847, 30001), reps = int_argument(argc, argv, 2, 5, 1);
    int *start = allocate((size_t)maxn + 2, sizeof *start);
    int *adjacent = allocate(2 * EDGES_PER_VERTEX * (size_t)maxn, sizeof *adjacent);
    int *distance = allocate(maxn, sizeof *distance), *queue = allocate(maxn, sizeof *queue);
    long long reached = 0, depth = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 30001; N <= maxn; N = next_size(N))
    random_graph(N, 7046029254386353131ULL + N, start, adjacent);
    int found = 0;
    #pragma cll bfs bfs[0] + bfs[1]*N bytes 44*N
    found = breadth_first(start, adjacent, N, distance, queue);
    #pragma cll end bfs
    reached += found;
    depth += distance[queue[found - 1]];
    #pragma cll end for
    #pragma cll end for
    printf("bfs: %lld vertices reached, depth sum %lld\n", reached, depth);
    #pragma cll report all
    return rep < 0;
}
