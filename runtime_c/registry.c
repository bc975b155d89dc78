/* registry.c -- the experiments and programs that generated code registers.
 *
 * Every translation unit registers its experiments from a constructor. One name registered
 * twice with the same formula and working set is one experiment (both structs get the same
 * id); with two different formulas or working sets it is a fatal error naming both sources.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cll_experiment **experiments;    /* canonical struct of each id */
static int nexperiments, cap_experiments;
static char sources[4096];
static const char *parallel = "none";
static int nprocs = 1, rank;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
int (*cll_thread_id_)(void);

/* Give `e` its id: an existing experiment's of the same name, or a new one. */
static void register_experiment(cll_experiment *e)
{
    for (int i = 0; i < nexperiments; i++) {
        const cll_experiment *o = experiments[i];
        if (strcmp(o->name, e->name))
            continue;
        const char *ob = o->bytes ? o->bytes : "", *eb = e->bytes ? e->bytes : "";
        int same_formula = !strcmp(o->formula, e->formula);
        if (!same_formula || strcmp(ob, eb) || o->nvars != e->nvars) {
            char msg[2048], status[1800];
            snprintf(status, sizeof status, "experiment '%s' has two %s: '%s' at %s and '%s' at %s",
                     e->name, same_formula ? "working sets" : "formulas", same_formula ? ob : o->formula,
                     o->source ? o->source : "?", same_formula ? eb : e->formula,
                     e->source ? e->source : "?");
            snprintf(msg, sizeof msg, "%s: error: %s", e->source ? e->source : "cll", status);
            pthread_mutex_unlock(&registry_lock);
            cll_fatal_(msg, status);
        }
        e->id = i;
        return;
    }
    if (nexperiments == cap_experiments) {
        cap_experiments = cap_experiments ? 2 * cap_experiments : 16;
        experiments = realloc(experiments, cap_experiments * sizeof *experiments);
        if (!experiments)
            cll_fatal_("cll: error: out of memory registering experiments", "out of memory");
    }
    e->id = nexperiments;
    experiments[nexperiments++] = e;
}

/* Add `source` to the comma-separated list of instrumented sources unless present. */
static void add_source(const char *source)
{
    size_t len = strlen(source);
    for (const char *p = sources; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, source, n))
            return;
        p += n + (end != NULL);
    }
    size_t used = strlen(sources);
    snprintf(sources + used, sizeof sources - used, "%s%s", used ? "," : "", source);
}

void cll_registry_add_(const cll_program *program)
{
    pthread_mutex_lock(&registry_lock);
    if (program->source)
        add_source(program->source);
    if (program->parallel && strcmp(program->parallel, "none"))
        parallel = program->parallel;
    for (int i = 0; i < program->nexperiments; i++)
        register_experiment(program->experiments[i]);
    pthread_mutex_unlock(&registry_lock);
}

void cll_registry_set_procs_(int procs, int rank_)
{
    nprocs = procs;
    rank = rank_;
}

void cll_set_thread_id_function(int (*thread_id)(void)) { cll_thread_id_ = thread_id; }

int cll_experiment_count_(void) { return nexperiments; }
const cll_experiment *cll_experiment_at_(int id) { return experiments[id]; }
const char *cll_sources_(void) { return sources; }
const char *cll_parallel_(void) { return parallel; }
int cll_procs_(void) { return nprocs; }
int cll_rank_(void) { return rank; }
