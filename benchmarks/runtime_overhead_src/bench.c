/* bench.c -- the measurements behind benchmarks/runtime_overhead.
 *
 *   bench pairs   : ns per iteration of the floor (two reads of the runtime's clock and a
 *                   store into a preallocated buffer) and of an instrumented loop (one
 *                   begin/end pair around a trivial body, shaped as `call` generates it),
 *                   then 1 if the runtime spilled during the measured loop, else 0.
 *   bench volume N: N pairs while the buffers spill to disk: records per second, then the
 *                   seconds cll_report takes to write them.
 */
#include "cll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static const char *const cll_vars_e[] = {"i"};
static cll_experiment cll_exp_e = {"e", "e[0] + e[1]*i", "bench.c:20:1", 1, cll_vars_e, -1};
static cll_experiment *const cll_exps[] = {&cll_exp_e};
static const cll_program cll_prog = {"bench.c", "none", 1, cll_exps};
__attribute__((constructor)) static void cll_init(void) { cll_register(&cll_prog); }

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
        { double cll_v[] = {(double)(i)}; cll_begin(&cll_exp_e, cll_v); }
        sink = i;
        cll_end(&cll_exp_e, "bench.c:44:1");
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

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "pairs")) {
        enum { WARM = 100000, N = 70000 };   /* warm-up fills and spills the buffer once */
        int tsc = !strcmp(cll_timer_name(), "tsc");
        uint64_t *buf = calloc(N, sizeof *buf);
        floor_loop(N, buf, tsc);
        instrumented(WARM);
        uint64_t spilled = cll_spilled_count();
        double pair = instrumented(N), fl = floor_loop(N, buf, tsc);
        printf("%.3f %.3f %d\n", fl / N * 1e9, pair / N * 1e9, cll_spilled_count() != spilled);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "volume")) {
        long n = atol(argv[2]);
        double t = instrumented(n);
        double r = now();
        cll_report(0, 0);
        printf("%.0f %.3f\n", n / t, now() - r);
        return 0;
    }
    fprintf(stderr, "usage: bench pairs | bench volume N\n");
    return 2;
}
