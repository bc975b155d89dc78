"""The MPI part of the machine probe: BSP's g and L for each processor count P, measured by
bsp_probe.c (built with mpicc, run with `mpirun -np P`) in the manner of Hill and McColl's
bsp_probe (docs/machine.md, "BSP parameters").

`python -m call.probe_bsp --procs 1,2,4 [--quick]` measures and prints a table.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from call.build import mpi_compiler
from call.diagnostics import CallError, Diagnostic
from call.launch import ending
from call.mpirun import MAX_RANKS_PER_CORE
from call.progress import Progress
from call.runtime_paths import bsp_probe_source, mpi_include_dir, pub_source
from call.scripts import cores, launch_environment, mpirun_command, open_mpi_launcher
from call.scratch import remove_run_directories, run_directories
from cll_grammar.machine import BspPoint

WHO = "call probe"
NEEDS = "the BSP probe (g and L)"
TIMEOUT = {True: 120, False: 1200}   # seconds one mpirun may take, quick and full
NUMBER = r"(-?[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)"
LINES = {
    "header": re.compile(r"^bsp_probe 1 procs=(\d+) reps=(\d+)$", re.MULTILINE),
    "L": re.compile(rf"^L {NUMBER} {NUMBER}$", re.MULTILINE),
    "Lsync": re.compile(rf"^Lsync {NUMBER} {NUMBER}$", re.MULTILINE),
    "small": re.compile(rf"^g small {NUMBER} {NUMBER} {NUMBER}$", re.MULTILINE),
    "large": re.compile(rf"^g large {NUMBER} {NUMBER} {NUMBER}$", re.MULTILINE),
    "end": re.compile(r"^end$", re.MULTILINE),
}


def probe_error(message: str) -> CallError:
    """A CallError of the probe: one line `call probe: error: ...`."""
    return CallError([Diagnostic("error", WHO, 0, 0, message)])


def spread(least: float, median: float) -> float:
    """(median - min) / min, the spread llac reports for every measured figure (g's
    median over the repetitions' own fits may fall below the floor's g: its distance)."""
    return abs(median - least) / least


def parse_output(text: str, procs: int) -> list[BspPoint]:
    """The two BspPoints (small and large messages) in bsp_probe's output for `procs`
    processes; a CallError naming what is missing when the output is truncated or is not
    the probe's, or when a figure is not positive (so a half-written or meaningless run is
    never stored as a measurement)."""
    found = {name: pattern.search(text) for name, pattern in LINES.items()}
    missing = [name for name, match in found.items() if match is None]
    if missing:
        shown = text.strip().splitlines()[-1][:80] if text.strip() else "nothing"
        raise probe_error(f"the BSP probe's output for P={procs} is truncated or garbled "
                          f"(no {', '.join(missing)} line; its last line: {shown!r})")
    if int(found["header"].group(1)) != procs:
        raise probe_error(f"the BSP probe ran with P={found['header'].group(1)}, not P={procs}")
    (L_min, L_median), (sync_min, sync_median) = ((float(v) for v in found[k].groups()) for k in ("L", "Lsync"))
    if not (0 < L_min < math.inf and 0 < sync_min < math.inf):
        raise probe_error(f"the BSP probe measured L <= 0 for P={procs}: the timer failed")
    points = []
    for message in ("small", "large"):
        g_floor, g_median, _ = (float(value) for value in found[message].groups())
        if not 0 < g_floor < math.inf:
            raise probe_error(f"the BSP probe measured g <= 0 for P={procs}, {message} messages: "
                              f"the machine was too busy for the times to grow with h; run it "
                              f"again when it is quieter")
        points.append(BspPoint(procs, message, g_floor, spread(g_floor, g_median),
                               L_min, spread(L_min, L_median), sync_min, spread(sync_min, sync_median)))
    return points


def check_procs(procs: list[int]) -> None:
    """Refuse processor counts that mpirun cannot start here: below 1, or beyond what an
    oversubscribed machine runs rather than thrashes (call run's limit)."""
    limit = MAX_RANKS_PER_CORE * cores()
    for count in procs:
        if count < 1:
            raise probe_error(f"P={count}: a processor count is a positive integer")
        if count > limit:
            raise probe_error(f"P={count}: more processes than MPI will start here ({cores()} cores, "
                              f"at most {MAX_RANKS_PER_CORE} ranks per core oversubscribed)")


def build_probe(directory: Path) -> Path:
    """Compile bsp_probe.c and the PUB library (for its bsp_sync) with mpicc into
    `directory`; the executable."""
    executable = directory / "bsp_probe"
    command = [*mpi_compiler(WHO, NEEDS), "-O2", str(bsp_probe_source()), str(pub_source()),
               f"-I{mpi_include_dir()}", "-o", str(executable)]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise probe_error(f"mpicc could not build the BSP probe (status {done.returncode})"
                          + (f": {said[0]}" if said else ""))
    return executable


def run_probe(executable: Path, procs: int, quick: bool, oversubscribe: bool,
              progress: Progress, said: set[str]) -> str:
    """Run the probe with `mpirun -np procs` (oversubscribed beyond the cores, as call run
    does, unless told not to), saying each environment addition once (`said`: the ones
    said already); its standard output, or a CallError saying why it failed."""
    launcher = mpirun_command(WHO)
    extra, notes = launch_environment(procs, oversubscribe, launcher)
    for note in notes:
        if note not in said:
            progress.note(note)
            said.add(note)
    command = [*launcher, "-np", str(procs), str(executable), "quick" if quick else "full"]
    scratch = run_directories(open_mpi_launcher(launcher))
    try:
        done = subprocess.run(command, env={**os.environ, **extra, **scratch}, capture_output=True,
                              text=True, errors="replace", timeout=TIMEOUT[quick])
    except subprocess.TimeoutExpired:
        raise probe_error(f"mpirun -np {procs} did not end within {TIMEOUT[quick]} s; "
                          f"the BSP probe for P={procs} was stopped") from None
    finally:     # a timed-out mpirun is killed with SIGKILL, which leaves its scratch behind
        remove_run_directories(scratch)
    if done.returncode != 0:
        if "not enough slots" in done.stderr:
            why = (f"mpirun refused to start {procs} processes on {cores()} cores (not enough "
                   f"slots; the probe oversubscribes unless --no-oversubscribe is given)")
        elif done.returncode < 0:       # killed from outside (kill -9, the out-of-memory killer)
            why = f"mpirun -np {procs} {ending(done.returncode)}"
        else:
            said = [line for line in done.stderr.strip().splitlines() if line.strip()]
            why = f"mpirun -np {procs} failed (status {done.returncode})" + (f": {said[0]}" if said else "")
        raise probe_error(why)
    return done.stdout


class BspIncomplete(CallError):
    """measure_bsp stopped at a failure (`failed`: the P it was measuring, None before any):
    the error, and the `points` of the counts measured before it, which are worth keeping."""

    def __init__(self, error: CallError, points: list[BspPoint], failed: int | None):
        super().__init__(error.diagnostics)
        self.points = points
        self.failed = failed


def check_ready(procs: list[int]) -> None:
    """Refuse counts that cannot run here and say that MPI is missing, before any measuring."""
    check_procs(procs)
    mpirun_command(WHO)


def measure_bsp(procs: list[int], quick: bool, progress: Progress,
                oversubscribe: bool = True) -> list[BspPoint]:
    """g (small and large messages) and L for each processor count in `procs`, measured by
    building bsp_probe.c with mpicc and running it once per P with a progress line; two
    BspPoints per P, in the order of `procs`. A CallError (one clear message) when MPI is
    missing or a count cannot run here; a BspIncomplete, with the points measured so far,
    when the build or a run fails or is cut short."""
    check_ready(procs)
    points, said, count = [], set(), None
    with tempfile.TemporaryDirectory(prefix="call-bsp-probe-") as directory:
        try:
            progress.step("building the BSP probe with mpicc")
            executable = build_probe(Path(directory))
            for number, count in enumerate(procs, 1):
                progress.step(f"BSP probe {number} of {len(procs)}: mpirun -np {count} bsp_probe "
                              f"{'quick' if quick else 'full'}")
                points += parse_output(run_probe(executable, count, quick, oversubscribe, progress, said),
                                       count)
        except CallError as err:
            raise BspIncomplete(err, points, count) from None
    return points


def table(points: list[BspPoint]) -> str:
    """The measured figures, one row per P: g for small and large messages (ns per byte),
    L and the PUB library's bsp_sync (microseconds), each with its spread in percent."""
    rows = ["    P   g small (ns/B)  spread   g large (ns/B)  spread      L (us)  spread  bsp_sync (us)  spread"]
    by_procs: dict[int, dict[str, BspPoint]] = {}
    for point in points:
        by_procs.setdefault(point.procs, {})[point.message] = point
    for count, pair in by_procs.items():
        small, large = pair["small"], pair["large"]
        rows.append(f"{count:5d} {small.g * 1e9:16.4g} {small.g_spread:7.1%} {large.g * 1e9:16.4g} "
                    f"{large.g_spread:7.1%} {small.L * 1e6:11.4g} {small.L_spread:7.1%} " + (
                        f"{small.L_sync * 1e6:14.4g} {small.L_sync_spread:7.1%}" if small.L_sync else f"{'-':>14} {'-':>7}"))
    return "\n".join(rows)


def procs_list(text: str) -> list[int]:
    """argparse type of --procs: a comma-separated list of positive integers (each measured
    once, in increasing order)."""
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected P1,P2,..., positive integers") from None
    if any(count < 1 for count in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: processor counts are positive integers")
    return sorted(set(counts))


def main(argv: list[str] | None = None) -> int:
    """`python -m call.probe_bsp`: measure and print g and L; 0 on success, 1 on an error
    (one line on stderr), 2 on a usage error."""
    parser = argparse.ArgumentParser(prog="python -m call.probe_bsp",
                                     description="Measure BSP's g and L with mpirun for each P.")
    parser.add_argument("--procs", type=procs_list, default=[1, 2, 4], help="P1,P2,... (default 1,2,4)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller h (seconds)")
    parser.add_argument("--no-oversubscribe", dest="oversubscribe", action="store_false",
                        help="let mpirun refuse more processes than cores")
    args = parser.parse_args(argv)
    progress = Progress()
    try:
        points = measure_bsp(args.procs, args.quick, progress, args.oversubscribe)
    except CallError as err:
        progress.end()
        print(err.render(), file=sys.stderr)
        return 1
    progress.note("BSP probe done")
    print(table(points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
