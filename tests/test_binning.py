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


@pytest.mark.parametrize("n_features", [3, 8, 9, 16, 17])
def test_packed_words_hold_every_rows_bins(n_features):
    """``pack_bins``: word ``[k, r]`` holds row ``r``'s bins of features ``8k .. 8k + 7``, feature ``8k + j``
    in byte ``j`` (the NaN bin 255 included), the features past the last one 0; anything but a 2-D uint8
    matrix is refused."""
    from reference.binning import pack_bins

    rng = np.random.default_rng(n_features)
    binned = np.asfortranarray(rng.integers(0, 256, size=(50, n_features)).astype(np.uint8))
    binned[0] = 255
    words = pack_bins(binned)
    assert words.dtype == np.uint64 and words.flags.c_contiguous and words.shape == ((n_features + 7) // 8, 50)
    for f in range(words.shape[0] * 8):
        byte = (words[f // 8] >> np.uint64(8 * (f % 8))) & np.uint64(0xFF)
        np.testing.assert_array_equal(byte, binned[:, f] if f < n_features else 0)
    for bad in (binned.astype(np.int64), binned[0]):
        with pytest.raises(ValueError, match="binned must be a 2-D uint8 array"):
            pack_bins(bad)
    # any layout of the same bins packs to the same words: C order, a strided view, one row, no rows
    np.testing.assert_array_equal(pack_bins(np.ascontiguousarray(binned)), words)
    np.testing.assert_array_equal(pack_bins(np.asfortranarray(binned[::3])), words[:, ::3])
    np.testing.assert_array_equal(pack_bins(binned[7:8]), words[:, 7:8])
    empty = pack_bins(binned[:0])
    assert empty.shape == (words.shape[0], 0) and empty.dtype == np.uint64
