"""The native-parity kernels against their definitions (brute-force oracles) on small queries."""

import numpy as np
import pytest
from _oracles import lambdas as oracle_lambdas

from lambda_objectives._kernels import lightgbm as pk
from lambda_objectives.adapters import LightGBMObjective, XGBoostObjective


def _random_queries(seed, n_q=6, max_n=9, grades=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_n + 1, n_q)
    ptr = np.r_[0, np.cumsum(sizes)]
    y = rng.integers(0, grades, ptr[-1]).astype(float)
    s = np.round(rng.normal(size=ptr[-1]), 1)  # rounding makes score ties
    return s, y, ptr


def _oracle(s, y, ptr, metric, **opts):
    g = np.zeros_like(s)
    h = np.zeros_like(s)
    for q in range(len(ptr) - 1):
        a, b = ptr[q], ptr[q + 1]
        gq, hq = oracle_lambdas(list(s[a:b]), list(y[a:b]), metric, None, 1.0, **opts)
        g[a:b], h[a:b] = gq, hq
    return g, h


def test_sigmoid_table_left_edges_and_range():
    for sigma in (1.0, 2.5):
        table, lo, hi, factor = pk.lgb_sigmoid_table(sigma)
        assert table.shape == (1 << 20,)
        assert lo == -25.0 / sigma and hi == 25.0 / sigma
        i = np.array([0, 1, 12345, (1 << 20) - 1])
        x = i / factor + lo
        np.testing.assert_allclose(table[i], 1.0 / (1.0 + np.exp(sigma * x)), rtol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lightgbm_kernel_is_exact_ndcg_lambda_without_heuristics(seed):
    # norm off and k >= n: LightGBM's pair weight is the exact full-list ΔNDCG, so the only
    # differences to the oracle are the table sigmoid (bin width 5e-5) and float32 sums.
    s, y, ptr = _random_queries(seed)
    g, h = LightGBMObjective(preset="lightgbm", k=1000, norm=False).gradients(s, y, ptr)
    go, ho = _oracle(s, y, ptr, "ndcg")
    np.testing.assert_allclose(g, go, atol=5e-5)
    np.testing.assert_allclose(h, ho, atol=5e-5)
    assert np.any(g != 0)


@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
def test_xgboost_kernel_matches_definition_without_normalisations(metric):
    s, y, ptr = _random_queries(3)
    if metric == "map":
        y = (y >= 2).astype(float)
    obj = XGBoostObjective(metric=metric, preset="xgboost", k=1000, normalization=False,
                           score_normalization=False)
    g, h = obj.gradients(s, y, ptr)
    om = {"ndcg": "ndcg", "map": "map", "pairwise": "ranknet"}[metric]
    go, ho = _oracle(s.astype(np.float32).astype(float), y, ptr, om)
    np.testing.assert_allclose(g, go, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(h, 2.0 * ho, rtol=2e-6, atol=1e-7)  # XGBoost's hessian carries a 2


def test_lightgbm_truncation_and_minus_inf_skip():
    s = np.array([3.0, 2.0, 1.0, -np.inf, 0.5])
    y = np.array([0.0, 1.0, 2.0, 3.0, 1.0])
    ptr = np.array([0, 5])
    g, h = LightGBMObjective(preset="lightgbm", k=1).gradients(s, y, ptr)
    assert g[3] == 0 and h[3] == 0  # the -inf document forms no pair
    # k=1: only pairs with the top document (row 0); row 0 has label 0, so rows 1, 2, 4 move up
    assert g[0] > 0 and np.all(g[[1, 2, 4]] < 0)
    g2, _ = LightGBMObjective(preset="lightgbm", k=2).gradients(s, y, ptr)
    assert not np.array_equal(g, g2)


def test_degenerate_queries_have_zero_gradients():
    s = np.array([0.1, 0.2, 0.3, 0.4])
    y = np.array([1.0, 1.0, 1.0, 2.0])
    ptr = np.array([0, 3, 4])  # all-equal labels, then a single document
    for obj in (LightGBMObjective(preset="lightgbm", check_hessian=False),
                XGBoostObjective(preset="xgboost", check_hessian=False)):
        g, h = obj.gradients(s, y, ptr)
        assert np.all(g == 0) and np.all(h == 0)


def test_bad_options_raise():
    with pytest.raises(ValueError, match="metric 'err'"):
        LightGBMObjective("err", preset="lightgbm")
    with pytest.raises(ValueError, match="unknown options"):
        XGBoostObjective(preset="xgboost", label_gain=[0, 1])
    with pytest.raises(ValueError, match="sigma"):
        XGBoostObjective(preset="xgboost", sigma=2.0)
    with pytest.raises(ValueError, match="binary"):
        XGBoostObjective("map", preset="xgboost").gradients(np.zeros(3), [0, 1, 2], [0, 3])
    with pytest.raises(ValueError, match="label_gain"):
        LightGBMObjective(preset="lightgbm", label_gain=[0, 1]).gradients(np.zeros(2), [0, 2], [0, 2])


# std::uniform_int_distribution<std::size_t>(0, n - 1) on std::minstd_rand(seed), printed by a program built
# with g++ 12.2 / libstdc++ (three passes over these n per seed); seeds 0 and 2**31 - 1 start the engine at 1
_LIBSTDCXX_N = (1, 2, 3, 7, 100, 1000003, 2147483645)
_LIBSTDCXX_DRAWS = {
    0: [0, 0, 1, 6, 96, 189732, 1105902160, 0, 0, 2, 0, 56, 582360, 1738531148, 0, 1, 2, 6, 72, 966829, 638022371],
    2147483647: [0, 0, 1, 6, 96, 189732, 1105902160, 0, 0, 2, 0, 56, 582360, 1738531148, 0, 1, 2, 6, 72, 966829,
                 638022371],
    123456: [0, 1, 1, 5, 93, 340547, 1836846743, 0, 0, 0, 1, 49, 749290, 1848431528, 0, 1, 2, 1, 19, 972646,
             137269318],
}


@pytest.mark.parametrize("seed", sorted(_LIBSTDCXX_DRAWS))
def test_minstd_uniform_draws_what_libstdcxx_draws(seed):
    from lambda_objectives._kernels.xgboost import minstd_seed, minstd_uniform

    x, got = minstd_seed(seed), []
    for _ in range(3):
        for n in _LIBSTDCXX_N:
            x, r = minstd_uniform(x, n)
            got.append(int(r))
    assert got == _LIBSTDCXX_DRAWS[seed]


@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
def test_xgboost_mean_pairs_of_two_documents_are_the_one_pair(metric):
    # two documents with different labels: each draws the other m times, so m * 2 copies of the one
    # pair, times 1/m (normalization): twice the topk gradient of that pair, whatever the draws
    s = np.array([0.3, -0.2, 1.0, 0.5, 0.0])
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.0])
    ptr = np.array([0, 2, 5])
    topk = XGBoostObjective(metric, preset="xgboost", k=1, normalization=False)
    for m in (1, 4):
        g, h = XGBoostObjective(metric, preset="xgboost", pair_method="mean", num_pair_per_sample=m).gradients(s, y, ptr)
        gt, ht = topk.gradients(s, y, ptr)
        np.testing.assert_allclose(g[:2], 2.0 * gt[:2], rtol=1e-6)
        np.testing.assert_allclose(h[:2], 2.0 * ht[:2], rtol=1e-6)
        # query 2: the two 0-label documents draw the 1-label one; it draws m of them
        assert g[2] < 0 and np.all(g[3:] > 0) and np.all(h[2:] > 0)
        assert g[2:].sum() == pytest.approx(0.0, abs=1e-6)


def test_xgboost_mean_options_and_versions():
    from lambda_objectives.adapters.presets import xgboost_mean_seed_offset

    assert [xgboost_mean_seed_offset(v) for v in ("3.0.0", "3.0.5", "3.1.0", "3.2.0", "3.3.1rc1")] == [0, 0, 1, 1, 1]
    for v, why in (("3.4.0", "PR #12332"), ("3.5.0-dev", "PR #12332"), ("2.1.4", "XGBoost 3.x")):
        with pytest.raises(ValueError, match=why):
            xgboost_mean_seed_offset(v)
    with pytest.raises(ValueError, match="pair_method must be 'topk' or 'mean'"):
        XGBoostObjective(preset="xgboost", pair_method="random")
    with pytest.raises(ValueError, match="num_pair_per_sample must be a positive integer"):
        XGBoostObjective(preset="xgboost", pair_method="mean", num_pair_per_sample=0)
    with pytest.raises(ValueError, match="has none: pass num_pair_per_sample"):
        XGBoostObjective(preset="xgboost", pair_method="mean", k=4)
    with pytest.raises(ValueError, match="disagree"):
        XGBoostObjective(preset="xgboost", k=4, num_pair_per_sample=5)
    with pytest.raises(ValueError, match="unknown options"):
        XGBoostObjective(pair_method="mean", preset="lightgbm")
    s, y, ptr = _random_queries(4)
    # topk's num_pair_per_sample is XGBoost's name for k
    np.testing.assert_array_equal(XGBoostObjective(preset="xgboost", num_pair_per_sample=3).gradients(s, y, ptr)[0],
                                  XGBoostObjective(preset="xgboost", k=3).gradients(s, y, ptr)[0])
