/* bench_mpi.c -- what the MPI layer (runtime_c/cll_mpi.c) costs, measured in one run.
 *
 *   calls: inside an open experiment, batches of MPI_Sendrecv through the PMPI wrapper
 *          (accounted) alternate with batches of PMPI_Sendrecv (the same call without the
 *          accounting); prints the median ns per call of each, to self (a local copy: the
 *          cheapest MPI call, where the accounting shows most) and to a partner rank.
 *   gather: every rank records RECORDS/P records, then rank 0 times the report (each rank
 *          writes its own copy, gathers in chunks, rank 0 writes the trace); prints seconds.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma cll parallel MPI

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `batches` of the ns per call of `calls` Sendrecv to `peer`, accounted or not. */
static void calls(int peer, int batches, int per_batch, double *accounted, double *bare) {
    double *with = malloc(batches * sizeof *with), *without = malloc(batches * sizeof *without);
    char out[8] = {0}, in[8];
    for (int b = 0; b < batches; b++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < per_batch; i++)
            MPI_Sendrecv(out, 8, MPI_BYTE, peer, 0, in, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        for (int i = 0; i < per_batch; i++)
            PMPI_Sendrecv(out, 8, MPI_BYTE, peer, 0, in, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        double t2 = MPI_Wtime();
        with[b] = (t1 - t0) / per_batch * 1e9;
        without[b] = (t2 - t1) / per_batch * 1e9;
    }
    qsort(with, batches, sizeof *with, cmp);
    qsort(without, batches, sizeof *without, cmp);
    *accounted = with[batches / 2];
    *bare = without[batches / 2];
    free(with);
    free(without);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    const char *mode = argc > 1 ? argv[1] : "calls";
    if (!strcmp(mode, "calls")) {
        double self_with, self_without, peer_with, peer_without;
        #pragma cll calls calls[0]
        calls(rank, 31, 20000, &self_with, &self_without);
        calls(rank ^ 1, 31, 5000, &peer_with, &peer_without);
        #pragma cll end calls
        if (rank == 0)
            printf("%.1f %.1f %.1f %.1f\n", self_with, self_without, peer_with, peer_without);
    } else {
        long records = argc > 2 ? atol(argv[2]) : 1000000, mine = records / procs, i;
        for (i = 0; i < mine; i++) {
            #pragma cll rec rec[0] + rec[1]*i
            #pragma cll end rec
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        #pragma cll report all
        if (rank == 0)
            printf("%.4f\n", MPI_Wtime() - t0);
    }
    MPI_Finalize();
    return 0;
}
