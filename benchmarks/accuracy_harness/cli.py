"""`benchmarks/accuracy`: fit every case with every tool and print the table, run the noise
mode, and judge issue 5's and issue 10's targets (see benchmarks/README.md)."""
from __future__ import annotations

import argparse
import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from call.probe import available_memory
from cll_grammar.machinedb import ENVIRONMENT_VARIABLE

from .catalogue import (HELDOUT_KERNELS, HELDOUT_SAMPLES, KERNEL_SAMPLES, QUICK_SAMPLES, SAMPLES, program_cases,
                        synthetic_cases)
from .evaluate import extrap_rows, llac_rows
from .extrap_tool import ExtrapUnavailable, venv_python
from .noise import noise_mode
from .report import noise_table, swing_table, table, targets, targets10
from .stability import swings

PARTS = ("synthetic", "samples", "kernels", "heldout", "noise")
HELDOUT_HEADING = "kernels, held out (session 34)"
HELDOUT_CASE = HELDOUT_KERNELS.name + "/"     # how their cases' names begin
PROBE_LARGEST = 2 * 1024 ** 3    # bytes: the machine-aware prediction's mountain reaches this far


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, with `parts` the set of parts to run."""
    parser = argparse.ArgumentParser(prog="benchmarks/accuracy", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few small cases, one Extra-P fit and 2 loaded runs of a tiny noise "
                             "kernel (for CI, well under 2 minutes)")
    parser.add_argument("--only", action="append", choices=PARTS,
                        help="run only this part (repeatable); default: all")
    parser.add_argument("--noise", action="store_true", help="the noise mode only (--only noise)")
    parser.add_argument("--runs", type=int, default=2,
                        help="runs of every real program (default 2; --quick: 1)")
    parser.add_argument("--loaded-runs", type=int, default=20,
                        help="loaded runs per noise kernel (default 20; --quick: 2)")
    parser.add_argument("--no-extrap", action="store_true", help="compare the llac variants only")
    parser.add_argument("--output", type=Path, help="also write the report (markdown) here")
    parser.add_argument("--traces", type=Path, metavar="DIR",
                        help="keep the real programs' traces in DIR, and the probe of the machine-aware "
                             "predictions (DIR/machines.sqlite); a run whose traces DIR already holds is "
                             "re-fitted, not run again, with the probe kept there (two fitting methods, "
                             "same measurements)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.loaded_runs < 1:
        parser.error("--runs and --loaded-runs must be at least 1")
    args.parts = set(args.only or ()) | ({"noise"} if args.noise else set()) or set(PARTS)
    if args.quick:
        args.parts -= {"kernels", "heldout"}
        args.runs, args.loaded_runs = 1, 2
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 with one message when Extra-P cannot be set up, 130
    on Ctrl-C (the background load is stopped either way)."""
    args = arguments(argv)
    start, load = time.perf_counter(), os.getloadavg()[0]
    try:
        python = None if args.no_extrap or args.parts == {"noise"} else venv_python()
    except ExtrapUnavailable as error:
        print(f"benchmarks/accuracy: {error} (use --no-extrap to compare the llac variants only)",
              file=sys.stderr)
        return 1
    try:
        report = run(args, python)
    except KeyboardInterrupt:
        print("benchmarks/accuracy: interrupted (the background load is stopped)", file=sys.stderr)
        return 130
    report = "\n".join([
        f"Accuracy on {platform.node()} ({platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.2f} at the start), "
        f"{time.strftime('%Y-%m-%d %H:%M')}, {'quick' if args.quick else 'full'} run "
        f"({', '.join(p for p in PARTS if p in args.parts)}); errors are relative, on the held-out "
        f"points; real programs: " + ("1 run." if args.runs == 1 else f"{args.runs} runs (figures `run 1 / run 2`)."),
        "", *report, "", f"({time.perf_counter() - start:.0f} s)"])
    print(report)
    if args.output:
        args.output.write_text(report + "\n")
    return 0


@contextlib.contextmanager
def probed_machine(wanted: bool, keep: Path | None = None) -> Iterator[list[str]]:
    """While open, llac's machine database is one holding a fresh `call probe` (full) of this
    machine, its memory mountain measured up to PROBE_LARGEST (the kernels' largest held-out
    working sets, 1.5 GB, lie below it) or half the available memory, so that the kernels (and
    the held-out ones), which state their working sets, get llac's machine-aware prediction.
    The database is temporary, or `keep` (the folder of kept traces' machines.sqlite): there a
    database already made is used again, not probed anew, so that a re-fit of kept traces
    compares two fitting methods on the same probe too. Yields notes for the report: why there
    is no probe when it fails (the database then stays empty, and each kernel's
    machine-aware row says why it has none). Nothing is probed unless `wanted`."""
    if not wanted:
        yield []
        return
    with tempfile.TemporaryDirectory(prefix="accuracy-machine-") as tmp:
        database = keep / "machines.sqlite" if keep else Path(tmp) / "machines.sqlite"
        reused = database.exists()
        notes = [f"the machine database of the kept traces, {database}, was used again (not probed anew)"
                 ] if reused else _probe(database)
        before = os.environ.get(ENVIRONMENT_VARIABLE)
        os.environ[ENVIRONMENT_VARIABLE] = str(database)   # even empty: never the user's database
        try:
            yield notes
        finally:
            if before is None:
                del os.environ[ENVIRONMENT_VARIABLE]
            else:
                os.environ[ENVIRONMENT_VARIABLE] = before
            if notes and not reused:
                database.unlink(missing_ok=True)    # a failed probe is not kept for the next run


def _probe(database: Path) -> list[str]:
    """Probe this machine (the full `call probe`) into `database`; a note when it fails (the
    end of what it said)."""
    available = available_memory()
    largest = min(PROBE_LARGEST, available // 2) if available else PROBE_LARGEST
    database.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "call", "probe", "--db", str(database),
                           "--largest", str(largest)], capture_output=True, text=True)
    if not done.returncode:
        return []
    return [f"call probe failed, no machine-aware predictions: {done.stderr.strip()[-300:]}"]


def run_to_run(rows: list) -> list[str]:
    """The report's lines on how far the held-out points' measured times and each tool's
    predictions moved between the runs of each real program (none with one run)."""
    changes = swings(rows)
    if not changes:
        return []
    return ["Run to run: the median change |run 1 - run 2| / min at the held-out points, of the measured "
            "times and of each tool's predictions (issue 10: the predictions should move no more than "
            "the measurements):", "", swing_table(changes), ""]


def run(args: argparse.Namespace, python: Path | None) -> list[str]:
    """The report's lines for the parts in `args.parts`. The held-out kernels have a table of
    their own and are left out of the targets, which keep the cases they were set on."""
    programs = ((QUICK_SAMPLES if args.quick else SAMPLES) if "samples" in args.parts else []) + \
        (KERNEL_SAMPLES if "kernels" in args.parts else []) + (HELDOUT_SAMPLES if "heldout" in args.parts else [])
    with probed_machine(bool({"kernels", "heldout"} & args.parts), args.traces) as notes:
        with tempfile.TemporaryDirectory(prefix="accuracy-") as tmp:
            real, run_notes = program_cases(programs, args.traces or Path(tmp) / "programs", args.runs,
                                            reuse=args.traces is not None)
            noise_results, co_runner = (noise_mode(Path(tmp) / "noise", args.loaded_runs, args.quick)
                                        if "noise" in args.parts else ([], []))
        cases = (synthetic_cases(quick=args.quick) if "synthetic" in args.parts else []) + real
        rows = []
        for i, case in enumerate(cases):
            rows += llac_rows(case)
            if python and (i == 0 or not args.quick):
                rows += extrap_rows(case, python, modelers=["Default"] if args.quick else None)
    notes = notes + run_notes
    heldout = [r for r in rows if r.case.startswith(HELDOUT_CASE)]
    rows = [r for r in rows if not r.case.startswith(HELDOUT_CASE)]
    lines = [table(rows), ""] if rows else []
    lines += run_to_run(rows)
    if heldout:
        lines += [f"{HELDOUT_HEADING}, not in the targets below:", "", table(heldout), "", *run_to_run(heldout)]
    if "noise" in args.parts:
        lines += ["Noise mode: llac (defaults) fitted on each loaded run, error at about 4x beyond "
                  "against the run without load:", "", noise_table(noise_results), "",
                  *(f"- mid-sweep co-runner: {line}" for line in co_runner), *([""] if co_runner else [])]
    issue5 = targets(rows)
    lines += (["Targets (issue 5):", *(f"- {line}" for line in issue5), ""] if issue5 else [])
    noise = {(c.name, c.run): c.noise for c in real}
    lines += ["Targets (issue 10, reported, never asserted):",
              *(f"- {line}" for line in targets10(rows, noise, noise_results)),
              *(f"- note: {n}" for n in notes)]
    return lines
