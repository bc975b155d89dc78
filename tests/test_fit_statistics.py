"""llac's numpy statistics of a relative fit (llac.fit.fit_statistics) against statsmodels'
WLS, which computed them before: the same constants, standard errors, covariance, p-values,
R², scale and degrees of freedom to 1e-9 relative, on seeded and on generated data; and the
median that replaces np.median."""
import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, strategies as st

from cll_grammar.formula import parse_formula
from llac.fit import fit_statistics, median, relative_fit

RTOL = 1e-9


def reference(design: np.ndarray, time: np.ndarray, base: np.ndarray) -> dict:
    """What the statsmodels-based fit_statistics of llac 0.1 reported (its code, verbatim)."""
    scale = np.abs(design).max(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    result = sm.WLS(time, design / scale, weights=1.0 / base ** 2).fit()
    df = int(round(result.df_resid))
    cov = np.asarray(result.cov_params()) / np.outer(scale, scale)
    return {"constants": np.asarray(result.params) / scale, "stderr": np.sqrt(np.diag(cov)),
            "pvalues": np.asarray(result.pvalues), "cov": cov, "df": df,
            "r2": float(1 - result.ssr / result.centered_tss),
            "scale": float(np.sqrt(result.scale))}


def assert_same(design: np.ndarray, time: np.ndarray) -> None:
    """fit_statistics of the relative fit of (design, time) equals the statsmodels reference."""
    fit = relative_fit(design, time)
    ours, theirs = fit_statistics(design, time, fit), reference(design, time, fit.base)
    assert ours.df == theirs["df"]
    for name in ("constants", "stderr", "cov", "scale"):
        np.testing.assert_allclose(getattr(ours, name), theirs[name], rtol=RTOL, atol=0, err_msg=name)
    assert ours.r2 == pytest.approx(theirs["r2"], rel=RTOL, abs=1e-11)  # 1 - ratio: near 0 absolute
    # p-values below 1e-300 are at the end of float range; both are ~0 there
    np.testing.assert_allclose(ours.pvalues, theirs["pvalues"], rtol=RTOL, atol=1e-300)


CASES = [
    ("f[0] + f[1]*N", {"N": 2.0 ** np.arange(4, 21)}, [1e-5, 1e-9], 0.03),
    ("f[0] + f[1]*N*log(N)", {"N": 2.0 ** np.arange(8, 28, 0.5)}, [2e-6, 3e-9], 0.001),
    ("f[0] + f[1]*N + f[2]*N*N", {"N": 2.0 ** np.arange(4, 14)}, [1e-5, 1e-8, 1e-13], 0.05),
    ("f[0] + f[1]*(N/P)*log(N/P) + f[2]*N*(P-1)/P",
     {"N": 2.0 ** np.arange(10, 20), "P": [1, 2, 4, 8, 16]}, [1e-4, 2e-9, 1e-9], 0.03),
    ("f[0] + f[1]*N", {"N": [16.0, 64.0, 256.0]}, [1e-5, 1e-9], 0.03),   # one residual df
]


@pytest.mark.parametrize("formula, axes, constants, noise", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_statistics_equal_statsmodels_wls_on_seeded_data(formula, axes, constants, noise, seed):
    parsed = parse_formula(formula)
    mesh = np.meshgrid(*(np.asarray(v, dtype=float) for v in axes.values()), indexing="ij")
    columns = {name: m.ravel() for name, m in zip(axes, mesh)}
    design = parsed.design_matrix(columns)
    rng = np.random.default_rng(seed)
    time = design @ np.asarray(constants) * rng.lognormal(0, noise, len(design))
    assert_same(design, time)


def test_as_many_points_as_constants_gives_no_standard_errors():
    design = np.array([[1.0, 16.0], [1.0, 64.0]])
    stats = fit_statistics(design, np.array([2e-5, 7e-5]), relative_fit(design, np.array([2e-5, 7e-5])))
    assert stats.df == 0 and np.isnan(stats.scale)
    assert np.isnan(stats.pvalues).all() and np.isnan(stats.cov).all() and np.isnan(stats.stderr).all()
    np.testing.assert_allclose(design @ stats.constants, [2e-5, 7e-5], rtol=1e-12)


@given(st.integers(3, 40), st.integers(1, 3), st.floats(1e-4, 0.3), st.integers(0, 2 ** 32 - 1))
def test_statistics_equal_statsmodels_wls_on_generated_data(n, k, noise, seed):
    rng = np.random.default_rng(seed)
    sizes = np.sort(rng.choice(np.arange(1, 10_000), size=max(n, k + 1), replace=False)).astype(float)
    design = np.stack([sizes ** (j / 2) for j in range(k)], axis=1)
    constants = 10.0 ** rng.uniform(-9, -3, k)
    time = design @ constants * rng.lognormal(0, noise, len(sizes))
    assert_same(design, time)


@given(st.lists(st.floats(-1e300, 1e300) | st.just(np.nan), min_size=1, max_size=30))
def test_median_equals_numpy(values):
    array = np.array(values)
    expected = np.median(array)
    assert median(array) == expected or (np.isnan(expected) and np.isnan(median(array)))
