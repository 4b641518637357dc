"""PL-Rank-3 with its Hessian: unbiased against the exact derivatives of E[DCG@K] (every ranking
enumerated), reproducible at any thread count, options checked, trains in both engines."""

import warnings

import numpy as np
import pytest

import _oracles as oracle
import lambda_objectives as lo
from lambda_objectives import lambda_gradients, numba_threads, plrank_gradients

#: small queries (n <= 5, every ranking enumerable) with the cut-offs they are tested at
SIZES = (1, 2, 3, 4, 5, 5)


def _data(seed=0, sizes=SIZES):
    rng = np.random.default_rng(seed)
    ptr = np.r_[0, np.cumsum(sizes)]
    s = rng.normal(size=ptr[-1])
    y = rng.integers(0, 4, ptr[-1]).astype(float)
    return s, y, ptr


def _exact(s, y, ptr, k):
    g1, g2 = [], []
    for a, b in zip(ptr[:-1], ptr[1:]):
        d1, d2 = oracle.pl_expected_dcg_derivatives(list(s[a:b]), list(y[a:b]), k)
        g1 += d1
        g2 += d2
    return np.array(g1), np.array(g2)


def _round_means(s, y, ptr, k, rounds, n_samples):
    out = [plrank_gradients(s, y, ptr, k=k, n_samples=n_samples, seed=3, iteration=r, hessian="raw")
           for r in range(rounds)]
    g, h = np.array([o[0] for o in out]), np.array([o[1] for o in out])
    se = lambda a: a.std(0, ddof=1) / np.sqrt(rounds)  # noqa: E731
    return g.mean(0), se(g), h.mean(0), se(h)


def _z(mean, se, want):
    keep = se > 0
    return np.abs(mean[keep] - want[keep]) / se[keep]


def test_oracle_derivatives_are_finite_differences_of_the_enumerated_expectation():
    s, y, _ = _data(sizes=(5,))
    eps = 1e-4
    for k in (None, 2):
        g1, g2 = oracle.pl_expected_dcg_derivatives(list(s), list(y), k)
        f0 = oracle.pl_expected_dcg(list(s), list(y), k)
        for d in range(5):
            up, down = s.copy(), s.copy()
            up[d] += eps
            down[d] -= eps
            fp, fm = oracle.pl_expected_dcg(list(up), list(y), k), oracle.pl_expected_dcg(list(down), list(y), k)
            assert (fp - fm) / (2 * eps) == pytest.approx(g1[d], abs=1e-7)
            assert (fp - 2 * f0 + fm) / eps ** 2 == pytest.approx(g2[d], abs=1e-4)


@pytest.mark.parametrize("k", [None, 1, 2, 3])
def test_gradient_and_hessian_are_unbiased_for_the_exact_derivatives(k):
    s, y, ptr = _data(seed=k or 0)
    g, g_se, h, h_se = _round_means(s, y, ptr, k, rounds=400, n_samples=25)
    d1, d2 = _exact(s, y, ptr, k)
    # ours are derivatives of the loss −E[DCG@K]; 10,000 rankings per query in all
    zg, zh = _z(g, g_se, -d1), _z(h, h_se, -d2)
    assert zg.size >= 15 and zh.size >= 15
    assert zg.max() < 4.5 and zh.max() < 4.5, (zg.round(2), zh.round(2))
    # the test has the power to see a wrong target: the derivatives of E[DCG@K] at another cut-off
    other = 4 if k is None else k + 1
    w1, w2 = _exact(s, y, ptr, other)
    assert max(_z(g, g_se, -w1).max(), _z(h, h_se, -w2).max()) > 8


def test_single_documents_get_zero_and_query_weights_scale():
    s, y, ptr = _data()
    g, h = plrank_gradients(s, y, ptr, k=2, n_samples=30, hessian="raw")
    assert g[0] == 0.0 and h[0] == 0.0  # the one-document query
    w = np.arange(1.0, len(SIZES) + 1)
    gw, hw = plrank_gradients(s, y, ptr, k=2, n_samples=30, hessian="raw", query_weights=w)
    rows = np.repeat(w, SIZES)
    np.testing.assert_allclose(gw, g * rows, rtol=1e-14)
    np.testing.assert_allclose(hw, h * rows, rtol=1e-14)
    _, ha = plrank_gradients(s, y, ptr, k=2, n_samples=30)
    np.testing.assert_array_equal(ha, np.abs(h))  # the default hands on |h|
    assert np.any(h < 0)  # ... which matters: raw Hessians are negative here


def test_huge_scores_give_finite_gradients():
    s, y, ptr = _data()
    for scale in (1e300, -1e300):
        g, h = plrank_gradients(s * scale, y, ptr, k=3, n_samples=20)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


@pytest.mark.parametrize("gap", [301.0, 1000.0, 1e6, 1e300])
def test_scores_far_below_the_best_keep_their_own_order(gap):
    """Issue #48: scores more than 300 below the query's best were clamped to best − 300, which tied
    them: s = [301, 0, 1], y = [0, 2, 1] gave the mean gradient [0, −0.066, 0.069] against the exact
    [0, −0.0515, 0.0515]. A query wider than SPAN now runs on per-position scales, exact at any gap."""
    s, y, ptr = np.array([gap, 0.0, 1.0]), np.array([0.0, 2.0, 1.0]), np.array([0, 3])
    g, g_se, h, h_se = _round_means(s, y, ptr, None, rounds=400, n_samples=25)
    d1, d2 = _exact(s, y, ptr, None)
    np.testing.assert_allclose(-d1, [0.0, -0.0514847, 0.0514847], atol=1e-7)  # the oracle at any gap
    zg, zh = _z(g, g_se, -d1), _z(h, h_se, -d2)
    assert zg.size == 2 and zg.max() < 4.5 and zh.max() < 4.5, (zg, zh)
    assert g[0] == 0.0 and h[0] == 0.0  # always first: its gradient is e^{-gap}-small, here exactly 0
    # the power to see the clamp's answer: the derivatives of the policy it sampled (both tied at best − 300)
    assert _z(g, g_se, -_exact(np.array([300.0, 0.0, 0.0]), y, ptr, None)[0]).max() > 6


@pytest.mark.parametrize("k", [None, 2, 3])
def test_a_query_spread_over_extreme_gaps_is_unbiased(k):
    """Five documents spread over ±1e6 (two pairs close together inside each extreme) and ±1e300."""
    for s in (np.array([1e6, 0.0, 1.0, -1e6, -1e6 + 0.5]), np.array([1e300, -1e300, 0.5, -1e300 + 1e284, 0.0])):
        y = np.array([0.0, 2.0, 1.0, 3.0, 2.0])
        ptr = np.array([0, 5])
        g, g_se, h, h_se = _round_means(s, y, ptr, k, rounds=300, n_samples=20)
        d1, d2 = _exact(s, y, ptr, k)
        zg, zh = _z(g, g_se, -d1), _z(h, h_se, -d2)
        assert zg.size >= 2 and zg.max() < 4.5 and zh.max() < 4.5, (s, zg.round(2), zh.round(2))
        assert np.all(np.abs(g[g_se == 0] + d1[g_se == 0]) < 1e-12)  # the settled documents: exactly the oracle


@pytest.mark.kernel
@pytest.mark.parametrize("k", [0, 1, 3])
def test_the_rescaled_path_is_the_one_scale_path_where_both_apply(k):
    """On ordinary queries (spread < SPAN) both paths draw the same rankings from the same uniforms;
    their sums agree to rounding, so the wide-query path is the same estimator."""
    from lambda_objectives._kernels import plrank as pk
    from lambda_objectives._kernels.ranking import discount_table, document_gains
    from lambda_objectives._kernels.yetirank import query_key

    rng = np.random.default_rng(6)
    for n in (2, 5, 17, 40):
        s = rng.normal(size=n) * 4
        gains = document_gains(rng.integers(0, 4, n).astype(float), "exp")
        kk = n if k <= 0 or k > n else k
        disc = discount_table(kk)

        def scratch():
            return (np.empty(n), np.empty(n), np.empty(max(kk, 1), np.int64), np.zeros(n, np.bool_),
                    np.empty(kk + 1), np.empty(max(kk, 1)))

        g1, h1 = np.empty(n), np.empty(n)
        g2, h2 = np.zeros(n), np.zeros(n)
        e, lx, top, placed, pr, inv_d = scratch()
        pr[kk] = 0.0
        with np.errstate(over="ignore"):  # the generator's uint64 arithmetic wraps by design (numba off)
            key = np.uint64(query_key(np.uint64(9), np.uint64(2), np.uint64(n)))  # numba hands back a Python int
            pk.plrank_query(s, gains, key, 30, k, disc, -30.0, g1, h1, *scratch())  # −30/30: the raw sums
            pk.plrank_samples_rescaled(s, gains, key, 30, kk, disc, g2, h2, e, lx, top, placed, pr, inv_d)
        scale = np.abs(g1).max() + np.abs(h1).max()
        np.testing.assert_allclose(g2, g1, rtol=1e-11, atol=1e-13 * scale)
        np.testing.assert_allclose(h2, h1, rtol=1e-11, atol=1e-13 * scale)
        assert not placed.any()


def test_bit_identical_at_one_and_two_threads_and_draws_keyed_by_seed_and_round():
    d = lo.make_ranking(n_queries=40, seed=2)
    s = np.random.default_rng(0).normal(size=d.y.shape[0])
    with numba_threads(1):
        g1, h1 = plrank_gradients(s, d.y, d.group_ptr, k=10, seed=7, iteration=3)
    with numba_threads(2):
        g2, h2 = plrank_gradients(s, d.y, d.group_ptr, k=10, seed=7, iteration=3)
    assert g1.tobytes() == g2.tobytes() and h1.tobytes() == h2.tobytes()
    g3, _ = plrank_gradients(s, d.y, d.group_ptr, k=10, seed=7, iteration=4)
    g4, _ = plrank_gradients(s, d.y, d.group_ptr, k=10, seed=8, iteration=3)
    assert not np.array_equal(g1, g3) and not np.array_equal(g1, g4)


def test_lambda_gradients_dispatches_with_k_and_seed():
    s, y, ptr = _data()
    want = plrank_gradients(s, y, ptr, k=3, seed=5)
    got = lambda_gradients(s, y, ptr, "plrank@3", seed=5)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(ValueError, match="sigma"):
        lambda_gradients(s, y, ptr, "plrank", sigma=2.0)


@pytest.mark.parametrize("opts, match", [
    ({"n_samples": 0}, "n_samples"), ({"n_samples": 2.5}, "n_samples"), ({"seed": -1}, "seed"),
    ({"hessian": "clip"}, "hessian"), ({"k": 0}, "k"), ({"iteration": -1}, "iteration"),
])
def test_bad_options_raise(opts, match):
    s, y, ptr = _data()
    with pytest.raises(ValueError, match=match):
        plrank_gradients(s, y, ptr, **opts)


def test_adapters_advance_rounds_check_options_and_warn_on_raw_negative_hessians():
    s, y, ptr = _data()
    obj = lo.LightGBMObjective("plrank@3", n_samples=20)
    a = obj.gradients(s, y, ptr)
    b = obj.gradients(s, y, ptr)  # a new data set: round 0 again
    np.testing.assert_array_equal(a[0], b[0])
    for bad in ({"sigma": 2.0}, {"n_samples": 0}, {"hessian": "x"}, {"permutations": 3}):
        with pytest.raises(ValueError):
            lo.XGBoostObjective("plrank", **bad)
    with pytest.warns(lo.HessianWarning, match="negative Hessians"):
        lo.LightGBMObjective("plrank@3", n_samples=20, hessian="raw").gradients(s, y, ptr)


def _ndcg(scores, d):
    return float(np.mean(lo.metric_values(scores, d.y, d.group_ptr, "ndcg@10")))


def test_trains_in_lightgbm_and_xgboost_better_than_a_constant():
    import lightgbm as lgb
    import xgboost as xgb

    d = lo.make_ranking(n_queries=60, seed=4)
    constant = _ndcg(np.zeros(d.y.shape[0]), d)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lo.HessianWarning)
        obj = lo.LightGBMObjective("plrank@10", n_samples=50)
        booster = lgb.train({"objective": obj, "verbose": -1, "num_leaves": 15, "learning_rate": 0.3},
                            lgb.Dataset(d.X, d.y, group=np.diff(d.group_ptr)), 8)
        lgb_ndcg = _ndcg(booster.predict(d.X), d)
        xobj = lo.XGBoostObjective("plrank@10", n_samples=50)
        dm = xgb.DMatrix(d.X, d.y, group=np.diff(d.group_ptr))
        xb = xgb.train(xobj.params(max_depth=4, eta=0.3), dm, 8, obj=xobj)
        xgb_ndcg = _ndcg(xb.predict(dm), d)
    assert booster.current_iteration() == 8 and xobj.n_calls == 8
    assert lgb_ndcg > constant + 0.05 and xgb_ndcg > constant + 0.05, (constant, lgb_ndcg, xgb_ndcg)
