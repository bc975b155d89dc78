/* MPI use the PMPI layer does not count: MPI-IO, Reduce_scatter_block on an
   inter-communicator and a receive freed before it completed; the trace header must list all
   three. */
#include <mpi.h>
#pragma cll parallel MPI procs = 2:2:2
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P, x = 1, y = 0, many[64] = {0}, result[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int left = (me + P - 1) % P, right = (me + 1) % P;
    MPI_Comm half, inter;
    MPI_File file;
    MPI_Request request;
    #pragma cll io io[0]
    MPI_File_open(MPI_COMM_WORLD, "uncounted.tmp", MPI_MODE_CREATE | MPI_MODE_WRONLY |
                  MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &file);
    MPI_File_write_at_all(file, me * (MPI_Offset)sizeof x, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    #pragma cll end io
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
    #pragma cll inter inter[0]
    MPI_Reduce_scatter_block(many, result, 1, MPI_INT, MPI_SUM, inter);
    #pragma cll end inter
    #pragma cll freed freed[0]
    MPI_Irecv(&y, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&x, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    #pragma cll end freed
    MPI_Barrier(MPI_COMM_WORLD);
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
