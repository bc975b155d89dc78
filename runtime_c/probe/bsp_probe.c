/* bsp_probe.c: the BSP parameters g and L of the P processes it runs with, in the manner
   of Hill and McColl's bsp_probe (docs/machine.md, "BSP parameters"). call.probe_bsp builds
   it with mpicc and runs it with `mpirun -np P bsp_probe quick|full`.

   L is the cost of an empty superstep: one MPI_Barrier, timed over a batch of barriers.
   Lsync is the cost of an empty superstep of this project's PUB library (pub.c, linked in):
   one bsp_sync, timed the same way. OBSP* charges it to the supersteps a PUB program ends
   with bsp_sync (a reduce-scatter of the message counts, several times a barrier's cost).
   g is the time per byte of a full h-relation: every process sends h/(P-1) bytes to every
   other one and receives as much, between two barriers; t(h) = g*h + L' is fitted by least
   squares over a range of h, in two regimes: small messages (sizes cycling 8, 16, 32, 64
   bytes) and large ones (one message per partner). With P = 1 there is no partner: the
   process copies its h bytes to itself (memcpy, in the same message sizes), so g(1) is the
   local copy cost per byte, the floor that communication adds to.

   Each figure is measured `reps` times (the slowest rank's time each time). L is the
   minimum over the repetitions; g is fitted on the minimum over the repetitions of each
   superstep's time (the floor: a busy machine only ever adds time), and the repetitions'
   own fits give its median. Rank 0 writes on stdout, seconds (g: seconds per byte):

     bsp_probe 1 procs=P reps=R
     L <min> <median>
     Lsync <min> <median>
     g small <floor g> <median g> <floor L'>
     g large <floor g> <median g> <floor L'>
     end
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pub.h"

typedef struct {
    int reps;        /* repetitions of each figure */
    int batch;       /* barriers timed together for one L */
    int points;      /* h values of one fit */
    int trials;      /* supersteps per h value, the fastest kept */
    long small_max;  /* largest h, small messages (bytes) */
    long large_max;  /* largest h, large messages (bytes) */
} config;

static const config QUICK = {5, 200, 8, 5, 16384, 4194304};
static const config FULL = {15, 2000, 10, 5, 16384, 4194304};
static const int SMALL_SIZES[] = {8, 16, 32, 64};

static int rank, procs;

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (the upper middle one for even n); sorts them. */
static double median(double *values, int n) {
    qsort(values, n, sizeof *values, compare);
    return values[n / 2];
}

static double minimum(const double *values, int n) {
    double least = values[0];
    for (int i = 1; i < n; i++)
        if (values[i] < least) least = values[i];
    return least;
}

/* The slowest rank's `seconds`, on rank 0 (the superstep ends when the last one is done). */
static double slowest(double seconds) {
    double worst = seconds;
    MPI_Reduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

/* Size of message `k` of a part: one message of `bytes` (large), else cycling 8..64. */
static long message_size(int small, int k, long left) {
    long size = small ? SMALL_SIZES[k % 4] : left;
    return size < left ? size : left;
}

/* Messages needed to move `bytes` in the regime. */
static int message_count(int small, long bytes) {
    int count = 0;
    for (long left = bytes; left > 0; count++) left -= message_size(small, count, left);
    return count;
}

/* One superstep moving an h-relation of `per` bytes to each partner (P = 1: `per` bytes
   copied to itself), from barrier to barrier; the slowest rank's seconds on rank 0. */
static double superstep(int small, long per, char *out, char *in, MPI_Request *requests) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    int pending = 0;
    if (procs == 1) {
        long offset = 0;
        for (int k = 0; offset < per; k++) {
            long size = message_size(small, k, per - offset);
            memcpy(in + offset, out + offset, (size_t)size);
            offset += size;
        }
    } else {
        for (int step = 1; step < procs; step++) {
            int to = (rank + step) % procs, from = (rank - step + procs) % procs;
            long offset = 0;
            for (int k = 0; offset < per; k++) {
                long size = message_size(small, k, per - offset);
                MPI_Irecv(in + (step - 1) * per + offset, (int)size, MPI_BYTE, from, 0,
                          MPI_COMM_WORLD, &requests[pending++]);
                MPI_Isend(out + (step - 1) * per + offset, (int)size, MPI_BYTE, to, 0,
                          MPI_COMM_WORLD, &requests[pending++]);
                offset += size;
            }
        }
        MPI_Waitall(pending, requests, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return slowest(MPI_Wtime() - start);
}

/* L: `reps` times, the mean cost of `batch` consecutive barriers; writes min and median. */
static void measure_L(const config *c) {
    double *values = malloc(sizeof(double) * c->reps);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < c->reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (int b = 0; b < c->batch; b++) MPI_Barrier(MPI_COMM_WORLD);
        values[r] = slowest((MPI_Wtime() - start) / c->batch);
    }
    if (rank == 0) printf("L %.6e %.6e\n", minimum(values, c->reps), median(values, c->reps));
    free(values);
}

/* Lsync: as L, with the PUB library's empty superstep (bsp_sync) for the barrier. */
static void measure_L_sync(const config *c, int *argc, char ***argv) {
    t_bsp bsp;
    double *values = malloc(sizeof(double) * c->reps);
    bsp_begin(&bsp, argc, argv);       /* MPI is initialised: bsp_begin takes its processes */
    bsp_sync(&bsp);
    for (int r = 0; r < c->reps; r++) {
        bsp_sync(&bsp);
        double start = MPI_Wtime();
        for (int b = 0; b < c->batch; b++) bsp_sync(&bsp);
        values[r] = slowest((MPI_Wtime() - start) / c->batch);
    }
    if (rank == 0) printf("Lsync %.6e %.6e\n", minimum(values, c->reps), median(values, c->reps));
    bsp_end(&bsp);
    free(values);
}

/* Least-squares slope and intercept of t over h. */
static void fit(const double *h, const double *t, int n, double *slope, double *intercept) {
    double mh = 0, mt = 0, shh = 0, sht = 0;
    for (int i = 0; i < n; i++) { mh += h[i] / n; mt += t[i] / n; }
    for (int i = 0; i < n; i++) {
        shh += (h[i] - mh) * (h[i] - mh);
        sht += (h[i] - mh) * (t[i] - mt);
    }
    *slope = sht / shh;
    *intercept = mt - *slope * mh;
}

/* g in one regime: `reps` least-squares fits of t(h) = g*h + L' over `points` values of h
   up to `largest`, each point the fastest of `trials` supersteps (taken in turns over the
   h values, so that a busy spell of the machine does not hit every trial of one point),
   and the fit of the fastest time of each point over all repetitions, the floor. Writes
   the floor's g, the median of the repetitions' g, and the floor's L'. */
static void measure_g(const config *c, int small, long largest) {
    int partners = procs > 1 ? procs - 1 : 1;
    long most = largest / partners;
    char *out = malloc((size_t)(most * partners)), *in = malloc((size_t)(most * partners));
    MPI_Request *requests = malloc(sizeof(MPI_Request) * 2 * (size_t)partners
                                   * (size_t)message_count(small, most));
    double *h = malloc(sizeof(double) * c->points), *t = malloc(sizeof(double) * c->points);
    double *fastest = malloc(sizeof(double) * c->points), *g = malloc(sizeof(double) * c->reps);
    double g_floor, rest, ignored;
    memset(out, rank + 1, (size_t)(most * partners));
    memset(in, 0, (size_t)(most * partners));
    superstep(small, most, out, in, requests);  /* warm up: pages touched, connections made */
    for (int i = 0; i < c->points; i++) h[i] = (double)(most * (i + 1) / c->points * partners);
    for (int r = 0; r < c->reps; r++) {
        for (int k = 0; k < c->trials; k++)
            for (int i = 0; i < c->points; i++) {
                double seconds = superstep(small, most * (i + 1) / c->points, out, in, requests);
                if (k == 0 || seconds < t[i]) t[i] = seconds;
                if ((r == 0 && k == 0) || seconds < fastest[i]) fastest[i] = seconds;
            }
        fit(h, t, c->points, &g[r], &ignored);
    }
    fit(h, fastest, c->points, &g_floor, &rest);
    if (rank == 0)
        printf("g %s %.6e %.6e %.6e\n", small ? "small" : "large", g_floor, median(g, c->reps), rest);
    free(out); free(in); free(requests); free(h); free(t); free(fastest); free(g);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "quick") != 0 && strcmp(mode, "full") != 0) {
        if (rank == 0) fprintf(stderr, "usage: bsp_probe quick|full\n");
        MPI_Finalize();
        return 2;
    }
    const config *c = strcmp(mode, "quick") == 0 ? &QUICK : &FULL;
    if (rank == 0) printf("bsp_probe 1 procs=%d reps=%d\n", procs, c->reps);
    measure_L(c);
    measure_L_sync(c, &argc, &argv);
    measure_g(c, 1, c->small_max);
    measure_g(c, 0, c->large_max);
    if (rank == 0) printf("end\n");
    MPI_Finalize();
    return 0;
}
