"""Extra-P as a tool of the comparison: its own virtual environment (Extra-P pins numpy < 2,
so it never enters the project's environment) and its models' predictions.

The training data goes through llac's own exporter (`llac.extrap.write_extrap`); the model is
fitted and evaluated by `extrap_eval.py`, run by the venv's python.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from llac.experiment import Experiment
from llac.extrap import write_extrap

EXTRAP = "extrap==4.2.5"
VENV = Path(__file__).resolve().parent.parent / ".venv-extrap"
EVAL = Path(__file__).resolve().parent / "extrap_eval.py"


class ExtrapUnavailable(Exception):
    """The Extra-P environment could not be created (e.g. no network)."""


def venv_python(venv: Path = VENV) -> Path:
    """The python of the Extra-P venv, creating the venv and installing Extra-P if needed."""
    python = venv / "bin" / "python"
    if python.exists() and _run([str(python), "-c", "import extrap"]).returncode == 0:
        return python
    steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
             [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", EXTRAP]]
    for step in steps:
        done = _run(step)
        if done.returncode != 0:
            raise ExtrapUnavailable(f"cannot set up Extra-P in {venv} ({' '.join(step[-2:])}): "
                                    f"{(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    return python


def _run(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run `cmd` without the project's PYTHONPATH (the venv must see only its own numpy)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)


def extrap_predict(train: Experiment, points: dict[str, np.ndarray], modelers: list[str],
                   python: Path) -> dict[str, dict]:
    """Fit `train` (exported with llac's exporter) with each Extra-P modeler and predict at
    `points` (variable -> values). Returns modeler -> {"function", "values"} or {"error"}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{train.name}.txt"
        write_extrap(train, path)
        request = {"file": str(path), "modelers": modelers,
                   "points": [np.asarray(points[v], dtype=float).tolist() for v in train.formula.variables]}
        done = _run([str(python), str(EVAL)], stdin=json.dumps(request))
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {m: {"error": f"Extra-P failed: {message}"} for m in modelers}
    return json.loads(done.stdout)
