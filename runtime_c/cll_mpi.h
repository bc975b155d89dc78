/* cll_mpi.h -- MPI support of the CALL tracing runtime, compiled by the user's own mpicc.
 *
 * The generated `prog.cll.h` of a `#pragma cll parallel MPI` program includes this header,
 * so every MPI call below is compiled against the user's MPI (Open MPI or MPICH) and the
 * runtime library (libcllrt.a) never calls MPI. It provides (docs/mpi.md):
 *
 *   - PMPI wrappers of MPI_Init/Init_thread (start-up: P, rank, clock offsets) and of the
 *     point-to-point, completion and collective calls, which count per thread messages and
 *     bytes sent and received, distinct partners and time inside MPI;
 *   - cll_mpi_begin_/cll_mpi_end_, which turn those counters into the seven measured
 *     columns of each record (msgs_sent bytes_sent msgs_recv bytes_recv partners h mpi_time);
 *   - cll_mpi_report_, which gathers every rank's records on rank 0 (in chunks, with a
 *     timeout naming ranks that never arrive) into one trace; each rank first writes its own
 *     records to disk, and a rank drops its copy only once rank 0 says the trace is written.
 *
 * Every definition is weak: each translation unit of a multi-file program includes this
 * header and the linker keeps one copy of each function and of the shared state, so there
 * are no multiple definitions. Accounting assumes MPI is called by one thread at a time
 * (MPI_THREAD_FUNNELED or SERIALIZED); it is attributed to the experiments open in the
 * calling thread.
 */
#ifndef CLL_MPI_H
#define CLL_MPI_H

#include "cll.h"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLL_WEAK __attribute__((weak))
#define CLL_MPI_COLUMNS 7   /* msgs_sent bytes_sent msgs_recv bytes_recv partners h mpi_time */
#define CLL_MPI_COLUMN_NAMES "msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners", \
                             "h", "mpi_time"
enum { CLL_TAG_COUNTS = 7101, CLL_TAG_GO, CLL_TAG_DATA, CLL_TAG_ACK, CLL_TAG_CLOCK };

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

/* Process-wide state. */
typedef struct cll_mpi_process {
    int started, world_rank, world_size, keyval;
    MPI_Comm comm;           /* private duplicate of MPI_COMM_WORLD for the runtime's messages */
    double *clock_offsets;   /* rank 0: each rank's CLOCK_MONOTONIC minus rank 0's, seconds */
    struct { MPI_Request request; MPI_Comm comm; } *pending;  /* posted receives */
    int npending, cap_pending;
} cll_mpi_process;

CLL_WEAK __thread cll_mpi_thread cll_mpi_self_;
CLL_WEAK cll_mpi_process cll_mpi_;

CLL_WEAK void cll_mpi_fail_(const char *what)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "cll: error: %s", what);
    cll_fail(msg, what);
}

CLL_WEAK void *cll_mpi_alloc_(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p)
        cll_mpi_fail_("out of memory in the MPI accounting");
    return p;
}

CLL_WEAK void *cll_mpi_zeroed_(size_t size)
{
    return memset(cll_mpi_alloc_(NULL, size), 0, size);
}

/* ------------------------------------------------------------------ accounting */

/* Rank `rank` of `comm` as a rank of MPI_COMM_WORLD (a table per communicator, cached as an
 * attribute); -1 for MPI_PROC_NULL or a rank outside the world group. */
CLL_WEAK int cll_mpi_world_rank_(MPI_Comm comm, int rank)
{
    if (rank < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return rank;
    int *table, found = 0, inter = 0;
    PMPI_Comm_get_attr(comm, cll_mpi_.keyval, &table, &found);
    if (!found) {
        MPI_Group group, world;
        int n;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_group(comm, &group);
        else
            PMPI_Comm_group(comm, &group);
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
        PMPI_Group_size(group, &n);
        int *ranks = cll_mpi_alloc_(NULL, (size_t)n * sizeof *ranks);
        table = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *table);
        table[0] = n;
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, n, ranks, world, table + 1);
        free(ranks);
        PMPI_Group_free(&group);
        PMPI_Group_free(&world);
        PMPI_Comm_set_attr(comm, cll_mpi_.keyval, table);
    }
    return rank < table[0] && table[rank + 1] != MPI_UNDEFINED ? table[rank + 1] : -1;
}

/* One message of `bytes` to (sent) or from (!sent) rank `rank` of `comm`: count it, and the
 * partner for every open experiment that has not exchanged with it yet. */
CLL_WEAK void cll_mpi_count_(MPI_Comm comm, int rank, int sent, uint64_t bytes)
{
    int world = cll_mpi_.started ? cll_mpi_world_rank_(comm, rank) : -1;
    if (world < 0)
        return;
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

/* `count` elements of `type` in bytes. */
CLL_WEAK uint64_t cll_mpi_bytes_(int count, MPI_Datatype type)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_size(type, &size);
    return (uint64_t)(count > 0 ? count : 0) * (uint64_t)(size > 0 ? size : 0);
}

/* A completed receive described by `status`: bytes from the status itself. */
CLL_WEAK void cll_mpi_received_(MPI_Comm comm, const MPI_Status *status)
{
    int bytes = 0;
    if (status->MPI_SOURCE == MPI_PROC_NULL || status->MPI_SOURCE == MPI_ANY_SOURCE)
        return;
    PMPI_Get_count(status, MPI_BYTE, &bytes);
    cll_mpi_count_(comm, status->MPI_SOURCE, 0, bytes == MPI_UNDEFINED ? 0 : (uint64_t)bytes);
}

/* The same message to (sent) or from every rank of `comm` but this one. */
CLL_WEAK void cll_mpi_count_all_(MPI_Comm comm, int sent, uint64_t bytes)
{
    int size, me;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &me);
    for (int r = 0; r < size; r++)
        if (r != me)
            cll_mpi_count_(comm, r, sent, bytes);
}

/* An all-to-all exchange (Alltoall, Allgather): every rank sends its block to and receives a
 * block from every other rank; in place, what it sends has the receive block's size. */
CLL_WEAK void cll_mpi_count_exchange_(MPI_Comm comm, int in_place, int sendcount,
                                      MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype)
{
    uint64_t received = cll_mpi_bytes_(recvcount, recvtype);
    cll_mpi_count_all_(comm, 1, in_place ? received : cll_mpi_bytes_(sendcount, sendtype));
    cll_mpi_count_all_(comm, 0, received);
}

/* A rooted collective: the root exchanges `bytes` with every other rank (sends if
 * `root_sends`), each other rank the opposite way with the root. */
CLL_WEAK void cll_mpi_count_rooted_(MPI_Comm comm, int root, int root_sends, uint64_t bytes)
{
    int me;
    PMPI_Comm_rank(comm, &me);
    if (me == root)
        cll_mpi_count_all_(comm, root_sends, bytes);
    else
        cll_mpi_count_(comm, root, !root_sends, bytes);
}

/* A receive request posted by MPI_Irecv, counted when it completes. */
CLL_WEAK void cll_mpi_pending_add_(MPI_Request request, MPI_Comm comm)
{
    cll_mpi_process *p = &cll_mpi_;
    if (p->npending == p->cap_pending) {
        p->cap_pending = p->cap_pending ? 2 * p->cap_pending : 16;
        p->pending = cll_mpi_alloc_(p->pending, (size_t)p->cap_pending * sizeof *p->pending);
    }
    p->pending[p->npending].request = request;
    p->pending[p->npending++].comm = comm;
}

/* Request `request` (its handle before completion) completed with `status`: if it was a
 * posted receive, count it and forget it. */
CLL_WEAK void cll_mpi_completed_(MPI_Request request, const MPI_Status *status)
{
    cll_mpi_process *p = &cll_mpi_;
    for (int i = 0; i < p->npending; i++)
        if (p->pending[i].request == request) {
            MPI_Comm comm = p->pending[i].comm;
            p->pending[i] = p->pending[--p->npending];
            cll_mpi_received_(comm, status);
            return;
        }
}

#define CLL_MPI_TIMED(call)                                                               \
    uint64_t cll_t0_ = cll_ticks();                                                       \
    int rc = (call);                                                                      \
    cll_mpi_self_.mpi_ticks += cll_ticks() - cll_t0_

/* ------------------------------------------------------------------ experiments */

CLL_WEAK void cll_mpi_begin_(cll_experiment *e, double *values)
{
    if (!cll_mpi_.started) {
        char msg[512];
        snprintf(msg, sizeof msg, "experiment '%s' (%s) begins before MPI_Init: a '#pragma cll "
                 "parallel MPI' program must call MPI_Init first", e->name, e->source);
        cll_mpi_fail_(msg);
    }
    cll_mpi_thread *t = &cll_mpi_self_;
    if (t->depth == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->open = cll_mpi_alloc_(t->open, (size_t)t->cap * sizeof *t->open);
    }
    t->open[t->depth].start = ++t->event;
    t->open[t->depth++].partners = 0;
    double *c = values + e->nvars - CLL_MPI_COLUMNS;
    c[0] = (double)t->msgs_sent;
    c[1] = (double)t->bytes_sent;
    c[2] = (double)t->msgs_recv;
    c[3] = (double)t->bytes_recv;
    c[4] = c[5] = 0;
    c[6] = (double)t->mpi_ticks;
    cll_begin(e, values);
}

CLL_WEAK void cll_mpi_end_(cll_experiment *e, const char *site)
{
    cll_mpi_thread *t = &cll_mpi_self_;
    double *v = cll_open_values(e);
    if (v && t->depth > 0) {   /* otherwise cll_end reports the mismatch */
        double *c = v + e->nvars - CLL_MPI_COLUMNS;
        c[0] = (double)t->msgs_sent - c[0];
        c[1] = (double)t->bytes_sent - c[1];
        c[2] = (double)t->msgs_recv - c[2];
        c[3] = (double)t->bytes_recv - c[3];
        c[4] = (double)t->open[--t->depth].partners;
        c[5] = c[1] + c[3];
        c[6] = ((double)t->mpi_ticks - c[6]) * cll_seconds_per_tick();
    }
    cll_end(e, site);
}

/* P: the size of `comm` (0 before MPI_Init: the experiment's begin then says why). */
CLL_WEAK int cll_mpi_procs_(MPI_Comm comm)
{
    int size = 0, up = 0;
    PMPI_Initialized(&up);
    if (up)
        PMPI_Comm_size(comm, &size);
    return size;
}

/* `sync`: a barrier on `comm` (not counted as the program's communication). */
CLL_WEAK void cll_mpi_sync_(MPI_Comm comm)
{
    if (cll_mpi_.started)
        PMPI_Barrier(comm);
}

/* ------------------------------------------------------------------ start-up */

CLL_WEAK double cll_mpi_clock_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 learns each rank's clock offset: the best of 5 ping-pongs (shortest round trip),
 * offset = remote time - midpoint of the round trip. */
CLL_WEAK void cll_mpi_measure_offsets_(void)
{
    cll_mpi_process *p = &cll_mpi_;
    double remote;
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
        }
    } else {
        for (int i = 0; i < 5; i++) {
            PMPI_Recv(&remote, 1, MPI_DOUBLE, 0, CLL_TAG_CLOCK, p->comm, MPI_STATUS_IGNORE);
            remote = cll_mpi_clock_();
            PMPI_Send(&remote, 1, MPI_DOUBLE, 0, CLL_TAG_CLOCK, p->comm);
        }
    }
}

CLL_WEAK int cll_mpi_free_table_(MPI_Comm comm, int keyval, void *table, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(table);
    return MPI_SUCCESS;
}

/* After MPI_Init: P and rank for the trace, the runtime's own communicator, clock offsets,
 * and the runtime's signal handlers back (MPI libraries install their own). */
CLL_WEAK void cll_mpi_start_(void)
{
    cll_mpi_process *p = &cll_mpi_;
    PMPI_Comm_dup(MPI_COMM_WORLD, &p->comm);
    PMPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(MPI_COMM_WORLD, &p->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &p->world_size);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cll_mpi_free_table_, &p->keyval, NULL);
    cll_set_procs(p->world_size, p->world_rank);
    cll_mpi_measure_offsets_();
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

/* ------------------------------------------------------------------ report: gather */

/* Seconds rank 0 waits for the other ranks at report (env CLL_MPI_TIMEOUT, default 60). */
CLL_WEAK double cll_mpi_timeout_(void)
{
    const char *env = getenv("CLL_MPI_TIMEOUT");
    double t = env ? atof(env) : 0;
    return t > 0 ? t : 60;
}

/* Bytes per message of records (env CLL_MPI_CHUNK, default 1 MiB). */
CLL_WEAK size_t cll_mpi_chunk_(void)
{
    const char *env = getenv("CLL_MPI_CHUNK");
    long n = env ? atol(env) : 0;
    return n >= 4096 ? (size_t)n : (size_t)1 << 20;
}

/* Wait for a message with `tag` from `source` (MPI_ANY_SOURCE allowed) until `deadline`
 * (cll_mpi_clock_ seconds); 1 and its status if one came, 0 on timeout. */
CLL_WEAK int cll_mpi_wait_message_(int source, int tag, double deadline, MPI_Status *status)
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

CLL_WEAK int cll_mpi_send_chunk_(const char *text, size_t len, void *ctx)
{
    (void)ctx;
    return PMPI_Send(text, (int)len, MPI_CHAR, 0, CLL_TAG_DATA, cll_mpi_.comm) != MPI_SUCCESS;
}

/* Rank r > 0: send the record counts, and the records when rank 0 says go; the records
 * count as reported once rank 0 acknowledges the trace is on disk. Otherwise they stay with
 * this rank, which writes them to its own file. */
CLL_WEAK void cll_mpi_send_records_(const char *const *names, int nnames)
{
    cll_mpi_process *p = &cll_mpi_;
    int n = cll_experiment_total(), go = 0, ack = 0;
    uint64_t *counts = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *counts);
    MPI_Status status;
    if (cll_record_counts(names, nnames, counts))
        cll_mpi_fail_("report: cannot read this rank's spilled records");
    PMPI_Send(counts, n, MPI_UINT64_T, 0, CLL_TAG_COUNTS, p->comm);
    free(counts);
    if (cll_mpi_wait_message_(0, CLL_TAG_GO, cll_mpi_clock_() + cll_mpi_timeout_(), &status)) {
        PMPI_Recv(&go, 1, MPI_INT, 0, CLL_TAG_GO, p->comm, MPI_STATUS_IGNORE);
    }
    if (go) {
        if (cll_records_text(names, nnames, cll_mpi_chunk_(), cll_mpi_send_chunk_, NULL))
            cll_mpi_fail_("report: cannot send this rank's records to rank 0");
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
 * offsets and the ranks in the file. */
CLL_WEAK char *cll_mpi_header_(const int *present)
{
    cll_mpi_process *p = &cll_mpi_;
    size_t size = 64 + (size_t)p->world_size * 40, used;
    char *text = cll_mpi_alloc_(NULL, size);
    used = (size_t)snprintf(text, size, "#cores: %ld\n#clock_offsets:", sysconf(_SC_NPROCESSORS_ONLN));
    for (int r = 0; r < p->world_size; r++)
        used += (size_t)snprintf(text + used, size - used, " %.9g", p->clock_offsets[r]);
    used += (size_t)snprintf(text + used, size - used, "\n#ranks:");
    for (int r = 0; r < p->world_size; r++)
        if (present[r])
            used += (size_t)snprintf(text + used, size - used, " %d", r);
    snprintf(text + used, size - used, "\n");
    return text;
}

/* Rank 0: collect every rank's counts (waiting at most the timeout), write the header and
 * its own records, then each present rank's records as they arrive, and acknowledge. */
CLL_WEAK void cll_mpi_gather_records_(const char *const *names, int nnames)
{
    cll_mpi_process *p = &cll_mpi_;
    int n = cll_experiment_total(), P = p->world_size, arrived = 1, go = 1;
    uint64_t *counts = cll_mpi_zeroed_((size_t)(n + 1) * sizeof *counts);
    uint64_t *theirs = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *theirs);
    int *present = cll_mpi_zeroed_((size_t)P * sizeof *present);
    present[0] = 1;
    double deadline = cll_mpi_clock_() + cll_mpi_timeout_();
    MPI_Status status;
    while (arrived < P && cll_mpi_wait_message_(MPI_ANY_SOURCE, CLL_TAG_COUNTS, deadline, &status)) {
        int r = status.MPI_SOURCE;
        PMPI_Recv(theirs, n, MPI_UINT64_T, r, CLL_TAG_COUNTS, p->comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            counts[i] += theirs[i];
        present[r] = 1;
        arrived++;
        PMPI_Send(&go, 1, MPI_INT, r, CLL_TAG_GO, p->comm);
    }
    char state[4096] = "complete";
    if (arrived < P) {
        size_t used = (size_t)snprintf(state, sizeof state, "incomplete: ranks ");
        for (int r = 0, first = 1; r < P && used < sizeof state - 16; r++)
            if (!present[r]) {
                used += (size_t)snprintf(state + used, sizeof state - used, "%s%d", first ? "" : ",", r);
                first = 0;
            }
        snprintf(state + used, sizeof state - used, " did not report");
        fprintf(stderr, "cll: warning: report: %s within %g s (CLL_MPI_TIMEOUT); %s holds the "
                "other ranks' records; a rank that never reports writes its own to a .rank<r> "
                "file next to it when it ends\n", state + 12, cll_mpi_timeout_(), cll_trace_path());
    }
    char *header = cll_mpi_header_(present);
    cll_trace_file *f = cll_trace_open(state, names, nnames, counts, header);
    int ok = f != NULL;
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

/* `#pragma cll report` in an MPI program: gather on rank 0, which writes prog.cll.<P>.dat. */
CLL_WEAK void cll_mpi_report_(const char *const *names, int nnames)
{
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!cll_mpi_.started)
        cll_mpi_fail_(finalized ? "'#pragma cll report' after MPI_Finalize: report before it"
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

#define CLL_MPI_SEND(NAME, PNAME)                                                           \
    CLL_WEAK int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,     \
                      MPI_Comm comm)                                                        \
    {                                                                                       \
        CLL_MPI_TIMED(PNAME(buf, count, type, dest, tag, comm));                            \
        cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(count, type));                         \
        return rc;                                                                          \
    }
CLL_MPI_SEND(MPI_Send, PMPI_Send)
CLL_MPI_SEND(MPI_Ssend, PMPI_Ssend)
CLL_MPI_SEND(MPI_Rsend, PMPI_Rsend)
CLL_MPI_SEND(MPI_Bsend, PMPI_Bsend)

#define CLL_MPI_ISEND(NAME, PNAME)                                                          \
    CLL_WEAK int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,     \
                      MPI_Comm comm, MPI_Request *request)                                  \
    {                                                                                       \
        CLL_MPI_TIMED(PNAME(buf, count, type, dest, tag, comm, request));                   \
        cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(count, type));                         \
        return rc;                                                                          \
    }
CLL_MPI_ISEND(MPI_Isend, PMPI_Isend)
CLL_MPI_ISEND(MPI_Issend, PMPI_Issend)

CLL_WEAK int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, MPI_Status *status)
{
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    CLL_MPI_TIMED(PMPI_Recv(buf, count, type, source, tag, comm, st));
    if (rc == MPI_SUCCESS)
        cll_mpi_received_(comm, st);
    return rc;
}

CLL_WEAK int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    CLL_MPI_TIMED(PMPI_Irecv(buf, count, type, source, tag, comm, request));
    if (rc == MPI_SUCCESS)
        cll_mpi_pending_add_(*request, comm);
    return rc;
}

CLL_WEAK int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    MPI_Request before = *request;
    CLL_MPI_TIMED(PMPI_Wait(request, st));
    if (rc == MPI_SUCCESS)
        cll_mpi_completed_(before, st);
    return rc;
}

CLL_WEAK int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    MPI_Request before = *request;
    CLL_MPI_TIMED(PMPI_Test(request, flag, st));
    if (rc == MPI_SUCCESS && *flag)
        cll_mpi_completed_(before, st);
    return rc;
}

/* Copies of `n` request handles and room for `n` statuses when the caller ignores them. */
CLL_WEAK MPI_Request *cll_mpi_requests_copy_(int n, const MPI_Request *requests,
                                              MPI_Status **statuses)
{
    MPI_Request *copy = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof *copy);
    memcpy(copy, requests, (size_t)n * sizeof *copy);
    if (*statuses == MPI_STATUSES_IGNORE)
        *statuses = cll_mpi_alloc_(NULL, (size_t)(n + 1) * sizeof **statuses);
    return copy;
}

CLL_WEAK int MPI_Waitall(int n, MPI_Request *requests, MPI_Status *statuses)
{
    MPI_Status *st = statuses;
    MPI_Request *before = cll_mpi_requests_copy_(n, requests, &st);
    CLL_MPI_TIMED(PMPI_Waitall(n, requests, st));
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            cll_mpi_completed_(before[i], &st[i]);
    if (st != statuses)
        free(st);
    free(before);
    return rc;
}

CLL_WEAK int MPI_Waitany(int n, MPI_Request *requests, int *index, MPI_Status *status)
{
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    MPI_Status *none = MPI_STATUSES_IGNORE;
    MPI_Request *before = cll_mpi_requests_copy_(n, requests, &none);
    CLL_MPI_TIMED(PMPI_Waitany(n, requests, index, st));
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        cll_mpi_completed_(before[*index], st);
    free(none);
    free(before);
    return rc;
}

CLL_WEAK int MPI_Waitsome(int n, MPI_Request *requests, int *outcount, int *indices,
                          MPI_Status statuses[])
{
    MPI_Status *st = statuses;
    MPI_Request *before = cll_mpi_requests_copy_(n, requests, &st);
    CLL_MPI_TIMED(PMPI_Waitsome(n, requests, outcount, indices, st));
    if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++)
            cll_mpi_completed_(before[indices[i]], &st[i]);
    if (st != statuses)
        free(st);
    free(before);
    return rc;
}

CLL_WEAK int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
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
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    CLL_MPI_TIMED(PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st));
    if (rc == MPI_SUCCESS) {
        cll_mpi_count_(comm, dest, 1, cll_mpi_bytes_(count, type));
        cll_mpi_received_(comm, st);
    }
    return rc;
}

/* Collectives count the data each rank logically contributes and receives, as if sent
 * directly (not the messages of the library's algorithm); a rank's own part is not
 * communication. Barrier and Comm_split count time only. */
CLL_WEAK int MPI_Barrier(MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Barrier(comm));
    return rc;
}

CLL_WEAK int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Bcast(buf, count, type, root, comm));
    cll_mpi_count_rooted_(comm, root, 1, cll_mpi_bytes_(count, type));
    return rc;
}

CLL_WEAK int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                        MPI_Op op, int root, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
    cll_mpi_count_rooted_(comm, root, 0, cll_mpi_bytes_(count, type));
    return rc;
}

CLL_WEAK int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
    cll_mpi_count_all_(comm, 1, cll_mpi_bytes_(count, type));
    cll_mpi_count_all_(comm, 0, cll_mpi_bytes_(count, type));
    return rc;
}

CLL_WEAK int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
    cll_mpi_count_exchange_(comm, sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype);
    return rc;
}

CLL_WEAK int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
    cll_mpi_count_exchange_(comm, sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype);
    return rc;
}

CLL_WEAK int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm));
    int me;
    PMPI_Comm_rank(comm, &me);
    cll_mpi_count_rooted_(comm, root, 0, me == root ? cll_mpi_bytes_(recvcount, recvtype)
                                                    : cll_mpi_bytes_(sendcount, sendtype));
    return rc;
}

CLL_WEAK int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CLL_MPI_TIMED(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm));
    int me;
    PMPI_Comm_rank(comm, &me);
    cll_mpi_count_rooted_(comm, root, 1, me == root ? cll_mpi_bytes_(sendcount, sendtype)
                                                    : cll_mpi_bytes_(recvcount, recvtype));
    return rc;
}

CLL_WEAK int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    CLL_MPI_TIMED(PMPI_Comm_split(comm, color, key, newcomm));
    return rc;
}

#endif /* CLL_MPI_H */
