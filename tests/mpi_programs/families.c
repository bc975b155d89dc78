/* Every family of MPI 3.1 data movement, each in its own experiment, with sizes the test
   (tests/test_mpi_families.py) recomputes: what the PMPI layer counts must equal what the
   program sent and received, rank by rank, on 2 and 4 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#pragma cll parallel MPI procs = 2:4:2

/* c(r, d): elements rank r has for rank d in the v and w collectives */
#define C(r, d) (1 + (r) + 2 * (d))
/* both the blocking call B and its nonblocking twin I (then MPI_Wait), as nb says */
#define BOTH(B, I, ...) \
    (nb ? (I(__VA_ARGS__, &req), MPI_Wait(&req, MPI_STATUS_IGNORE)) : B(__VA_ARGS__))

static int cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P, nb, k, flag, idx, done, outcount, indices[300];
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm w = MPI_COMM_WORLD;
    int right = (me + 1) % P, left = (me + P - 1) % P;
    int *out = calloc(1 << 20, sizeof(int)), *in = calloc(1 << 20, sizeof(int));
    int *sc = calloc(64, sizeof(int)), *rc = calloc(64, sizeof(int));
    int *sd = calloc(64, sizeof(int)), *rd = calloc(64, sizeof(int));
    MPI_Request rq[300], sq[300], req;
    MPI_Status st[8];
    int bsize = 1 << 16;
    MPI_Buffer_attach(malloc(bsize), bsize);
    for (k = 0; k < (1 << 20); k++)
        out[k] = k % 1000;

    /* every send mode to the right; 1000-int receives of which 10..19 ints arrive, completed
       by every completion call */
    for (k = 0; k < 10; k++)
        MPI_Irecv(in + 1000 * k, 1000, MPI_INT, left, k, w, &rq[k]);
    MPI_Barrier(w);   /* receives posted: Rsend is legal */
    #pragma cll sends sends[0]
    MPI_Send(out, 10, MPI_INT, right, 0, w);
    MPI_Ssend(out, 11, MPI_INT, right, 1, w);
    MPI_Rsend(out, 12, MPI_INT, right, 2, w);
    MPI_Bsend(out, 13, MPI_INT, right, 3, w);
    MPI_Isend(out, 14, MPI_INT, right, 4, w, &sq[0]);
    MPI_Issend(out, 15, MPI_INT, right, 5, w, &sq[1]);
    MPI_Irsend(out, 16, MPI_INT, right, 6, w, &sq[2]);
    MPI_Ibsend(out, 17, MPI_INT, right, 7, w, &sq[3]);
    MPI_Send(out, 18, MPI_INT, right, 8, w);
    MPI_Send(out, 19, MPI_INT, right, 9, w);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
        MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE);
    MPI_Waitany(2, &rq[2], &idx, MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
        MPI_Testany(2, &rq[2], &idx, &flag, &st[0]);
    for (done = 0; done < 2; done += outcount)
        MPI_Waitsome(2, &rq[4], &outcount, indices, MPI_STATUSES_IGNORE);
    for (flag = 0; !flag;)
        MPI_Testall(2, &rq[6], &flag, st);
    for (done = 0; done < 2; done += outcount)
        MPI_Testsome(2, &rq[8], &outcount, indices, st);
    MPI_Waitall(4, sq, MPI_STATUSES_IGNORE);
    #pragma cll end sends

    /* 300 receives outstanding at once, completed in whatever order they arrive */
    #pragma cll many many[0]
    for (k = 0; k < 300; k++)
        MPI_Irecv(in + k, 1, MPI_INT, left, 1000 + k, w, &rq[k]);
    for (k = 0; k < 300; k++)
        MPI_Isend(out + k, 1, MPI_INT, right, 1000 + 299 - k, w, &sq[k]);
    for (done = 0; done < 300; done += outcount)
        MPI_Waitsome(300, rq, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Waitall(300, sq, MPI_STATUSES_IGNORE);
    #pragma cll end many

    /* persistent requests, started three times; the inactive receive then completes empty */
    MPI_Recv_init(in, 100, MPI_INT, left, 50, w, &rq[0]);
    MPI_Recv_init(in + 100, 100, MPI_INT, left, 51, w, &rq[1]);
    MPI_Send_init(out, 20, MPI_INT, right, 50, w, &rq[2]);
    MPI_Bsend_init(out, 21, MPI_INT, right, 51, w, &rq[3]);
    #pragma cll persistent persistent[0]
    for (k = 0; k < 3; k++) {
        MPI_Startall(2, rq);
        MPI_Start(&rq[2]);
        MPI_Start(&rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    #pragma cll end persistent
    for (k = 0; k < 4; k++)
        MPI_Request_free(&rq[k]);

    /* matched probes: Mprobe + Mrecv, Improbe + Imrecv */
    #pragma cll probed probed[0]
    {
        MPI_Message msg;
        MPI_Status status;
        MPI_Send(out, 33, MPI_INT, right, 60, w);
        MPI_Mprobe(left, 60, w, &msg, &status);
        MPI_Mrecv(in, 33, MPI_INT, &msg, MPI_STATUS_IGNORE);
        MPI_Send(out, 34, MPI_INT, right, 61, w);
        for (flag = 0; !flag;)
            MPI_Improbe(left, 61, w, &flag, &msg, &status);
        MPI_Imrecv(in, 34, MPI_INT, &msg, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    #pragma cll end probed

    /* collectives, each blocking (nb = 0) and nonblocking (nb = 1) */
    for (k = 0; k < P; k++) {
        sc[k] = C(me, k);    /* to k */
        rc[k] = C(k, me);    /* from k */
        sd[k] = k ? sd[k - 1] + sc[k - 1] : 0;
        rd[k] = k ? rd[k - 1] + rc[k - 1] : 0;
    }
    for (nb = 0; nb < 2; nb++) {
        int gathered[64], gd[64], root_counts[64], root_displs[64];
        for (k = 0; k < P; k++) {
            gathered[k] = C(k, 0);
            gd[k] = k ? gd[k - 1] + gathered[k - 1] : 0;
            root_counts[k] = C(P - 1, k);
            root_displs[k] = k ? root_displs[k - 1] + root_counts[k - 1] : 0;
        }
        #pragma cll barrier barrier[0] + barrier[1]*nb
        if (nb) { MPI_Ibarrier(w, &req); MPI_Wait(&req, MPI_STATUS_IGNORE); } else MPI_Barrier(w);
        #pragma cll end barrier
        #pragma cll bcast bcast[0] + bcast[1]*nb
        BOTH(MPI_Bcast, MPI_Ibcast, out, 8, MPI_DOUBLE, 0, w);
        #pragma cll end bcast
        #pragma cll gather gather[0] + gather[1]*nb
        BOTH(MPI_Gather, MPI_Igather, out, 3, MPI_INT, in, 3, MPI_INT, 1 % P, w);
        #pragma cll end gather
        #pragma cll scatter scatter[0] + scatter[1]*nb
        BOTH(MPI_Scatter, MPI_Iscatter, out, 4, MPI_INT, in, 4, MPI_INT, 0, w);
        #pragma cll end scatter
        #pragma cll gatherv gatherv[0] + gatherv[1]*nb
        BOTH(MPI_Gatherv, MPI_Igatherv, out, C(me, 0), MPI_INT, in, gathered, gd, MPI_INT, 0, w);
        #pragma cll end gatherv
        #pragma cll scatterv scatterv[0] + scatterv[1]*nb
        BOTH(MPI_Scatterv, MPI_Iscatterv, out, root_counts, root_displs, MPI_INT, in,
             C(P - 1, me), MPI_INT, P - 1, w);
        #pragma cll end scatterv
        #pragma cll allgather allgather[0] + allgather[1]*nb
        BOTH(MPI_Allgather, MPI_Iallgather, out, 5, MPI_INT, in, 5, MPI_INT, w);
        #pragma cll end allgather
        #pragma cll allgatherv allgatherv[0] + allgatherv[1]*nb
        BOTH(MPI_Allgatherv, MPI_Iallgatherv, out, C(me, 0), MPI_INT, in, gathered, gd, MPI_INT, w);
        #pragma cll end allgatherv
        #pragma cll allgatherv_in_place allgatherv_in_place[0] + allgatherv_in_place[1]*nb
        BOTH(MPI_Allgatherv, MPI_Iallgatherv, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in, gathered,
             gd, MPI_INT, w);
        #pragma cll end allgatherv_in_place
        #pragma cll alltoall alltoall[0] + alltoall[1]*nb
        BOTH(MPI_Alltoall, MPI_Ialltoall, out, 6, MPI_INT, in, 6, MPI_INT, w);
        #pragma cll end alltoall
        #pragma cll alltoallv alltoallv[0] + alltoallv[1]*nb
        BOTH(MPI_Alltoallv, MPI_Ialltoallv, out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, w);
        #pragma cll end alltoallv
        {   /* to even ranks ints, to odd ranks doubles */
            MPI_Datatype types_to[64], types_from[64];
            int sb[64], rb[64];
            for (k = 0; k < P; k++) {
                types_to[k] = k % 2 ? MPI_DOUBLE : MPI_INT;
                types_from[k] = me % 2 ? MPI_DOUBLE : MPI_INT;
                sb[k] = 8 * sd[k];
                rb[k] = 8 * rd[k];
            }
            #pragma cll alltoallw alltoallw[0] + alltoallw[1]*nb
            BOTH(MPI_Alltoallw, MPI_Ialltoallw, out, sc, sb, types_to, in, rc, rb, types_from, w);
            #pragma cll end alltoallw
        }
        #pragma cll reduce reduce[0] + reduce[1]*nb
        BOTH(MPI_Reduce, MPI_Ireduce, out, in, 9, MPI_INT, MPI_SUM, P - 1, w);
        #pragma cll end reduce
        #pragma cll allreduce allreduce[0] + allreduce[1]*nb
        BOTH(MPI_Allreduce, MPI_Iallreduce, out, in, 6, MPI_INT, MPI_SUM, w);
        #pragma cll end allreduce
        {
            int counts[64];
            for (k = 0; k < P; k++)
                counts[k] = 1 + k;
            #pragma cll reduce_scatter reduce_scatter[0] + reduce_scatter[1]*nb
            BOTH(MPI_Reduce_scatter, MPI_Ireduce_scatter, out, in, counts, MPI_INT, MPI_SUM, w);
            #pragma cll end reduce_scatter
        }
        #pragma cll reduce_scatter_block reduce_scatter_block[0] + reduce_scatter_block[1]*nb
        BOTH(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, out, in, 5, MPI_INT, MPI_SUM, w);
        #pragma cll end reduce_scatter_block
        #pragma cll scan scan[0] + scan[1]*nb
        BOTH(MPI_Scan, MPI_Iscan, out, in, 7, MPI_INT, MPI_SUM, w);
        #pragma cll end scan
        #pragma cll exscan exscan[0] + exscan[1]*nb
        BOTH(MPI_Exscan, MPI_Iexscan, out, in, 7, MPI_INT, MPI_SUM, w);
        #pragma cll end exscan
    }

    /* neighbourhood collectives on a periodic ring (cart), a ring graph and a weighted
       distributed graph (left -> me -> right) */
    {
        MPI_Comm cart, graph, dist;
        int dims[1] = {P}, periods[1] = {1}, index[64], edges[128], weight[1] = {3};
        MPI_Cart_create(w, 1, dims, periods, 0, &cart);
        for (k = 0; k < P; k++) {
            index[k] = 2 * (k + 1);
            edges[2 * k] = (k + P - 1) % P;
            edges[2 * k + 1] = (k + 1) % P;
        }
        MPI_Graph_create(w, P, index, edges, 0, &graph);
        MPI_Dist_graph_create_adjacent(w, 1, &left, weight, 1, &right, weight, MPI_INFO_NULL, 0,
                                       &dist);
        int two_sc[2] = {2 + me, 2 + me}, two_rc[2] = {2 + left, 2 + right}, two_d[2] = {0, 64};
        int gv_rc[2] = {1 + left, 1 + right};
        int w_sc[1] = {4 + me}, w_rc[1] = {4 + left};
        MPI_Aint w_d[1] = {0};
        MPI_Datatype dbl[1] = {MPI_DOUBLE};
        for (nb = 0; nb < 2; nb++) {
            #pragma cll neighbor_allgather neighbor_allgather[0] + neighbor_allgather[1]*nb
            BOTH(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, out, 3, MPI_INT, in, 3, MPI_INT,
                 cart);
            #pragma cll end neighbor_allgather
            #pragma cll neighbor_alltoall neighbor_alltoall[0] + neighbor_alltoall[1]*nb
            BOTH(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, out, 4, MPI_INT, in, 4, MPI_INT,
                 cart);
            #pragma cll end neighbor_alltoall
            #pragma cll neighbor_alltoallv neighbor_alltoallv[0] + neighbor_alltoallv[1]*nb
            BOTH(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, out, two_sc, two_d, MPI_INT, in,
                 two_rc, two_d, MPI_INT, cart);
            #pragma cll end neighbor_alltoallv
            #pragma cll neighbor_allgatherv neighbor_allgatherv[0] + neighbor_allgatherv[1]*nb
            BOTH(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, out, 1 + me, MPI_INT, in,
                 gv_rc, two_d, MPI_INT, graph);
            #pragma cll end neighbor_allgatherv
            #pragma cll neighbor_alltoallw neighbor_alltoallw[0] + neighbor_alltoallw[1]*nb
            BOTH(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, out, w_sc, w_d, dbl, in, w_rc,
                 w_d, dbl, dist);
            #pragma cll end neighbor_alltoallw
        }
        MPI_Comm_free(&cart);
        MPI_Comm_free(&graph);
        MPI_Comm_free(&dist);
    }

    /* collectives on an inter-communicator between the even and the odd ranks: world rank 0
       is the root of the even group (MPI_ROOT; the other even ranks pass MPI_PROC_NULL) */
    {
        MPI_Comm half, inter;
        int counts[64], displs[64], remote = P / 2, mine = me / 2;
        MPI_Comm_split(w, me % 2, me, &half);
        MPI_Intercomm_create(half, 0, w, me % 2 ? 0 : 1, 70, &inter);
        for (k = 0; k < remote; k++) {
            counts[k] = 1 + k;
            displs[k] = 64 * k;
        }
        int root = me % 2 ? 0 : (me ? MPI_PROC_NULL : MPI_ROOT);
        for (nb = 0; nb < 2; nb++) {
            #pragma cll inter_bcast inter_bcast[0] + inter_bcast[1]*nb
            BOTH(MPI_Bcast, MPI_Ibcast, out, 8, MPI_DOUBLE, root, inter);
            #pragma cll end inter_bcast
            #pragma cll inter_allreduce inter_allreduce[0] + inter_allreduce[1]*nb
            BOTH(MPI_Allreduce, MPI_Iallreduce, out, in, 6, MPI_INT, MPI_SUM, inter);
            #pragma cll end inter_allreduce
            #pragma cll inter_allgatherv inter_allgatherv[0] + inter_allgatherv[1]*nb
            BOTH(MPI_Allgatherv, MPI_Iallgatherv, out, 1 + mine, MPI_INT, in, counts, displs,
                 MPI_INT, inter);
            #pragma cll end inter_allgatherv
        }
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* one-sided: every kind of access to the right (Get from the left), in a fence epoch and
       (request-based) in a passive-target epoch; disjoint target regions */
    {
        MPI_Win win;
        int *res = in + 500000, compare = 0;
        MPI_Win_create(in, 4000 * sizeof(int), sizeof(int), MPI_INFO_NULL, w, &win);
        #pragma cll onesided onesided[0]
        MPI_Win_fence(0, win);
        MPI_Put(out, 10, MPI_INT, right, 0, 10, MPI_INT, win);
        MPI_Get(res, 11, MPI_INT, left, 100, 11, MPI_INT, win);
        MPI_Accumulate(out, 12, MPI_INT, right, 200, 12, MPI_INT, MPI_SUM, win);
        MPI_Get_accumulate(out, 13, MPI_INT, res + 100, 13, MPI_INT, right, 300, 13, MPI_INT,
                           MPI_SUM, win);
        MPI_Get_accumulate(NULL, 0, MPI_INT, res + 200, 14, MPI_INT, right, 400, 14, MPI_INT,
                           MPI_NO_OP, win);
        MPI_Fetch_and_op(out, res + 300, MPI_INT, right, 500, MPI_SUM, win);
        MPI_Compare_and_swap(out, &compare, res + 400, MPI_INT, right, 600, win);
        MPI_Win_fence(0, win);
        MPI_Win_lock_all(0, win);
        MPI_Rput(out, 15, MPI_INT, right, 1000, 15, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Rget(res + 1000, 16, MPI_INT, left, 1100, 16, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Raccumulate(out, 17, MPI_INT, right, 1200, 17, MPI_INT, MPI_SUM, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Rget_accumulate(out, 18, MPI_INT, res + 1300, 18, MPI_INT, right, 1300, 18, MPI_INT,
                            MPI_SUM, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Win_unlock_all(win);
        #pragma cll end onesided
        MPI_Win_free(&win);
    }

    /* an integer sort's key exchange: rank me has 2^(d + P*me) keys for rank d (a distinct
       power of two per pair, so a total identifies every partner's part) */
    {
        int counts[64], displs[64], got[64], gotd[64], n = 0, total = 0;
        for (k = 0; k < P; k++) {
            counts[k] = 1 << (k + P * me);
            displs[k] = n;
            for (int i = 0; i < counts[k]; i++)
                out[n++] = k * 1000000 + (i * 7919) % 1000000;   /* bucket k's keys */
        }
        #pragma cll sort_counts sort_counts[0]
        MPI_Alltoall(counts, 1, MPI_INT, got, 1, MPI_INT, w);
        #pragma cll end sort_counts
        for (k = 0; k < P; k++) {
            gotd[k] = total;
            total += got[k];
        }
        #pragma cll sort_exchange sort_exchange[0]
        MPI_Alltoallv(out, counts, displs, MPI_INT, in, got, gotd, MPI_INT, w);
        #pragma cll end sort_exchange
        qsort(in, total, sizeof(int), cmp);
        if (in[0] / 1000000 != me || in[total - 1] / 1000000 != me)
            MPI_Abort(w, 3);
    }
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
