"""Column names shared by call and llac (the Python side of the trace's MPI and PUB contract).

`MPI_COLUMNS` are the columns the MPI layer (runtime_c/cll_mpi.c) measures during each
experiment of a `parallel MPI` program, in the order they follow the captured variables:
call appends them to each experiment's variables, llac's parallel analysis reads them.
The C side is the enum of `CLL_COL_<name>` indexes in runtime_c/cll_mpi.h;
tests/test_mpi_columns.py checks that the two agree.
"""

MPI_COLUMNS = ("msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners", "h", "mpi_time")

# The columns the PUB layer (runtime_c/cll_pub.c) appends after MPI_COLUMNS in a `parallel
# PUB` program: the run the record's experiment began in (docs/trace-format.md). The C side
# is the enum of `CLL_COL_<name>` indexes in runtime_c/cll_pub.h.
PUB_COLUMNS = ("run",)
