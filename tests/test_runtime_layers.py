"""The C runtime's modules are layers without a circle (docs/runtime.md): each object of
libcllrt.a uses only runtime symbols defined by itself or by a module before it in
build_cffi.SOURCES (decimal, fatal, timer, counters, registry, files, header, store, trace, lifecycle)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from call.runtime_paths import static_library

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime_c"))
from build_cffi import SOURCES  # noqa: E402


def symbols() -> dict[str, tuple[set[str], set[str]]]:
    """Each object of libcllrt.a: the cll_ symbols it defines and those it uses (nm)."""
    listing = subprocess.run(["nm", "-g", str(static_library())], capture_output=True,
                             text=True, check=True).stdout
    objects: dict[str, tuple[set[str], set[str]]] = {}
    for line in listing.splitlines():
        if line.endswith(".o:"):
            defined, used = objects.setdefault(line[:-len(".o:")], (set(), set()))
        elif line.split() and line.split()[-1].startswith("cll_"):
            kind, name = line.split()[-2:]
            (used if kind == "U" else defined).add(name)
    return objects


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
def test_each_module_calls_only_the_modules_before_it():
    objects = symbols()
    layers = [Path(source).stem for source in SOURCES]
    assert sorted(objects) == sorted(layers)
    below: set[str] = set()
    for layer in layers:
        defined, used = objects[layer]
        assert used <= below, f"{layer}.c calls up: {sorted(used - below)}"
        below |= defined
