"""How one run of a `call run` sweep starts and what it leaves: the `Launch` of a built
program for one processor count (its command, environment, trace file and the records kept
when it fails), the launch of a sequential or OpenMP program, and the status a trace's
header gives. The MPI launch (call.mpirun) is another `Launch`; call.run drives either."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path

from call.stop import stop_program
from cll_grammar.spillfiles import spill_files_for


# A trace this large is worth a word on its trace line: llac loads about 10^6 records a
# second (benchmarks/llac_speed), so 10^7 records cost 10 s at every load and some 400 MB of
# memory, while a fit needs a few repetitions at each of some tens of sample points. 10^7
# records of the usual columns are about 400 MB of text; 500 MB also catches fewer, wider
# records (MPI columns). CALL_LARGE_TRACE_RECORDS sets the record count (and the size, at 50
# bytes a record) that counts as large.
LARGE_RECORDS = 10_000_000
BYTES_PER_RECORD = 50
LARGE_ENV = "CALL_LARGE_TRACE_RECORDS"


def trace_header(path: Path) -> tuple[str, dict[str, int]]:
    """The `#status:` of a trace file's header ('?' if it has none) and the `records:` count
    of each experiment it names."""
    status, records, experiment = "?", {}, None
    with path.open(encoding="utf-8", errors="replace") as text:
        for line in text:
            if line.startswith("#status: "):
                status = line[len("#status: "):].strip()
            elif line.startswith("#experiment: "):
                experiment = line[len("#experiment: "):].strip()
            elif line.startswith("#  records: ") and experiment is not None:
                count = line[len("#  records: "):].strip()
                records[experiment] = int(count) if count.isdigit() else 0
            elif line.startswith("#data"):
                break
    return status, records


def trace_status(path: Path) -> str:
    """The `#status:` of a trace file's header ('?' if it has none)."""
    return trace_header(path)[0]


def finished(path: Path) -> bool:
    """Whether the trace at `path` exists and holds a whole run: its program ended normally
    (`#status: complete`, or `exit-without-report` for a program without `report`)."""
    return path.exists() and trace_status(path) in ("complete", "exit-without-report")


def status_note(path: Path) -> str:
    """What to say after a trace's path about its status: nothing when `complete`, a calm
    word for `exit-without-report` (the runtime saving the trace at exit is a normal end,
    docs/trace-format.md: the way for a program without `report`, and every record of one
    that exits before its `report` is kept as well), the status itself otherwise; and, for a large trace,
    its size and how to make it smaller (`size_note`)."""
    state, records = trace_header(path)
    if state == "complete":
        said = ""
    elif state == "exit-without-report":
        said = (" (written at exit: the program reached no '#pragma cll report', which is a "
                "normal end; every record is in it)")
    else:
        said = f" (status: {state})"
    return said + size_note(path.stat().st_size, records)


def size_note(size: int, records: dict[str, int]) -> str:
    """For a trace of `size` bytes holding `records` (experiment -> count) beyond LARGE_RECORDS
    records or that many times BYTES_PER_RECORD bytes: its size, the experiment with the most
    records, and how to record fewer; nothing for a trace of usual size."""
    limit = _large_records()
    total = sum(records.values())
    if total <= limit and size <= limit * BYTES_PER_RECORD:
        return ""
    most = max(records, key=records.get, default=None)
    where = f", {records[most]:,} of them from {most}" if most is not None and len(records) > 1 else ""
    return (f" (large: {size / 1e6:,.1f} MB, {total:,} records{where}; every llac load reads them "
            f"all, about 10^6 a second. Fewer repetitions or sample points in the `#pragma cll for` "
            f"loops, or an experiment around a larger region, make it smaller: docs/pragma-language.md, "
            f"Sampling loops)")


def _large_records() -> int:
    """The record count from which a trace is large: LARGE_RECORDS, or $CALL_LARGE_TRACE_RECORDS."""
    try:
        return max(0, int(os.environ.get(LARGE_ENV, LARGE_RECORDS)))
    except ValueError:
        return LARGE_RECORDS


def ending(status: int) -> str:
    """How a program ended, from its exit status (negative: killed by that signal)."""
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def spilled_note(trace: Path) -> str:
    """What to say after a run that did not write `trace` but left spill files: what they hold
    and how llac reads them (docs/trace-format.md, "Spill files"); nothing without them."""
    spills = spill_files_for(trace)
    if not spills:
        return ""
    return (f"; the records it had spilled to disk are in {', '.join(spills)} (those still in its memory "
            f"were lost): llac's load \"{trace}\" reads them")


def label(count: int | None) -> str:
    """How messages name the run with `count` processors: ` (P=4)`, nothing for a sequential run."""
    return f" (P={count})" if count is not None else ""


class Launch:
    """Runs of the program `executable` with `arguments`, one per processor count (None: a
    sequential run); the base launches the program itself, with OMP_NUM_THREADS=P when
    there is a count (OpenMP)."""

    def __init__(self, executable: Path, arguments: list[str]):
        self.executable = executable
        self.arguments = arguments

    def shown(self, count: int | None) -> str:
        """The command as the progress step shows it: the program and its arguments, quoted
        for the shell."""
        return shlex.join([str(self.executable), *self.arguments])

    def command(self, count: int | None) -> list[str]:
        """The command of the run with `count` processors."""
        return [str(self.executable), *self.arguments]

    def environment(self, count: int | None) -> tuple[dict[str, str], list[str]]:
        """The run's environment and the sentences saying what call run added to it and why."""
        return {**os.environ, **({"OMP_NUM_THREADS": str(count)} if count is not None else {})}, []

    def trace(self, count: int | None) -> Path:
        """The trace the run writes: $CLL_TRACE, else `<program>.cll.<P>.dat` here."""
        return Path(os.environ.get("CLL_TRACE") or f"{self.executable.name}.cll.{count or 1}.dat")

    def kept(self, count: int | None) -> list[Path]:
        """The files holding the run's records, its trace first."""
        trace = self.trace(count)
        return [trace] if trace.exists() else []

    def stop(self, process: subprocess.Popen, signum: int) -> None:
        """End the running `process` on call run's SIGTERM or Ctrl-C (`signum` SIGTERM or
        SIGINT; SIGKILL on a second Ctrl-C) and wait for it (call.stop)."""
        stop_program(process, signum)

    def tidy(self, count: int | None) -> None:
        """Remove what an ended run leaves that holds no records (nothing here)."""

    def failed(self, source: str, count: int | None, status: int, said: str, kept: list[Path]) -> str:
        """What to say when the run ended with `status` != 0 (`said`: its stderr): where its
        records are, its trace or, when it wrote none (SIGKILL), the spill files it left."""
        records = f"; records kept in: {kept[0].resolve()}{status_note(kept[0])}" if kept else ""
        return f"{source}{label(count)}: the program {ending(status)}{records or spilled_note(self.trace(count))}"

    def exit_status(self, status: int) -> int:
        """call run's exit status after a run that ended with `status` != 0 (a signal's
        number becomes 128 + it, as in the shell)."""
        return status if status > 0 else 128 - status
