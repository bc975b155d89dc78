/* cll_mpi_support.h -- what the tracing runtime offers the MPI layer (cll_mpi.c).
 *
 * The runtime itself never calls MPI; these functions let the MPI layer, which the user's
 * mpicc compiles once per program, attach communication counters to records and write one
 * trace gathered from every rank (docs/mpi.md). Generated code never uses them.
 */
#ifndef CLL_MPI_SUPPORT_H
#define CLL_MPI_SUPPORT_H

#include "cll.h"
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values captured at begin for this thread's innermost open experiment, if it is `e`
 * (or an experiment of the same name); NULL otherwise. The MPI layer writes the communication
 * counters into them just before cll_end copies them into the record. */
double *cll_open_values(const cll_experiment *e);

/* Pop this thread's innermost open experiments that calls which have returned began, seen
 * from the function whose stack frame is `where` (CLL_HERE of an end), counting them as left
 * open, as cll_end does before it records; how many it popped: a layer that keeps its own
 * state per open experiment drops as many of its own. */
int cll_unwind(const void *where);

/* Give this thread its record buffer now, as its first begin would (its allocation took
 * 15-20 us there): for a layer whose own timing starts at a begin, so that this one-time work
 * is done before (cll_pub.c: before a run's barrier). */
void cll_thread_ready(void);

/* Number of registered experiments: the length of the count arrays below. */
int cll_experiment_total(void);

/* counts[id] = this process's records of experiment id (0 for those not in `names`;
 * names == NULL: all). 0, or -1 (errno set) if a spill file cannot be read. */
int cll_record_counts(const char *const *names, int nnames, uint64_t *counts);

/* This process's record lines (trace format, with this process's rank) handed to `sink` in
 * pieces of at most `chunk` bytes (at least 4096) that, concatenated, are the lines. Returns
 * 0, -1 (errno set) on a spill read error, or the sink's non-zero value. */
int cll_records_text(const char *const *names, int nnames, size_t chunk,
                     int (*sink)(const char *text, size_t len, void *ctx), void *ctx);

/* A trace being written from several processes' records (the gathering rank): open writes
 * the header (record counts = this process's + `more_counts`, then the `more_header` lines,
 * each "#key: value\n") and this process's records; append adds record lines received from
 * other processes; close writes `#end` and renames the file into place. 0 or -1 (errno). */
typedef struct cll_trace_file cll_trace_file;
cll_trace_file *cll_trace_open(const char *status, const char *const *names, int nnames,
                               const uint64_t *more_counts, const char *more_header);
int cll_trace_append(cll_trace_file *f, const char *text, size_t len);
int cll_trace_close(cll_trace_file *f);

/* What a layer adds to every trace of this process's own records (written by cll_report_status,
 * at exit, on a fatal signal or a run-time error; not to a trace made with cll_trace_open):
 * `header` writes lines ("#key: value\n") into the header, `lines` hands record lines to
 * `sink` after the records (0, or the sink's non-zero value). Both may run on the way out of
 * a fatal signal, like the writing of the records: they must not allocate memory nor call MPI. */
void cll_extend_own_trace(void (*header)(FILE *f),
                          int (*lines)(int (*sink)(const char *text, size_t len, void *ctx), void *ctx));

/* Like cll_report, with the header's status given ("complete" for cll_report). */
void cll_report_status(const char *status, const char *const *names, int nnames);

/* This process's records are safely in a trace written elsewhere: do not write them again
 * at exit or on a fatal signal (as after cll_report). */
void cll_mark_reported(void);

/* Write this process's records now, with `status`, unless they are saved already (a trace
 * written at exit, on a signal or a run-time error, or a gathered trace that holds them);
 * later ends (exit, a signal) then write nothing more. For a process about to be ended from
 * outside the runtime's hooks: MPI_Abort, whose MPI library ends the process without exit's
 * handlers. */
void cll_save_records(const char *status);

/* Print `msg` on stderr and exit 70 without writing a trace: for an error of an MPI process
 * before MPI_Init, which has no records yet (its experiments begin only after it) and no P:
 * every rank would write the same prog.cll.1.dat, over a sequential run's trace. */
void cll_fail_unstarted(const char *msg) __attribute__((noreturn));

/* Print `msg` on stderr, write the trace with status "error: <status>" and exit 70 (never
 * returns). */
void cll_fail(const char *msg, const char *status);

/* Write `v` in decimal at `p` (no terminating NUL); the end of the text. cll_put_g9 and
 * cll_put_g17 write exactly what printf's "%.9g" and "%.17g" do, several times faster for the
 * numbers they can round exactly themselves (9 digits: 1e-13 .. 1e13 and beyond; 17 digits:
 * 1e-10 .. 1e17 and beyond, with an x86 long double); others go to snprintf. None allocates: a
 * signal handler may call them. */
char *cll_put_int(char *p, int64_t v);
char *cll_put_g9(char *p, double v);
char *cll_put_g17(char *p, double v);

/* Install the runtime's signal handlers again (an MPI library may replace them in
 * MPI_Init): a handler found in place is chained to, an ignored signal is left alone.
 * No-op in builds without signal handlers. */
void cll_install_signal_handlers(void);

#ifdef __cplusplus
}
#endif
#endif /* CLL_MPI_SUPPORT_H */
