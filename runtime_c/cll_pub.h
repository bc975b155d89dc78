/* cll_pub.h -- the CALL tracing runtime's API for generated code of PUB programs.
 *
 * The generated `prog.cll.h` of a `#pragma cll parallel PUB NAME` program includes this
 * header. Its functions are defined by the PUB layer, cll_pub.c, which the user's mpicc
 * compiles with the MPI layer (cll_mpi.c) and the BSP library (pub.c) (docs/pub.md, "PUB
 * programs under call"). An experiment site becomes
 *
 *     { t_bsp *cll_machine = _Generic((
 *     #line 12 "prog.c"
 *                                gbsp), t_bsp *: (gbsp), t_bsp: &(gbsp), default:
 *     #line 12 "prog.c"
 *                                cll_pub_not_a_machine());
 *     #line 42 "prog.c"
 *       double cll_v[] = {(double)(N), (double)(cll_mpi_procs(MPI_COMM_WORLD)),
 *       0, 0, 0, 0, 0, 0, 0, 0}; cll_pub_begin(&cll_exp_f, cll_v, cll_machine, CLL_HERE); }
 *     #line 43 "prog.c"
 *     ...the user's code...
 *     cll_pub_end(&cll_exp_f, "prog.c:42:1", CLL_HERE);
 *
 * (machine 0 for an experiment without `sync`): the trailing zeros are the MPI columns
 * and the run column, which the layers fill.
 */
#ifndef CLL_PUB_H
#define CLL_PUB_H

#include "cll_mpi.h"
#include "pub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The columns the PUB layer fills after the MPI columns (CLL_COL_<name>: its index there;
 * cll_grammar.columns.PUB_COLUMNS names them, tests/test_mpi_columns.py checks both agree). */
enum { CLL_COL_RUN, CLL_PUB_COLUMNS };

/* What a `sync` experiment's begin selects when the NAME of `parallel PUB NAME` is neither a
 * t_bsp nor a t_bsp *: its call is a compile error (gcc, clang), which call's #line places at
 * NAME in the `parallel` pragma (call/generate.py, _machine_check). */
t_bsp *cll_pub_not_a_machine(void) __attribute__((error(
    "the NAME of '#pragma cll parallel PUB NAME' must be a variable of type t_bsp or t_bsp *")));

/* cll_begin of a PUB program: `values` holds the captured variables, the MPI columns and
 * the run column. With a `machine` (a `sync` experiment) it first synchronises it with
 * bsp_sync and starts a run of recorded supersteps, unless one is open (docs/trace-format.md,
 * "Supersteps (PUB programs)"). A runtime error before bsp_begin. */
void cll_pub_begin(cll_experiment *e, double *values, t_bsp *machine, const void *where);

/* cll_end of a PUB program; the end of the experiment that started the run ends it (its
 * machine 0's last superstep ends in `end`); a runtime error inside an unfinished partition. */
void cll_pub_end(cll_experiment *e, const char *site, const void *where);

/* `#pragma cll report` of a PUB program (after bsp_begin, before bsp_end): the MPI layer's
 * gather, with every rank's supersteps. */
void cll_pub_report(const char *const *names, int nnames);

#ifdef __cplusplus
}
#endif
#endif /* CLL_PUB_H */
