"""Start-up cost of the pipe (issue 8, item 15): a fit and a prediction import neither
statsmodels nor scipy (about a second of import), nor the plot and REPL libraries, and the
parsers are built once and then read from the user's cache directory."""
import os
import subprocess
import sys
from pathlib import Path

from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("statsmodels", "scipy", "pandas", "plotext", "prompt_toolkit")


def fit_and_predict(work: Path, cache_home: Path) -> str:
    """Run `load; fit; predict` in a fresh llac process with XDG_CACHE_HOME=cache_home; its
    output ends with the exit status and the heavy modules it imported."""
    write_matinit(work / "matinit.cll.1.dat")
    code = ("import sys; from llac.cli import main; "
            "status = main(['-c', 'load \"matinit.cll.1.dat\"; fit rowinit; predict rowinit N=4096']); "
            f"print('status', status, sorted(m for m in {HEAVY!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache_home)},
                       stdin=subprocess.DEVNULL)
    assert "model of rowinit" in r.stdout and "4096" in r.stdout and r.stderr == "", r.stdout + r.stderr
    return r.stdout


def test_fit_and_predict_import_no_heavy_library(tmp_path):
    assert fit_and_predict(tmp_path, tmp_path / "cache").strip().endswith("status 0 []")


def test_parsers_are_cached_and_a_damaged_or_unwritable_cache_is_harmless(tmp_path):
    fit_and_predict(tmp_path, tmp_path / "cache")
    cached = sorted((tmp_path / "cache" / "llac").iterdir())
    assert [p.name.split("-lark")[0] for p in cached] == ["formula-formula", "llac-start"]
    first = fit_and_predict(tmp_path, tmp_path / "cache")       # read from the cache
    for path in cached:
        path.write_bytes(b"damaged\n" + bytes(range(256)))
    assert fit_and_predict(tmp_path, tmp_path / "cache") == first
    assert all(path.read_bytes()[:7] != b"damaged" for path in cached)   # rebuilt and saved
    (tmp_path / "file").write_text("not a directory")
    assert fit_and_predict(tmp_path, tmp_path / "file") == first
