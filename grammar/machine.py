"""What a probe run measures about a machine (docs/machine.md), as plain data shared by
`call probe` (which measures and stores it) and llac (which reads it to see cache regimes
and other machines coming).

Units are the trace's: seconds, bytes. Every measured figure carries its spread over the
probe's repetitions, (median − min) / min, the same measure llac reports for sample points.
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class CacheLevel:
    """One cache as sysfs reports it, with the size the probe measured at its knee
    (virtual machines report odd sizes: the measured knee wins where there is one)."""
    level: int
    kind: str                      # Data, Instruction, Unified
    reported_bytes: int
    line_bytes: int
    measured_bytes: int | None = None

    @property
    def size(self) -> int:
        """The size llac believes: the measured knee, else what the system reports."""
        return self.measured_bytes or self.reported_bytes


ACCESSES = ("read", "write", "chase", "gather")   # a MountainPoint's access kinds


@dataclass(frozen=True)
class MountainPoint:
    """Cost of one access (seconds) by working-set size and stride: sequential reads or
    writes every stride bytes, a random pointer chase of dependent loads or a random gather of
    independent ones (stride: the line size)."""
    access: str                    # read, write, chase, gather
    working_set: int               # bytes
    stride: int                    # bytes
    seconds: float
    spread: float


# An Operation's names, as the probe (runtime_c/probe/memory_probe.c) measures them.
OPERATIONS = ("add_dependent", "add_independent", "multiply_dependent", "multiply_independent",
              "fma_dependent", "fma_independent", "divide_dependent", "divide_independent", "timer")


@dataclass(frozen=True)
class Operation:
    """Cost (seconds) of one basic operation (`add_dependent`, `fma_independent`,
    `divide_dependent`, ..., and `timer`, the clock read's own cost)."""
    name: str
    seconds: float
    spread: float


@dataclass(frozen=True)
class BspPoint:
    """BSP parameters for P processes, in the manner of bsp_probe: g in seconds per byte of
    an h-relation (small or large messages), L in seconds per empty superstep (an
    MPI_Barrier), L_sync the seconds of an empty superstep of the PUB library (bsp_sync;
    None in probe runs made before it was measured)."""
    procs: int
    message: str                   # small, large
    g: float
    g_spread: float
    L: float
    L_spread: float
    L_sync: float | None = None
    L_sync_spread: float | None = None


@dataclass
class ProbeRun:
    """Everything one probe run measured on one machine, dated."""
    host: str
    cpu_model: str
    date: str                      # ISO 8601 UTC
    quick: bool
    label: str | None = None
    cores: int | None = None
    seconds: float | None = None   # how long the probe took
    caches: list[CacheLevel] = field(default_factory=list)
    mountain: list[MountainPoint] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    bsp: list[BspPoint] = field(default_factory=list)
    run_id: int | None = None      # set once stored


def byte_size(count: float) -> str:
    """A size in bytes as people read it: `1.5 KiB`, `16 MiB`, `1023 KiB`, `512 B`."""
    for unit, size in (("TiB", 1024 ** 4), ("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if count >= size:
            value = count / size
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{count:.0f} B"


FAR_KNEE = 4        # a measured knee this many times above or below the reported size is named


def far_knees(caches: list[CacheLevel]) -> list[str]:
    """A sentence for each cache level whose measured knee lies FAR_KNEE times or more from the
    size the system reports: often the knee of another level, or noise from other tenants
    (virtual machines), which a second probe tells; the measured size wins where llac uses it."""
    notes = []
    for cache in caches:
        if cache.measured_bytes and cache.kind != "Instruction":
            ratio = cache.measured_bytes / cache.reported_bytes
            if ratio >= FAR_KNEE or ratio <= 1 / FAR_KNEE:
                notes.append(f"L{cache.level}'s knee measured at {byte_size(cache.measured_bytes)} is "
                             f"{ratio:.3g}x the {byte_size(cache.reported_bytes)} the system reports: often "
                             f"another level's knee or other tenants' noise; probe again to see if it holds")
    return notes


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable in bytes (None where /proc/meminfo does not say): the probe's mountain
    uses at most half of it, which llac's notes on larger working sets also say."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def this_host() -> str:
    """The host name, as the runtime writes it in a trace's `#host:`."""
    return socket.gethostname()


def this_cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name from /proc/cpuinfo (`unknown` where there is none), as the
    runtime writes it in a trace's `#cpu:`; with the host it names the machine entry."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return "unknown"
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else "unknown"


def reported_caches(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> list[CacheLevel]:
    """The caches of CPU 0 as sysfs reports them (empty where sysfs has none)."""
    caches = []
    for index in sorted(root.glob("index[0-9]*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text().strip())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        caches.append(CacheLevel(level, kind, size, line))
    return caches


def _parse_size(text: str) -> int:
    """sysfs sizes read `32K`, `16384K`, `1M`."""
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def machine_name(host: str) -> str:
    """A machine's name in llac's language: the host's first label made an identifier
    (`node-17.example.org` -> `node_17`)."""
    first = host.split(".")[0] or "machine"
    name = re.sub(r"[^A-Za-z0-9_]", "_", first)
    return name if not name[0].isdigit() else "m" + name


def label_problem(text: str) -> str | None:
    """Why `text` cannot label a probe run, or None: a label is a name that llac can write
    after `MACHINE@` (letters, digits and `_`, not starting with a digit: `vm@3` is run 3)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return None
    return (f"{text!r}: a label is a name (letters, digits and _, not starting with a digit), as llac "
            f"writes it in MACHINE@LABEL")
