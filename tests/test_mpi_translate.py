"""What `call translate` writes for a `parallel MPI` program (no MPI needed): the header
includes cll_mpi.h, measured names are columns not C variables, P and sync use the named
communicator, report gathers; sequential and OpenMP output stay as they were."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.generated import compiled_lines

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """\
#pragma cll parallel MPI row_comm procs = 1:8:2
void step(double *x, int n, MPI_Comm row_comm) {
    #pragma cll sync D D[0] + D[1]*h + D[2]*n/P
    exchange(x, n, row_comm);
    #pragma cll end D
    #pragma cll report D
}
"""


def translate(tmp_path: Path, text: str) -> tuple[str, str]:
    (tmp_path / "prog.c").write_text(text)
    done = subprocess.run([sys.executable, "-m", "call", "translate", "prog.c"], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return (tmp_path / "prog.cll.c").read_text(), (tmp_path / "prog.cll.h").read_text()


def test_mpi_program_uses_the_mpi_layer_and_the_named_communicator(tmp_path):
    source, header = translate(tmp_path, PROGRAM)
    assert "#include <cll_mpi.h>" in header and "#include <cll.h>" not in header
    assert ('static const char *const cll_vars_D[] = {"n", "P", "msgs_sent", "bytes_sent", '
            '"msgs_recv", "bytes_recv", "partners", "h", "mpi_time"};') in header
    assert '"MPI", 1, cll_experiments' in header and "cll_procs(void)" not in header
    lines = compiled_lines(source)
    assert lines[2].strip() == ("{ cll_mpi_sync(row_comm); double cll_v[] = {(double)(n), "
                                "(double)(cll_mpi_procs(row_comm)), 0, 0, 0, 0, 0, 0, 0}; "
                                "cll_mpi_begin(&cll_exp_D, cll_v, CLL_HERE); }")
    assert lines[4].strip() == 'cll_mpi_end(&cll_exp_D, "prog.c:5:5", CLL_HERE);'
    assert "cll_mpi_report(cll_names, 1);" in lines[5]


def test_a_sequential_program_still_captures_h_as_a_c_variable(tmp_path):
    text = PROGRAM.replace("#pragma cll parallel MPI row_comm procs = 1:8:2", "")
    source, header = translate(tmp_path, text)
    assert "#include <cll.h>" in header and "cll_mpi" not in header + source
    assert "double cll_v[] = {(double)(h), (double)(n), (double)(cll_procs())}" in "\n".join(compiled_lines(source))
