/* sweep.h -- what the accuracy benchmark's kernels share (benchmarks/README.md).
 *
 * Sample sizes grow geometrically by about x1.19 and are always odd: powers of two (and
 * sizes with many factors of two) make arrays map onto the same cache sets, which is a
 * property of the size, not of the algorithm. The random numbers are seeded, so that a
 * kernel does the same work in every run.
 */
#ifndef KERNELS_SWEEP_H
#define KERNELS_SWEEP_H

#include <stdio.h>
#include <stdlib.h>

/* The next sample size after n: n * 1.19 rounded to an odd number (always > n). */
static int next_size(int n) {
    int m = (int)(n * 1.19 + 0.5) | 1;
    return m > n ? m : n + 2;
}

/* Integer argument i of the program, or fallback when it is absent; exits on a bad value. */
static int int_argument(int argc, char **argv, int i, int fallback, int least) {
    int value = argc > i ? atoi(argv[i]) : fallback;
    if (value < least) {
        fprintf(stderr, "%s: argument %d must be an integer >= %d\n", argv[0], i, least);
        exit(2);
    }
    return value;
}

/* Memory for count items of size bytes; exits with a message when there is none. */
static void *allocate(size_t count, size_t size) {
    void *p = malloc(count * size);
    if (p == NULL) {
        fprintf(stderr, "out of memory for %zu items\n", count);
        exit(1);
    }
    return p;
}

/* A seeded xorshift64* generator: the next pseudo-random 64-bit number of *state (!= 0). */
static unsigned long long next_random(unsigned long long *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

#endif
