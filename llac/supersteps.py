"""The superstep section of a PUB trace (docs/trace-format.md, "Supersteps (PUB programs)"):
one `@step` record per processor and superstep, declared by the header's `#supersteps:`
line. Parsed here into a small table for the OBSP* evaluator (`llac.obsp`); a damaged line
is one problem and the good lines are kept, as for experiment records.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from llac.records import spacing_fault, plain_float

RECORD = "@step"
COLUMNS = ("run", "rank", "machine", "step", "sync", "W", "in", "out", "msgs_in", "msgs_out", "end", "partners")
UNCOUNTED = ("run", "rank", "machine", "step", "sync", "W", "in", "out", "end", "partners")   # before session 24
SYNC_KINDS = ("sync", "obl", "part", "done", "end")
MACHINE_ID = re.compile(r"0(\.(0|[1-9][0-9]*))*")
WHOLE = re.compile(r"0|[1-9][0-9]{0,8}")


@dataclass(frozen=True)
class Step:
    """One processor's superstep in `run` (one execution of the program's `sync`
    experiment): global `rank`, `machine` id (`0`, `0.1`, ...), `step`
    number within that machine from 1, how it ended (`sync`), computation seconds `W`, bytes
    received `inbound` and sent `outbound`, the time it ended (`end`, seconds since the run
    began), the global ranks that sent to `rank` in it (`partners`), and the messages
    received and sent (`messages_in`, `messages_out`; 0 in a trace that does not count them)."""
    run: int
    rank: int
    machine: str
    step: int
    sync: str
    W: float
    inbound: float
    outbound: float
    end: float
    partners: tuple[int, ...]
    line: int = 0
    messages_in: float = 0.0
    messages_out: float = 0.0


@dataclass(frozen=True)
class Supersteps:
    """The supersteps of one execution of a program: the program, P, the host and CPU it ran
    on (to find g and L in the machine database), the file(s) it came from, its steps in file
    order, and the experiments whose executions are its runs (the header's `superstep_runs`,
    when written). Where the ENDs are measured from: `origin` None, each run's common start
    (the gathered trace); a rank, that rank's own start (a trace of its own records, e.g. a
    `.rank<r>` file); `starts`, those starts on rank 0's clock per run (empty when not
    written). `execution` tells the files of one execution apart (the header's `execution`),
    `status` is the trace's; `counts_messages`, whether its records count messages."""
    program: str
    procs: int
    host: str
    cpu: str
    path: str
    steps: tuple[Step, ...]
    runs_of: tuple[str, ...] = ()
    origin: int | None = None
    starts: tuple[float, ...] = ()
    execution: str = ""
    status: str = "complete"
    counts_messages: bool = True     # its records count messages (traces before session 24 do not)
    _by_run: dict = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self):
        runs: dict[int, list[Step]] = {}
        for step in self.steps:
            runs.setdefault(step.run, []).append(step)
        object.__setattr__(self, "_by_run", {number: tuple(steps) for number, steps in sorted(runs.items())})

    def runs(self) -> dict[int, tuple[Step, ...]]:
        """The steps of each run (one execution of the `sync` experiment), by run number;
        grouped once, when the table is made, since every run's evaluation asks for it."""
        return self._by_run


def check_declaration(value: str) -> str | None:
    """Why a `#supersteps:` header value is not a column list this llac reads (None: it is:
    this version's, or the one before messages were counted)."""
    if tuple(value.split()) in (COLUMNS, UNCOUNTED):
        return None
    return (f"'#supersteps: {value[:60]}' is not the column list this llac reads "
            f"('{' '.join(COLUMNS)}'); the @step records are ignored")


def parse_reference(header, procs: int | None) -> tuple[int | None, tuple[float, ...], list[tuple[str, str]]]:
    """Where a trace's ENDs are measured from: the header's `superstep_origin` (absent: each
    run's common start; `rank R`: rank R's own start) and `superstep_starts` (those starts per
    run on rank 0's clock), with a (key, message) problem per damaged value; a damaged one
    leaves the starts empty, so that the supersteps are not combined with another file's."""
    problems, origin = [], None
    text = header.get("superstep_origin")
    if text is not None:
        words = text.split(" ")
        try:
            if len(words) != 2 or words[0] != "rank":
                raise ValueError("is not 'rank R'")
            origin = _rank(words[1], "rank", procs)
        except ValueError as err:
            problems.append(("superstep_origin", f"'#superstep_origin: {text[:40]}' {err}; the supersteps "
                                                 f"are not combined with other files'"))
            return None, (), problems
    try:
        starts = tuple(_number(word, "start") for word in header.get("superstep_starts", "").split())
    except ValueError as err:
        problems.append(("superstep_starts", f"#superstep_starts: {err}; the supersteps are not combined "
                                             f"with other files'"))
        starts = ()
    return origin, starts, problems


def parse_step(line: bytes, number: int, procs: int | None, columns: tuple[str, ...] = COLUMNS) -> Step:
    """One `@step` record line (file line `number`) as a Step; ValueError says what is wrong.
    `procs`, when known, bounds the ranks; `columns`, the trace's declaration (COLUMNS or
    UNCOUNTED)."""
    spacing = spacing_fault(line)
    if spacing:
        raise ValueError(f"has {spacing} (values are separated by single spaces)")
    words = line.decode("utf-8", "replace").split(" ")[1:]
    if len(words) != len(columns):
        raise ValueError(f"has {len(words)} values, expected {len(columns)} ({' '.join(columns)})")
    counted = dict(zip(columns, words))
    messages = [_count(counted.get(name, "0"), name) for name in ("msgs_in", "msgs_out")]
    run_text, rank_text, machine, step_text, sync, w, inbound, outbound = words[:8]
    end, partners = words[-2:]
    if not WHOLE.fullmatch(run_text) or int(run_text) < 1:
        raise ValueError(f"run {run_text[:30]!r} is not a run number (1, 2, ...)")
    rank = _rank(rank_text, "rank", procs)
    if not MACHINE_ID.fullmatch(machine):
        raise ValueError(f"machine {machine[:30]!r} is not a machine id (0, 0.1, 0.1.0, ...)")
    if not WHOLE.fullmatch(step_text) or int(step_text) < 1:
        raise ValueError(f"step {step_text[:30]!r} is not a superstep number (1, 2, ...)")
    if sync not in SYNC_KINDS:
        raise ValueError(f"sync {sync[:30]!r} is not one of {', '.join(SYNC_KINDS)}")
    amounts = [_number(text, name, minimum=0.0) for text, name in
               ((w, "W"), (inbound, "in"), (outbound, "out"))]
    senders = () if partners == "-" else tuple(_rank(p, "partner", procs) for p in partners.split(","))
    if len(set(senders)) != len(senders):
        raise ValueError(f"partners {partners[:30]!r} names a rank twice")
    return Step(int(run_text), rank, machine, int(step_text), sync, *amounts, _number(end, "end"), senders, number,
                *messages)


def _count(text: str, what: str) -> float:
    """A count of messages written in a record: a whole number."""
    if not WHOLE.fullmatch(text):
        raise ValueError(f"{what} {text[:30]!r} is not a count of messages (0, 1, ...)")
    return float(text)


def _rank(text: str, what: str, procs: int | None) -> int:
    """A rank written in a record: a whole number below P (when P is known)."""
    if not WHOLE.fullmatch(text):
        raise ValueError(f"{what} {text[:30]!r} is not a rank (0, 1, ...)")
    if procs is not None and int(text) >= procs:
        raise ValueError(f"{what} {text} is not a rank of this run (P = {procs})")
    return int(text)


def _number(text: str, what: str, minimum: float | None = None) -> float:
    """A finite decimal value of a record, at least `minimum` when given."""
    try:
        value = plain_float(text.encode())
    except ValueError:
        raise ValueError(f"{what} {text[:30]!r} is not a number") from None
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        raise ValueError(f"{what} {text[:30]} is not a finite number"
                         + (f" >= {minimum:g}" if minimum is not None else ""))
    return value


def parse_steps(collected, procs: int | None, columns: tuple[str, ...] = COLUMNS) -> tuple[list[Step], list[tuple[int, str]]]:
    """The Steps of the collected `(line number, line)` pairs (records of the declared
    `columns`) and a problem per bad line: a damaged one, or a second record of the same run,
    rank, machine and step."""
    steps, problems, seen = [], [], {}
    for number, line in collected:
        try:
            step = parse_step(line, number, procs, columns)
        except ValueError as err:
            problems.append((number, f"superstep record {err}; it is ignored"))
            continue
        key = (step.run, step.rank, step.machine, step.step)
        if key in seen:
            problems.append((number, f"superstep record: rank {step.rank} has superstep {step.step} of "
                                     f"machine {step.machine} in run {step.run} already (line {seen[key]}); it is ignored"))
            continue
        seen[key] = number
        steps.append(step)
    return steps, problems
