"""Large messages over oblivious synchronisation in the PUB library (runtime_c/pub, docs/pub.md
"Oblivious sends over MPI"), with real mpicc and mpirun on 2 ranks: a processor that sends
64 KiB with bsp_send passes its bsp_oblsync without waiting for the receiver's computation
(OBSP*'s premise: a processor waits for its incoming partners only); sends pending across
several oblivious supersteps, at bsp_end and at bsp_done are delivered intact, also while
the library reuses the slots of completed sends; bsp_hpsend's buffer may be changed after
the sender's synchronisation, and may be a received message's bytes. All of it with MPICH
too, when installed. The program is tests/pub_programs/pub_lazy.c."""
from __future__ import annotations

import os
import shutil

import pytest

from call.scripts import launch_environment
from support.runtime import build_pub_program, run_bounded

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """pub_lazy built with mpicc from the installed pub.c and pub.h."""
    return build_pub_program(tmp_path_factory.mktemp("pub_lazy"), "pub_lazy")


def ok_lines(program, mode: str, mpirun: str = "mpirun") -> list[str]:
    """`mpirun` -np 2 pub_lazy MODE (PUB_TIMEOUT=10, bounded so that a hang fails): its sorted
    "ok MODE ..." lines, after checking that it succeeded without a BAD line."""
    env = {**os.environ, **launch_environment(2, True, [mpirun])[0], "PUB_TIMEOUT": "10"}
    done = run_bounded([mpirun, "-np", "2", str(program), mode], timeout=90, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BAD" not in done.stdout, done.stdout
    return sorted(line for line in done.stdout.splitlines() if line.startswith(f"ok {mode} "))


def check_oblivious(lines: list[str]) -> None:
    """The "oblivious" mode's lines: processor 0's send + bsp_oblsync(0) did not wait for
    processor 1's w = 200 ms before it took the 64 KiB (wide margin: under w / 2)."""
    assert [line.split()[2] for line in lines] == ["0", "1"]
    fields = lines[0].split()
    seconds, w = float(fields[4]), float(fields[6])
    assert seconds < w / 2, f"processor 0 took {seconds:.4f} s to pass its bsp_oblsync (w = {w} s)"


def test_a_sender_passes_its_oblivious_sync_without_waiting_for_the_receiver(program):
    check_oblivious(ok_lines(program, "oblivious"))


@pytest.mark.parametrize("mode", ["many", "end", "partition", "hpsend", "forward"])
def test_large_messages_pending_across_synchronisations_arrive_intact(program, mode):
    """many: 24 messages of 8-192 KiB pending over 6 supersteps among reused slots; end: still
    pending at bsp_end; partition: at bsp_done; hpsend: the user's buffer changed after the
    sender's bsp_oblsync; forward: a received message passed on with bsp_hpsend while the
    synchronisation delivers a new one (the library must not receive into the bytes sent)."""
    assert ok_lines(program, mode) == [f"ok {mode} 0", f"ok {mode} 1"]


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None,
                    reason="MPICH is not installed (apt-get install mpich)")
def test_under_mpich_every_mode_delivers_and_the_sender_does_not_wait(tmp_path):
    """The same program built with MPICH's mpicc and run with its mpirun: MPICH completes
    large sends on its own terms (its eager limit and progress differ from Open MPI's)."""
    mpich = build_pub_program(tmp_path, "pub_lazy", mpicc="mpicc.mpich")
    check_oblivious(ok_lines(mpich, "oblivious", "mpirun.mpich"))
    for mode in ("many", "end", "partition", "hpsend", "forward"):
        assert ok_lines(mpich, mode, "mpirun.mpich") == [f"ok {mode} 0", f"ok {mode} 1"]

