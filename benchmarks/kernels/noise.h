/* noise.h -- the noise mode's kernels, whose cost is exactly linear in N (benchmarks/README.md).
 *
 * chain: N elements, each a dependent chain of 16 multiply-adds: compute-bound, no memory.
 * stream: the sum of N doubles, each read from memory: a call reads on from where the last one
 * stopped through a ring of STREAM_RING doubles (256 MB, eight times this machine's 32 MiB
 * last-level cache), so every double it reads was last read 256 MB of reads earlier and is no
 * longer in any cache, whatever N is. The memory touched is the same at every N, so neither the
 * caches nor the paging make the cost per double depend on N. (Until session 26 a call summed
 * the first N doubles of an array of the largest N: 0.24 ns per double at 32 MB, partly in the
 * last-level cache, 0.27 at 256 MB and 0.29-0.32 at 2 GB, so its run without load was 6-8%
 * off a straight line at 4x. Before session 19, on 4 KiB pages, 0.87 ns at 30 MB and 0.58 ns
 * at 836 MB.) The ring is on huge pages (huge_pages).
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

#define STREAM_RING 32000000L

/* The ring that stream reads, on huge pages, filled, and the position its next call starts at. */
static double *stream_ring(void) {
    double *ring = huge_pages(STREAM_RING);
    for (long i = 0; i < STREAM_RING; i++)
        ring[i] = i % 3;
    return ring;
}

static long stream_next;

static void stream(const double *ring, long n) {
    double s0 = noise_seed, s1 = 0, s2 = 0, s3 = 0;
    while (n > 0) {
        long length = n < STREAM_RING - stream_next ? n : STREAM_RING - stream_next, i = 0;
        const double *a = ring + stream_next;
        for (; i + 3 < length; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
        }
        for (; i < length; i++)
            s0 += a[i];
        n -= length;
        stream_next = (stream_next + length) % STREAM_RING;
    }
    noise_result = s0 + s1 + s2 + s3;
}

#endif
