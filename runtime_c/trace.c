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
} writer;

struct cll_trace_file {
    writer w;
    char tmp[4200];
};

static volatile unsigned long progress;             /* see cll_trace_progress_ */
static const char *volatile being_written;          /* the hidden file of the open trace */

unsigned long cll_trace_progress_(void) { return progress; }

void cll_trace_abandon_(void)
{
    const char *tmp = being_written;
    if (tmp)
        unlink(tmp);
}

/* Append the decimal digits of `v` to `p`; returns the new end. */
static char *put_int(char *p, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Append `v` so that it reads back exactly: integers as such, others with %.17g. */
static char *put_double(char *p, double v)
{
    if (v == v && v > -1e15 && v < 1e15 && v == (double)(int64_t)v)
        return put_int(p, (int64_t)v);
    return p + sprintf(p, "%.17g", v);
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
    p = put_int(p, w->rank);
    *p++ = ' ';
    p = put_int(p, r->thread);
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

static void write_open(const cll_experiment *e, int thread, void *ctx)
{
    fprintf(ctx, "%s%s (thread %d, begun at %s)", ftell(ctx) ? ", " : "", e->name, thread,
            e->source ? e->source : "?");
}

/* The `#open:` line listing experiments still open, if any. */
static void write_open_line(FILE *f)
{
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        return;
    cll_store_each_open_(write_open, m);
    fclose(m);
    if (size)
        fprintf(f, "#open: %s\n", text);
    free(text);
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

/* A writer for `names` (NULL: all) with this process's counts; NULL if out of memory. */
static int writer_init(writer *w, const char *const *names, int nnames)
{
    int n = cll_experiment_count_();
    *w = (writer){NULL, calloc((size_t)n + 1, sizeof *w->counts), calloc((size_t)n + 1, 1),
                  cll_seconds_per_tick(), cll_rank_()};
    if (!w->counts || !w->wanted) {
        free(w->counts);
        free((void *)w->wanted);
        errno = ENOMEM;
        return -1;
    }
    for (int id = 0; id < n; id++)
        ((unsigned char *)w->wanted)[id] = (unsigned char)is_wanted(id, names, nnames);
    return cll_store_each_(count_record, w) ? -1 : 0;
}

static void writer_free(writer *w)
{
    free(w->counts);
    free((void *)w->wanted);
}

int cll_experiment_total(void) { return cll_experiment_count_(); }

int cll_record_counts(const char *const *names, int nnames, uint64_t *counts)
{
    writer w;
    int rc = writer_init(&w, names, nnames);
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
    if (writer_init(&t.w, names, nnames))
        return -1;
    t.buf = malloc(t.cap);
    int rc = t.buf ? cll_store_each_(chunk_record, &t) : -1;
    if (rc == 0 && t.len)
        rc = sink(t.buf, t.len, ctx);
    free(t.buf);
    writer_free(&t.w);
    return rc;
}

/* Give up a trace being written: its file removed, errno kept. */
static void discard(cll_trace_file *t)
{
    int saved = errno;
    being_written = NULL;
    fclose(t->w.f);
    unlink(t->tmp);
    writer_free(&t->w);
    free(t);
    errno = saved;
}

/* cll_trace_open; `own`: a trace of this process's own records (cll_trace_write_). */
static cll_trace_file *open_trace(const char *status, const char *const *names, int nnames,
                                  const uint64_t *more_counts, const char *more_header, int own)
{
    cll_trace_file *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (writer_init(&t->w, names, nnames)) {
        free(t);
        return NULL;
    }
    for (int id = 0; more_counts && id < cll_experiment_count_(); id++)
        t->w.counts[id] += t->w.wanted[id] ? more_counts[id] : 0;
    int fd = cll_hidden_file_(t->tmp, sizeof t->tmp, "tmp");
    t->w.f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!t->w.f) {
        int saved = errno;
        if (fd >= 0)
            close(fd), unlink(t->tmp);
        writer_free(&t->w);
        free(t);
        errno = saved;
        return NULL;
    }
    being_written = t->tmp;
    setvbuf(t->w.f, NULL, _IOFBF, 1 << 20);
    write_header(&t->w, status, more_header, own);
    if (cll_store_each_(write_record, &t->w)) {
        discard(t);
        return NULL;
    }
    return t;
}

cll_trace_file *cll_trace_open(const char *status, const char *const *names, int nnames,
                               const uint64_t *more_counts, const char *more_header)
{
    return open_trace(status, names, nnames, more_counts, more_header, 0);
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
    if (fclose(t->w.f))
        rc = -1;
    if (rc) {
        int saved = errno;
        unlink(t->tmp);
        errno = saved;
    }
    writer_free(&t->w);
    free(t);
    return rc;
}

int cll_trace_write_(const char *status, const char *const *names, int nnames)
{
    cll_trace_file *t = open_trace(status, names, nnames, NULL, NULL, 1);
    if (!t)
        return -1;
    if (own_lines && own_lines(to_file, t->w.f)) {
        discard(t);
        return -1;
    }
    return cll_trace_close(t);
}
