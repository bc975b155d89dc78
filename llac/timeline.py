"""The per-processor superstep timeline of one PUB run (the CALL paper's Figure 1): one row per
processor, time since the run began on the x axis, each superstep drawn as its computation W,
then the rest up to its end split into waiting and communication, a `|` where it ends, and the
subgroups of bsp_partition marked under the rows (docs/parallel-analysis.md, "Timeline").

The same drawing serves the measured run (each superstep ends at its END) and the OBSP* model
(it ends at Φ, `llac.obsp.Evaluation.phi`); the communication is the model's g·h + L of that
processor and superstep (`Evaluation.comm`), at most the time left after W, and waiting is the
rest, which comes first: a processor waits for its partners' data, then communicates.
A superstep starts where the processor's previous one ended, or, after one that ended in
`part` or `done`, where that call began (docs/trace-format.md), so part and done cost W only.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from itertools import groupby

from llac.obsp import ROOT
from llac.plot import linear_ticks
from llac.supersteps import Step

GLYPHS = {"compute": "#", "wait": ".", "comm": "="}
NAMES = {"compute": "computation (W)", "wait": "waiting", "comm": "communication (g·h+o·m+L)"}
ANSI = {"compute": "\x1b[32m", "wait": "\x1b[33m", "comm": "\x1b[31m"}      # green, yellow, red
HTML_COLOURS = {"compute": "#2a9d3a", "wait": "#e0b000", "comm": "#c0392b"}
BOUNDARY = "|"
CALLS = ("part", "done")      # supersteps ended by bsp_partition, bsp_done: W only; the next starts at the call
UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


@dataclass(frozen=True)
class Segment:
    """A stretch of one processor's time spent on one thing: compute, wait or comm."""
    kind: str
    start: float
    stop: float


@dataclass(frozen=True)
class Row:
    """One processor's timeline: its segments, the ends of its supersteps (the `|` marks) and
    the subgroups it was in, as (machine id, entry time, exit time)."""
    rank: int
    segments: tuple[Segment, ...]
    boundaries: tuple[float, ...]
    groups: tuple[tuple[str, float, float], ...]


def timeline_rows(steps, ends: dict, comm: dict) -> list[Row]:
    """The rows of a run's steps (one per rank) where superstep (machine, step, rank) ends at
    `ends[...]` (the measured END or the model's Φ) and communicates for `comm[...]` seconds
    (g·h + L). The run must be consistent (`llac.obsp.evaluate` checked it)."""
    own: dict[int, dict[str, dict[int, Step]]] = {}
    for step in steps:
        own.setdefault(step.rank, {}).setdefault(step.machine, {})[step.step] = step
    return [_row(rank, list(_sequence(machines, ROOT)), ends, comm) for rank, machines in sorted(own.items())]


def _sequence(machines: dict[str, dict[int, Step]], machine: str):
    """One processor's steps in the order it made them: after a step ending in `part`, the
    steps of the next subgroup of that machine it belongs to."""
    children = iter(sorted((m for m in machines if m != ROOT and m.rsplit(".", 1)[0] == machine),
                           key=lambda m: tuple(int(p) for p in m.split("."))))
    for number in sorted(machines.get(machine, {})):
        step = machines[machine][number]
        yield step
        if step.sync == "part":
            child = next(children, None)
            if child is not None:
                yield from _sequence(machines, child)


def _row(rank: int, sequence: list[Step], ends: dict, comm: dict) -> Row:
    """A processor's segments from its steps in order (see the module's rule for starts)."""
    segments, boundaries, entered, groups = [], [], {}, []
    start, previous = 0.0, None
    for step in sequence:
        if previous is not None:
            start = previous[1] + previous[0].W if previous[0].sync in CALLS else previous[2]
        key = (step.machine, step.step, rank)
        end, ready = ends[key], start + step.W
        entered.setdefault(step.machine, start)
        segments.append(Segment("compute", start, ready))
        if step.sync not in CALLS:
            talk = min(comm.get(key, 0.0), max(end - ready, 0.0))
            segments += [Segment("wait", ready, end - talk), Segment("comm", end - talk, end)]
            boundaries.append(end)
        if step.sync == "done":
            groups.append((step.machine, entered.pop(step.machine), ready))
        previous = (step, start, end)
    return Row(rank, tuple(s for s in segments if s.stop > s.start), tuple(boundaries), tuple(groups))


@dataclass(frozen=True)
class Drawing:
    """A timeline laid out on a character grid: the title, one labelled line per processor
    (and one under it for its subgroups when the run has any), the x axis and the legend."""
    title: str
    lines: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]   # (label, ((glyph, kind), ...))
    axis: tuple[str, ...]
    legend: tuple[str, ...]

    def text(self, color: bool = False) -> str:
        """The drawing as text, in ANSI colour when `color`."""
        def run(kind, glyphs):
            return f"{ANSI[kind]}{glyphs}\x1b[0m" if color and kind in ANSI else glyphs
        body = [(label + "".join(run(*r) for r in _runs(cells))).rstrip() for label, cells in self.lines]
        return "\n".join([self.title, *body, *self.axis, *self.legend]) + "\n"

    def html(self) -> str:
        """The drawing as a web page, each kind of time in its colour."""
        def run(kind, glyphs):
            text = html.escape(glyphs)
            return f'<span style="background:{HTML_COLOURS[kind]}">{text}</span>' if kind in HTML_COLOURS else text
        body = [html.escape(label) + "".join(run(*r) for r in _runs(cells)) for label, cells in self.lines]
        title = html.escape(self.title)
        pre = "\n".join([*body, *map(html.escape, self.axis), "", *map(html.escape, self.legend)])
        return (f"<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
                "<style>pre {font-family: monospace; line-height: 1.2}</style>\n"
                f"</head>\n<body>\n<h1>{title}</h1>\n<pre>{pre}</pre>\n</body>\n</html>\n")


def _runs(cells):
    """Consecutive cells of one kind as (kind, their glyphs), to colour each stretch once."""
    return [(kind, "".join(g for g, _ in group)) for kind, group in groupby(cells, key=lambda c: c[1])]


def draw(rows: list[Row], title: str, width: int, notes=()) -> Drawing:
    """Lay the rows out in `width` characters (labels included): time 0 at the left edge, the
    latest end at the right; each cell shows what filled most of its time. When the run has
    subgroups, each processor's row has one line under it per nesting depth of bsp_partition
    (depth 1: the halves of machine 0, depth 2: their halves ...), so nested subgroups never
    overwrite each other."""
    label_width = len(f"P{max(r.rank for r in rows)}") + 1
    columns = max(width - label_width, 10)
    total = max([s.stop for r in rows for s in r.segments] + [b for r in rows for b in r.boundaries] + [0.0])
    scale = columns / total if total > 0 else 0.0
    members: dict[str, list[int]] = {}
    for row in rows:
        for machine, _, _ in row.groups:
            members.setdefault(machine, []).append(row.rank)
    depths = max((_depth(machine) for machine in members), default=0)
    lines = []
    for row in rows:
        lines.append((f"P{row.rank}".ljust(label_width), _cells(row, columns, scale)))
        lines += [(" " * label_width, _group_cells(row.groups, depth, members, columns, scale))
                  for depth in range(1, depths + 1)]
    legend = ["  ".join(f"{GLYPHS[k]} {NAMES[k]}" for k in GLYPHS) + f"  {BOUNDARY} end of a superstep"]
    if members:
        legend.append("[ID P..---] under a processor: in subgroup ID of bsp_partition (processors P..)")
        legend.append("            from entry to exit" + ("; one line per nesting depth" if depths > 1 else ""))
    return Drawing(title, tuple(lines), _axis(total, columns, label_width), (*legend, *notes))


def _cells(row: Row, columns: int, scale: float) -> tuple[tuple[str, str], ...]:
    """A processor's cells: the kind of time covering most of each, `|` where a superstep ends."""
    cover = [dict.fromkeys(GLYPHS, 0.0) for _ in range(columns)]
    for segment in row.segments:
        low, high = segment.start * scale, segment.stop * scale
        for column in range(max(int(low), 0), min(int(high) + 1, columns)):
            cover[column][segment.kind] += max(0.0, min(high, column + 1) - max(low, column))
    cells = [(GLYPHS[max(c, key=c.get)], max(c, key=c.get)) if max(c.values()) > 0 else (" ", "")
             for c in cover]
    for end in row.boundaries:
        column = min(max(int(end * scale - 1e-9), 0), columns - 1)
        cells[column] = (BOUNDARY, "")
    return tuple(cells)


def _depth(machine: str) -> int:
    """How deep a subgroup nests: 1 for machine 0's subgroups (0.0, 0.1), 2 for theirs ..."""
    return machine.count(".")


def _group_cells(groups, depth: int, members: dict, columns: int, scale: float) -> tuple[tuple[str, str], ...]:
    """One line under a processor: its subgroups of nesting `depth`, each from entry `[` to
    exit `]`, labelled inside (`_fitting`). A processor is in one subgroup of a depth at a
    time, so they never overlap."""
    line = [" "] * columns
    for machine, entry, leave in groups:
        if _depth(machine) != depth:
            continue
        first = min(int(entry * scale), columns - 1)
        last = min(max(int(leave * scale - 1e-9), first), columns - 1)
        line[first:last + 1] = ["-"] * (last + 1 - first)
        line[first], line[last] = "[", "]"
        label = _fitting(machine, _ranks(members[machine]), last - first - 1)
        line[first + 1:first + 1 + len(label)] = label
    return tuple((c, "") for c in line)


def _fitting(machine: str, ranks: str, room: int) -> str:
    """A subgroup's label in `room` characters: its id and processors ("0.1 P2,P3"), else its
    id, else the end of its id that tells it from its siblings (".1.0", ".0"), else nothing."""
    parts = machine.split(".")
    candidates = [f"{machine} {ranks}", machine, *("." + ".".join(parts[i:]) for i in range(1, len(parts)))]
    return next((c for c in candidates if len(c) <= room), "")


def _ranks(ranks) -> str:
    """Processors as `P0,P1` or, for three or more consecutive ones, `P0-P3`."""
    ranks = sorted(ranks)
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"P{ranks[0]}-P{ranks[-1]}"
    return ",".join(f"P{r}" for r in ranks)


def _axis(total: float, columns: int, indent: int) -> tuple[str, ...]:
    """The x axis: ticks at round times, labelled in a unit that suits the run's length."""
    pad = " " * indent
    if total <= 0:
        return pad + "+", pad + "0", pad + "time since the run began [s]"
    factor, unit = next(((f, u) for f, u in UNITS if total >= f), UNITS[-1])
    ticks, labels = ["-"] * columns, [" "] * columns
    for value, text in zip(*linear_ticks(0.0, total / factor, most=max(2, min(8, columns // 10)))):
        column = min(round(value * factor / total * columns), columns - 1)
        ticks[column] = "+"
        start = max(0, min(column - len(text) // 2, columns - len(text)))
        if all(c == " " for c in labels[max(start - 1, 0):start + len(text) + 1]):
            labels[start:start + len(text)] = text
    return pad + "".join(ticks), pad + "".join(labels).rstrip(), pad + f"time since the run began [{unit}]"
