"""`call probe`: build the sequential machine probe (runtime_c/probe/memory_probe.c, installed
with the runtime) with $CC, run it with its progress on stderr, parse what it measured into a
cll_grammar.machine.ProbeRun, find the cache knees (call.knees), store the run in the machine
database and write a summary for the command line (docs/machine.md, "The probe")."""
from __future__ import annotations

import math
import os
import shlex
import signal
import sqlite3
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from call.diagnostics import CallError, Diagnostic
from call.knees import assign_knees, knee_sizes
from call.progress import Progress
from cll_grammar.machine import (ACCESSES, BspPoint, CacheLevel, MountainPoint, Operation, ProbeRun,
                                 available_memory, byte_size, far_knees, reported_caches, this_cpu_model,
                                 this_host)
from cll_grammar.machinedb import MachineDB, MachineDBError

FORMAT_VERSION = "1"
DEFAULT_LAST_CACHE = 8 * 1024 ** 2    # bytes, when sysfs reports no cache
# bytes: the quick probe's mountain ends here at the latest. Its time grows with the largest
# working set: a VM reporting a 300 MiB L3 made the quick probe (to 4x that) take 61 s, and
# 256 MiB keeps it near 15 s; the full probe still goes to 4x the last cache.
QUICK_LARGEST = 256 * 1024 ** 2
STRIDES = (8, 64, 256)                 # bytes; the line size is added when it is not here
# Compiler flags, best first: -march=native makes fma one instruction where the CPU has it
# (the probe runs where it is built); no vectorization, so an access is one load or store.
FLAG_SETS = (["-O2", "-fno-tree-vectorize", "-march=native"], ["-O2", "-fno-tree-vectorize"])


@dataclass(frozen=True)
class Settings:
    """How hard the probe looks: repetitions of every figure, the least seconds one
    repetition lasts, and working sets per doubling of the grid."""
    reps: int
    target_seconds: float
    steps_per_doubling: int


FULL = Settings(reps=31, target_seconds=0.003, steps_per_doubling=2)
QUICK = Settings(reps=7, target_seconds=0.001, steps_per_doubling=1)


class ProbeError(CallError):
    """A probe that could not be built, run, read or stored: one message."""

    def __init__(self, message: str):
        super().__init__([Diagnostic("error", "call probe", 0, 0, message)])


def probe_source() -> Path:
    """The probe's C source, installed with the runtime (call.runtime_paths)."""
    from call.runtime_paths import RuntimeMissing, probe_source as installed
    try:
        return installed()
    except RuntimeMissing as err:
        raise ProbeError(str(err)) from None


def build_probe(workdir: Path) -> Path:
    """Compile the probe into `workdir` with $CC (default cc), trying FLAG_SETS in turn;
    return the executable."""
    compiler = shlex.split(os.environ.get("CC", "cc")) or ["cc"]
    exe = workdir / "memory_probe"
    said = ""
    for flags in FLAG_SETS:
        try:
            result = subprocess.run([*compiler, *flags, "-o", str(exe), str(probe_source()), "-lm"],
                                    capture_output=True, text=True, errors="replace")
        except OSError as err:
            raise ProbeError(f"cannot run the C compiler {compiler[0]!r} "
                             f"({err.strerror or err}); set $CC to one") from None
        if result.returncode == 0:
            return exe
        said = result.stderr.strip()
    raise ProbeError(f"the C compiler {compiler[0]!r} could not build the probe:\n{said}")


def mountain_limit(caches: list[CacheLevel], available: int | None, largest: int | None = None,
                   quick: bool = False) -> int:
    """The largest working set of the mountain (the probe's grid ends there): `largest`
    where the user asks for one (so that predictions for larger working sets are measured,
    not extrapolated), else 4x the last cache (as reported; DEFAULT_LAST_CACHE when none is),
    and for a `quick` probe at most QUICK_LARGEST; at most half of the memory available. A
    `largest` below twice the last cache (the mountain would not reach memory, and its memory
    figures would be a cache's) or beyond half the available memory is a ProbeError."""
    last = max((c.reported_bytes for c in caches), default=DEFAULT_LAST_CACHE)
    if largest is None:
        limit = min(4 * last, QUICK_LARGEST) if quick else 4 * last
        return min(limit, available // 2) if available else limit
    if largest < 2 * last:
        raise ProbeError(f"--largest {byte_size(largest)}: the mountain must reach at least twice the last "
                         f"cache ({byte_size(last)}), {byte_size(2 * last)}, to measure memory beyond it")
    if available and largest > available // 2:
        raise ProbeError(f"--largest {byte_size(largest)}: only {byte_size(available)} of memory is "
                         f"available, and the probe uses at most half of it ({byte_size(available // 2)})")
    return largest


def probe_arguments(settings: Settings, limit: int, line: int) -> list[str]:
    """The probe's command-line arguments (memory_probe.c's usage)."""
    strides = sorted({*STRIDES, line})
    return [str(limit), str(settings.reps), repr(settings.target_seconds),
            str(settings.steps_per_doubling), ",".join(map(str, strides)), str(line)]


def run_probe(exe: Path, arguments: list[str], progress: Progress) -> str:
    """Run the probe, showing its `progress I N WHAT` lines as the current step; return
    what it printed on stdout."""
    output = exe.parent / "probe.out"
    said = []
    with open(output, "w") as out:
        process = subprocess.Popen([str(exe), *arguments], stdout=out, stderr=subprocess.PIPE,
                                   text=True, errors="replace")
        try:
            for line in process.stderr:
                fields = line.split(maxsplit=3)
                if fields[:1] == ["progress"] and len(fields) == 4:
                    progress.step(f"probe {fields[1]}/{fields[2]}: {fields[3].strip()}")
                else:
                    said.append(line.strip())
            status = process.wait()
        except BaseException:        # Ctrl-C, or SIGTERM to call: the probe does not run on alone
            process.kill()
            process.wait()
            raise
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else str(-status)
        raise ProbeError(f"the probe was killed by {name}"
                         + (" (out of memory?)" if -status == signal.SIGKILL else ""))
    if status:
        raise ProbeError(f"the probe failed (status {status}): {' '.join(said) or 'no message'}")
    return output.read_text()


def parse_output(text: str) -> tuple[list[MountainPoint], list[Operation]]:
    """The mountain points and operation costs in the probe's output (memory_probe.c's
    format); a ProbeError names the first line that does not fit, or a missing end."""
    lines = text.splitlines()
    if not lines or lines[0].split() != ["probe", FORMAT_VERSION]:
        raise ProbeError(f"the probe's output does not start with `probe {FORMAT_VERSION}`")
    mountain, operations = [], []
    for number, line in enumerate(lines[1:], 2):
        fields = line.split()
        try:
            if fields[:1] == ["end"] and len(fields) == 1:
                if number != len(lines):
                    raise ValueError("output after `end`")
                return mountain, operations
            if fields[:1] == ["mountain"] and len(fields) == 6 and fields[1] in ACCESSES:
                mountain.append(MountainPoint(fields[1], int(fields[2]), int(fields[3]),
                                              _positive(fields[4]), _spread(fields[5])))
            elif fields[:1] == ["op"] and len(fields) == 4:
                operations.append(Operation(fields[1], _positive(fields[2]), _spread(fields[3])))
            else:
                raise ValueError("not a figure")
        except ValueError as err:
            raise ProbeError(f"the probe's output, line {number}: {err}: {line!r}") from None
    raise ProbeError("the probe's output is truncated (no `end` line)")


def _positive(text: str) -> float:
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{text} is not a positive cost")
    return value


def _spread(text: str) -> float:
    value = float(text)
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{text} is not a spread")
    return value


def line_size(caches: list[CacheLevel]) -> int:
    """The cache line size (bytes): the data caches' line, 64 when sysfs reports none."""
    return next((c.line_bytes for c in caches if c.kind in ("Data", "Unified")), 64)


def measured_caches(caches: list[CacheLevel], mountain: list[MountainPoint]) -> list[CacheLevel]:
    """`caches` with the knees of the read mountain at stride = line size as measured sizes."""
    line = line_size(caches)
    curve = sorted((p.working_set, p.seconds) for p in mountain
                   if p.access == "read" and p.stride == line)
    levels = sum(c.kind in ("Data", "Unified") for c in caches)
    if not curve or not levels:
        return caches
    knees = knee_sizes([w for w, _ in curve], [s for _, s in curve], levels)
    return assign_knees(caches, knees)


def assemble_run(caches: list[CacheLevel], mountain: list[MountainPoint],
                 operations: list[Operation], quick: bool, label: str | None, seconds: float,
                 bsp: list[BspPoint] | None = None) -> ProbeRun:
    """One ProbeRun of this host from its parts, dated now (UTC): the sequential probe's
    figures, and the BSP figures where an MPI probe measured them."""
    return ProbeRun(host=this_host(), cpu_model=this_cpu_model(),
                    date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    quick=quick, label=label, cores=os.cpu_count(), seconds=seconds,
                    caches=measured_caches(caches, mountain), mountain=mountain,
                    operations=operations, bsp=list(bsp or []))


def sequential_probe(quick: bool, progress: Progress, caches: list[CacheLevel], limit: int
                     ) -> tuple[list[MountainPoint], list[Operation]]:
    """Build and run the sequential probe for the machine's reported `caches` (its line size),
    its mountain up to `limit` bytes (mountain_limit): the mountain and the operations."""
    settings = QUICK if quick else FULL
    arguments = probe_arguments(settings, limit, line_size(caches))
    with tempfile.TemporaryDirectory(prefix="call-probe-") as work:
        progress.step("building the probe")
        exe = build_probe(Path(work))
        return parse_output(run_probe(exe, arguments, progress))


def open_database(path: str | None) -> MachineDB:
    """The machine database at `path` (default: $LLAC_MACHINE_DB, else the user's), opened
    before the probe runs so that an unusable one is said at once."""
    try:
        return MachineDB(path)
    except (MachineDBError, ValueError) as err:   # ValueError: a NUL in the path
        raise ProbeError(f"cannot use the machine database: {err}") from None


def store_run(db: MachineDB, run: ProbeRun) -> str:
    """Store `run` in `db`; return the machine's name."""
    try:
        db.store(run)
        return db.machine_of(run.host, run.cpu_model)
    except (MachineDBError, sqlite3.Error) as err:
        raise ProbeError(f"cannot store the probe run in {db.path}: {err}") from None


def level_costs(run: ProbeRun, access: str = "read") -> list[tuple[str, float]]:
    """Cost per access (`read`, `chase` or `gather`) at stride = line size in each cache level and in
    memory: at the largest working set of half the level's size (a working set surely inside
    it), and at the largest working set for memory. Empty when the run has no such curve."""
    line = line_size(run.caches)
    curve = sorted((p.working_set, p.seconds) for p in run.mountain
                   if p.access == access and p.stride == line)
    costs = []
    for cache in sorted((c for c in run.caches if c.kind in ("Data", "Unified")),
                        key=lambda c: c.level):
        inside = [s for w, s in curve if w <= cache.size // 2]
        if inside:
            costs.append((f"L{cache.level}", inside[-1]))
    if curve:
        costs.append(("memory", curve[-1][1]))
    return costs


def summary(run: ProbeRun, name: str, where: Path) -> str:
    """The short report `call probe` prints: caches, access costs, operation costs, where."""
    out = [f"machine {name} ({run.host}, {run.cpu_model}), {'quick' if run.quick else 'full'} "
           f"probe in {run.seconds:.1f} s"]
    for cache in run.caches:
        measured = byte_size(cache.measured_bytes) if cache.measured_bytes else "no knee"
        out.append(f"  L{cache.level} {cache.kind:<11} reported {byte_size(cache.reported_bytes):>9}"
                   + (f", measured {measured}" if cache.kind != "Instruction" else ""))
    out += [f"  note: {note}" for note in far_knees(run.caches) + short_mountain(run)]
    costs = ", ".join(f"{level} {seconds * 1e9:.2f}" for level, seconds in level_costs(run))
    out.append(f"  read ns per access (stride {line_size(run.caches)}): {costs}")
    for kind, what in (("chase", "random access ns (a chase: dependent loads)"),
                       ("gather", "random access ns (a gather: independent loads)")):
        costs = ", ".join(f"{level} {seconds * 1e9:.1f}" for level, seconds in level_costs(run, kind))
        if costs:
            out.append(f"  {what}: {costs}")
    ops = ", ".join(f"{op.name} {op.seconds * 1e9:.2f}" for op in run.operations)
    out.append(f"  ns per operation: {ops}")
    if run.bsp:
        from call.probe_bsp import table
        out.append("  BSP parameters:")
        out += ["  " + line for line in table(run.bsp).splitlines()]
    out.append(f"stored as run {run.run_id} in {where}")
    return "\n".join(out)


def short_mountain(run: ProbeRun) -> list[str]:
    """A note when the mountain stops below twice the last cache the system reports (a quick
    probe's QUICK_LARGEST, or half the memory available): its memory figures may then be
    that cache's, as `machine show` and the predictions read them."""
    caches = [c for c in run.caches if c.kind != "Instruction"]
    if not run.mountain or not caches:
        return []
    last, top = max(caches, key=lambda c: c.reported_bytes), max(p.working_set for p in run.mountain)
    if top >= 2 * last.reported_bytes:
        return []
    full = "; the full probe measures to 4x it" if run.quick else ""
    return [f"the mountain stops at {byte_size(top)}, below twice the reported L{last.level} "
            f"({byte_size(last.reported_bytes)}): its memory figures may be that cache's{full}"]


def probe_command(quick: bool, label: str | None, db: str | None, progress: Progress,
                  procs: list[int] | None = None, oversubscribe: bool = True,
                  largest: int | None = None) -> str:
    """`call probe`: measure this machine (the mountain up to `largest` bytes, else the default
    limit; with `procs`, also BSP's g and L for each P) and store the run; returns the summary
    to print. When the BSP probe fails at some P, what
    was measured before it is stored all the same, and a ProbeError says which P failed,
    why, and where the rest went."""
    caches = reported_caches()
    limit = mountain_limit(caches, available_memory(), largest, quick)   # before any file is made
    with open_database(db) as database:
        if procs:
            from call.probe_bsp import check_ready
            check_ready(procs)   # a count that cannot run, or no MPI: before measuring anything
        start = time.monotonic()
        mountain, operations = sequential_probe(quick, progress, caches, limit)
        bsp, stopped = [], None
        if procs:
            from call.probe_bsp import BspIncomplete, measure_bsp
            try:
                bsp = measure_bsp(procs, quick, progress, oversubscribe)
            except BspIncomplete as incomplete:
                bsp, stopped = incomplete.points, incomplete
        run = assemble_run(caches, mountain, operations, quick, label, time.monotonic() - start, bsp)
        name = store_run(database, run)
        if stopped is not None:
            raise ProbeError(_incomplete_message(stopped, run, name, database.path))
        progress.note("probe done")
        return summary(run, name, database.path)


def _incomplete_message(stopped, run: ProbeRun, name: str, where: Path) -> str:
    """Which P of the BSP probe failed and why, and what was stored instead."""
    at = f"at P={stopped.failed}" if stopped.failed is not None else "before its first run"
    measured = sorted({point.procs for point in run.bsp})
    kept = "the memory mountain and the operation costs" + (
        f", and g and L for P={','.join(map(str, measured))}" if measured else "")
    return (f"the BSP probe failed {at}: {stopped.diagnostics[0].message}. What was measured "
            f"is stored as run {run.run_id} of machine {name} in {where}: {kept}")
