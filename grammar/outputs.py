"""The one rule for the files that call and llac write where the user names them (`call
translate -o DIR`, `call cc -o FILE`, `call probe --db FILE`, llac's `export`, `machine
export`, `plot ... to`, `timeline ... to`): the folder must exist. A mistyped folder is
reported at once, as cc, cp and the shell's `>` do, instead of becoming a new tree the user did
not ask for (and a run stored where nothing looks for it). Only folders the tools own are made
as needed: `.cll-build` beside a program for `call run`, the default machine database's."""
from __future__ import annotations

import os
import shlex


def missing_folder(path: str | os.PathLike, folder: bool = False) -> str | None:
    """Why `path` cannot be written for want of a folder: the folder it would go into (with
    `folder`, `path` itself is that folder) does not exist, or is a file. None when it is there."""
    where = os.fspath(path) if folder else os.path.dirname(os.fspath(path)) or "."
    if os.path.isdir(where):
        return None
    if os.path.exists(where):
        return f"{where} is a file, not a folder"
    return f"the folder {where} does not exist (make it first: mkdir -p {shlex.quote(where)})"
