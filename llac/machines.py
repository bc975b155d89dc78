"""llac's view of the machine database (docs/machine.md): finding a machine's probe run by
the name a user writes, the cost of a memory access at a working set, the cache level a
working set falls in, and machines as JSON files to carry to another database.

A machine reference is `NAME` (its latest full probe run without a label, else its latest
run without a label, else its latest run: a label marks a run made under special conditions),
`NAME@LABEL` (its latest run labelled so by `call probe --label`) or `NAME@ID` (one run).
"""
from __future__ import annotations

import json
import math
from dataclasses import MISSING, asdict, fields
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from cll_grammar.machine import (ACCESSES, OPERATIONS, BspPoint, CacheLevel, MountainPoint, Operation,
                                 ProbeRun, label_problem, this_cpu_model, this_host)
from cll_grammar.machinedb import MachineDB, MachineDBError
from llac.errors import LlacError

EXPORT_FORMAT = "llac-machine 1"
SEQUENTIAL_STRIDE = 8          # bytes: consecutive doubles, the default access pattern
MEMORY = "memory"


def open_machines(create: bool = False) -> MachineDB:
    """The user's machine database, to read (or with `create`, to write: made empty where there
    is none), or a LlacError with MachineDB's message, which says what to do."""
    try:
        return MachineDB(create=create)
    except MachineDBError as error:
        raise LlacError(str(error)) from None


def resolve(db: MachineDB, reference: str | None) -> tuple[str, ProbeRun]:
    """The machine name and probe run a reference designates; None means this machine."""
    if reference is None:
        name = db.machine_of(this_host(), this_cpu_model())
        if name is None:
            raise LlacError(f"this machine ({this_host()}, {this_cpu_model()}) was never probed "
                            f"into {db.path}; run `call probe`")
    else:
        name = reference.split("@")[0]
    runs = db.runs(name)
    if not runs:
        known = ", ".join(m[0] for m in db.machines()) or "none"
        raise LlacError(f"no machine {name!r} in {db.path} (machines: {known})")
    if reference is None or "@" not in reference:
        plain = [r for r in runs if not r.label]
        full = [r for r in plain or runs if not r.quick]
        return name, (full or plain or runs)[-1]
    tag = reference.split("@", 1)[1]
    chosen = [r for r in runs if (str(r.run_id) == tag if tag.isdigit() else r.label == tag)]
    if not chosen:
        tags = ", ".join(f"{name}@{r.label or r.run_id}" for r in runs)
        raise LlacError(f"machine {name} has no probe run {tag!r} (its runs: {tags})")
    return name, chosen[-1]


def resolve_bsp(db: MachineDB, reference: str | None) -> tuple[str, ProbeRun]:
    """Like resolve, for BSP's g and L: a plain machine name (or none) whose chosen run was
    probed without `--procs` falls back to the machine's latest run without a label that has
    them (else the latest labelled one)."""
    name, run = resolve(db, reference)
    if not run.bsp and (reference is None or "@" not in reference):
        with_bsp = sorted((r for r in db.runs(name) if r.bsp), key=lambda r: r.label is None)
        if with_bsp:
            return name, with_bsp[-1]
    return name, run


def machine_references() -> list[str]:
    """Every machine's name and NAME@LABEL of its labelled runs, for completion (empty when
    there is no database)."""
    try:
        with MachineDB(create=False) as db:
            names = [m[0] for m in db.machines()]
            return names + sorted({f"{n}@{r.label}" for n in names for r in db.runs(n) if r.label})
    except MachineDBError:
        return []


def data_caches(run: ProbeRun) -> list[CacheLevel]:
    """The caches data goes through (data and unified), smallest level first."""
    caches = [c for c in run.caches if c.kind in ("Data", "Unified")]
    return sorted(caches, key=lambda c: c.level)


def level_of(run: ProbeRun, working_set: float) -> str:
    """`L1`, `L2`, ... the smallest cache holding `working_set` bytes, else `memory`."""
    for cache in data_caches(run):
        if working_set <= cache.size:
            return f"L{cache.level}"
    return MEMORY


def level_edges(run: ProbeRun) -> list[tuple[str, int]]:
    """Each data cache's name and size: the working sets where a level is left."""
    return [(f"L{c.level}", c.size) for c in data_caches(run)]


def access_cost(run: ProbeRun, working_set, stride: int = SEQUENTIAL_STRIDE,
                access: str = "read") -> np.ndarray:
    """Seconds per access at `working_set` bytes (scalar or array), interpolated log-log in
    the probe's memory mountain at the measured stride nearest to `stride`; beyond the
    measured working sets the nearest measured cost holds."""
    points = [p for p in run.mountain if p.access == access]
    if not points:
        raise LlacError(f"the probe run of {run.host} on {run.date} has no {access} curve in its "
                        f"memory mountain (probe it again with this llac's `call probe`)")
    strides = sorted({p.stride for p in points})
    nearest = min(strides, key=lambda s: abs(np.log(s / stride)))
    curve = sorted((p.working_set, p.seconds) for p in points if p.stride == nearest)
    sizes, costs = (np.array(v, dtype=float) for v in zip(*curve))
    wanted = np.log(np.clip(np.asarray(working_set, dtype=float), 1.0, None))
    return np.exp(np.interp(wanted, np.log(sizes), np.log(costs)))


def operation_cost(run: ProbeRun, name: str) -> float | None:
    """Seconds of one operation the probe measured (`timer`, `add_dependent`, ...)."""
    return next((op.seconds for op in run.operations if op.name == name), None)


def no_bsp(name: str, run) -> LlacError:
    """The error for a probe run without BSP parameters, saying where they are measured: here
    with `call probe --procs`, or on the run's own host, whose database export this one imports
    (`call probe` here would measure this machine, not that one)."""
    from cll_grammar.machine import this_host
    how = ("`call probe --procs 1,2,4` measures them" if run.host == this_host() else
           f"`call probe --procs 1,2,4` on {run.host} measures them; `machine export` there and `machine import` "
           f"here bring them")
    return LlacError(f"{name}@{run.run_id} has no BSP parameters ({how})")


def export_machine(db: MachineDB, name: str, path: Path) -> int:
    """Write machine `name` with all its probe runs to a JSON file; return how many runs."""
    if "@" in name:
        raise LlacError(f"machine export takes a machine's name and writes all its runs: "
                        f"machine export {name.split('@')[0]} \"FILE\"")
    runs = db.runs(name)
    if not runs:
        raise LlacError(f"no machine {name!r} in {db.path}")
    document = {"format": EXPORT_FORMAT, "name": name, "runs": [asdict(r) for r in runs]}
    for run in document["runs"]:
        run.pop("run_id")
    try:
        path.write_text(json.dumps(document, indent=1) + "\n")
    except OSError as error:
        raise LlacError(f"cannot write {str(path)!r}: {error.strerror}") from None
    return len(runs)


def import_machine(db: MachineDB, path: Path) -> tuple[str, int, int]:
    """Read a machine file written by `export_machine` into `db`; runs already there (same
    machine, date and label) are skipped. Returns (machine name, runs added, runs skipped)."""
    try:
        document = json.loads(path.read_text())
    except OSError as error:
        raise LlacError(f"cannot read {str(path)!r}: {error.strerror}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise LlacError(f"{path}: not a machine file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise LlacError(f"{path}: not a machine file (no \"format\": \"{EXPORT_FORMAT}\")")
    if not isinstance(document.get("runs"), list):
        raise LlacError(f"{path}: damaged machine file (no list of \"runs\")")
    try:
        runs = _runs_from_json(document["runs"])
    except ValueError as error:
        raise LlacError(f"{path}: damaged machine file ({error})") from None
    added = skipped = 0
    for run in runs:
        name = db.machine_of(run.host, run.cpu_model)
        seen = {(r.date, r.label) for r in db.runs(name)} if name else set()
        if (run.date, run.label) in seen:
            skipped += 1
            continue
        db.store(run)
        added += 1
    name = db.machine_of(runs[0].host, runs[0].cpu_model) if runs else document.get("name", "?")
    return name, added, skipped


def _runs_from_json(items: list) -> list[ProbeRun]:
    """The runs of a machine file, each checked (_run_from_json), all of one machine; the
    ValueError for a damaged run names it by its place in the file and its date, so that the
    user finds it."""
    runs = []
    for number, item in enumerate(items, 1):
        try:
            runs.append(_run_from_json(item))
        except ValueError as error:
            date = item.get("date") if isinstance(item, dict) else None
            raise ValueError(f"run {number}" + (f" (date {date[:40]!r})" if isinstance(date, str) else "")
                             + f": {error}") from None
    _one_machine(runs)
    return runs


def _one_machine(runs: list[ProbeRun]) -> None:
    """A machine file holds the runs of one machine (`export_machine`): ValueError otherwise."""
    machines = sorted({(r.host, r.cpu_model) for r in runs})
    if len(machines) > 1:
        raise ValueError("runs of several machines (" + "; ".join(f"host {h!r}, CPU {c!r}" for h, c in machines)
                         + "): a machine file holds one machine's")


# A run's parts: its attribute, the dataclass of one part, and the fields that tell two parts
# apart (two parts alike in them are one figure measured twice).
PARTS = {"caches": (CacheLevel, ("level", "kind")),
         "mountain": (MountainPoint, ("access", "working_set", "stride")),
         "operations": (Operation, ("name",)),
         "bsp": (BspPoint, ("procs", "message"))}
# What every probe run has measured since the first probe (call/probe.py): its attribute, the
# field and the values that must be among its parts.
MEASURED = (("mountain", "access", ("read", "write")), ("operations", "name", ("timer",)))


def _run_from_json(item: dict) -> ProbeRun:
    """A ProbeRun from its exported dictionary, with its fields and its parts' checked: what
    `call probe` could not have written is refused (ValueError), since a stored run may become
    a machine's default run."""
    if not isinstance(item, dict):
        raise ValueError(f"a ProbeRun is an object of fields, not {json.dumps(item)[:60]}")
    for attribute in PARTS:
        if not isinstance(item.get(attribute, []), list):
            raise ValueError(f"a ProbeRun's {attribute!r} is a list, not {json.dumps(item[attribute])[:60]}")
    run = _built(ProbeRun, {k: v for k, v in item.items() if k not in PARTS})
    blank = next((f for f in ("host", "cpu_model", "date")
                  if not isinstance(getattr(run, f), str) or not getattr(run, f).strip()), None)
    if blank:
        raise ValueError(f"{blank} is {getattr(run, blank)!r}, not a non-empty string")
    if _utc(run.date) is None:
        raise ValueError(f"date {run.date!r} is not an ISO 8601 date and time in UTC, such as 2026-11-23T10:00:00Z")
    if not isinstance(run.quick, bool) or not (run.label is None or isinstance(run.label, str)):
        raise ValueError(f"quick must be true or false and label a string (quick is {run.quick!r})")
    if run.label is not None and label_problem(run.label):
        raise ValueError(f"label {label_problem(run.label)}")
    if not (run.cores is None or type(run.cores) is int and run.cores > 0) or \
            not (run.seconds is None or _number(run.seconds) and run.seconds >= 0):
        raise ValueError(f"cores is {run.cores!r} and seconds {run.seconds!r}: not a count and a duration")
    for attribute, (kind, key) in PARTS.items():
        setattr(run, attribute, _distinct([_checked(_built(kind, p)) for p in item.get(attribute, [])], key))
    for attribute, name, needed in MEASURED:
        lacking = sorted(set(needed) - {getattr(part, name) for part in getattr(run, attribute)})
        if lacking:
            raise ValueError(f"its {attribute!r} lacks {name} {', '.join(map(repr, lacking))}, which every "
                             f"probe run measures")
    return run


def _utc(date: str) -> datetime | None:
    """`date` read as ISO 8601 (`Z` or `+00:00`: Python 3.10 reads only the second), None
    unless it is a date and time in UTC, as `call probe` writes it: runs are ordered by their
    dates as text, which other time zones would put out of order."""
    try:
        stamp = datetime.fromisoformat(date[:-1] + "+00:00" if date.endswith("Z") else date)
    except ValueError:
        return None
    return stamp if stamp.utcoffset() == timedelta(0) else None


def _distinct(parts: list, key: tuple[str, ...]) -> list:
    """`parts` when no two of them are alike in the fields `key`, else a ValueError naming the
    first pair (one figure measured twice: a reader would pick one at random)."""
    seen = set()
    for part in parts:
        value = tuple(getattr(part, field) for field in key)
        if value in seen:
            raise ValueError(f"two {type(part).__name__}s with "
                             + ", ".join(f"{field} {v!r}" for field, v in zip(key, value)))
        seen.add(value)
    return parts


def _built(kind, values):
    """`kind(**values)` for a dataclass of the database, ValueError naming the fields that
    `values` (read from JSON) lacks or has too many, or saying that it is not an object."""
    if not isinstance(values, dict):
        raise ValueError(f"a {kind.__name__} is an object of fields, not {values!r}")
    known = {f.name: f for f in fields(kind)}
    unknown = sorted(set(values) - set(known))
    missing = [n for n, f in known.items() if n not in values and f.default is MISSING
               and f.default_factory is MISSING]
    if unknown or missing:
        raise ValueError(f"a {kind.__name__} " + "; ".join(
            ([f"has no field {', '.join(map(repr, unknown))}"] if unknown else [])
            + ([f"lacks {', '.join(map(repr, missing))}"] if missing else []))
            + f" (its fields: {', '.join(known)})")
    return kind(**values)


def _number(value) -> bool:
    """A finite int or float (not a bool: JSON's true is no number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


LARGEST_COUNT = 2 ** 62        # bytes, counts: what SQLite's INTEGER holds, with room
WORDS = {"access": ACCESSES, "message": ("small", "large"), "kind": ("Data", "Instruction", "Unified"),
         "name": OPERATIONS}


def _checked(part):
    """`part` when its fields hold what a probe measures (JSON can hold anything): its words
    among those the database knows, spreads finite and >= 0, every other number finite and
    > 0 (an optional one may be null)."""
    for item in fields(part):
        value, name = getattr(part, item.name), f"{type(part).__name__}.{item.name}"
        if item.name in WORDS and value not in WORDS[item.name]:
            raise ValueError(f"{name} is {value!r}, not one of {', '.join(WORDS[item.name])}")
        if not ("int" in str(item.type) or "float" in str(item.type)):
            continue
        if value is None and "None" in str(item.type):
            continue
        if not _number(value):
            raise ValueError(f"{name} is {value!r}, not a number")
        if "float" not in str(item.type) and not (float(value).is_integer() and abs(value) < LARGEST_COUNT):
            raise ValueError(f"{name} is {value!r}, not a whole number below {LARGEST_COUNT:.0e}")
        if value < 0 or value == 0 and not item.name.endswith("spread"):
            raise ValueError(f"{name} is {value!r}: it must be {'>= 0' if item.name.endswith('spread') else '> 0'}")
    return part
