"""Column names shared by call and llac (the Python side of the trace's MPI and PUB contract).

`MPI_COLUMNS` are the columns the MPI layer (runtime_c/cll_mpi.c) measures during each
experiment of a `parallel MPI` program, in the order they follow the captured variables:
call appends them to each experiment's variables, llac's parallel analysis reads them.
The C side is the enum of `CLL_COL_<name>` indexes in runtime_c/cll_mpi.h;
tests/test_mpi_columns.py checks that the two agree.
"""
from cll_grammar.formula import FormulaError, Variable, walk

MPI_COLUMNS = ("msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners", "h", "mpi_time")

# The columns the PUB layer (runtime_c/cll_pub.c) appends after MPI_COLUMNS in a `parallel
# PUB` program: the run the record's experiment began in (docs/trace-format.md). The C side
# is the enum of `CLL_COL_<name>` indexes in runtime_c/cll_pub.h.
PUB_COLUMNS = ("run",)

# The columns every trace record carries before the captured variables: not program
# variables, so neither a formula nor a working set (`bytes`) may name them.
RECORD_COLUMNS = ("rank", "thread", "time")


def reject_record_columns(node, what: str) -> None:
    """FormulaError at the first variable of the expression tree `node` that is a record
    column (`time`, `rank`, `thread`): `what` (a formula, the working set) cannot use it.
    A formula that names one builds, but its records would hold that column twice, and llac
    could not read the experiment back."""
    reserved = next((n for n in walk(node) if isinstance(n, Variable) and n.name in RECORD_COLUMNS), None)
    if reserved is not None:
        raise FormulaError(f"{reserved.name!r} is a column of every trace record, not a program "
                           f"variable: {what} cannot use it", reserved.span)
