"""The memory-bandwidth co-runner (benchmarks/corunner): it streams while the block runs and
no copy of it outlives the block, whether the block ends normally, raises, or its Python is
killed."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.corunner import CorunnerError, corunner, executable  # noqa: E402


def live_corunners() -> list[int]:
    """The live processes (not zombies) of this process's co-runner executable."""
    exe, found = str(executable()), []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[0] == exe.encode():
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if state(pid) not in (None, "Z")]


def state(pid: int) -> str | None:
    """The process's state letter (R, S, Z, ...), None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def gone(pid: int, wait: float = 10) -> bool:
    """Whether `pid` is gone (or a zombie, dead but not yet reaped by init) within `wait` s."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if state(pid) in (None, "Z"):
            return True
        time.sleep(0.05)
    return False


def test_it_streams_during_the_block_and_stops_after_it():
    with corunner(mib=16, copies=2) as running:
        pids = running.pids
        assert len(set(pids)) == 2 and all(state(p) not in (None, "Z") for p in pids)
        time.sleep(0.3)
    assert all(state(p) is None for p in pids) and live_corunners() == []   # stopped, reaped
    assert [p.returncode for p in running.processes] == [0, 0]
    assert running.passes > 0 and running.bytes == running.passes * 2 * 16 * 2**20
    assert running.bandwidth > 0


def test_a_block_that_raises_leaves_no_corunner():
    with pytest.raises(KeyError, match="body"):
        with corunner(mib=16) as running:
            pids = running.pids
            raise KeyError("body")
    assert pids and all(state(p) is None for p in pids) and live_corunners() == []


def test_a_bad_size_is_a_clear_error_and_leaves_nothing():
    with pytest.raises(CorunnerError, match="the size must be at least 1 MiB, not 0"):
        with corunner(mib=0):
            pass
    assert live_corunners() == []


def test_it_dies_with_a_killed_parent(tmp_path):
    code = ("import sys, time; sys.path.insert(0, %r)\n"
            "from benchmarks.corunner import corunner\n"
            "with corunner(mib=16) as r:\n"
            "    print(r.pids[0], flush=True); time.sleep(60)\n") % str(REPO)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        assert state(pid) not in (None, "Z")
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert gone(pid)
    finally:
        parent.kill()
        parent.wait()
