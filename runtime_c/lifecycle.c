/* lifecycle.c -- start-up, cll_report, and the hooks that write the trace when a program
 * ends without reporting: at normal exit (status "exit-without-report"), on fatal signals
 * ("signal <NAME>", best effort, then the default action) and on run-time errors
 * ("error: ...", exit status 70). Spill files are removed once the process is done.
 *
 * Built with -DCLL_NO_SIGNAL_HANDLERS (the Python extension), no signal handler is
 * installed, so the runtime never takes SIGINT and friends away from its host.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static volatile sig_atomic_t finished;  /* final trace written (or being written) */
static int reported, initialised;
static volatile sig_atomic_t kept;      /* the trace on disk holds more than this process's
                                           records (MPI gather): never overwrite it with them */

/* Write the trace with `status`; on failure say so on stderr. Returns 0 or -1. */
static int write_or_complain(const char *status, const char *const *names, int nnames)
{
    if (cll_trace_write_(status, names, nnames) == 0)
        return 0;
    fprintf(stderr, "cll: error: cannot write trace %s: %s\n", cll_trace_path(), strerror(errno));
    return -1;
}

static void warn_open(const cll_experiment *e, int thread, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "cll: warning: experiment '%s' (begun at %s) still open at exit in thread %d\n",
            e->name, e->source ? e->source : "?", thread);
}

static void at_exit(void)
{
    if (finished)
        return;
    finished = 1;
    cll_store_each_open_(warn_open, NULL);
    if (!reported)
        write_or_complain("exit-without-report", NULL, 0);
    cll_store_remove_spills_();
}

void cll_fatal_(const char *msg, const char *status)
{
    fprintf(stderr, "%s\n", msg);
    if (initialised && !finished && !kept) {
        finished = 1;
        char full[2048];
        snprintf(full, sizeof full, "error: %s", status);
        write_or_complain(full, NULL, 0);
        cll_store_remove_spills_();
    }
    exit(CLL_EXIT_ERROR);
}

void cll_report_status(const char *status, const char *const *names, int nnames)
{
    cll_init_();
    if (write_or_complain(status, names, nnames)) {
        finished = 1;
        cll_store_remove_spills_();
        exit(CLL_EXIT_ERROR);
    }
    reported = 1;
}

void cll_report(const char *const *names, int nnames) { cll_report_status("complete", names, nnames); }

void cll_mark_reported(void)
{
    reported = 1;
    kept = 1;
}

void cll_fail(const char *msg, const char *status) { cll_fatal_(msg, status); }

#ifndef CLL_NO_SIGNAL_HANDLERS
static const struct { int sig; const char *name; } fatal_signals[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"},
    {SIGABRT, "SIGABRT"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
};

/* Write what was measured, then let the signal take its default course. */
static void on_fatal_signal(int sig)
{
    if (!finished && !kept) {
        finished = 1;
        char status[32] = "signal ?";
        for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
            if (fatal_signals[i].sig == sig)
                snprintf(status, sizeof status, "signal %s", fatal_signals[i].name);
        write_or_complain(status, NULL, 0);
        cll_store_remove_spills_();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Handlers on an alternate stack (a stack overflow is a SIGSEGV too), except for signals
 * the program was started ignoring. */
static void install_signal_handlers(void)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i].sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(fatal_signals[i].sig, &sa, NULL);
    }
}
#endif

void cll_install_signal_handlers(void)
{
#ifndef CLL_NO_SIGNAL_HANDLERS
    install_signal_handlers();
#endif
}

/* A forked child that does not exec must not write (and clobber) its parent's trace. */
static void forget_in_child(void) { finished = 1; }

static void init_once(void)
{
    cll_timer_init_();
    cll_paths_init_();
    atexit(at_exit);
    pthread_atfork(NULL, NULL, forget_in_child);
#ifndef CLL_NO_SIGNAL_HANDLERS
    install_signal_handlers();
#endif
    initialised = 1;
}

void cll_init_(void) { pthread_once(&once, init_once); }
