"""reference.binning: the bins against their definition (thresholds, NaN bin, round trip)."""

import numpy as np
import pytest

from reference import BinMapper
from reference.binning import MISSING_BIN


def test_few_values_get_one_bin_each_with_midpoint_thresholds():
    X = np.array([[1.0], [3.0], [3.0], [7.0], [np.nan]])
    m = BinMapper().fit(X)
    np.testing.assert_array_equal(m.thresholds_[0], [2.0, 5.0])
    np.testing.assert_array_equal(m.transform(X)[:, 0], [0, 1, 1, 2, MISSING_BIN])
    assert m.bin_upper_value(0, 0) == 2.0 and m.bin_upper_value(0, 2) == float("inf")


def test_many_values_respect_max_bin_order_and_the_definition():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    X[:, 2] = np.round(X[:, 2])  # a feature with few values
    m = BinMapper(16).fit(X)
    B = m.transform(X)
    for j in range(3):
        t = m.thresholds_[j]
        assert t.size + 1 <= 16 and np.all(np.diff(t) > 0)
        # x falls in bin b exactly when t[b-1] < x <= t[b]
        want = np.array([np.sum(t < x) for x in X[:, j]])
        np.testing.assert_array_equal(B[:, j], want)
        assert np.all(np.bincount(B[:, j], minlength=t.size + 1) > 0)  # no empty bin on its training data
    back = BinMapper.from_dict(m.to_dict())
    np.testing.assert_array_equal(back.transform(X), B)


def test_bad_input():
    with pytest.raises(ValueError, match="max_bin"):
        BinMapper(1)
    with pytest.raises(ValueError, match="not fitted"):
        BinMapper().transform(np.zeros((2, 2)))
    m = BinMapper().fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="features"):
        m.transform(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="2-D"):
        BinMapper().fit(np.zeros(3))
