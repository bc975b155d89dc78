"""Synthetic PUB traces with a superstep section (docs/trace-format.md, "Supersteps (PUB
programs)"), for the OBSP* evaluator's tests: the CALL paper's Figure 1 and a partition."""

W = 1e-3                 # the paper's w, in seconds
H = 1000                 # bytes of one exchange
G, L = 5e-7, 5e-4        # g·H + L = w: one exchange costs w

# Figure 1: P0 computes w, P1 2w; P0's message to P1 (w) and an oblivious sync; then the
# work is inverted and P1 sends to P0. Each row: rank machine step sync W in out end partners
FIGURE1 = [(0, "0", 1, "obl", W, 0, H, 2 * W, "-"), (1, "0", 1, "obl", 2 * W, H, 0, 3 * W, "0"),
           (0, "0", 2, "obl", 2 * W, H, 0, 5 * W, "1"), (1, "0", 2, "obl", W, 0, H, 5 * W, "-")]

# Four processors split into {0,1} and {2,3} at the end of superstep 1 (docs: the example
# computed by hand, with g = 1e-6 s/byte and L = 1e-4 s)
PARTITION = [
    (0, "0", 1, "part", 4e-3, 0, 0, 7.4e-3, "-"), (1, "0", 1, "part", 3e-3, 0, 0, 6.4e-3, "-"),
    (2, "0", 1, "part", 2e-3, 0, 0, 3.6e-3, "-"), (3, "0", 1, "part", 1e-3, 0, 0, 5.6e-3, "-"),
    (0, "0.0", 1, "obl", 2e-3, 300, 100, 6.4e-3, "1"), (1, "0.0", 1, "obl", 1e-3, 100, 300, 6.4e-3, "0"),
    (0, "0.0", 2, "done", 1e-3, 0, 0, 7.4e-3, "-"), (1, "0.0", 2, "done", 0, 0, 0, 6.4e-3, "-"),
    (2, "0.1", 1, "sync", 1e-3, 0, 500, 3.6e-3, "-"), (3, "0.1", 1, "sync", 1e-3, 500, 0, 3.6e-3, "2"),
    (2, "0.1", 2, "done", 0, 0, 0, 3.6e-3, "-"), (3, "0.1", 2, "done", 2e-3, 0, 0, 5.6e-3, "-"),
    (0, "0", 2, "obl", 1e-3, 1000, 0, 9.5e-3, "3"), (1, "0", 2, "obl", 1e-3, 0, 0, 7.5e-3, "-"),
    (2, "0", 2, "obl", 1e-3, 0, 0, 4.7e-3, "-"), (3, "0", 2, "obl", 1e-3, 0, 1000, 7.7e-3, "-")]


def step_line(row) -> str:
    """One `@step` record."""
    return "@step " + " ".join(repr(v) if isinstance(v, float) else str(v) for v in row)


def write_pub_trace(path, rows, procs=2, program="fig1", host="node1", cpu="Test CPU 9000",
                    declare=True, extra=()) -> None:
    """A PUB trace with these superstep rows (and `extra` raw record lines), its header
    declaring the superstep columns unless `declare` is False."""
    declaration = "#supersteps: rank machine step sync W in out end partners\n" if declare else ""
    lines = [step_line(r) for r in rows] + list(extra)
    path.write_text(f"#cll-trace 1\n#program: {program}\n#host: {host}\n#cpu: {cpu}\n#parallel: PUB\n"
                    f"#procs: {procs}\n#status: complete\n{declaration}#data\n" + "\n".join(lines) + "\n#end\n")


def random_run(seed: int, procs: int, g: float, L: float, depth: int = 2) -> list[tuple]:
    """The superstep rows of a random PUB run on `procs` processors (seeded): 2-4 supersteps
    per machine ending in barriers, oblivious syncs (random messages) or partitions into two
    subgroups (to `depth` levels), each END simulated as the processor's wait for its
    partners' messages (or all members at a barrier) plus g·h + L."""
    import random
    rng = random.Random(seed)
    rows = []

    def machine(name, members, start, last_done):
        now, made = dict(start), 0
        count = rng.randint(2, 4)
        for step in range(1, count + 1):
            work = {r: rng.uniform(0, 1e-3) for r in members}
            ready = {r: now[r] + work[r] for r in members}
            if last_done and step == count:
                now = ready
                rows.extend((r, name, step, "done", work[r], 0, 0, now[r], "-") for r in members)
                continue
            if len(members) > 1 and len(name.split(".")) <= depth and rng.random() < 0.35:
                cut = rng.randint(1, len(members) - 1)
                now = {}
                for group in (members[:cut], members[cut:]):
                    now.update(machine(f"{name}.{made}", group, {r: ready[r] for r in group}, True))
                    made += 1
                rows.extend((r, name, step, "part", work[r], 0, 0, now[r], "-") for r in members)
                continue
            kind = rng.choice(["sync", "obl"])
            sent, got, senders = dict.fromkeys(members, 0), dict.fromkeys(members, 0), {r: [] for r in members}
            for r in members:
                for q in members:
                    if q != r and rng.random() < 0.4:
                        size = rng.randrange(1, 10000)
                        sent[r] += size
                        got[q] += size
                        senders[q].append(r)
            own = {r: max(got[r], sent[r]) for r in members}
            for r in members:
                waits_for = members if kind == "sync" else [r, *senders[r]]
                now[r] = max(ready[j] for j in waits_for) + g * max(own[j] for j in waits_for) + L
                rows.append((r, name, step, kind, work[r], got[r], sent[r], now[r],
                             ",".join(map(str, senders[r])) or "-"))
        return now

    machine("0", list(range(procs)), dict.fromkeys(range(procs), 0.0), False)
    return rows
