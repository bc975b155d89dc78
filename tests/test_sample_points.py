"""Aggregation of records into sample points (llac.fit_data.aggregate_points), against a plain
Python reference on generated data: both of its sorting paths (up to 65,536 groups and more),
NaN variables (each record its own group), ties in time, every aggregate."""
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cll_grammar.formula import parse_formula
from llac.fit_data import AGGREGATES, aggregate_points, summary

REDUCE = {"median": statistics.median, "min": min, "mean": statistics.fmean}


def reference(names: list[str], columns: dict, aggregate: str) -> list[tuple]:
    """(key values, aggregated time, count) per group in key order (NaN after every number),
    by dictionaries."""
    groups: dict[tuple, list[float]] = {}
    keys = list(zip(*(columns[v].tolist() for v in names))) or [()] * len(columns["time"])
    for row, (t, key) in enumerate(zip(columns["time"].tolist(), keys)):
        if math.isfinite(t) and t > 0:
            groups.setdefault(key if not any(map(math.isnan, key)) else (*key, row), []).append(t)
    order = sorted(groups, key=lambda key: [(math.isnan(k), 0 if math.isnan(k) else k) for k in key])
    return [(key[:len(names)], REDUCE[aggregate](groups[key]), len(groups[key])) for key in order]


def assert_matches(formula: str, columns: dict, aggregate: str) -> None:
    parsed = parse_formula(formula)
    points = aggregate_points(parsed, columns, aggregate)
    expected = reference(list(parsed.variables), columns, aggregate)
    assert len(points) == len(expected)
    keys = np.array([key for key, _, _ in expected]).reshape(len(expected), len(parsed.variables))
    for i, v in enumerate(parsed.variables):
        np.testing.assert_array_equal(points.variables[v], keys[:, i])
    np.testing.assert_array_equal(points.count, [count for _, _, count in expected])
    np.testing.assert_allclose(points.time, [time for _, time, _ in expected], rtol=1e-12)


values = st.sampled_from([1.0, 2.0, 4.0, 16.0, 1e6, math.nan])
record = st.tuples(values, values, st.sampled_from([1e-6, 2e-6, 3e-3, 0.5, 0.0, -1.0, math.inf, math.nan]))


@given(st.lists(record, min_size=1, max_size=60), st.sampled_from(AGGREGATES))
def test_sample_points_equal_a_dictionary_reference(records, aggregate):
    N, P, time = (np.array(c) for c in zip(*records))
    columns = {"N": N, "P": P, "time": time}
    if not (np.isfinite(time) & (time > 0)).any():
        return   # no valid time: an error, tested in test_fit.py
    assert_matches("f[0] + f[1]*N/P", columns, aggregate)
    assert_matches("f[0] + f[1]*N", columns, aggregate)
    assert_matches("f[0]", columns, aggregate)


@pytest.mark.parametrize("aggregate", AGGREGATES)
def test_more_than_65536_groups(aggregate):
    rng = np.random.default_rng(5)
    N = rng.permutation(np.repeat(np.arange(70_000.0), 2))
    columns = {"N": N, "time": rng.lognormal(0, 1, len(N))}
    assert_matches("f[0] + f[1]*N", columns, aggregate)


@given(st.lists(record, min_size=1, max_size=60))
def test_repetitions_count_the_records_the_fit_uses_with_the_same_grouping(records):
    """`describe`'s repetitions per sample point (llac.tables) group as the fit does and count
    the records it does: not those whose time is NaN, inf or not positive (a review found
    describe counting them, session 40), nor a point that has only such records."""
    from llac.experiment import Experiment
    from llac.tables import repetitions
    N, P, time = (np.array(c) for c in zip(*records))
    experiment = Experiment("e", parse_formula("f[0] + f[1]*N/P"), {"N": N, "P": P, "time": time})
    counts = [count for _, _, count in reference(["N", "P"], {"N": N, "P": P, "time": time}, "min")]
    np.testing.assert_array_equal(repetitions(experiment)[1], counts)


@pytest.mark.parametrize("values", [[3.0], [4.0, 1.0], [5.0, 1.0, 2.0, 9.0], [2.0, 7.0, 1.0]])
def test_summary_of_one_group_is_the_estimator_of_the_grouped_one(values):
    assert summary(values, "min") == min(values)
    assert summary(values, "median") == pytest.approx(float(np.median(values)))
    assert summary(values, "mean") == pytest.approx(float(np.mean(values)))
