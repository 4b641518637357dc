"""Tests of lambda_objectives.objectives.lambdas: the closed-form kernels against the brute-force swap oracle."""

import math

import _oracles as oracle
import numba
import numpy as np
import pytest
from conftest import assert_same_bits_at_three_threads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lambda_objectives.objectives import LAMBDA_METRICS
from lambda_objectives import _registry as reg
from lambda_objectives import lambda_gradients

METRICS = LAMBDA_METRICS  # every lambda objective of the registry
FAST = not numba.config.DISABLE_JIT
EXAMPLES = 300 if FAST else 100


def _check_against_oracle(scores, labels, metric, k, sigma, **opts):
    n = len(scores)
    g, h = lambda_gradients(np.array(scores, float), np.array(labels, float), [0, n], metric, k, sigma, **opts)
    if metric == "err" and "max_label" not in opts:
        opts = dict(opts, max_label=max(labels))
    eg, eh = oracle.lambdas(scores, labels, metric, k, sigma, **opts)
    scale = max(1.0, float(np.max(np.abs(eg))), float(np.max(np.abs(eh))))
    np.testing.assert_allclose(g, eg, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(h, eh, rtol=1e-12, atol=1e-12 * scale)


@st.composite
def queries(draw, max_n=40):
    n = draw(st.integers(1, max_n))
    # Few distinct values on purpose: ties in scores and in labels.
    scores = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    k = draw(st.one_of(st.none(), st.integers(1, n + 3)))
    sigma = draw(st.sampled_from([0.5, 1.0, 2.5]))
    return [0.37 * s for s in scores], [float(l) for l in labels], k, sigma


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=queries())
def test_matches_swap_oracle(metric, q):
    scores, labels, k, sigma = q
    _check_against_oracle(scores, labels, metric, k, sigma)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("n", [120, 200])
def test_matches_swap_oracle_long_lists(metric, n):
    rng = np.random.default_rng(n)
    scores = list(np.round(rng.normal(size=n), 1))
    labels = list(rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(float))
    for k in (None, 10):
        _check_against_oracle(scores, labels, metric, k, 1.0)


@pytest.mark.kernel
@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(q=queries(), gain=st.sampled_from(["exp", "linear"]))
def test_gain_options(q, gain):
    scores, labels, k, sigma = q
    _check_against_oracle(scores, labels, "ndcg", k, sigma, gain=gain)


@pytest.mark.kernel
def test_label_gain_threshold_and_max_label():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 25))
        s = list(np.round(rng.normal(size=n), 1))
        y = list(rng.integers(0, 4, n).astype(float))
        _check_against_oracle(s, y, "ndcg", 5, 1.0, label_gain=[0.0, 1.0, 5.0, 6.0])
        _check_against_oracle(s, y, "map", 7, 1.0, threshold=1.0)
        _check_against_oracle(s, y, "mrr", None, 1.0, threshold=2.0)
        _check_against_oracle(s, y, "err", 4, 1.0, max_label=6.0)


def _random_batch(seed, n_queries=30, max_n=60, distinct=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_n, n_queries)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    n = int(ptr[-1])
    scores = rng.normal(size=n) if distinct else np.round(rng.normal(size=n), 1)
    labels = rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(float)
    return scores, labels, ptr


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [None, 3])
def test_properties(metric, k):
    s, y, ptr = _random_batch(11)
    g, h = lambda_gradients(s, y, ptr, metric, k)
    for q in range(len(ptr) - 1):
        a, b = ptr[q], ptr[q + 1]
        assert abs(g[a:b].sum()) <= 1e-12 * max(1.0, np.abs(g[a:b]).sum())
    assert np.all(h >= 0)
    # Adding a constant to a query's scores changes nothing (only differences matter).
    shift = np.repeat(np.random.default_rng(1).normal(size=len(ptr) - 1) * 5, np.diff(ptr))
    g2, h2 = lambda_gradients(s + shift, y, ptr, metric, k)
    np.testing.assert_allclose(g2, g, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h2, h, rtol=1e-9, atol=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
def test_permutation_equivariance(metric):
    s, y, ptr = _random_batch(5, distinct=True)
    g, h = lambda_gradients(s, y, ptr, metric, 5)
    rng = np.random.default_rng(9)
    perm = np.concatenate([a + rng.permutation(b - a) for a, b in zip(ptr[:-1], ptr[1:])])
    gp, hp = lambda_gradients(s[perm], y[perm], ptr, metric, 5)
    np.testing.assert_allclose(gp, g[perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hp, h[perm], rtol=1e-12, atol=1e-15)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
def test_degenerate_queries_give_zeros(metric):
    s = np.array([0.3, 0.1, 0.2, 0.5, 0.0, 0.9])
    y = np.array([2.0, 2.0, 2.0, 0.0, 0.0, 1.0])
    ptr = [0, 3, 5, 6]  # all-equal labels, all-zero labels, a single document
    g, h = lambda_gradients(s, y, ptr, metric)
    assert np.all(g == 0) and np.all(h == 0)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", ("ndcg", "err", "map", "mrr"))
def test_k_cutoff_pairs_below_k_contribute_nothing(metric):
    # The top 2 documents are irrelevant; lower documents are graded: with k=2 only pairs
    # touching the top 2 positions can move, so the order among positions >= 2 is irrelevant.
    s = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    y = np.array([0.0, 0.0, 1.0, 3.0, 2.0, 1.0])
    g, h, pairs = lambda_gradients(s, y, [0, 6], metric, 2, return_pairs=True)
    ranks = {d: r for r, d in enumerate(np.argsort(-s, kind="stable"))}
    assert all(min(ranks[i], ranks[j]) < 2 for i, j in zip(pairs.i, pairs.j))
    g_full = lambda_gradients(s, y, [0, 6], metric)[0]
    assert not np.allclose(g, g_full)


@pytest.mark.kernel
def test_err_swap_moving_better_document_up_never_lowers_err():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(2, 15))
        s = rng.normal(size=n)
        y = rng.integers(0, 5, n).astype(float)
        order = np.argsort(-s, kind="stable")
        ranked = list(y[order])
        k = int(rng.integers(1, n + 2))
        for a in range(n):
            for b in range(a + 1, n):
                if ranked[b] > ranked[a]:
                    swapped = list(ranked)
                    swapped[a], swapped[b] = swapped[b], swapped[a]
                    gain = oracle.err_of_order(swapped, k, 4) - oracle.err_of_order(ranked, k, 4)
                    assert gain >= -1e-15


def _pairwise_cost(s, y, metric, k, sigma, order_scores):
    """C = sum |dZ| log(1 + exp(-sigma (s_i - s_j))) with |dZ| frozen at the ranking of order_scores."""
    total = 0.0
    n = len(s)
    for i in range(n):
        for j in range(n):
            if y[i] > y[j]:
                dz = oracle.pair_weight(list(order_scores), list(y), i, j, metric, k, max_label=max(y))
                total += dz * math.log1p(math.exp(-sigma * (s[i] - s[j])))
    return total


@pytest.mark.parametrize("metric", METRICS)
def test_gradient_hessian_and_poincare_by_finite_differences(metric):
    rng = np.random.default_rng(7)
    n, k, sigma, eps = 9, 5, 1.3, 1e-6
    s = np.sort(rng.normal(size=n))[::-1] * 2  # well separated, so small steps keep the ranking
    y = np.array([1, 0, 3, 0, 2, 1, 0, 4, 0], float)
    g, h = lambda_gradients(s, y, [0, n], metric, k, sigma)
    jac = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps
        cp = _pairwise_cost(s + e, y, metric, k, sigma, s)
        cm = _pairwise_cost(s - e, y, metric, k, sigma, s)
        assert abs((cp - cm) / (2 * eps) - g[j]) < 1e-6
        gp = lambda_gradients(s + e, y, [0, n], metric, k, sigma)[0]
        gm = lambda_gradients(s - e, y, [0, n], metric, k, sigma)[0]
        jac[:, j] = (gp - gm) / (2 * eps)
    np.testing.assert_allclose(np.diag(jac), h, atol=1e-6)
    np.testing.assert_allclose(jac, jac.T, atol=1e-6)  # Burges §4.3: a cost function exists


@pytest.mark.kernel
def test_query_weights_normalize_and_out():
    s, y, ptr = _random_batch(2)
    w = np.random.default_rng(0).uniform(0, 3, len(ptr) - 1)
    g, h = lambda_gradients(s, y, ptr, "ndcg", 10)
    gw, hw = lambda_gradients(s, y, ptr, "ndcg", 10, query_weights=w)
    np.testing.assert_allclose(gw, g * np.repeat(w, np.diff(ptr)), rtol=1e-14)
    np.testing.assert_allclose(hw, h * np.repeat(w, np.diff(ptr)), rtol=1e-14)
    gn, hn = lambda_gradients(s, y, ptr, "ndcg", 10, normalize="lambdarank")
    for q in range(5):
        a, b = ptr[q], ptr[q + 1]
        sq, yq = list(s[a:b]), list(y[a:b])
        total = sum(  # S = sum over pairs of 2 sigma |dZ| rho, by brute force
            2 * oracle.swap_delta(sq, yq, i, j, "ndcg", 10) / (1 + math.exp(sq[i] - sq[j]))
            for i in range(b - a) for j in range(b - a) if yq[i] > yq[j]
        )
        factor = math.log2(1 + total) / total if total > 0 else 1.0
        np.testing.assert_allclose(gn[a:b], g[a:b] * factor, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(hn[a:b], h[a:b] * factor, rtol=1e-12, atol=1e-300)
    out = (np.full(len(s), np.nan), np.full(len(s), np.nan))
    go, ho = lambda_gradients(s, y, ptr, "ndcg", 10, out=out)
    assert go is out[0] and ho is out[1]
    np.testing.assert_array_equal(go, g)


@pytest.mark.parametrize("metric", METRICS)
def test_thread_count_does_not_change_result(metric):
    s, y, ptr = _random_batch(8, n_queries=80)
    g1, h1 = lambda_gradients(s, y, ptr, metric, 10, n_threads=1)
    g2, h2 = lambda_gradients(s, y, ptr, metric, 10, n_threads=2)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(h1, h2)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
def test_return_pairs_consistent(metric):
    s, y, ptr = _random_batch(12)
    g, h, pairs = lambda_gradients(s, y, ptr, metric, 7, normalize="lambdarank", return_pairs=True)
    acc = np.zeros_like(h)
    np.add.at(acc, pairs.i, pairs.h)
    np.add.at(acc, pairs.j, pairs.h)
    np.testing.assert_allclose(acc, h, rtol=1e-12, atol=1e-15)
    assert np.all(y[pairs.i] > y[pairs.j])
    q_of_i = np.searchsorted(ptr, pairs.i, side="right") - 1
    q_of_j = np.searchsorted(ptr, pairs.j, side="right") - 1
    np.testing.assert_array_equal(q_of_i, q_of_j)
    assert pairs.ptr[-1] == len(pairs.i)
    assert np.all(q_of_i == np.repeat(np.arange(len(ptr) - 1), np.diff(pairs.ptr)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scores=[0.0, np.nan]), "non-finite"),
        (dict(scores=[0.0, np.inf]), "non-finite"),
        (dict(labels=[1.0, np.nan]), "non-finite"),
        (dict(labels=[1.0, -1.0]), "non-negative"),
        (dict(labels=[1.0, 0.5]), "integer"),
        # 1/IDCG of a subnormal best label overflows: inf/NaN lambdas, so it is refused up front
        (dict(labels=[0.0, 5e-324], gain="linear"), "subnormal"),
        (dict(labels=[0.0, 1e-310], gain="linear", metric="ndcg_loss2"), "subnormal"),
        (dict(group_ptr=[0, 1]), "end at"),
        (dict(group_ptr=[0, 2, 1, 2]), "monotone"),
        (dict(labels=[1.0]), "length mismatch"),
        (dict(metric="auc"), "unknown metric"),
        (dict(sigma=0.0), "sigma"),
        (dict(k=0), "k must be"),
        (dict(k=2.5), "k must be"),
        (dict(normalize="sum"), "normalize"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(scores=[0.2, 0.1], labels=[1.0, 0.0], group_ptr=[0, 2], metric="ndcg")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        lambda_gradients(args.pop("scores"), args.pop("labels"), args.pop("group_ptr"), **args)


def test_non_integer_labels_allowed_for_binary_metrics_and_inputs_not_mutated():
    s = np.array([0.2, 0.1, 0.3])
    y = np.array([0.5, 0.0, 2.5])
    s0, y0 = s.copy(), y.copy()
    for metric in ("map", "mrr", "ranknet"):
        lambda_gradients(s, y, [0, 3], metric)
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
def test_extreme_score_gaps_stay_finite_and_exact(metric):
    # exp(sigma * gap) over- or underflows here; rho must still be 0 or 1 to double precision.
    s = np.array([900.0, 0.0, -900.0, 0.5])
    y = np.array([0.0, 1.0, 2.0, 0.0])
    g, h = lambda_gradients(s, y, [0, 4], metric, sigma=2.0)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.all(h >= 0)
    assert abs(g.sum()) < 1e-12
    small = lambda_gradients(s / 1000, y, [0, 4], metric, sigma=2.0 * 1000)  # same sigma*gap
    # grad scales with sigma, hess with sigma**2 (|dZ| and rho are unchanged).
    np.testing.assert_allclose(g, small[0] / 1000, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(h, small[1] / 1e6, rtol=1e-9, atol=1e-300)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
def test_return_cost_is_the_pairwise_cost(metric):
    rng = np.random.default_rng(21)
    n, k, sigma = 12, 6, 1.4
    s = rng.normal(size=n)
    y = rng.integers(0, 4, n).astype(float)
    g, h, cost = lambda_gradients(s, y, [0, 5, n], metric, k, sigma, return_cost=True, query_weights=[2.0, 1.0])
    for q, (a, b) in enumerate(((0, 5), (5, n))):
        want = _pairwise_cost(s[a:b], y[a:b], metric, k, sigma, s[a:b]) * (2.0 if q == 0 else 1.0)
        assert cost[q] == pytest.approx(want, rel=1e-12, abs=1e-15)
    g2, h2 = lambda_gradients(s, y, [0, 5, n], metric, k, sigma, query_weights=[2.0, 1.0])
    np.testing.assert_array_equal(g, g2)


def test_out_arrays_overlapping_an_input_are_rejected():
    s = np.array([0.3, 0.1, 0.2, 0.5])
    y = np.array([2.0, 0.0, 1.0, 0.0])
    ptr = np.array([0, 4])
    want = lambda_gradients(s, y, ptr)
    h = np.empty(4)
    with pytest.raises(ValueError, match="overlaps the scores"):  # wrong gradients on 0.1
        lambda_gradients(s, y, ptr, out=(s, h))
    with pytest.raises(ValueError, match="overlaps the labels"):
        lambda_gradients(s, y, ptr, out=(np.empty(4), y))
    np.testing.assert_array_equal(s, [0.3, 0.1, 0.2, 0.5])  # nothing written before the check
    # any buffer counts: a memoryview of the output passed as scores was missed
    g_out = np.array([0.3, 0.1, 0.2, 0.5])
    with pytest.raises(ValueError, match="overlaps the scores"):
        lambda_gradients(memoryview(g_out), y, ptr, out=(g_out, np.empty(4)))
    g2, _ = lambda_gradients(s, y, ptr, out=(np.empty(4), h))
    np.testing.assert_array_equal(g2, want[0])


@pytest.mark.parametrize("metric", ["ndcg", "err"])
def test_labels_whose_exponential_gain_overflows_raise(metric):
    s = np.array([0.3, 0.1, 0.2])
    y = np.array([1024.0, 0.0, 1.0])  # 2**1024 = inf: NaN / all-zero gradients before
    with pytest.raises(ValueError, match="overflow"):
        lambda_gradients(s, y, np.array([0, 3]), metric)
    g, _ = lambda_gradients(s, y, np.array([0, 3]), "ndcg", gain="linear")
    assert np.all(np.isfinite(g)) and g[0] < 0


def test_extreme_sigma_raises_instead_of_inf_hessians():
    s = np.array([0.3, 0.1, 0.2])
    y = np.array([2.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="sigma"):
        lambda_gradients(s, y, np.array([0, 3]), sigma=1e155)
    g, h = lambda_gradients(s, y, np.array([0, 3]), sigma=1e3)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


GAIN_WEIGHTS = ("ndcg", "ndcg_loss2", "ndcg_loss2pp", "gain_diff")


@pytest.mark.kernel
@pytest.mark.parametrize("metric", GAIN_WEIGHTS + ("label_diff",))
@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=queries(), shift=st.sampled_from([0.0, 0.25, 0.5]))
def test_real_valued_labels_with_linear_gain_match_the_definition(metric, q, shift):
    scores, labels, k, sigma = q
    labels = [(lab + shift) * 1.7 for lab in labels]  # real-valued relevance, ties kept
    # |y_i - y_j| reads no gain (gain= would be refused as an option it ignores)
    _check_against_oracle(scores, labels, metric, k, sigma, **({} if metric == "label_diff" else {"gain": "linear"}))


@pytest.mark.parametrize("mu", [0.0, 2.5])
def test_ndcg_loss2pp_is_lambdarank_plus_mu_times_loss2(mu):
    s, y = np.array([0.3, 1.2, -0.4, 0.8, 0.0, 0.1]), np.array([2.0, 0.0, 1.0, 3.0, 0.0, 1.0])
    ptr = [0, 6]
    for k in (None, 3):
        gpp, hpp = lambda_gradients(s, y, ptr, "ndcg_loss2pp", k, mu=mu)
        g1, h1 = lambda_gradients(s, y, ptr, "ndcg", k)
        g2, h2 = lambda_gradients(s, y, ptr, "ndcg_loss2", k)
        np.testing.assert_allclose(gpp, g1 + mu * g2, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hpp, h1 + mu * h2, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(metric="ndcg_loss2pp", mu=-1.0), "mu must be a finite number >= 0"),
        (dict(metric="ndcg_loss2pp", mu=float("nan")), "mu must be"),
        (dict(metric="ndcg", mu=1.0), "takes no mu"),
        (dict(metric="ndcg_loss3"), "unknown metric 'ndcg_loss3'"),
        (dict(metric="ndcg_loss2", labels=[1.5, 0.0]), "gain='linear'"),
        (dict(metric="err", labels=[1.5, 0.0]), "integer relevance grades"),
            (dict(metric="err", labels=[1.5, 0.0], gain="linear"), r"unknown options .*\['gain'\]"),  # ERR reads no gain
        (dict(metric="gain_diff", labels=[1.5, 0.0], label_gain=[0.0, 1.0]), "integer"),
    ],
)
def test_lambdaloss_bad_input(kwargs, match):
    args = dict(scores=[0.2, 0.1], labels=[1.0, 0.0], group_ptr=[0, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        lambda_gradients(args.pop("scores"), args.pop("labels"), args.pop("group_ptr"), **args)


@numba.njit
def _half_gain_diff(a, b, label_a, label_b, gain_a, gain_b, k):
    return 0.5 * abs(gain_a - gain_b)


@numba.njit
def _negative(a, b, label_a, label_b, gain_a, gain_b, k):
    return -1.0 if a == 0 else 1.0


@numba.njit
def _raising(a, b, label_a, label_b, gain_a, gain_b, k):
    if a == 1:
        raise ValueError("no weight for this pair")
    return 1.0


def test_user_njit_pair_weight_matches_the_equivalent_builtin_and_is_checked():
    rng = np.random.default_rng(3)
    s, y = rng.normal(size=40), rng.integers(0, 4, 40).astype(float)
    ptr = [0, 15, 40]
    for k in (None, 5):
        for opts in ({}, {"gain": "linear", "normalize": "lambdarank", "query_weights": [1.0, 2.0]}):
            g, h = lambda_gradients(s, y, ptr, _half_gain_diff, k, 1.3, **opts)
            gb, hb = lambda_gradients(s, y, ptr, "gain_diff", k, 1.3, **opts)
            scale = 0.5 if "normalize" not in opts else 1.0  # lambdarank normalisation is not homogeneous
            if scale == 0.5:
                np.testing.assert_allclose(g, 0.5 * gb, rtol=1e-12, atol=1e-15)
                np.testing.assert_allclose(h, 0.5 * hb, rtol=1e-12, atol=1e-15)
            else:
                assert np.all(np.sign(g) == np.sign(gb))
    with pytest.raises(ValueError, match="@njit"):
        lambda_gradients(s, y, ptr, lambda a, b, la, lb, ga, gb, k: 1.0)
    with pytest.raises(ValueError, match="negative or non-finite weight"):
        lambda_gradients(s, y, ptr, _negative)
    # an exception inside the user's function came out as a bare SystemError from numba's parallel region
    with pytest.raises(ValueError, match="no weight for this pair"):
        lambda_gradients(s, y, ptr, _raising)
    with pytest.raises(ValueError, match="takes no mu"):
        lambda_gradients(s, y, ptr, _half_gain_diff, mu=1.0)


def test_a_cutoff_beyond_int64_is_the_whole_list():
    # k=10**20 raised OverflowError (lambdas) or a numba TypingError (metrics)
    from lambda_objectives import metric_values

    s, y, ptr = np.array([0.3, 0.1, 0.2, 0.5]), np.array([2.0, 0.0, 1.0, 0.0]), [0, 4]
    for metric in ("ndcg", "err", "map"):
        np.testing.assert_array_equal(lambda_gradients(s, y, ptr, metric, k=10 ** 20)[0], lambda_gradients(s, y, ptr, metric)[0])
        np.testing.assert_array_equal(metric_values(s, y, ptr, metric, k=10 ** 20), metric_values(s, y, ptr, metric))
        np.testing.assert_array_equal(metric_values(s, y, ptr, f"{metric}@{10 ** 20}"), metric_values(s, y, ptr, metric))


@pytest.mark.parametrize("metric, kwargs, bad", [
    ("ndcg", {"threshold": 1.5}, "threshold"),     # MAP/MRR's relevance threshold: NDCG never reads it
    ("ndcg", {"max_label": 4.0}, "max_label"),     # ERR's scale
    ("map", {"gain": "linear"}, "gain"),
    ("err", {"label_gain": [0.0, 1.0, 3.0]}, "label_gain"),
    ("ranknet", {"gain": "linear"}, "gain"),
    ("label_diff", {"threshold": 0.5}, "threshold"),
])
def test_options_a_metric_would_ignore_raise(metric, kwargs, bad):
    s, y, ptr = np.array([0.3, 0.1, -0.2, 0.5]), np.array([2.0, 0.0, 1.0, 0.0]), [0, 4]
    with pytest.raises(ValueError, match=rf"unknown options for metric='{metric}', preset=None: \['{bad}'\]"):
        lambda_gradients(s, y, ptr, metric, **kwargs)


def test_a_pair_weight_function_refuses_the_options_it_never_read():
    @numba.njit
    def w(a, b, la, lb, ga, gb, k):
        return 1.0

    s, y, ptr = np.array([0.3, 0.1, -0.2, 0.5]), np.array([2.0, 0.0, 1.0, 0.0]), [0, 4]
    for kwargs in ({"max_label": 3.0}, {"threshold": 0.5}, {"seed": 1}, {"mu": 1.0}):
        with pytest.raises(ValueError, match=rf"unknown options for metric='w'.*\['{next(iter(kwargs))}'\]"):
            lambda_gradients(s, y, ptr, w, **kwargs)


# -- sampled pairs (pair_method="mean", issue #34) -------------------------------------------------------
def _sampled(s, y, ptr, metric, k=None, m=1, **opts):
    return lambda_gradients(s, y, ptr, metric, k, pair_method="mean", num_pair_per_sample=m, **opts)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [None, 3])
def test_sampled_pairs_with_whole_pools_are_the_full_list(metric, k):
    """A pool of at most m documents is taken whole (weight 1/2 from each side): m >= n - 1 gives the
    full-list lambdas, so every sampled pair's |ΔZ| (ERR's from its prefix/suffix tables) is the exact one."""
    s, y, ptr = _random_batch(11)
    g, h, c = lambda_gradients(s, y, ptr, metric, k, return_cost=True)
    gm, hm, cm = _sampled(s, y, ptr, metric, k, m=int(np.diff(ptr).max()), return_cost=True)
    scale = max(1.0, float(np.abs(g).max()))
    np.testing.assert_allclose(gm, g, rtol=1e-12, atol=1e-13 * scale)
    np.testing.assert_allclose(hm, h, rtol=1e-12, atol=1e-13 * scale)
    np.testing.assert_allclose(cm, c, rtol=1e-12, atol=1e-13)


@pytest.mark.kernel
def test_sampled_err_is_exact_on_long_lists_and_top_grades():
    """ΔERR of one pair in O(1): deep pairs (P_a tiny) and grades whose R rounds to 1 (the span walk)."""
    rng = np.random.default_rng(4)
    n = 400
    s, y = rng.normal(size=n), rng.choice(5, size=n, p=[0.3, 0.2, 0.2, 0.2, 0.1]).astype(float)
    for k in (None, 50):
        g, h = lambda_gradients(s, y, [0, n], "err", k)
        gm, hm = _sampled(s, y, [0, n], "err", k, m=n)
        np.testing.assert_allclose(gm, g, rtol=1e-9, atol=1e-15 * np.abs(g).max())
        np.testing.assert_allclose(hm, h, rtol=1e-9, atol=1e-15 * np.abs(h).max())
    y = np.array([60.0, 0.0, 60.0, 3.0, 0.0, 59.0, 1.0])  # R = (2^60 - 1)/2^60 is 1.0 in float64
    s = np.array([0.5, 0.4, 0.3, 0.2, 0.1, 0.0, -0.1])
    g, h = lambda_gradients(s, y, [0, 7], "err", max_label=60.0)
    gm, hm = _sampled(s, y, [0, 7], "err", m=6, max_label=60.0)
    np.testing.assert_allclose(gm, g, rtol=1e-12, atol=1e-15)
    assert np.any(g != 0)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [None, 5])
def test_sampled_pairs_are_unbiased_for_the_full_list(metric, k):
    """m = 2 partners a document, averaged over 300 seeds: per document z = (mean − full)/se, the
    root-mean-square z near 1 and no |z| beyond 5 (a mis-scaled estimator, e.g. weight 1 per draw
    instead of |pool|/(2m), drifts by many standard errors)."""
    rng = np.random.default_rng(1)
    ptr = np.array([0, 40, 65, 125])
    y, s = rng.integers(0, 4, 125).astype(float), rng.normal(size=125)
    g, h = lambda_gradients(s, y, ptr, metric, k)
    draws = [_sampled(s, y, ptr, metric, k, m=2, seed=i, n_threads=1) for i in range(300)]
    for full, est in ((g, np.array([d[0] for d in draws])), (h, np.array([d[1] for d in draws]))):
        se = est.std(0, ddof=1) / np.sqrt(len(draws))
        varies = se > 1e-12 * max(1.0, np.abs(full).max())
        np.testing.assert_allclose(est.mean(0)[~varies], full[~varies], rtol=1e-9, atol=1e-12)
        z = (est.mean(0) - full)[varies] / se[varies]
        assert varies.sum() > 20 and 0.7 < np.sqrt(np.mean(z ** 2)) < 1.3 and np.abs(z).max() < 5


@pytest.mark.kernel
@pytest.mark.parametrize("metric", ["ndcg", "err", "map", "ndcg_loss2pp"])
def test_sampled_pairs_do_not_depend_on_threads_position_or_chunks(metric):
    """A query is known by its labels: the same query gets the same bits at 1 and 2 threads, anywhere
    in the data and in any split of the data into chunks (partitions, workers)."""
    s, y, ptr = _random_batch(7, n_queries=40, max_n=80)
    opts = dict(m=3, seed=5, iteration=2)
    g1, h1 = _sampled(s, y, ptr, metric, 10, n_threads=1, **opts)
    g2, h2 = _sampled(s, y, ptr, metric, 10, n_threads=2, **opts)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(h1, h2)
    sizes = np.diff(ptr)
    perm = np.random.default_rng(0).permutation(len(sizes))
    rows = np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in perm])
    shuffled = np.concatenate(([0], np.cumsum(sizes[perm])))
    gs = np.empty_like(g1)
    for part in np.array_split(np.arange(len(perm)), 3):  # three chunks, each its own call
        r = rows[shuffled[part[0]]:shuffled[part[-1] + 1]]
        local = np.concatenate(([0], np.cumsum(sizes[perm[part]])))
        gs[r] = _sampled(s[r], y[r], local, metric, 10, **opts)[0]
    np.testing.assert_array_equal(gs, g1)
    # other draws: another seed, another round
    assert not np.array_equal(_sampled(s, y, ptr, metric, 10, m=3, seed=6, iteration=2)[0], g1)
    assert not np.array_equal(_sampled(s, y, ptr, metric, 10, m=3, seed=5, iteration=3)[0], g1)


@pytest.mark.kernel
def test_sampled_pairs_list_every_draw():
    s, y, ptr = _random_batch(3)
    g, h, p = _sampled(s, y, ptr, "ndcg", m=2, return_pairs=True)
    assert p.ptr[-1] == len(p.i) and np.all(y[p.i] > y[p.j])
    np.testing.assert_allclose(np.bincount(p.i, p.h, len(h)) + np.bincount(p.j, p.h, len(h)), h, atol=1e-14)


@pytest.mark.kernel
@pytest.mark.parametrize("metric", [m for m in METRICS if not (reg.REGISTRY[m].listwise or reg.REGISTRY[m].sampled)])
@pytest.mark.parametrize("k", [None, 3])
def test_a_prepared_plan_draws_the_same_bits_as_lambda_gradients(metric, k):
    """Issue #47: the adapters check a data set and compute its queries' content keys and ``1/IDCG@k``
    once (``pair_setup``, ``pairs.sampled_constants``), then run only the pair loop each round: the
    same bits as ``lambda_gradients`` of that round at 1, 2 and 3 threads (one-document queries,
    zero-IDCG queries and query weights included); the constants are the kernels' own calls."""
    from lambda_objectives._kernels.ndcg import ndcg_inverse_ideal
    from lambda_objectives._kernels.ranking import discount_table
    from lambda_objectives._kernels.yetirank import content_key
    from lambda_objectives.objectives.lambdas import pair_run, pair_setup

    s, y, ptr = _random_batch(31, n_queries=25, max_n=50)
    y[ptr[3]:ptr[4]] = 0.0  # a query whose ideal value is 0
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(ptr) - 1)
    opts = {"pair_method": "mean", "num_pair_per_sample": 2, "seed": 9, "query_weights": w}
    if metric == "err":
        opts["max_label"] = 4.0
    kk = k if reg.parse_metric(metric, None, kind="objective")[0] not in ("ranknet", "label_diff", "gain_diff") \
        else None
    plan, normalize, mu, sampling = pair_setup(y, ptr, len(y), metric, kk, **opts)
    for q in range(len(ptr) - 1):
        a, b = ptr[q], ptr[q + 1]
        assert plan.keys[q] == content_key((y[a:b] + 0.0).view(np.uint64))
        if reg.REGISTRY[metric].code in reg.NDCG_FAMILY and b - a > 1:
            assert plan.invs[q] == ndcg_inverse_ideal(plan.values[a:b], kk or 0, discount_table(int(np.diff(ptr).max())))
        else:
            assert plan.invs[q] == -1.0
    for it in (0, 3):
        for nt in (1, 2, 3):
            g, h = lambda_gradients(s, y, ptr, metric, kk, iteration=it, n_threads=nt, **opts)
            gp, hp = np.empty_like(g), np.empty_like(h)
            pair_run(plan, s, gp, hp, 1.0, normalize, mu, (sampling[0], sampling[1], it), nt)
            np.testing.assert_array_equal(gp, g)
            np.testing.assert_array_equal(hp, h)


@pytest.mark.kernel
def test_sampled_tables_are_the_sorts_and_keys_they_replace():
    """Issue #47: ``pairs.sampled_tables`` ranks, copies, counts and hashes a sampled query in a few fused
    passes into the caller's workspaces; each output is the one of the separate steps it replaces: the
    ranking and the rank-order copies, ``exp(σ(s − max s))``, the pools in ``stable_order_asc``'s order
    (graded labels by counting, others sorted) with each position's label block, IDCG@k to the bit
    (``ideal_dcg``; -1 when the values are not whole numbers below 256 or not asked) and the labels'
    ``content_key``; workspaces longer than the query and full of garbage change nothing."""
    from lambda_objectives._kernels import pairs
    from lambda_objectives._kernels.ranking import discount_table, ideal_dcg, stable_order_asc
    from lambda_objectives._kernels.yetirank import content_key

    rng = np.random.default_rng(470)
    disc = discount_table(4000)
    for n in (2, 7, 49, 300, 3000):
        labels = [rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]) * 1.0, rng.integers(0, 256, n) * 1.0,
                  np.full(n, 3.0), rng.random(n) * 3.0, np.r_[rng.integers(0, 4, n - 1), 300.0] * 1.0,
                  np.r_[-0.0, rng.integers(0, 3, n - 1) * 1.0]]
        for y in labels:
            for val in (np.exp2(y) - 1.0, y * 0.5, y):
                s = np.round(rng.normal(size=n), 2)
                bits = (y + 0.0).view(np.uint64)
                for k, want, hashed in ((0, True, bits), (5, True, bits[:0]), (0, False, bits)):
                    nf, ni = pairs.sampled_workspace_size(n + 3)
                    fws, iws = np.full(nf, np.nan), np.full(ni, -5, dtype=np.int64)
                    graded, ideal, key = pairs.sampled_tables(s, y, val, hashed, 0.7, k, disc, want, fws, iws)
                    (sr, lr, vr, gr, hr, er, _, _), _, order, by_all, blk, lstart = pairs._sampled_views(fws, iws, n)
                    expect = np.argsort(-s, kind="mergesort")
                    np.testing.assert_array_equal(order, expect)
                    for got, want_values in ((sr, s[expect]), (lr, y[expect]), (vr, val[expect]), (gr, 0.0), (hr, 0.0),
                                             (er, np.array([math.exp(0.7 * (v - s.max())) for v in s[expect]]))):
                        np.testing.assert_array_equal(got, want_values)
                    by = stable_order_asc(lr)
                    np.testing.assert_array_equal(by_all, by)
                    whole = bool(np.all((y >= 0) & (y < 256) & (y == np.floor(y))))
                    assert graded == whole
                    ends = np.searchsorted(lr[by], lr, side="left"), np.searchsorted(lr[by], lr, side="right")
                    if graded:
                        c = lr.astype(np.int64)
                        np.testing.assert_array_equal(lstart[c], ends[0])
                        np.testing.assert_array_equal(lstart[c + 1], ends[1])
                    else:
                        np.testing.assert_array_equal(blk[0::2], ends[0])
                        np.testing.assert_array_equal(blk[1::2], ends[1])
                    countable = want and bool(np.all((val >= 0) & (val < 256) & (val == np.floor(val))))
                    assert ideal == (ideal_dcg(val, k, disc) if countable else -1.0)
                    assert key == (content_key(bits) if hashed.shape[0] else 0)


THREE_THREADS = """
import hashlib
import numpy as np
from lambda_objectives import lambda_gradients
from lambda_objectives.objectives.lambdas import pair_run, pair_setup
rng = np.random.default_rng(3)
sizes = [3000, 1, 2, 700, 60, 60, 5, 1200, 49, 48]
ptr = np.concatenate([[0], np.cumsum(sizes)])
n = ptr[-1]
for labels in (rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]) * 1.0, rng.random(n) * 4.0):
    s = np.round(rng.normal(size=n) + 0.3 * labels, 2)
    for metric, k, m in (("ndcg", None, 1), ("ndcg", 10, 4), ("map", None, 2), ("ranknet", None, 1)):
        opts = dict(pair_method="mean", num_pair_per_sample=m, seed=4, gain="linear") if metric == "ndcg" else \
            dict(pair_method="mean", num_pair_per_sample=m, seed=4)
        plan, normalize, mu, sampling = pair_setup(labels, ptr, n, metric, k, **opts)
        digests = []
        for nt in (1, 2, 3):
            g, h, c = lambda_gradients(s, labels, ptr, metric, k, iteration=2, n_threads=nt, return_cost=True, **opts)
            gp, hp = np.empty(n), np.empty(n)
            pair_run(plan, s, gp, hp, 1.0, normalize, mu, (m, 4, 2), nt)
            assert np.array_equal(gp, g) and np.array_equal(hp, h)
            digests.append(hashlib.md5(g.tobytes() + h.tobytes() + c.tobytes()).hexdigest())
        print(metric, k, m, *digests)
"""


@pytest.mark.kernel
def test_sampled_pairs_are_the_same_bits_at_one_two_and_three_threads():
    """Issue #47: a sampled query's workspaces are one a chunk of queries (sized by its longest), so the
    chunks, and with them the threads, must not show in the bits: long and short queries, graded and
    real-valued labels, ``lambda_gradients`` and a prepared plan, 1, 2 and 3 threads (numba started with 3
    threads in a fresh process, whatever the machine's cores)."""
    assert_same_bits_at_three_threads(THREE_THREADS, 8)


@pytest.mark.parametrize("kwargs, match", [
    ({"pair_method": "bogus"}, r"pair_method must be one of \('all', 'mean'\)"),
    ({"num_pair_per_sample": 3}, r"\['num_pair_per_sample'\] only apply to sampled pairs: pass pair_method='mean'"),
    ({"seed": 3}, r"\['seed'\] only apply to sampled pairs"),
    ({"iteration": 1}, r"\['iteration'\] only apply to sampled pairs"),
    ({"pair_method": "mean", "num_pair_per_sample": 0}, "num_pair_per_sample must be an integer >= 1"),
    ({"pair_method": "mean", "num_pair_per_sample": 2.5}, "num_pair_per_sample must be an integer >= 1"),
    ({"pair_method": "mean", "seed": -1}, "seed must be an integer >= 0"),
    ({"pair_method": "mean", "iteration": -1}, "iteration must be an integer >= 0"),
])
def test_sampling_options_are_checked(kwargs, match):
    s, y, ptr = np.array([0.3, 0.1, -0.2, 0.5]), np.array([2.0, 0.0, 1.0, 0.0]), [0, 4]
    with pytest.raises(ValueError, match=match):
        lambda_gradients(s, y, ptr, "ndcg", **kwargs)


def test_a_pair_weight_function_takes_no_sampling():
    @numba.njit
    def w(a, b, la, lb, ga, gb, k):
        return 1.0

    s, y, ptr = np.array([0.3, 0.1, -0.2, 0.5]), np.array([2.0, 0.0, 1.0, 0.0]), [0, 4]
    with pytest.raises(ValueError, match=r"unknown options for metric='w'.*\['pair_method'\]"):
        lambda_gradients(s, y, ptr, w, pair_method="mean")


# -- bias= (issue #45): every way, every pair objective, against the definition (_oracles.debiased_lambdas) --
@st.composite
def click_queries(draw):
    """Two or three queries of clicks (0/1, or grades for some), a shuffled display position per row."""
    out = []
    for _ in range(draw(st.integers(2, 3))):
        n = draw(st.integers(1, 12))
        scores = [0.37 * v for v in draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))]
        labels = [float(v) for v in draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))]
        pos = draw(st.permutations(list(range(n))))
        out.append((scores, labels, list(pos)))
    k = draw(st.one_of(st.none(), st.integers(1, 8)))
    return out, k


def _flat(queries):
    s = np.concatenate([q[0] for q in queries]).astype(float)
    y = np.concatenate([q[1] for q in queries]).astype(float)
    pos = np.concatenate([q[2] for q in queries]).astype(np.int64)
    ptr = np.r_[0, np.cumsum([len(q[0]) for q in queries])]
    return s, y, pos, ptr


def _close_to_definition(res, bias, want):
    """``lambda_gradients``' ``(grad, hess[, state])`` against the oracle's ``(grad, hess, state)``."""
    _close(res[0], want[0])
    _close(res[1], want[1])
    if bias == "pairwise":
        _close(res[2][0], want[2][0])
        _close(res[2][1], want[2][1])
    elif bias == "additive":
        _close(res[2], want[2])


def _close(got, want):
    want = np.concatenate([np.asarray(w, float) for w in want]) if isinstance(want[0], list) else np.asarray(want)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11 * scale)


@pytest.mark.kernel
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", METRICS)
@settings(max_examples=20 if FAST else 8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=click_queries(), data=st.data())
def test_bias_matches_the_definition(metric, bias, q, data):
    queries, k = q
    s, y, pos, ptr = _flat(queries)
    n_pos = int(pos.max()) + 1
    kw, okw = {}, {}
    if bias == "ips":
        prop = data.draw(st.lists(st.floats(0.05, 1.0), min_size=n_pos, max_size=n_pos))
        kw, okw = dict(propensities=prop), dict(propensities=prop)
    elif bias == "pairwise":
        tp = data.draw(st.lists(st.floats(0.2, 2.0), min_size=n_pos, max_size=n_pos))
        tm = data.draw(st.lists(st.floats(0.2, 2.0), min_size=n_pos, max_size=n_pos))
        kw = dict(bias_state=(np.array(tp), np.array(tm)), bias_norm=0.5)
        okw = dict(t_plus=tp, t_minus=tm, bias_norm=0.5)
    else:
        b = data.draw(st.lists(st.floats(-1.0, 1.0), min_size=n_pos, max_size=n_pos))
        kw = dict(bias_state=np.array(b), learning_rate=0.3, position_bias_regularization=0.2)
        okw = dict(b=b, learning_rate=0.3, regularization=0.2)
    res = lambda_gradients(s, y, ptr, metric, k, 1.0, bias=bias, positions=pos, **kw)
    _close_to_definition(res, bias, oracle.debiased_lambdas(queries, metric, k, 1.0, bias=bias, **okw))


@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
def test_bias_same_bits_at_one_and_two_threads_and_inputs_untouched(bias):
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 40, 60)
    ptr = np.r_[0, np.cumsum(sizes)]
    n = int(ptr[-1])
    s, y = rng.normal(size=n), rng.integers(0, 2, n).astype(float)
    pos = np.concatenate([rng.permutation(m) for m in sizes])
    kw = {"ips": dict(propensities=1.0 / (1.0 + np.arange(40))),
          "pairwise": dict(bias_state=(rng.uniform(0.5, 1, 40), rng.uniform(0.5, 1, 40))),
          "additive": dict(bias_state=rng.normal(size=40), learning_rate=0.1)}[bias]
    before = {key: (v.copy() if isinstance(v, np.ndarray) else tuple(a.copy() for a in v) if isinstance(v, tuple)
                    else v) for key, v in kw.items()}
    pos0 = pos.copy()
    runs = [lambda_gradients(s, y, ptr, "ndcg", 10, bias=bias, positions=pos, n_threads=t, **kw) for t in (1, 2)]
    for a, b in zip(runs[0], runs[1]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(pos, pos0)
    for key, v in kw.items():
        np.testing.assert_array_equal(np.asarray(v), np.asarray(before[key]))
    unbiased = lambda_gradients(s, y, ptr, "ndcg", 10)
    assert not np.array_equal(runs[0][0], unbiased[0])  # the bias did something


def test_bias_none_is_bit_identical_and_ones_are_neutral():
    rng = np.random.default_rng(4)
    ptr = np.array([0, 30, 31, 80])
    s, y = rng.normal(size=80), rng.integers(0, 3, 80).astype(float)
    g, h = lambda_gradients(s, y, ptr, "err", 5)
    for kw in (dict(bias="ips", propensities=np.ones(49)), dict(bias="pairwise"),
               dict(bias="additive", learning_rate=0.1)):
        res = lambda_gradients(s, y, ptr, "err", 5, **kw)
        np.testing.assert_array_equal(res[0], g)
        np.testing.assert_array_equal(res[1], h)


@pytest.mark.parametrize("bias", ["ips", "pairwise"])
def test_yetirank_bias_scales_each_drawn_pair_by_its_factors(bias):
    """YetiRank's drawn pairs through the same factors: on two-document queries each query's derivatives are
    the plain ones times fa[high]·fb[low] (the definition, one pair a query); factors of 1 change no bit."""
    rng = np.random.default_rng(5)
    nq = 40
    ptr = np.arange(0, 2 * nq + 1, 2)
    s = rng.normal(size=2 * nq)
    y = np.tile([1.0, 0.0], nq)
    pos = np.concatenate([rng.permutation(2) for _ in range(nq)])
    plain = lambda_gradients(s, y, ptr, "yetirank")
    if bias == "ips":
        theta = np.array([0.9, 0.3])
        res = lambda_gradients(s, y, ptr, "yetirank", bias="ips", propensities=theta, positions=pos)
        factor = np.repeat(1.0 / theta[pos[0::2]], 2)  # the clicked row is each query's first
        ones = lambda_gradients(s, y, ptr, "yetirank", bias="ips", propensities=np.ones(2), positions=pos)
    else:
        tp, tm = np.array([1.0, 0.5]), np.array([1.0, 2.0])
        res = lambda_gradients(s, y, ptr, "yetirank", bias="pairwise", positions=pos, bias_state=(tp, tm))
        factor = np.repeat(1.0 / (tp[pos[0::2]] * tm[pos[1::2]]), 2)
        ones = lambda_gradients(s, y, ptr, "yetirank", bias="pairwise", positions=pos)
        # the next factors from the pass's costs: each query's one pair, cost w·softplus(s_low - s_high)
        assert res[2][0][0] == 1.0 and res[2][1][0] == 1.0 and np.all(res[2][0] > 0)
    np.testing.assert_allclose(res[0], plain[0] * factor, rtol=1e-13)
    np.testing.assert_allclose(res[1], plain[1] * factor, rtol=1e-13)
    np.testing.assert_array_equal(ones[0], plain[0])
    np.testing.assert_array_equal(ones[1], plain[1])


# -- bias= on sampled pairs (pair_method="mean") and at any thread count, every pair objective (issue #45) ---------
def _bias_case(bias, n_pos, rng):
    """``(kw, okw)``: the options of one ``bias=`` for :func:`lambda_gradients` and for the oracle."""
    if bias == "ips":
        prop = rng.uniform(0.05, 1.0, n_pos)
        return dict(propensities=prop), dict(propensities=list(prop))
    if bias == "pairwise":
        tp, tm = rng.uniform(0.2, 2.0, n_pos), rng.uniform(0.2, 2.0, n_pos)
        return dict(bias_state=(tp, tm), bias_norm=0.5), dict(t_plus=list(tp), t_minus=list(tm), bias_norm=0.5)
    b = rng.uniform(-1.0, 1.0, n_pos)
    return (dict(bias_state=b, learning_rate=0.3, position_bias_regularization=0.2),
            dict(b=list(b), learning_rate=0.3, regularization=0.2))


def _click_batch(seed, sizes):
    """Queries of scores, graded labels and shuffled display positions, as the oracle takes them and flat."""
    rng = np.random.default_rng(seed)
    queries = [(list(np.round(rng.normal(size=n), 1)), list(rng.integers(0, 3, n).astype(float)),
                list(rng.permutation(n))) for n in sizes]
    return queries, _flat(queries)


@pytest.mark.kernel
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [None, 4])
def test_bias_on_whole_pools_of_sampled_pairs_is_the_definition(metric, bias, k):
    """pair_method="mean" with pools of at most m documents takes every pair (1/2 from each side): every bias=
    gives the debiased full-list lambdas of the definition, and "pairwise" the next factors from the same costs."""
    queries, (s, y, pos, ptr) = _click_batch(0, (7, 1, 12, 5))
    kw, okw = _bias_case(bias, int(pos.max()) + 1, np.random.default_rng(1))
    res = lambda_gradients(s, y, ptr, metric, k, bias=bias, positions=pos, pair_method="mean", num_pair_per_sample=11,
                           **kw)
    _close_to_definition(res, bias, oracle.debiased_lambdas(queries, metric, k, 1.0, bias=bias, **okw))
    assert np.any(res[0] != lambda_gradients(s, y, ptr, metric, k, pair_method="mean", num_pair_per_sample=11)[0])


@pytest.mark.kernel
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", METRICS)
def test_bias_on_sampled_pairs_is_unbiased_for_the_definition(metric, bias):
    """m = 2 partners a document, 300 seeds: the mean of the debiased sampled lambdas is the definition's
    debiased full-list lambdas (per document z = (mean − definition)/se, root-mean-square z near 1, no |z|
    beyond 5); the factors are applied to each drawn pair, not to the pool."""
    queries, (s, y, pos, ptr) = _click_batch(2, (30, 18, 25))
    kw, okw = _bias_case(bias, int(pos.max()) + 1, np.random.default_rng(3))
    eg, eh, _ = oracle.debiased_lambdas(queries, metric, 5, 1.0, bias=bias, **okw)
    draws = [lambda_gradients(s, y, ptr, metric, 5, bias=bias, positions=pos, pair_method="mean",
                              num_pair_per_sample=2, seed=i, n_threads=1, **kw) for i in range(300)]
    for want, est in ((eg, np.array([d[0] for d in draws])), (eh, np.array([d[1] for d in draws]))):
        full = np.concatenate([np.asarray(w, float) for w in want])
        se = est.std(0, ddof=1) / np.sqrt(len(draws))
        varies = se > 1e-12 * max(1.0, np.abs(full).max())
        np.testing.assert_allclose(est.mean(0)[~varies], full[~varies], rtol=1e-9, atol=1e-12)
        z = (est.mean(0) - full)[varies] / se[varies]
        assert varies.sum() > 20 and 0.7 < np.sqrt(np.mean(z ** 2)) < 1.3 and np.abs(z).max() < 5


@pytest.mark.parametrize("pair_method", ["all", "mean"])
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", METRICS)
def test_bias_same_bits_at_one_and_two_threads_every_objective(metric, bias, pair_method):
    """Every bias= with every pair objective, full and sampled pairs (a seed): the same bits, the next state
    included, at 1 and 2 threads; a different seed draws other pairs."""
    _, (s, y, pos, ptr) = _click_batch(4, np.random.default_rng(4).integers(1, 30, 50))
    kw, _ = _bias_case(bias, int(pos.max()) + 1, np.random.default_rng(5))
    sampled = dict(pair_method="mean", num_pair_per_sample=2, seed=7, iteration=3) if pair_method == "mean" else {}
    runs = [lambda_gradients(s, y, ptr, metric, 10, bias=bias, positions=pos, n_threads=t, **sampled, **kw)
            for t in (1, 2)]
    for a, b in zip(runs[0][:2], runs[1][:2]):
        np.testing.assert_array_equal(a, b)
    if bias != "ips":
        for a, b in zip(np.atleast_2d(runs[0][2]), np.atleast_2d(runs[1][2])):
            np.testing.assert_array_equal(a, b)
    if sampled:
        other = lambda_gradients(s, y, ptr, metric, 10, bias=bias, positions=pos, **dict(sampled, seed=8), **kw)
        assert not np.array_equal(other[0], runs[0][0])
