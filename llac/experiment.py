"""An experiment's records as an immutable column table, with its formula and provenance."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

import numpy as np

from cll_grammar.formula import Formula
from cll_grammar.workingset import parse_working_set


@dataclass(frozen=True)
class Source:
    """One trace file of an experiment merged from several: the file, its header (with the
    experiment's declaration) and how many of the experiment's records were read from it."""
    origin: str
    header: Mapping[str, str]
    records: int


@dataclass(frozen=True)
class Experiment:
    """The records of one experiment: equal-length float64 columns keyed by name.

    `columns` always holds `time` and the formula's variables; traces add `rank` and
    `thread`, MPI traces add communication columns. `origin` says where the data came from
    (file names), `header` keeps the trace header's fields (procs, timer, status, ...).
    `working_set` is the canonical text of the experiment's working set in bytes, an
    expression of its variables (the pragma's `bytes` clause, `working_set_bytes` evaluates
    it), or None. `ids` identifies each record (`identify`: the same record read twice, from
    a copy of its trace, has the same id) so that merging cannot count one twice; None when
    unknown (CSV data, aggregates). `wall_time`: whether `time` is still the wall time the
    trace measured (`with time = ...` replaces it). `sources`: for an experiment merged from
    several files, each file (`Source`) with its own header, `header` then holding only the
    fields all of them agree on (`describe` shows both); () for one file. Operations return
    new experiments; nothing is changed in place.
    """
    name: str
    formula: Formula
    columns: Mapping[str, np.ndarray]
    origin: str = ""
    header: Mapping[str, str] = field(default_factory=dict)
    working_set: str | None = None
    ids: np.ndarray | None = None
    wall_time: bool = True
    sources: tuple[Source, ...] = ()

    def __post_init__(self):
        cols = {k: np.asarray(v, dtype=float) for k, v in self.columns.items()}
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of {self.name!r} have different lengths: {sorted(lengths)}")
        for v in cols.values():
            v.flags.writeable = False
        object.__setattr__(self, "columns", MappingProxyType(cols))
        object.__setattr__(self, "header", MappingProxyType(dict(self.header)))
        if self.ids is not None:
            ids = np.asarray(self.ids, dtype=np.uint64)
            ids.flags.writeable = False
            object.__setattr__(self, "ids", ids)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    @property
    def headers(self) -> tuple[Mapping[str, str], ...]:
        """The header of each file its records were read from (its own when one file)."""
        return tuple(source.header for source in self.sources) or (self.header,)

    def header_values(self, key: str, default: str | None = None) -> tuple:
        """The distinct values of header field `key` over its files, in file order
        (`default` for a file that lacks it): one value when they all agree."""
        return tuple(dict.fromkeys(header.get(key, default) for header in self.headers))

    @property
    def machine(self) -> tuple[str, str] | None:
        """(host, CPU model) that its trace headers name, when they name the host and all
        its files agree on it: which machine database entry describes the machine it was
        measured on. None when unknown or when merged from several (`mixed_machines`)."""
        pairs = self._machines()
        host, cpu = pairs[0]
        return (host, cpu) if len(pairs) == 1 and host else None

    @property
    def mixed_machines(self) -> str | None:
        """When its files were measured on several machines, one sentence naming them (the
        reason no single machine's data, cache or BSP parameters, apply); None otherwise."""
        pairs = self._machines()
        if len(pairs) == 1:
            return None
        names = ", ".join(f"{host or 'unknown host'} ({cpu})" for host, cpu in pairs)
        return f"the merged data come from {len(pairs)} machines: {names}"

    def _machines(self) -> list[tuple[str | None, str]]:
        """The distinct (host, CPU model) pairs of its files, in file order."""
        return list(dict.fromkeys((h.get("host"), h.get("cpu", "unknown")) for h in self.headers))

    @property
    def column_names(self) -> tuple[str, ...]:
        """Column names in table order."""
        return tuple(self.columns)

    @property
    def measured_columns(self) -> tuple[str, ...]:
        """The columns that each record measures, which are not program variables: `time`,
        `rank`, `thread`, and what its trace declares after the variables of the trace's own
        formula (the MPI and PUB columns, hardware counters). A formula cannot use them as
        variables (the pragma side refuses them too)."""
        from cll_grammar.columns import RECORD_COLUMNS
        from cll_grammar.formula import FormulaError, parse_formula
        try:
            variables = parse_formula(self.header["formula"]).variables
        except (KeyError, FormulaError):
            variables = ()
        declared = [*RECORD_COLUMNS, *self.header.get("columns", "").split()]
        return tuple(c for c in dict.fromkeys(declared) if c in self.columns and c not in variables)

    @property
    def variable_columns(self) -> tuple[str, ...]:
        """The columns a formula may take as variables, in table order: every column but the
        measured_columns and the record's own (`time`, `rank`, `thread`), even where the
        experiment's formula names one of those."""
        from cll_grammar.columns import RECORD_COLUMNS
        measured = {*RECORD_COLUMNS, *self.measured_columns}
        return tuple(c for c in self.columns if c not in measured)

    def replace(self, **changes) -> "Experiment":
        """A copy with some fields changed (name, formula, columns, origin, header, working_set,
        ids, sources); new columns without new ids are records of unknown identity."""
        if "columns" in changes:
            changes.setdefault("ids", None)
        return replace(self, **changes)

    def select(self, mask: np.ndarray) -> "Experiment":
        """The records where the boolean `mask` is true; of an experiment merged from several
        files, each file's count is what it keeps, and a file that keeps none is no longer
        one of its sources (one left: the experiment is that file's)."""
        mask = np.asarray(mask, dtype=bool)
        chosen = self.replace(columns={k: v[mask] for k, v in self.columns.items()},
                              ids=None if self.ids is None else self.ids[mask])
        counts = [s.records for s in self.sources]
        if not counts or sum(counts) != len(mask):      # the files' records are not in file order
            return chosen
        kept = [replace(s, records=int(part.sum())) for s, part in zip(self.sources, np.split(mask, np.cumsum(counts)[:-1]))]
        kept = [s for s in kept if s.records]
        if len(kept) > 1:
            return chosen.replace(sources=tuple(kept), origin=", ".join(dict.fromkeys(s.origin for s in kept)))
        if kept:
            return chosen.replace(sources=(), origin=kept[0].origin, header=kept[0].header)
        return chosen

    def with_column(self, name: str, values) -> "Experiment":
        """A copy with column `name` added or replaced (a scalar is broadcast); replacing
        `time` makes it no longer the measured wall time."""
        cols = dict(self.columns)
        cols[name] = np.broadcast_to(np.asarray(values, dtype=float), (len(self),)).copy()
        return self.replace(columns=cols, ids=self.ids, wall_time=self.wall_time and name != "time")

    def identify(self) -> "Experiment":
        """A copy whose records have ids: a hash of the run (the experiment's name and
        columns, and the trace header's `execution` of an MPI or PUB program, which every
        file of one execution shares, else the whole header: program, command, date, host,
        ...), the record's values and how many equal records came before it. A copy of a
        trace, and a `.rank<r>` file holding records the gathered trace holds too, give the
        same ids for the same records; another run's records do not."""
        run = self.header["execution"] if "execution" in self.header else sorted(self.header.items())
        digest = hashlib.blake2b(repr((self.name, run, self.column_names)).encode(), digest_size=8)
        ids = np.full(len(self), int.from_bytes(digest.digest(), "little"), dtype=np.uint64)
        for values in self.columns.values():
            ids = _mix(ids ^ np.ascontiguousarray(values, dtype=float).view(np.uint64))
        order = np.argsort(ids, kind="stable")
        first = np.r_[True, ids[order][1:] != ids[order][:-1]]
        starts = np.flatnonzero(first)
        repeat = np.empty(len(self), dtype=np.uint64)
        repeat[order] = np.arange(len(self)) - np.repeat(starts, np.diff(np.r_[starts, len(self)]))
        return self.replace(ids=_mix(ids ^ _mix(repeat + np.uint64(1))))


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on each uint64: every input bit moves every output bit, so the
    per-column xor of `identify` hashes records, not just sums their bits."""
    with np.errstate(over="ignore"):
        values = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        values = (values ^ (values >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return values ^ (values >> np.uint64(31))


class NoWorkingSet(ValueError):
    """`working_set_bytes` cannot answer: the experiment states no working set, or the points
    lack a variable it needs; the message says which."""


def working_set_bytes(experiment, points: Mapping[str, np.ndarray]) -> np.ndarray:
    """The working set in bytes of `experiment` (an Experiment, or a Model fitted on one) at
    each point (`points`: variable name -> equal-length arrays, e.g. a model's sample points
    or the values of a prediction), in real arithmetic: where a memory-bound cost crosses
    cache levels. NoWorkingSet when it has none or `points` lacks a variable it needs."""
    if experiment.working_set is None:
        raise NoWorkingSet(f"{experiment.name} states no working set (the 'bytes' clause of its "
                           f"'#pragma cll' line)")
    working_set = parse_working_set(experiment.working_set)
    missing = [v for v in working_set.variables if v not in points]
    if missing:
        raise NoWorkingSet(f"the working set of {experiment.name} ({working_set}) needs "
                           f"{', '.join(missing)}, which the points lack (a model's sample points hold only the "
                           f"formula's variables; a variable of the working set that takes one value in every "
                           f"record is replaced by it, so fit a subset where it does, e.g. `where {missing[0]} == ...`)")
    return working_set.bytes_at({k: np.asarray(v, dtype=float) for k, v in points.items()})
