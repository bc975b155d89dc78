/* cll_pub.c -- the PUB layer of the CALL tracing runtime: records the supersteps of a
 * `#pragma cll parallel PUB NAME` program (docs/trace-format.md, "Supersteps (PUB
 * programs)"). Compiled by the user's mpicc with cll_mpi.c and pub.c (`call cc` adds the
 * three for a PUB program); pub.c knows nothing of it: the layer sets pub_observer, and
 * pub_locate so that pub.c's messages number supersteps as the trace does.
 *
 * A run is one execution of a `sync` experiment: its begin bsp_syncs the machine NAME and
 * the run starts where the experiment's clock starts after that (the tracer's own work
 * between is neither's); until the experiment ends, every superstep of that
 * machine (machine 0) and of its partitions (0.K, 0.K.J, ...) is kept in memory as one
 * record per superstep, with times on this process's CLOCK_MONOTONIC (the clock of the MPI
 * layer's offsets). At report the MPI layer's gather writes them as `@step` lines, END made
 * "seconds since the run's start, on rank 0's clock" with the reference times it hands each
 * rank: for each run the earliest processor's start, on that rank's clock. A trace of this
 * rank's own records (its `.rank<r>` file, written when it is not gathered, also on a fatal
 * signal) holds them too, END measured from this processor's own start of each run
 * (`#superstep_origin: rank R`); `#superstep_starts:` gives, in both, the starts the ENDs are
 * measured from, on rank 0's clock, so that llac can put the files of one execution together.
 */
#include "cll_pub.h"
#include "cll_mpi_support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One superstep of this processor. */
typedef struct step {
    int run;
    size_t machine;          /* offset of its name in the name pool */
    long number;             /* from 1 in its machine and run */
    const char *kind;        /* sync, obl, part, done, end */
    double work, end;        /* W (s); END on this clock (s) */
    long in, out;            /* payload bytes received and sent */
    long messages_in, messages_out;
    size_t partners;         /* offset in the partner pool: a count, then the world ranks */
} step;

/* A machine of the open run, on the stack of partitions (machine 0 at the bottom). */
typedef struct machine {
    t_bsp *bsp;
    size_t name;             /* offset in the name pool */
    long steps;              /* supersteps finished in this run */
    double start;            /* when the current superstep started */
    long out, messages_out;  /* payload sent in the superstep and its messages, told at the call ending it */
    double called;           /* when that call began */
    int made;                /* subgroups made by its partitions in this run */
} machine;

static struct {
    int started, runs, open, owner_level;
    const cll_experiment *owner;       /* the experiment whose begin started the open run */
    machine *stack;
    int depth;
    size_t stack_cap;
    step *steps;
    size_t nsteps, steps_cap;
    char *names;
    size_t names_used, names_cap;
    int *partners;
    size_t partners_used, partners_cap;
    double *starts;                    /* this process's start of each run (the gather takes the earliest over the ranks) */
    size_t starts_cap;
    double partition_call;             /* when the pending bsp_partition began */
} pub;

enum { PIECE = 1 << 16 };                  /* bytes of `@step` lines handed over at once */
static char piece[PIECE + 8192];           /* lines(): static, as it may run in a signal handler */

static __attribute__((noreturn)) void fail(const char *what)
{
    char msg[1200];
    snprintf(msg, sizeof msg, "cll: error: %s", what);
    cll_fail(msg, what);
    __builtin_unreachable();   /* cll_fail exits */
}

/* `array` if it has room for `need` items of `size` bytes, else a copy of it with room
 * (doubling `*cap`); ROOM frees the old block once the copy is in place. */
static void *grown(void *array, size_t need, size_t *cap, size_t size)
{
    if (need <= *cap)
        return array;
    size_t had = *cap;
    *cap = need > 2 * *cap ? need : 2 * *cap;
    void *copy = malloc(*cap * size);
    if (!copy)
        fail("out of memory while recording the supersteps of a PUB program");
    if (had)
        memcpy(copy, array, had * size);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return copy;
}

/* Make room for `need` items in the array `a` of capacity `cap`: the new block is whole and in
 * place before the old one is freed, so that a fatal signal's handler writing the supersteps
 * (lines) never reads a freed or half-copied block, as it could during a realloc. */
#define ROOM(a, need, cap)                                  \
    do {                                                    \
        void *old_ = (a);                                   \
        (a) = grown(old_, (need), &(cap), sizeof *(a));     \
        if ((void *)(a) != old_) {                          \
            __atomic_signal_fence(__ATOMIC_SEQ_CST);        \
            free(old_);                                     \
        }                                                   \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Put `text` in the name pool; its offset. */
static size_t add_name(const char *text)
{
    size_t len = strlen(text) + 1, at = pub.names_used;
    ROOM(pub.names, at + len, pub.names_cap);
    memcpy(pub.names + at, text, len);
    pub.names_used += len;
    return at;
}

/* Put the distinct ranks among `ranks` (sorted) in the partner pool; their offset. */
static size_t add_partners(const int *ranks, int n)
{
    size_t at = pub.partners_used, count = 0;
    ROOM(pub.partners, at + 1 + (size_t)n, pub.partners_cap);
    int *list = pub.partners + at + 1;
    for (int i = 0; i < n; i++) {   /* insertion into the sorted distinct list */
        size_t k = count;
        while (k > 0 && list[k - 1] > ranks[i])
            k--;
        if (k > 0 && list[k - 1] == ranks[i])
            continue;
        memmove(list + k + 1, list + k, (count - k) * sizeof *list);
        list[k] = ranks[i];
        count++;
    }
    pub.partners[at] = (int)count;
    pub.partners_used += 1 + count;
    return at;
}

/* Record the superstep of machine `m` that the call begun at `called` ended at `end`. */
static void add_step(machine *m, const char *kind, double called, double end, long in,
                     const int *senders, int nsenders)
{
    ROOM(pub.steps, pub.nsteps + 1, pub.steps_cap);
    pub.steps[pub.nsteps] = (step){pub.runs, m->name, ++m->steps, kind, called - m->start, end,
                                   in, m->out, nsenders, m->messages_out,
                                   add_partners(senders, nsenders)};
    __atomic_signal_fence(__ATOMIC_SEQ_CST);   /* whole before a signal's lines() counts it */
    pub.nsteps++;
    m->out = m->messages_out = 0;
}

static machine *push(t_bsp *bsp, size_t name, double start)
{
    ROOM(pub.stack, (size_t)pub.depth + 1, pub.stack_cap);
    pub.stack[pub.depth] = (machine){.bsp = bsp, .name = name, .start = start};
    return &pub.stack[pub.depth++];
}

/* pub_observer while a run is open: supersteps of the machine on top of the stack (the one
 * the program may synchronise; calls on other machines are not part of the run). */
static void observe(const pub_event *event)
{
    double t = now();
    machine *top = pub.depth ? &pub.stack[pub.depth - 1] : NULL;
    if (top == NULL || event->bsp != top->bsp)
        return;
    if (!event->returning) {
        top->out = event->bytes_out;
        top->messages_out = event->messages_out;
        top->called = t;
        if (event->call == PUB_PARTITION) {   /* the subgroup's first superstep starts here */
            add_step(top, "part", t, t, 0, NULL, 0);
            pub.partition_call = t;
        } else if (event->call == PUB_DONE) {  /* and the parent's next one here */
            add_step(top, "done", t, t, 0, NULL, 0);
            pub.depth--;
            pub.stack[pub.depth - 1].start = t;
        }
        return;
    }
    if (event->call == PUB_SYNC || event->call == PUB_OBLSYNC) {
        add_step(top, event->call == PUB_SYNC ? "sync" : "obl", top->called, t,
                 event->bytes_in, event->senders, event->nsenders);
        top->start = t;
    } else if (event->call == PUB_PARTITION) {
        char name[4096];
        snprintf(name, sizeof name, "%s.%d", pub.names + top->name, top->made + event->group);
        top->made += event->groups;
        push(event->sub, add_name(name), pub.partition_call);
    }
}

/* pub_locate: the superstep `bsp` is in, as the trace numbers it, when `bsp` is a machine of
 * the open run (its next synchronisation ends superstep steps + 1 there); so that pub.c's
 * messages name the superstep as the trace and llac do (docs/pub.md, "Supersteps in
 * messages"). */
static int locate(const t_bsp *bsp, pub_place *place)
{
    for (int i = pub.depth - 1; i >= 0; i--)
        if (pub.stack[i].bsp == bsp) {
            *place = (pub_place){pub.runs, pub.names + pub.stack[i].name, pub.stack[i].steps + 1};
            return 1;
        }
    return 0;
}

/* ---------------------------------------------------------------- trace extension */

static int references(const double **times)
{
    *times = pub.starts;
    return pub.runs;
}

/* Copy the string `s` to `at`; the end of the copy. */
static char *put_text(char *at, const char *s)
{
    while (*s)
        *at++ = *s++;
    return at;
}

/* This process's (rank `rank`'s) `@step` lines, END relative to each run's start in
 * `starts` (on this clock: the earliest of the processors' returns from the run's barrier in
 * the gathered trace, this processor's own in a trace of its own), in pieces of up to 64 KiB.
 * A processor that left the barrier later than the first one has that delay in the W of its
 * first superstep of machine 0, which starts at the common start like every END. No
 * allocation: it may run on the way out of a fatal signal. Written without printf (W and END
 * exactly as %.9g), which took 1 us a line. */
static int lines(const double *starts, int nstarts, int rank,
                 int (*sink)(const char *text, size_t len, void *ctx), void *ctx)
{
    size_t used = 0;
    int rc = 0;
    for (size_t i = 0; i < pub.nsteps && rc == 0; i++) {
        const step *s = &pub.steps[i];
        const int *list = pub.partners + s->partners;
        if (s->run > nstarts)
            continue;
        double late = pub.starts[s->run - 1] - starts[s->run - 1];
        double work = s->work + (s->number == 1 && strcmp(pub.names + s->machine, "0") == 0 && late > 0
                                 ? late : 0);
        char *at = put_text(piece + used, "@step ");
        at = put_text(cll_put_int(at, s->run), " ");
        at = put_text(cll_put_int(at, rank), " ");
        at = put_text(put_text(at, pub.names + s->machine), " ");
        at = put_text(cll_put_int(at, s->number), " ");
        at = put_text(put_text(at, s->kind), " ");
        at = put_text(cll_put_g9(at, work), " ");
        at = put_text(cll_put_int(at, s->in), " ");
        at = put_text(cll_put_int(at, s->out), " ");
        at = put_text(cll_put_int(at, s->messages_in), " ");
        at = put_text(cll_put_int(at, s->messages_out), " ");
        at = put_text(cll_put_g9(at, s->end - starts[s->run - 1]), " ");
        for (int k = 0; k < list[0]; k++) {
            at = cll_put_int(k ? put_text(at, ",") : at, list[1 + k]);
            if (at - piece > PIECE) {   /* a long partner list: hand over part of the line */
                rc = sink(piece, (size_t)(at - piece), ctx);
                at = piece;
            }
        }
        at = put_text(at, list[0] ? "\n" : "-\n");
        used = (size_t)(at - piece);
        if (used > PIECE) {
            rc = rc ? rc : sink(piece, used, ctx);
            used = 0;
        }
    }
    if (rc == 0 && used)
        rc = sink(piece, used, ctx);
    return rc;
}

static char runs_of[2048];                    /* the experiments whose executions were runs, ", "-separated */

/* The header lines of the supersteps: their columns, the experiments whose executions are the
 * runs, whose start the ENDs are measured from (`origin` -1: the run's common start, else
 * that rank's own) and those starts on rank 0's clock (`times` less `offset`). */
static void header(FILE *f, const double *times, int ntimes, double offset, int origin)
{
    fputs("#supersteps: run rank machine step sync W in out msgs_in msgs_out end partners\n", f);
    if (runs_of[0])
        fprintf(f, "#superstep_runs: %s\n", runs_of);
    if (origin >= 0)
        fprintf(f, "#superstep_origin: rank %d\n", origin);
    for (int i = 0; i < ntimes; i++)
        fprintf(f, "%s%.9f%s", i ? " " : "#superstep_starts: ", times[i] - offset,
                i + 1 < ntimes ? "" : "\n");
}

static const cll_mpi_extension extension = {CLL_PUB_COLUMNS, header, references, lines};

/* Add experiment `name` to runs_of, once (`#superstep_runs: f, ...`); names that no longer
 * fit are left out. */
static void name_runs_of(const char *name)
{
    size_t len = strlen(name), used = strlen(runs_of);
    for (const char *at = runs_of; (at = strstr(at, name)) != NULL; at += len)
        if ((at == runs_of || at[-1] == ' ') && (at[len] == ',' || at[len] == '\0'))
            return;
    if (used + len + 3 > sizeof runs_of)
        return;
    snprintf(runs_of + used, sizeof runs_of - used, "%s%s", used ? ", " : "", name);
}

/* ---------------------------------------------------------------- experiments */

/* Fail unless MPI is running (bsp_begin was called and bsp_end not yet); `what` names the
 * pragma. Before bsp_begin no trace is written (cll_fail_unstarted: no records, no P yet).
 * Then observe PUB (and name its supersteps in pub.c's messages) and extend the trace, once. */
static void require_started(const char *what)
{
    int up = 0, down = 0;
    char msg[1024];
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down) {
        snprintf(msg, sizeof msg, "%s %s: a '#pragma cll parallel PUB' program must call "
                 "bsp_begin first (and bsp_end only after the last experiment and report)",
                 what, down ? "after bsp_end (MPI is finalised)" : "before bsp_begin");
        if (!up) {
            char full[1100];
            snprintf(full, sizeof full, "cll: error: %s", msg);
            cll_fail_unstarted(full);
        }
        fail(msg);
    }
    if (!pub.started) {
        pub_observer = observe;
        pub_locate = locate;
        cll_mpi_extend(&extension);
        pub.started = 1;
    }
}

/* Make, before a run's barrier, the allocations its start needs (the thread's record buffer,
 * room for the run's start, machine 0 and its name), so that no processor leaves the barrier
 * late by the tracer's one-time work: in the first run it was 15-20 us, in the first W. */
static void prepare_run(void)
{
    cll_thread_ready();
    ROOM(pub.starts, (size_t)pub.runs + 1, pub.starts_cap);
    ROOM(pub.stack, 1, pub.stack_cap);
    ROOM(pub.names, pub.names_used + 2, pub.names_cap);
}

void cll_pub_begin(cll_experiment *e, double *values, t_bsp *machine, const void *where)
{
    char what[600];
    snprintf(what, sizeof what, "experiment '%s' (%s) begins", e->name, e->source);
    int opened = 0;
    require_started(what);
    if (machine) {
        if (pub.owner == NULL)
            prepare_run();
        bsp_sync(machine);   /* a superstep of the open run, if any */
        if (pub.owner == NULL) {
            double t = now();   /* until the run starts, below */
            ROOM(pub.starts, (size_t)pub.runs + 1, pub.starts_cap);
            pub.starts[pub.runs] = t;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);   /* set before a signal's writer counts it */
            pub.runs++;
            push(machine, add_name("0"), t);
            name_runs_of(e->name);
            pub.owner = e;
            pub.owner_level = pub.open;
            opened = 1;
        }
    }
    values[e->nvars - CLL_PUB_COLUMNS + CLL_COL_RUN] = pub.owner ? pub.runs : 0;
    pub.open++;
    cll_mpi_begin(e, values, where);
    /* The run starts where the experiment's clock does, after the tracer's own work since the
     * barrier returned: no superstep's W or END exceeds the experiment's time. */
    if (opened)
        pub.starts[pub.runs - 1] = pub.stack[0].start = now();
}

void cll_pub_end(cll_experiment *e, const char *site, const void *where)
{
    pub.open -= cll_mpi_unwind(where);
    if (pub.owner && pub.open <= pub.owner_level) {
        char msg[1024];
        snprintf(msg, sizeof msg, "experiment '%s', which began the run of its BSP machine, was "
                 "left open by a return or longjmp out of it (found at %s): the run has no end",
                 pub.owner->name, site);
        fail(msg);
    }
    pub.open--;
    if (pub.owner == e && pub.open == pub.owner_level) {
        double t = now();
        machine *zero = &pub.stack[0];
        if (pub.depth > 1) {
            char msg[1024];
            snprintf(msg, sizeof msg, "experiment '%s' ends at %s inside a partition of its BSP "
                     "machine (machine %s): call bsp_done before the experiment's end", e->name,
                     site, pub.names + pub.stack[pub.depth - 1].name);
            fail(msg);
        }
        zero->out = zero->bsp->bytes_now;
        zero->messages_out = zero->bsp->messages_now;
        add_step(zero, "end", t, t, 0, NULL, 0);
        pub.depth = 0;
        pub.owner = NULL;
    }
    cll_mpi_end(e, site, where);
}

void cll_pub_report(const char *const *names, int nnames)
{
    require_started("'#pragma cll report'");
    cll_mpi_report(names, nnames);
}
