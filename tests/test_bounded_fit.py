"""Non-negative constants (issue 10, item 2): a term of a cost formula cannot cost negative
time, so by default the constants of terms that are >= 0 on the data are fitted with the bound
c >= 0, the output says which sit at the bound, and `set constants free` removes the bound."""
import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from llac.fit import nonnegative_lstsq
from llac.model import FitError, FitSettings, fit_experiment
from support.fit import grid, synthetic

N_VALUES = [2 ** k for k in range(4, 18)]


def brute_force(a: np.ndarray, b: np.ndarray, bounded: np.ndarray) -> float:
    """The least residual norm over every choice of bounded entries held at 0 whose free
    solution is feasible: the bounded problem's optimum, by enumeration."""
    best = np.inf
    choices = np.flatnonzero(bounded)
    for r in range(len(choices) + 1):
        for zero in itertools.combinations(choices, r):
            keep = np.ones(a.shape[1], dtype=bool)
            keep[list(zero)] = False
            x = np.zeros(a.shape[1])
            if keep.any():
                x[keep] = np.linalg.lstsq(a[:, keep], b, rcond=None)[0]
            if np.all(x[bounded] >= -1e-12):
                best = min(best, float(np.linalg.norm(a @ x - b)))
    return best


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 5), st.integers(0, 25))
def test_the_bounded_solver_finds_the_optimum_with_free_and_bounded_entries(seed, k, extra):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(k + extra, k)) * rng.lognormal(0, 2, size=k)
    b = rng.normal(size=k + extra)
    bounded = rng.random(k) < 0.7
    x = nonnegative_lstsq(a, b, bounded)
    assert np.all(x[bounded] >= 0)
    assert np.linalg.norm(a @ x - b) <= brute_force(a, b, bounded) * (1 + 1e-9) + 1e-12


def negative_intercept():
    """Times 1e-9*N less a little at the small sizes: the free fit's f[0] is clearly negative."""
    columns = grid(reps=3, N=N_VALUES)
    data = synthetic("f[0] + f[1]*N", columns, [-3e-7, 1e-9], noise=0.01, seed=4)
    return data


def test_a_negative_constant_is_held_at_zero_and_said_so():
    data = negative_intercept()
    free = fit_experiment(data, FitSettings(constants="free", split=False, prune=False))
    assert free.pieces[0].constants[0] < 0 and free.pieces[0].pvalues[0] < 0.05
    model = fit_experiment(data, FitSettings(split=False))
    piece = model.pieces[0]
    assert piece.at_bound == ("f[0]",) and piece.constants[0] == 0 and piece.stderr[0] == 0
    assert piece.constants[1] > 0 and piece.stderr[1] > 0
    assert "constant f[0] held at 0 in the fit: the unconstrained fit makes it negative, and a term " \
           "cannot cost negative time; `set constants free` allows it" in model.warnings
    assert "f[0]" in model.insignificant      # and drop may suggest removing it


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.floats(-1e-6, 1e-6), st.floats(0.0, 0.2))
def test_no_default_fit_has_a_negative_constant(seed, intercept, noise):
    """Whatever the data (noise, a negative true intercept, regimes found by splitting), the
    default fit's constants of non-negative terms are >= 0 in every interval."""
    columns = grid(reps=3, N=N_VALUES)
    data = synthetic("f[0] + f[1]*N + f[2]*N*N", columns, [intercept, 1e-9, 1e-16], noise=noise, seed=seed)
    data = data.replace(columns={**data.columns, "time": np.abs(data.columns["time"]) + 1e-9})
    try:
        model = fit_experiment(data)
    except FitError:
        return
    for piece in model.pieces:
        assert np.all(piece.constants >= 0)
        assert set(piece.at_bound) == {n for n, c in zip(model.formula.constants, piece.constants)
                                       if c == 0 and n not in piece.dropped}


def test_a_term_negative_on_the_data_keeps_a_free_constant():
    columns = grid(reps=3, N=[0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8])   # log(N) < 0 below 1
    data = synthetic("f[0] + f[1]*log(N)", columns, [1.0, -0.2], noise=0.001, seed=1)
    model = fit_experiment(data, FitSettings(split=False))
    assert model.pieces[0].at_bound == () and model.pieces[0].constants[1] == pytest.approx(-0.2, rel=0.05)


def llac(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], capture_output=True, text=True,
                          timeout=120)


def test_the_user_sees_the_bound_and_can_free_it(tmp_path):
    data = negative_intercept()
    path = tmp_path / "neg.csv"
    path.write_text("N,time\n" + "".join(f"{n:g},{t:.9g}\n" for n, t in zip(data.columns["N"], data.columns["time"])))
    load = f'load "{path}" as e formula "f[0] + f[1]*N"; set split off; '
    bound = llac(load + "fit e")
    assert bound.returncode == 0, bound.stderr
    assert "f[0]           =  0.0000e+00   held at its bound 0 (see warning)" in bound.stdout
    assert "warning: constant f[0] held at 0 in the fit" in bound.stdout
    free = llac(load + "set constants free; set prune off; fit e")
    assert free.returncode == 0, free.stderr
    assert "constants = free" in free.stdout
    assert "f[0]           = -" in free.stdout and "held at" not in free.stdout
    wrong = llac(load + "set constants fre")
    assert wrong.returncode != 0 and "Traceback" not in wrong.stderr
    assert "constants is one of nonnegative, free, not 'fre'" in wrong.stderr
