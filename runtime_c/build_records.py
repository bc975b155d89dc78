"""cffi build script for `llac._records`: bulk conversion of trace records (llac_records.c).

Used by setup.py (`cffi_modules`), next to the runtime's build_cffi.py; llac/records.py
calls it for every batch of well-formed record lines.
"""
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

ffibuilder = FFI()
ffibuilder.cdef((HERE / "llac_records.h").read_text().split("#include <stddef.h>", 1)[1])
ffibuilder.set_source(
    "llac._records",
    '#include "llac_records.h"',
    sources=["runtime_c/llac_records.c"],    # relative to the project root, where setup.py runs
    include_dirs=["runtime_c"],
    extra_compile_args=["-O2", "-fPIC"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
