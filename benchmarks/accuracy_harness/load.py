"""Background load that the noise mode starts and always stops: local busy processes.

Each process is `python -c LOOP`: after an optional delay it alternates busy bursts with
sleeps (both of random length between `low` and `high` seconds, seeded), or with `low` =
`high` = 0 it stays busy. It stops by itself after `limit` seconds, or as soon as its parent
(the harness) is gone, so no process outlives the benchmark even when the harness is killed;
`background_load` kills them in a `finally`, also on Ctrl-C.
"""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

LOOP = """
import os, random, sys, time
seed, low, high, delay, limit, parent = (float(a) for a in sys.argv[1:])
rng, end = random.Random(seed), time.monotonic() + limit
time.sleep(delay)
while time.monotonic() < end and os.getppid() == int(parent):
    stop = time.monotonic() + (rng.uniform(low, high) if high > 0 else 0.05)
    while time.monotonic() < stop:
        pass
    if high > 0:
        time.sleep(rng.uniform(low, high))
"""


@contextmanager
def background_load(processes: int = 2, low: float = 0.02, high: float = 0.3, delay: float = 0.0,
                    seed: int = 0, limit: float = 600.0) -> Iterator[list[subprocess.Popen]]:
    """Run `processes` load processes while the `with` block runs (bursts and sleeps of
    `low`..`high` seconds; `high` = 0: busy all the time) and kill them when it ends."""
    started: list[subprocess.Popen] = []
    try:
        for i in range(processes):
            args = [seed * 1000 + i, low, high, delay, limit, os.getpid()]
            started.append(subprocess.Popen([sys.executable, "-c", LOOP, *map(str, args)],
                                            stdin=subprocess.DEVNULL))
        yield started
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait()
