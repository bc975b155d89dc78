/* cll_mpi.c -- the MPI layer of the CALL tracing runtime, compiled once per program by the
 * user's own mpicc (`call cc` adds it when it links a `parallel MPI` program).
 *
 * Every MPI call is compiled against the user's MPI (Open MPI or MPICH), so the runtime
 * library (libcllrt.a) never calls MPI. The layer provides (docs/mpi.md):
 *
 *   - accounting: PMPI wrappers of MPI_Init/Init_thread (start-up: P, rank, clock offsets),
 *     of MPI_Abort (this rank's records saved first) and of every MPI 3.1 call that moves
 *     data (point to point, persistent, matched probes, completion, collectives blocking
 *     and nonblocking, neighbourhood, one-sided), which count per thread messages and
 *     bytes sent and received, distinct partners and time inside MPI; what a program used
 *     that is not counted goes to the header's `mpi_uncounted`;
 *   - the API of generated code (cll_mpi.h): cll_mpi_begin/cll_mpi_end, which turn those
 *     counters into the measured columns of each record (CLL_COL_*), and
 *     cll_mpi_report, which gathers every rank's records on rank 0 (in chunks, with a
 *     timeout naming ranks that never arrive) into one trace; each rank first writes its own
 *     records to disk, and a rank drops its copy only once rank 0 says the trace is written.
 *
 * Its own helpers are static. The MPI functions it defines are weak, as they were when the
 * layer was a header: a program's own definition of one takes precedence. Accounting
 * assumes MPI is called by one thread at a time (MPI_THREAD_FUNNELED or SERIALIZED); it is
 * attributed to the experiments open in the calling thread.
 */

#include "cll_mpi.h"
#include "cll_mpi_support.h"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLL_WEAK __attribute__((weak))
enum { CLL_TAG_COUNTS = 7101, CLL_TAG_GO, CLL_TAG_DATA, CLL_TAG_ACK, CLL_TAG_CLOCK,
       CLL_TAG_REFERENCES, CLL_TAG_STARTS };

typedef struct cll_mpi_open {
    uint64_t start;      /* event number at begin */
    uint64_t partners;   /* distinct partners so far */
} cll_mpi_open;

/* Per-thread counters and the stack of open experiments (for distinct partners). */
typedef struct cll_mpi_thread {
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, mpi_ticks;
    uint64_t event;          /* numbers begins and contacts */
    uint64_t *last_contact;  /* per world rank: event number of the last contact, 0: never */
    cll_mpi_open *open;
    int depth, cap;
} cll_mpi_thread;

/* A request whose data is counted after it is posted: a receive (counted when it completes,
 * from its status) or a persistent send or receive (counted at each start / completion). */
enum { CLL_RECV, CLL_PERSISTENT_SEND, CLL_PERSISTENT_RECV };
typedef struct cll_mpi_tracked {
    MPI_Request request;     /* MPI_REQUEST_NULL: a free slot of the table */
    MPI_Comm comm;
    int kind;
    int active;              /* a persistent receive: started and not completed yet */
    int peer;                /* a persistent send: its destination and bytes */
    uint64_t bytes;
} cll_mpi_tracked;

/* What a program used that the layer does not count, one bit each; the trace header's
 * `mpi_uncounted` lists them (CLL_MPI_UNCOUNTED_NAMES, in bit order). */
enum { CLL_UNCOUNTED_IO = 1, CLL_UNCOUNTED_INTER = 2, CLL_UNCOUNTED_OUTSIDE = 4,
       CLL_UNCOUNTED_FREED = 8 };
#define CLL_MPI_UNCOUNTED_NAMES                                                         \
    "MPI-IO (MPI_File_*)", "Reduce_scatter on an inter-communicator",                      \
    "messages with processes outside MPI_COMM_WORLD",                                   \
    "receives freed by MPI_Request_free before they completed"

/* Process-wide state. */
typedef struct cll_mpi_process {
    int started, world_rank, world_size, keyval, win_keyval;
    unsigned uncounted;      /* CLL_UNCOUNTED_* bits seen on this rank */
    MPI_Comm comm;           /* private duplicate of MPI_COMM_WORLD for the runtime's messages */
    double *clock_offsets;   /* rank 0: each rank's CLOCK_MONOTONIC minus rank 0's, seconds */
    double own_offset;       /* this rank's offset (rank 0 tells each rank its own) */
    char execution[64];      /* rank 0's pid and clock at start-up: the same on every rank */
    uint64_t reports;        /* the reports this rank began: their sequence number */
    cll_mpi_tracked *tracked;   /* open-addressing hash table of tracked requests */
    size_t ntracked, cap_tracked;
    struct { MPI_Message message; MPI_Comm comm; } *probed;   /* matched by Mprobe/Improbe */
    int nprobed, cap_probed;
} cll_mpi_process;

static __thread cll_mpi_thread cll_mpi_self_;
static cll_mpi_process cll_mpi_;
static const cll_mpi_extension *cll_mpi_extension_;   /* cll_mpi_extend: NULL, or the PUB layer */

void cll_mpi_extend(const cll_mpi_extension *extension)
{
    cll_mpi_extension_ = extension;
}

/* The columns an extension's layer appends after the MPI columns (0 without one). */
static int cll_mpi_trailing_(void)
{
    return cll_mpi_extension_ ? cll_mpi_extension_->columns : 0;
}

static __attribute__((noinline, cold)) void cll_mpi_fail_(const char *what)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "cll: error: %s", what);
    cll_fail(msg, what);
}

/* `what` is an error before MPI_Init (cll_fail_unstarted: no trace written, as this process
 * has no records nor P yet), or after it (cll_mpi_fail_). */
static void cll_mpi_refuse_(const char *what)
{
    int up = 0;
    PMPI_Initialized(&up);
    if (up)
        cll_mpi_fail_(what);
    char msg[1024];
    snprintf(msg, sizeof msg, "cll: error: %s", what);
    cll_fail_unstarted(msg);
}

static void *cll_mpi_alloc_(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p)
        cll_mpi_fail_("out of memory in the MPI accounting");
    return p;
}

static void *cll_mpi_zeroed_(size_t size)
{
    return memset(cll_mpi_alloc_(NULL, size), 0, size);
}

/* ------------------------------------------------------------------ accounting */

/* The world ranks of the members of `group` (which it frees): table[0] = n, table[1 + i] =
 * world rank of member i (MPI_UNDEFINED: outside MPI_COMM_WORLD). Cached as an attribute of
 * the communicator or window it belongs to. */
static int *cll_mpi_group_table_(MPI_Group group)
{
    MPI_Group world;
    int n;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_size(group, &n);
    int *ranks = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *ranks);
    int *table = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *table);
    table[0] = n;
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    PMPI_Group_translate_ranks(group, n, ranks, world, table + 1);
    free(ranks);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    return table;
}

/* Member `rank` of a group table as a world rank: -1 for MPI_PROC_NULL (or any negative
 * rank), -2 for a process outside MPI_COMM_WORLD. */
static int cll_mpi_table_rank_(const int *table, int rank)
{
    if (rank < 0 || rank >= table[0])
        return -1;
    return table[rank + 1] != MPI_UNDEFINED ? table[rank + 1] : -2;
}

/* Rank `rank` of `comm` as a rank of MPI_COMM_WORLD (cll_mpi_table_rank_); a partner of an
 * inter-communicator is a rank of its remote group. */
static int cll_mpi_world_rank_(MPI_Comm comm, int rank)
{
    if (rank < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return rank;
    int *table, found = 0, inter = 0;
    PMPI_Comm_get_attr(comm, cll_mpi_.keyval, &table, &found);
    if (!found) {
        MPI_Group group;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_group(comm, &group);
        else
            PMPI_Comm_group(comm, &group);
        table = cll_mpi_group_table_(group);
        PMPI_Comm_set_attr(comm, cll_mpi_.keyval, table);
    }
    return cll_mpi_table_rank_(table, rank);
}

/* Rank `rank` of the group of window `win` as a world rank (cll_mpi_table_rank_). */
static int cll_mpi_win_world_rank_(MPI_Win win, int rank)
{
    if (rank < 0)
        return -1;
    int *table, found = 0;
    PMPI_Win_get_attr(win, cll_mpi_.win_keyval, &table, &found);
    if (!found) {
        MPI_Group group;
        PMPI_Win_get_group(win, &group);
        table = cll_mpi_group_table_(group);
        PMPI_Win_set_attr(win, cll_mpi_.win_keyval, table);
    }
    return cll_mpi_table_rank_(table, rank);
}

/* One message of `bytes` to (sent) or from (!sent) world rank `world` (negative: no one, or
 * someone outside MPI_COMM_WORLD): count it, and the partner for every open experiment that
 * has not exchanged with it yet. */
static void cll_mpi_count_world_(int world, int sent, uint64_t bytes)
{
    if (world < 0 || !cll_mpi_.started) {
        if (world == -2)
            cll_mpi_.uncounted |= CLL_UNCOUNTED_OUTSIDE;
        return;
    }
    cll_mpi_thread *t = &cll_mpi_self_;
    if (sent) {
        t->msgs_sent++;
        t->bytes_sent += bytes;
    } else {
        t->msgs_recv++;
        t->bytes_recv += bytes;
    }
    if (!t->last_contact)
        t->last_contact = cll_mpi_zeroed_((size_t)cll_mpi_.world_size * sizeof(uint64_t));
    uint64_t last = t->last_contact[world];
    for (int i = t->depth - 1; i >= 0 && t->open[i].start > last; i--)
        t->open[i].partners++;
    t->last_contact[world] = ++t->event;
}

/* One message of `bytes` to (sent) or from (!sent) rank `rank` of `comm`. */
static void cll_mpi_count_(MPI_Comm comm, int rank, int sent, uint64_t bytes)
{
    if (cll_mpi_.started)
        cll_mpi_count_world_(cll_mpi_world_rank_(comm, rank), sent, bytes);
}

/* `count` elements of `type` in bytes. */
static uint64_t cll_mpi_bytes_(int count, MPI_Datatype type)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_size(type, &size);
    return (uint64_t)(count > 0 ? count : 0) * (uint64_t)(size > 0 ? size : 0);
}

/* A completed receive described by `status`: bytes from the status itself (MPI_Get_elements_x:
 * MPI_Get_count's int says MPI_UNDEFINED beyond 2 GiB). */
static void cll_mpi_received_(MPI_Comm comm, const MPI_Status *status)
{
    MPI_Count bytes = 0;
    if (status->MPI_SOURCE == MPI_PROC_NULL || status->MPI_SOURCE == MPI_ANY_SOURCE)
        return;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    cll_mpi_count_(comm, status->MPI_SOURCE, 0, bytes == MPI_UNDEFINED || bytes < 0 ? 0 : (uint64_t)bytes);
}

/* ------------------------------------------------------------------ collectives */

/* The blocks of a collective, one per rank (or neighbour): `count` elements of `type` each
 * (CLL_SAME), counts[i] of `type` (CLL_VARY) or counts[i] of types[i] (CLL_EACH). */
typedef struct cll_mpi_blocks {
    const int *counts;
    int count;
    const MPI_Datatype *types;
    MPI_Datatype type;
} cll_mpi_blocks;
#define CLL_SAME(count, type) ((cll_mpi_blocks){NULL, (count), NULL, (type)})
#define CLL_VARY(counts, type) ((cll_mpi_blocks){(counts), 0, NULL, (type)})
#define CLL_EACH(counts, types) ((cll_mpi_blocks){(counts), 0, (types), MPI_DATATYPE_NULL})

/* Bytes of block `i`. */
static uint64_t cll_mpi_block_(cll_mpi_blocks b, int i)
{
    return cll_mpi_bytes_(b.counts ? b.counts[i] : b.count, b.types ? b.types[i] : b.type);
}

/* The ranks a collective on `comm` exchanges with: the size of `comm` and this rank in it
 * (*me); on an inter-communicator the size of the remote group and *me = -1 (every remote
 * rank is a partner, and the ranks passed are remote ranks). */
static int cll_mpi_collective_size_(MPI_Comm comm, int *me)
{
    int inter = 0, size = 0;
    *me = -1;
    if (comm != MPI_COMM_WORLD)
        PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        PMPI_Comm_remote_size(comm, &size);
        return size;
    }
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, me);
    return size;
}

/* Like cll_mpi_collective_size_, for the collectives counted on intra-communicators only
 * (Reduce_scatter*, Scan, Exscan): 0 on an inter-communicator, noted for the trace header. */
static int cll_mpi_intra_size_(MPI_Comm comm, int *me)
{
    int size = cll_mpi_collective_size_(comm, me);
    if (*me >= 0)
        return size;
    cll_mpi_.uncounted |= CLL_UNCOUNTED_INTER;
    return 0;
}

/* Block r of `b` sent to (sent) or received from each rank r in [lo, hi) of `comm` but this
 * one (`me`), as one message each; empty blocks move nothing and are not messages. */
static void cll_mpi_count_blocks_(MPI_Comm comm, int me, int lo, int hi, int sent,
                                    cll_mpi_blocks b)
{
    for (int r = lo; r < hi; r++) {
        uint64_t bytes = r == me ? 0 : cll_mpi_block_(b, r);
        if (bytes)
            cll_mpi_count_(comm, r, sent, bytes);
    }
}

/* An exchange among all ranks (Alltoall*, Allgather*, Allreduce, Reduce_scatter*): this rank
 * sends block r of `out` to and receives block r of `in` from every other rank r (on an
 * inter-communicator: every rank r of the remote group). */
static void cll_mpi_count_exchange_(MPI_Comm comm, cll_mpi_blocks out, cll_mpi_blocks in)
{
    int me, size = cll_mpi_collective_size_(comm, &me);
    cll_mpi_count_blocks_(comm, me, 0, size, 1, out);
    cll_mpi_count_blocks_(comm, me, 0, size, 0, in);
}

/* Allgather(v) and Alltoall(v,w) in place: what a rank sends is its own receive block(s). */
#define CLL_IN_PLACE(sendbuf, in_place, given) ((sendbuf) == MPI_IN_PLACE ? (in_place) : (given))

/* Allgatherv: this rank's `sendcount` (in place: its own receive block; intra-communicators
 * only) goes to every other rank, whose recvcounts[r] it receives. */
static void cll_mpi_count_allgatherv_(MPI_Comm comm, int in_place, int sendcount,
                                        MPI_Datatype sendtype, const int *recvcounts,
                                        MPI_Datatype recvtype)
{
    int me, size = cll_mpi_collective_size_(comm, &me);
    if (size)
        cll_mpi_count_exchange_(comm, in_place && me >= 0 ? CLL_SAME(recvcounts[me], recvtype)
                                               : CLL_SAME(sendcount, sendtype),
                                CLL_VARY(recvcounts, recvtype));
}

/* Reduce_scatter(_block): this rank contributes block r to every other rank r's result
 * and receives a contribution of its own block's size from each. */
static void cll_mpi_count_reduce_scatter_(MPI_Comm comm, cll_mpi_blocks blocks)
{
    int me, size = cll_mpi_intra_size_(comm, &me);
    if (size)
        cll_mpi_count_exchange_(comm, blocks, CLL_SAME(blocks.counts ? blocks.counts[me]
                                                                     : blocks.count, blocks.type));
}

/* A rooted collective: the root sends (root_sends) block r of `at_root` to, or receives it
 * from, every other rank r; each other rank exchanges its `count` of `type` with the root the
 * opposite way. On an inter-communicator the root passes MPI_ROOT and exchanges with every
 * remote rank, the rest of its group passes MPI_PROC_NULL (nothing), and the remote ranks
 * name the root by its rank in its group. */
static void cll_mpi_count_rooted_(MPI_Comm comm, int root, int root_sends,
                                    cll_mpi_blocks at_root, int count, MPI_Datatype type)
{
    int me, size = cll_mpi_collective_size_(comm, &me);
    uint64_t bytes;
    if (me >= 0 ? me == root : root == MPI_ROOT)
        cll_mpi_count_blocks_(comm, me, 0, size, root_sends, at_root);
    else if (root >= 0 && (bytes = cll_mpi_bytes_(count, type)))
        cll_mpi_count_(comm, root, !root_sends, bytes);
}

/* Scan and Exscan: rank r's result combines the contributions of the ranks below it, so
 * each rank sends its `count` of `type` to every higher rank and receives from every lower. */
static void cll_mpi_count_prefix_(MPI_Comm comm, int count, MPI_Datatype type)
{
    int me, size = cll_mpi_intra_size_(comm, &me);
    cll_mpi_count_blocks_(comm, me, me + 1, size, 1, CLL_SAME(count, type));
    cll_mpi_count_blocks_(comm, me, 0, me, 0, CLL_SAME(count, type));
}

/* The neighbours of a process topology (MPI_Cart: -1 and +1 along each dimension; graphs:
 * their lists), sources first then destinations, in one allocation the caller frees. */
static int *cll_mpi_neighbors_(MPI_Comm comm, int *nsources, int *ndestinations)
{
    int kind = MPI_UNDEFINED, n = 0, m = 0, weighted = 0, me = 0, *list;
    PMPI_Topo_test(comm, &kind);
    if (kind == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        list = cll_mpi_alloc_(NULL, (size_t)(4 * n + 1) * sizeof *list);
        for (int d = 0; d < n; d++)
            PMPI_Cart_shift(comm, d, 1, &list[2 * d], &list[2 * d + 1]);
        memcpy(list + 2 * n, list, (size_t)(2 * n) * sizeof *list);
        n = m = 2 * n;
    } else if (kind == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &me);
        PMPI_Graph_neighbors_count(comm, me, &n);
        list = cll_mpi_alloc_(NULL, (size_t)(2 * n + 1) * sizeof *list);
        PMPI_Graph_neighbors(comm, me, n, list);
        memcpy(list + n, list, (size_t)n * sizeof *list);
        m = n;
    } else if (kind == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &n, &m, &weighted);
        list = cll_mpi_alloc_(NULL, (size_t)(2 * (n + m) + 1) * sizeof *list);   /* + weights */
        PMPI_Dist_graph_neighbors(comm, n, list, list + n + m, m, list + n, list + 2 * n + m);
    } else {
        list = cll_mpi_alloc_(NULL, sizeof *list);
    }
    *nsources = n;
    *ndestinations = m;
    return list;
}

/* A neighbourhood collective: block i of `out` to destination i, block i of `in` from
 * source i (MPI_PROC_NULL neighbours are no one; every other neighbour counts, itself too;
 * an empty block moves nothing and is no message, as in the other collectives). */
static void cll_mpi_count_neighbors_(MPI_Comm comm, cll_mpi_blocks out, cll_mpi_blocks in)
{
    int n, m, *list = cll_mpi_neighbors_(comm, &n, &m);
    for (int i = 0; i < m; i++)
        if (cll_mpi_block_(out, i))
            cll_mpi_count_(comm, list[n + i], 1, cll_mpi_block_(out, i));
    for (int i = 0; i < n; i++)
        if (cll_mpi_block_(in, i))
            cll_mpi_count_(comm, list[i], 0, cll_mpi_block_(in, i));
    free(list);
}

/* One-sided: the origin counts a message of `sent` bytes to the target of window `win` (if
 * `sends`) and one of `received` bytes from it (if `receives`); the target counts nothing. */
static void cll_mpi_count_target_(MPI_Win win, int target, int sends, uint64_t sent,
                                    int receives, uint64_t received)
{
    if (!cll_mpi_.started)
        return;
    int world = cll_mpi_win_world_rank_(win, target);
    if (sends)
        cll_mpi_count_world_(world, 1, sent);
    if (receives)
        cll_mpi_count_world_(world, 0, received);
}

/* ------------------------------------------------------------------ requests */

/* The home slot of `request` in the table (capacity: a power of two). */
static size_t cll_mpi_slot_(MPI_Request request)
{
    uint64_t key = 0;
    memcpy(&key, &request, sizeof request < sizeof key ? sizeof request : sizeof key);
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cll_mpi_.cap_tracked - 1);
}

/* The tracked entry of `request`, NULL if it is not tracked. */
static cll_mpi_tracked *cll_mpi_find_(MPI_Request request)
{
    cll_mpi_process *p = &cll_mpi_;
    if (!p->ntracked || request == MPI_REQUEST_NULL)
        return NULL;
    for (size_t i = cll_mpi_slot_(request);; i = (i + 1) & (p->cap_tracked - 1)) {
        if (p->tracked[i].request == request)
            return &p->tracked[i];
        if (p->tracked[i].request == MPI_REQUEST_NULL)
            return NULL;
    }
}

static cll_mpi_tracked *cll_mpi_track_(MPI_Request request, MPI_Comm comm, int kind);

/* Double the table (linear probing, kept at most half full). */
static void cll_mpi_grow_tracked_(void)
{
    cll_mpi_process *p = &cll_mpi_;
    cll_mpi_tracked *old = p->tracked;
    size_t cap = p->cap_tracked;
    p->cap_tracked = cap ? 2 * cap : 64;
    p->tracked = cll_mpi_alloc_(NULL, p->cap_tracked * sizeof *p->tracked);
    for (size_t i = 0; i < p->cap_tracked; i++)
        p->tracked[i].request = MPI_REQUEST_NULL;
    p->ntracked = 0;
    for (size_t i = 0; i < cap; i++)
        if (old[i].request != MPI_REQUEST_NULL)
            *cll_mpi_track_(old[i].request, old[i].comm, old[i].kind) = old[i];
    free(old);
}

/* Track `request` (a handle MPI just returned; a stale entry of the same handle is replaced). */
static cll_mpi_tracked *cll_mpi_track_(MPI_Request request, MPI_Comm comm, int kind)
{
    cll_mpi_process *p = &cll_mpi_;
    if (2 * (p->ntracked + 1) > p->cap_tracked)
        cll_mpi_grow_tracked_();
    size_t i = cll_mpi_slot_(request);
    while (p->tracked[i].request != MPI_REQUEST_NULL && p->tracked[i].request != request)
        i = (i + 1) & (p->cap_tracked - 1);
    if (p->tracked[i].request == MPI_REQUEST_NULL)
        p->ntracked++;
    p->tracked[i] = (cll_mpi_tracked){request, comm, kind, 0, MPI_PROC_NULL, 0};
    return &p->tracked[i];
}

/* Stop tracking `entry` (backward-shift deletion keeps every probe sequence unbroken). */
static void cll_mpi_forget_(cll_mpi_tracked *entry)
{
    cll_mpi_process *p = &cll_mpi_;
    size_t mask = p->cap_tracked - 1, hole = (size_t)(entry - p->tracked);
    for (size_t i = (hole + 1) & mask; p->tracked[i].request != MPI_REQUEST_NULL; i = (i + 1) & mask)
        if (((i - cll_mpi_slot_(p->tracked[i].request)) & mask) >= ((i - hole) & mask)) {
            p->tracked[hole] = p->tracked[i];
            hole = i;
        }
    p->tracked[hole].request = MPI_REQUEST_NULL;
    p->ntracked--;
}

/* Request `request` (its handle before completion) completed with `status`: a tracked
 * receive counts what arrived (unless cancelled); a one-shot one is forgotten. */
static void cll_mpi_completed_(MPI_Request request, const MPI_Status *status)
{
    cll_mpi_tracked *t = cll_mpi_find_(request);
    if (!t || t->kind == CLL_PERSISTENT_SEND || (t->kind == CLL_PERSISTENT_RECV && !t->active))
        return;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (!cancelled)
        cll_mpi_received_(t->comm, status);
    if (t->kind == CLL_RECV)
        cll_mpi_forget_(t);
    else
        t->active = 0;
}

/* Persistent request `request` was started: a send counts its message now, a receive when
 * it completes. */
static void cll_mpi_started_(MPI_Request request)
{
    cll_mpi_tracked *t = cll_mpi_find_(request);
    if (t && t->kind == CLL_PERSISTENT_SEND)
        cll_mpi_count_(t->comm, t->peer, 1, t->bytes);
    else if (t)
        t->active = 1;
}

/* Handles and statuses of a call that completes several requests (Waitall, Testsome, ...):
 * copies of the handles (completion sets them to MPI_REQUEST_NULL) and room for statuses
 * when the caller ignores them, taken only when some request is tracked. */
typedef struct cll_mpi_batch {
    MPI_Request *before, few[16];
    MPI_Status *statuses, few_statuses[16];
    MPI_Status *given;
} cll_mpi_batch;

/* Before the call: returns the statuses argument to pass to MPI. */
static MPI_Status *cll_mpi_batch_begin_(cll_mpi_batch *b, int n, const MPI_Request *requests,
                                          MPI_Status *statuses)
{
    b->before = NULL;
    b->statuses = b->given = statuses;
    if (!cll_mpi_.ntracked || n <= 0)
        return statuses;
    b->before = n <= 16 ? b->few : cll_mpi_alloc_(NULL, (size_t)n * sizeof *b->before);
    memcpy(b->before, requests, (size_t)n * sizeof *b->before);
    if (statuses == MPI_STATUSES_IGNORE)
        b->statuses = n <= 16 ? b->few_statuses : cll_mpi_alloc_(NULL, (size_t)n * sizeof *b->statuses);
    return b->statuses;
}

/* After the call (`rc`): the `done` requests completed (indices[i], or i when `indices` is
 * NULL, with status i) are counted; frees what begin took. */
static void cll_mpi_batch_end_(cll_mpi_batch *b, int rc, int done, const int *indices)
{
    if (!b->before)
        return;
    if (rc == MPI_SUCCESS && done != MPI_UNDEFINED)
        for (int i = 0; i < done; i++)
            cll_mpi_completed_(b->before[indices ? indices[i] : i], &b->statuses[i]);
    if (b->before != b->few)
        free(b->before);
    if (b->statuses != b->given && b->statuses != b->few_statuses)
        free(b->statuses);
}

/* The communicator of a message matched by Mprobe/Improbe (forgotten once received);
 * MPI_COMM_NULL for MPI_MESSAGE_NO_PROC or a message this layer did not see matched. */
static MPI_Comm cll_mpi_probed_take_(MPI_Message message)
{
    cll_mpi_process *p = &cll_mpi_;
    for (int i = 0; i < p->nprobed; i++)
        if (p->probed[i].message == message) {
            MPI_Comm comm = p->probed[i].comm;
            p->probed[i] = p->probed[--p->nprobed];
            return comm;
        }
    return MPI_COMM_NULL;
}

/* A message matched on `comm`, to be received by Mrecv/Imrecv. */
static void cll_mpi_probed_add_(MPI_Message message, MPI_Comm comm)
{
    cll_mpi_process *p = &cll_mpi_;
    if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC)
        return;
    if (p->nprobed == p->cap_probed) {
        p->cap_probed = p->cap_probed ? 2 * p->cap_probed : 16;
        p->probed = cll_mpi_alloc_(p->probed, (size_t)p->cap_probed * sizeof *p->probed);
    }
    p->probed[p->nprobed].message = message;
    p->probed[p->nprobed++].comm = comm;
}

#define CLL_MPI_TIMED(call)                                                               \
    uint64_t cll_t0_ = cll_ticks();                                                       \
    int rc = (call);                                                                      \
    cll_mpi_self_.mpi_ticks += cll_ticks() - cll_t0_

/* ------------------------------------------------------------------ experiments */

void cll_mpi_begin(cll_experiment *e, double *values, const void *where)
{
    if (!cll_mpi_.started) {
        char msg[512];
        snprintf(msg, sizeof msg, "experiment '%s' (%s) begins before MPI_Init: a '#pragma cll "
                 "parallel MPI' program must call MPI_Init first", e->name, e->source);
        cll_mpi_refuse_(msg);
    }
    cll_mpi_thread *t = &cll_mpi_self_;
    if (t->depth == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->open = cll_mpi_alloc_(t->open, (size_t)t->cap * sizeof *t->open);
    }
    t->open[t->depth].start = ++t->event;
    t->open[t->depth++].partners = 0;
    double *c = values + e->nvars - CLL_MPI_COLUMNS - cll_mpi_trailing_();
    c[CLL_COL_MSGS_SENT] = (double)t->msgs_sent;
    c[CLL_COL_BYTES_SENT] = (double)t->bytes_sent;
    c[CLL_COL_MSGS_RECV] = (double)t->msgs_recv;
    c[CLL_COL_BYTES_RECV] = (double)t->bytes_recv;
    c[CLL_COL_PARTNERS] = c[CLL_COL_H] = 0;
    c[CLL_COL_MPI_TIME] = (double)t->mpi_ticks;
    cll_begin(e, values, where);
}

int cll_mpi_unwind(const void *where)
{
    cll_mpi_thread *t = &cll_mpi_self_;
    int popped = cll_unwind(where);
    t->depth = popped < t->depth ? t->depth - popped : 0;
    return popped;
}

void cll_mpi_end(cll_experiment *e, const char *site, const void *where)
{
    cll_mpi_thread *t = &cll_mpi_self_;
    cll_mpi_unwind(where);
    double *v = cll_open_values(e);
    if (v && t->depth > 0) {   /* otherwise cll_end reports the mismatch */
        double *c = v + e->nvars - CLL_MPI_COLUMNS - cll_mpi_trailing_();
        c[CLL_COL_MSGS_SENT] = (double)t->msgs_sent - c[CLL_COL_MSGS_SENT];
        c[CLL_COL_BYTES_SENT] = (double)t->bytes_sent - c[CLL_COL_BYTES_SENT];
        c[CLL_COL_MSGS_RECV] = (double)t->msgs_recv - c[CLL_COL_MSGS_RECV];
        c[CLL_COL_BYTES_RECV] = (double)t->bytes_recv - c[CLL_COL_BYTES_RECV];
        c[CLL_COL_PARTNERS] = (double)t->open[--t->depth].partners;
        c[CLL_COL_H] = c[CLL_COL_BYTES_SENT] + c[CLL_COL_BYTES_RECV];
        c[CLL_COL_MPI_TIME] = ((double)t->mpi_ticks - c[CLL_COL_MPI_TIME]) * cll_seconds_per_tick();
    }
    cll_end(e, site, where);
}

int cll_mpi_procs(MPI_Comm comm)
{
    int size = 0, up = 0;
    PMPI_Initialized(&up);
    if (up)
        PMPI_Comm_size(comm, &size);
    return size;
}

void cll_mpi_sync(MPI_Comm comm)
{
    if (cll_mpi_.started)
        PMPI_Barrier(comm);
}

/* ------------------------------------------------------------------ start-up */

static double cll_mpi_clock_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 learns each rank's clock offset: the best of 5 ping-pongs (shortest round trip),
 * offset = remote time - midpoint of the round trip; then it tells each rank its own offset
 * and the execution's identity (rank 0's pid and clock now), which the traces of the ranks'
 * own records carry (`#execution:`) so that llac can tell the files of one execution. */
static void cll_mpi_measure_offsets_(void)
{
    cll_mpi_process *p = &cll_mpi_;
    double remote, told[3] = {0, (double)getpid(), cll_mpi_clock_()};   /* offset, pid, clock */
    if (p->world_rank == 0) {
        p->clock_offsets = cll_mpi_zeroed_((size_t)p->world_size * sizeof(double));
        for (int r = 1; r < p->world_size; r++) {
            double best = 1e300;
            for (int i = 0; i < 5; i++) {
                double t0 = cll_mpi_clock_();
                PMPI_Send(&t0, 1, MPI_DOUBLE, r, CLL_TAG_CLOCK, p->comm);
                PMPI_Recv(&remote, 1, MPI_DOUBLE, r, CLL_TAG_CLOCK, p->comm, MPI_STATUS_IGNORE);
                double t1 = cll_mpi_clock_();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    p->clock_offsets[r] = remote - 0.5 * (t0 + t1);
                }
            }
            told[0] = p->clock_offsets[r];
            PMPI_Send(told, 3, MPI_DOUBLE, r, CLL_TAG_CLOCK, p->comm);
        }
        told[0] = 0;
    } else {
        for (int i = 0; i < 5; i++) {
            PMPI_Recv(&remote, 1, MPI_DOUBLE, 0, CLL_TAG_CLOCK, p->comm, MPI_STATUS_IGNORE);
            remote = cll_mpi_clock_();
            PMPI_Send(&remote, 1, MPI_DOUBLE, 0, CLL_TAG_CLOCK, p->comm);
        }
        PMPI_Recv(told, 3, MPI_DOUBLE, 0, CLL_TAG_CLOCK, p->comm, MPI_STATUS_IGNORE);
    }
    p->own_offset = told[0];
    snprintf(p->execution, sizeof p->execution, "%.0f %.9f", told[1], told[2]);
}

/* The header lines of a trace of this rank's own records (cll_extend_own_trace): the
 * execution, and the extension's lines measured from this rank's own reference times. */
static void cll_mpi_own_header_(FILE *f)
{
    const cll_mpi_extension *x = cll_mpi_extension_;
    fprintf(f, "#execution: %s\n", cll_mpi_.execution);
    if (x) {
        const double *times = NULL;
        int n = x->references(&times);
        x->header(f, times, n, cll_mpi_.own_offset, cll_mpi_.world_rank);
    }
}

/* The extension's record lines in a trace of this rank's own records. */
static int cll_mpi_own_lines_(int (*sink)(const char *text, size_t len, void *ctx), void *ctx)
{
    const cll_mpi_extension *x = cll_mpi_extension_;
    const double *times = NULL;
    if (!x)
        return 0;
    int n = x->references(&times);
    return x->lines(times, n, cll_mpi_.world_rank, sink, ctx);
}

/* Delete callbacks of the cached group tables (communicators, windows). */
static int cll_mpi_free_table_(MPI_Comm comm, int keyval, void *table, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(table);
    return MPI_SUCCESS;
}

static int cll_mpi_free_win_table_(MPI_Win win, int keyval, void *table, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    free(table);
    return MPI_SUCCESS;
}

/* After MPI_Init: P and rank for the trace, the runtime's own communicator, clock offsets,
 * and the runtime's signal handlers back (MPI libraries install their own). */
static void cll_mpi_start_(void)
{
    cll_mpi_process *p = &cll_mpi_;
    PMPI_Comm_dup(MPI_COMM_WORLD, &p->comm);
    PMPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(MPI_COMM_WORLD, &p->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &p->world_size);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cll_mpi_free_table_, &p->keyval, NULL);
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, cll_mpi_free_win_table_, &p->win_keyval, NULL);
    cll_set_procs(p->world_size, p->world_rank);
    cll_mpi_measure_offsets_();
    cll_extend_own_trace(cll_mpi_own_header_, cll_mpi_own_lines_);
    cll_install_signal_handlers();
    p->started = 1;
}

CLL_WEAK int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        cll_mpi_start_();
    return rc;
}

CLL_WEAK int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        cll_mpi_start_();
    return rc;
}

CLL_WEAK int MPI_Finalize(void)
{
    cll_mpi_.started = 0;
    return PMPI_Finalize();
}

/* MPI_Abort ends every rank of `comm` at once (docs/mpi.md, "Faults"): this rank first
 * writes its own records (rank 0 at the trace's path, the others to their .rank<r> file)
 * with the status "MPI_Abort with errorcode N"; the ranks the MPI library then stops with a
 * signal save theirs in the runtime's signal handler. PUB's misuse messages end this way. */
CLL_WEAK int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (cll_mpi_.started) {
        char status[64];
        snprintf(status, sizeof status, "MPI_Abort with errorcode %d", errorcode);
        cll_save_records(status);
    }
    return PMPI_Abort(comm, errorcode);
}

/* ------------------------------------------------------------------ report: gather */

/* Seconds rank 0 waits for the other ranks at report (env CLL_MPI_TIMEOUT, default 60). */
/* The number an environment variable gives, or `fallback` when it is unset; one that is not a
 * number of at least `least` (and above 0), `what` says which, is said once on stderr, and
 * `fallback` stands. */
static double cll_mpi_env_number_(const char *name, double fallback, double least, const char *what,
                                  int *said)
{
    const char *env = getenv(name);
    char *end = NULL;
    double value = env ? strtod(env, &end) : fallback;
    if (!env || (end != env && *end == '\0' && value >= least && value > 0))
        return value;
    if (!*said)
        fprintf(stderr, "cll: warning: %s=%s is not %s: %.15g is used\n", name, env, what, fallback);
    *said = 1;
    return fallback;
}

static double cll_mpi_timeout_(void)
{
    static int said;
    return cll_mpi_env_number_("CLL_MPI_TIMEOUT", 60, 0, "a number of seconds above 0", &said);
}

/* How long before a rank stops waiting for rank 0's go (cll_mpi_send_records_) rank 0 still
 * sends it one: a quarter of the timeout, at most 1 s, so that no go reaches a rank that gave
 * up (it would then wait for records that never come). */
static double cll_mpi_margin_(void)
{
    double quarter = cll_mpi_timeout_() / 4;
    return quarter < 1.0 ? quarter : 1.0;
}

/* What follows a rank's record counts in its counts message: its CLL_UNCOUNTED_* bits, the
 * report's sequence number (cll_mpi_process.reports) and, as a double's bits, when the rank
 * stops waiting for the go, on rank 0's clock. */
enum { COUNTS_TAIL = 3 };

/* Bytes per message of records (env CLL_MPI_CHUNK, at least 4096; default 1 MiB). */
static size_t cll_mpi_chunk_(void)
{
    static int said;
    return (size_t)cll_mpi_env_number_("CLL_MPI_CHUNK", (double)(1 << 20), 4096,
                                       "a number of bytes of at least 4096", &said);
}

/* Wait for a message with `tag` from `source` (MPI_ANY_SOURCE allowed) until `deadline`
 * (cll_mpi_clock_ seconds); 1 and its status if one came, 0 on timeout. */
static int cll_mpi_wait_message_(int source, int tag, double deadline, MPI_Status *status)
{
    struct timespec nap = {0, 1000000};
    for (;;) {
        int flag = 0;
        PMPI_Iprobe(source, tag, cll_mpi_.comm, &flag, status);
        if (flag)
            return 1;
        if (cll_mpi_clock_() > deadline)
            return 0;
        nanosleep(&nap, NULL);
    }
}

static int cll_mpi_send_chunk_(const char *text, size_t len, void *ctx)
{
    (void)ctx;
    return PMPI_Send(text, (int)len, MPI_CHAR, 0, CLL_TAG_DATA, cll_mpi_.comm) != MPI_SUCCESS;
}

/* Rank r > 0: send the record counts, and the records when rank 0 says go; the records
 * count as reported once rank 0 acknowledges the trace is on disk. Otherwise they stay with
 * this rank, which writes them to its own file. */
static void cll_mpi_send_records_(const char *const *names, int nnames)
{
    cll_mpi_process *p = &cll_mpi_;
    int n = cll_experiment_total(), go = 0, ack = 0, said[2];
    uint64_t *counts = cll_mpi_alloc_(NULL, (size_t)(n + COUNTS_TAIL) * sizeof *counts);
    MPI_Status status;
    double deadline = cll_mpi_clock_() + cll_mpi_timeout_();
    if (cll_record_counts(names, nnames, counts))
        cll_mpi_fail_("report: cannot read this rank's spilled records");
    counts[n] = p->uncounted;   /* what this rank used that is not counted, for the header */
    counts[n + 1] = ++p->reports;
    double on_rank0 = deadline - p->own_offset;   /* until when this rank waits, on rank 0's clock */
    memcpy(&counts[n + 2], &on_rank0, sizeof on_rank0);
    PMPI_Send(counts, n + COUNTS_TAIL, MPI_UINT64_T, 0, CLL_TAG_COUNTS, p->comm);
    free(counts);
    if (cll_mpi_extension_) {   /* this rank's own times, of which rank 0 takes the earliest */
        const double *mine = NULL;
        int nmine = cll_mpi_extension_->references(&mine);
        PMPI_Send(mine, nmine, MPI_DOUBLE, 0, CLL_TAG_STARTS, p->comm);
    }
    while (!go && cll_mpi_wait_message_(0, CLL_TAG_GO, deadline, &status)) {
        PMPI_Recv(said, 2, MPI_INT, 0, CLL_TAG_GO, p->comm, MPI_STATUS_IGNORE);
        go = said[1] == (int)p->reports && said[0];   /* a go of an earlier report is stale */
    }
    if (go) {
        const cll_mpi_extension *x = cll_mpi_extension_;
        double *times = NULL;
        int ntimes = 0;
        if (x) {   /* the common reference times on this rank's clock, sent after go */
            PMPI_Probe(0, CLL_TAG_REFERENCES, p->comm, &status);
            PMPI_Get_count(&status, MPI_DOUBLE, &ntimes);
            times = cll_mpi_alloc_(NULL, (size_t)ntimes * sizeof *times + 1);
            PMPI_Recv(times, ntimes, MPI_DOUBLE, 0, CLL_TAG_REFERENCES, p->comm, MPI_STATUS_IGNORE);
        }
        if (cll_records_text(names, nnames, cll_mpi_chunk_(), cll_mpi_send_chunk_, NULL)
            || (x && x->lines(times, ntimes, p->world_rank, cll_mpi_send_chunk_, NULL)))
            cll_mpi_fail_("report: cannot send this rank's records to rank 0");
        free(times);
        cll_mpi_send_chunk_("", 0, NULL);
        PMPI_Recv(&ack, 1, MPI_INT, 0, CLL_TAG_ACK, p->comm, MPI_STATUS_IGNORE);
    }
    if (ack) {   /* the gathered trace holds them: this rank's own copy can go */
        unlink(cll_trace_path());
        cll_mark_reported();
        return;
    }
    fprintf(stderr, "cll: warning: rank %d: rank 0 did not collect this rank's records at "
            "report (it did not reach report within %g s, or could not write the trace); "
            "they are kept in %s\n", p->world_rank, cll_mpi_timeout_(), cll_trace_path());
    cll_report_status("incomplete: rank 0 did not collect this rank's records", names, nnames);
}

/* The header lines rank 0 adds: its host's cores (to tell oversubscribed runs), clock
 * offsets, the execution, the ranks in the file, what some rank used that is not counted,
 * and the extension's lines, measured from the common `reference` times. */
static char *cll_mpi_header_(const int *present, unsigned uncounted, const double *reference,
                             int nreference)
{
    static const char *const names[] = {CLL_MPI_UNCOUNTED_NAMES};
    cll_mpi_process *p = &cll_mpi_;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        cll_mpi_fail_("out of memory while writing the trace's header");
    fprintf(f, "#cores: %ld\n#clock_offsets:", sysconf(_SC_NPROCESSORS_ONLN));
    for (int r = 0; r < p->world_size; r++)
        fprintf(f, " %.9g", p->clock_offsets[r]);
    fprintf(f, "\n#execution: %s\n#ranks:", p->execution);
    for (int r = 0; r < p->world_size; r++)
        if (present[r])
            fprintf(f, " %d", r);
    fputc('\n', f);
    for (unsigned i = 0, first = 1; i < sizeof names / sizeof *names; i++)
        if (uncounted & (1u << i)) {
            fprintf(f, "%s%s", first ? "#mpi_uncounted: " : "; ", names[i]);
            first = 0;
        }
    if (uncounted)
        fputc('\n', f);
    if (cll_mpi_extension_)
        cll_mpi_extension_->header(f, reference, nreference, 0, -1);
    if (fclose(f))
        cll_mpi_fail_("out of memory while writing the trace's header");
    return text;
}

/* Rank 0, with an extension: receive rank r's own reference times and lower the common ones
 * (`reference`, n of them, on rank 0's clock) to the earliest (n = 0: received, unused). */
static void cll_mpi_earliest_references_(int r, double *reference, int n)
{
    MPI_Status status;
    int count = 0;
    PMPI_Probe(r, CLL_TAG_STARTS, cll_mpi_.comm, &status);
    PMPI_Get_count(&status, MPI_DOUBLE, &count);
    double *theirs = cll_mpi_alloc_(NULL, (size_t)count * sizeof *theirs + 1);
    PMPI_Recv(theirs, count, MPI_DOUBLE, r, CLL_TAG_STARTS, cll_mpi_.comm, MPI_STATUS_IGNORE);
    for (int i = 0; i < n && i < count; i++) {
        double on_mine = theirs[i] - cll_mpi_.clock_offsets[r];
        if (on_mine < reference[i])
            reference[i] = on_mine;
    }
    free(theirs);
}

/* Rank 0, with an extension: send rank r the common reference times on its clock. */
static void cll_mpi_send_references_(int r, const double *reference, int n)
{
    double *theirs = cll_mpi_alloc_(NULL, (size_t)n * sizeof *theirs + 1);
    for (int i = 0; i < n; i++)
        theirs[i] = reference[i] + cll_mpi_.clock_offsets[r];
    PMPI_Send(theirs, n, MPI_DOUBLE, r, CLL_TAG_REFERENCES, cll_mpi_.comm);
    free(theirs);
}

static int cll_mpi_append_chunk_(const char *text, size_t len, void *f)
{
    return cll_trace_append(f, text, len);
}

/* Rank 0: collect every rank's counts (waiting at most the timeout), write the header and
 * its own records (and the extension's lines), then each present rank's records as they
 * arrive, and acknowledge. */
static void cll_mpi_gather_records_(const char *const *names, int nnames)
{
    cll_mpi_process *p = &cll_mpi_;
    int n = cll_experiment_total(), P = p->world_size, arrived = 1, go[2] = {1, (int)++p->reports};
    unsigned uncounted = p->uncounted;
    uint64_t *counts = cll_mpi_zeroed_((size_t)(n + 1) * sizeof *counts);
    uint64_t *theirs = cll_mpi_alloc_(NULL, (size_t)(n + COUNTS_TAIL) * sizeof *theirs);
    int *present = cll_mpi_zeroed_((size_t)P * sizeof *present), late = 0;
    present[0] = 1;
    double deadline = cll_mpi_clock_() + cll_mpi_timeout_();
    MPI_Status status;
    const double *own = NULL;
    int nreference = cll_mpi_extension_ ? cll_mpi_extension_->references(&own) : 0;
    double *reference = cll_mpi_alloc_(NULL, (size_t)nreference * sizeof *reference + 1);
    if (nreference)
        memcpy(reference, own, (size_t)nreference * sizeof *reference);
    while (arrived < P && cll_mpi_wait_message_(MPI_ANY_SOURCE, CLL_TAG_COUNTS, deadline, &status)) {
        int r = status.MPI_SOURCE;
        double gives_up;
        PMPI_Recv(theirs, n + COUNTS_TAIL, MPI_UINT64_T, r, CLL_TAG_COUNTS, p->comm, MPI_STATUS_IGNORE);
        memcpy(&gives_up, &theirs[n + 2], sizeof gives_up);
        if (theirs[n + 1] != p->reports || cll_mpi_clock_() > gives_up - cll_mpi_margin_()) {
            /* an earlier report's, or one whose rank stops waiting before a go would reach it:
             * it keeps its records in its own file (cll_mpi_send_records_) */
            if (cll_mpi_extension_)
                cll_mpi_earliest_references_(r, NULL, 0);
            if (theirs[n + 1] == p->reports) {   /* this report's: the rank is done with it */
                late++;
                arrived++;
            }
            continue;
        }
        for (int i = 0; i < n; i++)
            counts[i] += theirs[i];
        uncounted |= (unsigned)theirs[n];
        present[r] = 1;
        arrived++;
        PMPI_Send(go, 2, MPI_INT, r, CLL_TAG_GO, p->comm);
        if (cll_mpi_extension_)
            cll_mpi_earliest_references_(r, reference, nreference);
    }
    for (int r = 1; cll_mpi_extension_ && r < P; r++)   /* each the earliest of the ranks' that came */
        if (present[r])
            cll_mpi_send_references_(r, reference, nreference);
    char state[4096] = "complete";
    if (arrived < P || late) {
        size_t used = (size_t)snprintf(state, sizeof state, "incomplete: ranks ");
        for (int r = 0, first = 1; r < P && used < sizeof state - 16; r++)
            if (!present[r]) {
                used += (size_t)snprintf(state + used, sizeof state - used, "%s%d", first ? "" : ",", r);
                first = 0;
            }
        snprintf(state + used, sizeof state - used, late ? " were not gathered" : " did not report");
        fprintf(stderr, "cll: warning: report: %s within %g s (CLL_MPI_TIMEOUT%s); %s holds the "
                "other ranks' records; a rank not gathered writes its own to a .rank<r> file next "
                "to it\n", state + 12, cll_mpi_timeout_(),
                late ? ": rank 0 reached report after some had stopped waiting for it" : "", cll_trace_path());
    }
    char *header = cll_mpi_header_(present, uncounted, reference, nreference);
    cll_trace_file *f = cll_trace_open(state, names, nnames, counts, header);
    int ok = f != NULL;
    if (ok && cll_mpi_extension_)
        ok = cll_mpi_extension_->lines(reference, nreference, 0, cll_mpi_append_chunk_, f) == 0;
    free(reference);
    size_t cap = 0;
    char *buf = NULL;
    for (int r = 1; r < P; r++) {
        if (!present[r])
            continue;
        for (;;) {   /* chunks until an empty one */
            int len;
            PMPI_Probe(r, CLL_TAG_DATA, p->comm, &status);
            PMPI_Get_count(&status, MPI_CHAR, &len);
            if ((size_t)len > cap)
                buf = cll_mpi_alloc_(buf, cap = (size_t)len);
            PMPI_Recv(buf, len, MPI_CHAR, r, CLL_TAG_DATA, p->comm, MPI_STATUS_IGNORE);
            if (len == 0)
                break;
            if (ok && cll_trace_append(f, buf, (size_t)len))
                ok = 0;
        }
    }
    if (f && cll_trace_close(f))
        ok = 0;
    for (int r = 1; r < P; r++)
        if (present[r])
            PMPI_Send(&ok, 1, MPI_INT, r, CLL_TAG_ACK, p->comm);
    free(buf), free(header), free(present), free(theirs), free(counts);
    if (!ok) {
        char msg[4400];
        snprintf(msg, sizeof msg, "report: cannot write the gathered trace %s", cll_trace_path());
        cll_mpi_fail_(msg);
    }
    cll_mark_reported();
}

void cll_mpi_report(const char *const *names, int nnames)
{
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!cll_mpi_.started)
        cll_mpi_refuse_(finalized ? "'#pragma cll report' after MPI_Finalize: report before it"
                                : "'#pragma cll report' but MPI_Init was never called: a "
                                  "'#pragma cll parallel MPI' program must call MPI_Init first");
    /* First every rank puts its own records on disk (rank 0 at the trace's path, the others
     * in their .rank<r> file), so that nothing is lost if a rank is killed during the gather. */
    cll_report_status(cll_mpi_.world_rank == 0
                      ? "incomplete: rank 0 was stopped while gathering; the other ranks' "
                        "records are in the .rank<r> files next to this one"
                      : "incomplete: stopped while rank 0 gathered the records", names, nnames);
    if (cll_mpi_.world_rank == 0)
        cll_mpi_gather_records_(names, nnames);
    else
        cll_mpi_send_records_(names, nnames);
}

/* ------------------------------------------------------------------ PMPI wrappers */

/* Wrappers are generated: CLL_MPI_WRAP(MPI_X, (parameters), (arguments), COUNT) defines
 * MPI_X, which calls PMPI_X, adds its time to mpi_time and runs COUNT if it succeeded;
 * CLL_MPI_TWINS also defines the nonblocking twin (the same parameters and a request),
 * counted the same way when it is posted (its counts are known then). */
#define CLL_UNPAREN(...) __VA_ARGS__
#define CLL_MPI_WRAP(NAME, PARAMS, ARGS, COUNT)                                           \
    CLL_WEAK int NAME(CLL_UNPAREN PARAMS)                                                 \
    {                                                                                     \
        CLL_MPI_TIMED(P##NAME(CLL_UNPAREN ARGS));                                         \
        if (rc == MPI_SUCCESS) {                                                          \
            COUNT;                                                                        \
        }                                                                                 \
        return rc;                                                                        \
    }
#define CLL_MPI_TWINS(NAME, INAME, PARAMS, ARGS, COUNT)                                   \
    CLL_MPI_WRAP(NAME, PARAMS, ARGS, COUNT)                                               \
    CLL_MPI_WRAP(INAME, (CLL_UNPAREN PARAMS, MPI_Request *request),                       \
                 (CLL_UNPAREN ARGS, request), COUNT)

/* Point to point: a send counts when it is posted, a receive when it completes (the status
 * says what arrived). */
#define CLL_SEND_PARAMS (const void *buf, int count, MPI_Datatype type, int dest, int tag, \
                         MPI_Comm comm)
#define CLL_SEND_ARGS (buf, count, type, dest, tag, comm)
#define CLL_SEND_COUNT cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(count, type))
#define CLL_SEND_INIT_COUNT                                                                \
    cll_mpi_tracked *t = cll_mpi_track_(*request, comm, CLL_PERSISTENT_SEND);              \
    t->peer = dest;                                                                        \
    t->bytes = cll_mpi_bytes_(count, type)
CLL_MPI_TWINS(MPI_Send, MPI_Isend, CLL_SEND_PARAMS, CLL_SEND_ARGS, CLL_SEND_COUNT)
CLL_MPI_TWINS(MPI_Ssend, MPI_Issend, CLL_SEND_PARAMS, CLL_SEND_ARGS, CLL_SEND_COUNT)
CLL_MPI_TWINS(MPI_Rsend, MPI_Irsend, CLL_SEND_PARAMS, CLL_SEND_ARGS, CLL_SEND_COUNT)
CLL_MPI_TWINS(MPI_Bsend, MPI_Ibsend, CLL_SEND_PARAMS, CLL_SEND_ARGS, CLL_SEND_COUNT)
#define CLL_SEND_INIT(NAME)                                                                \
    CLL_MPI_WRAP(NAME, (CLL_UNPAREN CLL_SEND_PARAMS, MPI_Request *request),                \
                 (CLL_UNPAREN CLL_SEND_ARGS, request), CLL_SEND_INIT_COUNT)
CLL_SEND_INIT(MPI_Send_init)
CLL_SEND_INIT(MPI_Ssend_init)
CLL_SEND_INIT(MPI_Rsend_init)
CLL_SEND_INIT(MPI_Bsend_init)

#define CLL_RECV_PARAMS (void *buf, int count, MPI_Datatype type, int source, int tag, \
                         MPI_Comm comm, MPI_Request *request)
#define CLL_RECV_ARGS (buf, count, type, source, tag, comm, request)
CLL_MPI_WRAP(MPI_Irecv, CLL_RECV_PARAMS, CLL_RECV_ARGS, cll_mpi_track_(*request, comm, CLL_RECV))
CLL_MPI_WRAP(MPI_Recv_init, CLL_RECV_PARAMS, CLL_RECV_ARGS,
             cll_mpi_track_(*request, comm, CLL_PERSISTENT_RECV))

/* A status to hand to MPI when the caller passes MPI_STATUS_IGNORE (receives need it). */
#define CLL_STATUS(status)                                                                 \
    MPI_Status cll_mine_;                                                                  \
    MPI_Status *st = (status) == MPI_STATUS_IGNORE ? &cll_mine_ : (status)

CLL_WEAK int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, MPI_Status *status)
{
    CLL_STATUS(status);
    CLL_MPI_TIMED(PMPI_Recv(buf, count, type, source, tag, comm, st));
    if (rc == MPI_SUCCESS)
        cll_mpi_received_(comm, st);
    return rc;
}

CLL_WEAK int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CLL_STATUS(status);
    CLL_MPI_TIMED(PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                recvtype, source, recvtag, comm, st));
    if (rc == MPI_SUCCESS) {
        cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(sendcount, sendtype));
        cll_mpi_received_(comm, st);
    }
    return rc;
}

CLL_WEAK int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                                  int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CLL_STATUS(status);
    CLL_MPI_TIMED(PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st));
    if (rc == MPI_SUCCESS) {
        cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(count, type));
        cll_mpi_received_(comm, st);
    }
    return rc;
}

/* Matched probes: the message remembers its communicator until Mrecv/Imrecv receives it. */
CLL_MPI_WRAP(MPI_Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message,
                          MPI_Status *status),
             (source, tag, comm, message, status), cll_mpi_probed_add_(*message, comm))
CLL_MPI_WRAP(MPI_Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                           MPI_Status *status),
             (source, tag, comm, flag, message, status),
             if (*flag) cll_mpi_probed_add_(*message, comm))

CLL_WEAK int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                       MPI_Status *status)
{
    CLL_STATUS(status);
    MPI_Comm comm = cll_mpi_probed_take_(*message);
    CLL_MPI_TIMED(PMPI_Mrecv(buf, count, type, message, st));
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
        cll_mpi_received_(comm, st);
    return rc;
}

CLL_WEAK int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                        MPI_Request *request)
{
    MPI_Comm comm = cll_mpi_probed_take_(*message);
    CLL_MPI_TIMED(PMPI_Imrecv(buf, count, type, message, request));
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
        cll_mpi_track_(*request, comm, CLL_RECV);
    return rc;
}

/* Persistent requests: a send counts at each start, a receive at each completion. */
CLL_MPI_WRAP(MPI_Start, (MPI_Request *request), (request), cll_mpi_started_(*request))
CLL_MPI_WRAP(MPI_Startall, (int n, MPI_Request *requests), (n, requests),
             for (int i = 0; i < n; i++) cll_mpi_started_(requests[i]))

/* Freeing a tracked request: a receive that already completed is counted now; one that
 * has not will complete unseen (noted for the trace header). */
CLL_WEAK int MPI_Request_free(MPI_Request *request)
{
    cll_mpi_tracked *t = cll_mpi_find_(*request);
    if (t) {
        int done = 0;
        MPI_Status status;
        if (t->kind != CLL_PERSISTENT_SEND && (t->kind == CLL_RECV || t->active)) {
            PMPI_Request_get_status(*request, &done, &status);
            if (done)
                cll_mpi_completed_(*request, &status);
            else
                cll_mpi_.uncounted |= CLL_UNCOUNTED_FREED;
        }
        if ((t = cll_mpi_find_(*request)))
            cll_mpi_forget_(t);
    }
    CLL_MPI_TIMED(PMPI_Request_free(request));
    return rc;
}

/* Completion: Wait/Test of one, all, any or some requests count the tracked receives. */
CLL_WEAK int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    CLL_STATUS(status);
    MPI_Request before = *request;
    CLL_MPI_TIMED(PMPI_Wait(request, st));
    if (rc == MPI_SUCCESS)
        cll_mpi_completed_(before, st);
    return rc;
}

CLL_WEAK int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    CLL_STATUS(status);
    MPI_Request before = *request;
    CLL_MPI_TIMED(PMPI_Test(request, flag, st));
    if (rc == MPI_SUCCESS && *flag)
        cll_mpi_completed_(before, st);
    return rc;
}

/* A call completing some of `n` requests, with an array of statuses: DONE of them
 * completed (those at INDICES, or the first DONE when INDICES is NULL). */
#define CLL_MPI_COMPLETE(NAME, PARAMS, ARGS, DONE, INDICES)                               \
    CLL_WEAK int NAME(CLL_UNPAREN PARAMS)                                                 \
    {                                                                                     \
        cll_mpi_batch b;                                                                  \
        MPI_Status *st = cll_mpi_batch_begin_(&b, n, requests, statuses);                 \
        CLL_MPI_TIMED(P##NAME(CLL_UNPAREN ARGS));                                         \
        cll_mpi_batch_end_(&b, rc, DONE, INDICES);                                        \
        return rc;                                                                        \
    }
CLL_MPI_COMPLETE(MPI_Waitall, (int n, MPI_Request *requests, MPI_Status *statuses),
                 (n, requests, st), n, NULL)
CLL_MPI_COMPLETE(MPI_Testall, (int n, MPI_Request *requests, int *flag, MPI_Status *statuses),
                 (n, requests, flag, st), *flag ? n : 0, NULL)
CLL_MPI_COMPLETE(MPI_Waitsome, (int n, MPI_Request *requests, int *outcount, int *indices,
                                MPI_Status *statuses),
                 (n, requests, outcount, indices, st), *outcount, indices)
CLL_MPI_COMPLETE(MPI_Testsome, (int n, MPI_Request *requests, int *outcount, int *indices,
                                MPI_Status *statuses),
                 (n, requests, outcount, indices, st), *outcount, indices)

/* Waitany, Testany: one request of `n` completed (at *index) if DONE, with one status. */
#define CLL_MPI_COMPLETE_ONE(NAME, PARAMS, ARGS, DONE)                                    \
    CLL_WEAK int NAME(CLL_UNPAREN PARAMS)                                                 \
    {                                                                                     \
        cll_mpi_batch b;                                                                  \
        CLL_STATUS(status);                                                               \
        cll_mpi_batch_begin_(&b, n, requests, st);                                        \
        CLL_MPI_TIMED(P##NAME(CLL_UNPAREN ARGS));                                         \
        cll_mpi_batch_end_(&b, rc, DONE, index);                                          \
        return rc;                                                                        \
    }
CLL_MPI_COMPLETE_ONE(MPI_Waitany, (int n, MPI_Request *requests, int *index, MPI_Status *status),
                     (n, requests, index, st), *index != MPI_UNDEFINED)
CLL_MPI_COMPLETE_ONE(MPI_Testany, (int n, MPI_Request *requests, int *index, int *flag,
                                   MPI_Status *status),
                     (n, requests, index, flag, st), *flag && *index != MPI_UNDEFINED)

/* Collectives, blocking and nonblocking, count the data each rank logically contributes
 * and receives, as if sent directly (not the messages of the library's algorithm); a rank's
 * own part is not communication, nor is an empty block. Barrier and Comm_split count time
 * only. */
#define CLL_NOTHING ((void)0)
CLL_MPI_TWINS(MPI_Barrier, MPI_Ibarrier, (MPI_Comm comm), (comm), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm),
             (comm, color, key, newcomm), CLL_NOTHING)

CLL_MPI_TWINS(MPI_Bcast, MPI_Ibcast,
              (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
              (buf, count, type, root, comm),
              cll_mpi_count_rooted_(comm, root, 1, CLL_SAME(count, type), count, type))

#define CLL_GATHER_PARAMS (const void *sendbuf, int sendcount, MPI_Datatype sendtype,   \
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, \
                           MPI_Comm comm)
#define CLL_GATHER_ARGS (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)
CLL_MPI_TWINS(MPI_Gather, MPI_Igather, CLL_GATHER_PARAMS, CLL_GATHER_ARGS,
              cll_mpi_count_rooted_(comm, root, 0, CLL_SAME(recvcount, recvtype), sendcount,
                                    sendtype))
CLL_MPI_TWINS(MPI_Scatter, MPI_Iscatter, CLL_GATHER_PARAMS, CLL_GATHER_ARGS,
              cll_mpi_count_rooted_(comm, root, 1, CLL_SAME(sendcount, sendtype), recvcount,
                                    recvtype))
CLL_MPI_TWINS(MPI_Gatherv, MPI_Igatherv,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
               MPI_Comm comm),
              (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
              cll_mpi_count_rooted_(comm, root, 0, CLL_VARY(recvcounts, recvtype), sendcount,
                                    sendtype))
CLL_MPI_TWINS(MPI_Scatterv, MPI_Iscatterv,
              (const void *sendbuf, const int sendcounts[], const int displs[],
               MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
               int root, MPI_Comm comm),
              (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
              cll_mpi_count_rooted_(comm, root, 1, CLL_VARY(sendcounts, sendtype), recvcount,
                                    recvtype))

#define CLL_REDUCE_PARAMS const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, \
                          MPI_Op op
#define CLL_REDUCE_ARGS sendbuf, recvbuf, count, type, op
CLL_MPI_TWINS(MPI_Reduce, MPI_Ireduce, (CLL_REDUCE_PARAMS, int root, MPI_Comm comm),
              (CLL_REDUCE_ARGS, root, comm),
              cll_mpi_count_rooted_(comm, root, 0, CLL_SAME(count, type), count, type))
CLL_MPI_TWINS(MPI_Allreduce, MPI_Iallreduce, (CLL_REDUCE_PARAMS, MPI_Comm comm),
              (CLL_REDUCE_ARGS, comm),
              cll_mpi_count_exchange_(comm, CLL_SAME(count, type), CLL_SAME(count, type)))
CLL_MPI_TWINS(MPI_Scan, MPI_Iscan, (CLL_REDUCE_PARAMS, MPI_Comm comm), (CLL_REDUCE_ARGS, comm),
              cll_mpi_count_prefix_(comm, count, type))
CLL_MPI_TWINS(MPI_Exscan, MPI_Iexscan, (CLL_REDUCE_PARAMS, MPI_Comm comm), (CLL_REDUCE_ARGS, comm),
              cll_mpi_count_prefix_(comm, count, type))
CLL_MPI_TWINS(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
              (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm),
              (sendbuf, recvbuf, recvcount, type, op, comm),
              cll_mpi_count_reduce_scatter_(comm, CLL_SAME(recvcount, type)))
CLL_MPI_TWINS(MPI_Reduce_scatter, MPI_Ireduce_scatter,
              (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
               MPI_Op op, MPI_Comm comm),
              (sendbuf, recvbuf, recvcounts, type, op, comm),
              cll_mpi_count_reduce_scatter_(comm, CLL_VARY(recvcounts, type)))

#define CLL_ALL_PARAMS (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
#define CLL_ALL_ARGS (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
#define CLL_ALL_COUNT(exchange)                                                            \
    exchange(comm, CLL_IN_PLACE(sendbuf, CLL_SAME(recvcount, recvtype),                    \
                                CLL_SAME(sendcount, sendtype)),                            \
             CLL_SAME(recvcount, recvtype))
CLL_MPI_TWINS(MPI_Allgather, MPI_Iallgather, CLL_ALL_PARAMS, CLL_ALL_ARGS,
              CLL_ALL_COUNT(cll_mpi_count_exchange_))
CLL_MPI_TWINS(MPI_Alltoall, MPI_Ialltoall, CLL_ALL_PARAMS, CLL_ALL_ARGS,
              CLL_ALL_COUNT(cll_mpi_count_exchange_))
CLL_MPI_TWINS(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, CLL_ALL_PARAMS, CLL_ALL_ARGS,
              CLL_ALL_COUNT(cll_mpi_count_neighbors_))
CLL_MPI_TWINS(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, CLL_ALL_PARAMS, CLL_ALL_ARGS,
              CLL_ALL_COUNT(cll_mpi_count_neighbors_))

#define CLL_ALLGATHERV_PARAMS (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                               void *recvbuf, const int recvcounts[], const int displs[],    \
                               MPI_Datatype recvtype, MPI_Comm comm)
#define CLL_ALLGATHERV_ARGS (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, \
                             recvtype, comm)
CLL_MPI_TWINS(MPI_Allgatherv, MPI_Iallgatherv, CLL_ALLGATHERV_PARAMS, CLL_ALLGATHERV_ARGS,
              cll_mpi_count_allgatherv_(comm, sendbuf == MPI_IN_PLACE, sendcount, sendtype,
                                        recvcounts, recvtype))
CLL_MPI_TWINS(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, CLL_ALLGATHERV_PARAMS,
              CLL_ALLGATHERV_ARGS,
              cll_mpi_count_neighbors_(comm, CLL_SAME(sendcount, sendtype),
                                       CLL_VARY(recvcounts, recvtype)))

#define CLL_ALLTOALLV_PARAMS (const void *sendbuf, const int sendcounts[], const int sdispls[], \
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],    \
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define CLL_ALLTOALLV_ARGS (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, \
                            rdispls, recvtype, comm)
#define CLL_ALLTOALLV_COUNT(exchange)                                                      \
    exchange(comm, CLL_IN_PLACE(sendbuf, CLL_VARY(recvcounts, recvtype),                   \
                                CLL_VARY(sendcounts, sendtype)),                           \
             CLL_VARY(recvcounts, recvtype))
CLL_MPI_TWINS(MPI_Alltoallv, MPI_Ialltoallv, CLL_ALLTOALLV_PARAMS, CLL_ALLTOALLV_ARGS,
              CLL_ALLTOALLV_COUNT(cll_mpi_count_exchange_))
CLL_MPI_TWINS(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, CLL_ALLTOALLV_PARAMS,
              CLL_ALLTOALLV_ARGS, CLL_ALLTOALLV_COUNT(cll_mpi_count_neighbors_))

#define CLL_ALLTOALLW_PARAMS(DISPLS)                                                       \
    (const void *sendbuf, const int sendcounts[], const DISPLS sdispls[],                  \
     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],                \
     const DISPLS rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
#define CLL_ALLTOALLW_ARGS (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, \
                            rdispls, recvtypes, comm)
#define CLL_ALLTOALLW_COUNT(exchange)                                                      \
    exchange(comm, CLL_IN_PLACE(sendbuf, CLL_EACH(recvcounts, recvtypes),                  \
                                CLL_EACH(sendcounts, sendtypes)),                          \
             CLL_EACH(recvcounts, recvtypes))
CLL_MPI_TWINS(MPI_Alltoallw, MPI_Ialltoallw, CLL_ALLTOALLW_PARAMS(int), CLL_ALLTOALLW_ARGS,
              CLL_ALLTOALLW_COUNT(cll_mpi_count_exchange_))
CLL_MPI_TWINS(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, CLL_ALLTOALLW_PARAMS(MPI_Aint),
              CLL_ALLTOALLW_ARGS, CLL_ALLTOALLW_COUNT(cll_mpi_count_neighbors_))

/* One-sided communication counts at the origin when the call is made: Put and Accumulate
 * send the origin buffer to the target, Get receives into it, Get_accumulate and
 * Fetch_and_op do both (MPI_NO_OP sends nothing), Compare_and_swap sends the value and the
 * comparand and receives the old value. The target counts nothing. Synchronisation
 * (fence, lock, flush, ...) counts time only. */
#define CLL_RMA_TARGET int target_rank, MPI_Aint target_disp, int target_count, \
                       MPI_Datatype target_datatype
#define CLL_RMA_TARGET_ARGS target_rank, target_disp, target_count, target_datatype
#define CLL_RMA_ORIGIN const void *origin_addr, int origin_count, MPI_Datatype origin_datatype
#define CLL_RMA_ORIGIN_ARGS origin_addr, origin_count, origin_datatype
#define CLL_RMA_SENT cll_mpi_bytes_(origin_count, origin_datatype)
CLL_MPI_TWINS(MPI_Put, MPI_Rput, (CLL_RMA_ORIGIN, CLL_RMA_TARGET, MPI_Win win),
              (CLL_RMA_ORIGIN_ARGS, CLL_RMA_TARGET_ARGS, win),
              cll_mpi_count_target_(win, target_rank, 1, CLL_RMA_SENT, 0, 0))
CLL_MPI_TWINS(MPI_Get, MPI_Rget,
              (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, CLL_RMA_TARGET,
               MPI_Win win),
              (CLL_RMA_ORIGIN_ARGS, CLL_RMA_TARGET_ARGS, win),
              cll_mpi_count_target_(win, target_rank, 0, 0, 1, CLL_RMA_SENT))
CLL_MPI_TWINS(MPI_Accumulate, MPI_Raccumulate,
              (CLL_RMA_ORIGIN, CLL_RMA_TARGET, MPI_Op op, MPI_Win win),
              (CLL_RMA_ORIGIN_ARGS, CLL_RMA_TARGET_ARGS, op, win),
              cll_mpi_count_target_(win, target_rank, 1, CLL_RMA_SENT, 0, 0))
CLL_MPI_TWINS(MPI_Get_accumulate, MPI_Rget_accumulate,
              (CLL_RMA_ORIGIN, void *result_addr, int result_count, MPI_Datatype result_datatype,
               CLL_RMA_TARGET, MPI_Op op, MPI_Win win),
              (CLL_RMA_ORIGIN_ARGS, result_addr, result_count, result_datatype,
               CLL_RMA_TARGET_ARGS, op, win),
              cll_mpi_count_target_(win, target_rank, op != MPI_NO_OP, CLL_RMA_SENT, 1,
                                    cll_mpi_bytes_(result_count, result_datatype)))
CLL_MPI_WRAP(MPI_Fetch_and_op,
             (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
              MPI_Aint target_disp, MPI_Op op, MPI_Win win),
             (origin_addr, result_addr, datatype, target_rank, target_disp, op, win),
             cll_mpi_count_target_(win, target_rank, op != MPI_NO_OP, cll_mpi_bytes_(1, datatype),
                                   1, cll_mpi_bytes_(1, datatype)))
CLL_MPI_WRAP(MPI_Compare_and_swap,
             (const void *origin_addr, const void *compare_addr, void *result_addr,
              MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win),
             (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win),
             cll_mpi_count_target_(win, target_rank, 1, cll_mpi_bytes_(2, datatype), 1,
                                   cll_mpi_bytes_(1, datatype)))
CLL_MPI_WRAP(MPI_Win_fence, (int assertion, MPI_Win win), (assertion, win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_unlock, (int rank, MPI_Win win), (rank, win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_unlock_all, (MPI_Win win), (win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_flush, (int rank, MPI_Win win), (rank, win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_flush_all, (MPI_Win win), (win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_complete, (MPI_Win win), (win), CLL_NOTHING)
CLL_MPI_WRAP(MPI_Win_wait, (MPI_Win win), (win), CLL_NOTHING)

/* MPI-IO moves data to files, not between ranks: not counted, but noted for the header
 * (when the MPI library has MPI-IO at all). */
#ifdef MPI_MODE_RDONLY
CLL_MPI_WRAP(MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                             MPI_File *fh),
             (comm, filename, amode, info, fh), cll_mpi_.uncounted |= CLL_UNCOUNTED_IO)
#endif
