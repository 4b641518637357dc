"""CatBoost's LambdaMart derivatives (lambda_objectives._kernels.catboost via catboost_lambdamart_gradients).

Hand-computed cases (pure kernels, also under NUMBA_DISABLE_JIT=1) and the engine itself through
the probe (skipped without catboost).
"""

import math

import numpy as np
import pytest

from lambda_objectives.catboost import catboost_lambdamart_gradients, catboost_loss_function
from lambda_objectives import lambda_gradients


def _rho(ds, sigma=1.0):
    return 1.0 / (1.0 + math.exp(sigma * ds))


def _expected(s, pairs, sigma=1.0):
    """grad/hess from (hi, lo, delta) pairs with CatBoost's pair rule, no normalisation."""
    g, h = np.zeros(len(s)), np.zeros(len(s))
    for hi, lo, d in pairs:
        r = _rho(s[hi] - s[lo], sigma)
        g[hi] -= sigma * d * r
        g[lo] += sigma * d * r
        h[hi] += sigma * sigma * d * r * (1 - r)
        h[lo] += sigma * sigma * d * r * (1 - r)
    return g, h


@pytest.mark.kernel
def test_ndcg_linear_gain_by_hand_and_equal_to_dcg_and_our_exact_linear_lambda():
    s, y = np.array([0.5, 0.2, -0.1]), np.array([0.0, 1.0, 2.0])  # ranking: doc0, doc1, doc2
    ideal = 2.0 + 1.0 / math.log2(3)
    d1, d2 = 1.0 / math.log2(3), 0.5  # discounts 1/log2(2 + p) at p = 1, 2
    want = _expected(s, [(2, 0, 2 * (1 - d2) / ideal), (1, 0, 1 * (1 - d1) / ideal), (2, 1, 1 * (d1 - d2) / ideal)])
    for metric in ("ndcg", "dcg"):  # CatBoost divides DCG's weights by the ideal DCG as well
        got = catboost_lambdamart_gradients(s, y, [0, 3], metric, norm=False)
        np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(lambda_gradients(s, y, [0, 3], "ndcg", gain="linear"), want, rtol=1e-12)


@pytest.mark.kernel
def test_norm_divides_by_score_gap_then_scales_by_log2_1_plus_s_over_s():
    s, y = np.array([0.3, 0.0]), np.array([0.0, 1.0])  # doc1 (label 1) ranked second
    delta = (1.0 - 1.0 / math.log2(3)) / 1.0 / (0.01 + 0.3)
    g, h = _expected(s, [(1, 0, delta)], sigma=2.0)
    total = -2 * g[1]
    f = math.log2(1 + total) / total
    got = catboost_lambdamart_gradients(s, y, [0, 2], "ndcg", sigma=2.0, norm=True)
    np.testing.assert_allclose(got, (g * f, h * f), rtol=1e-14)
    # equal scores: no division by the gap (CatBoost's "all approxes the same" case), the log2 factor stays
    g0, h0 = _expected(np.zeros(2), [(1, 0, 1.0 - 1.0 / math.log2(3))])
    f0 = math.log2(1 - 2 * g0[1]) / (-2 * g0[1])
    np.testing.assert_allclose(catboost_lambdamart_gradients(np.zeros(2), y, [0, 2], "ndcg"), (g0 * f0, h0 * f0),
                               rtol=1e-14)


@pytest.mark.kernel
def test_top_keeps_pairs_touching_the_top_and_an_untruncated_discount():
    s, y = np.array([0.9, 0.5, 0.1, -0.4]), np.array([0.0, 0.0, 1.0, 2.0])
    ideal = 2.0  # top=1: the best target at position 0
    D = [1.0 / math.log2(2 + p) for p in range(4)]
    pairs = [(2, 0, 1 * (D[0] - D[2]) / ideal), (3, 0, 2 * (D[0] - D[3]) / ideal)]  # pairs with position 0
    got = catboost_lambdamart_gradients(s, y, [0, 4], "ndcg", top=1, norm=False)
    np.testing.assert_allclose(got, _expected(s, pairs), rtol=1e-14)


@pytest.mark.kernel
def test_mrr_weights_a_later_relevant_document_as_if_it_were_the_only_one():
    # ranking doc2 (label 0), doc0 (2), doc1 (1); RR = 1/2. Swapping doc1 (rank 3) and doc2 (rank 1)
    # gives RR = 1: exact |ΔRR| = 1/2, CatBoost's weight 1/1 − 1/3 = 2/3.
    s, y = np.array([0.32, -0.82, 0.73]), np.array([2.0, 1.0, 0.0])
    got = catboost_lambdamart_gradients(s, y, [0, 3], "mrr", norm=False)
    np.testing.assert_allclose(got, _expected(s, [(0, 2, 0.5), (1, 2, 2 / 3)]), rtol=1e-14)
    np.testing.assert_allclose(lambda_gradients(s, y, [0, 3], "mrr"), _expected(s, [(0, 2, 0.5), (1, 2, 0.5)]),
                               rtol=1e-12)


@pytest.mark.kernel
def test_err_skips_same_target_documents_in_the_running_products():
    # stop probabilities [1/2, 1/2, 0] in ranked order. ERR = 1/2 + (1/2)(1/2)/2 = 5/8.
    # swap ranks 1 and 3 -> [0, 1/2, 1/2]: ERR = 1/4 + 1/12 = 1/3, exact |ΔERR| = 7/24;
    # CatBoost skips doc1 (same target as doc0) in between and weights the pair 1 − 1/3 = 1/3.
    # swap ranks 2 and 3 -> [1/2, 0, 1/2]: ERR = 1/2 + 1/12, |ΔERR| = 1/24 in both.
    s, t = np.array([0.9, 0.4, -0.3]), np.array([0.5, 0.5, 0.0])
    got = catboost_lambdamart_gradients(s, t, [0, 3], "err", norm=False)
    np.testing.assert_allclose(got, _expected(s, [(0, 2, 1 / 3), (1, 2, 1 / 24)]), rtol=1e-14)
    # our exact ERR with R = (2**l − 1)/2**max_label: labels [1, 1, 0] give R = [1/2, 1/2, 0]
    exact = lambda_gradients(s, np.array([1.0, 1.0, 0.0]), [0, 3], "err")
    np.testing.assert_allclose(exact, _expected(s, [(0, 2, 7 / 24), (1, 2, 1 / 24)]), rtol=1e-12)


@pytest.mark.kernel
def test_map_weight_is_not_the_change_of_average_precision():
    # relevance [1, 0, 1] in ranked order, AP = (1 + 2/3)/2 = 5/6.
    # swap ranks 1, 2 -> AP 7/12, |ΔAP| = 1/4; swap ranks 2, 3 -> AP 1, |ΔAP| = 1/6.
    # CatBoost: pair (rank 1 relevant, rank 2): 1/1; pair (rank 2 irrelevant, rank 3): 1/2.
    s, y = np.array([0.6, 0.1, -0.2]), np.array([1.0, 0.0, 1.0])
    got = catboost_lambdamart_gradients(s, y, [0, 3], "map", norm=False)
    np.testing.assert_allclose(got, _expected(s, [(0, 1, 1.0), (2, 1, 0.5)]), rtol=1e-14)
    np.testing.assert_allclose(lambda_gradients(s, y, [0, 3], "map"), _expected(s, [(0, 1, 0.25), (2, 1, 1 / 6)]),
                               rtol=1e-12)


@pytest.mark.kernel
def test_ties_in_input_order_single_document_queries_zero_and_threads_do_not_matter():
    rng = np.random.default_rng(4)
    ptr = np.r_[0, np.cumsum(rng.integers(1, 9, size=40))]
    s = np.round(rng.normal(size=ptr[-1]), 1)  # many ties
    y = rng.integers(0, 3, size=ptr[-1]).astype(float)
    one = catboost_lambdamart_gradients(s, y, ptr, "ndcg", n_threads=1)
    two = catboost_lambdamart_gradients(s, y, ptr, "ndcg", n_threads=2)
    np.testing.assert_array_equal(one, two)
    singles = np.flatnonzero(np.diff(ptr) == 1)
    assert np.all(one[0][ptr[singles]] == 0)
    # two tied documents: the earlier one is ranked first
    g, _ = catboost_lambdamart_gradients([0.0, 0.0], [0.0, 1.0], [0, 2], "ndcg", norm=False)
    np.testing.assert_allclose(g, _expected(np.zeros(2), [(1, 0, 1 - 1 / math.log2(3))])[0], rtol=1e-14)


@pytest.mark.parametrize("metric", ["ndcg", "dcg", "mrr", "err", "map"])
def test_reproduces_catboost_itself_through_the_probe(metric):
    pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")
    from lambda_objectives.validation import probe_catboost

    rng = np.random.default_rng(7)
    ptr = np.array([0, 9, 14, 27])
    s = np.round(rng.normal(size=27), 1).astype(np.float32).astype(float)  # ties; float32 as CatBoost's baseline
    y = rng.integers(0, 3, size=27).astype(float)
    if metric == "err":
        y = (2.0 ** y - 1) / 4.0  # stop probabilities in [0, 1], CatBoost's ERR domain
    options = [{"norm": False}, {"norm": True}, {"top": 3, "norm": False}, {"top": 4, "sigma": 2.0}]
    if metric in ("ndcg", "dcg"):
        options += [{"gain": "exp", "norm": False}, {"denominator": "position", "norm": False}]
    for opt in options:
        d1, d2 = probe_catboost(s, y, ptr, catboost_loss_function(metric, **opt))
        g, h = catboost_lambdamart_gradients(s, y, ptr, metric, **opt)
        keep = np.isfinite(d2)
        np.testing.assert_allclose(d1, g, rtol=1e-9, atol=1e-12, err_msg=str(opt))
        np.testing.assert_allclose(d2[keep], h[keep], rtol=1e-9, atol=1e-12, err_msg=str(opt))
