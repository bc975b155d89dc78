/* pub.c: the PUB-compatible BSP library over MPI (pub.h, docs/pub.md).
 *
 * Transport: every machine has its own communicator (bsp_begin: a duplicate of
 * MPI_COMM_WORLD; bsp_partition: MPI_Comm_create_group of the subgroup). A message sent in
 * superstep s of a machine is an MPI message tagged with s (step_tag) on its communicator, so
 * messages of a later superstep (a partner ahead after an oblivious sync) wait in MPI's queue
 * until the receiver reaches that superstep. bsp_sync learns how many messages to receive
 * from a reduce-scatter of the per-destination send counts, which is also the barrier and a
 * consistency check of the oblivious supersteps before it (sent vs received). bsp_end and
 * bsp_done make the same exchange (a meeting), each with a key naming the call: processors at
 * different calls are told so instead of mismatching collectives. bsp_partition waits for no
 * processor outside its subgroup (the paper's partition has no barrier): it starts the same
 * exchange with its whole machine, keyed with its arguments, without waiting (a partition
 * check, completed at later library calls), and meets only its subgroup's members, with a
 * handshake of their keys (HANDSHAKE_TAG), before MPI_Comm_create_group. A send from
 * bsp_send's copy of the data stays pending across oblivious synchronisations (tested at
 * later library calls, awaited at bsp_sync and bsp_end): a processor never waits for the
 * receiver of its messages, which MPI would make it do for large ones. Every wait polls
 * with a timeout (PUB_TIMEOUT seconds) so that a wait that can never end is reported.
 * A tracer (CALL's cll_pub.c) observes the supersteps through pub_observer (pub.h), which
 * the library only tests when nothing observes it. */
#define _GNU_SOURCE
#include "pub.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUB_LIVE 0x50554231u   /* a machine in use */
#define PUB_ENDED 0x50554230u  /* ended by bsp_done or bsp_end */
#define PUB_DEFAULT_TIMEOUT 120.0
#define PARTITION_TAG 0x5055   /* MPI_Comm_create_group's tag (not a point-to-point tag) */

static double timeout_s = PUB_DEFAULT_TIMEOUT;   /* 0: wait forever */
static int tag_limit = 32767;                    /* MPI_TAG_UB: see step_tag */
#define HANDSHAKE_TAG 0                          /* bsp_partition's handshake (step_tag > 0) */
static int live_roots, initialised_mpi;
static int world_rank = -1;                       /* this process's, kept for after bsp_end */
static long arrivals;                             /* sequence numbers of received messages */

/* A send this processor posted on a machine. bsp_send's is from the library's copy of the
 * data, which lives until MPI completes the send, however many synchronisations later;
 * bsp_hpsend's is from the user's buffer, which this processor's next synchronisation
 * must complete (the user may change the buffer after it). */
struct pub_send {
    MPI_Request request;
    void *copy;                 /* bsp_send's copy; kept allocated when the slot is free */
    size_t capacity;            /* bytes allocated at copy */
    int borrowed;               /* bsp_hpsend: sent from the user's buffer, */
    uintptr_t from, size;       /*   the bytes from .. from + size - 1 */
};

/* A meeting of the processors of a machine (bsp_sync, bsp_end, bsp_partition, bsp_done) is
 * one reduce-scatter (a sum) of MEET_WIDTH longs per destination: the messages sent to it in
 * this superstep and in the oblivious ones before, the superstep and the square of its
 * remainder modulo MEET_HASH_LIMIT (so that the sum stays inside a long), and the processor's
 * key and its square. The keys are the same on every processor exactly when their sum is
 * nprocs times this processor's key and the sum of squares nprocs times its square; likewise
 * the supersteps, so that every processor sees that they differ, not only those above or
 * below the mean, and all of them learn who differs (different_supersteps). */
enum { MEET_NOW, MEET_OBL, MEET_STEP, MEET_STEP2, MEET_KEY, MEET_KEY2, MEET_WIDTH };
/* The keys: the call, and for bsp_partition a hash of its arguments added (< 2^20, so that
 * the sums of squares stay far inside a long). */
enum { MEET_SYNC = 1, MEET_END, MEET_DONE, MEET_PARTITION };
#define MEET_HASH_LIMIT (1L << 20)

/* A partition ended by bsp_done whose count check (a nonblocking reduce-scatter over its
 * members) or sends have not completed yet: bsp_done does not wait for the other members. */
typedef struct retired {
    MPI_Comm comm;
    MPI_Request request;
    long *counts;               /* the meeting's send buffer, kept until it completes */
    long in[MEET_WIDTH];        /* what the meeting gathered (meet) */
    long received;
    struct pub_send *sends;     /* the partition's sends, the first npending still pending */
    int npending, send_slots;
    int pid, nprocs, depth;
    struct retired *next;
} retired;
static retired *retired_list;

/* Learning every processor's key and a detail (bsp_partition's r, bsp_sync's superstep) after
 * a meeting whose keys or supersteps differ: a nonblocking allgather on the machine's
 * communicator. */
typedef struct {
    long mine[2];               /* this processor's key and detail, the send buffer */
    long *all;                  /* every processor's, when `request` completes */
    MPI_Request request;
} key_gather;

/* The check of a bsp_partition against its whole machine: a meeting (the reduce-scatter of
 * meet) started by bsp_partition and completed at later library calls, so that partitioning
 * waits for no processor outside its subgroup. `who` keeps what a message names (the
 * machine may end, with bsp_done, before its check completes). */
typedef struct partition_check {
    t_bsp who;                  /* the partitioned machine's comm, pid, nprocs, depth */
    MPI_Request request;
    long *out;                  /* the meeting's send buffer, kept until it completes */
    long in[MEET_WIDTH];
    long key;
    int r, *Y;                  /* bsp_partition's arguments (a copy), for the message */
    key_gather keys;            /* every processor's key, learnt when the sums disagree */
    int *bounds;                /* then, when all of them partition, every processor's Y, */
    int *counts;                /*   one after another (counts: every r, then the offsets) */
    MPI_Request bounds_request;
    struct partition_check *next;
} partition_check;
static partition_check *partition_checks;

void (*pub_observer)(const pub_event *event);    /* pub.h: NULL unless a tracer sets it */
int (*pub_locate)(const t_bsp *bsp, pub_place *place);   /* pub.h: likewise */

/* ---------------------------------------------------------------- messages and failure */

static void fail_at(const char *fn, int pid, int nprocs, int depth, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 5, 6)));

/* Print "pub: FN: rank R (processor p of n ...): message" on stderr and abort every rank:
 * a misuse is reported once, clearly, and never hangs. */
static void fail_at(const char *fn, int pid, int nprocs, int depth, const char *fmt, ...)
{
    int initialised = 0, finalised = 0, rank = world_rank;
    char text[1024];
    va_list ap;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (pid >= 0)
        fprintf(stderr, "pub: %s: rank %d (processor %d of %d in %s): %s\n", fn, rank, pid,
                nprocs, depth ? "a partition" : "the machine of bsp_begin", text);
    else
        fprintf(stderr, "pub: %s: rank %d: %s\n", fn, rank, text);
    fflush(stderr);
    if (initialised && !finalised)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define FAIL(fn, bsp, ...) fail_at(fn, (bsp)->pid, (bsp)->nprocs, (bsp)->depth, __VA_ARGS__)

/* The number by which a message names the superstep this processor is in on `bsp` (the one
 * its synchronisation ends), with `where` saying what it counts in (docs/pub.md, "Supersteps
 * in messages"): from 1 at the machine's bsp_begin or bsp_partition (bsp->step + 1), `where`
 * empty; when a tracer records the superstep (pub_locate), as its trace numbers it, `where`
 * " of machine M in run R"; traced outside the trace's runs, from 1 again, `where` saying so. */
static long superstep_number(const t_bsp *bsp, char *where, size_t size)
{
    pub_place place;
    where[0] = '\0';
    if (pub_locate == NULL)
        return bsp->step + 1;
    if (!pub_locate(bsp, &place)) {
        snprintf(where, size, " (not in a run of the trace)");
        return bsp->step + 1;
    }
    snprintf(where, size, " of machine %s in run %d", place.machine, place.run);
    return place.step;
}

/* The machine `bsp` if it is live (and, when `whole`, not partitioned at the moment: a
 * partitioned machine is used again only after bsp_done); else a clear failure. */
static t_bsp *live(const char *fn, const t_bsp *bsp, int whole)
{
    if (bsp == NULL)
        fail_at(fn, -1, 0, 0, "the BSP machine is NULL");
    if (bsp->magic == PUB_ENDED)
        fail_at(fn, -1, 0, 0, "this BSP machine was already ended (by bsp_done or bsp_end)");
    if (bsp->magic != PUB_LIVE)
        fail_at(fn, -1, 0, 0, "not a BSP machine: neither bsp_begin nor bsp_partition set it up");
    if (whole && bsp->child != NULL)
        FAIL(fn, bsp, "the machine is partitioned: call bsp_done on its partition first");
    return (t_bsp *)bsp;
}

static void *grow(void *array, size_t count, size_t size)
{
    void *bigger = realloc(array, count * size > 0 ? count * size : 1);
    if (bigger == NULL)
        fail_at("pub", -1, 0, 0, "out of memory");
    return bigger;
}

/* `*buffer` with room for `size` bytes: buffers are kept across supersteps, since freeing
 * and reallocating large ones costs page faults on every superstep. */
static void *fit(void **buffer, size_t *capacity, size_t size)
{
    if (size > *capacity) {
        free(*buffer);
        *buffer = grow(NULL, size, 1);
        *capacity = size;
    }
    return *buffer;
}

/* The MPI tag of the messages of `bsp`'s current superstep: 1 + step % (MPI_TAG_UB - 1), so
 * that tag 0 is left to bsp_partition's handshake. */
static int step_tag(const t_bsp *bsp)
{
    return 1 + (int)(bsp->step % (tag_limit - 1));
}

static void poll_partition_checks(void);

/* Whether the wait that started at `start` has run out of PUB_TIMEOUT. */
static int timed_out(double start)
{
    return timeout_s > 0 && MPI_Wtime() - start > timeout_s;
}

/* Between two polls of a wait: spin for the first 100 us (a wait in a tight superstep is
 * short), then give the core away (oversubscribed ranks share cores). */
static void backoff(double start)
{
    if (MPI_Wtime() - start > 1e-4)
        sched_yield();
}

/* Poll `remaining(state)`, the number of things still awaited, until it is 0; when it does
 * not decrease for PUB_TIMEOUT s, fail saying what was awaited (`what`). */
static void await(const char *fn, const t_bsp *bsp, int (*remaining)(void *), void *state,
                  const char *what)
{
    double start = MPI_Wtime();
    int left = remaining(state);
    while (left > 0) {
        int before = left;
        if (timed_out(start))
            FAIL(fn, bsp, "no progress for %g s while %s (PUB_TIMEOUT=%g)", timeout_s, what,
                 timeout_s);
        backoff(start);
        poll_partition_checks();   /* a partition's disagreement ends any wait, told as such */
        left = remaining(state);
        if (left < before)
            start = MPI_Wtime();   /* progress: the timeout counts from here */
    }
}

typedef struct {
    MPI_Request *requests;
    int n, first;               /* requests before `first` are complete */
} request_array;

/* await's poll for wait_all: test the requests in order, return how many are incomplete. */
static int incomplete_requests(void *state)
{
    request_array *a = state;
    /* one MPI_Test each, not MPI_Testall: MPICH's header makes gcc warn about
     * MPI_STATUSES_IGNORE */
    for (int done = 1; a->first < a->n && done; a->first += done)
        MPI_Test(&a->requests[a->first], &done, MPI_STATUS_IGNORE);
    return a->n - a->first;
}

/* Wait for `n` requests; when none completes for PUB_TIMEOUT s, fail saying what was
 * awaited (`what`). */
static void wait_all(const char *fn, const t_bsp *bsp, int n, MPI_Request *requests,
                     const char *what)
{
    request_array a = {requests, n, 0};
    await(fn, bsp, incomplete_requests, &a, what);
}

/* Test the pending sends, sends[0 .. *npending-1]; move the completed ones behind them,
 * where their slots and copy buffers are reused. Returns how many sends from the user's
 * buffers (bsp_hpsend) are still pending. */
static int settle(struct pub_send *sends, int *npending)
{
    int borrowed = 0;
    for (int i = 0; i < *npending;) {
        int done = 0;
        MPI_Test(&sends[i].request, &done, MPI_STATUS_IGNORE);
        if (done) {
            struct pub_send free_slot = sends[i];
            sends[i] = sends[--*npending];
            sends[*npending] = free_slot;
        } else {
            borrowed += sends[i].borrowed;
            i++;
        }
    }
    return borrowed;
}

typedef struct {
    struct pub_send *sends;
    int *npending, all;
} pending_sends;

/* await's poll for complete_sends: settle, return the sends still awaited. */
static int awaited_sends(void *state)
{
    pending_sends *p = state;
    int borrowed = settle(p->sends, p->npending);
    return p->all ? *p->npending : borrowed;
}

/* Complete this processor's pending sends `sends` of the machine `bsp` (its own or a retired
 * partition's): all of them when `all` (where the machine's count check needs them, or its
 * communicator ends), else those from the user's buffers (bsp_hpsend, due at this
 * processor's synchronisation) while the others are only tested, to complete later. */
static void complete_sends(const char *fn, const t_bsp *bsp, struct pub_send *sends,
                           int *npending, int all)
{
    pending_sends p = {sends, npending, all};
    char what[160];
    snprintf(what, sizeof what, "waiting for the messages this processor sent (%s) to be "
             "received", all ? "all still in flight" : "with bsp_hpsend in this superstep");
    await(fn, bsp, awaited_sends, &p, what);
}

/* Free the copy buffers of `slots` send slots (after their sends completed). */
static void free_sends(struct pub_send *sends, int slots)
{
    for (int i = 0; i < slots; i++)
        free(sends[i].copy);
    free(sends);
}

/* Before message slot `into` receives: when a pending bsp_hpsend sends from its buffer (the
 * program passes on a message it received, whose bytes stay valid until this
 * synchronisation), hand the buffer to that send's slot, which keeps it until the send
 * completes and then reuses it for copies, and take the slot's idle copy buffer instead. */
static void keep_forwarded(t_bsp *bsp, t_bspmsg *into)
{
    uintptr_t low = (uintptr_t)into->data, high = low + into->capacity;
    for (int i = 0; i < bsp->npending && low; i++) {
        struct pub_send *send = &bsp->sends[i];
        if (send->borrowed && send->from < high && low < send->from + send->size) {
            void *data = into->data;
            size_t capacity = into->capacity;
            into->data = send->copy;
            into->capacity = send->capacity;
            send->copy = data;
            send->capacity = capacity;
            return;
        }
    }
}

/* Start receiving one message of this superstep (tag) into `into` with `request`; `k` of
 * `n` names it when the wait for its arrival times out. `forwarding`: whether a bsp_hpsend is
 * pending (only then can `into`'s buffer be one that a send still reads, keep_forwarded). */
static void receive_one(const char *fn, t_bsp *bsp, int k, int n, t_bspmsg *into,
                        MPI_Request *request, int forwarding)
{
    MPI_Message message;
    MPI_Status status;
    int flag = 0, count;
    double start = MPI_Wtime();
    char where[160];
    for (;;) {
        MPI_Improbe(MPI_ANY_SOURCE, step_tag(bsp), bsp->comm, &flag, &message,
                    &status);
        if (flag)
            break;
        if (timed_out(start)) {
            long step = superstep_number(bsp, where, sizeof where);
            FAIL(fn, bsp, "waited %g s for message %d of %d in superstep %ld%s and none arrived: "
                 "the synchronisation cannot be satisfied (were fewer than %d messages sent to "
                 "this processor in this superstep?) (PUB_TIMEOUT=%g)",
                 timeout_s, k + 1, n, step, where, n, timeout_s);
        }
        backoff(start);
        poll_partition_checks();
    }
    MPI_Get_count(&status, MPI_BYTE, &count);
    into->src = status.MPI_SOURCE;
    into->size = count;
    into->seq = arrivals++;
    if (forwarding)
        keep_forwarded(bsp, into);
    fit(&into->data, &into->capacity, (size_t)count);
    MPI_Imrecv(into->data, count, MPI_BYTE, &message, request);
}

static int by_sender(const void *a, const void *b)
{
    const t_bspmsg *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}


/* Replace the delivered messages by `n` messages of the current superstep (all receives
 * posted as their messages are announced, then completed together). Only when a bsp_hpsend
 * is pending does each receive look through the pending sends (keep_forwarded): a superstep
 * of M bsp_send messages each way looked through M pending sends per message, M^2 in all
 * (1024 messages of 8 bytes: docs/pub.md, Cost). */
static void deliver(const char *fn, t_bsp *bsp, long n)
{
    MPI_Request *requests = grow(NULL, (size_t)n, sizeof *requests);
    int forwarding = 0;
    for (int i = 0; i < bsp->npending && !forwarding; i++)
        forwarding = bsp->sends[i].borrowed;
    if (n > bsp->msg_slots) {
        bsp->msgs = grow(bsp->msgs, (size_t)n, sizeof *bsp->msgs);
        memset(bsp->msgs + bsp->msg_slots, 0, (size_t)(n - bsp->msg_slots) * sizeof *bsp->msgs);
        bsp->msg_slots = (int)n;
    }
    for (long k = 0; k < n; k++)
        receive_one(fn, bsp, (int)k, (int)n, &bsp->msgs[k], &requests[k], forwarding);
    wait_all(fn, bsp, (int)n, requests, "receiving the messages of the superstep");
    free(requests);
    bsp->nmsgs = (int)n;
    qsort(bsp->msgs, (size_t)n, sizeof *bsp->msgs, by_sender);
}

/* The MPI_COMM_WORLD rank of each processor of `bsp`, made once per machine. */
static const int *world_ranks(t_bsp *bsp)
{
    if (bsp->world == NULL) {
        int *pids = grow(NULL, (size_t)bsp->nprocs, sizeof *pids);
        MPI_Group group, world;
        for (int i = 0; i < bsp->nprocs; i++)
            pids[i] = i;
        bsp->world = grow(NULL, (size_t)bsp->nprocs, sizeof *bsp->world);
        MPI_Comm_group(bsp->comm, &group);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_translate_ranks(group, bsp->nprocs, pids, world, bsp->world);
        MPI_Group_free(&group);
        MPI_Group_free(&world);
        free(pids);
    }
    return bsp->world;
}

/* The call of meeting key `key` (MEET_*; a partition's key has its arguments' hash added). */
static long call_of(long key)
{
    return key >= MEET_PARTITION ? MEET_PARTITION : key;
}

/* The name of the call of meeting key `key`. */
static const char *call_name(long key)
{
    static const char *const names[] = {"?", "bsp_sync", "bsp_end", "bsp_done", "bsp_partition"};
    return names[call_of(key)];
}

/* Start learning every processor's key and detail (this one's: `key`, `detail`) on `bsp`
 * into `g`. */
static void start_key_gather(const t_bsp *bsp, long key, long detail, key_gather *g)
{
    g->mine[0] = key;
    g->mine[1] = detail;
    g->all = grow(NULL, 2 * (size_t)bsp->nprocs, sizeof *g->all);
    MPI_Iallgather(g->mine, 2, MPI_LONG, g->all, 2, MPI_LONG, bsp->comm, &g->request);
}

/* " (K processors differ from this one)" in `more` when K = `others` is more than one, else
 * "": a disagreement's message names the first processor that differs. */
static void how_many_differ(char *more, size_t size, int others)
{
    more[0] = '\0';
    if (others > 1)
        snprintf(more, size, " (%d processors differ from this one)", others);
}

/* bsp_partition's arguments `r` and `Y` as a message shows them, "r = 2, Y = {1,4}", into
 * `text` (at most `size` bytes; bounds that do not fit end in ",..."). */
static void show_arguments(char *text, size_t size, int r, const int *Y)
{
    size_t used = (size_t)snprintf(text, size, "r = %d, Y = {", r);
    int shown = 0;
    for (; shown < r && used < size - 16; shown++)
        used += (size_t)snprintf(text + used, size - used, "%s%d", shown ? "," : "", Y[shown]);
    snprintf(text + used, size - used, "%s}", shown < r ? ",..." : "");
}

/* Fail naming, from every processor's key and r (`all`), the first processor at another call
 * than this one's (`key`), else the first that passed bsp_partition other arguments than this
 * one's `r` and `Y` (every processor's Y, one after another, in `bounds`), and how many differ. */
static void report_disagreement(const char *fn, t_bsp *bsp, long key, int r, const int *Y,
                                const long *all, const int *bounds) __attribute__((noreturn));
static void report_disagreement(const char *fn, t_bsp *bsp, long key, int r, const int *Y,
                                const long *all, const int *bounds)
{
    int q = -1, others = 0;
    long offset = 0;
    char more[64], there[140], here[140];
    for (int i = 0; i < bsp->nprocs; i++)
        if (all[2 * i] != key) {
            others++;
            if (q < 0 || (call_of(all[2 * q]) == call_of(key) && call_of(all[2 * i]) != call_of(key)))
                q = i;
        }
    how_many_differ(more, sizeof more, others);
    if (call_of(all[2 * q]) != call_of(key))
        FAIL(fn, bsp, "processor %d (rank %d) reached %s while this one is in %s%s: every "
             "processor of a machine makes the same calls of bsp_sync, bsp_partition, bsp_done "
             "and bsp_end, in the same order", q, world_ranks(bsp)[q], call_name(all[2 * q]),
             call_name(key), more);
    for (int i = 0; i < q; i++)
        offset += all[2 * i + 1];
    show_arguments(there, sizeof there, (int)all[2 * q + 1], bounds + offset);
    show_arguments(here, sizeof here, r, Y);
    FAIL(fn, bsp, "processor %d (rank %d) passed other arguments to bsp_partition (%s there; "
         "%s here)%s: every processor of the machine passes the same r and Y",
         q, world_ranks(bsp)[q], there, here, more);
}

#define LEARNING_KEYS "learning which call the other processors are in"

/* Every processor's key and detail on `bsp` (this one's: `key`, `detail`), two longs each,
 * learnt after a meeting that showed a difference; `what` names the wait. */
static const long *learn_keys(const char *fn, t_bsp *bsp, long key, long detail, const char *what)
{
    key_gather g;
    start_key_gather(bsp, key, detail, &g);
    wait_all(fn, bsp, 1, &g.request, what);
    return g.all;
}

/* A meeting whose keys differ (bsp_sync, bsp_end, bsp_done): learn every processor's key,
 * then fail saying who is elsewhere (report_disagreement). */
static void disagreement(const char *fn, t_bsp *bsp, long key)
{
    report_disagreement(fn, bsp, key, 0, NULL, learn_keys(fn, bsp, key, 0, LEARNING_KEYS), NULL);
}

/* A bsp_sync whose meeting showed the processors of `bsp` in different supersteps: learn
 * every processor's, then fail naming the first one whose superstep differs from this one's,
 * and its superstep, numbered as this one's is (superstep_number, offset by the difference). */
static void different_supersteps(t_bsp *bsp) __attribute__((noreturn));
static void different_supersteps(t_bsp *bsp)
{
    const long *all = learn_keys("bsp_sync", bsp, MEET_SYNC, bsp->step,
                                 "learning which superstep the other processors are in");
    int q = -1, others = 0;
    char where[160], more[64];
    long theirs, mine;
    for (int i = 0; i < bsp->nprocs; i++)
        if (all[2 * i + 1] != bsp->step && others++ == 0)
            q = i;
    how_many_differ(more, sizeof more, others);
    mine = superstep_number(bsp, where, sizeof where);
    theirs = mine + (all[2 * q + 1] - bsp->step);
    FAIL("bsp_sync", bsp, "processor %d (rank %d) reached bsp_sync in superstep %ld%s while this "
         "one is in superstep %ld%s: every processor of a machine has finished the same number "
         "of supersteps (bsp_sync and bsp_oblsync calls) when it calls bsp_sync", q,
         world_ranks(bsp)[q], theirs, where, mine, more);
}

/* Start this processor's part of a meeting on `bsp` at `key` (per destination, the MEET_*
 * fields) without waiting: the sums arrive in `in` when `request` completes. Returns the send
 * buffer, to be freed once it has. */
static long *start_meeting(const t_bsp *bsp, long key, long *in, MPI_Request *request)
{
    long *out = grow(NULL, MEET_WIDTH * (size_t)bsp->nprocs, sizeof *out);
    for (int d = 0; d < bsp->nprocs; d++) {
        long *to = out + MEET_WIDTH * d;
        to[MEET_NOW] = bsp->sent_now[d];
        to[MEET_OBL] = bsp->sent_obl[d];
        to[MEET_STEP] = bsp->step;
        to[MEET_STEP2] = (bsp->step % MEET_HASH_LIMIT) * (bsp->step % MEET_HASH_LIMIT);
        to[MEET_KEY] = key;
        to[MEET_KEY2] = key * key;
    }
    MPI_Ireduce_scatter_block(out, in, MEET_WIDTH, MPI_LONG, MPI_SUM, bsp->comm, request);
    return out;
}

/* Whether a meeting's sums `in` show every processor of `bsp` at this one's `key`. */
static int agreed(const t_bsp *bsp, const long *in, long key)
{
    return in[MEET_KEY] == key * bsp->nprocs && in[MEET_KEY2] == key * key * bsp->nprocs;
}

/* Whether a meeting's sums `in` show every processor of `bsp` in this one's superstep. */
static int same_superstep(const t_bsp *bsp, const long *in)
{
    long low = bsp->step % MEET_HASH_LIMIT;
    return in[MEET_STEP] == bsp->step * bsp->nprocs && in[MEET_STEP2] == low * low * bsp->nprocs;
}

/* Whether `request`, a step of the partition check `c`, is complete: tested, or when `wait`
 * awaited (saying `what` was). */
static int check_step_done(partition_check *c, MPI_Request *request, int wait, const char *what)
{
    int done = 1;
    if (wait)
        wait_all("bsp_partition", &c->who, 1, request, what);
    else
        MPI_Test(request, &done, MPI_STATUS_IGNORE);
    return done;
}

/* Whether every processor's key in `all` (two longs each, of the machine `bsp`) is a
 * bsp_partition's. */
static int all_partitioning(const t_bsp *bsp, const long *all)
{
    for (int i = 0; i < bsp->nprocs; i++)
        if (call_of(all[2 * i]) != MEET_PARTITION)
            return 0;
    return 1;
}

/* Start learning every processor's Y after the partition check `c` learnt that they all
 * partition, with their r (c->keys.all): one nonblocking allgatherv, made only when they
 * disagree, so that the message shows the other processor's bounds beside this one's. */
static void start_bounds_gather(partition_check *c)
{
    int n = c->who.nprocs, total = 0;
    c->counts = grow(NULL, 2 * (size_t)n, sizeof *c->counts);
    for (int i = 0; i < n; i++) {
        c->counts[i] = (int)c->keys.all[2 * i + 1];   /* r <= nprocs: bsp_partition checks Y */
        c->counts[n + i] = total;
        total += c->counts[i];
    }
    c->bounds = grow(NULL, (size_t)total, sizeof *c->bounds);
    MPI_Iallgatherv(c->Y, c->r, MPI_INT, c->bounds, c->counts, c->counts + n, MPI_INT,
                    c->who.comm, &c->bounds_request);
}

/* Advance the partition check `c`, waiting for it to complete when `wait`; whether it has
 * completed in agreement. When its sums show that the machine's processors did not all reach
 * bsp_partition with the same arguments, it starts learning every processor's key (its
 * `keys`), then, when every processor is in bsp_partition, every processor's Y (its
 * `bounds`), and fails saying who differs once it has. Learning them does not interrupt
 * bsp_partition's handshake: members of a subgroup that agree among themselves may already be
 * in MPI_Comm_create_group, waiting for this processor, and join the gathering after it. */
static int partition_check_agreed(partition_check *c, int wait)
{
    if (c->keys.all == NULL) {
        if (!check_step_done(c, &c->request, wait,
                             "waiting for the other processors of the machine to reach bsp_partition"))
            return 0;
        if (agreed(&c->who, c->in, c->key))
            return 1;
        start_key_gather(&c->who, c->key, c->r, &c->keys);
    }
    if (c->bounds == NULL) {
        if (!check_step_done(c, &c->keys.request, wait, LEARNING_KEYS))
            return 0;
        if (!all_partitioning(&c->who, c->keys.all))    /* the same on every processor */
            report_disagreement("bsp_partition", &c->who, c->key, c->r, c->Y, c->keys.all, NULL);
        start_bounds_gather(c);
    }
    if (check_step_done(c, &c->bounds_request, wait, "learning the other processors' arguments"))
        report_disagreement("bsp_partition", &c->who, c->key, c->r, c->Y, c->keys.all, c->bounds);
    return 0;
}

/* Complete the pending partition checks on communicator `comm` (MPI_COMM_NULL: on every
 * machine), oldest first: waiting for each when `wait`, else only those already complete. */
static void complete_partition_checks(MPI_Comm comm, int wait)
{
    partition_check **link = &partition_checks;
    while (*link) {
        partition_check *c = *link;
        if ((comm != MPI_COMM_NULL && c->who.comm != comm) || (!wait && !partition_check_agreed(c, 0))) {
            link = &c->next;
            continue;
        }
        *link = c->next;            /* unlinked first: the wait below polls the others */
        if (wait)
            partition_check_agreed(c, 1);   /* returns only in agreement */
        free(c->out);
        free(c->Y);
        free(c);
        link = &partition_checks;   /* the list may have changed during the wait */
    }
}

/* Test the pending partition checks without waiting (at every poll of a wait, so that a
 * partition's disagreement is told wherever its processors are). */
static void poll_partition_checks(void)
{
    if (partition_checks)
        complete_partition_checks(MPI_COMM_NULL, 0);
}

/* Meet the other processors of `bsp` at `key` (bsp_sync, bsp_end): their sums in `in`
 * (MEET_WIDTH longs). Nonblocking, polled, so that a missing processor times out (saying
 * `what` was awaited); processors at another call fail here (disagreement). */
static void meet(const char *fn, t_bsp *bsp, long key, long *in, const char *what)
{
    long *out;
    MPI_Request request;
    complete_partition_checks(bsp->comm, 1);   /* the meetings of a machine complete in order */
    out = start_meeting(bsp, key, in, &request);
    wait_all(fn, bsp, 1, &request, what);
    free(out);
    if (!agreed(bsp, in, key))
        disagreement(fn, bsp, key);
}

/* Complete the partitions ended by bsp_done (their count checks, then their sends): all of
 * them when `wait`, otherwise those already finished. A partition whose members disagree
 * fails here. */
static void check_retired(int wait)
{
    retired **link = &retired_list;
    while (*link) {
        retired *r = *link;
        t_bsp who = {.comm = r->comm, .pid = r->pid, .nprocs = r->nprocs, .depth = r->depth};
        int done = 1;   /* a completed request is MPI_REQUEST_NULL, which tests done again */
        if (wait)
            wait_all("bsp_done", &who, 1, &r->request,
                     "waiting for the other processors of the partition to call bsp_done");
        else
            MPI_Test(&r->request, &done, MPI_STATUS_IGNORE);
        if (!done) {
            link = &r->next;
            continue;
        }
        if (!agreed(&who, r->in, MEET_DONE))
            disagreement("bsp_done", &who, MEET_DONE);
        if (r->in[MEET_NOW] + r->in[MEET_OBL] != r->received)
            FAIL("bsp_done", &who, "%ld messages were sent to this processor in the partition "
                 "but %ld were received: messages sent after its last synchronisation, or more "
                 "than its bsp_oblsync calls waited for, are never delivered",
                 r->in[MEET_NOW] + r->in[MEET_OBL], r->received);
        if (wait)
            complete_sends("bsp_done", &who, r->sends, &r->npending, 1);
        else
            settle(r->sends, &r->npending);
        if (r->npending > 0) {
            link = &r->next;
            continue;
        }
        complete_partition_checks(r->comm, 1);   /* complete: every member passed its partitions */
        MPI_Comm_free(&r->comm);
        free(r->counts);
        free_sends(r->sends, r->send_slots);
        *link = r->next;
        free(r);
    }
}

/* ---------------------------------------------------------------- observing */

/* Tell pub_observer (when set) that `call` begins on `bsp`, with the payload sent in the
 * superstep it ends and the number of its messages (those to itself left out). */
static void observe_entry(pub_call call, t_bsp *bsp)
{
    pub_observer(&(pub_event){.call = call, .bsp = bsp, .bytes_out = bsp->bytes_now,
                              .messages_out = bsp->messages_now});
}

/* Tell pub_observer that synchronisation `call` of `bsp` returns: the bytes delivered and
 * the world rank of each message's sender, those this processor sent itself left out. */
static void observe_delivery(pub_call call, t_bsp *bsp)
{
    static int *senders, capacity;
    long bytes = 0;
    int count = 0;
    const int *world = world_ranks(bsp);
    if (bsp->nmsgs > capacity) {
        capacity = bsp->nmsgs;
        senders = grow(senders, (size_t)capacity, sizeof *senders);
    }
    for (int i = 0; i < bsp->nmsgs; i++)
        if (bsp->msgs[i].src != bsp->pid) {     /* its own messages were local copies */
            bytes += bsp->msgs[i].size;
            senders[count++] = world[bsp->msgs[i].src];
        }
    pub_observer(&(pub_event){.call = call, .returning = 1, .bsp = bsp, .bytes_in = bytes,
                              .nsenders = count, .senders = senders});
}

/* ---------------------------------------------------------------- machines */

static void setup(t_bsp *bsp, MPI_Comm comm, t_bsp *parent)
{
    memset(bsp, 0, sizeof *bsp);
    bsp->magic = PUB_LIVE;
    bsp->comm = comm;
    MPI_Comm_rank(comm, &bsp->pid);
    MPI_Comm_size(comm, &bsp->nprocs);
    bsp->parent = parent;
    bsp->depth = parent ? parent->depth + 1 : 0;
    bsp->sent_now = calloc((size_t)bsp->nprocs, sizeof(long));
    bsp->sent_obl = calloc((size_t)bsp->nprocs, sizeof(long));
    if (!bsp->sent_now || !bsp->sent_obl)
        fail_at("pub", -1, 0, 0, "out of memory");
}

/* Free what the machine holds (its sends completed or handed on); it is then ended (a later
 * call on it fails clearly). */
static void teardown(t_bsp *bsp)
{
    for (int i = 0; i < bsp->msg_slots; i++)
        free(bsp->msgs[i].data);
    free_sends(bsp->sends, bsp->send_slots);
    free(bsp->msgs);
    free(bsp->sent_now);
    free(bsp->sent_obl);
    free(bsp->world);
    bsp->magic = PUB_ENDED;
}

/* PUB_TIMEOUT: seconds a wait may make no progress before it is reported; 0 waits forever.
 * A value out of range (1e400, 1e-400), infinite or not a number is refused: it would wait
 * forever without saying so. */
static void read_timeout(void)
{
    const char *text = getenv("PUB_TIMEOUT");
    char *end;
    if (text == NULL || *text == '\0')
        return;
    errno = 0;
    timeout_s = strtod(text, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(timeout_s) || !(timeout_s >= 0))
        fail_at("bsp_begin", -1, 0, 0, "PUB_TIMEOUT='%s' is not a finite number of seconds >= 0 "
                "(0 waits forever)", text);
}

void bsp_begin(t_bsp *bsp, int *argc, char ***argv)
{
    int initialised = 0, flag = 0, *ub;
    MPI_Comm comm;
    MPI_Initialized(&initialised);
    if (!initialised) {
        MPI_Init(argc, argv);
        initialised_mpi = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (bsp == NULL)
        fail_at("bsp_begin", -1, 0, 0, "the BSP machine is NULL");
    read_timeout();
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (flag)
        tag_limit = *ub;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    setup(bsp, comm, NULL);
    live_roots++;
}

/* The count check at the end of a machine: every message sent to this processor since the
 * last bsp_sync was received by its bsp_oblsync calls. */
static void check_all_received(const char *fn, t_bsp *bsp, long expected)
{
    if (expected != bsp->recv_obl)
        FAIL(fn, bsp, "%ld messages were sent to this processor since the last bsp_sync but %ld "
             "were received: messages sent after the last synchronisation, or more than "
             "bsp_oblsync waited for, are never delivered", expected, bsp->recv_obl);
}

void bsp_end(t_bsp *bsp)
{
    long in[MEET_WIDTH];
    live("bsp_end", bsp, 0);
    if (bsp->parent)
        FAIL("bsp_end", bsp, "this machine is a partition: end it with bsp_done (bsp_end ends "
             "the machine of bsp_begin)");
    if (bsp->child)
        FAIL("bsp_end", bsp, "a partition of this machine is still open: call bsp_done first");
    check_retired(1);
    meet("bsp_end", bsp, MEET_END, in,
         "waiting for the other processors of the machine to reach bsp_end");
    check_all_received("bsp_end", bsp, in[MEET_NOW] + in[MEET_OBL]);
    /* after the check: a message never received is reported by its receiver, not awaited */
    complete_sends("bsp_end", bsp, bsp->sends, &bsp->npending, 1);
    MPI_Comm_free(&bsp->comm);
    teardown(bsp);
    if (--live_roots == 0 && initialised_mpi) {
        MPI_Finalize();
        initialised_mpi = 0;
    }
}

int bsp_nprocs(const t_bsp *bsp)
{
    return live("bsp_nprocs", bsp, 0)->nprocs;
}

int bsp_pid(const t_bsp *bsp)
{
    return live("bsp_pid", bsp, 0)->pid;
}

/* ---------------------------------------------------------------- synchronisation */

/* Start the next superstep: the sends of this one go to the oblivious tally when the
 * superstep ended obliviously (`oblivious`), else they were delivered and counted. */
static void next_superstep(t_bsp *bsp, int oblivious)
{
    for (int d = 0; d < bsp->nprocs; d++) {
        if (oblivious)
            bsp->sent_obl[d] += bsp->sent_now[d];
        else
            bsp->sent_obl[d] = 0;
        bsp->sent_now[d] = 0;
    }
    bsp->bytes_now = bsp->messages_now = 0;
    if (!oblivious)
        bsp->recv_obl = 0;
    bsp->step++;
}

void bsp_sync(t_bsp *bsp)
{
    long in[MEET_WIDTH];
    live("bsp_sync", bsp, 1);
    if (pub_observer)
        observe_entry(PUB_SYNC, bsp);
    check_retired(0);
    meet("bsp_sync", bsp, MEET_SYNC, in,
         "waiting for the other processors of the machine to reach bsp_sync");
    if (!same_superstep(bsp, in))
        different_supersteps(bsp);
    if (in[MEET_OBL] != bsp->recv_obl)
        FAIL("bsp_sync", bsp, "in the oblivious supersteps since the last bsp_sync, %ld messages "
             "were sent to this processor but its bsp_oblsync calls received %ld", in[MEET_OBL],
             bsp->recv_obl);
    deliver("bsp_sync", bsp, in[MEET_NOW]);
    complete_sends("bsp_sync", bsp, bsp->sends, &bsp->npending, 1);
    next_superstep(bsp, 0);
    if (pub_observer)
        observe_delivery(PUB_SYNC, bsp);
}

void bsp_oblsync(t_bsp *bsp, int n)
{
    live("bsp_oblsync", bsp, 1);
    if (n < 0)
        FAIL("bsp_oblsync", bsp, "n = %d: the number of messages to wait for must be >= 0", n);
    if (pub_observer)
        observe_entry(PUB_OBLSYNC, bsp);
    check_retired(0);
    deliver("bsp_oblsync", bsp, n);
    complete_sends("bsp_oblsync", bsp, bsp->sends, &bsp->npending, 0);
    bsp->recv_obl += n;
    next_superstep(bsp, 1);
    if (pub_observer)
        observe_delivery(PUB_OBLSYNC, bsp);
}

/* ---------------------------------------------------------------- messages */

/* Send `size` bytes at `data` to `dest` in this superstep: from a copy (bsp_send), or from
 * `data` itself (bsp_hpsend). A slot whose earlier send completed is reused with its copy
 * buffer; the pending sends are tested only when no slot is free. */
static void post_send(const char *fn, t_bsp *bsp, int dest, const void *data, int size, int copy)
{
    struct pub_send *slot;
    live(fn, bsp, 1);
    if (dest < 0 || dest >= bsp->nprocs)
        FAIL(fn, bsp, "destination %d is outside the machine (processors 0..%d)", dest,
             bsp->nprocs - 1);
    if (size < 0)
        FAIL(fn, bsp, "size %d: a message has size >= 0", size);
    if (size > 0 && data == NULL)
        FAIL(fn, bsp, "the data of a message of %d bytes is NULL", size);
    if (bsp->npending == bsp->send_slots)
        settle(bsp->sends, &bsp->npending);
    if (bsp->npending == bsp->send_slots) {
        int old = bsp->send_slots;
        bsp->send_slots = old ? 2 * old : 16;
        bsp->sends = grow(bsp->sends, (size_t)bsp->send_slots, sizeof *bsp->sends);
        memset(bsp->sends + old, 0, (size_t)(bsp->send_slots - old) * sizeof *bsp->sends);
    }
    slot = &bsp->sends[bsp->npending++];
    slot->borrowed = !copy;
    slot->from = (uintptr_t)data;
    slot->size = (uintptr_t)size;
    if (copy && size > 0) {
        memcpy(fit(&slot->copy, &slot->capacity, (size_t)size), data, (size_t)size);
        data = slot->copy;
    }
    MPI_Isend(data, size, MPI_BYTE, dest, step_tag(bsp), bsp->comm,
              &slot->request);
    bsp->sent_now[dest]++;
    if (dest != bsp->pid) {     /* a message to itself is a local copy, not communication */
        bsp->bytes_now += size;
        bsp->messages_now++;
    }
}

void bsp_send(t_bsp *bsp, int dest, const void *data, int size)
{
    post_send("bsp_send", bsp, dest, data, size, 1);
}

void bsp_hpsend(t_bsp *bsp, int dest, const void *data, int size)
{
    post_send("bsp_hpsend", bsp, dest, data, size, 0);
}

int bsp_nmsgs(const t_bsp *bsp)
{
    return live("bsp_nmsgs", bsp, 0)->nmsgs;
}

t_bspmsg *bsp_getmsg(t_bsp *bsp, int i)
{
    live("bsp_getmsg", bsp, 0);
    if (i < 0 || i >= bsp->nmsgs)
        FAIL("bsp_getmsg", bsp, "message %d does not exist: the last synchronisation delivered "
             "%d message%s", i, bsp->nmsgs, bsp->nmsgs == 1 ? "" : "s");
    return &bsp->msgs[i];
}

static const t_bspmsg *message(const char *fn, const t_bspmsg *msg)
{
    if (msg == NULL)
        fail_at(fn, -1, 0, 0, "the message is NULL");
    return msg;
}

void *bspmsg_data(t_bspmsg *msg)
{
    return message("bspmsg_data", msg)->data;
}

int bspmsg_size(const t_bspmsg *msg)
{
    return message("bspmsg_size", msg)->size;
}

int bspmsg_src(const t_bspmsg *msg)
{
    return message("bspmsg_src", msg)->src;
}

/* ---------------------------------------------------------------- partitions */

/* bsp_partition's meeting key: MEET_PARTITION plus a hash (FNV-1a) of r and Y. */
static long partition_key(int r, const int *Y)
{
    unsigned long hash = 2166136261u ^ (unsigned)r;
    for (int i = 0; i < r; i++)
        hash = (hash * 16777619u) ^ (unsigned)Y[i];
    return MEET_PARTITION + (long)(hash % MEET_HASH_LIMIT);
}

/* Start the check of this bsp_partition (key `key`, arguments `r`, `Y`) against the whole
 * machine `bsp`, without waiting for it (partition_check). */
static void start_partition_check(t_bsp *bsp, long key, int r, const int *Y)
{
    partition_check *c = grow(NULL, 1, sizeof *c), **last = &partition_checks;
    *c = (partition_check){.who = {.comm = bsp->comm, .pid = bsp->pid, .nprocs = bsp->nprocs,
                                   .depth = bsp->depth},
                           .key = key, .r = r,
                           .Y = memcpy(grow(NULL, (size_t)r, sizeof *Y), Y, (size_t)r * sizeof *Y)};
    c->out = start_meeting(bsp, key, c->in, &c->request);
    while (*last)
        last = &(*last)->next;
    *last = c;                  /* oldest first, the order in which they complete */
}

/* Meet the other members low .. high (inclusive) of this processor's subgroup: each sends its
 * key to every other member and waits for theirs, so that MPI_Comm_create_group (which has
 * no timeout) starts only when every member is there with the same arguments. A member that
 * partitions differently fails with the machine's check (disagreement). */
static void handshake(t_bsp *bsp, long key, int low, int high)
{
    int others = high - low, n = 0;
    long *keys = grow(NULL, (size_t)others, sizeof *keys);
    MPI_Request *requests = grow(NULL, 2 * (size_t)others, sizeof *requests);
    char what[160];
    for (int q = low; q <= high; q++)
        if (q != bsp->pid) {
            MPI_Irecv(&keys[n], 1, MPI_LONG, q, HANDSHAKE_TAG, bsp->comm, &requests[2 * n]);
            MPI_Isend(&key, 1, MPI_LONG, q, HANDSHAKE_TAG, bsp->comm, &requests[2 * n + 1]);
            n++;
        }
    snprintf(what, sizeof what, "waiting for the other processors of its subgroup (processors "
             "%d..%d) to reach bsp_partition", low, high);
    wait_all("bsp_partition", bsp, 2 * others, requests, what);
    for (int i = 0; i < others; i++)
        if (keys[i] != key) {
            complete_partition_checks(bsp->comm, 1);    /* tells who differs, and fails */
            FAIL("bsp_partition", bsp, "a processor of its subgroup passed other arguments to "
                 "bsp_partition: every processor of the machine passes the same r and Y");
        }
    free(requests);
    free(keys);
}

void bsp_partition(t_bsp *bsp, t_bsp *sub, int r, const int *Y)
{
    int group = 0, low, high, range[1][3];
    long key;
    MPI_Group whole, part;
    MPI_Comm comm;
    live("bsp_partition", bsp, 1);
    if (sub == NULL || sub == bsp)
        FAIL("bsp_partition", bsp, "the submachine must be another t_bsp than the machine");
    if (r < 1)
        FAIL("bsp_partition", bsp, "r = %d: the number of subgroups must be at least 1", r);
    if (Y == NULL)
        FAIL("bsp_partition", bsp, "the bounds Y are NULL");
    for (int i = 0; i < r; i++)
        if (Y[i] <= (i ? Y[i - 1] : 0))
            FAIL("bsp_partition", bsp, "Y[%d] = %d: the bounds must increase strictly from "
                 "Y[0] >= 1 (subgroup i is processors Y[i-1]..Y[i]-1, none may be empty)",
                 i, Y[i]);
    if (Y[r - 1] != bsp->nprocs)
        FAIL("bsp_partition", bsp, "Y[r-1] = Y[%d] = %d: the last bound must be the machine's "
             "size %d", r - 1, Y[r - 1], bsp->nprocs);
    if (pub_observer)
        observe_entry(PUB_PARTITION, bsp);
    check_retired(0);
    key = partition_key(r, Y);
    /* no barrier (paper §2.2): the machine's agreement is checked later, the subgroup meets */
    start_partition_check(bsp, key, r, Y);
    while (bsp->pid >= Y[group])
        group++;
    low = group ? Y[group - 1] : 0;
    high = Y[group] - 1;
    if (high > low)
        handshake(bsp, key, low, high);
    range[0][0] = low;
    range[0][1] = high;
    range[0][2] = 1;
    MPI_Comm_group(bsp->comm, &whole);
    MPI_Group_range_incl(whole, 1, range, &part);
    MPI_Comm_create_group(bsp->comm, part, PARTITION_TAG, &comm);
    MPI_Group_free(&part);
    MPI_Group_free(&whole);
    setup(sub, comm, bsp);
    bsp->child = sub;
    if (pub_observer)
        pub_observer(&(pub_event){.call = PUB_PARTITION, .returning = 1, .bsp = bsp, .sub = sub,
                                  .group = group, .groups = r});
}

void bsp_done(t_bsp *sub)
{
    retired *r;
    long unsent = 0;
    live("bsp_done", sub, 0);
    if (sub->parent == NULL)
        FAIL("bsp_done", sub, "bsp_done without a partition: this machine was made by "
             "bsp_begin, not bsp_partition");
    if (sub->child)
        FAIL("bsp_done", sub, "a partition of this partition is still open: partitions end "
             "in stack order (bsp_done the innermost first)");
    for (int d = 0; d < sub->nprocs; d++)
        unsent += sub->sent_now[d];
    /* bsp_done synchronises nothing (paper §2.2): what was sent since the last
     * synchronisation would never arrive, and a bsp_hpsend's buffer would stay in MPI's
     * hands after bsp_done returned it to the program */
    if (unsent)
        FAIL("bsp_done", sub, "this processor sent %ld message%s in the partition after its last "
             "synchronisation: bsp_done does not synchronise, so %s never be delivered (and the "
             "buffer of a bsp_hpsend would still be in use); end that superstep with bsp_sync or "
             "bsp_oblsync first", unsent, unsent == 1 ? "" : "s", unsent == 1 ? "it would" : "they would");
    if (pub_observer)
        observe_entry(PUB_DONE, sub);
    r = grow(NULL, 1, sizeof *r);
    /* the partition's sends still in flight complete with its count check, not here */
    *r = (retired){.comm = sub->comm, .received = sub->recv_obl,
                   .sends = sub->sends, .npending = sub->npending, .send_slots = sub->send_slots,
                   .pid = sub->pid, .nprocs = sub->nprocs, .depth = sub->depth,
                   .next = retired_list};
    sub->sends = NULL;
    sub->send_slots = sub->npending = 0;
    r->counts = start_meeting(sub, MEET_DONE, r->in, &r->request);
    retired_list = r;
    sub->parent->child = NULL;
    teardown(sub);
    check_retired(0);
    if (pub_observer)
        pub_observer(&(pub_event){.call = PUB_DONE, .returning = 1, .bsp = sub});
}
