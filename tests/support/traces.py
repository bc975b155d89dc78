"""Trace files for the llac interpreter tests, written as text per docs/trace-format.md.

Holds no tests; the test_llac_*, test_session* and test_repl* modules import it.
"""
import numpy as np

SIZES = (16, 32, 64, 128, 256, 512, 1024, 2048)


def trace_text(experiments, complete=True, program="matinit", procs=1):
    """A version-1 trace; `experiments` maps name -> (formula, variables, records) where each
    record is (time, *variable values)."""
    lines = ["#cll-trace 1", f"#program: {program}", f"#procs: {procs}", "#status: complete"]
    for name, (formula, variables, records) in experiments.items():
        lines += [f"#experiment: {name}", f"#  formula: {formula}",
                  f"#  columns: rank thread time {' '.join(variables)}", f"#  records: {len(records)}"]
    lines.append("#data")
    for name, (_, _, records) in experiments.items():
        lines += [f"{name} 0 0 " + " ".join(repr(float(v)) for v in record) for record in records]
    if complete:
        lines.append("#end")
    return "\n".join(lines) + "\n"


def matinit_records(slow_from=512, repeats=3, seed=1):
    """colinit-like times: a*N² with a cache step at `slow_from`; rowinit: plain a*N²."""
    rng = np.random.default_rng(seed)
    col, row = [], []
    for n in SIZES:
        for _ in range(repeats):
            a = 2e-9 if n < slow_from else 8e-9
            col.append(((1e-6 + a * n * n) * (1 + 0.005 * rng.standard_normal()), n))
            row.append(((1e-6 + 2e-9 * n * n) * (1 + 0.005 * rng.standard_normal()), n))
    return col, row


def write_matinit(path, complete=True, **kwargs):
    """Write a two-experiment (colinit, rowinit) trace to `path` and return the path."""
    col, row = matinit_records(**kwargs)
    path.write_text(trace_text({
        "colinit": ("colinit[0] + colinit[1]*N*N", ["N"], col),
        "rowinit": ("rowinit[0] + rowinit[1]*N*N", ["N"], row)}, complete))
    return path
