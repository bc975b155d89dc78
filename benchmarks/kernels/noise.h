/* noise.h -- the noise mode's kernels, whose cost is exactly linear in N (benchmarks/README.md).
 *
 * chain: N elements, each a dependent chain of 16 multiply-adds: compute-bound, no memory.
 * stream: the sum of N doubles, read once: memory-bound when N doubles are well beyond the
 * last-level cache (the noise mode's stream sizes start at 4,000,001 doubles, 32 MB).
 */
#ifndef KERNELS_NOISE_H
#define KERNELS_NOISE_H

#include "sweep.h"

/* The kernels start from noise_seed and leave their result in noise_result: globals that the
 * tracing runtime's begin and end calls might read or write, so that the compiler keeps the
 * work between them (a pure computation whose result is only summed may otherwise be moved
 * out of the measured region: the chain then measures about 10 ns at every N). */
double noise_seed = 1.0, noise_result;

static void chain(int n) {
    double x = noise_seed;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 16; k++)
            x = x * 0.9999999 + 1e-7;
    noise_result = x;
}

static void stream(const double *a, int n) {
    double s0 = noise_seed, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 3 < n; i += 4) {
        s0 += a[i];
        s1 += a[i + 1];
        s2 += a[i + 2];
        s3 += a[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i];
    noise_result = s0 + s1 + s2 + s3;
}

#endif
