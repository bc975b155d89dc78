"""Shared pytest configuration: a bounded budget for the property-based (hypothesis) fuzzers.

Each fuzzer draws at most `max_examples` inputs and has no per-example deadline (the machines
are shared and noisy); `HYPOTHESIS_PROFILE=long` runs a larger campaign by hand (5,000 inputs
per fuzzer, or `HYPOTHESIS_EXAMPLES`; fuzzers with their own smaller budget keep it).

The machine database of every test (and of the programs it starts) is a file of its own in
a temporary directory, never the user's: tests that need one set LLAC_MACHINE_DB themselves.

`-n auto` starts one worker more than the cores: a fifth of the suite's time is spent waiting
(mpirun's grace times, timeouts that are the behaviour under test, Open MPI's start-up), and
the extra worker keeps the cores busy meanwhile (9:01 -> 7:20 on 2 cores).
"""
import atexit
import os
import shutil
import tempfile

_DATABASE_FOLDER = tempfile.mkdtemp(prefix="llac-test-db-")
atexit.register(shutil.rmtree, _DATABASE_FOLDER, True)     # each run left one behind in /tmp
os.environ["LLAC_MACHINE_DB"] = os.path.join(_DATABASE_FOLDER, "machines.sqlite")

from hypothesis import HealthCheck, settings

settings.register_profile("suite", max_examples=150, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 5000)), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


def pytest_xdist_auto_num_workers(config) -> int:
    """The number of workers `-n auto` starts: the cores this process may use, plus one."""
    return len(os.sched_getaffinity(0)) + 1
