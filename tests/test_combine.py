"""Tests of lambda_objectives.diagnostics.combine: the exact sweep against brute force and a dense grid."""

import numpy as np
import pytest

from lambda_objectives import mean_metric
from lambda_objectives.diagnostics.combine import best_linear_combination, combination_breakpoints


def _data(seed, nq=25):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 30, nq)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.choice(5, size=ptr[-1], p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(float)
    s1 = y + rng.normal(0, 1.5, ptr[-1])
    s2 = y + rng.normal(0, 1.5, ptr[-1])
    return s1, s2, y, ptr


@pytest.mark.parametrize("metric", ["ndcg@10", "err@5", "map", "mrr@3"])
def test_exact_equals_brute_force_over_all_intervals_and_beats_grid(metric):
    s1, s2, y, ptr = _data(1)
    alpha, value = best_linear_combination(s1, s2, y, ptr, metric)
    assert value == pytest.approx(mean_metric(alpha * s1 + (1 - alpha) * s2, y, ptr, metric), abs=1e-12)
    bps, _ = combination_breakpoints(s1, s2, y, ptr)
    edges = np.concatenate(([0.0], np.unique(bps), [1.0]))
    mids = (edges[:-1] + edges[1:]) / 2
    brute = max(mean_metric(a * s1 + (1 - a) * s2, y, ptr, metric) for a in np.concatenate((mids, [0.0, 1.0])))
    assert value == pytest.approx(brute, abs=1e-12)
    grid = max(mean_metric(a * s1 + (1 - a) * s2, y, ptr, metric) for a in np.linspace(0, 1, 501))
    assert value >= grid - 1e-12


def test_breakpoints_are_crossings_of_differently_labelled_documents():
    s1, s2, y, ptr = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([0, 2])
    a, q = combination_breakpoints(s1, s2, y, ptr)
    np.testing.assert_allclose(a, [0.5])
    alpha, value = best_linear_combination(s1, s2, y, ptr, "ndcg")  # whole list
    assert value == 1.0 and alpha > 0.5
    y_same = np.array([1.0, 1.0])
    assert combination_breakpoints(s1, s2, y_same, ptr)[0].size == 0


def test_bad_input():
    with pytest.raises(ValueError, match="s2 has"):
        best_linear_combination([1.0, 2.0], [1.0], [0.0, 1.0], [0, 2])
    with pytest.raises(ValueError, match="non-finite"):
        best_linear_combination([1.0, np.nan], [1.0, 2.0], [0.0, 1.0], [0, 2])
