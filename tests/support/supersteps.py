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


def step_line(row, run: int = 1) -> str:
    """One `@step` record of `run` (rows of ten values, or twelve with messages counted, carry
    their own run first)."""
    row = row if len(row) in (10, 12) else (run, *row)
    return "@step " + " ".join(repr(v) if isinstance(v, float) else str(v) for v in row)


def write_pub_trace(path, rows, procs=2, program="fig1", host="node1", cpu="Test CPU 9000",
                    declare=True, extra=(), counted=False) -> None:
    """A PUB trace with these superstep rows (and `extra` raw record lines), its header
    declaring the superstep columns unless `declare` is False: with `counted`, those that
    count messages (msgs_in msgs_out after out), else those of the traces before them."""
    columns = "run rank machine step sync W in out msgs_in msgs_out end partners" if counted else \
        "run rank machine step sync W in out end partners"
    declaration = f"#supersteps: {columns}\n" if declare else ""
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


MPI_ZEROS = "0 0 0 0 0 0 0"      # the seven MPI columns of a record that moved nothing


def figure1_sweep(sizes, reps=2, g=G, L=L, unit=1e-7, slow=(), offset=0):
    """The runs of Figure 1 at each size N, `reps` times (runs numbered in that order): w =
    unit·(N - offset) (`unit` may be a function of N: seconds per unit at that size), exchanges of
    8·N bytes, and a last superstep ending in `end` after 0.1 w; every END simulated by formula
    (2), so that OBSP* is exact. A run whose number is in `slow` is 1.5 times slower everywhere
    (a disturbed repetition). Returns (step rows with their run, f records)."""
    rows, records, run = [], [], 0
    for N in sizes:
        for _ in range(reps):
            run += 1
            w, h = (unit(N) if callable(unit) else unit) * (N - offset) * (1.5 if run in slow else 1), 8 * N
            c = g * h + L
            ends = [(w + c, 2 * w + c), (3 * w + 2 * c, 3 * w + 2 * c)]
            rows += [(run, 0, "0", 1, "obl", w, 0, h, ends[0][0], "-"),
                     (run, 1, "0", 1, "obl", 2 * w, h, 0, ends[0][1], "0"),
                     (run, 0, "0", 2, "obl", 2 * w, h, 0, ends[1][0], "1"),
                     (run, 1, "0", 2, "obl", w, 0, h, ends[1][1], "-"),
                     *((run, r, "0", 3, "end", w / 10, 0, 0, ends[1][r] + w / 10, "-") for r in (0, 1))]
            records += [f"f {r} 0 {ends[1][r] + w / 10!r} {float(N)!r} 2.0 {MPI_ZEROS} {run}" for r in (0, 1)]
    return rows, records


def write_sweep_trace(path, rows, records, procs=2, program="fig1", runs_of="f") -> None:
    """A PUB trace of a sweep: the `sync` experiment f (formula f[0] + f[1]*N) with its run
    column, and these superstep rows; the header names `runs_of` as the runs' experiment."""
    path.write_text(
        f"#cll-trace 1\n#program: {program}\n#host: node1\n#cpu: Test CPU 9000\n#parallel: PUB\n"
        f"#procs: {procs}\n#cores: 2\n#status: complete\n"
        f"#supersteps: run rank machine step sync W in out end partners\n#superstep_runs: {runs_of}\n"
        f"#experiment: f\n#  formula: f[0] + f[1]*N\n#  source: fig1.c:1:1\n"
        f"#  columns: rank thread time N P msgs_sent bytes_sent msgs_recv bytes_recv partners h mpi_time run\n"
        f"#  records: {len(records)}\n#data\n" + "\n".join([*records, *map(step_line, rows)]) + "\n#end\n")
