/* fig1_pub.c -- Figure 1 of the CALL paper on the PUB library: why oblivious
 * synchronisation predicts better than a global barrier.
 *
 * Two processors, two supersteps each ended by bsp_oblsync (each processor waits only for
 * the messages sent to it). In superstep 1 processor 0 computes w and sends one message to
 * processor 1, which computes 2w; in superstep 2 the work is inverted (2w on processor 0, w
 * on processor 1) and processor 1 sends to processor 0. Nobody waits for the imbalance of
 * superstep 1: it is compensated in superstep 2, so the run takes about 3w plus the two
 * exchanges, where plain BSP, with a barrier after each superstep, charges 2w + 2w plus the
 * exchanges: one w more (the paper's 5w against 6w, its exchanges costing w each).
 *
 * w is WORK_MS milliseconds of real computation (a dependent floating-point chain whose
 * speed each processor measures first in CPU time, not sleep). A message is H bytes
 * (argument 1, default 8 KiB), sent with bsp_send: the library completes the send in the
 * background, so the sender does not wait at its bsp_oblsync for the receiver to take the
 * message (bsp_hpsend would: its buffer must be free at the sender's synchronisation, and
 * MPI frees a large one only when the receiver takes it; docs/pub.md). The `sync`
 * experiment f (f = f[0]*w) times the pattern REPS times: each is one run of supersteps in
 * the trace. Built as plain C (mpicc fig1_pub.c pub.c) it runs the pattern and prints the
 * mean time in units of w.
 */
#include "pub.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 5
#define WORK_MS 4.0

#pragma cll parallel PUB gbsp procs = 2:2:2

static double iterations_per_s;   /* of the loop in compute() on this processor */
static volatile double sink;      /* keeps the computation from being optimised away */

/* `iterations` steps of a dependent multiply-add chain. */
static void spin(long iterations)
{
    double x = 1.0;
    for (long i = 0; i < iterations; i++)
        x = x * 1.000000001 + 1e-12;
    sink = x;
}

/* Compute for about `seconds`. */
static void compute(double seconds)
{
    spin((long)(seconds * iterations_per_s));
}

/* CPU seconds of this thread: unlike the wall clock, not stretched while another process
 * has the core (the machine may be shared). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Measure the loop's speed: the fastest of 5 timings of 20 ms of CPU time or more. */
static void calibrate(void)
{
    long n = 1 << 20;
    double best = 0;
    for (int k = 0; k < 5; k++) {
        double t0 = cpu_seconds(), dt;
        spin(n);
        dt = cpu_seconds() - t0;
        if (dt < 0.02) {   /* too short to time: grow and try again */
            n *= 2;
            k--;
            continue;
        }
        if (n / dt > best)
            best = n / dt;
    }
    iterations_per_s = best;
}

/* Figure 1: processor `pid` of 2, work unit w seconds, messages of `bytes` from `buffer`. */
static void figure1(t_bsp *bsp, double w, const char *buffer, int bytes)
{
    if (bsp_pid(bsp) == 0) {
        compute(w);
        bsp_send(bsp, 1, buffer, bytes);
        bsp_oblsync(bsp, 0);
        compute(2 * w);
        bsp_oblsync(bsp, 1);
    } else {
        compute(2 * w);
        bsp_oblsync(bsp, 1);
        compute(w);
        bsp_send(bsp, 0, buffer, bytes);
        bsp_oblsync(bsp, 0);
    }
}

int main(int argc, char **argv)
{
    t_bsp machine, *gbsp = &machine;
    bsp_begin(gbsp, &argc, &argv);
    int bytes = argc > 1 ? atoi(argv[1]) : 8192;
    if (bsp_nprocs(gbsp) != 2 || bytes < 1) {
        if (bsp_pid(gbsp) == 0)
            fprintf(stderr, "usage: mpirun -np 2 fig1_pub [H]: two processors, messages of H "
                            "bytes (H >= 1)\n");
        bsp_end(gbsp);
        return 2;
    }
    char *buffer = calloc((size_t)bytes, 1);
    if (!buffer) {
        fprintf(stderr, "fig1_pub: out of memory for %d bytes\n", bytes);
        return 1;
    }
    calibrate();
    double w = WORK_MS * 1e-3, total = 0;
    int rep = 0, runs = 0;   /* runs: REPS when instrumented, 1 as plain C (no sampling loop) */
    #pragma cll for(rep = 0; rep < REPS; rep++)
    bsp_sync(gbsp);
    double t0 = MPI_Wtime();
    #pragma cll sync f f[0]*w
    figure1(gbsp, w, buffer, bytes);
    #pragma cll end f
    total += MPI_Wtime() - t0;
    runs++;
    #pragma cll end for
    if (bsp_pid(gbsp) == 0)
        printf("fig1_pub: w = %g ms, H = %d bytes, mean time %.3f w over %d runs\n", w * 1e3,
               bytes, total / runs / w, runs);
    #pragma cll report all
    free(buffer);
    bsp_end(gbsp);
    return 0;
}
