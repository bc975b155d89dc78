/* store.c -- per-thread record buffers: begin/end on the hot path, spilling to disk.
 *
 * Each thread that records owns a 64-byte-aligned slot reached through an initial-exec
 * thread-local pointer, so begin/end take no lock and share no cache line. A slot keeps the
 * thread's open experiments (a growable stack of frames; variables are captured at begin) and
 * a buffer of completed records; a full buffer is appended to the thread's hidden spill file next to
 * the trace, as a chunk [uint64 byte count][records] after a text header that describes the
 * experiments (so that llac can read the file of a run killed by SIGKILL), so no record is
 * ever dropped and memory stays bounded. A spill happens on the recording thread, at the end
 * that fills the buffer, but its time is taken out of every experiment open there. Slots are never freed: a thread that exits leaves its records behind.
 *
 * With hardware counters (counters.c: cll_counters_n_ > 0, fixed at start-up before any
 * record), every slot is a counting one: its frames and records carry the counters after
 * the variables, and its hot-path limits `cap` and `stack_cap` are 0, so that every begin and
 * end takes the cold path, which reads them. Without counters the hot path is unchanged.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define BUFFER_BYTES (2u << 20)

/* An open experiment on its thread's stack of frames: [e][where][t0][e->nvars doubles][e].
 * The trailing copy of e finds the innermost frame from the top of the stack (end checks it
 * before trusting its size), the leading one lets the stack be walked from the bottom;
 * `where` is the C stack frame of the function that began it (CLL_HERE, or NULL). */
typedef struct cll_frame {
    cll_experiment *e;
    const void *where;
    uint64_t t0;
    double vars[];
} cll_frame;

#define FRAME_BYTES(nvars) \
    (sizeof(cll_frame) + (size_t)(nvars) * sizeof(double) + sizeof(cll_experiment *))

typedef struct cll_slot {
    /* hot: touched by every begin/end */
    char *buf;
    size_t pos, cap;    /* cap: what the hot path may fill (0 on a counting slot) */
    char *stack;        /* open experiments' frames, innermost on top */
    size_t top, stack_cap;  /* stack_cap: likewise */
    int32_t thread;
    uint64_t records;   /* completed, read by other threads (relaxed) */
    /* cold */
    size_t buf_bytes, stack_bytes;  /* the buffers' real sizes */
    int counting;       /* frames and records carry the counters */
    uint64_t spilled;
    int spill_fd;
    uint64_t spill_start, spill_bytes;  /* where the chunks start (after the header), end */
    char spill_path[4096];
    char *readback;     /* reads the spilled chunks back: made at the first spill, so that
                           a write on the way out of a signal allocates nothing */
    uint64_t *dropped;  /* by experiment id: frames cut from a full stack (squash_leaked) */
    int ndropped;       /* experiments `dropped` holds */
    struct cll_slot *next;
} __attribute__((aligned(64))) cll_slot;

static __thread cll_slot *self __attribute__((tls_model("initial-exec")));
static cll_slot *slots, **slots_tail = &slots;
static int nslots;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static void *xmalloc(size_t size)
{
    void *p = malloc(size);
    if (!p)
        cll_fatal_("cll: error: out of memory for trace records", "out of memory");
    return p;
}

enum { STACK_BYTES = 1024 };   /* a slot's first stack of open experiments */
/* The most a slot's stack of open experiments may hold: deeper than any recursion with an
 * experiment per level that fits a C stack, so only frames that a jump left open (a
 * `break` out of an experiment in a loop, each pass one more) fill it. */
#define STACK_LIMIT_BYTES ((size_t)1 << 24)

/* Make `s` an empty slot on the record buffer `buf` of `cap` bytes and the stack `stack`. */
static void slot_init(cll_slot *s, char *buf, size_t cap, char *stack)
{
    memset(s, 0, sizeof *s);
    s->buf = buf;
    s->cap = s->buf_bytes = cap;
    s->stack_cap = s->stack_bytes = STACK_BYTES;
    s->stack = stack;
    s->spill_fd = -1;
}

/* A fresh slot with an empty buffer of `cap` bytes (not linked anywhere). */
static cll_slot *slot_new(size_t cap)
{
    cll_slot *s = aligned_alloc(64, sizeof *s);
    if (!s)
        cll_fatal_("cll: error: out of memory for trace records", "out of memory");
    slot_init(s, xmalloc(cap), cap, xmalloc(STACK_BYTES));
    return s;
}

/* First record of this thread: give it a slot (numbered in order) and link it. */
static __attribute__((noinline, cold)) cll_slot *slot_register(void)
{
    cll_slot *s = slot_new(BUFFER_BYTES);
    if (cll_counters_n_) {
        s->counting = 1;
        s->cap = s->stack_cap = 0;
    }
    pthread_mutex_lock(&slots_lock);
    s->thread = nslots++;
    __atomic_store_n(slots_tail, s, __ATOMIC_RELEASE);
    slots_tail = &s->next;
    pthread_mutex_unlock(&slots_lock);
    self = s;
    return s;
}

/* The values a frame or record of `e` carries on slot `s`: cll_values_ on a counting slot. */
static inline int slot_values(const cll_slot *s, const cll_experiment *e)
{
    return s->counting ? cll_values_(e) : e->nvars;
}

/* Count `frames` more frames of experiment `id` as left open on `s` (reported at exit with
 * the frames still open, cll_store_each_open_). */
static void count_dropped(cll_slot *s, int id, uint64_t frames)
{
    int n = cll_experiment_count_();
    if (n > s->ndropped) {
        uint64_t *grown = realloc(s->dropped, (size_t)n * sizeof *grown);
        if (!grown)
            cll_fatal_("cll: error: out of memory for open experiments", "out of memory");
        memset(grown + s->ndropped, 0, (size_t)(n - s->ndropped) * sizeof *grown);
        s->dropped = grown;
        s->ndropped = n;
    }
    s->dropped[id] += frames;
}

/* A full stack: its outer half, frames that jumps left open and no `end` can close any
 * more in a run that goes on (an `end` of one of them would find the frames above it open
 * and stop the run), is cut off and counted in s->dropped by experiment, so that the stack
 * stays bounded; the frames are still reported as open (cll_store_each_open_). */
static void squash_leaked(cll_slot *s)
{
    size_t at = 0;
    while (at < s->top / 2) {
        const cll_frame *f = (const cll_frame *)(s->stack + at);
        count_dropped(s, f->e->id, 1);
        at += FRAME_BYTES(slot_values(s, f->e));
    }
    memmove(s->stack, s->stack + at, s->top - at);
    s->top -= at;
}

/* Make room for the frame of `e` (cold path); refuse an experiment that was never
 * registered (its records could not be written). */
static __attribute__((noinline, cold)) void slot_grow(cll_slot *s, const cll_experiment *e)
{
    if (e->id < 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: error: experiment '%s' begins but was never registered "
                 "(cll_register)", e->source ? e->source : "cll", e->name);
        cll_fatal_(msg, "experiment begins but was never registered");
    }
    if (s->top + FRAME_BYTES(slot_values(s, e)) > STACK_LIMIT_BYTES)
        squash_leaked(s);
    while (s->top + FRAME_BYTES(slot_values(s, e)) > s->stack_bytes)
        s->stack_bytes *= 2;
    s->stack = realloc(s->stack, s->stack_bytes);
    if (!s->stack)
        cll_fatal_("cll: error: out of memory for open experiments", "out of memory");
    if (!s->counting)
        s->stack_cap = s->stack_bytes;
}

/* The innermost open experiment of s as its frame's trailer names it; NULL if none. */
static inline const cll_experiment *innermost(const cll_slot *s)
{
    return s->top ? *(cll_experiment *const *)(s->stack + s->top - sizeof(cll_experiment *)) : NULL;
}

/* The innermost frame, whose experiment has `nvars` variables. */
static inline cll_frame *top_frame(const cll_slot *s, int nvars)
{
    return (cll_frame *)(s->stack + s->top - FRAME_BYTES(nvars));
}

/* Append the full buffer to the thread's spill file and empty it (cold path). */
static __attribute__((noinline, cold)) void slot_spill(cll_slot *s)
{
    char msg[4400];
    if (s->spill_fd < 0) {
        char what[32];
        snprintf(what, sizeof what, "spill%d", (int)s->thread);
        s->spill_fd = cll_hidden_file_(s->spill_path, sizeof s->spill_path, what);
        int header = s->spill_fd < 0 ? -1 : cll_spill_header_(s->spill_fd, (int)s->thread);
        if (header < 0) {
            snprintf(msg, sizeof msg, "cll: error: cannot create spill file %s: %s",
                     s->spill_path, strerror(errno));
            cll_fatal_(msg, "cannot create spill file");
        }
        s->spill_start = s->spill_bytes = (uint64_t)header;
        s->readback = xmalloc(s->buf_bytes);
    }
    uint64_t n = s->pos;
    struct iovec iov[2] = {{&n, sizeof n}, {s->buf, s->pos}};
    size_t left = sizeof n + s->pos;
    while (left > 0) {
        ssize_t w = writev(s->spill_fd, iov, 2);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(msg, sizeof msg, "cll: error: cannot spill records to %s: %s",
                     s->spill_path, w < 0 ? strerror(errno) : "no space written");
            cll_fatal_(msg, "cannot spill records");
        }
        left -= (size_t)w;
        for (int i = 0; i < 2; i++) {   /* advance past what was written */
            size_t take = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + take;
            iov[i].iov_len -= take;
            w -= (ssize_t)take;
        }
    }
    s->spill_bytes += sizeof n + n;
    __atomic_store_n(&s->spilled, __atomic_load_n(&s->records, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    s->pos = 0;
}

/* `end` that does not close the innermost open experiment of this thread. */
static __attribute__((noinline, noreturn, cold)) void end_mismatch(cll_slot *s, cll_experiment *e,
                                                             const char *site)
{
    char msg[1024], status[900];
    const cll_experiment *o = s ? innermost(s) : NULL;
    uint64_t cut = s && e->id >= 0 && e->id < s->ndropped ? s->dropped[e->id] : 0;
    if (!o && cut)       /* its begin was cut from a full stack: a recursion deeper than it holds */
        snprintf(status, sizeof status, "end of '%s' at %s after the stack of open experiments was full "
                 "(%u MiB: %llu of its frames were cut, about %zu levels of nesting of it): its begin is "
                 "gone; a recursion that deep cannot be measured level by level", e->name, site,
                 (unsigned)(STACK_LIMIT_BYTES >> 20), (unsigned long long)cut,
                 STACK_LIMIT_BYTES / FRAME_BYTES(slot_values(s, e)));
    else if (!o)
        snprintf(status, sizeof status, "end of '%s' at %s but no experiment is open", e->name, site);
    else if (o == e || o->id == e->id)
        snprintf(status, sizeof status, "end of '%s' at %s is not in the function call that "
                 "began the open '%s' (begun at %s): an experiment ends in the call of the "
                 "function that began it", e->name, site, o->name, o->source ? o->source : "?");
    else
        snprintf(status, sizeof status,
                 "end of '%s' at %s does not match the open experiment '%s' (begun at %s)",
                 e->name, site, o->name, o->source ? o->source : "?");
    snprintf(msg, sizeof msg, "%s: error: %s", site, status);
    cll_fatal_(msg, status);
}

/* Whether the frame of `e` fits on s's stack without growing it (or refusing `e`). */
static inline int begin_fits(const cll_slot *s, const cll_experiment *e)
{
    return __builtin_expect(s->top + FRAME_BYTES(e->nvars) <= s->stack_cap && e->id >= 0, 1);
}

/* Push the frame of `e` with its variables (copied now) and room for `values` values in all
 * on s's stack, which has room; the caller stamps the returned frame's t0 (and counters). */
static inline cll_frame *push_frame(cll_slot *s, cll_experiment *e, const double *vars, int values,
                                    const void *where)
{
    int n = e->nvars;
    cll_frame *f = (cll_frame *)(s->stack + s->top);
    f->e = e;
    f->where = where;
    for (int i = 0; i < n; i++)    /* a loop, not memcpy: n is small, a call is not */
        f->vars[i] = vars[i];
    *(cll_experiment **)(f->vars + values) = e;
    s->top += FRAME_BYTES(values);
    return f;
}

static inline void begin_on(cll_slot *s, cll_experiment *e, const double *vars, const void *where)
{
    if (!begin_fits(s, e))
        slot_grow(s, e);
    cll_frame *f = push_frame(s, e, vars, e->nvars, where);
    f->t0 = cll_now_();
}

/* begin on a counting slot: the counters are read into the frame after the variables, then
 * the clock. */
static void begin_counted(cll_slot *s, cll_experiment *e, const double *vars, const void *where)
{
    int values = cll_values_(e);
    if (s->top + FRAME_BYTES(values) > s->stack_bytes || e->id < 0)
        slot_grow(s, e);
    cll_frame *f = push_frame(s, e, vars, values, where);
    cll_counters_read_(f->vars + e->nvars);
    f->t0 = cll_now_();
}

static void end_slow(cll_slot *s, cll_experiment *e, const char *site, uint64_t t1, const void *where);
static void end_unwound(cll_slot *s, cll_experiment *e, const char *site, uint64_t t1, const void *where);

/* r->thread from the user's thread-id function: a separate call so end_on's fast path
 * can tail-call it and save no registers. */
static __attribute__((noinline)) void set_thread(cll_record *r) { r->thread = cll_thread_id_(); }

/* Slow paths are tail calls, so the common path saves no registers. */
static inline void end_on(cll_slot *s, cll_experiment *e, const char *site, uint64_t t1,
                          const void *where)
{
    if (__builtin_expect(!s || s->top == 0, 0))
        end_mismatch(s, e, site);
    const cll_experiment *o = innermost(s);
    if (__builtin_expect(o != e, 0) && o->id != e->id)   /* same name, other unit? */
        return end_unwound(s, e, site, t1, where);
    int n = e->nvars;   /* the frame's size: one name has one number of variables */
    size_t size = sizeof(cll_record) + (size_t)n * sizeof(double);
    if (__builtin_expect(s->pos + size > s->cap, 0))
        return end_slow(s, e, site, t1, where);
    cll_frame *f = top_frame(s, n);
    if (__builtin_expect(f->where != where, 0))
        return end_unwound(s, e, site, t1, where);
    cll_record *r = (cll_record *)(s->buf + s->pos);
    r->exp = (uint32_t)e->id;
    r->thread = s->thread;
    r->ticks = t1 - f->t0;
    double *to = (double *)(r + 1);
    for (int i = 0; i < n; i++)
        to[i] = f->vars[i];
    s->top = (size_t)((char *)f - s->stack);
    s->pos += size;
    __atomic_store_n(&s->records, s->records + 1, __ATOMIC_RELAXED);
    if (cll_thread_id_)
        return set_thread(r);
}

/* Spill s's full buffer. The spill is the runtime's work, not the program's: every frame
 * open on this thread has its begin stamp moved later by the spill's duration (and its
 * counters' start by what they counted meanwhile), so no experiment's time or counts include
 * the spill. Returns the ticks it took, by which the caller moves its end stamp too. */
static uint64_t spill_aside(cll_slot *s)
{
    int k = s->counting ? cll_counters_n_ : 0;
    double before[CLL_MAX_COUNTERS], after[CLL_MAX_COUNTERS];
    if (k)
        cll_counters_read_(before);
    uint64_t start = cll_now_();
    slot_spill(s);
    uint64_t spent = cll_now_() - start;
    if (k)
        cll_counters_read_(after);
    for (size_t at = 0; at < s->top;) {
        cll_frame *f = (cll_frame *)(s->stack + at);
        f->t0 += spent;
        for (int i = 0; i < k; i++)
            f->vars[f->e->nvars + i] += after[i] - before[i];
        at += FRAME_BYTES(slot_values(s, f->e));
    }
    return spent;
}

/* end on a counting slot (the checks of end_on done): spill if the buffer is full, read the
 * counters, and record the variables and the counters' differences since the begin. */
static void end_counted(cll_slot *s, cll_experiment *e, uint64_t t1)
{
    int n = e->nvars, values = cll_values_(e);
    size_t size = sizeof(cll_record) + (size_t)values * sizeof(double);
    if (s->pos + size > s->buf_bytes)
        t1 += spill_aside(s);
    double now[CLL_MAX_COUNTERS];
    cll_counters_read_(now);
    cll_frame *f = top_frame(s, values);
    cll_record *r = (cll_record *)(s->buf + s->pos);
    r->exp = (uint32_t)e->id;
    r->thread = cll_thread_id_ ? cll_thread_id_() : s->thread;
    r->ticks = t1 - f->t0;
    double *to = (double *)(r + 1);
    for (int i = 0; i < n; i++)
        to[i] = f->vars[i];
    for (int i = n; i < values; i++)
        to[i] = now[i - n] - f->vars[i];
    s->top = (size_t)((char *)f - s->stack);
    s->pos += size;
    __atomic_store_n(&s->records, s->records + 1, __ATOMIC_RELAXED);
}

/* end_on past its fast path: on a counting slot, end_counted; otherwise the buffer is full:
 * spill it, then record into the emptied buffer. */
static __attribute__((noinline, cold)) void end_slow(cll_slot *s, cll_experiment *e,
                                                     const char *site, uint64_t t1, const void *where)
{
    if (s->counting) {
        if (top_frame(s, cll_values_(e))->where != where)
            return end_unwound(s, e, site, t1, where);
        return end_counted(s, e, t1);
    }
    t1 += spill_aside(s);
    end_on(s, e, site, t1, where);
}

/* Whether a frame begun where the C stack frame was `begun` belongs to a call that has
 * returned, seen from the function whose frame is `here`: the stack grows down, so such a
 * frame lies below (x86-64, AArch64 and every target gcc builds call's programs for). */
static inline int returned(const void *begun, const void *here)
{
    return here && begun && (uintptr_t)begun < (uintptr_t)here;
}

/* Pop the innermost frames of `s` that calls which have returned began (seen from `where`),
 * counting each as left open (s->dropped, reported at exit as squash_leaked's are); how many. */
static int unwind(cll_slot *s, const void *where)
{
    int popped = 0;
    while (s->top) {
        const cll_experiment *o = innermost(s);
        cll_frame *f = top_frame(s, slot_values(s, o));
        if (!returned(f->where, where))
            break;
        count_dropped(s, o->id, 1);
        s->top = (size_t)((char *)f - s->stack);
        popped++;
    }
    return popped;
}

/* An end that does not find its own frame innermost: the frames above it that calls since
 * returned from left open are popped (unwind), then the end is what it would have been; an
 * end that still does not match stops the run (end_mismatch). */
static __attribute__((noinline, cold)) void end_unwound(cll_slot *s, cll_experiment *e,
                                                        const char *site, uint64_t t1, const void *where)
{
    unwind(s, where);
    const cll_experiment *o = innermost(s);
    if (!o || (o != e && o->id != e->id))
        end_mismatch(s, e, site);
    const void *begun = top_frame(s, slot_values(s, o))->where;
    if (where && begun && begun != where)   /* its own name, begun by another call */
        end_mismatch(s, e, site);
    end_on(s, e, site, t1, begun);
}

/* cll_begin of a thread's first record, with a full open stack, or counting (cold path). */
static __attribute__((noinline, cold)) void begin_slow(cll_experiment *e, const double *vars,
                                                       const void *where)
{
    cll_slot *s = self ? self : slot_register();
    if (s->counting)
        return begin_counted(s, e, vars, where);
    begin_on(s, e, vars, where);
}

/* The begin stamp with the monotonic clock: a call, kept out of cll_begin's TSC path. */
static __attribute__((noinline)) void stamp_monotonic(cll_frame *f) { f->t0 = cll_monotonic_ns_(); }

/* cll_end with the monotonic clock: a call, kept out of cll_end's TSC path. */
static __attribute__((noinline)) void end_monotonic(cll_experiment *e, const char *site,
                                                    const void *where)
{
    uint64_t t1 = cll_monotonic_ns_();
    end_on(self, e, site, t1, where);
}

/* The hot path: every slower case is a tail call, so the TSC path is a leaf that saves no
 * registers; the clock is read last at begin and first at end. */
void cll_begin(cll_experiment *e, const double *vars, const void *where)
{
    cll_slot *s = self;
    if (__builtin_expect(s == NULL, 0) || !begin_fits(s, e))
        return begin_slow(e, vars, where);
    cll_frame *f = push_frame(s, e, vars, e->nvars, where);
    if (!cll_clock_inline_())
        return stamp_monotonic(f);
    f->t0 = cll_tsc_();
}

void cll_end(cll_experiment *e, const char *site, const void *where)
{
    if (!cll_clock_inline_())
        return end_monotonic(e, site, where);
    uint64_t t1 = cll_tsc_();
    end_on(self, e, site, t1, where);
}

/* Visit the records in buf[0..len) of slot s. */
static int each_in(const cll_slot *s, const char *buf, size_t len, cll_record_fn fn, void *ctx)
{
    size_t pos = 0;
    while (pos < len) {
        const cll_record *r = (const cll_record *)(buf + pos);
        int rc = fn(r, (const double *)(r + 1), ctx);
        if (rc)
            return rc;
        pos += sizeof *r + (size_t)slot_values(s, cll_experiment_at_((int)r->exp)) * sizeof(double);
    }
    return 0;
}

/* Visit the records a slot spilled before byte `end` of its file, chunk by chunk through a
 * buffer of its capacity. */
static int each_spilled(const cll_slot *s, uint64_t end, cll_record_fn fn, void *ctx)
{
    if (s->spill_fd < 0)
        return 0;
    char *chunk = s->readback;
    int rc = 0;
    for (uint64_t off = s->spill_start; off < end && rc == 0;) {
        uint64_t n;
        errno = 0;
        if (pread(s->spill_fd, &n, sizeof n, (off_t)off) != (ssize_t)sizeof n || n > s->buf_bytes
            || pread(s->spill_fd, chunk, n, (off_t)(off + sizeof n)) != (ssize_t)n) {
            if (errno == 0)
                errno = EIO;
            rc = -1;
            break;
        }
        rc = each_in(s, chunk, n, fn, ctx);
        off += sizeof n + n;
    }
    return rc;
}

/* Visit every record of slot `s` as it is now: spilled ones first, then its buffer's. */
static int each_of_slot(const cll_slot *s, cll_record_fn fn, void *ctx)
{
    int rc = each_spilled(s, s->spill_bytes, fn, ctx);
    return rc ? rc : each_in(s, s->buf, s->pos, fn, ctx);
}

int cll_store_each_(cll_record_fn fn, void *ctx)
{
    for (cll_slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s; s = s->next) {
        int rc = each_of_slot(s, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

/* What each slot held at cll_store_mark_: its spilled bytes and the bytes in its buffer. */
static struct {
    uint64_t spill_bytes;
    size_t pos;
} marks[CLL_MARKED_SLOTS];
static int nmarks;

void cll_store_mark_(void)
{
    nmarks = 0;
    for (cll_slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s && nmarks < CLL_MARKED_SLOTS; s = s->next) {
        marks[nmarks].spill_bytes = __atomic_load_n(&s->spill_bytes, __ATOMIC_RELAXED);
        marks[nmarks++].pos = __atomic_load_n(&s->pos, __ATOMIC_RELAXED);
    }
}

/* The records of slot `s` up to its mark: the spilled chunks before the mark, then the first
 * `pos` bytes of the buffer, which are still in the buffer if the slot has not spilled since,
 * and else the start of the chunk it spilled first (a buffer is spilled whole, then refilled
 * from its start; a slot without a spill file at the mark spills its first chunk at
 * spill_start, after the file's header). */
static int each_marked(const cll_slot *s, uint64_t spill_bytes, size_t pos, cll_record_fn fn, void *ctx)
{
    int rc = each_spilled(s, spill_bytes, fn, ctx);
    if (rc)
        return rc;
    if (__atomic_load_n(&s->spill_bytes, __ATOMIC_RELAXED) == spill_bytes)
        return each_in(s, s->buf, pos, fn, ctx);
    uint64_t n, at = spill_bytes ? spill_bytes : s->spill_start;
    if (pread(s->spill_fd, &n, sizeof n, (off_t)at) != (ssize_t)sizeof n || n < pos
        || pread(s->spill_fd, s->readback, pos, (off_t)(at + sizeof n)) != (ssize_t)pos) {
        errno = errno ? errno : EIO;
        return -1;
    }
    return each_in(s, s->readback, pos, fn, ctx);
}

int cll_store_each_marked_(cll_record_fn fn, void *ctx)
{
    int i = 0;
    for (cll_slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s; s = s->next, i++) {
        int rc = 0;
        if (i < nmarks)
            rc = each_marked(s, marks[i].spill_bytes, marks[i].pos, fn, ctx);
        else if (i >= CLL_MARKED_SLOTS)       /* (a thread that began after the mark has none) */
            rc = each_of_slot(s, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

/* What cll_store_each_open_ counts with, by experiment id (cll_store_reserve_ makes it, so
 * that a trace written after a signal allocates nothing). */
static struct {
    uint64_t *count;    /* open frames of each experiment on the slot being counted */
    uint64_t *stacked;  /* of those, the ones still on its stack (not left by returned calls) */
    int *order;         /* the experiments with open frames, outermost first */
    int capacity;
} tally;

void cll_store_reserve_(void)
{
    int n = cll_experiment_count_();
    if (n <= tally.capacity)
        return;
    uint64_t *count = calloc((size_t)n, sizeof *count), *stacked = calloc((size_t)n, sizeof *stacked);
    int *order = malloc((size_t)n * sizeof *order);
    if (!count || !stacked || !order) {
        free(count);
        free(stacked);
        free(order);
        return;
    }
    free(tally.count);
    free(tally.stacked);
    free(tally.order);
    tally.count = count;
    tally.stacked = stacked;
    tally.order = order;
    tally.capacity = n;
}

/* Count one more open frame of experiment `id` (its first makes it next in the order). */
static void tally_add(int id, uint64_t frames, int *listed)
{
    if (!frames)
        return;
    if (!tally.count[id])
        tally.order[(*listed)++] = id;
    tally.count[id] += frames;
}

void cll_store_each_open_(void (*fn)(const cll_experiment *e, int thread, uint64_t times,
                                     uint64_t stacked, void *ctx), void *ctx)
{
    for (cll_slot *s = slots; s; s = s->next) {
        int listed = 0;
        for (int id = 0; id < s->ndropped && id < tally.capacity; id++)
            tally_add(id, s->dropped[id], &listed);
        for (size_t at = 0; at < s->top;) {
            const cll_frame *f = (const cll_frame *)(s->stack + at);
            if (f->e->id < tally.capacity) {
                tally_add(f->e->id, 1, &listed);
                tally.stacked[f->e->id]++;
            } else {    /* registered after the tally was made: one line per frame */
                fn(f->e, s->thread, 1, 1, ctx);
            }
            at += FRAME_BYTES(slot_values(s, f->e));
        }
        for (int i = 0; i < listed; i++) {
            int id = tally.order[i];
            fn(cll_experiment_at_(id), s->thread, tally.count[id], tally.stacked[id], ctx);
            tally.count[id] = tally.stacked[id] = 0;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cll_store_overhead_(void)
{
    enum { BATCHES = 9, PAIRS = 200 };
    static cll_experiment probe = {"overhead", "", "", 1, NULL, 0};
    /* static, not allocated: the header that reports it may be written out of a signal */
    static char records[PAIRS * (sizeof(cll_record) + sizeof(double))] __attribute__((aligned(64)));
    static char stack[STACK_BYTES] __attribute__((aligned(64)));
    static cll_slot slot;
    cll_slot *scratch = &slot;
    slot_init(scratch, records, sizeof records, stack);
    probe.id = 0;
    double v = 1.0, per_pair[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        scratch->pos = 0;
        uint64_t t0 = cll_now_();
        for (int i = 0; i < PAIRS; i++) {
            begin_on(scratch, &probe, &v, &v);
            end_on(scratch, &probe, "overhead", cll_now_(), &v);
        }
        per_pair[b] = (double)(cll_now_() - t0) / PAIRS;
    }
    qsort(per_pair, BATCHES, sizeof *per_pair, cmp_double);
    return per_pair[BATCHES / 2] * cll_seconds_per_tick();
}

void cll_store_remove_spills_(void)
{
    for (cll_slot *s = slots; s; s = s->next)
        if (s->spill_fd >= 0) {
            unlink(s->spill_path);
            close(s->spill_fd);
            s->spill_fd = -1;
            s->spill_bytes = 0;
        }
}

uint64_t cll_record_count(void)
{
    uint64_t n = 0;
    for (cll_slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s; s = s->next)
        n += __atomic_load_n(&s->records, __ATOMIC_RELAXED);
    return n;
}

uint64_t cll_spilled_count(void)
{
    uint64_t n = 0;
    for (cll_slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE); s; s = s->next)
        n += __atomic_load_n(&s->spilled, __ATOMIC_RELAXED);
    return n;
}

void cll_thread_ready(void)
{
    if (self == NULL)
        slot_register();
}

int cll_unwind(const void *where)
{
    return self ? unwind(self, where) : 0;
}

double *cll_open_values(const cll_experiment *e)
{
    cll_slot *s = self;
    const cll_experiment *o = s ? innermost(s) : NULL;
    if (!o || (o != e && o->id != e->id))
        return NULL;
    return top_frame(s, slot_values(s, e))->vars;
}
