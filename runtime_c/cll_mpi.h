/* cll_mpi.h -- the CALL tracing runtime's API for generated code of MPI programs.
 *
 * The generated `prog.cll.h` of a `#pragma cll parallel MPI` program includes this header
 * instead of cll.h. Its functions are defined by the MPI layer, cll_mpi.c, which the user's
 * own mpicc compiles once per program (docs/mpi.md). An experiment site becomes
 *
 *     { cll_mpi_sync(COMM); double cll_v[] = {(double)(n), (double)(cll_mpi_procs(COMM)),
 *       0, 0, 0, 0, 0, 0, 0}; cll_mpi_begin(&cll_exp_f, cll_v, CLL_HERE); }
 *     ...the user's code...
 *     cll_mpi_end(&cll_exp_f, "prog.c:42:1", CLL_HERE);
 *
 * where the trailing zeros are the measured columns below, filled by the layer.
 */
#ifndef CLL_MPI_H
#define CLL_MPI_H

#include "cll.h"
#include <mpi.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The columns the MPI layer measures, appended in this order after an experiment's
 * captured variables: CLL_COL_<name> is the index of column <name> (docs/mpi.md; call and
 * llac name them in cll_grammar.columns.MPI_COLUMNS, and tests/test_mpi_columns.py checks
 * that the two lists agree). */
enum { CLL_COL_MSGS_SENT, CLL_COL_BYTES_SENT, CLL_COL_MSGS_RECV, CLL_COL_BYTES_RECV,
       CLL_COL_PARTNERS, CLL_COL_H, CLL_COL_MPI_TIME, CLL_MPI_COLUMNS };

/* cll_begin of an MPI program: `values` holds the captured variables, then CLL_MPI_COLUMNS
 * slots the layer fills. A fatal error before MPI_Init. */
void cll_mpi_begin(cll_experiment *e, double *values, const void *where);

/* cll_end of an MPI program: the measured columns become what happened since the begin. */
void cll_mpi_end(cll_experiment *e, const char *site, const void *where);

/* The open experiments that calls which have returned began, seen from the function whose
 * stack frame is `where`, are left open in the runtime and in this layer (cll_unwind): how
 * many. cll_mpi_end does it first; a layer above that keeps its own count calls it before. */
int cll_mpi_unwind(const void *where);

/* P: the size of `comm` (0 before MPI_Init: the experiment's begin then says why). */
int cll_mpi_procs(MPI_Comm comm);

/* `sync`: a barrier on `comm` (not counted as the program's communication). */
void cll_mpi_sync(MPI_Comm comm);

/* `#pragma cll report` in an MPI program: gather on rank 0, which writes prog.cll.<P>.dat. */
void cll_mpi_report(const char *const *names, int nnames);

/* An extension of the traces, for a layer compiled with this one (the PUB layer, cll_pub.c,
 * adds its supersteps): `columns`, the number of columns its experiments have after the MPI
 * columns (the layer fills them); `references` sets *times to this rank's own reference times
 * (CLOCK_MONOTONIC seconds, the clock of the offsets) and returns how many; `lines` hands
 * rank `rank`'s extra record lines to `sink` (0, or the sink's non-zero value), measured from
 * the reference times `times` on this rank's clock; `header` writes its header lines ("#key:
 * value\n") for lines measured from `times` (`times[i] - offset` on rank 0's clock), `origin`
 * -1 in the gathered trace, or the rank of a trace of its own records.
 * The gathered trace: rank 0 takes, for each reference, the earliest over the ranks present,
 * writes its own lines after its records, then each rank's after theirs. A trace of one rank's
 * own records (a `.rank<r>` file, or rank 0's before the gather): its own references. `header`
 * and `lines` may then run on the way out of a fatal signal: they must not allocate memory
 * nor call MPI. Set once, before report. */
typedef struct cll_mpi_extension {
    int columns;
    void (*header)(FILE *f, const double *times, int ntimes, double offset, int origin);
    int (*references)(const double **times);
    int (*lines)(const double *times, int ntimes, int rank,
                 int (*sink)(const char *text, size_t len, void *ctx), void *ctx);
} cll_mpi_extension;
void cll_mpi_extend(const cll_mpi_extension *extension);

#ifdef __cplusplus
}
#endif
#endif /* CLL_MPI_H */
