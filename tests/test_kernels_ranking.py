"""The shared ranking pieces of every kernel (``_kernels/ranking.py``) against their definitions."""

import numpy as np
import pytest

from lambda_objectives._kernels.ranking import (
    _bucket_order_desc,
    _radix_order_desc,
    cutoff,
    discount_table,
    document_gains,
    gain_table,
    ideal_dcg,
    rank_desc,
    stable_order_desc,
)

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("n", [0, 1, 5, 48, 49, 300])
def test_stable_order_is_descending_with_ties_in_input_order(n):
    s = np.round(np.random.default_rng(n).normal(size=n), 1)
    np.testing.assert_array_equal(stable_order_desc(s), sorted(range(n), key=lambda i: (-s[i], i)))


def test_stable_order_desc_is_the_merge_sort_at_every_size_and_on_awkward_scores():
    # insertion (<= 48), merge (<= 256) and radix (above) paths must give one permutation:
    # np.argsort(-s, kind="mergesort"), with -0.0 tying 0.0, infinities at the ends and NaN last
    rng = np.random.default_rng(11)
    cases = []
    for n in (48, 49, 256, 257, 1025, 20_000):
        cases.append(rng.normal(size=n))
        cases.append(np.round(rng.normal(size=n), 1))  # many ties
    mixed = rng.normal(size=4000)
    mixed[::5], mixed[1::5] = 0.0, -0.0
    mixed[7], mixed[8], mixed[9] = np.inf, -np.inf, 5e-324
    cases += [mixed, np.full(2000, -3.5), np.r_[np.full(1500, 2.0), 1.0], rng.integers(-3, 4, 5000) * 1e300,
              np.exp2(rng.integers(0, 5, 5000).astype(np.float64)) - 1.0,  # graded gains: few bits differ
              np.r_[rng.normal(size=2000), np.nan, rng.normal(size=10)]]
    for s in cases:
        got = stable_order_desc(s)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.argsort(-s, kind="mergesort"))
        for cap in (1, 2):  # over the cap of passes: the merge sort, the same permutation
            np.testing.assert_array_equal(_radix_order_desc(s, cap), got)


def test_the_bucket_sort_is_the_merge_sort_however_the_scores_bunch():
    """``_bucket_order_desc`` (every finite list above 48 scores): buckets by value, so heavy tails,
    one far outlier (every other score in one bucket: the per-bucket merge sort), a range of
    subnormals, a range that overflows (±1e308: refused, the radix sort instead), few distinct scores
    and signed zeros must all give the merge sort's permutation."""
    rng = np.random.default_rng(12)
    for n in (49, 100, 257, 3000):
        for s in (rng.standard_cauchy(n), np.exp(5.0 * rng.normal(size=n)), np.r_[rng.normal(size=n - 1), 1e300],
                  np.r_[rng.normal(size=n - 1) * 1e-320, 0.0], np.r_[-1e308, rng.normal(size=n - 2), 1e308],
                  rng.integers(0, 3, n) * 1.0, np.where(rng.random(n) < 0.5, 0.0, -0.0),
                  np.r_[np.full(n - 30, 1.0), rng.normal(size=30)], np.r_[rng.normal(size=n - 30), np.full(30, 0.5)],
                  1.0 + 1e-15 * rng.integers(0, 40, n)):
            got = _bucket_order_desc(s)
            expect = np.argsort(-s, kind="mergesort")
            with np.errstate(divide="ignore", over="ignore"):
                span = np.max(s) - np.min(s)
                refused = not (np.isfinite(span) and (span == 0 or np.isfinite((n - 1) / span)))
            if refused:  # the range overflows or is too narrow to scale: the caller sorts instead
                assert got.shape == (0,)
            else:
                np.testing.assert_array_equal(got, expect)
            np.testing.assert_array_equal(stable_order_desc(s), expect)
    assert _bucket_order_desc(np.r_[1.0, np.inf, 0.0]).shape == (0,)
    assert _bucket_order_desc(np.r_[1.0, np.nan, 0.0]).shape == (0,)


def test_rank_desc_is_the_merge_sort_with_its_scores():
    """``rank_desc`` (the sampled pairs' ranking into the caller's arrays, issue #47): the merge sort's
    permutation and the scores in that order, on every path: insertion (up to 48 scores), the one
    insertion pass over the whole array (every bucket at most 24 scores), the per-bucket sorts (a bucket
    of more, as 30 close scores or one far outlier give), and the fallback for non-finite scores or an
    overflowing range; the arrays it is given may be longer and hold garbage."""
    rng = np.random.default_rng(47)
    for n in (1, 2, 48, 49, 100, 257, 3000):
        cases = [rng.normal(size=n), np.round(rng.normal(size=n), 1), rng.normal(size=n).astype(np.float32) * 1.0,
                 rng.standard_cauchy(n), np.r_[rng.normal(size=n - 1), 1e300][:n],
                 np.r_[rng.normal(size=max(n - 30, 0)), 1e-9 * rng.normal(size=min(30, n))],
                 np.where(rng.random(n) < 0.5, 0.0, -0.0), rng.integers(0, 3, n) * 1.0, np.full(n, 2.5),
                 np.r_[-1e308, rng.normal(size=max(n - 2, 0)), 1e308][:n], np.r_[rng.normal(size=n - 1), np.inf][:n]]
        for s in cases:
            order = np.full(n + 5, -7, dtype=np.int64)
            sr = np.full(n + 5, np.nan)
            rank_desc(s, order[:n], sr[:n], np.full(2 * n + 9, -3, dtype=np.int64))
            expect = np.argsort(-s, kind="mergesort")
            np.testing.assert_array_equal(order[:n], expect)
            np.testing.assert_array_equal(sr[:n], s[expect])


def test_ideal_dcg_is_the_descending_sort_at_every_size():
    rng = np.random.default_rng(5)
    for n in (3, 60, 200, 3000):
        g = np.exp2(rng.integers(0, 5, n).astype(np.float64)) - 1.0
        disc = discount_table(n)
        for k in (0, 1, 10):
            kk = n if k == 0 else min(k, n)
            assert ideal_dcg(g, k, disc) == sum(np.sort(g)[::-1][:kk] * disc[:kk])
    # whole gains are counted, others sorted (real-valued ones need more than two radix passes: the
    # merge sort; whole ones at or above the counting range: the radix sort): the same sum every way
    for n in (5, 120, 400):
        disc = discount_table(n)
        for g in (rng.random(n) * 5.0, np.exp2(rng.integers(0, 14, n).astype(np.float64)) - 1.0,
                  rng.integers(0, 3, n) * 255.0, rng.integers(0, 3, n) * 256.0, np.zeros(n)):
            for k in (0, 1, 3, n + 5):
                kk = n if k == 0 else min(k, n)
                assert ideal_dcg(g, k, disc) == sum(np.sort(g)[::-1][:kk] * disc[:kk])


def test_discount_prefix_is_the_table_of_that_length_bit_for_bit():
    """The process-wide longest table's prefix: the same bits as a table of that length, whether it
    grows, shrinks or stays, and at least one entry (as ``discount_table``)."""
    from lambda_objectives._kernels.ranking import discount_prefix

    for n in (5, 1, 3000, 17, 0, 7000, 2999):
        got = discount_prefix(n)
        np.testing.assert_array_equal(got, discount_table(max(n, 1)))
        assert got.dtype == np.float64 and got.flags.c_contiguous and got.shape == (max(n, 1),)


def test_discount_table_is_the_definition_with_libms_scalar_log2_bit_for_bit():
    # libm's scalar log2 is what LightGBM and XGBoost build their tables with; numpy's vectorised
    # log2 may take a SIMD path that differs by one ulp on some CPUs (7 of 100,000 here)
    import math

    d = discount_table(100_000)
    np.testing.assert_array_equal(d, [1.0 / math.log2(r + 2.0) for r in range(100_000)])
    np.testing.assert_allclose(d, 1.0 / np.log2(np.arange(100_000) + 2.0), rtol=1e-15, atol=0)
    assert d[0] == 1.0 and d[2] == 0.5


def test_cutoff_ideal_dcg_and_gains():
    assert (cutoff(5, 0), cutoff(5, 3), cutoff(5, 9)) == (5, 3, 5)
    g = np.array([0.0, 3.0, 1.0, 7.0])
    disc = discount_table(4)
    assert ideal_dcg(g, 2, disc) == 7.0 + 3.0 / np.log2(3.0)
    assert ideal_dcg(np.zeros(3), 0, disc) == 0.0
    np.testing.assert_array_equal(document_gains(np.array([0.0, 1.0, 3.0])), [0.0, 1.0, 7.0])
    np.testing.assert_array_equal(document_gains(np.array([0.0, 2.0]), "linear"), [0.0, 2.0])
    np.testing.assert_array_equal(gain_table("exp", max_label=30), [2.0 ** i - 1 for i in range(31)])
    np.testing.assert_array_equal(document_gains(np.array([1.0, 0.0]), label_gain=[0.5, 2.0]), [2.0, 0.5])
    with pytest.raises(ValueError, match="no entry in label_gain"):
        document_gains(np.array([2.0]), label_gain=[0.0, 1.0])
    with pytest.raises(ValueError, match="gain must be"):
        document_gains(np.array([1.0]), "cubic")


def test_stable_order_asc_is_the_merge_sort_by_counting_or_by_falling_back():
    from lambda_objectives._kernels.ranking import stable_order_asc

    rng = np.random.default_rng(3)
    cases = [np.array([], dtype=np.float64), np.array([2.0]), np.array([-0.0, 0.0, -0.0, 1.0, 0.0]),
             rng.integers(0, 5, 1000).astype(np.float64),  # graded: counted
             rng.integers(0, 256, 3000).astype(np.float64),  # the largest counted grade
             np.r_[rng.integers(0, 5, 50), 256].astype(np.float64),  # one grade past the table: merge sort
             rng.integers(0, 3, 200) + 0.5,  # fractional: merge sort
             np.r_[rng.integers(0, 4, 60), -1].astype(np.float64)]  # negative: merge sort
    for v in cases:
        got = stable_order_asc(v)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.argsort(v, kind="mergesort"))
