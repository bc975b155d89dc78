"""Where the installed tracing runtime is: the header and static library that `call`
compiles and links instrumented programs with (built by setup.py at `pip install`)."""
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"


class RuntimeMissing(RuntimeError):
    """The runtime library was never built (a checkout that was not pip-installed)."""


def _existing(path: Path) -> Path:
    """Return `path` if it exists, else raise RuntimeMissing telling the user the fix."""
    if not path.exists():
        raise RuntimeMissing(
            f"the CALL tracing runtime is not built ({path} is missing); "
            f"run `pip install -e .` in the project checkout"
        )
    return path


def include_dir() -> Path:
    """Directory holding cll.h, for the compiler's -I."""
    return _existing(RUNTIME_DIR / "include" / "cll.h").parent


def static_library() -> Path:
    """The static runtime library libcllrt.a that instrumented programs link."""
    return _existing(RUNTIME_DIR / "libcllrt.a")


def link_flags() -> list[str]:
    """Linker arguments for an instrumented program: the library and what it needs, with
    -lpapi when the library was built with hardware counters (libs.txt, from setup.py)."""
    libs = RUNTIME_DIR / "libs.txt"
    extra = libs.read_text().split() if libs.exists() else []
    return [str(static_library()), *extra, "-lm", "-pthread"]


def mpi_include_dir() -> Path:
    """Directory holding cll_mpi.h, the API of the MPI layer for generated code, and the
    layer's cll_mpi_support.h; installed next to cll.h."""
    return _existing(RUNTIME_DIR / "include" / "cll_mpi.h").parent


def mpi_layer_source() -> Path:
    """The MPI layer cll_mpi.c, which the user's own mpicc compiles once per program (so one
    runtime serves Open MPI and MPICH)."""
    return _existing(RUNTIME_DIR / "cll_mpi.c")


def pub_source() -> Path:
    """The PUB-compatible BSP library pub.c (docs/pub.md), which the user's mpicc compiles
    with the program; its header pub.h is in mpi_include_dir()."""
    _existing(RUNTIME_DIR / "include" / "pub.h")
    return _existing(RUNTIME_DIR / "pub.c")


def pub_layer_source() -> Path:
    """The PUB layer cll_pub.c (supersteps in the trace), which the user's mpicc compiles
    with cll_mpi.c and pub.c for a `parallel PUB` program; its header cll_pub.h is in
    mpi_include_dir()."""
    _existing(RUNTIME_DIR / "include" / "cll_pub.h")
    return _existing(RUNTIME_DIR / "cll_pub.c")


def probe_source() -> Path:
    """The sequential machine probe memory_probe.c, which `call probe` compiles with $CC
    and runs where it was built."""
    return _existing(RUNTIME_DIR / "probe" / "memory_probe.c")


def bsp_probe_source() -> Path:
    """The BSP probe bsp_probe.c, which call.probe_bsp compiles with the user's mpicc and
    runs with mpirun to measure g and L (docs/machine.md)."""
    return _existing(RUNTIME_DIR / "probe" / "bsp_probe.c")
