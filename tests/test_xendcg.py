"""XE-NDCG: the exact gradient against its definition, LightGBM's rank_xendcg bit for bit."""

import numpy as np
import pytest
from conftest import shared_file

from lambda_objectives import LightGBMObjective, make_ranking, xendcg_gradients
from lambda_objectives._kernels.xendcg import lgb_next_float


def _loss(s, y, gammas):
    """XE-NDCG of one query from its definition: −Σ φ_i/Σφ log softmax(s)_i, φ = 2^y − γ."""
    phi = 2.0 ** np.asarray(y) - gammas
    z = s - s.max()
    log_rho = z - np.log(np.exp(z).sum())
    return -np.sum(phi / phi.sum() * log_rho)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_and_hessian_are_the_derivatives_of_the_loss(seed):
    rng = np.random.default_rng(seed)
    n = 7
    s, y, gam = rng.normal(size=n), rng.integers(0, 4, n).astype(float), rng.random(n)
    y[0] += 0.5  # real-valued labels are allowed
    g, h = xendcg_gradients(s, y, [0, n], gammas=gam)
    eps = 1e-6
    for i in range(n):
        e = np.zeros(n)
        e[i] = eps
        assert (_loss(s + e, y, gam) - _loss(s - e, y, gam)) / (2 * eps) == pytest.approx(g[i], abs=1e-8)
        gp = xendcg_gradients(s + e, y, [0, n], gammas=gam)[0]
        gm = xendcg_gradients(s - e, y, [0, n], gammas=gam)[0]
        assert (gp[i] - gm[i]) / (2 * eps) == pytest.approx(h[i], abs=1e-7)
    assert abs(g.sum()) < 1e-12  # softmax minus a distribution


def test_lambda_gradients_dispatches_xendcg_and_refuses_pair_options():
    from lambda_objectives import lambda_gradients

    s, y, ptr = np.array([0.1, 0.5, -0.2, 0.3]), np.array([1.0, 0.0, 2.0, 0.0]), [0, 4]
    np.testing.assert_array_equal(lambda_gradients(s, y, ptr, "xendcg", seed=3)[0],
                                  xendcg_gradients(s, y, ptr, seed=3)[0])
    for kw in ({"k": 3}, {"sigma": 2.0}, {"normalize": "lambdarank"}, {"return_pairs": True},
               {"label_gain": np.array([0.0, 1.0, 3.0])}):  # an array option once raised numpy's truth-value error
        with pytest.raises(ValueError, match="listwise"):
            lambda_gradients(s, y, ptr, "xendcg", **kw)
    with pytest.raises(ValueError, match="only apply to sampled pairs"):  # seed is read with pair_method="mean"
        lambda_gradients(s, y, ptr, "ndcg", seed=1)


def test_queries_weights_seeds_and_bad_input():
    s, y, ptr = np.array([0.1, 0.5, -0.2, 0.3]), np.array([1.0, 0.0, 2.0, 0.0]), [0, 1, 4]
    g, h = xendcg_gradients(s, y, ptr, seed=4, query_weights=[1.0, 2.0])
    g1, _ = xendcg_gradients(s, y, ptr, seed=4)
    assert g[0] == 0 and h[0] == 0  # a one-document query
    np.testing.assert_allclose(g[1:], 2 * g1[1:])
    assert not np.array_equal(g1, xendcg_gradients(s, y, ptr, seed=5)[0])  # γ is random
    for kw, match in ((dict(gammas=[0.1, 0.2, 1.0, 0.3]), r"\[0, 1\)"), (dict(gammas=[0.1]), "gammas has 1"),
                      (dict(gammas=[0.1] * 4, seed=1), "not both")):
        with pytest.raises(ValueError, match=match):
            xendcg_gradients(s, y, ptr, **kw)
    with pytest.raises(ValueError, match="below 1024"):
        xendcg_gradients(s, [1.0, 0.0, 2000.0, 0.0], ptr, seed=0)
    with pytest.raises(ValueError, match="ignores weights"):
        LightGBMObjective("xendcg", preset="lightgbm").gradients(s, y, ptr, weight=np.ones(4))
    with pytest.raises(ValueError, match="unknown options"):
        LightGBMObjective("xendcg", k=3, preset="lightgbm", norm=False)
    with pytest.raises(ValueError, match="with preset='xgboost'"):
        LightGBMObjective("xendcg", preset="xgboost")


@pytest.mark.kernel
def test_lightgbm_generator_is_its_lcg():
    state, x = np.array([5], dtype=np.uint32), 5
    for _ in range(1000):
        x = (214013 * x + 2531011) % 2 ** 32
        assert float(lgb_next_float(state)) == ((x >> 16) & 0x7FFF) / 32768.0
    assert int(state[0]) == x


def _lightgbm_parity(X, y, group, rounds=50):
    lgb = pytest.importorskip("lightgbm")
    params = dict(verbose=-1, num_threads=1, deterministic=True, force_row_wise=True, num_leaves=15,
                  learning_rate=0.1, min_data_in_leaf=5, seed=3, objective_seed=11)
    native = lgb.train(dict(params, objective="rank_xendcg"), lgb.Dataset(X, y, group=group), rounds)
    ours = LightGBMObjective("xendcg", preset="lightgbm", objective_seed=11)
    custom = lgb.train(dict(params, objective=ours), lgb.Dataset(X, y, group=group), rounds)
    np.testing.assert_array_equal(native.predict(X), custom.predict(X))


def test_preset_lightgbm_reproduces_rank_xendcg_bit_for_bit_on_synthetic_data():
    d = make_ranking(60, docs_per_query=(1, 30), n_features=6, seed=1)
    _lightgbm_parity(d.X, d.y, d.group)


def test_preset_lightgbm_reproduces_rank_xendcg_bit_for_bit_on_mq2008(shared_data):
    from lambda_objectives import load_letor

    d = load_letor(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"))
    _lightgbm_parity(d.X, d.y, d.group)


def _exact_ratios(y, gammas):
    """φ_i/Σφ in exact rational arithmetic (no overflow at any label below 1024)."""
    from fractions import Fraction

    phi = [2 ** int(v) - Fraction(g) for v, g in zip(y, gammas)]  # integer labels: 2**y exactly
    total = sum(phi)
    return np.array([float(p / total) for p in phi])


@pytest.mark.parametrize("y,s,gam", [
    ([1023.0, 1023.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5]),              # the reproduction of issue #48
    ([1023.0, 1023.0, 1023.0], [1e300, -1e300, 3.0], [0.9, 0.0, 0.3]),       # every target huge, huge scores
    ([1023.0, 1022.0, 1021.0, 1023.0, 0.0, 5.0], [0.1, -0.4, 2.0, 0.0, 7.0, -3.0], [0.0, 0.99, 0.5, 0.25, 0.999, 0.1]),
])
def test_an_overflowing_target_sum_keeps_the_exact_ratios(y, s, gam):
    """Σ(2^y − γ) beyond float64 (issue #48: [1023, 1023, 0] gave ρ = 1/3 each, the targets lost): the
    kernel factors a power of two out of the targets, so φ/Σφ is the exact ratio, correctly rounded."""
    from lambda_objectives import lambda_gradients

    y, s, gam = np.array(y), np.array(s), np.array(gam)
    n = y.shape[0]
    z = s - s.max()
    rho = np.exp(z) / np.exp(z).sum()
    g, h = xendcg_gradients(s, y, [0, n], gammas=gam)
    np.testing.assert_allclose(g, rho - _exact_ratios(y, gam), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(h, rho * (1 - rho), rtol=1e-15, atol=0)
    assert abs(g.sum()) < 1e-15
    if n == 3 and s[0] == 0.0:
        np.testing.assert_allclose(g, [-1 / 6, -1 / 6, 1 / 3], rtol=1e-15)
    # the same kernel behind lambda_gradients (γ from default_rng(seed)) and the exact engine objective
    # (its first round draws default_rng(seed=0)), as float32 there
    g2, _ = lambda_gradients(s, y, [0, n], "xendcg", seed=1)
    np.testing.assert_allclose(g2, rho - _exact_ratios(y, np.random.default_rng(1).random(n)), rtol=1e-15, atol=1e-16)
    g3, _ = LightGBMObjective("xendcg").gradients(s, y, [0, n])
    want = (rho - _exact_ratios(y, np.random.default_rng(0).random(n))).astype(np.float32)
    np.testing.assert_allclose(g3, want, rtol=1e-7, atol=1e-8)


def test_targets_that_sum_finitely_keep_their_bits():
    """The rescaling only runs when Σφ overflows: big finite sums take the plain division, to the bit."""
    rng = np.random.default_rng(3)
    n = 9
    s, gam = rng.normal(size=n), rng.random(n)
    for top in (3.0, 600.0, 1022.0):  # 1022: 2^1022 + 2^1021 + … is still finite
        y = np.array([top, 0.0, 1.0, 2.0, 0.0, top - 1, 3.0, 0.0, 1.0])
        phi = 2.0 ** y - gam
        ez = np.exp(s - s.max())
        total = 0.0
        for v in ez:  # the kernel's order of summation
            total += v
        rho = ez / total
        total = 0.0
        for p in phi:
            total += p
        g, _ = xendcg_gradients(s, y, [0, n], gammas=gam)
        np.testing.assert_array_equal(g, rho - phi / total)


def test_preset_lightgbm_refuses_the_labels_lightgbm_overflows():
    """LightGBM's rank_xendcg takes 2**int(label) with Common::Pow(2, int), whose base is a 32-bit int:
    labels from 32 on overflow in C++ and LightGBM's gradients are then not XE-NDCG's (its probe gives
    [0.254, 1.997, -2.251] for labels [1023, 1023, 0] at zero scores). Nothing to reproduce, so refused."""
    s, ptr = np.array([0.1, -0.3, 0.5, 0.2]), [0, 4]
    obj = LightGBMObjective("xendcg", preset="lightgbm", objective_seed=1)
    g, _ = obj.gradients(s, np.array([31.0, 31.0, 0.0, 30.9]), ptr)  # 31.9 would truncate to 31 too
    assert np.all(np.isfinite(g))
    for bad in (32.0, 1023.0, 40.5):
        with pytest.raises(ValueError, match=r"label .* at row 1: LightGBM's rank_xendcg .* 32-bit"):
            LightGBMObjective("xendcg", preset="lightgbm").gradients(s, np.array([1.0, bad, 0.0, 2.0]), ptr)
    # the exact back end takes them (the sum of the targets overflows float64 here, the ratios do not)
    g, _ = LightGBMObjective("xendcg").gradients(s, np.array([1023.0, 1023.0, 0.0, 2.0]), ptr)
    assert np.all(np.isfinite(g)) and g[2] > 0 and g[3] > 0


def test_preset_lightgbm_matches_the_engine_at_label_31():
    """The largest label LightGBM computes exactly: the preset and LightGBM's own gradients agree (probe)."""
    pytest.importorskip("lightgbm")
    from lambda_objectives import probe_lightgbm

    s, y, ptr = np.array([0.1, -0.3, 0.5, 0.2]), np.array([31.0, 31.0, 0.0, 30.0]), np.array([0, 4])
    g, h = probe_lightgbm(y, ptr, {"objective": "rank_xendcg", "objective_seed": 1, "metric": "None"}, scores=s)
    go, ho = LightGBMObjective("xendcg", preset="lightgbm", objective_seed=1).gradients(s, y, ptr)
    np.testing.assert_allclose(go, g, rtol=1e-6)
    np.testing.assert_allclose(ho, h, rtol=1e-6)
