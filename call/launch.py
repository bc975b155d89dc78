"""How one run of a `call run` sweep starts and what it leaves: the `Launch` of a built
program for one processor count (its command, environment, trace file and the records kept
when it fails), the launch of a sequential or OpenMP program, and the status a trace's
header gives. The MPI launch (call.mpirun) is another `Launch`; call.run drives either."""
from __future__ import annotations

import os
import shlex
import signal
from pathlib import Path


def trace_status(path: Path) -> str:
    """The `#status:` of a trace file's header ('?' if it has none)."""
    with path.open(encoding="utf-8", errors="replace") as text:
        for line in text:
            if line.startswith("#status: "):
                return line[len("#status: "):].strip()
            if line.startswith("#data"):
                break
    return "?"


def status_note(path: Path) -> str:
    """What to say after a trace's path about its status: nothing when `complete`, a calm
    word for `exit-without-report` (the runtime saving the trace at exit is the normal way
    for a program without `report`), the status itself otherwise."""
    state = trace_status(path)
    if state == "complete":
        return ""
    if state == "exit-without-report":
        return " (saved when the program ended: it has no report, which is fine)"
    return f" (status: {state})"


def ending(status: int) -> str:
    """How a program ended, from its exit status (negative: killed by that signal)."""
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def label(count: int | None) -> str:
    """How messages name the run with `count` processors: ` (P=4)`, nothing for a sequential run."""
    return f" (P={count})" if count is not None else ""


class Launch:
    """Runs of the program `executable` with `arguments`, one per processor count (None: a
    sequential run); the base launches the program itself, with OMP_NUM_THREADS=P when
    there is a count (OpenMP)."""

    forward_interrupt = True   # whether the child gets SIGINT from call run (see run_child)

    def __init__(self, executable: Path, arguments: list[str]):
        self.executable = executable
        self.arguments = arguments

    def shown(self, count: int | None) -> str:
        """The command as the progress step shows it."""
        return f"{self.executable} {shlex.join(self.arguments)}".rstrip()

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

    def tidy(self, count: int | None) -> None:
        """Remove what an ended run leaves that holds no records (nothing here)."""

    def failed(self, source: str, count: int | None, status: int, said: str, kept: list[Path]) -> str:
        """What to say when the run ended with `status` != 0 (`said`: its stderr)."""
        records = f"; records kept in: {kept[0].resolve()}{status_note(kept[0])}" if kept else ""
        return f"{source}{label(count)}: the program {ending(status)}{records}"

    def exit_status(self, status: int) -> int:
        """call run's exit status after a run that ended with `status` != 0 (a signal's
        number becomes 128 + it, as in the shell)."""
        return status if status > 0 else 128 - status
