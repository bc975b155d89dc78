/* trace.c -- write the text trace of docs/trace-format.md (version 1).
 *
 * The file is written to a hidden temporary next to the trace and renamed over it, so a
 * reader never sees half a file from this writer. Two passes over the stored records:
 * one counts each experiment's records for the header, one writes them.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cwd[4096] = ".";
static char trace_env[4096];        /* CLL_TRACE made absolute, or "" */
static char command[4096];
static char trace_path[8192];

void cll_paths_init_(void)
{
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, ".");
    const char *env = getenv("CLL_TRACE");
    if (env && *env)
        snprintf(trace_env, sizeof trace_env, "%s%s%s", env[0] == '/' ? "" : cwd,
                 env[0] == '/' ? "" : "/", env);
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(command, 1, sizeof command - 1, f);
        fclose(f);
        while (n > 0 && command[n - 1] == '\0')
            n--;
        for (size_t i = 0; i < n; i++)
            if (command[i] == '\0' || command[i] == '\n' || command[i] == '\r')
                command[i] = ' ';
        command[n] = '\0';
    }
}

const char *cll_program_name_(void) { return program_invocation_short_name; }

const char *cll_trace_path(void)
{
    if (trace_env[0])
        snprintf(trace_path, sizeof trace_path, "%s", trace_env);
    else
        snprintf(trace_path, sizeof trace_path, "%s/%s.cll.%d.dat", cwd, cll_program_name_(),
                 cll_procs_());
    return trace_path;
}

void cll_hidden_path_(char *out, size_t size, const char *what, const char *suffix)
{
    const char *path = cll_trace_path();
    const char *slash = strrchr(path, '/');
    int dirlen = (int)(slash - path);     /* trace paths are absolute */
    snprintf(out, size, "%.*s/.%s.%s.%ld%s", dirlen, path, slash + 1, what, (long)getpid(), suffix);
}

typedef struct writer {
    FILE *f;
    uint64_t *counts;
    const unsigned char *wanted;
    double seconds_per_tick;
    int rank;
} writer;

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
    return 0;
}

static int write_record(const cll_record *r, const double *vars, void *ctx)
{
    writer *w = ctx;
    if (!w->wanted[r->exp])
        return 0;
    const cll_experiment *e = cll_experiment_at_((int)r->exp);
    char line[64 + 32 * 64], *p = line;
    size_t len = strlen(e->name);
    memcpy(p, e->name, len);
    p += len;
    *p++ = ' ';
    p = put_int(p, w->rank);
    *p++ = ' ';
    p = put_int(p, r->thread);
    *p++ = ' ';
    p = put_double(p, (double)r->ticks * w->seconds_per_tick);
    for (int i = 0; i < e->nvars; i++) {
        *p++ = ' ';
        p = put_double(p, vars[i]);
        if (p - line > (long)sizeof line - 64) {   /* many variables: flush part of the line */
            fwrite_unlocked(line, 1, (size_t)(p - line), w->f);
            p = line;
        }
    }
    *p++ = '\n';
    return fwrite_unlocked(line, 1, (size_t)(p - line), w->f) == (size_t)(p - line) ? 0 : -1;
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

static void write_header(writer *w, const char *status)
{
    FILE *f = w->f;
    char date[32] = "", host[256] = "";
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    gethostname(host, sizeof host - 1);
    fprintf(f, "#cll-trace %d\n#program: %s\n#source: %s\n#command: %s\n#date: %s\n#host: %s\n",
            CLL_TRACE_FORMAT_VERSION, cll_program_name_(), cll_sources_(), command, date, host);
    fprintf(f, "#parallel: %s\n#procs: %d\n#timer: %s\n#timer_resolution: %.6g\n",
            cll_parallel_(), cll_procs_(), cll_timer_name(), cll_seconds_per_tick());
    fprintf(f, "#overhead: %.3g\n#status: %s\n", cll_store_overhead_(), status);
    write_open_line(f);
    for (int id = 0; id < cll_experiment_count_(); id++) {
        if (!w->wanted[id])
            continue;
        const cll_experiment *e = cll_experiment_at_(id);
        fprintf(f, "#experiment: %s\n#  formula: %s\n#  source: %s\n#  columns: rank thread time",
                e->name, e->formula, e->source ? e->source : "?");
        for (int i = 0; i < e->nvars; i++)
            fprintf(f, " %s", e->vars[i]);
        fprintf(f, "\n#  records: %llu\n", (unsigned long long)w->counts[id]);
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

int cll_trace_write_(const char *status, const char *const *names, int nnames)
{
    int n = cll_experiment_count_();
    writer w = {NULL, calloc((size_t)n + 1, sizeof *w.counts), calloc((size_t)n + 1, 1),
                cll_seconds_per_tick(), cll_rank_()};
    char tmp[4200];
    int rc = -1;
    if (!w.counts || !w.wanted)
        goto out;
    for (int id = 0; id < n; id++)
        ((unsigned char *)w.wanted)[id] = (unsigned char)is_wanted(id, names, nnames);
    if (cll_store_each_(count_record, &w))
        goto out;
    cll_hidden_path_(tmp, sizeof tmp, "tmp", "");
    w.f = fopen(tmp, "w");
    if (!w.f)
        goto out;
    setvbuf(w.f, NULL, _IOFBF, 1 << 20);
    write_header(&w, status);
    rc = cll_store_each_(write_record, &w);
    if (fputs("#end\n", w.f) < 0)
        rc = -1;
    if (fclose(w.f) || rc)
        rc = -1;
    else
        rc = rename(tmp, cll_trace_path());
    if (rc) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
    }
out:
    free(w.counts);
    free((void *)w.wanted);
    return rc;
}
