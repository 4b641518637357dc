"""Zero-division and edge cases of the metric kernels: numba raises no ZeroDivisionError, so check values."""

import numpy as np
import pytest

from lambda_objectives import metric_values

pytestmark = pytest.mark.kernel


def test_single_document_queries():
    s, y, ptr = [0.5, 0.1], [2.0, 0.0], [0, 1, 2]
    np.testing.assert_array_equal(metric_values(s, y, ptr, "ndcg"), [1.0, 1.0])
    np.testing.assert_array_equal(metric_values(s, y, ptr, "map"), [1.0, 0.0])
    np.testing.assert_array_equal(metric_values(s, y, ptr, "mrr"), [1.0, 0.0])
    np.testing.assert_allclose(metric_values(s, y, ptr, "err"), [0.75, 0.0])


@pytest.mark.parametrize("ideal_zero, expected", [("one", 1.0), ("zero", 0.0)])
def test_all_zero_labels(ideal_zero, expected):
    s, y, ptr = [0.3, 0.2, 0.1], [0.0, 0.0, 0.0], [0, 3]
    assert metric_values(s, y, ptr, "ndcg", ideal_zero=ideal_zero)[0] == expected
    assert metric_values(s, y, ptr, "dcg")[0] == 0.0
    assert metric_values(s, y, ptr, "map")[0] == 0.0
    assert metric_values(s, y, ptr, "mrr")[0] == 0.0
    assert metric_values(s, y, ptr, "err")[0] == 0.0  # max_label 0: R = 0 / 1


def test_all_zero_labels_drop_gives_nan():
    assert np.isnan(metric_values([0.3, 0.2], [0.0, 0.0], [0, 2], "ndcg", ideal_zero="drop")[0])


def test_relevant_only_below_cutoff():
    s, y, ptr = [0.3, 0.2, 0.1], [0.0, 0.0, 1.0], [0, 3]
    assert metric_values(s, y, ptr, "ndcg@2")[0] == 0.0
    assert metric_values(s, y, ptr, "map@2")[0] == 0.0
    assert metric_values(s, y, ptr, "mrr@2")[0] == 0.0
    assert metric_values(s, y, ptr, "err@2")[0] == 0.0


def test_k_larger_than_list_and_no_queries():
    s, y, ptr = [0.3, 0.2], [1.0, 2.0], [0, 2]
    for m in ("ndcg", "err", "map", "mrr", "dcg"):
        assert metric_values(s, y, ptr, m, 1000)[0] == metric_values(s, y, ptr, m)[0]
        assert metric_values([], [], [0], m).shape == (0,)


def test_empty_group_rejected():
    with pytest.raises(ValueError, match="empty"):
        metric_values([0.1, 0.2], [1.0, 0.0], [0, 0, 2], "ndcg")
