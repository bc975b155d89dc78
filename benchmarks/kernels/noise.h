/* noise.h -- the noise mode's kernels, whose cost is exactly linear in N (benchmarks/README.md).
 *
 * chain: N elements, each a dependent chain of 16 multiply-adds: compute-bound, no memory.
 * stream: the sum of N doubles, read once: memory-bound when N doubles are well beyond the
 * last-level cache (the noise mode's stream sizes start at 4,000,001 doubles, 32 MB). Its
 * array is on huge pages (huge_pages): with 4 KiB pages, reading a double on this virtual
 * machine cost 0.87 ns at 30 MB but 0.58 ns at 836 MB (the paging's cost per page falls as the
 * array grows), which is not linear in N; on 2 MiB pages it cost 0.44-0.46 ns at every size.
 */
#ifndef KERNELS_NOISE_H
#define KERNELS_NOISE_H

#include "sweep.h"

#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

/* The kernels start from noise_seed and leave their result in noise_result: globals that the
 * tracing runtime's begin and end calls might read or write, so that the compiler keeps the
 * work between them (a pure computation whose result is only summed may otherwise be moved
 * out of the measured region: the chain then measures about 10 ns at every N). */
double noise_seed = 1.0, noise_result;

/* Memory for count doubles on 2 MiB pages where the kernel grants them (transparent huge
 * pages `always` or `madvise`; else 4 KiB pages, and stream's cost is the paging's too).
 * Exits with a message when there is no memory. */
static double *huge_pages(size_t count) {
    void *p = NULL;
    size_t bytes = (count * sizeof(double) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) {
        fprintf(stderr, "out of memory for %zu doubles\n", count);
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

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
