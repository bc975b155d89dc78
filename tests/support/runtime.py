"""Helpers for the runtime tests (no tests here): write C programs the way `call` generates
them, build them with gcc against the installed libcllrt.a, run them, read their traces."""
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from call import runtime_paths


def c_program(experiments: dict[str, tuple[str, list[str]]], main_body: str, *,
              source: str = "prog.c", parallel: str = "none", init: str = "",
              prelude: str = "", functions: str = "") -> str:
    """C source shaped like generated code: `prelude`, one static cll_experiment per entry
    of `experiments` (name -> (formula, variables)), a cll_program, a constructor
    registering it (then running `init`), `functions`, and main with `main_body`. Sites
    are `source:<n>:1`."""
    lines = ['#include "cll.h"', "#include <stdio.h>", "#include <stdlib.h>", prelude]
    for i, (name, (formula, variables)) in enumerate(experiments.items()):
        names = ", ".join(f'"{v}"' for v in variables) or "0"
        lines.append(f"static const char *const cll_vars_{name}[] = {{{names}}};")
        lines.append(f'static cll_experiment cll_exp_{name} = {{"{name}", "{formula}", '
                     f'"{source}:{10 + i}:1", {len(variables)}, cll_vars_{name}, -1, 0}};')
    pointers = ", ".join(f"&cll_exp_{name}" for name in experiments)
    lines.append(f"static cll_experiment *const cll_exps[] = {{{pointers}}};")
    lines.append(f'static const cll_program cll_prog = {{"{source}", "{parallel}", '
                 f"{len(experiments)}, cll_exps}};")
    lines.append("__attribute__((constructor)) static void cll_init(void) "
                 f"{{ cll_register(&cll_prog); {init} }}")
    lines.append(functions)
    lines.append(f"int main(int argc, char **argv) {{ (void)argc; (void)argv; {main_body} }}")
    return "\n".join(lines) + "\n"


def begin(name: str, *values: str) -> str:
    """The begin statement generated code has for experiment `name` with these values."""
    if not values:
        return f"{{ cll_begin(&cll_exp_{name}, 0, CLL_HERE); }}"
    cast = ", ".join(f"(double)({v})" for v in values)
    return f"{{ double cll_v[] = {{{cast}}}; cll_begin(&cll_exp_{name}, cll_v, CLL_HERE); }}"


def end(name: str, line: int = 99) -> str:
    """The end statement generated code has, with site prog.c:<line>:1."""
    return f'cll_end(&cll_exp_{name}, "prog.c:{line}:1", CLL_HERE);'


def build(directory: Path, sources: dict[str, str], exe: str = "prog",
          flags: tuple[str, ...] = ()) -> Path:
    """Compile `sources` (file name -> text) in `directory` with gcc and link libcllrt.a."""
    paths = []
    for name, text in sources.items():
        (directory / name).write_text(text)
        paths.append(name)
    out = directory / exe
    subprocess.run(["gcc", "-O2", "-Wall", "-I", str(runtime_paths.include_dir()), *flags,
                    *paths, "-o", exe, *runtime_paths.link_flags()],
                   cwd=directory, check=True, capture_output=True, text=True)
    return out


def default_signals():
    """In a child: SIGINT and SIGQUIT at their default action, as a terminal starts programs
    (a shell's background job starts them ignored, and the runtime leaves an ignored signal
    ignored, so the signal tests would fail when the suite runs in the background)."""
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def run(exe: Path, env: dict[str, str] | None = None, timeout: float = 60):
    """Run `exe` in its directory (CLL_* cleared, then `env` added), its signals at their
    defaults; CompletedProcess."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("CLL_")}
    full.update(env or {})
    return subprocess.run([str(exe)], cwd=exe.parent, env=full, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=default_signals)


@dataclass
class Trace:
    """A trace parsed simply: header keys, experiments' keys, records per experiment."""
    header: dict[str, str] = field(default_factory=dict)
    experiments: dict[str, dict[str, str]] = field(default_factory=dict)
    records: dict[str, list[list[str]]] = field(default_factory=dict)
    ended: bool = False


def read_trace(path: Path) -> Trace:
    """Parse a trace file per docs/trace-format.md, checking each record's field count."""
    trace, current, in_data = Trace(), None, False
    lines = path.read_text().splitlines()
    assert lines[0] == "#cll-trace 1"
    for line in lines[1:]:
        if line == "#end":
            trace.ended = True
        elif line == "#data":
            in_data = True
        elif in_data:
            fields = line.split(" ")
            columns = trace.experiments[fields[0]]["columns"].split()
            assert len(fields) == 1 + len(columns), line
            trace.records.setdefault(fields[0], []).append(fields[1:])
        elif line.startswith("#experiment: "):
            current = trace.experiments.setdefault(line.split(": ", 1)[1], {})
        elif line.startswith("#  "):
            key, value = line[3:].split(": ", 1)
            current[key] = value
        else:
            key, value = line[1:].split(": ", 1)
            trace.header[key] = value
    return trace


def build_pub_program(directory: Path, name: str, mpicc: str = "mpicc") -> Path:
    """tests/pub_programs/NAME.c built in `directory` with `mpicc` (Open MPI's by default,
    mpicc.mpich for MPICH) -Wall -Wextra -Werror against the installed pub.c and pub.h
    (call.runtime_paths), as a user builds a PUB program."""
    exe = directory / name
    source = Path(__file__).resolve().parent.parent / "pub_programs" / f"{name}.c"
    subprocess.run([mpicc, "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(runtime_paths.mpi_include_dir()),
                    str(source), str(runtime_paths.pub_source()), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def run_bounded(args, timeout: float, **options) -> subprocess.CompletedProcess:
    """subprocess.run(args, capture_output=True, text=True, timeout=...), except that on a
    timeout every process of the command's session is killed too (mpirun's ranks, which a
    plain timeout leaves running: a hung MPI test must not load the machine for the tests
    after it), before TimeoutExpired is raised."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, **options) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in _session_members(process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            process.communicate()
            raise
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def _session_members(session: int) -> list[int]:
    """The processes of a session (field 6 of /proc/PID/stat), the leader first."""
    members = [session]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == session:
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:      # after "pid (comm)": state ppid pgrp session ...
            members.append(int(entry.name))
    return members
