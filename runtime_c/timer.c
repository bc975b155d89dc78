/* timer.c -- choose and calibrate the clock that begin/end read.
 *
 * The invariant TSC is read in ~11 ns, CLOCK_MONOTONIC through the vDSO in ~28 ns, so the
 * TSC is the default where the CPU says it is invariant (CPUID 0x80000007 EDX bit 8); its
 * rate is calibrated against CLOCK_MONOTONIC for 10 ms at start-up. CLL_TIMER=tsc|monotonic
 * overrides the choice. Ticks are kept raw on the hot path and converted when written.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CLL_HAVE_TSC
#include <cpuid.h>
#endif

int cll_use_tsc_ = 0;
static double seconds_per_tick = 1e-9;

uint64_t cll_monotonic_ns_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef CLL_HAVE_TSC
/* Whether the CPU promises a constant-rate TSC that runs in all sleep states. */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

/* Seconds per TSC cycle, measured against CLOCK_MONOTONIC over ~10 ms. */
static double tsc_calibrate(void)
{
    uint64_t m0 = cll_monotonic_ns_(), c0 = __rdtsc(), m1, c1;
    do {
        m1 = cll_monotonic_ns_();
        c1 = __rdtsc();
    } while (m1 - m0 < 10000000u);
    return (double)(m1 - m0) * 1e-9 / (double)(c1 - c0);
}
#endif

/* Pick the timer (env CLL_TIMER or the faster one available) and calibrate it. */
void cll_timer_init_(void)
{
    const char *want = getenv("CLL_TIMER");
    if (want && *want && strcmp(want, "tsc") && strcmp(want, "monotonic")) {
        fprintf(stderr, "cll: error: CLL_TIMER must be 'tsc' or 'monotonic', not '%s'\n", want);
        exit(CLL_EXIT_ERROR);
    }
    int tsc = 0;
#ifdef CLL_HAVE_TSC
    tsc = want && *want ? strcmp(want, "tsc") == 0 : tsc_invariant();
#else
    if (want && strcmp(want, "tsc") == 0)
        fprintf(stderr, "cll: warning: no TSC on this CPU; CLL_TIMER=tsc ignored, using monotonic\n");
#endif
#ifdef CLL_HAVE_TSC
    if (tsc)
        seconds_per_tick = tsc_calibrate();
#endif
    cll_use_tsc_ = tsc;
}

uint64_t cll_ticks(void) { return cll_now_(); }
double cll_seconds_per_tick(void) { return seconds_per_tick; }
const char *cll_timer_name(void) { return cll_use_tsc_ ? "tsc" : "monotonic"; }
