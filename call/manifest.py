"""The build record of `call run`: what an executable in `.cll-build/` was built from (the
build command, the environment variables that steer the compiler, the compiler binary, the
tracing runtime library, the source and its translation, and every file the compiler read,
taken from the compiler's own dependency output), so that a change to any of them rebuilds
the program, and one line says why."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

FORMAT = 1
# Environment variables that change what the compiler or the MPI wrapper does.
ENVIRONMENT = ("CC", "MPICC", "OMPI_CC", "MPICH_CC", "CPATH", "C_INCLUDE_PATH", "LIBRARY_PATH")
DEPENDENCY_TARGET = "cll-build"   # the -MT name: a rule target without spaces or colons


def digest(path: Path | str) -> str | None:
    """SHA-256 of a file's bytes, or None when it cannot be read (removed, a directory)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def text_digest(*texts: str) -> str:
    """SHA-256 of texts (the translation made in memory)."""
    hashed = hashlib.sha256()
    for text in texts:
        hashed.update(text.encode("utf-8", "surrogateescape") + b"\0")
    return hashed.hexdigest()


def compiler_identity(command: list[str]) -> str:
    """The compiler binary the command runs, as `realpath size mtime`: an upgraded or
    switched compiler (`cc` pointing elsewhere) makes another identity."""
    found = shutil.which(command[0]) if command else None
    if found is None:
        return "?"
    real = os.path.realpath(found)
    stat = os.stat(real)
    return f"{real} {stat.st_size} {stat.st_mtime_ns}"


def read_dependencies(rule: Path, exclude: Path) -> list[str]:
    """The prerequisites of the make rule gcc wrote with -MD -MF (escaped spaces, `$$` and
    continuation lines undone), as absolute paths, without those under `exclude` (the
    temporary translation, tracked by its text instead)."""
    text = rule.read_text(encoding="utf-8", errors="surrogateescape").replace("\\\n", " ")
    _, _, prerequisites = text.partition(f"{DEPENDENCY_TARGET}:")
    words = re.findall(r"(?:\\.|[^\s\\])+", prerequisites)
    paths = [os.path.abspath(re.sub(r"\\(.)", r"\1", word).replace("$$", "$")) for word in words]
    inside = str(exclude.resolve()) + os.sep
    return sorted({p for p in paths if not os.path.realpath(p).startswith(inside)})


def record_path(executable: Path) -> Path:
    """Where the record of `executable` is kept: `.cll-build/<stem>.build.json`."""
    return executable.with_name(executable.name + ".build.json")


def load(executable: Path) -> dict | None:
    """The record of `executable`, or None if there is none (or it is unreadable)."""
    try:
        record = json.loads(record_path(executable).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("format") == FORMAT else None


def save(executable: Path, expected: dict, inputs: list[str]) -> None:
    """Write the record of a successful build: the expected fields, the digest of every file
    the compiler read, and the executable's own digest (so a replaced binary is noticed)."""
    record = {**expected, "format": FORMAT, "inputs": {p: digest(p) for p in inputs},
              "executable": digest(executable)}
    path = record_path(executable)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(partial, path)


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    except ValueError:
        return path


def _changed_inputs(inputs: dict) -> list[str]:
    return [_shown(p) for p, known in inputs.items() if digest(p) != known]


def stale_reason(executable: Path, expected: dict) -> str | None:
    """None when `executable` is what a build from `expected` would make; otherwise the
    reason to (re)build it, in a few words for the `call: rebuilding ...` line."""
    record = load(executable)
    if not executable.exists():
        return "first build" if record is None else "the executable is missing"
    if record is None:
        return "no build record (built by hand or by an older call)"
    for name in ENVIRONMENT:
        before, now = record.get("environment", {}).get(name), expected["environment"].get(name)
        if before != now:
            return f"${name} changed: {before or '(unset)'} -> {now or '(unset)'}"
    if record.get("cflags") != expected["cflags"]:
        return f"--cflags changed: '{record.get('cflags')}' -> '{expected['cflags']}'"
    reasons = (("command", "the build command changed"),
               ("compiler", "the compiler changed"),
               ("runtime", "the tracing runtime library changed"),
               ("source", f"{_shown(expected['source_path'])} changed"),
               ("translation", "call's translation changed (a new call)"))
    for key, reason in reasons:
        if record.get(key) != expected[key]:
            return reason
    changed = _changed_inputs(record.get("inputs", {}))
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        return f"{changed[0]} changed{more}"
    if digest(executable) != record.get("executable"):
        return "the executable was replaced since call built it"
    return None
