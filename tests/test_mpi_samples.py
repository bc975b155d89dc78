"""samples/fft_mpi as a user runs it: `call run` sweeps P = 1, 2, 4, 8 with mpirun, every run
transforms correctly (the plain mpicc build prints the same checksum), the records carry the
exchanged bytes, and the sample's .llac script prints the Table 3 layout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "fft_mpi"
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMPI_ALLOW_RUN_AS_ROOT": "1",
       "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    work = tmp_path_factory.mktemp("fft_mpi")
    shutil.copy(SAMPLE / "fft_mpi.c", work)
    done = subprocess.run([sys.executable, "-m", "call", "run", "fft_mpi.c"], cwd=work, env=ENV,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return work, done


def test_every_p_computes_the_same_transform_as_the_plain_build(swept):
    work, done = swept
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and len(set(lines)) == 1 and lines[0].startswith("fft_mpi: N = 131072")
    plain = work / "plain"
    subprocess.run(["mpicc", "-O2", str(work / "fft_mpi.c"), "-o", str(plain), "-lm"], check=True,
                   capture_output=True)
    ran = subprocess.run(["mpirun", "-np", "4", str(plain), "131072"], env=ENV,
                         capture_output=True, text=True, timeout=120)
    assert ran.stdout.splitlines() == lines[:1]


def test_exchange_records_carry_the_bytes_of_each_half(swept):
    work, _ = swept
    text = (work / "fft_mpi.cll.4.dat").read_text()
    assert "#ranks: 0 1 2 3\n" in text and "#status: complete\n" in text
    columns = next(line for line in text.splitlines() if line.startswith("#  columns: rank thread time size"))
    names = columns.split(": ")[1].split()
    rows = [dict(zip(names, map(float, line.split()[1:]))) for line in text.splitlines()
            if line.startswith("D ")]
    # 2 levels of recursion at P = 4, 8 sizes of N, 3 repetitions, 4 ranks
    assert len(rows) == 2 * 8 * 3 * 4
    assert all(r["bytes_sent"] == r["bytes_recv"] == r["size"] and r["partners"] == 1 for r in rows)


def test_the_llac_script_prints_table_3_for_every_p(swept):
    work, _ = swept
    done = subprocess.run([sys.executable, "-m", "llac", str(SAMPLE / "fft_mpi.llac")], cwd=work,
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("PROCS"):]
    assert table.split()[:8] == ["PROCS", "N", "TIME", "[s]", "PREDICTED", "[s]", "ERROR", "%"]
    assert [line.split()[:2] for line in table.splitlines()[2:6]] == [
        ["1", "131072"], ["2", "131072"], ["4", "131072"], ["8", "131072"]]
