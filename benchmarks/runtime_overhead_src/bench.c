/* bench.c -- the measurements behind benchmarks/runtime_overhead.
 *
 * Built by `call cc`: the instrumented loop is a real `#pragma cll` experiment.
 *
 *   bench pairs   : ns per iteration of the floor (two reads of the runtime's clock and a
 *                   store into a preallocated buffer) and of an instrumented loop (one
 *                   `#pragma cll` experiment around a trivial body): the medians of 15
 *                   alternating rounds of 4000 iterations each; then 1 if the runtime
 *                   spilled during the measured rounds, else 0.
 *   bench volume N: N pairs while the buffers spill to disk: records per second, then the
 *                   seconds cll_report takes to write them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static volatile long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t read_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seconds for n instrumented iterations. */
static double instrumented(long n)
{
    double t = now();
    for (long i = 0; i < n; i++) {
        #pragma cll e e[0] + e[1]*i
        sink = i;
        #pragma cll end e
    }
    return now() - t;
}

/* Seconds for n floor iterations with the clock the runtime uses. */
static double floor_loop(long n, uint64_t *buf, int tsc)
{
    double t = now();
    if (tsc)
        for (long i = 0; i < n; i++) {
            uint64_t t0 = __rdtsc();
            sink = i;
            buf[i] = __rdtsc() - t0;
        }
    else
        for (long i = 0; i < n; i++) {
            uint64_t t0 = read_monotonic();
            sink = i;
            buf[i] = read_monotonic() - t0;
        }
    return now() - t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "pairs")) {
        /* The warm-up fills and spills the buffer once; the rounds then fit in what is left.
         * Floor and instrumented loops alternate, so both see the same machine state, and
         * the median round of each is kept, so an interrupted round does not count. */
        enum { WARM = 100000, ROUNDS = 15, N = 4000 };
        int tsc = !strcmp(cll_timer_name(), "tsc");
        uint64_t *buf = calloc(N, sizeof *buf);
        double fl[ROUNDS], pair[ROUNDS];
        floor_loop(N, buf, tsc);
        instrumented(WARM);
        uint64_t spilled = cll_spilled_count();
        for (int r = 0; r < ROUNDS; r++) {
            fl[r] = floor_loop(N, buf, tsc) / N * 1e9;
            pair[r] = instrumented(N) / N * 1e9;
        }
        printf("%.3f %.3f %d\n", median(fl, ROUNDS), median(pair, ROUNDS),
               cll_spilled_count() != spilled);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "volume")) {
        long n = atol(argv[2]);
        double t = instrumented(n);
        double r = now();
        #pragma cll report all
        printf("%.0f %.3f\n", n / t, now() - r);
        return 0;
    }
    fprintf(stderr, "usage: bench pairs | bench volume N\n");
    return 2;
}
