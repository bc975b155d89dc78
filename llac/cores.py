"""Oversubscription: how many cores the host that wrote a trace has, and which runs had more
processes (or threads) than that, which took turns on the cores, so that their times are not
those of P processors (docs/parallel-analysis.md, "Prediction across P")."""
from __future__ import annotations

import os
import socket


def cores_of(experiment) -> tuple[int | None, str]:
    """How many cores the host that wrote the trace has: the `cores` its files state (an MPI
    trace's, rank 0's host; a `.rank<r>` file states none), or this machine's count when the
    trace's `host` is this machine; None when unknown or when its files come from several
    machines (`Experiment.mixed_machines`: no one count applies). With the host's name."""
    if experiment.mixed_machines:
        return None, ""
    host = experiment.header.get("host", "")
    stated = {int(c) for c in experiment.header_values("cores", "") if c.isdigit() and int(c) > 0}
    if len(stated) == 1:
        return stated.pop(), host
    if host and host == socket.gethostname():
        return os.cpu_count(), host
    return None, host


def oversubscription_note(procs, experiment, name) -> str:
    """One line saying which of the runs with `procs` processes (an OpenMP trace's: threads)
    had more of them than the cores of the host `experiment` was measured on (or that it is
    unknown)."""
    cores, host = cores_of(experiment)
    units = "threads" if experiment.header.get("parallel") == "OpenMP" else "processes"
    if experiment.mixed_machines:
        return f"{experiment.mixed_machines}: which runs were oversubscribed (more {units} than cores) is not judged"
    where = f"host {host}" if host else "its host"
    if cores is None:
        return (f"the trace does not say how many cores {where} has: runs with more {units} "
                f"than cores were oversubscribed ({units} took turns on the cores)")
    over = sorted({float(p) for p in procs if p > cores})
    if not over:
        return f"every run had at most the {cores} cores of {where}"
    return (f"{name} = {', '.join(f'{p:g}' for p in over)} exceed{'s' * (len(over) == 1)} the {cores} cores of "
            f"{where}: those runs were oversubscribed ({units} took turns on the cores), so their times are not "
            f"those of {name} {'threads' if units == 'threads' else 'processors'}")
