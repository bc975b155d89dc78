"""Start-up cost of the pipe (issue 8, item 15): a fit and a prediction import neither
statsmodels nor scipy (about a second of import), nor the plot and REPL libraries."""
import os
import subprocess
import sys
from pathlib import Path

from test_llac_fixtures import write_matinit

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("statsmodels", "scipy", "pandas", "plotext", "prompt_toolkit")


def test_fit_and_predict_import_no_heavy_library(tmp_path):
    write_matinit(tmp_path / "matinit.cll.1.dat")
    code = ("import sys; from llac.cli import main; "
            "status = main(['-c', 'load \"matinit.cll.1.dat\"; fit rowinit; predict rowinit N=4096']); "
            f"print('status', status, sorted(m for m in {HEAVY!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL, timeout=60)
    assert "model of rowinit" in r.stdout and "4096" in r.stdout, r.stdout + r.stderr
    assert r.stdout.strip().endswith("status 0 []"), r.stdout
