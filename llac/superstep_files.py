"""The supersteps of one execution of a PUB program spread over several files: the gathered
trace `prog.cll.P.dat` (ENDs measured from each run's common start) and the traces of ranks
that were not gathered, their `.rank<r>` files (ENDs measured from that rank's own start of
each run; docs/pub.md, "Ranks that are not gathered"). Both say where their ENDs start on
rank 0's clock (`#superstep_starts`), so their tables combine into one on the gathered
trace's convention; and a run that lacks some processors is named with the files that may
hold them.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from llac.supersteps import Step, Supersteps


def same_execution(a: Supersteps, b: Supersteps) -> bool:
    """Whether two tables come from one execution of the program (the header's `execution`,
    which rank 0 hands every rank at MPI_Init)."""
    return bool(a.execution) and a.execution == b.execution


def combine(kept: Supersteps, new: Supersteps) -> tuple[Supersteps, list[str]]:
    """`new`'s supersteps added to `kept`'s (one execution): each run's ENDs measured again from
    the earliest start among the files (the run's common start: a processor that started
    later has the difference in the W of its first superstep of machine 0, as in the gathered
    trace). A rank's run that both hold keeps `kept`'s steps; a warning names those left out.
    Raises ValueError when a file does not say where its ENDs start for one of its runs."""
    for table in (kept, new):
        unplaced = sorted({s.run for s in table.steps if s.run > len(table.starts)})
        if unplaced:
            raise ValueError(f"{table.path} does not say when run {unplaced[0]} started (no #superstep_starts "
                             f"for it), so its ENDs cannot be put on the others' clock")
    count = max(len(kept.starts), len(new.starts))
    common = tuple(min(t.starts[i] for t in (kept, new) if i < len(t.starts)) for i in range(count))
    held = {(s.run, s.rank) for s in kept.steps}
    doubles = sorted({(s.rank, s.run) for s in new.steps if (s.run, s.rank) in held})
    added = [_rebased(s, t.starts[s.run - 1] - common[s.run - 1]) for t, steps in
             ((kept, kept.steps), (new, [s for s in new.steps if (s.run, s.rank) not in held]))
             for s in steps]
    warnings = [f"{new.path}: rank {rank}'s supersteps of run {run} are in {kept.path} already; "
                f"those of {new.path} are left out" for rank, run in doubles]
    runs_of = tuple(dict.fromkeys((*kept.runs_of, *new.runs_of)))
    status = kept.status if kept.status == new.status else f"{kept.status}; {Path(new.path).name}: {new.status}"
    return replace(kept, path=f"{kept.path} + {Path(new.path).name}", steps=tuple(added), runs_of=runs_of,
                   origin=None, starts=common, status=status,
                   counts_messages=kept.counts_messages and new.counts_messages), warnings


def _rebased(step: Step, later: float) -> Step:
    """A step of a file whose run started `later` seconds after the run's common start."""
    if later == 0:
        return step
    first = step.machine == "0" and step.step == 1
    return replace(step, end=step.end + later, W=step.W + later if first else step.W)


def missing_processors(trace: Supersteps, ranks: set[int]) -> str | None:
    """Why a run whose whole machine (every rank below P) has supersteps of only `ranks` cannot
    be evaluated (None: none is missing): the ranks whose own traces were loaded with `trace`
    finished no superstep of it (the program stopped inside it); for the others, the files
    that may hold their supersteps."""
    missing = sorted(set(range(trace.procs)) - ranks)
    if not missing:
        return None
    loaded = {Path(part).name for part in trace.path.split(" + ")}
    unread = [r for r in missing if Path(_rank_file(trace.path, r)).name not in loaded]
    if not unread:                  # their own traces are here: they stopped inside the run
        files = ", ".join(_rank_file(trace.path, r) for r in missing[:4]) + (", ..." if len(missing) > 4 else "")
        whose = "their own traces are loaded and hold" if len(missing) > 1 else "its own trace is loaded and holds"
        return (f"the run did not end: rank{_s(missing)} {_ranks(missing)} finished no superstep of it ({whose} "
                f"none of its supersteps: {files}): the program stopped inside the run (the trace's status: "
                f"{trace.status})")
    why = (f"{trace.path} holds rank {trace.origin}'s own records only" if trace.origin is not None
           else f"the trace's status: {trace.status}")
    files = [_rank_file(trace.path, r) for r in unread]
    return (f"the supersteps of rank{_s(unread)} {_ranks(unread)} are missing ({why}); a rank that "
            f"is not gathered writes them to its own trace ({', '.join(files[:4])}{', ...' if len(files) > 4 else ''}): "
            f"load the traces of the execution together, e.g. load \"{_glob(trace.path)}\"")


def finished_none(table: Supersteps) -> str:
    """The note on loading a trace of an execution's supersteps that holds none: a rank's own
    (a `.rank<r>` file, `table.origin` the rank) says that its rank finished none."""
    who = (f"rank {table.origin} finished no superstep of a run: its own trace holds none"
           if table.origin is not None else "the trace holds no supersteps")
    return f"{table.path}: {who} (the trace's status: {table.status})"


def _s(ranks: list[int]) -> str:
    """The plural's s for a list of ranks."""
    return "s" if len(ranks) > 1 else ""


def _ranks(ranks: list[int]) -> str:
    """Ranks as a message lists them: 1,3."""
    return ",".join(map(str, ranks))


def _rank_file(path: str, rank: int) -> str:
    """The name of rank `rank`'s own trace next to the trace at `path`: prog.cll.4.rank2.dat
    (rank 0's is the trace's own name, prog.cll.4.dat)."""
    return f"{_stem(path)}{f'.rank{rank}' if rank else ''}.dat"


def _stem(path: str) -> str:
    """The name shared by the traces of one execution, from one of them: prog.cll.4."""
    stem = Path(path.split(" + ")[0]).name.removesuffix(".dat")
    return stem[:stem.rindex(".rank")] if ".rank" in stem else stem


def _glob(path: str) -> str:
    """A load pattern for the trace at `path` and its ranks' own traces (prog.cll.4*.dat)."""
    return str(Path(path.split(" + ")[0]).with_name(f"{_stem(path)}*.dat"))
