"""Input checks (``lambda_objectives.checks``)."""

import numpy as np
import pytest

from lambda_objectives.checks import check_sample_weight


def test_check_sample_weight_accepts_valid_weights_and_copies_nothing_it_need_not():
    w = np.array([0.0, 1.5, 2.0, 0.0])
    out = check_sample_weight(w, 4)
    assert out.dtype == np.float64 and out is w  # already float64 and contiguous: no copy, not modified
    np.testing.assert_array_equal(check_sample_weight([1, 2], 2, per="query"), [1.0, 2.0])
    np.testing.assert_array_equal(check_sample_weight(np.ones((3, 1)), 3), np.ones(3))
    assert check_sample_weight(np.zeros(0), 0).shape == (0,)


@pytest.mark.parametrize("weight, n, kwargs, match", [
    ([1.0, np.nan, 1.0], 3, {}, r"sample_weight must be finite and non-negative, row 1 has nan \(1 bad"),
    ([1.0, 1.0, np.inf, -np.inf], 4, {}, r"row 2 has inf \(2 bad"),
    ([1.0, 1.0, 1.0, -0.5], 4, {"group_ptr": [0, 2, 4]}, r"row 3 \(query 1\) has -0.5"),
    ([1.0, -1.0], 2, {"per": "query"}, r"query 1 has -1.0"),
    ([0.0, 0.0, 0.0], 3, {}, "all zero"),
    ([1.0, 1.0], 3, {}, "has 2 values, expected one per row: 3 documents"),
    ([1.0, 1.0], 3, {"per": "query"}, "expected one per query: 3 queries"),
    (np.ones((2, 2)), 2, {}, "must be 1-D"),
    (["a", "b"], 2, {}, "must be numeric"),
    ([1.0], 1, {"per": "doc"}, "per must be"),
    ([1.0, np.nan], 2, {"name": "eval_sample_weight"}, "eval_sample_weight must be finite"),
])
def test_check_sample_weight_names_the_problem(weight, n, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_sample_weight(weight, n, **kwargs)


def test_positions_up_to_the_table_limit_pass_and_beyond_it_are_refused_by_row():
    from lambda_objectives.checks import MAX_POSITION, check_positions

    ptr = np.array([0, 2, 4])
    ok = check_positions(np.array([0, MAX_POSITION, 5, 1]), ptr)
    assert ok.dtype == np.int64 and ok[1] == MAX_POSITION
    for big in (MAX_POSITION + 1, 10 ** 12, 2 ** 62, float(2 ** 40)):
        with pytest.raises(ValueError, match=r"positions at row 3 is .*above 16,777,215"):
            check_positions(np.array([0, 1, 5, big]), ptr)
