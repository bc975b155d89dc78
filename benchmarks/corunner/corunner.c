/* corunner.c -- a memory-bandwidth-hungry co-runner: streams over a large array (read, add,
 * write back: every pass moves the whole array through the memory bus twice) until it is told
 * to stop, so that a program measured beside it sees less memory bandwidth and more L3
 * pressure.
 *
 *     corunner [MIB]      MIB: the array's size in MiB (default 128, 8x the L3 here)
 *
 * It prints `ready` once the array is allocated and touched (the co-runner is then streaming),
 * and on SIGTERM or SIGINT it finishes its pass and prints `passes P seconds S bytes B`, the
 * work it did, and exits 0. It dies with its parent (PR_SET_PDEATHSIG), so a co-runner is never
 * left behind by a parent that was killed. benchmarks/corunner/__init__.py starts and stops it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig) { (void)sig; stop = 1; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        return 1;                                   /* the parent is already gone */
    long mib = argc > 1 ? atol(argv[1]) : 128;
    if (mib < 1) {
        fprintf(stderr, "corunner: the size must be at least 1 MiB, not %s\n", argv[1]);
        return 2;
    }
    struct sigaction action = {.sa_handler = on_stop};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    size_t n = (size_t)mib << 17;                  /* 8-byte words */
    uint64_t *a = malloc(n * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "corunner: out of memory for %ld MiB\n", mib);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    printf("ready\n");
    fflush(stdout);
    long passes = 0;
    double start = now();
    while (!stop) {
        for (size_t i = 0; i < n; i++)
            a[i] += 1;
        passes++;
    }
    double seconds = now() - start;
    printf("passes %ld seconds %.6f bytes %.0f\n", passes, seconds, 2.0 * passes * n * sizeof *a);
    return a[n / 2] == 0;                           /* uses the array: the loop stays */
}
