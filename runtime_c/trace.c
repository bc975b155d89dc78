/* trace.c -- write the text trace of docs/trace-format.md (version 1).
 *
 * The file is written to a hidden temporary next to the trace (files.c) and then put in
 * place, so a reader never sees half a file from this writer. Two passes over the stored records:
 * one counts each experiment's records for the header, one writes them.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct writer {
    FILE *f;
    uint64_t *counts;
    const unsigned char *wanted;
    double seconds_per_tick;
    int rank;
    int reserved;       /* counts and wanted are the reserve's, not allocated */
} writer;

struct cll_trace_file {
    writer w;
    char tmp[4200];
};

/* What a trace written on the way out of a signal uses instead of allocating: at that moment
 * the program may have stopped inside malloc or fopen with their lock held. Made at
 * registration (cll_trace_reserve_), used once (cll_trace_write_ with after_signal). */
static struct {
    cll_trace_file file;
    uint64_t *counts;
    unsigned char *wanted;
    int capacity;       /* experiments that counts and wanted hold */
    FILE *spare;        /* a stream on /dev/null, never closed: the trace's fd replaces its own */
    char buffer[1 << 16];
} reserve;

void cll_trace_reserve_(void)
{
    int n = cll_experiment_count_() + 1;
    if (n > reserve.capacity) {
        uint64_t *counts = realloc(reserve.counts, (size_t)n * sizeof *counts);
        if (counts)
            reserve.counts = counts;
        unsigned char *wanted = counts ? realloc(reserve.wanted, (size_t)n) : NULL;
        if (wanted) {
            reserve.wanted = wanted;
            reserve.capacity = n;
        }
    }
    if (!reserve.spare && (reserve.spare = fopen("/dev/null", "we")))
        setvbuf(reserve.spare, reserve.buffer, _IOFBF, sizeof reserve.buffer);
}

static volatile unsigned long progress;             /* see cll_trace_progress_ */
static const char *volatile being_written;          /* the hidden file of the open trace */

unsigned long cll_trace_progress_(void) { return progress; }

void cll_trace_abandon_(void)
{
    const char *tmp = being_written;
    if (tmp)
        unlink(tmp);
}

/* Append `v` so that it reads back exactly: integers as such, others with %.17g. */
static char *put_double(char *p, double v)
{
    if (v == v && v > -1e15 && v < 1e15 && v == (double)(int64_t)v)
        return cll_put_int(p, (int64_t)v);
    return cll_put_g17(p, v);
}

static int count_record(const cll_record *r, const double *vars, void *ctx)
{
    writer *w = ctx;
    (void)vars;
    w->counts[r->exp] += w->wanted[r->exp];
    progress++;
    return 0;
}

/* Format record `r` as one trace line into `line` (at least LINE_MAX_BYTES); returns its
 * length. Many variables would overflow the line, so they are flushed through `flush`. */
enum { LINE_MAX_BYTES = 64 + 32 * 64 };

static size_t format_record(const writer *w, const cll_record *r, const double *vars, char *line,
                            int (*flush)(const char *text, size_t len, void *ctx), void *ctx)
{
    const cll_experiment *e = cll_experiment_at_((int)r->exp);
    char *p = line;
    size_t len = strlen(e->name);
    memcpy(p, e->name, len);
    p += len;
    *p++ = ' ';
    p = cll_put_int(p, w->rank);
    *p++ = ' ';
    p = cll_put_int(p, r->thread);
    *p++ = ' ';
    p = put_double(p, (double)r->ticks * w->seconds_per_tick);
    for (int i = 0, n = cll_values_(e); i < n; i++) {
        *p++ = ' ';
        p = put_double(p, vars[i]);
        if (p - line > LINE_MAX_BYTES - 64) {   /* many variables: flush part of the line */
            flush(line, (size_t)(p - line), ctx);
            p = line;
        }
    }
    *p++ = '\n';
    return (size_t)(p - line);
}

static int to_file(const char *text, size_t len, void *ctx)
{
    progress++;
    return fwrite_unlocked(text, 1, len, ctx) == len ? 0 : -1;
}

static int write_record(const cll_record *r, const double *vars, void *ctx)
{
    writer *w = ctx;
    if (!w->wanted[r->exp])
        return 0;
    char line[LINE_MAX_BYTES];
    return to_file(line, format_record(w, r, vars, line, to_file, w->f), w->f);
}

/* The experiments still open, as the `#open:` line lists them (two passes: count, write). */
typedef struct open_list {
    FILE *f;   /* NULL: only count */
    int n;
} open_list;

static void list_open(const cll_experiment *e, int thread, uint64_t times, uint64_t stacked, void *ctx)
{
    (void)stacked;
    open_list *list = ctx;
    if (list->f) {
        fprintf(list->f, "%s%s (thread %d, begun at %s", list->n ? ", " : "#open: ", e->name,
                thread, e->source ? e->source : "?");
        if (times > 1)
            fprintf(list->f, ", %llu times", (unsigned long long)times);
        fputc(')', list->f);
    }
    list->n++;
}

/* The `#open:` line listing experiments still open, if any (allocating nothing). */
static void write_open_line(FILE *f)
{
    open_list count = {NULL, 0}, list = {f, 0};
    cll_store_each_open_(list_open, &count);
    if (!count.n)
        return;
    cll_store_each_open_(list_open, &list);
    fputc('\n', f);
}

/* A layer's addition to the traces of this process's own records (cll_extend_own_trace). */
static void (*own_header)(FILE *f);
static int (*own_lines)(int (*sink)(const char *text, size_t len, void *ctx), void *ctx);

void cll_extend_own_trace(void (*header)(FILE *f),
                          int (*lines)(int (*sink)(const char *text, size_t len, void *ctx), void *ctx))
{
    own_header = header;
    own_lines = lines;
}

/* The header; `own`: a trace of this process's own records, with the layer's lines. */
static void write_header(writer *w, const char *status, const char *more_header, int own)
{
    FILE *f = w->f;
    cll_header_run_lines_(f, "#cll-trace", "%.6g");
    fprintf(f, "#overhead: %.3g\n#status: %s\n", cll_store_overhead_(), status);
    if (more_header)
        fputs(more_header, f);
    if (own && own_header)
        own_header(f);
    write_open_line(f);
    for (int id = 0; id < cll_experiment_count_(); id++) {
        if (!w->wanted[id])
            continue;
        cll_header_experiment_(f, cll_experiment_at_(id));
        fprintf(f, "#  records: %llu\n", (unsigned long long)w->counts[id]);
        progress++;
    }
    fputs("#data\n", f);
}

/* Whether experiment `id` is among `names` (NULL: all). */
static int is_wanted(int id, const char *const *names, int nnames)
{
    if (!names)
        return 1;
    for (int i = 0; i < nnames; i++)
        if (!strcmp(names[i], cll_experiment_at_(id)->name))
            return 1;
    return 0;
}

/* A writer for `names` (NULL: all) with this process's counts; -1 if out of memory. With
 * `reserved`, on the reserve's arrays where they are large enough. */
static int writer_init(writer *w, const char *const *names, int nnames, int reserved)
{
    int n = cll_experiment_count_();
    if (reserved && n < reserve.capacity) {
        memset(reserve.counts, 0, (size_t)reserve.capacity * sizeof *reserve.counts);
        *w = (writer){NULL, reserve.counts, reserve.wanted, cll_seconds_per_tick(), cll_rank_(),
                      1};
    } else
        *w = (writer){NULL, calloc((size_t)n + 1, sizeof *w->counts), calloc((size_t)n + 1, 1),
                      cll_seconds_per_tick(), cll_rank_(), 0};
    if (!w->counts || !w->wanted) {
        free(w->counts);
        free((void *)w->wanted);
        errno = ENOMEM;
        return -1;
    }
    for (int id = 0; id < n; id++)
        ((unsigned char *)w->wanted)[id] = (unsigned char)is_wanted(id, names, nnames);
    cll_store_mark_();          /* the header counts, and the file holds, the records stored now */
    return cll_store_each_marked_(count_record, w) ? -1 : 0;
}

static void writer_free(writer *w)
{
    if (w->reserved)
        return;
    free(w->counts);
    free((void *)w->wanted);
}

int cll_experiment_total(void) { return cll_experiment_count_(); }

int cll_record_counts(const char *const *names, int nnames, uint64_t *counts)
{
    writer w;
    int rc = writer_init(&w, names, nnames, 0);
    if (rc == 0)
        memcpy(counts, w.counts, (size_t)cll_experiment_count_() * sizeof *counts);
    writer_free(&w);
    return rc;
}

typedef struct text_chunks {
    writer w;
    char *buf;
    size_t len, cap;
    int (*sink)(const char *text, size_t len, void *ctx);
    void *ctx;
} text_chunks;

/* Append to the chunk; hand it to the sink first when the text would not fit. */
static int chunk_add(const char *text, size_t len, void *ctx)
{
    text_chunks *t = ctx;
    if (t->len + len > t->cap && t->len) {
        int rc = t->sink(t->buf, t->len, t->ctx);
        t->len = 0;
        if (rc)
            return rc;
    }
    memcpy(t->buf + t->len, text, len);
    t->len += len;
    return 0;
}

static int chunk_record(const cll_record *r, const double *vars, void *ctx)
{
    text_chunks *t = ctx;
    if (!t->w.wanted[r->exp])
        return 0;
    char line[LINE_MAX_BYTES];
    size_t len = format_record(&t->w, r, vars, line, chunk_add, t);
    return chunk_add(line, len, t);
}

int cll_records_text(const char *const *names, int nnames, size_t chunk,
                     int (*sink)(const char *text, size_t len, void *ctx), void *ctx)
{
    text_chunks t = {.cap = chunk < 4096 ? 4096 : chunk, .sink = sink, .ctx = ctx};
    if (writer_init(&t.w, names, nnames, 0))
        return -1;
    t.buf = malloc(t.cap);
    int rc = t.buf ? cll_store_each_marked_(chunk_record, &t) : -1;
    if (rc == 0 && t.len)
        rc = sink(t.buf, t.len, ctx);
    free(t.buf);
    writer_free(&t.w);
    return rc;
}

/* Free the trace and its writer's arrays (the reserve's stay). */
static void release(cll_trace_file *t)
{
    writer_free(&t->w);
    if (t != &reserve.file)
        free(t);
}

/* Close the trace's stream and release it; the reserve's stream is only flushed (it stays). */
static int finish(cll_trace_file *t)
{
    int rc = t == &reserve.file ? fflush(t->w.f) : fclose(t->w.f);
    release(t);
    return rc;
}

/* Give up a trace being written: its file removed, errno kept. */
static void discard(cll_trace_file *t)
{
    int saved = errno;
    being_written = NULL;
    unlink(t->tmp);
    finish(t);
    errno = saved;
}

/* A stream writing to `fd`: the reserve's stream with `fd` in place of its own (closed), or
 * a new one. */
static FILE *stream_on(int fd, int reserved)
{
    if (!reserved)
        return fdopen(fd, "w");
    if (dup2(fd, fileno(reserve.spare)) < 0)
        return NULL;
    close(fd);
    return reserve.spare;
}

/* cll_trace_open; `own`: a trace of this process's own records (cll_trace_write_);
 * `reserved`: allocating nothing, on the reserve (on the way out of a signal). */
static cll_trace_file *open_trace(const char *status, const char *const *names, int nnames,
                                  const uint64_t *more_counts, const char *more_header, int own,
                                  int reserved)
{
    reserved = reserved && reserve.spare && reserve.capacity;
    cll_trace_file *t = reserved ? memset(&reserve.file, 0, sizeof reserve.file)
                                 : calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (writer_init(&t->w, names, nnames, reserved)) {
        if (!reserved)
            free(t);
        return NULL;
    }
    for (int id = 0; more_counts && id < cll_experiment_count_(); id++)
        t->w.counts[id] += t->w.wanted[id] ? more_counts[id] : 0;
    int fd = cll_hidden_file_(t->tmp, sizeof t->tmp, "tmp");
    t->w.f = fd < 0 ? NULL : stream_on(fd, t == &reserve.file);
    if (!t->w.f) {
        int saved = errno;
        if (fd >= 0)
            close(fd), unlink(t->tmp);
        release(t);
        errno = saved;
        return NULL;
    }
    being_written = t->tmp;
    if (t != &reserve.file)
        setvbuf(t->w.f, NULL, _IOFBF, 1 << 20);
    write_header(&t->w, status, more_header, own);
    if (cll_store_each_marked_(write_record, &t->w)) {
        discard(t);
        return NULL;
    }
    return t;
}

cll_trace_file *cll_trace_open(const char *status, const char *const *names, int nnames,
                               const uint64_t *more_counts, const char *more_header)
{
    return open_trace(status, names, nnames, more_counts, more_header, 0, 0);
}

int cll_trace_append(cll_trace_file *t, const char *text, size_t len)
{
    return to_file(text, len, t->w.f);
}

int cll_trace_close(cll_trace_file *t)
{
    int rc = fputs("#end\n", t->w.f) < 0 || fflush(t->w.f) ? -1 : 0;
    if (rc == 0)
        rc = cll_place_trace_(t->tmp, fileno(t->w.f));
    being_written = NULL;
    if (rc) {
        int saved = errno;
        unlink(t->tmp);
        errno = saved;
    }
    return finish(t) ? -1 : rc;
}

int cll_trace_write_(const char *status, const char *const *names, int nnames, int after_signal)
{
    cll_trace_file *t = open_trace(status, names, nnames, NULL, NULL, 1, after_signal);
    if (!t)
        return -1;
    if (own_lines && own_lines(to_file, t->w.f)) {
        discard(t);
        return -1;
    }
    return cll_trace_close(t);
}
