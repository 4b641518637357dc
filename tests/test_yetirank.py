"""YetiRank gradients: seed averages converge to the expectation that matches CatBoost's YetiRank,
a fixed seed reproduces exactly, options are checked."""

import numpy as np
import pytest

from lambda_objectives.objectives import OBJECTIVES, YETIRANK_DEFAULTS
from lambda_objectives.catboost import catboost_yetirank_expected_gradients
from lambda_objectives import lambda_gradients, yetirank_gradients


def _data(seed=0, sizes=(6, 9, 1, 12)):
    rng = np.random.default_rng(seed)
    ptr = np.r_[0, np.cumsum(sizes)]
    s = rng.normal(size=ptr[-1])
    y = rng.integers(0, 4, ptr[-1]).astype(float)
    return s, y, ptr


def _seed_average(s, y, ptr, rounds, **opts):
    g = np.array([yetirank_gradients(s, y, ptr, iteration=r, **opts)[0] for r in range(rounds)])
    h = np.array([yetirank_gradients(s, y, ptr, iteration=r, **opts)[1] for r in range(rounds)])
    return g.mean(0), g.std(0, ddof=1) / np.sqrt(rounds), h.mean(0), h.std(0, ddof=1) / np.sqrt(rounds)


def _z(mean, se, want, want_se):
    keep = (se > 0) | (want_se > 0)
    return np.abs(mean[keep] - want[keep]) / np.sqrt(se[keep] ** 2 + want_se[keep] ** 2)


@pytest.mark.parametrize("decay", [0.85, 0.5])
def test_round_averages_converge_to_catboosts_expected_yetirank_gradients(decay):
    s, y, ptr = _data()
    g, g_se, h, h_se = _seed_average(s, y, ptr, 1500, seed=2, decay=decay)
    d1, d2, d1_se = catboost_yetirank_expected_gradients(s, y, ptr, n_samples=200_000, seed=1, decay=decay)
    z = _z(g, g_se, -d1, d1_se)  # CatBoost's der1 is −∂L/∂s, ours +∂L/∂s
    assert z.size > 20 and z.max() < 5 and np.mean(z <= 2) >= 0.85
    # der2: no Monte-Carlo standard error is returned for it; the round spread dominates anyway
    zh = _z(h, h_se, -d2, np.zeros_like(d2))
    assert zh.max() < 5.5 and np.mean(zh <= 2) >= 0.8
    assert np.all(g[ptr[2]:ptr[3]] == 0)  # the one-document query
    # the test has the power to see a wrong weight: CatBoost's older default decay 0.99 is rejected
    e1, _, e_se = catboost_yetirank_expected_gradients(s, y, ptr, n_samples=50_000, seed=1, decay=0.99)
    assert _z(g, g_se, -e1, e_se).max() > 5


def _ndcg_expectation(s, y, n_samples, rng):
    """Expected ``mode="ndcg"`` derivatives by numpy's own generator: logistic noise, stable sort,
    neighbours weighted by |ΔDCG|/IDCG of their swap (linear gain, log2(2 + p) discount)."""
    m = s.size
    idcg = np.sum(np.sort(y)[::-1] / np.log2(np.arange(m) + 2.0))
    gap = np.abs(1 / np.log2(np.arange(1, m) + 1.0) - 1 / np.log2(np.arange(1, m) + 2.0))
    u = rng.random((n_samples, m), dtype=np.float32)
    with np.errstate(divide="ignore"):
        noisy = s + np.log((u / (np.float32(1.000001) - u)).astype(float))
    o = np.argsort(-noisy, axis=1, kind="stable")
    a, b = o[:, :-1], o[:, 1:]
    w = np.abs(y[a] - y[b]) * gap / idcg
    hi = np.where(y[a] > y[b], a, b)
    lo = np.where(y[a] > y[b], b, a)
    p = 1 / (1 + np.exp(s[hi] - s[lo]))
    per = np.zeros((n_samples, m))
    rows = np.arange(n_samples)[:, None]
    np.add.at(per, (rows, hi), -w * p)
    np.add.at(per, (rows, lo), w * p)
    return per.mean(0), per.std(0, ddof=1) / np.sqrt(n_samples)


def test_ndcg_mode_converges_to_its_expectation_under_numpys_generator():
    s, y, _ = _data(5, sizes=(10,))
    g, g_se, _, _ = _seed_average(s, y, [0, 10], 1500, seed=4, mode="ndcg")
    want, want_se = _ndcg_expectation(s, y, 100_000, np.random.default_rng(0))
    z = _z(g, g_se, want, want_se)
    assert z.size >= 8 and z.max() < 5


def test_a_fixed_seed_reproduces_exactly_and_options_change_the_draws():
    s, y, ptr = _data(1)
    g, h = yetirank_gradients(s, y, ptr, seed=7, iteration=3)
    g2, h2 = yetirank_gradients(s.copy(), y.copy(), ptr, seed=7, iteration=3, n_threads=1)
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_array_equal(h, h2)
    for other in ({"seed": 8}, {"iteration": 4}, {"permutations": 11}):
        assert not np.array_equal(g, yetirank_gradients(s, y, ptr, **{"seed": 7, "iteration": 3, **other})[0])
    assert np.all(h >= 0) and abs(g.sum()) < 1e-12  # pair terms cancel within each query


def test_inputs_are_not_mutated_and_out_and_query_weights_work():
    s, y, ptr = _data(2)
    s0, y0 = s.copy(), y.copy()
    g, h = np.empty_like(s), np.empty_like(s)
    res = yetirank_gradients(s, y, ptr, seed=1, out=(g, h), query_weights=[1.0, 2.0, 1.0, 0.0])
    assert res[0] is g and res[1] is h
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)
    base = yetirank_gradients(s, y, ptr, seed=1)[0]
    np.testing.assert_allclose(g[ptr[1]:ptr[2]], 2.0 * base[ptr[1]:ptr[2]], rtol=1e-15)
    assert np.all(g[ptr[3]:] == 0)


@pytest.mark.filterwarnings("ignore:lambda_gradients.*is deprecated:FutureWarning")  # the second door, one release
def test_defaults_are_catboosts_and_lambda_gradients_dispatches_yetirank():
    assert YETIRANK_DEFAULTS == {"permutations": 10, "decay": 0.85, "mode": "classic", "num_neighbors": 1,
                                 "top": None, "noise": "gumbel", "noise_power": 1.0}
    assert "yetirank" in OBJECTIVES
    s, y, ptr = _data(3)
    with pytest.warns(FutureWarning, match="call lambda_objectives.yetirank_gradients"):
        old = lambda_gradients(s, y, ptr, "yetirank", seed=4)
    np.testing.assert_array_equal(old[0], yetirank_gradients(s, y, ptr, seed=4)[0])
    with pytest.raises(ValueError, match="samples its pairs"):
        lambda_gradients(s, y, ptr, "yetirank", k=5)


@pytest.mark.parametrize("opts, match", [
    ({"permutations": 0}, "permutations must be an integer >= 1"),
    ({"permutations": 2.5}, "permutations must be an integer"),
    ({"permutations": True}, "permutations must be an integer"),
    ({"decay": 0.0}, r"decay must be a number in \(0, 1\]"),
    ({"decay": 1.01}, r"decay must be a number in \(0, 1\]"),
    ({"decay": float("nan")}, r"decay must be a number in \(0, 1\]"),
    ({"mode": "pfound"}, "mode must be one of"),
    ({"num_neighbors": 0, "mode": "mrr"}, "num_neighbors must be an integer >= 1, or -1"),
    ({"num_neighbors": 1.5, "mode": "mrr"}, "num_neighbors must be an integer"),
    ({"top": 0, "mode": "map"}, "top must be an integer >= 1"),
    ({"noise": "uniform"}, "noise must be one of"),
    ({"noise": "gauss", "noise_power": 0.0}, "noise_power must be a finite number > 0"),
    ({"noise": "gauss", "noise_power": float("inf")}, "noise_power must be a finite number > 0"),
    # an option the mode or noise does not read is refused, not ignored
    ({"mode": "mrr", "decay": 0.5}, "decay=0.5: mode='mrr' .* does not read it"),
    ({"top": 3}, "top=3: mode='classic' .* does not read it"),
    ({"num_neighbors": 2}, "num_neighbors=2: mode='classic' .* does not read it"),
    ({"noise_power": 2.0}, "noise_power=2.0: noise='gumbel' .* does not read it"),
    ({"noise": "no", "permutations": 5}, "permutations=5: noise='no' .* does not read it"),
    ({"mode": "err"}, "mode='err' reads labels as stop probabilities in \\[0, 1\\].*row 1 is 2"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"seed": 2 ** 64}, "seed must be an integer >= 0 and < 2\\*\\*64"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"iteration": -1}, "iteration must be an integer >= 0"),
    ({"query_weights": [1.0, -1.0, 1.0, 1.0]}, "query_weights must be finite and non-negative"),
    ({"out": (np.empty(3), np.empty(3))}, "out must be two contiguous float64 arrays"),
])
def test_bad_options_raise(opts, match):
    s, y, ptr = _data()
    with pytest.raises(ValueError, match=match):
        yetirank_gradients(s, y, ptr, **opts)


def test_bad_data_raises():
    s, y, ptr = _data()
    with pytest.raises(ValueError, match="non-negative"):
        yetirank_gradients(s, -y - 1, ptr)
    with pytest.raises(ValueError, match="non-finite"):
        yetirank_gradients(np.r_[np.nan, s[1:]], y, ptr)


def test_mode_ndcg_accepts_upper_case_and_all_zero_queries_give_zero():
    s, y, ptr = _data()
    np.testing.assert_array_equal(yetirank_gradients(s, y, ptr, mode="NDCG")[0],
                                  yetirank_gradients(s, y, ptr, mode="ndcg")[0])
    g, h = yetirank_gradients(s, np.zeros_like(y), ptr, mode="ndcg")
    assert np.all(g == 0) and np.all(h == 0)


def test_our_seed_means_match_catboosts_own_yetirank(monkeypatch):
    pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")
    import lambda_objectives.catboost as yr  # yetirank_catboost_row and the yetirank_gradients it calls

    rng = np.random.default_rng(0)
    ptr = np.r_[0, np.cumsum(rng.integers(3, 12, size=4))]
    y = rng.integers(0, 3, size=ptr[-1]).astype(float)
    s = np.round(rng.normal(size=ptr[-1]), 1)  # ties
    row = yr.yetirank_catboost_row(s, y, ptr, n_seeds=10, permutations=200)
    assert row["reproduced"] == "pass" and row["n_docs"] == y.size, row
    # the comparison can fail: our side with CatBoost's older default decay 0.99 is told apart
    real = yr.yetirank_gradients
    monkeypatch.setattr(yr, "yetirank_gradients", lambda *a, **kw: real(*a, **{**kw, "decay": 0.99}))
    assert yr.yetirank_catboost_row(s, y, ptr, n_seeds=10, permutations=200)["reproduced"] == "differs"
    with pytest.raises(ValueError, match="n_seeds"):
        yr.yetirank_catboost_row(s, y, ptr, n_seeds=1)


def test_decay_with_ndcg_mode_is_refused_not_ignored():
    s, y, ptr = _data(1)
    with pytest.raises(ValueError, match="mode='ndcg' .* does not read it"):
        yetirank_gradients(s, y, ptr, mode="ndcg", decay=0.5)
    # the default decay is not a request: mode="ndcg" alone works
    yetirank_gradients(s, y, ptr, mode="ndcg")


def _binary_queries(seed=0):
    """Four short queries, two graded relevant documents each (MRR/MAP/ERR need both classes)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 7, size=4)
    y = np.concatenate([rng.permutation(np.r_[rng.integers(1, 3, size=2), np.zeros(m - 2)]) for m in sizes])
    return np.round(rng.normal(size=y.size), 1), y, np.r_[0, np.cumsum(sizes)]


@pytest.mark.parametrize("opts", [
    {"mode": "dcg"}, {"mode": "ndcg", "num_neighbors": 2, "top": 3}, {"mode": "mrr"},
    {"mode": "mrr", "num_neighbors": -1}, {"mode": "err"}, {"mode": "err", "num_neighbors": -1, "top": 2},
    {"mode": "map"}, {"mode": "map", "num_neighbors": 3, "top": 4}, {"mode": "classic", "noise": "gauss"},
    {"mode": "ndcg", "noise": "gauss", "noise_power": 0.5},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_every_mode_and_noise_matches_catboosts_own_yetirank_in_expectation(opts):
    """CatBoost's YetiRank:mode=…, 10 seeds × 200 rankings, against ours over 10 rounds: a z-test per
    document on der1 and der2 (ERR reads labels as probabilities: grades 0/1/2 become 0/0.25/0.75)."""
    pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")
    from lambda_objectives.catboost import yetirank_catboost_row

    s, y, ptr = _binary_queries()
    if opts["mode"] == "err":
        y = np.array([0.0, 0.25, 0.75])[y.astype(int)]
    row = yetirank_catboost_row(s, y, ptr, n_seeds=10, permutations=200, **opts)
    assert row["reproduced"] == "pass" and row["mode"] == opts["mode"], row


@pytest.mark.parametrize("opts, wrong", [
    ({"mode": "map", "num_neighbors": 3, "top": 4}, {"num_neighbors": 1}),   # the partners count
    ({"mode": "mrr", "num_neighbors": -1}, {"mode": "map"}),                 # the weight
    ({"mode": "ndcg", "noise": "gauss", "noise_power": 0.5}, {"noise_power": 0.25}),  # deviation, not variance
])
def test_the_catboost_comparison_tells_a_wrong_option_apart(monkeypatch, opts, wrong):
    pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")
    import lambda_objectives.catboost as yr  # yetirank_catboost_row and the yetirank_gradients it calls

    s, y, ptr = _binary_queries()
    real = yr.yetirank_gradients
    monkeypatch.setattr(yr, "yetirank_gradients", lambda *a, **kw: real(*a, **{**kw, **wrong}))
    assert yr.yetirank_catboost_row(s, y, ptr, n_seeds=10, permutations=200, **opts)["reproduced"] == "differs"


@pytest.mark.parametrize("opts, labels", [
    ({"mode": "classic", "noise": "no"}, "distinct"), ({"mode": "map", "noise": "no", "num_neighbors": -1}, "binary"),
    ({"mode": "err", "noise": "no", "num_neighbors": -1}, "binary"),
    ({"mode": "mrr", "noise": "no", "num_neighbors": -1}, "binary"),
    ({"mode": "ndcg", "noise": "none", "num_neighbors": -1, "top": 2}, "distinct"),
])
def test_without_noise_every_weight_is_catboosts_to_its_float32(opts, labels):
    """No noise: one ranking, so CatBoost's derivatives and ours agree document by document (CatBoost
    keeps pair weights in float32); every document is in a pair, as the probe needs."""
    pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")
    from lambda_objectives.catboost import yetirank_catboost_row

    rng = np.random.default_rng(1)
    sizes = np.array([4, 5, 3])
    s = np.round(rng.normal(size=sizes.sum()), 2)
    if labels == "distinct":
        y = np.concatenate([rng.permutation(m).astype(float) for m in sizes])
    else:
        y = np.concatenate([rng.permutation(np.r_[1.0, 2.0, np.zeros(m - 2)]) for m in sizes])
        y = y / 4 if opts["mode"] == "err" else y
    row = yetirank_catboost_row(s, y, np.r_[0, np.cumsum(sizes)], n_seeds=2, **opts)
    assert row["reproduced"] == "pass" and row["der1_median_rel"] < 1e-6, row


def test_noise_free_modes_are_deterministic_and_gauss_noise_is_seeded():
    s, y, ptr = _binary_queries(3)
    a = yetirank_gradients(s, y, ptr, mode="map", noise="no", seed=1, iteration=0)[0]
    np.testing.assert_array_equal(a, yetirank_gradients(s, y, ptr, mode="map", noise="no", seed=9, iteration=5)[0])
    g = yetirank_gradients(s, y, ptr, mode="mrr", noise="gauss", seed=1, iteration=0)[0]
    np.testing.assert_array_equal(g, yetirank_gradients(s, y, ptr, mode="mrr", noise="gauss", seed=1, iteration=0)[0])
    assert not np.array_equal(g, yetirank_gradients(s, y, ptr, mode="mrr", noise="gauss", seed=2, iteration=0)[0])


def test_outputs_may_not_alias_the_inputs_or_each_other():
    # yetirank_gradients and plrank_gradients once had their own weaker copy of the output check
    from lambda_objectives import plrank_gradients

    s, y, ptr = _data()
    for fn in (yetirank_gradients, plrank_gradients):
        with pytest.raises(ValueError, match="overlaps the scores"):
            fn(s, y, ptr, out=(s, np.empty_like(s)))
        g = np.empty_like(s)
        with pytest.raises(ValueError, match="must not overlap"):
            fn(s, y, ptr, out=(g, g))
