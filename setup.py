"""Build the C tracing runtime at install time (`pip install .` and `pip install -e .`).

Two clients, one set of sources in runtime_c/:
  * `call._cllrt`, a cffi extension for Python (declared by `cffi_modules`);
  * `call/runtime/libcllrt.a` + `call/runtime/include/cll.h`, the static library user
    programs link (built by `BuildRuntime` with the system C compiler and `ar`), and the
    MPI layer `call/runtime/cll_mpi.c` with its headers, which the user's mpicc compiles,
    the PUB-compatible BSP library `call/runtime/pub.c` (header `include/pub.h`) and the
    PUB layer `call/runtime/cll_pub.c` (header `include/cll_pub.h`), likewise,
    and the machine probe `call/runtime/probe/memory_probe.c`, which `call probe` compiles.
    When the C compiler finds papi.h, the library is built with hardware counters
    (-DCLL_HAVE_PAPI) and `call/runtime/libs.txt` says `-lpapi`, which `call` then links
    (call/runtime_paths.py). The cffi extension never has them.
    A static library because linking the extension needs libpython and a shared one an
    rpath that breaks when a virtual environment moves.
Everything else about the project is in pyproject.toml.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent / "runtime_c"))
from build_cffi import CFLAGS, SOURCES  # noqa: E402  (the one list of runtime sources)

ROOT = Path(__file__).resolve().parent
RUNTIME = ROOT / "runtime_c"


def has_papi(cc: list[str]) -> bool:
    """Whether the C compiler `cc` finds papi.h (Debian's libpapi-dev): then the runtime
    reads hardware counters (docs/runtime.md#hardware-counters)."""
    try:
        found = subprocess.run([*cc, "-E", "-x", "c", "-", "-o", os.devnull],
                               input=b"#include <papi.h>\n", capture_output=True)
    except OSError:
        return False
    return found.returncode == 0


class BuildRuntime(build_ext):
    """build_ext that first builds libcllrt.a and installs it with cll.h as package data."""

    def run(self):
        """Build the static library into the package, then the cffi extension."""
        inplace = self.inplace or getattr(self, "editable_mode", False)
        package_dir = ROOT / "call" if inplace else Path(self.build_lib) / "call"
        self.build_static_library(package_dir / "runtime")
        super().run()

    def build_static_library(self, runtime_dir: Path):
        """Compile runtime_c/*.c with $CC (default cc) and archive them with $AR (ar)."""
        cc = shlex.split(os.environ.get("CC", "cc"))
        ar = os.environ.get("AR", "ar")
        objects_dir = Path(self.build_temp) / "cllrt"
        objects_dir.mkdir(parents=True, exist_ok=True)
        (runtime_dir / "include").mkdir(parents=True, exist_ok=True)
        papi = has_papi(cc)
        defines = ["-DCLL_HAVE_PAPI"] if papi else []
        (runtime_dir / "libs.txt").write_text("-lpapi\n" if papi else "")
        objects = []
        for name in SOURCES:
            obj = objects_dir / (Path(name).stem + ".o")
            self.spawn([*cc, *CFLAGS, *defines, "-Wall", "-I", str(RUNTIME), "-c",
                        str(RUNTIME / name), "-o", str(obj)])
            objects.append(str(obj))
        library = runtime_dir / "libcllrt.a"
        library.unlink(missing_ok=True)
        self.spawn([ar, "rcs", str(library), *objects])
        for header in ("cll.h", "cll_mpi.h", "cll_mpi_support.h", "cll_pub.h"):
            shutil.copyfile(RUNTIME / header, runtime_dir / "include" / header)
        # the MPI layer: compiled by the user's mpicc, once per program (docs/mpi.md)
        shutil.copyfile(RUNTIME / "cll_mpi.c", runtime_dir / "cll_mpi.c")
        # the PUB layer (supersteps), compiled by the user's mpicc for PUB programs (docs/pub.md)
        shutil.copyfile(RUNTIME / "cll_pub.c", runtime_dir / "cll_pub.c")
        # the PUB-compatible BSP library, compiled by the user's mpicc too (docs/pub.md)
        shutil.copyfile(RUNTIME / "pub" / "pub.c", runtime_dir / "pub.c")
        shutil.copyfile(RUNTIME / "pub" / "pub.h", runtime_dir / "include" / "pub.h")
        # the machine probes: `call probe` compiles them where it runs (docs/machine.md), the
        # sequential one with $CC, the BSP one with the user's mpicc
        (runtime_dir / "probe").mkdir(exist_ok=True)
        for probe in ("memory_probe.c", "bsp_probe.c"):
            shutil.copyfile(RUNTIME / "probe" / probe, runtime_dir / "probe" / probe)


setup(
    cffi_modules=["runtime_c/build_cffi.py:ffibuilder", "runtime_c/build_records.py:ffibuilder"],
    cmdclass={"build_ext": BuildRuntime},
)
