"""The names of the spill files the tracing runtime leaves when a run cannot write its trace
(SIGKILL, `_exit`), shared by `call run`, which says where a killed run's records are, and
llac, which loads them (docs/trace-format.md, "Spill files"): `.<trace name>.spill<k>.XXXXXX`
next to the trace, each beginning with the line `#cll-spill`."""
from __future__ import annotations

import glob
import os

MAGIC = b"#cll-spill"


def is_spill_file(path: str | os.PathLike) -> bool:
    """Whether `path` is a spill file (by its first line)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def spill_files_for(trace_path: str | os.PathLike) -> list[str]:
    """The spill files left next to `trace_path` by runs that did not write it, sorted."""
    directory, name = os.path.split(os.fspath(trace_path))   # no `./` before a bare name's spill files
    pattern = os.path.join(glob.escape(directory), f".{glob.escape(name)}.spill*")
    return sorted(p for p in glob.glob(pattern) if is_spill_file(p))


def spilled_trace(spill_path: str) -> str:
    """The trace a spill file stands for: `dir/.prog.cll.1.dat.spill0.Ab12Cd` -> `dir/prog.cll.1.dat`."""
    directory, name = os.path.split(spill_path)
    return os.path.join(directory, name[1:].rsplit(".spill", 1)[0])
