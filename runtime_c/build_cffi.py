"""cffi build script for `call._cllrt`: the tracing runtime as a Python extension.

Used by setup.py (`cffi_modules=["runtime_c/build_cffi.py:ffibuilder"]`). The extension is
self-contained: it compiles the runtime's own C sources, so Python code (tests,
benchmarks) drives the very runtime that user programs link as `libcllrt.a`. The cdef is
`cll.h` itself, minus the preprocessor lines cffi cannot read, so the two never disagree.
"""
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
SOURCES = ["decimal.c", "fatal.c", "timer.c", "counters.c", "registry.c", "files.c", "header.c",
           "store.c", "trace.c", "lifecycle.c"]   # in layer order: each calls only those before it
CFLAGS = ["-O2", "-fPIC", "-pthread"]


def header_declarations(header: Path) -> str:
    """Return `header`'s C declarations without what cffi's cdef rejects: conditional and
    include directives, and the `extern "C"` lines guarded by __cplusplus."""
    kept, in_cplusplus = [], False
    for line in header.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("#ifdef __cplusplus"):
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = not stripped.startswith("#endif")
        elif stripped.startswith("#") and not stripped.startswith("#define"):
            continue
        elif stripped.startswith("#define CLL_H"):
            continue
        else:
            kept.append(line)
    return "\n".join(kept)


ffibuilder = FFI()
ffibuilder.cdef(header_declarations(HERE / "cll.h"))
ffibuilder.set_source(
    "call._cllrt",
    '#include "cll.h"',
    # relative to the project root, where setup.py runs
    sources=[f"runtime_c/{name}" for name in SOURCES],
    include_dirs=["runtime_c"],
    # no signal handlers: the host Python keeps SIGINT and friends
    define_macros=[("CLL_NO_SIGNAL_HANDLERS", "1")],
    extra_compile_args=CFLAGS,
    libraries=["m"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
