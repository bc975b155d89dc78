"""Start and stop the memory-bandwidth-hungry co-runner (corunner.c) around a measurement:

    from benchmarks.corunner import corunner
    with corunner() as running:          # streaming over 128 MiB when the body starts
        ...measure...
    print(running.bandwidth)             # bytes per second it moved (after the block)

The C program is built once per process (gcc -O2, in a temporary folder). Leaving the block,
however it is left (an exception included), stops every copy with SIGTERM, waits for it, and
kills it if it does not stop within a few seconds: no co-runner outlives the block. One that
outlives a killed Python is killed by the kernel (it dies with its parent).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "corunner.c"
READY_SECONDS = 30      # allocating and touching the array
STOP_SECONDS = 5        # finishing the pass it is in


class CorunnerError(RuntimeError):
    """The co-runner could not be built or started; the message says why."""


@dataclass
class Running:
    """The co-runner processes of one `with corunner()` block and, once it is left, the work
    they reported (a copy killed instead of stopping reports none)."""
    processes: list[subprocess.Popen] = field(default_factory=list)
    passes: int = 0
    seconds: float = 0.0
    bytes: float = 0.0

    @property
    def pids(self) -> list[int]:
        """The process ids of the copies."""
        return [p.pid for p in self.processes]

    @property
    def bandwidth(self) -> float:
        """Bytes per second the copies moved together (nan before they stopped)."""
        copies = max(len(self.processes), 1)
        return self.bytes / (self.seconds / copies) if self.seconds else float("nan")


_built: dict[str, Path] = {}


def executable() -> Path:
    """The built co-runner (built on first use, removed at exit); CorunnerError when gcc fails."""
    if "exe" not in _built:
        folder = tempfile.mkdtemp(prefix="llac-corunner-")
        atexit.register(shutil.rmtree, folder, True)
        exe = Path(folder) / "corunner"
        compiler = os.environ.get("CC", "cc").split()
        done = subprocess.run([*compiler, "-O2", str(SOURCE), "-o", str(exe)], capture_output=True, text=True)
        if done.returncode:
            raise CorunnerError(f"cannot build {SOURCE}: {done.stderr.strip()}")
        _built["exe"] = exe
    return _built["exe"]


@contextlib.contextmanager
def corunner(mib: int = 128, copies: int = 1):
    """Run `copies` co-runners streaming over `mib` MiB each while the block runs; yields a
    Running that holds their work once the block is left. CorunnerError when one cannot start."""
    running = Running()
    try:
        for _ in range(copies):
            process = subprocess.Popen([str(executable()), str(mib)], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            running.processes.append(process)
            _await_ready(process)
        yield running
    finally:
        for process in running.processes:
            _stop(process, running)


def _await_ready(process: subprocess.Popen) -> None:
    """Wait for the co-runner's `ready` line; CorunnerError (it is then stopped by the caller)
    when it exits or stays silent instead."""
    readable, _, _ = select.select([process.stdout], [], [], READY_SECONDS)
    line = process.stdout.readline() if readable else ""
    if line.strip() != "ready":
        why = ""
        if readable and not line:     # end of output: it exited, its stderr says why
            process.wait()
            why = process.stderr.read().strip() or f"it exited with status {process.returncode}"
        raise CorunnerError(f"the co-runner did not start: {why or 'no ready line in time'}")


def _stop(process: subprocess.Popen, running: Running) -> None:
    """SIGTERM, wait for its report, SIGKILL if it does not stop; add its work to `running`."""
    if process.poll() is None:
        process.terminate()
    try:
        out, _ = process.communicate(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return
    words = out.split()
    if len(words) == 6 and words[0] == "passes":
        running.passes += int(words[1])
        running.seconds += float(words[3])
        running.bytes += float(words[5])
