"""llac.student_t (the p-values and prediction-interval quantiles of a fit) against scipy.stats
and against closed forms."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats

from llac import student_t

DEGREES = [1, 2, 3, 5, 10, 37, 100, 150, 1000, 10_000]
TVALUES = [0.0, 0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 40.0, 1e3, 1e6]


@pytest.mark.parametrize("df", DEGREES)
def test_two_sided_p_equals_scipy(df):
    ours = student_t.two_sided_p(np.array(TVALUES + [-2.0]), df)
    theirs = 2 * stats.t.sf(np.abs(TVALUES + [-2.0]), df)
    np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("df", DEGREES)
@pytest.mark.parametrize("alpha", [0.5, 0.1, 0.05, 0.01, 1e-4])
def test_quantile_equals_scipy(df, alpha):
    assert student_t.quantile(alpha / 2, df) == pytest.approx(stats.t.ppf(1 - alpha / 2, df), rel=1e-11)


def test_closed_forms_of_one_and_two_degrees_of_freedom():
    # Cauchy: P(T > t) = 1/2 - atan(t)/π; df = 2: t = (1 - 2u)/sqrt(2u(1 - u)) at P(T > t) = u
    for t in (1e-8, 0.3, 1.0, 7.0, 1e4):
        assert student_t.upper_tail(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, rel=1e-14)
    for upper in (1e-8, 0.005, 0.25):
        exact = (1 - 2 * upper) / math.sqrt(2 * upper * (1 - upper))
        assert student_t.quantile(upper, 2) == pytest.approx(exact, rel=1e-12)


def test_infinite_and_nan_t():
    np.testing.assert_array_equal(student_t.two_sided_p(np.array([np.inf, -np.inf]), 4), [0.0, 0.0])
    assert np.isnan(student_t.two_sided_p(np.array([np.nan]), 4)).all()
    assert student_t.quantile(0.5, 7) == pytest.approx(0.0, abs=1e-15)


@given(st.floats(1e-12, 0.5), st.integers(1, 100_000))
def test_quantile_inverts_upper_tail(upper, df):
    t = student_t.quantile(upper, df)
    assert student_t.upper_tail(t, df) == pytest.approx(upper, rel=1e-9)
