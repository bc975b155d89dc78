"""Run the memory-bound kernels and print each one's time per element against its size, with
the working set (the `bytes` clause) and the cache level (as sysfs reports it) that holds it:
the cache steps a model fitted in one level does not see.

    python -m benchmarks.kernels_cache.steps [KERNEL ...] [--every K] [--keep DIR]

Each kernel is run by `call run` in a fresh folder (DIR with --keep); the time per element is
the median over the repetitions of time / (the factor of the formula's last term: N, n*n).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from cll_grammar.formula import evaluate
from cll_grammar.machine import reported_caches
from llac.experiment import working_set_bytes
from llac.tables import repetitions
from llac.trace import read_trace

HERE = Path(__file__).resolve().parent
KERNELS = ("triad", "transpose", "reduce", "chase", "histogram", "bsearch",
           "copy", "dot", "stencil", "scale", "colsum", "gather")


def run_kernel(kernel: str, folder: Path) -> Path:
    """`call run` of the kernel in `folder` (its default sizes and repetitions); its trace."""
    done = subprocess.run([sys.executable, "-m", "call", "run", str(HERE / f"{kernel}.c")],
                          cwd=folder, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{kernel}: call run failed:\n{done.stderr}")
    return folder / f"{kernel}.cll.1.dat"


def level_of(size: float, caches) -> str:
    """The smallest data cache level that holds `size` bytes, or `memory`."""
    for cache in caches:
        if size <= cache.size:
            return f"L{cache.level}"
    return "memory"


def steps_table(trace: Path, every: int = 1) -> list[str]:
    """The lines of one kernel's table: size, working set, level, ns per element."""
    experiment = next(iter(read_trace(trace).experiments.values()))
    points, _ = repetitions(experiment)
    per_element = experiment.columns["time"] / evaluate(experiment.formula.terms[-1].factor,
                                                        experiment.columns)
    caches = [c for c in reported_caches() if c.kind in ("Data", "Unified")]
    variable = experiment.formula.variables[0]
    ws = working_set_bytes(experiment, points)
    lines = [f"{experiment.name} (bytes {experiment.working_set}; caches "
             + ", ".join(f"L{c.level} {c.size >> 10} KiB" for c in caches) + ")",
             f"{variable:>9} {'working set':>12} {'level':>6} {'ns/element':>11}"]
    for i in range(0, len(ws), every):
        value = points[variable][i]
        mine = experiment.columns[variable] == value
        cost = float(np.median(per_element[mine])) * 1e9
        lines.append(f"{value:9.0f} {_size(ws[i]):>12} {level_of(ws[i], caches):>6} {cost:11.3f}")
    return lines


def _size(size: float) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.1f} KiB"


def main(argv: list[str] | None = None) -> int:
    """Run the chosen kernels (default: all) and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernels", nargs="*", help=f"some of {', '.join(KERNELS)} (default: all)")
    parser.add_argument("--every", type=int, default=1, help="print every K-th size (default 1)")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep the traces")
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels if k not in KERNELS]
    if unknown:
        parser.error(f"unknown kernel {unknown[0]!r} (the kernels: {', '.join(KERNELS)})")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for kernel in args.kernels or KERNELS:
            print("\n".join(steps_table(run_kernel(kernel, folder), args.every)) + "\n",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
