"""The install-time build: libcllrt.a and cll.h where call.runtime_paths says, and the
cffi extension call._cllrt driving the same runtime from Python."""
import os
import subprocess
import sys
import textwrap

from call import runtime_paths
from support.runtime import read_trace


def test_runtime_paths_point_at_the_built_library_and_header():
    header = runtime_paths.include_dir() / "cll.h"
    library = runtime_paths.static_library()
    assert "void cll_begin(cll_experiment *e, const double *vars, const void *where);" in header.read_text()
    members = subprocess.run(["ar", "t", str(library)], capture_output=True, text=True,
                             check=True).stdout.split()
    assert sorted(members) == ["counters.o", "decimal.o", "fatal.o", "files.o", "header.o", "lifecycle.o",
                               "registry.o", "store.o", "timer.o", "trace.o"]
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(library)], capture_output=True,
                             text=True, check=True).stdout
    for name in ("cll_register", "cll_begin", "cll_end", "cll_report", "cll_trace_path"):
        assert f" T {name}\n" in symbols
    flags = runtime_paths.link_flags()
    assert flags[0] == str(library) and "-pthread" in flags


def test_missing_library_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(runtime_paths, "RUNTIME_DIR", tmp_path)
    try:
        runtime_paths.link_flags()
    except runtime_paths.RuntimeMissing as error:
        assert "run `pip install -e .`" in str(error)
    else:
        raise AssertionError("no error for a missing runtime")


SCRIPT = textwrap.dedent("""
    from call._cllrt import ffi, lib
    keep = [ffi.new("char[]", s) for s in (b"f", b"f[0] + f[1]*N", b"py.c:1:1", b"N", b"py.c")]
    names = ffi.new("const char *[]", [keep[3]])
    exp = ffi.new("cll_experiment *", {"name": keep[0], "formula": keep[1], "source": keep[2],
                                       "nvars": 1, "vars": names, "id": -1})
    exps = ffi.new("cll_experiment *[]", [exp])
    prog = ffi.new("cll_program *", {"source": keep[4], "parallel": ffi.new("char[]", b"none"),
                                      "nexperiments": 1, "experiments": exps})
    lib.cll_register(prog)
    values = ffi.new("double[]", 1)
    for n in range(200000):
        values[0] = n
        lib.cll_begin(exp, values, ffi.NULL)
        lib.cll_end(exp, b"py.c:2:1", ffi.NULL)
    print(lib.cll_record_count(), lib.cll_spilled_count(), ffi.string(lib.cll_trace_path()).decode(),
          ffi.string(lib.cll_timer_name()).decode(), lib.cll_seconds_per_tick() > 0)
    lib.cll_report(ffi.NULL, 0)
""")


def test_cffi_module_loads_records_and_reports(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLL_")}
    env.update(CLL_TRACE="py.dat", CLL_TIMER="monotonic")
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    count, spilled, path, timer, positive = result.stdout.split()
    assert count == "200000" and int(spilled) > 0      # 200k records overflow one buffer
    assert path == f"{tmp_path}/py.dat" and timer == "monotonic" and positive == "True"
    trace = read_trace(tmp_path / "py.dat")
    assert trace.header["status"] == "complete" and trace.header["source"] == "py.c"
    assert [r[3] for r in trace.records["f"]] == [str(n) for n in range(200000)]
