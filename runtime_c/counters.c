/* counters.c -- counters read at each experiment's begin and end, named by the environment
 * variable CLL_COUNTERS (docs/runtime.md#hardware-counters): PAPI's events, and the runtime's
 * own events, which need neither PAPI nor a performance-monitoring unit:
 *   cll::CPU-TIME     the thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID)
 *   cll::PAGE-FAULTS  the thread's page faults, minor and major (getrusage RUSAGE_THREAD)
 * so that CPU time, the measure that survives a co-runner taking the core, can be had on the
 * many virtual machines where PAPI finds no PMU and disables even its perf:: software events.
 *
 * At start-up the comma-separated event names are checked one by one (an own event must be
 * readable; a PAPI event known to PAPI, able to join an event set with the PAPI events kept
 * so far, able to start); an event that fails is dropped, and one line on stderr names every
 * dropped event with the reason. PAPI is started only for a list that names one of its events.
 * The PAPI events kept are counted from then on in one event set per thread, made on the
 * thread's first read; the store reads all counters at each experiment's begin and end
 * (store.c) and the record carries the differences as extra columns, named by
 * cll_counter_column_(). Compiled without CLL_HAVE_PAPI (no papi.h when the runtime was
 * built), a PAPI event is dropped with that reason. With no counter kept cll_counters_n_ stays
 * 0 and the store's hot path runs as if this module did not exist.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef CLL_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

#define CLL_STRING_(x) #x
#define CLL_STRING(x) CLL_STRING_(x)

enum source { FROM_PAPI, CPU_TIME, PAGE_FAULTS };
static const struct { const char *name; enum source source; } own_events[] = {
    {"cll::CPU-TIME", CPU_TIME}, {"cll::PAGE-FAULTS", PAGE_FAULTS}};

int cll_counters_n_;
static char events[CLL_MAX_COUNTERS][128];   /* as the user wrote them */
static char columns[CLL_MAX_COUNTERS][128];  /* as trace columns: perf::TASK-CLOCK -> perf_TASK_CLOCK */
static enum source sources[CLL_MAX_COUNTERS];
static int papi_n;                           /* how many of the counters are PAPI's */

const char *cll_counter_event_(int i) { return events[i]; }
const char *cll_counter_column_(int i) { return columns[i]; }

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

/* Whether the event `name` is among those kept so far (a list that names it twice). */
static int kept_already(const char *name)
{
    for (int i = 0; i < cll_counters_n_; i++)
        if (!strcmp(events[i], name))
            return 1;
    return 0;
}

/* Append "NAME (reason)" to the list of dropped events. */
static void drop(char *dropped, size_t size, const char *name, const char *reason)
{
    size_t len = strlen(dropped);
    snprintf(dropped + len, size - len, "%s%s (%s)", len ? ", " : "", name, reason);
}

/* One of the runtime's own counters, read on this thread; -1 when the system refuses. */
static double own_count(enum source source)
{
    if (source == CPU_TIME) {
        struct timespec now;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now))
            return -1;
        return (double)now.tv_sec * 1e9 + (double)now.tv_nsec;
    }
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage))
        return -1;
    return (double)usage.ru_minflt + (double)usage.ru_majflt;
}

/* The runtime's own event called `name`, or FROM_PAPI when it is none of them. */
static enum source own_event(const char *name)
{
    for (size_t i = 0; i < sizeof own_events / sizeof *own_events; i++)
        if (!strcmp(name, own_events[i].name))
            return own_events[i].source;
    return FROM_PAPI;
}

#ifdef CLL_HAVE_PAPI
static __thread int thread_set = PAPI_NULL;
static __thread int thread_state;    /* 0: no set yet, 1: counting, -1: PAPI refused */

/* An event set of the PAPI events among events[0..n) started on this thread: PAPI_OK, or
 * PAPI's error. */
static int start_set(int *set, int n)
{
    *set = PAPI_NULL;
    int rc = PAPI_create_eventset(set);
    for (int i = 0; rc == PAPI_OK && i < n; i++)
        if (sources[i] == FROM_PAPI)
            rc = PAPI_add_named_event(*set, events[i]);
    if (rc == PAPI_OK)
        rc = PAPI_start(*set);
    if (rc != PAPI_OK && *set != PAPI_NULL) {
        PAPI_cleanup_eventset(*set);
        PAPI_destroy_eventset(set);
    }
    return rc;
}

/* PAPI started once for the whole process: NULL, or why it cannot be. */
static const char *papi_started(void)
{
    static int tried;
    static const char *problem;
    if (tried++)
        return problem;
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT)
        problem = rc > 0 ? "PAPI library version mismatch" : PAPI_strerror(rc);
    else if ((rc = PAPI_thread_init(pthread_self)) != PAPI_OK)
        problem = PAPI_strerror(rc);
    return problem;
}

/* Check PAPI event `name` with the counters kept so far (it is written at their end): NULL
 * if they can be counted together, else PAPI's reason why not. */
static const char *papi_problem(const char *name)
{
    const char *problem = papi_started();
    if (problem)
        return problem;
    int code, set, rc = PAPI_event_name_to_code(name, &code);
    if (rc != PAPI_OK)
        return rc == PAPI_ENOEVNT ? PAPI_strerror(rc) : "PAPI knows no event of that name";
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

/* Why PAPI has no CPU events here, or "": its perf_event component's disabled reason (on a
 * VM whose CPU model libpfm4 does not know, "Error libpfm4 no default PMU found"), which the
 * events' own reasons ("Event does not exist") do not say. */
static const char *papi_cpu_disabled(void)
{
    static char said[320];
    if (papi_started())
        return "";
    for (int cid = 0; cid < PAPI_num_components(); cid++) {
        const PAPI_component_info_t *info = PAPI_get_component_info(cid);
        if (info && info->disabled && !strcmp(info->name, "perf_event")) {
            snprintf(said, sizeof said, "PAPI's perf_event component is disabled here (%.160s): "
                     "cll::CPU-TIME and cll::PAGE-FAULTS count without it", info->disabled_reason);
            break;
        }
    }
    return said;
}

/* This thread's PAPI counts in v[0..papi_n): 0, or -1 where PAPI cannot read them. */
static int papi_read(long long *v)
{
    if (thread_state == 0) {
        PAPI_register_thread();
        thread_state = start_set(&thread_set, cll_counters_n_) == PAPI_OK ? 1 : -1;
    }
    return thread_state < 0 || PAPI_read(thread_set, v) != PAPI_OK ? -1 : 0;
}
#else
static const char *papi_problem(const char *name)
{
    (void)name;
    return "a PAPI event, and this runtime was built without PAPI: install libpapi-dev, then "
           "reinstall llac";
}

static int papi_read(long long *v) { (void)v; return -1; }   /* never called: papi_n is 0 */

static const char *papi_cpu_disabled(void) { return ""; }
#endif

/* Why counter `name` cannot be added to the counters kept so far, or NULL when it can; its
 * name and source are written at their end either way. */
static const char *problem(const char *name, const char *column)
{
    if (cll_counters_n_ == CLL_MAX_COUNTERS)
        return "too many counters: at most " CLL_STRING(CLL_MAX_COUNTERS);
    if (strlen(name) >= sizeof events[0])
        return "name too long";
    if (column_taken(column, cll_counters_n_))
        return "its column name is taken";
    snprintf(events[cll_counters_n_], sizeof events[0], "%s", name);
    sources[cll_counters_n_] = own_event(name);
    if (sources[cll_counters_n_] != FROM_PAPI)
        return own_count(sources[cll_counters_n_]) < 0 ? strerror(errno) : NULL;
    if (!strncmp(name, "cll::", 5))
        return "the runtime's own events are cll::CPU-TIME and cll::PAGE-FAULTS";
    return papi_problem(name);
}

/* Keep the events of `list` that can be counted together; the others are listed in
 * `dropped`, and `*papi_dropped` says whether one of them was PAPI's. Returns how many were
 * kept. */
static int choose(char *list, char *dropped, size_t size, int *papi_dropped)
{
    char *save = NULL;
    for (char *name = strtok_r(list, ", \t", &save); name; name = strtok_r(NULL, ", \t", &save)) {
        char column[sizeof columns[0]];
        column_of(name, column, sizeof column);
        if (kept_already(name))          /* CLL_COUNTERS=a,a: counted once, nothing to warn about */
            continue;
        const char *why = problem(name, column);
        if (why) {
            drop(dropped, size, name, why);
            *papi_dropped |= strncmp(name, "cll::", 5) != 0;
            continue;
        }
        papi_n += sources[cll_counters_n_] == FROM_PAPI;
        snprintf(columns[cll_counters_n_++], sizeof columns[0], "%s", column);
    }
    return cll_counters_n_;
}

void cll_counters_read_(double *out)
{
    long long v[CLL_MAX_COUNTERS];
    int papi_ok = papi_n && papi_read(v) == 0;
    for (int i = 0, k = 0; i < cll_counters_n_; i++) {
        if (sources[i] == FROM_PAPI) {
            out[i] = papi_ok ? (double)v[k] : NAN;
            k++;
        } else {
            double count = own_count(sources[i]);
            out[i] = count < 0 ? NAN : count;
        }
    }
}

void cll_counters_init_(void)
{
    const char *want = getenv("CLL_COUNTERS");
    if (!want || !want[strspn(want, ", \t")])
        return;
    char *list = strdup(want), dropped[4096] = "";
    int papi_dropped = 0, kept = list ? choose(list, dropped, sizeof dropped, &papi_dropped) : 0;
    free(list);
    const char *why = papi_dropped ? papi_cpu_disabled() : "";
    if (*dropped)
        fprintf(stderr, "cll: warning: CLL_COUNTERS: cannot count %s; %s%s%s\n", dropped,
                kept ? "the trace has no column for them" : "the run records time only",
                *why ? "; " : "", *why ? why : "");
    if (papi_n)
        cll_counters_read_((double[CLL_MAX_COUNTERS]){0});   /* this thread's set, now */
}
