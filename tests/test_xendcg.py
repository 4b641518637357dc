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


@pytest.mark.filterwarnings("ignore:lambda_gradients.*is deprecated:FutureWarning")  # the second door, one release
def test_lambda_gradients_dispatches_xendcg_and_refuses_pair_options():
    from lambda_objectives import lambda_gradients

    s, y, ptr = np.array([0.1, 0.5, -0.2, 0.3]), np.array([1.0, 0.0, 2.0, 0.0]), [0, 4]
    with pytest.warns(FutureWarning, match="call lambda_objectives.xendcg_gradients"):
        old = lambda_gradients(s, y, ptr, "xendcg", seed=3)
    np.testing.assert_array_equal(old[0], xendcg_gradients(s, y, ptr, seed=3)[0])
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
