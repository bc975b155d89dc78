/* The PUB layer's cost against plain MPI in the same run (benchmarks/pub_overhead).
 * Batches of each operation alternate with batches of its MPI counterpart; rank 0 prints
 * "NAME pub_ns mpi_ns" per operation, medians over the batches of the time per operation:
 *   sync      an empty superstep ended by bsp_sync   vs MPI_Barrier
 *   oblsync   8 bytes to the partner + bsp_oblsync(1) vs MPI_Sendrecv of 8 bytes
 *   msgSIZE   per message: M = 16 messages of SIZE bytes to the partner and bsp_sync, minus
 *             the empty bsp_sync, over M   vs M MPI_Isend/MPI_Irecv pairs and MPI_Waitall, over M
 *   hpSIZE    the same with bsp_hpsend (no copy of the data) for the largest size
 *   many8     the same as msg8 with M = MANY messages per superstep
 * The partner of processor i is i ^ 1 (P even). Usage: bench_pub BATCHES REPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pub.h"

#define MANY 1024
#define BUFFER ((size_t)16 * 65536)   /* the most any operation sends: 16 x 64 KiB (MANY x 8 B is less) */
static t_bsp bsp;
static int me, partner, reps, high_performance, M = 16;
static char *out, *in;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per repetition of `op(size)`, timed on this rank after a barrier */
static double timed(void (*op)(int), int size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < reps; r++)
        op(size);
    return (MPI_Wtime() - start) / reps * 1e9;
}

static void pub_sync(int size) { (void)size; bsp_sync(&bsp); }
static void mpi_barrier(int size) { (void)size; MPI_Barrier(MPI_COMM_WORLD); }

static void pub_obl(int size)
{
    bsp_send(&bsp, partner, out, size);
    bsp_oblsync(&bsp, 1);
}

static void mpi_pair(int size)
{
    MPI_Sendrecv(out, size, MPI_BYTE, partner, 0, in, size, MPI_BYTE, partner, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void pub_messages(int size)
{
    for (int k = 0; k < M; k++)
        (high_performance ? bsp_hpsend : bsp_send)(&bsp, partner, out + (size_t)k * size, size);
    bsp_sync(&bsp);
}

static void mpi_messages(int size)
{
    static MPI_Request r[2 * MANY];
    for (int k = 0; k < M; k++) {
        MPI_Irecv(in + (size_t)k * size, size, MPI_BYTE, partner, k, MPI_COMM_WORLD, &r[k]);
        MPI_Isend(out + (size_t)k * size, size, MPI_BYTE, partner, k, MPI_COMM_WORLD, &r[M + k]);
    }
    MPI_Waitall(2 * M, r, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 7, sizes[] = {8, 1024, 65536};
    reps = argc > 2 ? atoi(argv[2]) : 2000;
    bsp_begin(&bsp, &argc, &argv);
    me = bsp_pid(&bsp);
    partner = me ^ 1;
    out = calloc(BUFFER, 1);
    in = calloc(BUFFER, 1);
    double *a = calloc((size_t)batches, sizeof *a), *b = calloc((size_t)batches, sizeof *b);
    double *e = calloc((size_t)batches, sizeof *e);
    for (int b_ = 0; b_ < batches; b_++) {
        a[b_] = timed(pub_sync, 0);
        b[b_] = timed(mpi_barrier, 0);
    }
    if (me == 0)
        printf("sync %.1f %.1f\n", median(a, batches), median(b, batches));
    for (int b_ = 0; b_ < batches; b_++) {
        a[b_] = timed(pub_obl, 8);
        b[b_] = timed(mpi_pair, 8);
    }
    if (me == 0)
        printf("oblsync %.1f %.1f\n", median(a, batches), median(b, batches));
    for (int s = 0; s < 5; s++) {
        int size = sizes[s < 3 ? s : s == 3 ? 2 : 0], saved = reps;
        high_performance = s == 3;
        M = s == 4 ? MANY : 16;
        reps = size > 4096 ? saved / 10 : saved * 16 / M;
        for (int b_ = 0; b_ < batches; b_++) {
            e[b_] = timed(pub_sync, 0);
            a[b_] = timed(pub_messages, size);
            b[b_] = timed(mpi_messages, size);
            a[b_] = (a[b_] - e[b_]) / M;
            b[b_] /= M;
        }
        if (me == 0)
            printf("%s%d %.1f %.1f\n", high_performance ? "hp" : M == MANY ? "many" : "msg", size,
                   median(a, batches), median(b, batches));
        reps = saved;
    }
    bsp_end(&bsp);
    return 0;
}
