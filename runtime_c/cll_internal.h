/* cll_internal.h -- what the runtime's own modules share (not installed for users).
 *
 * The modules are layers, each calling only those above it in this list (a fatal error
 * reaches the trace writer through the handler lifecycle.c gives fatal.c):
 *
 *   fatal.c     fatal errors: message, the handler, exit 70
 *   timer.c     clock choice, calibration, the inline tick read used on the hot path
 *   counters.c  hardware counters through PAPI (CLL_COUNTERS), read per thread
 *   registry.c  experiments and programs registered by generated code, procs, thread ids
 *   files.c     the trace's path (fixed by P and the rank), hidden files, placing a trace
 *   header.c    the header lines a trace and a spill file share; the spill files' header
 *   store.c     per-thread record buffers, begin/end, spilling to disk, iterating records
 *   trace.c     the text trace (docs/trace-format.md)
 *   lifecycle.c start-up, registration, the exit and fatal-signal hooks, cll_report
 */
#ifndef CLL_INTERNAL_H
#define CLL_INTERNAL_H

#include "cll.h"
#include "cll_mpi_support.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CLL_HAVE_TSC 1
#endif

#define CLL_EXIT_ERROR 70 /* EX_SOFTWARE: run-time error found by the runtime */

/* Internal names are hidden: not part of the library's interface, and in -fPIC code they
 * are then reached directly rather than through the GOT on the hot path. */
#pragma GCC visibility push(hidden)

/* ---- fatal.c ---- */
/* Print "msg" on stderr, run the handler (lifecycle.c's writes the trace with status
 * "error: <status>"), exit 70. */
__attribute__((noreturn)) void cll_fatal_(const char *msg, const char *status);
void cll_on_fatal_(void (*handler)(const char *status));

/* ---- timer.c ---- */
extern int cll_use_tsc_;            /* 1: ticks are TSC cycles; 0: CLOCK_MONOTONIC ns */
uint64_t cll_monotonic_ns_(void);   /* out of line: keeps the TSC path free of its call */

/* Whether the clock is the TSC, read inline by cll_tsc_(); otherwise it is
 * cll_monotonic_ns_(), a call. begin/end test this first so that their common path calls
 * nothing and saves no registers. */
static inline int cll_clock_inline_(void)
{
#ifdef CLL_HAVE_TSC
    return __builtin_expect(cll_use_tsc_, 1);
#else
    return 0;
#endif
}

/* The TSC (only meaningful when cll_clock_inline_()). */
static inline uint64_t cll_tsc_(void)
{
#ifdef CLL_HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/* One clock read in ticks. */
static inline uint64_t cll_now_(void)
{
    return cll_clock_inline_() ? cll_tsc_() : cll_monotonic_ns_();
}
void cll_timer_init_(void);

/* ---- counters.c ---- */
#define CLL_MAX_COUNTERS 16
extern int cll_counters_n_;             /* counters every record carries; 0: none (the default) */
void cll_counters_init_(void);          /* reads CLL_COUNTERS at start-up, warns on stderr */
void cll_counters_read_(double *out);   /* this thread's counts now (NaN where PAPI fails) */
const char *cll_counter_event_(int i);  /* counter i's PAPI event name: "perf::TASK-CLOCK" */
const char *cll_counter_column_(int i); /* its trace column: "perf_TASK_CLOCK" */

/* The values a record of `e` carries after rank, thread and time: its variables (with the
 * MPI layer's columns), then the counters. */
static inline int cll_values_(const cll_experiment *e) { return e->nvars + cll_counters_n_; }

/* ---- registry.c ---- */
void cll_registry_add_(const cll_program *program); /* cll_register after start-up */
void cll_registry_set_procs_(int procs, int rank);  /* cll_set_procs, the path aside */
int cll_experiment_count_(void);
const cll_experiment *cll_experiment_at_(int id);   /* canonical struct of that id */
const char *cll_sources_(void);                     /* "a.c,b.c" */
const char *cll_parallel_(void);
int cll_procs_(void);
int cll_rank_(void);
extern int (*cll_thread_id_)(void);                 /* NULL: numbered by first record */

/* ---- files.c ---- */
void cll_paths_init_(void);        /* fixes cwd, CLL_TRACE, the umask at start-up */
int cll_trace_folder_check_(void); /* 0 if the trace's folder can take it, else -1 (errno) */
/* From now on this process's trace path is its own records' file, `.rank<r>` for rank 0 too:
 * after rank 0 gathered a report there, a trace of its own records must not replace it. */
void cll_own_file_(void);
const char *cll_program_name_(void);
/* Create "<dir>/.<trace file name>.<what>.XXXXXX" next to the trace (mkostemp: a new file,
 * O_EXCL so never through a symbolic link, close-on-exec, 0600); its path in `out`.
 * The file descriptor, or -1 (errno set). */
int cll_hidden_file_(char *out, size_t size, const char *what);
/* Make the finished temporary `tmp` (open as `fd`) the trace: at the trace's path unless
 * another run's trace appeared there since this run's path was fixed; then under a unique
 * name, said on stderr. 0 or -1 (errno set). */
int cll_place_trace_(const char *tmp, int fd);

/* ---- header.c ---- */
void cll_command_init_(void);      /* reads the command line for the header at start-up */
void cll_cpu_init_(void);          /* reads the CPU model name for the header at start-up */
/* The header lines a trace and a spill file share: the first line `magic`, the program and
 * the run, then the timer with `resolution_format` for its seconds per tick. */
void cll_header_run_lines_(FILE *f, const char *magic, const char *resolution_format);
/* The declaration of experiment `e` (its record count follows where known). */
void cll_header_experiment_(FILE *f, const cll_experiment *e);
/* Write a spill file's self-describing header (docs/trace-format.md) for `thread` to fd:
 * its length in bytes, or -1 (errno set). */
int cll_spill_header_(int fd, int thread);

/* ---- store.c ---- */
/* A completed record as stored: `nvars` doubles of its experiment follow it. */
typedef struct cll_record {
    uint32_t exp;       /* experiment id */
    int32_t thread;     /* thread number */
    uint64_t ticks;     /* elapsed ticks */
} cll_record;

/* Called for every stored record; a non-zero return stops the iteration. */
typedef int (*cll_record_fn)(const cll_record *r, const double *vars, void *ctx);

/* Visit all records of all threads, spilled ones first, each thread in order. Returns 0,
 * the callback's non-zero value, or -1 (errno set) if a spill file fails. */
int cll_store_each_(cll_record_fn fn, void *ctx);

/* Mark what every thread has stored now; cll_store_each_marked_ then visits exactly those
 * records, however many the threads store meanwhile (a report that counts, then writes,
 * while another thread records: the two passes see the same records, and the writing ends).
 * Threads beyond the first CLL_MARKED_SLOTS are visited as cll_store_each_ does. */
#define CLL_MARKED_SLOTS 4096
void cll_store_mark_(void);
int cll_store_each_marked_(cll_record_fn fn, void *ctx);

/* The experiments still open, for the header and stderr: calls fn(experiment, thread,
 * times, stacked, ctx) once per experiment open on a thread, `times` its open frames there
 * (more than 1 when jumps left it open again and again), `stacked` how many of them are still
 * on the thread's stack (the others were left by calls that returned, or cut from a full
 * stack), outermost first. */
void cll_store_each_open_(void (*fn)(const cll_experiment *e, int thread, uint64_t times,
                                     uint64_t stacked, void *ctx), void *ctx);

/* Make (or grow to the experiments registered so far) what cll_store_each_open_ counts
 * with: called at each registration, so that it allocates nothing after a signal. */
void cll_store_reserve_(void);

/* Seconds one empty begin/end pair costs here (measured on a scratch buffer, ~1 ms). */
double cll_store_overhead_(void);

/* Remove the spill files (at the very end of the process). */
void cll_store_remove_spills_(void);

/* ---- trace.c ---- */
/* Write the trace of this process's own records with `status` (names == NULL: all
 * experiments), with the lines of cll_extend_own_trace. 0 or -1 (errno set). `after_signal`:
 * on the way out of a signal, so allocating nothing (on what cll_trace_reserve_ made). */
int cll_trace_write_(const char *status, const char *const *names, int nnames, int after_signal);

/* Make (or grow to the experiments registered so far) what a write after a signal uses
 * instead of allocating: called at each registration. */
void cll_trace_reserve_(void);

/* How far the writers have got: a count that grows with every record and header line they
 * handle, so that a watcher (lifecycle.c's stall guard) can tell a slow write from a stuck one. */
unsigned long cll_trace_progress_(void);

/* Remove the hidden file of a trace being written, if any (async-signal-safe: unlink only). */
void cll_trace_abandon_(void);

/* ---- lifecycle.c ---- */
void cll_init_(void);              /* idempotent; called by cll_register */

#pragma GCC visibility pop
#endif /* CLL_INTERNAL_H */
