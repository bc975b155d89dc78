"""The `machine` command: the machine database as tables and plots (list, show, compare,
mountain, bsp, export, import). What the figures mean: docs/machine.md."""
from __future__ import annotations

from pathlib import Path

from cll_grammar.machine import far_knees
from llac import ast
from llac.commands import command
from llac.commands.data import refuse_overwrite
from llac.commands.modeling import save_figure
from llac.commands.results import Note, Percent, Table, Text
from llac.errors import LlacError
from llac.machines import (MEMORY, access_cost, export_machine, import_machine, level_edges, no_bsp,
                           open_machines, resolve)

NANO = 1e9
READ_STRIDES = (8, 64)         # sequential doubles, one cache line apart
# the random curves (at the line size): access kind, name in tables and charts
RANDOM_CURVES = (("chase", "random chase"), ("gather", "random gather"))


@command("machine", "machine list | show [M] | compare M1 M2 | mountain [M] | bsp [M] | "
         'export M "FILE" [replace] | import "FILE"  (mountain and bsp: [to "FILE" [replace]])',
         """The machine database that `call probe` fills (one SQLite file:
         $LLAC_MACHINE_DB, else $XDG_DATA_HOME/llac/machines.sqlite, else
         ~/.local/share/llac/machines.sqlite). `list`: the machines
         and their probe runs. `show`: one probe run: caches (reported by the system and
         measured at the knees), the cost of an access in each cache level and in memory
         (sequential reads and writes, a random pointer chase of dependent loads and a
         random gather of independent ones), basic operations, BSP's
         g and L per P (each level costed at the largest working set the probe
         measured within half its size, as call probe's summary is). `compare`: two machines (or
         two runs) side by side with their ratio, a note naming the parts one of them lacks. `mountain` and `bsp` plot the memory mountain (reads and
         writes at each stride, the random chase and gather) and g and L against P, on log axes;
         `to "FILE.txt"` or `to "FILE.html"` saves the figure instead (an existing file is kept
         unless `replace` follows its name). `export`/`import` carry a machine to another database as JSON. M is a
         machine's name (its latest full probe run without a label), NAME@LABEL (its latest run
         with that `--label`) or NAME@ID; without M, this machine. `export` takes a machine's
         name: it writes all its runs.""",
         ["machine list", "machine show", "machine compare vm vm@loaded", "machine mountain vm",
          'machine bsp vm to "bsp.html" replace',
          'machine export vm "vm.json"', 'machine import "vm.json"'], ast.Machine)
def machine(session, statement: ast.Machine):
    references = [n.text for n in statement.names]
    with open_machines(create=statement.action == "import") as db:
        if statement.action == "list":
            return _list(db)
        if statement.action == "import":
            name, added, skipped = import_machine(db, Path(statement.path))
            return [Note(f"machine {name}: {added} probe run(s) imported"
                         + (f", {skipped} already there" if skipped else "") + f" (into {db.path})")]
        if statement.action == "export":
            refuse_overwrite(statement.path, statement.replace, f'machine export {references[0]} "{statement.path}"')
            count = export_machine(db, references[0], Path(statement.path))
            return [Note(f"wrote {statement.path} (machine {references[0]}, {count} probe run(s))")]
        runs = [resolve(db, r) for r in references] or [resolve(db, None)]
        others = [r for r in db.runs(runs[0][0]) if r.run_id != runs[0][1].run_id]
    if statement.action == "compare":
        return [_compare(*runs)]
    name, run = runs[0]
    if statement.action in ("mountain", "bsp"):
        from llac.plot import text_page
        chart = (_mountain_chart if statement.action == "mountain" else _bsp_chart)(name, run)
        if statement.path is None:
            return [Text(chart)]
        what = f"the {'memory mountain' if statement.action == 'mountain' else 'BSP parameters'} of {name}@{run.run_id}"
        return [save_figure(statement, f"machine {statement.action}", what, lambda: chart,
                            lambda: text_page(what, chart))]
    return _show(name, run, others)


def _list(db) -> list:
    """One row per machine."""
    rows = tuple((name, host, cpu, runs, latest or "")
                 for name, host, cpu, runs, latest in db.machines())
    if not rows:
        return [Note(f"no machine in {db.path} yet; `call probe` measures this one")]
    return [Table(f"machines in {db.path}", ("name", "host", "cpu", "probe runs", "latest"), rows)]


def _title(name: str, run) -> str:
    """`vm@3 (AMD EPYC, host vm): full probe of 2026-11-23T21:00:00Z`."""
    kind = "quick" if run.quick else "full"
    label = f", label {run.label}" if run.label else ""
    took = f", {run.seconds:.0f} s" if run.seconds else ""
    return f"{name}@{run.run_id} ({run.cpu_model}, host {run.host}): {kind} probe of {run.date}{label}{took}"


def _show(name: str, run, others) -> list:
    """The whole probe run as tables."""
    results = [Note(_title(name, run))]
    if others:
        results.append(Note("other runs: " + ", ".join(
            f"{name}@{r.run_id}{' (' + r.label + ')' if r.label else ''} {r.date[:10]}" for r in others)))
    if run.caches:
        results.append(Table("caches (bytes): reported by the system, measured at the mountain's knees",
                             ("level", "kind", "reported", "measured", "line"),
                             tuple((c.level, c.kind, c.reported_bytes, c.measured_bytes or None, c.line_bytes)
                                   for c in run.caches), tuple(far_knees(run.caches))))
    if run.mountain:
        results.append(_level_table(run))
    if run.operations:
        results.append(Table("operations (ns each)", ("operation", "ns", "spread"),
                             tuple((o.name, o.seconds * NANO, _percent(o.spread)) for o in run.operations)))
    if run.bsp:
        results.append(Table("BSP parameters: g in ns per byte of an h-relation, L (MPI_Barrier) and "
                             "bsp_sync (the PUB library's) in µs per empty superstep",
                             ("P", "messages", "g", "g spread", "L", "L spread", "bsp_sync", "bsp_sync spread"),
                             tuple((b.procs, b.message, b.g * NANO, _percent(b.g_spread), b.L * 1e6,
                                    _percent(b.L_spread), *_sync_figures(b)) for b in run.bsp),
                             () if all(b.L_sync for b in run.bsp) else
                             ("bsp_sync: not measured by this probe run (an older call probe)",)))
    return results


def _level_sets(run) -> list[tuple[str, float]]:
    """A working set inside each data cache and one in memory, with the level's name: the
    largest working set the probe measured within half the level's size (half the size where
    it measured none), as `call probe`'s summary takes it, and the largest it measured."""
    measured = sorted({p.working_set for p in run.mountain})
    def inside(size):
        below = [w for w in measured if w <= size / 2]
        return below[-1] if below else size / 2
    return [(label, inside(size)) for label, size in level_edges(run)] + [(MEMORY, measured[-1])]


def _level_table(run) -> Table:
    """ns per access in each level, reads at stride 8 and 64 bytes, writes at 8, the random
    chase and the random gather (`-` for a run probed before they were)."""
    rows = tuple((label, int(ws), *(float(access_cost(run, ws, s)) * NANO for s in READ_STRIDES),
                  float(access_cost(run, ws, 8, "write")) * NANO,
                  *(_random_ns(run, ws, kind) for kind, _ in RANDOM_CURVES))
                 for label, ws in _level_sets(run))
    return Table("memory: ns per access (from the mountain)",
                 ("level", "working set", "read, stride 8", "read, stride 64", "write, stride 8",
                  *(name for _, name in RANDOM_CURVES)), rows)


def _random_line(run, kind: str) -> int | None:
    """The line size the run's random curve `kind` (chase, gather) went by, None when it has
    no such curve."""
    return next((p.stride for p in run.mountain if p.access == kind), None)


def _random_ns(run, working_set, kind: str) -> float | None:
    """ns per access of the random curve `kind` at `working_set`, None when the run has no
    such curve."""
    line = _random_line(run, kind)
    return None if line is None else float(access_cost(run, working_set, line, kind)) * NANO


def _compare(first, second) -> Table:
    """Figures of two runs side by side with second/first."""
    (name_a, a), (name_b, b) = first, second
    rows = []
    levels = a if level_edges(a) or not level_edges(b) else b      # the same rows in either order
    for label, ws in _level_sets(levels) if a.mountain and b.mountain else ():
        for access, stride in (*(("read", s) for s in READ_STRIDES), ("write", 8)):   # as `machine show`
            x, y = (float(access_cost(r, ws, stride, access)) * NANO for r in (a, b))
            rows.append((f"{access} {label} ({int(ws)} B), stride {stride}, ns", x, y, y / x))
        for kind, name in RANDOM_CURVES:
            x, y = _random_ns(a, ws, kind), _random_ns(b, ws, kind)
            if x and y:
                rows.append((f"{name} {label} ({int(ws)} B), ns", x, y, y / x))
    b_ops = {o.name: o.seconds for o in b.operations}
    rows += [(f"{o.name}, ns", o.seconds * NANO, b_ops[o.name] * NANO, b_ops[o.name] / o.seconds)
             for o in a.operations if o.name in b_ops and o.seconds > 0]
    b_bsp = {(p.procs, p.message): p for p in b.bsp}
    for p in a.bsp:
        q = b_bsp.get((p.procs, p.message))
        if q:
            rows.append((f"g P={p.procs} {p.message}, ns/byte", p.g * NANO, q.g * NANO, q.g / p.g))
            if p.message == "large":         # L and bsp_sync: one figure per P, stored with each message size
                rows.append((f"L P={p.procs}, µs", p.L * 1e6, q.L * 1e6, q.L / p.L))
                if p.L_sync and q.L_sync:
                    rows.append((f"bsp_sync P={p.procs}, µs", p.L_sync * 1e6, q.L_sync * 1e6, q.L_sync / p.L_sync))
    if not rows:
        raise LlacError(f"{name_a} and {name_b} have no figure in common to compare")
    a_tag, b_tag = f"{name_a}@{a.run_id}", f"{name_b}@{b.run_id}"
    return Table(f"{a_tag} ({a.date[:10]}) against {b_tag} ({b.date[:10]})",
                 ("figure", a_tag, b_tag, "ratio"), tuple(rows),
                 tuple(_lacking(a_tag, a, b) + _lacking(b_tag, b, a)))


def _lacking(tag: str, run, other) -> list[str]:
    """One line per part of the probe that `other` has and `run` lacks (its rows are then left
    out of the comparison): a run probed without --procs has no BSP parameters, one probed by
    an older llac no random curves."""
    parts = [("memory mountain", lambda r: bool(r.mountain)),
             ("cache levels", lambda r: bool(level_edges(r))),
             *((f"{name} curve", lambda r, kind=kind: _random_line(r, kind) is not None)
               for kind, name in RANDOM_CURVES),
             ("basic operations", lambda r: any(o.seconds > 0 for o in r.operations)),
             ("BSP parameters (g, L: call probe --procs)", lambda r: bool(r.bsp))]
    said = [f"no {what}" for what, has in parts if has(other) and not has(run)]
    if not said:
        return []
    listed = ", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]
    return [f"{tag} has {listed}: those rows are left out"]


def _mountain_chart(name: str, run) -> str:
    """Read and write cost per access against the working set (log axes), one line per
    access and stride, and the random chase's and gather's where the run has them."""
    from llac.plot import line_chart
    if not run.mountain:
        raise LlacError(f"{name}@{run.run_id} has no memory mountain")
    sizes = sorted({p.working_set for p in run.mountain if p.access == "read"})
    series = {f"{access}, stride {s} B": [float(access_cost(run, ws, s, access)) * NANO for ws in sizes]
              for access in ("read", "write")
              for s in sorted({p.stride for p in run.mountain if p.access == access})}
    for kind, curve in RANDOM_CURVES:
        line = _random_line(run, kind)
        if line:
            series[f"{curve}, {line} B lines"] = [_random_ns(run, ws, kind) for ws in sizes]
    edges = ", ".join(f"{label} {size // 1024} KiB" for label, size in level_edges(run))
    return line_chart(f"memory mountain of {name}@{run.run_id}: ns per access", sizes, series,
                      f"working set, bytes ({edges})", log_x=True, log_y=True)


def _bsp_chart(name: str, run) -> str:
    """g (small and large messages) and L against P, on log axes: small messages' g (tens of
    ns a byte), large ones' (tenths) and L (µs) span five orders of magnitude, and on a linear
    axis the large messages' g lay flat on 0."""
    from llac.plot import line_chart
    if not run.bsp:
        raise no_bsp(name, run)
    procs = sorted({p.procs for p in run.bsp})
    found = {(p.procs, p.message): p for p in run.bsp}
    series = {f"g {m}, ns/byte": [found[(q, m)].g * NANO if (q, m) in found else float("nan")
                                  for q in procs] for m in ("small", "large")}
    series["L, µs"] = [min(p.L for p in run.bsp if p.procs == q) * 1e6 for q in procs]
    if all(p.L_sync for p in run.bsp):
        series["bsp_sync, µs"] = [min(p.L_sync for p in run.bsp if p.procs == q) * 1e6 for q in procs]
    return line_chart(f"BSP parameters of {name}@{run.run_id} by P", procs, series, "P",
                      log_x=True, log_y=True)


def _sync_figures(point) -> tuple:
    """The PUB library's empty superstep in µs and its spread; none in runs probed before it."""
    return (None, _percent(float("nan"))) if point.L_sync is None else \
        (point.L_sync * 1e6, _percent(point.L_sync_spread))     # NaN: the column keeps its ' %' name


def _percent(spread: float) -> Percent:
    """A spread, shown as a percentage."""
    return Percent(spread, 1)

