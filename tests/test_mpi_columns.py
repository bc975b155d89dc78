"""The MPI columns have one definition on each side and the two agree: the C layer's column
indexes (`CLL_COL_<name>`, runtime_c/cll_mpi.h) against Python's
cll_grammar.columns.MPI_COLUMNS, which call appends to MPI experiments and llac reads."""
from __future__ import annotations

import re
from pathlib import Path

from cll_grammar.columns import MPI_COLUMNS, PUB_COLUMNS

HEADER = Path(__file__).resolve().parents[1] / "runtime_c" / "cll_mpi.h"


def test_the_c_column_indexes_name_the_python_columns_in_the_same_order():
    members = re.search(r"enum \{([^}]*\bCLL_MPI_COLUMNS)\s*\}", HEADER.read_text()).group(1)
    names = [m.strip() for m in members.split(",")]
    assert names == [f"CLL_COL_{c.upper()}" for c in MPI_COLUMNS] + ["CLL_MPI_COLUMNS"]


def test_call_appends_and_llac_requires_those_columns():
    from call import generate
    from llac import parallel
    assert generate.MPI_COLUMNS is MPI_COLUMNS and parallel.MPI_COLUMNS is MPI_COLUMNS


PUB_HEADER = HEADER.with_name("cll_pub.h")


def test_the_pub_layer_names_its_columns_like_python_after_the_mpi_ones():
    from call import generate
    members = re.search(r"enum \{([^}]*\bCLL_PUB_COLUMNS)\s*\}", PUB_HEADER.read_text()).group(1)
    names = [m.strip() for m in members.split(",")]
    assert names == [f"CLL_COL_{c.upper()}" for c in PUB_COLUMNS] + ["CLL_PUB_COLUMNS"]
    assert generate.PUB_COLUMNS is PUB_COLUMNS
