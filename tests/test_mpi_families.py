"""Every family of MPI 3.1 data movement counted as the program really moved it, with real
mpicc and mpirun on 2 and 4 ranks: all send modes and completion calls, persistent requests,
matched probes, every collective blocking and nonblocking (v/w variants, Reduce_scatter,
Scan, Exscan, on inter-communicators too), neighbourhood collectives, one-sided calls and an
integer sort's Alltoallv key exchange (tests/mpi_programs/families.c). Then a program using
MPI the layer does not count (MPI-IO, Reduce_scatter on an inter-communicator, a receive
freed early): the trace header lists it and llac's `comm` warns."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_mpi import build_with_mpich, call, header_and_records

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "mpi_programs"
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

INT, DOUBLE = 4, 8


def c(r: int, d: int) -> int:
    """Elements rank r has for rank d in the program's v and w collectives (its C(r, d))."""
    return 1 + r + 2 * d


def expected(name: str, me: int, P: int) -> tuple[int, int, int, int, int]:
    """(msgs_sent, bytes_sent, msgs_recv, bytes_recv, partners) of experiment `name` on rank
    `me` of P, computed from what families.c sends: collectives count a block to or from each
    other rank (as if sent directly), one-sided calls count at the origin."""
    others = [r for r in range(P) if r != me]
    left, right = (me - 1) % P, (me + 1) % P
    ring = len({left, right})
    everyone = lambda sent, received: (P - 1, sent * (P - 1), P - 1, received * (P - 1), P - 1)  # noqa: E731

    def rooted(root: int, root_sends: bool, at_root: list[int], mine: int):
        if me == root:
            return (P - 1, sum(at_root), 0, 0, P - 1) if root_sends else (0, 0, P - 1, sum(at_root), P - 1)
        return (0, 0, 1, mine, 1) if root_sends else (1, mine, 0, 0, 1)

    table = {
        "sends": (10, INT * sum(range(10, 20)), 10, INT * sum(range(10, 20)), ring),
        "many": (300, INT * 300, 300, INT * 300, ring),
        "persistent": (6, 3 * INT * (20 + 21), 6, 3 * INT * (20 + 21), ring),
        "probed": (2, INT * (33 + 34), 2, INT * (33 + 34), ring),
        "barrier": (0, 0, 0, 0, 0),
        "bcast": rooted(0, True, [8 * DOUBLE] * (P - 1), 8 * DOUBLE),
        "gather": rooted(1 % P, False, [3 * INT] * (P - 1), 3 * INT),
        "scatter": rooted(0, True, [4 * INT] * (P - 1), 4 * INT),
        "gatherv": rooted(0, False, [INT * c(r, 0) for r in range(1, P)], INT * c(me, 0)),
        "scatterv": rooted(P - 1, True, [INT * c(P - 1, r) for r in range(P - 1)], INT * c(P - 1, me)),
        "allgather": everyone(5 * INT, 5 * INT),
        "allgatherv": (P - 1, INT * c(me, 0) * (P - 1), P - 1, INT * sum(c(r, 0) for r in others), P - 1),
        "alltoall": everyone(6 * INT, 6 * INT),
        "alltoallv": (P - 1, INT * sum(c(me, d) for d in others), P - 1, INT * sum(c(s, me) for s in others), P - 1),
        "alltoallw": (P - 1, sum(c(me, d) * (DOUBLE if d % 2 else INT) for d in others),
                      P - 1, sum(c(s, me) for s in others) * (DOUBLE if me % 2 else INT), P - 1),
        "reduce": rooted(P - 1, False, [9 * INT] * (P - 1), 9 * INT),
        "allreduce": everyone(6 * INT, 6 * INT),
        "reduce_scatter": (P - 1, INT * sum(1 + r for r in others), P - 1, INT * (1 + me) * (P - 1), P - 1),
        "reduce_scatter_block": everyone(5 * INT, 5 * INT),
        "scan": (P - 1 - me, 7 * INT * (P - 1 - me), me, 7 * INT * me, P - 1),
        "neighbor_allgather": (2, 2 * 3 * INT, 2, 2 * 3 * INT, ring),
        "neighbor_alltoall": (2, 2 * 4 * INT, 2, 2 * 4 * INT, ring),
        "neighbor_alltoallv": (2, 2 * INT * (2 + me), 2, INT * (4 + left + right), ring),
        "neighbor_allgatherv": (2, 2 * INT * (1 + me), 2, INT * (2 + left + right), ring),
        "neighbor_alltoallw": (1, DOUBLE * (4 + me), 1, DOUBLE * (4 + left), ring),
        # Put 10, Accumulate 12, Get_accumulate 13, Fetch_and_op 1, Compare_and_swap 2, Rput 15,
        # Raccumulate 17, Rget_accumulate 18 ints sent; Get 11, Get_accumulate 13, its MPI_NO_OP
        # twin 14, Fetch_and_op 1, Compare_and_swap 1, Rget 16, Rget_accumulate 18 received
        "onesided": (8, INT * (10 + 12 + 13 + 1 + 2 + 15 + 17 + 18), 7,
                     INT * (11 + 13 + 14 + 1 + 1 + 16 + 18), ring),
        "sort_counts": everyone(INT, INT),
        # 2^(d + P*r) keys from r to d: a distinct power of two per pair, so each total is
        # exact only if every partner's block was counted once with its own size
        "sort_exchange": (P - 1, INT * sum(2 ** (d + P * me) for d in others),
                          P - 1, INT * sum(2 ** (me + P * s) for s in others), P - 1),
    }
    # inter-communicator between the even and the odd ranks: every remote rank is a partner
    remote = P // 2
    table["inter_bcast"] = ((remote, 8 * DOUBLE * remote, 0, 0, remote) if me == 0 else
                            (0, 0, 0, 0, 0) if me % 2 == 0 else (0, 0, 1, 8 * DOUBLE, 1))
    table["inter_allreduce"] = (remote, 6 * INT * remote, remote, 6 * INT * remote, remote)
    table["inter_allgatherv"] = (remote, INT * (1 + me // 2) * remote,
                                 remote, INT * sum(1 + r for r in range(remote)), remote)
    table["allgatherv_in_place"] = table["allgatherv"]
    table["exscan"] = table["scan"]
    return table[name]


POINT_TO_POINT = ["sends", "many", "persistent", "probed", "onesided", "sort_counts", "sort_exchange"]
COLLECTIVES = ["barrier", "bcast", "gather", "scatter", "gatherv", "scatterv", "allgather",
               "allgatherv", "allgatherv_in_place", "alltoall", "alltoallv", "alltoallw", "reduce",
               "allreduce", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
               "neighbor_allgather", "neighbor_alltoall", "neighbor_alltoallv",
               "neighbor_allgatherv", "neighbor_alltoallw", "inter_bcast", "inter_allreduce",
               "inter_allgatherv"]


def run_program(tmp_path_factory, name: str) -> Path:
    """tests/mpi_programs/NAME.c built and run by `call run` (its procs) in a new directory."""
    work = tmp_path_factory.mktemp(name)
    shutil.copy(PROGRAMS / f"{name}.c", work)
    done = call("run", f"{name}.c", cwd=work)
    assert done.returncode == 0, done.stderr
    return work


@pytest.fixture(scope="module")
def families(tmp_path_factory) -> Path:
    """families.c run on 2 and 4 ranks."""
    return run_program(tmp_path_factory, "families")


def measured(record: dict) -> tuple[int, ...]:
    return tuple(int(record[k]) for k in ("msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners"))


@pytest.mark.parametrize("procs", [2, 4])
@pytest.mark.parametrize("name", POINT_TO_POINT + COLLECTIVES)
def test_each_family_counts_what_the_program_moved(families, procs, name):
    header, records, _ = header_and_records(families / f"families.cll.{procs}.dat")
    assert header["status"] == "complete" and "mpi_uncounted" not in header
    for rank in range(procs):
        mine = [r for r in records[name] if r["rank"] == rank]
        # collectives: blocking (nb = 0) and nonblocking (nb = 1, counted when posted) alike
        assert sorted(r.get("nb", 0) for r in mine) == ([0, 1] if name in COLLECTIVES else [0])
        for r in mine:
            assert measured(r) == expected(name, rank, procs), (name, rank, r.get("nb"))
            assert r["h"] == r["bytes_sent"] + r["bytes_recv"]
            assert 0 < r["mpi_time"] <= r["time"]


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None, reason="MPICH is not installed (apt-get install mpich)")
def test_mpich_compiles_every_wrapper(tmp_path):
    shutil.copy(PROGRAMS / "families.c", tmp_path)
    symbols = build_with_mpich(tmp_path, "families")
    for name in ("MPI_Ialltoallw", "MPI_Rget_accumulate", "MPI_Ineighbor_alltoallw", "MPI_Imrecv"):
        assert f" W {name}\n" in symbols


@pytest.fixture(scope="module")
def uncounted(tmp_path_factory) -> Path:
    """uncounted.c run on 2 ranks."""
    return run_program(tmp_path_factory, "uncounted")


def test_the_header_lists_what_was_not_counted(uncounted):
    header, records, _ = header_and_records(uncounted / "uncounted.cll.2.dat")
    assert header["mpi_uncounted"] == ("MPI-IO (MPI_File_*); Reduce_scatter on an inter-communicator; "
                                       "receives freed by MPI_Request_free before they completed")
    for name in ("io", "inter"):
        assert all(measured(r)[:4] == (0, 0, 0, 0) for r in records[name])
    assert all(measured(r)[:4] == (1, 4, 0, 0) for r in records["freed"])   # the send only


def llac(directory: Path, statements: str) -> subprocess.CompletedProcess:
    """`llac -c STATEMENTS` in `directory`, as a user runs it; it must succeed."""
    done = subprocess.run([sys.executable, "-m", "llac", "-c", statements], cwd=directory,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done


def test_comm_warns_about_uncounted_communication(uncounted):
    done = llac(uncounted, 'load "uncounted.cll.2.dat"; comm freed')
    assert ("warning: freed: the program used MPI communication that is not counted (MPI-IO "
            "(MPI_File_*); Reduce_scatter on an inter-communicator; receives freed by "
            "MPI_Request_free before they completed)") in done.stderr
    assert "communication of freed by rank" in done.stdout and "Traceback" not in done.stderr


def test_comm_warns_when_any_trace_of_a_sweep_has_uncounted_calls(uncounted, families, tmp_path):
    """The warning survives loading several traces into one experiment (the first clean)."""
    text = (families / "families.cll.2.dat").read_text()
    (tmp_path / "a.cll.2.dat").write_text(text)
    (tmp_path / "a.cll.4.dat").write_text(
        text.replace("#procs: 2\n", "#procs: 4\n#mpi_uncounted: MPI-IO (MPI_File_*)\n", 1))
    done = llac(tmp_path, 'load "a.cll.*.dat"; comm sends by P')
    assert "warning: sends: the program used MPI communication that is not counted (MPI-IO (MPI_File_*))" in done.stderr


EMPTY_NEIGHBOR_BLOCKS = """#include <mpi.h>
#pragma cll parallel MPI procs = 4:4:2
int main(int argc, char **argv) {
    int me, np;
    double buf[8] = {0}, rbuf[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int dims[1] = {np}, periodic[1] = {0};
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periodic, 0, &line);
    int even = me % 2 == 0;               /* even ranks send 2 doubles up; every other block is empty */
    int sc[2] = {0, even ? 2 : 0}, rc[2] = {even ? 0 : 2, 0}, d[2] = {0, 4};
    #pragma cll nb nb[0]
    MPI_Neighbor_alltoallv(buf, sc, d, MPI_DOUBLE, rbuf, rc, d, MPI_DOUBLE, line);
    #pragma cll end nb
    #pragma cll report all
    MPI_Finalize();
    return 0;
}
"""


def test_an_empty_neighbourhood_block_is_no_message(tmp_path):
    """Review 44: a neighbourhood collective counted its count-0 blocks as messages and
    partners (rank 1: 2 sent, 2 received, 2 partners, where it received 16 bytes from rank 0)."""
    (tmp_path / "nb.c").write_text(EMPTY_NEIGHBOR_BLOCKS)
    done = call("run", "nb.c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _, records, _ = header_and_records(tmp_path / "nb.cll.4.dat")
    by_rank = {int(r["rank"]): measured(r) for r in records["nb"]}
    assert by_rank == {0: (1, 16, 0, 0, 1), 1: (0, 0, 1, 16, 1), 2: (1, 16, 0, 0, 1), 3: (0, 0, 1, 16, 1)}
