"""The OBSP* model of the CALL paper (section 2, formulas (1)-(3)) evaluated on a run's
supersteps (`llac.supersteps`), beside the plain BSP estimate with a global barrier at every
superstep (docs/parallel-analysis.md, "OBSP*: oblivious synchronisation").

For each BSP machine (the whole machine `0`, and each subgroup a `bsp_partition` made), with
its members' entry times ξ (Φ_0):

    Φ_{s,i} = max_{j ∈ Ω_{s,i}} (Φ_{s-1,j} + W_{s,j}) + C_{s,i} + L
    C_{s,i} = max_{j ∈ Ω_{s,i}} (g·(in_{s,j} @ out_{s,j}) + o·(msgs_in_{s,j} @ msgs_out_{s,j}))

with Ω_{s,i} the senders to i in s and i itself for an oblivious sync (`obl`), every member
for a barrier (`sync`). With o = 0 this is the paper's g·h_{s,i}, h_{s,i} = max_{j ∈ Ω_{s,i}}
(in_{s,j} @ out_{s,j}); o, the cost of one message beyond its bytes, is this project's
(docs/parallel-analysis.md, "Messages"). A superstep ending in the library's global `bsp_sync`
pays L_sync, the probe's empty bsp_sync, instead of L (an MPI_Barrier) when it is known: PUB's
bsp_sync exchanges the message counts, several times a barrier's cost. A superstep ending in `part` costs no communication: each member
enters its subgroup at Φ_{s-1,j} + W_{s,j} (its ξ there), and its Φ_{s,j} is the time it
leaves the subgroup (the subgroup's last superstep, which ends in `done`, costs W only), so
that for the parent the subgroup's work is a subroutine's computation, as the paper says. The
run's last superstep of the whole machine ends in `end` (its `sync` experiment ended): W only.
A trace holds one run per execution of the program's `sync` experiment; each is evaluated alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from llac.errors import LlacError
from llac.superstep_files import missing_processors
from llac.supersteps import Step, Supersteps

ROOT = "0"
COMBINE = {"max": max, "sum": lambda a, b: a + b}   # the paper's @ in formula (3)


class ObspError(LlacError):
    """Supersteps that do not make a run the model can evaluate (a rank missing a superstep,
    a partner outside its machine, a subgroup never entered, ...)."""


@dataclass(frozen=True)
class Evaluation:
    """One run's measured time (the latest superstep end), the OBSP* and BSP predictions,
    how many supersteps its whole machine made, and each processor's OBSP* end Φ_{R,i};
    `phi` and `comm` give, per (machine, step, rank), Φ_{s,i} and the communication g·h_{s,i} + L
    it includes (0 for part, done and end), for the timeline (`llac.timeline`)."""
    run: int
    procs: int
    measured: float
    obsp: float
    bsp: float
    supersteps: int
    ends: dict[int, float]
    phi: dict[tuple[str, int, int], float] = field(default_factory=dict)
    comm: dict[tuple[str, int, int], float] = field(default_factory=dict)


class Costs(NamedTuple):
    """The machine's parameters an evaluation uses: g (seconds per byte), L (seconds per
    superstep), o (seconds per message beyond its bytes) and L_sync (seconds of the library's
    empty bsp_sync; None: L)."""
    g: float
    L: float
    o: float = 0.0
    L_sync: float | None = None


def evaluate_with(trace: Supersteps, run: int, costs: Costs, combine: str = "max") -> Evaluation:
    """`evaluate` with the parameters of `costs`."""
    return evaluate(trace, run, costs.g, costs.L, combine, costs.o, costs.L_sync)


def evaluate(trace: Supersteps, run: int, g: float, L: float, combine: str = "max", o: float = 0.0,
             L_sync: float | None = None) -> Evaluation:
    """The OBSP* time max_i Φ_{R,i} of run number `run` of `trace` and its BSP estimate with
    these g (seconds per byte), L (seconds per superstep) and o (seconds per message beyond
    its bytes); `combine` is @ of formula (3): `max` (a network interface that sends and
    receives at once) or `sum`. `L_sync`, when known, is what a superstep ending in the
    library's global bsp_sync costs instead of L (the probe's empty bsp_sync: several times an
    MPI_Barrier, and the program's supersteps pay it, not the barrier's; the BSP estimate,
    a global synchronisation at every superstep, pays it at each). Raises ObspError when the
    steps are inconsistent."""
    steps = trace.runs().get(run, ())
    where = f"{trace.path}, run {run}"
    if not steps:
        raise ObspError(f"{where}: no supersteps" if trace.steps else
                        f"{trace.path}: the trace declares supersteps but holds none (they are recorded in the "
                        f"runs of a `sync` experiment: #pragma cll sync NAME ...)")
    machines = _machines(steps)
    if ROOT not in machines:
        raise ObspError(f"{where}: no superstep of the whole machine {ROOT}")
    _check_whole(trace, where, machines[ROOT])
    orphans = sorted(m for m in machines if m != ROOT and m.rsplit(".", 1)[0] not in machines)
    if orphans:
        raise ObspError(f"{where}: machine {orphans[0]} has no parent machine in the supersteps")
    model = _Model(machines, g, L, COMBINE[combine], where, o, L if L_sync is None else L_sync)
    exits, bsp = model.run(ROOT, {rank: 0.0 for rank in machines[ROOT]})
    return Evaluation(run, trace.procs, max(s.end for s in steps), max(exits.values()), bsp,
                      len(next(iter(machines[ROOT].values()))), exits, model.phi, model.comm)


def _check_whole(trace: Supersteps, where: str, root: dict[int, dict[int, Step]]) -> None:
    """Raise ObspError unless every processor has supersteps of the whole machine in the run
    and each ended the run (its last superstep of machine 0 ends in `end`; a trace that
    completed and has no `end` anywhere in the run, as a hand-written one, passes): a run of
    a program stopped inside it, or one that lacks processors (not gathered), has no OBSP*
    time."""
    absent = missing_processors(trace, set(root))
    if absent:
        raise ObspError(f"{where}: {absent}")
    last = {rank: steps[max(steps)] for rank, steps in root.items()}
    open_ranks = sorted(rank for rank, step in last.items() if step.sync != "end")
    if open_ranks and (len(open_ranks) < len(last) or trace.status != "complete"):
        step = last[open_ranks[0]]
        raise ObspError(f"{where}: the run did not end: rank{'s' if len(open_ranks) > 1 else ''} "
                        f"{','.join(map(str, open_ranks))} made no superstep of machine {ROOT} ending in end "
                        f"(rank {open_ranks[0]}'s last is superstep {step.step}, ending in {step.sync}): the "
                        f"program stopped inside the run (the trace's status: {trace.status})")


def _machines(steps) -> dict[str, dict[int, dict[int, Step]]]:
    """machine id -> rank -> step number -> Step."""
    machines: dict[str, dict[int, dict[int, Step]]] = {}
    for step in steps:
        machines.setdefault(step.machine, {}).setdefault(step.rank, {})[step.step] = step
    return machines


def _child_order(machine: str) -> tuple[int, ...]:
    """A machine id as numbers, so that 0.10 comes after 0.9."""
    return tuple(int(part) for part in machine.split("."))


class _Model:
    """Formula (2) machine by machine, recursing into subgroups at partitions."""

    def __init__(self, machines, g: float, L: float, combine, path: str, o: float, L_sync: float):
        self.machines, self.g, self.L, self.combine, self.path, self.o = machines, g, L, combine, path, o
        self.L_sync = L_sync
        self.phi: dict[tuple[str, int, int], float] = {}
        self.comm: dict[tuple[str, int, int], float] = {}

    def run(self, machine: str, entry: dict[int, float]) -> tuple[dict[int, float], float]:
        """The members' Φ at the end of `machine`'s last superstep, entered at `entry` (ξ), and
        the machine's BSP time (its supersteps' maxima summed, subgroups in parallel)."""
        rows = self._rows(machine)
        children = sorted((m for m in self.machines if m.rsplit(".", 1)[0] == machine and m != ROOT),
                          key=_child_order)
        pending = {rank: [c for c in children if rank in self.machines[c]] for rank in entry}
        phi, bsp = dict(entry), 0.0
        for number, row in enumerate(rows, start=1):
            kind = self._kind(machine, number, row, last=number == len(rows))
            ready = {rank: phi[rank] + step.W for rank, step in row.items()}
            work = max(step.W for step in row.values())
            if kind == "part":
                phi, sub = self._partition(machine, number, ready, pending)
                bsp += work + sub
            elif kind in ("done", "end"):
                phi, bsp = ready, bsp + work
            else:
                phi, cost = self._superstep(machine, number, kind, row, ready)
                bsp += work + cost
            for rank in row:
                self.phi[machine, number, rank] = phi[rank]
                self.comm.setdefault((machine, number, rank), 0.0)
        unused = sorted({c for rest in pending.values() for c in rest}, key=_child_order)
        if unused:
            raise ObspError(f"{self.path}: machine {unused[0]} is never entered: machine {machine} "
                            f"has fewer supersteps ending in part than subgroups")
        return phi, bsp

    def _rows(self, machine: str) -> list[dict[int, Step]]:
        """Each superstep's Step per member; every member must have supersteps 1..R."""
        ranks = self.machines[machine]
        counts = {rank: len(steps) for rank, steps in ranks.items()}
        for rank, steps in ranks.items():
            if sorted(steps) != list(range(1, len(steps) + 1)):
                missing = min(set(range(1, max(steps) + 1)) - set(steps))
                raise ObspError(f"{self.path}: rank {rank} has no superstep {missing} of machine {machine}")
        if len(set(counts.values())) > 1:
            few = min(counts, key=counts.get)
            many = max(counts, key=counts.get)
            raise ObspError(f"{self.path}: in machine {machine}, rank {few} made {counts[few]} supersteps "
                            f"and rank {many} {counts[many]} (the paper's R is the same for all)")
        return [{rank: ranks[rank][s] for rank in sorted(ranks)} for s in range(1, max(counts.values()) + 1)]

    def _kind(self, machine: str, number: int, row: dict[int, Step], last: bool) -> str:
        """How superstep `number` of `machine` ends, the same on every member; `done` ends a
        subgroup's last superstep and only that; `end` only the whole machine's last."""
        kinds = {step.sync for step in row.values()}
        where = f"{self.path}: superstep {number} of machine {machine}"
        if len(kinds) > 1:
            raise ObspError(f"{where} ends in {' and '.join(sorted(kinds))} on different ranks")
        kind = kinds.pop()
        if (kind == "done") != (last and machine != ROOT):
            raise ObspError(f"{where} ends in {kind}: " + (
                "the whole machine has no bsp_done" if machine == ROOT else
                "a subgroup's last superstep, and only that, ends in done"))
        if kind == "end" and not (last and machine == ROOT):
            raise ObspError(f"{where} ends in end: only the whole machine's last superstep does "
                            f"(where the sync experiment ended)")
        return kind

    def _superstep(self, machine, number, kind, row, ready):
        """Formula (2) for a superstep ending in `sync` or `obl`: each member's Φ, and the BSP
        cost of its communication (g·max h + o·max m + L, with L_sync for a bsp_sync)."""
        own = {rank: self.g * self.combine(step.inbound, step.outbound)
               + self.o * self.combine(step.messages_in, step.messages_out) for rank, step in row.items()}
        phi = {}
        for rank, step in row.items():
            outside = [p for p in step.partners if p not in row]
            if outside:
                raise ObspError(f"{self.path}: in superstep {number} of machine {machine}, rank {rank} "
                                f"received from rank {outside[0]}, which is not in that machine")
            omega = row if kind == "sync" else (rank, *step.partners)
            self.comm[machine, number, rank] = max(own[j] for j in omega) + (self.L_sync if kind == "sync" else self.L)
            phi[rank] = max(ready[j] for j in omega) + self.comm[machine, number, rank]
        return phi, max(own.values()) + self.L_sync

    def _partition(self, machine, number, ready, pending):
        """A superstep ending in bsp_partition: every member enters its next subgroup at its
        `ready` time; returns their exit times and the subgroups' longest BSP time."""
        entries: dict[str, dict[int, float]] = {}
        for rank, at in ready.items():
            if not pending[rank]:
                raise ObspError(f"{self.path}: superstep {number} of machine {machine} ends in part, but "
                                f"rank {rank} has no records in a subgroup of {machine} to enter")
            entries.setdefault(pending[rank].pop(0), {})[rank] = at
        phi, longest = {}, 0.0
        for child, entry in entries.items():
            absent = sorted(set(self.machines[child]) - set(entry))
            if absent:
                raise ObspError(f"{self.path}: rank {absent[0]} of machine {child} does not enter it at "
                                f"superstep {number} of machine {machine} with the others")
            exits, sub = self.run(child, entry)
            phi.update(exits)
            longest = max(longest, sub)
        return phi, longest
