/* lifecycle.c -- start-up, cll_report, and the hooks that write the trace when a program
 * ends without reporting: at exit (status "exit-without-report", or "exit with status N" when
 * the program's exit status is not 0; a program that measured more after its last report gets
 * the trace written again with those records, as that report named), on every catchable
 * signal whose default action ends the process ("signal <NAME>", best effort, then that
 * action; a handler the program has keeps working, see on_signal) and on run-time errors
 * ("error: ...", exit status 70). Spill files are removed once the process is done; a
 * signal that comes while a trace is being written waits until it is written; a write after a
 * signal that stops making progress (a lock the program held when it died) is given up with a
 * message (the stall guard).
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
#include <sys/time.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static volatile sig_atomic_t finished;  /* final trace written (or being written) */
static int reported;
static volatile sig_atomic_t writing;  /* a trace is being written */
static volatile sig_atomic_t kept;      /* the trace on disk holds more than this process's
                                           records (MPI gather): never overwrite it with them */

static void deliver_deferred(void);

/* Write the trace with `status`; on failure say so on stderr. Returns 0 or -1. A
 * terminating signal that comes meanwhile waits until the writer calls deliver_deferred. */
static int write_or_complain(const char *status, const char *const *names, int nnames,
                             int after_signal)
{
    writing = 1;
    int rc = cll_trace_write_(status, names, nnames, after_signal);
    writing = 0;
    if (rc == 0)
        return 0;
    fprintf(stderr, "cll: error: cannot write trace %s: %s\n", cll_trace_path(), strerror(errno));
    return -1;
}

static void warn_open(const cll_experiment *e, int thread, uint64_t times, uint64_t stacked, void *ctx)
{
    (void)ctx;
    const char *source = e->source ? e->source : "?";
    if (times == 1 && stacked == 0)     /* its frame was left by a call that has returned */
        fprintf(stderr, "cll: warning: experiment '%s' (begun at %s) was left open once in thread %d "
                "(a jump out of it skipped its end; that run has no record)\n", e->name, source, thread);
    else if (times == 1)
        fprintf(stderr, "cll: warning: experiment '%s' (begun at %s) still open at exit in thread %d\n",
                e->name, source, thread);
    else
        fprintf(stderr, "cll: warning: experiment '%s' (begun at %s) was left open %llu times in "
                "thread %d (a jump out of it skipped its end; those runs have no record)\n",
                e->name, source, (unsigned long long)times, thread);
}

/* What the last report wrote: its status, how many records there were, and the experiments
 * it named (copied: a program may pass names that do not outlive the call; NULL, 0: all). */
static char reported_status[256];
static uint64_t reported_records;
static char **reported_names;
static int reported_nnames;

static void remember_report(const char *status, const char *const *names, int nnames)
{
    for (int i = 0; i < reported_nnames; i++)
        free(reported_names[i]);
    free(reported_names);
    reported_names = NULL;
    reported_nnames = 0;
    reported_records = cll_record_count();
    snprintf(reported_status, sizeof reported_status, "%s", status);
    if (!names || nnames <= 0 || !(reported_names = calloc((size_t)nnames, sizeof *reported_names)))
        return;
    for (; reported_nnames < nnames; reported_nnames++)
        if (!(reported_names[reported_nnames] = strdup(names[reported_nnames])))
            break;
}

/* The trace at the program's end (the exit handlers below). A program that never reported
 * gets its trace, with status `unreported`; one that measured more after its last report gets
 * it again, with the experiments that report named and status `again`; an exit status other
 * than 0 is the trace's status, so that neither `call` (the .previous rule) nor llac take the
 * run for a whole one. An MPI rank's trace is rank 0's gathered file (`kept`): records after
 * its last report can only be named. */
static void end_of_program(const char *unreported, const char *again)
{
    if (finished)
        return;
    finished = 1;
    cll_store_each_open_(warn_open, NULL);
    uint64_t later = cll_record_count() - reported_records;
    if (!reported)
        write_or_complain(unreported, NULL, 0, 0);
    else if (later && kept) {     /* rank 0 gathered the report: the later ones go to this rank's file */
        cll_own_file_();
        if (write_or_complain(unreported, NULL, 0, 0) == 0)
            fprintf(stderr, "cll: warning: %llu records measured after the last report are not in the "
                    "gathered trace: this rank's records are in %s (report again before MPI_Finalize to "
                    "gather them)\n", (unsigned long long)later, cll_trace_path());
    }
    else if (later)
        write_or_complain(again, (const char *const *)reported_names, reported_nnames, 0);
    cll_store_remove_spills_();
    deliver_deferred();
}

/* The exit handler (on_exit: it sees the exit status). */
static void at_exit(int code, void *unused)
{
    (void)unused;
    char failed[48];
    snprintf(failed, sizeof failed, "exit with status %d", code);
    end_of_program(code ? failed : "exit-without-report", code ? failed : reported_status);
}

/* quick_exit's handler (at_quick_exit): as at exit, with the status "quick_exit" (its
 * handlers are not told the exit status). */
static void at_quick_exit_handler(void)
{
    end_of_program("quick_exit", "quick_exit");
}

/* Whether the records must be written by a process that dies now: never written yet, or
 * measured after the last report that rank 0 gathered (`kept`: the gathered trace holds the
 * others); those then go to the process's own file (.rank<r>, rank 0's too), every record of
 * it, which llac merges with the gathered trace, counting each record once. */
static int must_save(void)
{
    if (finished || (kept && cll_record_count() == reported_records))
        return 0;
    if (kept)
        cll_own_file_();
    return 1;
}

void cll_save_records(const char *status)
{
    if (must_save()) {
        finished = 1;
        write_or_complain(status, NULL, 0, 0);
        cll_store_remove_spills_();
    }
}

/* cll_fatal_'s handler: the trace with status "error: <status>" (cll_save_records). */
static void write_on_fatal(const char *status)
{
    char full[2048];
    snprintf(full, sizeof full, "error: %s", status);
    cll_save_records(full);
}

/* How many of `names` (NULL: all, 1) are experiments of this program, with a warning for each
 * that is not (a typo, or an experiment of a file not linked in): a report of none of them
 * would replace the trace by an empty one. */
static int known_names(const char *const *names, int nnames)
{
    if (!names)
        return 1;
    int known = 0;
    for (int i = 0; i < nnames; i++) {
        int found = 0;
        for (int id = 0; id < cll_experiment_count_() && !found; id++)
            found = !strcmp(names[i], cll_experiment_at_(id)->name);
        known += found;
        if (!found)
            fprintf(stderr, "cll: warning: report names '%s', which is no experiment of this program (a typo, "
                    "or its file is not linked in): left out\n", names[i]);
    }
    return known;
}

void cll_report_status(const char *status, const char *const *names, int nnames)
{
    cll_init_();
    if (!known_names(names, nnames)) {
        fprintf(stderr, "cll: warning: this report names no experiment of the program: %s is left as it was\n",
                cll_trace_path());
        return;
    }
    if (write_or_complain(status, names, nnames, 0)) {
        finished = 1;
        cll_store_remove_spills_();
        exit(CLL_EXIT_ERROR);
    }
    reported = 1;
    remember_report(status, names, nnames);
    deliver_deferred();
}

void cll_report(const char *const *names, int nnames) { cll_report_status("complete", names, nnames); }

void cll_mark_reported(void)
{
    reported = 1;
    kept = 1;
    reported_records = cll_record_count();
}

void cll_fail(const char *msg, const char *status) { cll_fatal_(msg, status); }

void cll_fail_unstarted(const char *msg)
{
    finished = 1;   /* nothing to write, at exit either */
    fprintf(stderr, "%s\n", msg);
    cll_store_remove_spills_();
    exit(CLL_EXIT_ERROR);
}

#ifndef CLL_NO_SIGNAL_HANDLERS
/* Every signal whose default action ends the process (signal(7): Term and Core) and that
 * can be caught, plus the real-time signals (Term) handled below. */
static const struct { int sig; const char *name; } terminating[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},     {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},   {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"},   {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"},
    {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},   {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
    {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGIO, "SIGIO"},   {SIGSYS, "SIGSYS"},
#ifdef SIGSTKFLT
    {SIGSTKFLT, "SIGSTKFLT"},
#endif
#ifdef SIGPWR
    {SIGPWR, "SIGPWR"},
#endif
};

static struct sigaction previous[NSIG];     /* what each signal did before our handler */
static volatile sig_atomic_t deferred;      /* a signal that came while the trace was written */

/* Signals after which the program cannot go on (a fault re-executes, abort() re-raises):
 * their records are saved even when the program (or an MPI library) has a handler of its own. */
static int always_fatal(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

static void signal_name(int sig, char *out, size_t size)
{
    for (size_t i = 0; i < sizeof terminating / sizeof *terminating; i++)
        if (terminating[i].sig == sig) {
            snprintf(out, size, "%s", terminating[i].name);
            return;
        }
    snprintf(out, size, "SIGRTMIN+%d", sig - SIGRTMIN);
}

static void on_signal(int sig, siginfo_t *info, void *context);

/* Let this thread receive `sig` (blocked inside its own handler, or by the program). */
static void unblock(int sig)
{
    sigset_t just;
    sigemptyset(&just);
    sigaddset(&just, sig);
    pthread_sigmask(SIG_UNBLOCK, &just, NULL);
}

/* Let `sig` do what it does by default (end the process), from inside a handler. */
static void take_default_action(int sig)
{
    signal(sig, SIG_DFL);
    unblock(sig);
    raise(sig);
}

/* The stall guard. A signal can stop the program inside the C library with one of its locks
 * held. The trace written after a signal allocates nothing (trace.c's reserve), so malloc's
 * lock, held when glibc aborts on a corrupted heap, is no longer in its way; but it still
 * takes a few (the time zone's for #date), and waiting for one held by the dead code would
 * hang without a word. While the trace is written after a signal, SIGALRM comes every
 * second; when the writers' progress count (trace.c) has not moved for two of them, the
 * guard says why on stderr (write(2) only), removes the half-written file and lets the
 * signal take its default course. A slow write (10^7 records take seconds) moves the count
 * all the time and is left alone. */
enum { STALL_TICKS = 2 };
static volatile sig_atomic_t guarded;       /* the signal whose records are being saved */
static volatile unsigned long last_progress;
static volatile sig_atomic_t still_ticks;
static struct sigaction alarm_before;

static void say(const char *text) { (void)!write(STDERR_FILENO, text, strlen(text)); }

/* Stop the ticks and give SIGALRM back what it did before guard_start. */
static void guard_stop(void)
{
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &alarm_before, NULL);
}

static void on_stall(int alarm)
{
    (void)alarm;
    unsigned long now = cll_trace_progress_();
    if (now != last_progress) {
        last_progress = now;
        still_ticks = 0;
        return;
    }
    if (++still_ticks < STALL_TICKS)
        return;
    int sig = guarded;
    char name[32];
    signal_name(sig, name, sizeof name);
    say("cll: error: the records could not be saved after ");
    say(name);
    say(": the program stopped inside the C library while it held a lock that writing the "
        "trace needs (a fault inside a library call: a bad pointer passed to it, or a corrupted "
        "heap); the records are lost. valgrind or gcc -fsanitize=address finds the fault.\n");
    cll_trace_abandon_();
    cll_store_remove_spills_();
    guard_stop();
    take_default_action(sig);
}

static void guard_start(int sig)
{
    guarded = sig;
    last_progress = cll_trace_progress_();
    still_ticks = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stall;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &alarm_before);
    unblock(SIGALRM);
    struct itimerval every = {{1, 0}, {1, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
}

/* Our handler on an alternate stack (a stack overflow is a SIGSEGV too) for `sig`, keeping
 * what was there to chain to, unless the signal is ignored or already ours. */
static void install_one(int sig)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN
        || ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_signal))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    previous[sig] = old;
    sigaction(sig, &sa, NULL);
}

/* A program's own handler keeps working: a signal it handles goes to its handler untouched
 * (the records are saved only after always_fatal signals, as the program cannot go on);
 * a signal left to its default action saves the records first, then takes that action. */
static void on_signal(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *old = &previous[sig];
    int by_default = old->sa_handler == SIG_DFL && !(old->sa_flags & SA_SIGINFO);
    if (writing && !always_fatal(sig)) {   /* finish the trace being written first */
        deferred = sig;
        return;
    }
    if ((by_default || always_fatal(sig)) && must_save()) {
        finished = 1;
        char status[48] = "signal ";
        signal_name(sig, status + 7, sizeof status - 7);
        guard_start(sig);
        write_or_complain(status, NULL, 0, 1);
        guard_stop();
        cll_store_remove_spills_();
    }
    if (!by_default) {
        if (old->sa_flags & SA_SIGINFO)
            old->sa_sigaction(sig, info, context);
        else
            old->sa_handler(sig);
        return;
    }
    take_default_action(sig);
}

static void install_signal_handlers(void)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    for (size_t i = 0; i < sizeof terminating / sizeof *terminating; i++)
        install_one(terminating[i].sig);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        install_one(sig);
}

/* After writing: a signal that came meanwhile now takes its course. */
static void deliver_deferred(void)
{
    int sig = deferred;
    deferred = 0;
    if (sig)
        raise(sig);
}
#else
static void deliver_deferred(void) {}
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
    cll_counters_init_();
    cll_paths_init_();
    cll_command_init_();
    cll_cpu_init_();
    on_exit(at_exit, NULL);
    at_quick_exit(at_quick_exit_handler);
    pthread_atfork(NULL, NULL, forget_in_child);
#ifndef CLL_NO_SIGNAL_HANDLERS
    install_signal_handlers();
#endif
    cll_on_fatal_(write_on_fatal);
}

void cll_init_(void) { pthread_once(&once, init_once); }

void cll_register(const cll_program *program)
{
    cll_init_();
#ifndef CLL_NO_SIGNAL_HANDLERS   /* a program's start-up (the Python extension's host goes on) */
    if (cll_trace_folder_check_()) {
        char message[8400];
        snprintf(message, sizeof message, "cll: error: cannot write trace %s: %s (its folder, "
                 "checked at start-up: nothing was measured)", cll_trace_path(), strerror(errno));
        cll_fail_unstarted(message);
    }
#endif
    cll_registry_add_(program);
    cll_store_reserve_();
    cll_trace_reserve_();
}
