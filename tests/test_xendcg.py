"""XE-NDCG (lambda_objectives/xendcg.py and _kernels/xendcg.py): loss gradient, LightGBM parity, input checks."""

import math

import numpy as np
import pytest
from conftest import shared_file

from lambda_objectives import XENDCGGammas, load_letor, make_ranking, xendcg_gradients
from lambda_objectives._kernels import xendcg as xk


def _loss(s, y, gam):
    """XE-NDCG of one query from its definition: −Σ p_i log softmax_i(s), p ∝ 2^y − γ."""
    phi = [2.0 ** yi - gi for yi, gi in zip(y, gam)]
    m = max(s)
    lse = m + math.log(sum(math.exp(v - m) for v in s))
    return -sum(p / sum(phi) * (v - lse) for p, v in zip(phi, s))


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(5))
def test_gradient_is_finite_difference_of_loss(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    s = rng.normal(size=n) * 2
    y = np.where(rng.random(n) < 0.5, rng.integers(0, 4, n), rng.random(n) * 3)  # real labels
    gam = rng.random(n)
    g, h = np.empty(n), np.empty(n)
    xk.xendcg_query(s, y, gam, g, h)
    eps = 1e-6
    for d in range(n):
        up, dn = s.copy(), s.copy()
        up[d] += eps
        dn[d] -= eps
        assert g[d] == pytest.approx((_loss(up, y, gam) - _loss(dn, y, gam)) / (2 * eps), rel=1e-6, abs=1e-9)
        e2 = 1e-4
        up[d], dn[d] = s[d] + e2, s[d] - e2
        fd2 = (_loss(up, y, gam) - 2 * _loss(s, y, gam) + _loss(dn, y, gam)) / e2 ** 2
        assert h[d] == pytest.approx(fd2, rel=1e-5, abs=1e-6)


def test_public_function_matches_kernel_and_threads_do_not_matter():
    d = make_ranking(40, docs_per_query=(1, 30), n_features=3, seed=2)
    s = np.random.default_rng(0).normal(size=d.y.shape[0])
    gam = np.random.default_rng(1).random(d.y.shape[0])
    g1, h1 = xendcg_gradients(s, d.y, d.group_ptr, gammas=gam, n_threads=1)
    g2, h2 = xendcg_gradients(s, d.y, d.group_ptr, gammas=gam, n_threads=2)
    assert np.array_equal(g1, g2) and np.array_equal(h1, h2)
    for q in range(len(d.group_ptr) - 1):
        a, b = d.group_ptr[q], d.group_ptr[q + 1]
        g, h = np.empty(b - a), np.empty(b - a)
        xk.xendcg_query(s[a:b], d.y[a:b], gam[a:b], g, h)
        assert np.array_equal(g1[a:b], g) and np.array_equal(h1[a:b], h)
        assert abs(g.sum()) < 1e-12  # Σρ = Σp = 1
        if b - a == 1:
            assert g[0] == 0.0 and h[0] == 0.0


def test_gammas_advance_per_round_and_seed_reproduces():
    ptr = np.array([0, 3, 4, 9])
    a, b = XENDCGGammas(ptr, seed=3), XENDCGGammas(ptr, seed=3)
    r1, r2 = a.draw(), a.draw()
    assert np.array_equal(r1, b.draw()) and not np.array_equal(r1, r2)
    lg = XENDCGGammas(ptr, seed=5, preset="lightgbm")
    first = lg.draw()
    assert first[3] == 0.0  # one-document query draws nothing
    # LightGBM's Random(5).NextFloat(): x = 214013*5 + 2531011 = 3601076, (x >> 16) & 0x7FFF = 54
    assert first[0] == 54 / 32768
    assert np.all((first >= 0) & (first < 1)) and not np.array_equal(first, lg.draw())


def _lgb_parity(X, y, ptr, rounds, seed=5):
    lgb = pytest.importorskip("lightgbm")
    params = {"num_leaves": 15, "learning_rate": 0.1, "min_data_in_leaf": 5, "deterministic": True,
              "num_threads": 1, "force_row_wise": True, "verbose": -1, "objective_seed": seed}
    sizes = np.diff(ptr)
    native = lgb.train(dict(params, objective="rank_xendcg"), lgb.Dataset(X, y, group=sizes), rounds)
    gammas = XENDCGGammas(ptr, seed=seed, preset="lightgbm")

    def fobj(preds, data):
        g, h = xendcg_gradients(preds, data.get_label(), ptr, seed=gammas, preset="lightgbm")
        return g.astype(np.float32), h.astype(np.float32)  # exact: the values are float32 numbers

    custom = lgb.train(dict(params, objective=fobj), lgb.Dataset(X, y, group=sizes), rounds)
    assert gammas.rounds == rounds
    assert native.num_trees() == custom.num_trees() == rounds
    return native.predict(X), custom.predict(X, raw_score=True)


def test_lightgbm_preset_is_bit_identical_synthetic():
    d = make_ranking(60, docs_per_query=(1, 40), n_features=6, seed=4)
    p_native, p_custom = _lgb_parity(d.X, d.y, d.group_ptr, 50)
    assert np.array_equal(p_native, p_custom)


def test_lightgbm_preset_is_bit_identical_mq2008(shared_data):
    data = load_letor(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"))
    p_native, p_custom = _lgb_parity(data.X, data.y, data.group_ptr, 50, seed=11)
    assert np.array_equal(p_native, p_custom)


@pytest.mark.parametrize("kwargs, msg", [
    ({"preset": "xgboost"}, "unknown preset"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"gammas": [0.1, 1.0, 0.2]}, r"\[0, 1\)"),
    ({"gammas": [0.1, 0.2]}, "gammas has 2 values"),
    ({"gammas": [0.1, 0.2, 0.3], "seed": 3}, "either gammas or seed"),
])
def test_bad_arguments_raise(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        xendcg_gradients([0.0, 1.0, 2.0], [0, 1, 2], [0, 3], **kwargs)


def test_bad_data_raise_and_inputs_are_not_mutated():
    s = np.array([0.0, 1.0, 2.0])
    y = np.array([0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="non-finite"):
        xendcg_gradients([0.0, np.nan, 1.0], y, [0, 3])
    with pytest.raises(ValueError, match="group_ptr"):
        xendcg_gradients(s, y, [0, 2])
    with pytest.raises(ValueError, match="labels < 31"):
        xendcg_gradients(s, [0.0, 1.0, 31.0], [0, 3], preset="lightgbm")
    with pytest.raises(ValueError, match="different query boundaries"):
        xendcg_gradients(s, y, [0, 3], seed=XENDCGGammas([0, 1, 3]))
    with pytest.raises(ValueError, match="preset"):
        xendcg_gradients(s, y, [0, 3], seed=XENDCGGammas([0, 3]), preset="lightgbm")
    with pytest.raises(ValueError, match="not finite"):
        xendcg_gradients(s, [0.0, 1.0, 1100.0], [0, 3])
    with pytest.raises(ValueError, match="not finite"):
        xendcg_gradients([0.0, 100.0, 1.0], y, [0, 3], preset="lightgbm")
    gam = np.array([0.5, 0.25, 0.0])
    before = (s.copy(), y.copy(), gam.copy())
    xendcg_gradients(s, y, np.array([0, 3]), gammas=gam)
    assert all(np.array_equal(u, v) for u, v in zip(before, (s, y, gam)))
