/* counters.c -- hardware counters through PAPI, named by the environment variable
 * CLL_COUNTERS (docs/runtime.md#hardware-counters).
 *
 * At start-up the comma-separated event names are checked one by one (known to PAPI, can be
 * added to an event set, can be started) and then together on the starting thread; an event
 * that fails is dropped, and one line on stderr names every dropped event with PAPI's reason.
 * The events kept are counted from then on in one event set per thread, made on the thread's
 * first read; the store reads them at each experiment's begin and end (store.c) and the
 * record carries the differences as extra columns, named by cll_counter_column_().
 * Compiled without CLL_HAVE_PAPI (no papi.h when the runtime was built), CLL_COUNTERS only
 * earns a warning. Either way, with no counter kept cll_counters_n_ stays 0 and the store's
 * hot path runs as if this module did not exist.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CLL_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

#define CLL_STRING_(x) #x
#define CLL_STRING(x) CLL_STRING_(x)

int cll_counters_n_;
static char events[CLL_MAX_COUNTERS][128];   /* as the user wrote them */
static char columns[CLL_MAX_COUNTERS][128];  /* as trace columns: perf::TASK-CLOCK -> perf_TASK_CLOCK */

const char *cll_counter_event_(int i) { return events[i]; }
const char *cll_counter_column_(int i) { return columns[i]; }

#ifdef CLL_HAVE_PAPI
/* The column name of event `name`: each run of characters other than letters, digits and
 * '_' becomes one '_', and a leading digit gets a '_' before it, so that llac can name it. */
static void column_of(const char *name, char *out, size_t size)
{
    size_t n = 0;
    if (*name >= '0' && *name <= '9')
        out[n++] = '_';
    for (const char *p = name; *p && n + 1 < size; p++) {
        int keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
                   || *p == '_';
        if (keep)
            out[n++] = *p;
        else if (n == 0 || out[n - 1] != '_')
            out[n++] = '_';
    }
    out[n] = '\0';
}

/* Whether `column` is taken: by the record's own columns or an earlier counter. */
static int column_taken(const char *column, int before)
{
    static const char *const fixed[] = {"rank", "thread", "time", "msgs_sent", "bytes_sent",
                                        "msgs_recv", "bytes_recv", "partners", "h", "mpi_time"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (!strcmp(column, fixed[i]))
            return 1;
    for (int i = 0; i < before; i++)
        if (!strcmp(column, columns[i]))
            return 1;
    return 0;
}

/* Append "NAME (reason)" to the list of dropped events. */
static void drop(char *dropped, size_t size, const char *name, const char *reason)
{
    size_t len = strlen(dropped);
    snprintf(dropped + len, size - len, "%s%s (%s)", len ? ", " : "", name, reason);
}

static __thread int thread_set = PAPI_NULL;
static __thread int thread_state;    /* 0: no set yet, 1: counting, -1: PAPI refused */

/* An event set of events[0..n) started on this thread: PAPI_OK, or PAPI's error. */
static int start_set(int *set, int n)
{
    *set = PAPI_NULL;
    int rc = PAPI_create_eventset(set);
    for (int i = 0; rc == PAPI_OK && i < n; i++)
        rc = PAPI_add_named_event(*set, events[i]);
    if (rc == PAPI_OK)
        rc = PAPI_start(*set);
    if (rc != PAPI_OK && *set != PAPI_NULL) {
        PAPI_cleanup_eventset(*set);
        PAPI_destroy_eventset(set);
    }
    return rc;
}

/* Check event `name` with the events kept so far: NULL if they can be counted together,
 * else PAPI's reason why not. */
static const char *event_problem(const char *name)
{
    int code, set, rc = PAPI_event_name_to_code(name, &code);
    if (rc != PAPI_OK)
        return rc == PAPI_ENOEVNT ? PAPI_strerror(rc) : "PAPI knows no event of that name";
    snprintf(events[cll_counters_n_], sizeof events[0], "%s", name);
    rc = start_set(&set, cll_counters_n_ + 1);
    if (rc == PAPI_OK) {
        long long ignored[CLL_MAX_COUNTERS];
        PAPI_stop(set, ignored);
        PAPI_cleanup_eventset(set);
        PAPI_destroy_eventset(&set);
        return NULL;
    }
    return PAPI_strerror(rc);
}

/* Start PAPI and keep the events of `list` that can be counted together; the others are
 * listed in `dropped`. Returns how many were kept. */
static int choose(char *list, char *dropped, size_t size)
{
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        drop(dropped, size, "any event", rc > 0 ? "PAPI library version mismatch" : PAPI_strerror(rc));
        return 0;
    }
    if ((rc = PAPI_thread_init(pthread_self)) != PAPI_OK) {
        drop(dropped, size, "any event", PAPI_strerror(rc));
        return 0;
    }
    char *save = NULL;
    for (char *name = strtok_r(list, ", \t", &save); name; name = strtok_r(NULL, ", \t", &save)) {
        char column[sizeof columns[0]];
        column_of(name, column, sizeof column);
        const char *why = NULL;
        if (cll_counters_n_ == CLL_MAX_COUNTERS)
            why = "too many counters: at most " CLL_STRING(CLL_MAX_COUNTERS);
        else if (strlen(name) >= sizeof events[0])
            why = "name too long";
        else if (column_taken(column, cll_counters_n_))
            why = "its column name is taken";
        else
            why = event_problem(name);   /* with the events kept so far */
        if (why) {
            drop(dropped, size, name, why);
            continue;
        }
        snprintf(columns[cll_counters_n_++], sizeof columns[0], "%s", column);
    }
    return cll_counters_n_;
}

void cll_counters_read_(double *out)
{
    long long v[CLL_MAX_COUNTERS];
    if (thread_state == 0) {
        PAPI_register_thread();
        thread_state = start_set(&thread_set, cll_counters_n_) == PAPI_OK ? 1 : -1;
    }
    if (thread_state < 0 || PAPI_read(thread_set, v) != PAPI_OK) {
        for (int i = 0; i < cll_counters_n_; i++)
            out[i] = NAN;
        return;
    }
    for (int i = 0; i < cll_counters_n_; i++)
        out[i] = (double)v[i];
}
#else
void cll_counters_read_(double *out) { (void)out; }   /* never called: no counter is kept */
#endif

void cll_counters_init_(void)
{
    const char *want = getenv("CLL_COUNTERS");
    if (!want || !want[strspn(want, ", \t")])
        return;
#ifdef CLL_HAVE_PAPI
    char *list = strdup(want), dropped[4096] = "";
    int kept = list ? choose(list, dropped, sizeof dropped) : 0;
    free(list);
    if (*dropped)
        fprintf(stderr, "cll: warning: CLL_COUNTERS: cannot count %s; %s\n", dropped,
                kept ? "the trace has no column for them" : "the run records time only");
    if (kept)
        cll_counters_read_((double[CLL_MAX_COUNTERS]){0});   /* this thread's set, now */
#else
    fprintf(stderr, "cll: warning: CLL_COUNTERS is set but this runtime was built without "
            "PAPI (install libpapi-dev, then reinstall llac): the run records time only\n");
#endif
}
