"""How `call run` ends the run under way when it gets SIGTERM or Ctrl-C (SIGINT): the
program is signalled so that its runtime writes the records so far, and waited for. An MPI
run's ranks are signalled by call itself (found through /proc), not through mpirun: Open
MPI's mpirun passes SIGTERM and SIGINT on only after its kill timeout (10 s under call run)
and then takes some 20 s more to exit, while the ranks run on (docs/mpi.md). MPICH's proxy
between mpirun and the ranks is held stopped meanwhile, and Open MPI's session folder of the
mpirun call ended is removed."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

class Terminated(Exception):
    """call got SIGTERM (a `timeout`, a batch system, `kill`) while it ran a child (raised by
    raise_terminated, the handler call run and call probe set meanwhile): it ends the child as
    on Ctrl-C instead of dying silently and leaving the child running."""


def raise_terminated(signum, frame):
    """The SIGTERM handler that turns the signal into Terminated."""
    raise Terminated


MPIRUN_WAIT = 1.0   # s mpirun gets to exit on SIGTERM once its ranks are gone
POLL = 0.05         # s between looks at the ranks


def sigint_received(pid: int) -> bool:
    """Whether process `pid` already has SIGINT: pending, or no longer caught because the
    runtime's one-shot handler is running (Linux /proc; False when unknown). A terminal's
    Ctrl-C reaches the whole process group, and a second SIGINT would kill the program
    while it writes its trace."""
    bit = 1 << (signal.SIGINT - 1)
    try:
        status = Path(f"/proc/{pid}/status").read_text(errors="replace")     # a name need not be UTF-8
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
        caught = int(fields["SigCgt"], 16)
    except (OSError, KeyError, ValueError):
        return False
    return bool(pending & bit) or not caught & bit


def stop_program(process: subprocess.Popen, signum: int) -> None:
    """End a program run directly: SIGTERM is passed on, SIGINT too unless the program has it
    already from the terminal, SIGKILL kills it; then it is waited for."""
    if process.poll() is None and (signum != signal.SIGINT or not sigint_received(process.pid)):
        _send(process.pid, signum)
    process.wait()


def stop_mpi(process: subprocess.Popen, signum: int, executable: Path, grace: float) -> None:
    """End an mpirun `process` of `executable`: its ranks (its descendants running
    `executable`) get `signum` at once (SIGINT only those that did not get it from the
    terminal), have up to `grace` s to write their records and exit (the survivors are then
    killed), and mpirun gets SIGTERM, then SIGKILL after MPIRUN_WAIT s. SIGKILL kills all at
    once. Nothing mpirun started is left running, nor Open MPI's session folder of this
    mpirun (remove_session_folders)."""
    if process.poll() is not None:   # mpirun ended (and so did its ranks)
        return
    _end_mpi(process, signum, executable, grace)
    remove_session_folders(process.pid)


def _end_mpi(process: subprocess.Popen, signum: int, executable: Path, grace: float) -> None:
    """stop_mpi's signals and waits, until mpirun has ended and been waited for. The
    launcher's own processes between mpirun and the ranks (MPICH's hydra_pmi_proxy; Open
    MPI's ranks are mpirun's children) are held stopped while the ranks write their records:
    MPICH's proxy kills every rank with SIGKILL as soon as one has ended on a signal, and
    took half of the other ranks' records that way."""
    below = descendants(process.pid)
    ranks = [pid for pid in below if _runs(pid, executable)]
    helpers = [pid for pid in below if pid not in ranks]
    if signum != signal.SIGKILL:
        for pid in helpers:
            _send(pid, signal.SIGSTOP)
        for pid in ranks:
            if signum != signal.SIGINT or not sigint_received(pid):
                _send(pid, signum)
        deadline = time.monotonic() + grace
        while any(map(_alive, ranks)) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(POLL)
        for pid in helpers:
            _send(pid, signal.SIGCONT)
        if process.poll() is not None:
            return
        _send(process.pid, signal.SIGTERM)
        try:
            process.wait(MPIRUN_WAIT)
            return
        except subprocess.TimeoutExpired:
            pass
    _send(process.pid, signal.SIGSTOP)   # it starts no process while its own are killed
    for pid in descendants(process.pid):
        _send(pid, signal.SIGKILL)
    process.kill()
    process.wait()


def session_folders(mpirun: int) -> list[Path]:
    """The session folders Open MPI's mpirun with pid `mpirun` made on this host, of those
    that still exist: <base>/ompi.<host>.<uid>/pid.<mpirun>, <base> being Open MPI's
    orte_tmpdir_base, else $TMPDIR, $TEMP, $TMP, else /tmp (its opal_tmp_directory), and
    <host> the host name, short or in full. MPICH makes none."""
    base = next((value for value in (os.environ.get("OMPI_MCA_orte_tmpdir_base"), os.environ.get("TMPDIR"),
                                     os.environ.get("TEMP"), os.environ.get("TMP")) if value), "/tmp")
    host = socket.gethostname()
    tops = {Path(base) / f"ompi.{name}.{os.getuid()}" for name in (host, host.split(".")[0])}
    return [top / f"pid.{mpirun}" for top in sorted(tops) if (top / f"pid.{mpirun}").is_dir()]


def remove_session_folders(mpirun: int) -> None:
    """Remove the session folders of mpirun `mpirun`, ended by call: Open MPI removes its own
    only when it ends normally, and each killed run would leave its folder (8 MB of PMIx
    data files here). Only that mpirun's folder goes (its pid was mpirun's until call waited
    for it a moment ago, and Linux hands out pids in increasing order: no other run has it),
    and the ompi.<host>.<uid> folder above it if it is then empty, as mpirun does itself
    when it ends normally."""
    for folder in session_folders(mpirun):
        shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.parent.rmdir()
        except OSError:   # other runs' folders are in it
            pass


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children, theirs, ...), by the PPid of each in /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = _parent(entry)
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ...); [] when the
    process is gone. The name, in parentheses, may itself hold spaces and parentheses."""
    try:
        # a process name need not be UTF-8 (a program built from lat\xe9.c): undecodable bytes become U+FFFD
        return Path(f"/proc/{pid}/stat").read_text(errors="replace").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _parent(entry: Path) -> int | None:
    """The parent of the process /proc/<pid> (None if it is gone)."""
    fields = _stat_fields(entry.name)
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def _runs(pid: int, executable: Path) -> bool:
    """Whether process `pid` runs `executable`."""
    try:
        return Path(os.readlink(f"/proc/{pid}/exe")) == executable.resolve()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, ended but not yet waited for, does not)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def _send(pid: int, signum: int) -> None:
    """Send `signum` to `pid`, which may have ended meanwhile."""
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
