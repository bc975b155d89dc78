"""`benchmarks/accuracy`: fit every case with every tool and print the table (see
benchmarks/README.md)."""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from .catalogue import sample_cases, synthetic_cases
from .evaluate import extrap_rows, llac_rows
from .extrap_tool import ExtrapUnavailable, venv_python
from .report import table, targets


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 with one message when Extra-P cannot be set up."""
    parser = argparse.ArgumentParser(prog="benchmarks/accuracy", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few small cases and one Extra-P fit (for CI, well under 3 minutes)")
    parser.add_argument("--no-extrap", action="store_true", help="compare the llac variants only")
    parser.add_argument("--output", type=Path, help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    start, load = time.perf_counter(), os.getloadavg()[0]
    try:
        python = None if args.no_extrap else venv_python()
    except ExtrapUnavailable as error:
        print(f"benchmarks/accuracy: {error} (use --no-extrap to compare the llac variants only)",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="accuracy-") as tmp:
        cases, notes = sample_cases(Path(tmp), quick=args.quick)
    cases = synthetic_cases(quick=args.quick) + cases
    rows = []
    for i, case in enumerate(cases):
        rows += llac_rows(case)
        if python and (i == 0 or not args.quick):
            rows += extrap_rows(case, python, modelers=["Default"] if args.quick else None)
    report = "\n".join([
        f"Accuracy on {platform.node()} ({platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.2f} at the start), "
        f"{time.strftime('%Y-%m-%d %H:%M')}, "
        f"{'quick' if args.quick else 'full'} run; errors are relative, on the held-out points.", "",
        table(rows), "", "Targets (issue 5):", *(f"- {line}" for line in targets(rows)),
        *(f"- note: {n}" for n in notes), "", f"({time.perf_counter() - start:.0f} s)"])
    print(report)
    if args.output:
        args.output.write_text(report + "\n")
    return 0
