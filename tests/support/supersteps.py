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
