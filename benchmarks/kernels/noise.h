/* noise.h -- the noise mode's kernels, whose cost is exactly linear in N (benchmarks/README.md).
 *
 * chain: N elements, each a dependent chain of 16 multiply-adds: compute-bound, no memory.
 * stream: the sum of N doubles, read once: memory-bound when N doubles are well beyond the
 * last-level cache (the noise mode's stream sizes start at 4,000,001 doubles, 32 MB).
 */
#ifndef KERNELS_NOISE_H
#define KERNELS_NOISE_H

#include "sweep.h"

static double chain(int n) {
    double x = 1.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 16; k++)
            x = x * 0.9999999 + 1e-7;
    return x;
}

static double stream(const double *a, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 3 < n; i += 4) {
        s0 += a[i];
        s1 += a[i + 1];
        s2 += a[i + 2];
        s3 += a[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i];
    return s0 + s1 + s2 + s3;
}

#endif
