"""Softmax cross-entropy (CatBoost's QuerySoftMax) and ListMLE: the derivatives of their brute-force losses
(tests/_oracles.py), the tie conventions, determinism, numba off, and training in both engines."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from _oracles import listmle_derivatives, listmle_loss, softmax_loss

import lambda_objectives as lo


def _queries(seed, sizes=(7, 1, 5, 9)):
    """Queries with tied labels, a one-document query and (sizes[2]) an all-zero-label query."""
    rng = np.random.default_rng(seed)
    ptr = np.r_[0, np.cumsum(sizes)]
    s, y = rng.normal(size=ptr[-1]), rng.integers(0, 4, ptr[-1]).astype(float)
    y[0] += 0.5  # real-valued labels are allowed
    y[ptr[2]:ptr[3]] = 0.0
    w = rng.uniform(0.5, 2.0, size=len(sizes))
    return s, y, ptr, w


def _total(loss, s, y, ptr, w, **opts):
    return sum(wq * loss(list(s[a:b]), list(y[a:b]), **opts) for wq, a, b in zip(w, ptr[:-1], ptr[1:]))


def _check_derivatives(loss, grad_fn, s, y, ptr, w, hess_offset=0.0, **opts):
    g, h = grad_fn(s, y, ptr, query_weights=w)
    eps = 1e-5
    for i in range(s.shape[0]):
        e = np.zeros_like(s)
        e[i] = eps
        up, down = (_total(loss, s + d, y, ptr, w, **opts) for d in (e, -e))
        assert (up - down) / (2 * eps) == pytest.approx(g[i], abs=1e-8), i
        # the exact Hessian diagonal: the second difference of the loss (a wider step: it divides by step²)
        up, mid, down = (_total(loss, s + d, y, ptr, w, **opts) for d in (100 * e, 0 * e, -100 * e))
        assert (up - 2 * mid + down) / (100 * eps) ** 2 == pytest.approx(h[i] - hess_offset, abs=1e-5), i
    assert np.all(h >= 0)
    return g, h


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("beta", [1.0, 0.4, 2.5])
def test_softmax_derivatives_are_the_losss(seed, beta):
    s, y, ptr, w = _queries(seed)

    def grad(*a, **k):
        return lo.softmax_gradients(*a, beta=beta, lambda_=0.0, **k)

    g, _ = _check_derivatives(softmax_loss, grad, s, y, ptr, w, beta=beta)
    assert np.all(g[ptr[1]:ptr[3]] == 0)  # a one-document query, an all-zero-label query
    # CatBoost's lambda adds λβT (T the query's label sum) to the Hessian and nothing to the gradient
    g2, h2 = lo.softmax_gradients(s, y, ptr, beta=beta, lambda_=0.3, query_weights=w)
    _, h0 = lo.softmax_gradients(s, y, ptr, beta=beta, lambda_=0.0, query_weights=w)
    t = np.repeat(np.add.reduceat(y, ptr[:-1]) * w, np.diff(ptr))
    np.testing.assert_array_equal(g2, g)
    np.testing.assert_allclose(h2 - h0, 0.3 * beta * t, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", ["breslow", "stable"])
def test_listmle_derivatives_are_the_losss(seed, ties):
    s, y, ptr, w = _queries(seed)

    def grad(*a, **k):
        return lo.listmle_gradients(*a, ties=ties, **k)

    g, h = _check_derivatives(listmle_loss, grad, s, y, ptr, w, ties=ties)
    assert np.all(g[ptr[1]:ptr[2]] == 0) and np.all(h[ptr[1]:ptr[2]] == 0)  # one document
    zero = slice(ptr[2], ptr[3])  # all labels equal: Breslow's last group is the whole query
    assert np.all(g[zero] == 0) == (ties == "breslow")


def test_listmle_is_convex_and_its_hessian_diagonal_is_the_exact_one():
    """The whole Hessian by finite differences is positive semi-definite (a sum of log-sum-exps)."""
    rng = np.random.default_rng(4)
    n = 6
    s, y = rng.normal(size=n), np.array([2.0, 0.0, 1.0, 2.0, 0.0, 1.0])
    for ties in ("breslow", "stable"):
        eps = 1e-6
        H = np.empty((n, n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = eps
            H[:, j] = (lo.listmle_gradients(s + e, y, [0, n], ties=ties)[0]
                       - lo.listmle_gradients(s - e, y, [0, n], ties=ties)[0]) / (2 * eps)
        assert np.linalg.eigvalsh((H + H.T) / 2).min() > -1e-7
        np.testing.assert_allclose(np.diag(H), lo.listmle_gradients(s, y, [0, n], ties=ties)[1], atol=1e-7)


def test_listmle_ties():
    rng = np.random.default_rng(5)
    s, y = rng.normal(size=8), np.array([1.0, 0.0, 2.0, 1.0, 0.0, 3.0, 1.0, 0.0])
    # without tied labels both conventions are ListMLE
    distinct = np.arange(8.0)[::-1]
    np.testing.assert_array_equal(lo.listmle_gradients(s, distinct, [0, 8])[0],
                                  lo.listmle_gradients(s, distinct, [0, 8], ties="stable")[0])
    # breslow does not depend on the row order; stable does (it ranks tied rows by position)
    perm = rng.permutation(8)
    for ties, same in (("breslow", True), ("stable", False)):
        g, h = lo.listmle_gradients(s, y, [0, 8], ties=ties)
        gp, hp = lo.listmle_gradients(s[perm], y[perm], [0, 8], ties=ties)
        assert np.allclose(gp, g[perm], rtol=1e-13, atol=1e-15) == same
        assert np.allclose(hp, h[perm], rtol=1e-13, atol=1e-15) == same
    # far-apart scores overflow nothing (the sums run in the log domain)
    g, h = lo.listmle_gradients(np.array([800.0, -800.0, 0.0, 700.0]), np.array([0.0, 2.0, 1.0, 1.0]), [0, 4])
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.all(h >= 0)
    assert g[1] == pytest.approx(-1.0) and g[0] == pytest.approx(3.0)  # the worst-placed, the best-placed


def _oracle(s, y, ptr, ties):
    g, h = [], []
    for a, b in zip(ptr[:-1], ptr[1:]):
        dg, dh = listmle_derivatives(list(s[a:b]), list(y[a:b]), ties)
        g += dg
        h += dh
    return np.array(g), np.array(h)


@pytest.mark.parametrize("x", [1e11, 1e15, 1e16, 1e100, 1e300, -1e11, -1e16, -1e300])
def test_listmle_keeps_its_gradient_at_any_finite_score(x):
    """Issue #48: scores [x, 0, 1], labels [0, 1, 2] drifted from x ≈ 1e11 (2.117 at 1e15, 1 at 1e16,
    where the exact gradient of the worst-labelled, best-scored document is 2: it stays in both softmaxes
    with probability 1). The exponents are score differences now, so every finite x is exact."""
    s, y, ptr = np.array([x, 0.0, 1.0]), np.array([0.0, 1.0, 2.0]), [0, 3]
    for ties in ("breslow", "stable"):
        g, h = lo.listmle_gradients(s, y, ptr, ties=ties)
        og, oh = _oracle(s, y, ptr, ties)
        np.testing.assert_allclose(g, og, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(h, oh, rtol=1e-14, atol=1e-300)
    if x > 0:
        np.testing.assert_array_equal(g, [2.0, -1.0, -1.0])


@pytest.mark.parametrize("shift", [2.0 ** 40, 2.0 ** 49, 2.0 ** 60, -2.0 ** 60, 2.0 ** 1000])
def test_listmle_is_shift_invariant_at_huge_offsets(shift):
    """The loss depends on score differences only: a common offset far beyond 1/ulp leaves the gradient
    as it was (scores on a 1/8 grid below 16 and power-of-two shifts up to 2^49: the shifted scores are exact;
    beyond, the offset rounds the scores to its own grid and the oracle of those scores decides)."""
    rng = np.random.default_rng(11)
    sizes = (6, 9, 4, 12)
    ptr = np.r_[0, np.cumsum(sizes)]
    s = np.round(rng.normal(size=ptr[-1]) * 16) / 8
    y = rng.integers(0, 4, ptr[-1]).astype(float)
    for ties in ("breslow", "stable"):
        g, h = lo.listmle_gradients(s, y, ptr, ties=ties)
        gs, hs = lo.listmle_gradients(s + shift, y, ptr, ties=ties)
        og, oh = _oracle(s + shift, y, ptr, ties)
        np.testing.assert_allclose(gs, og, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(hs, oh, rtol=1e-13, atol=1e-14)
        if abs(shift) <= 2.0 ** 49:
            np.testing.assert_allclose(gs, g, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(hs, h, rtol=1e-13, atol=1e-14)


def test_listmle_at_extreme_gaps_against_the_oracle():
    """Scores across the whole float64 range in one query (with tied labels and tied scores)."""
    s = np.array([1e300, -1e300, 0.0, 1e300, 5e299, -1e300, 709.0, -745.0, 1e-300])
    y = np.array([0.0, 2.0, 1.0, 1.0, 2.0, 0.0, 3.0, 3.0, 1.0])
    for ties in ("breslow", "stable"):
        g, h = lo.listmle_gradients(s, y, [0, 9], ties=ties)
        og, oh = _oracle(s, y, [0, 9], ties)
        np.testing.assert_allclose(g, og, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(h, oh, rtol=1e-14, atol=1e-300)
        assert np.all(np.isfinite(g)) and np.all(h >= 0)


def test_listmle_matches_the_oracle_on_ordinary_queries():
    s, y, ptr, w = _queries(4, sizes=(7, 1, 5, 9, 2, 30))
    for ties in ("breslow", "stable"):
        g, h = lo.listmle_gradients(s * 50, y, ptr, ties=ties)
        og, oh = _oracle(s * 50, y, ptr, ties)
        np.testing.assert_allclose(g, og, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(h, oh, rtol=1e-12, atol=1e-14)


def test_lambda_gradients_dispatches_and_checks_options():
    s, y, ptr, _ = _queries(0)
    for metric, opts, fn in (("softmax", {"beta": 2.0, "lambda_": 0.1}, lo.softmax_gradients),
                             ("listmle", {"ties": "stable"}, lo.listmle_gradients)):
        np.testing.assert_array_equal(lo.lambda_gradients(s, y, ptr, metric, **opts)[1], fn(s, y, ptr, **opts)[1])
        for kw in ({"k": 3}, {"sigma": 2.0}, {"return_pairs": True}, {"seed": 1}):
            with pytest.raises(ValueError, match="listwise|deterministic"):
                lo.lambda_gradients(s, y, ptr, metric, **kw)
    with pytest.raises(ValueError, match="ties"):
        lo.lambda_gradients(s, y, ptr, "softmax", ties="stable")
    with pytest.raises(ValueError, match="beta"):
        lo.lambda_gradients(s, y, ptr, "listmle", beta=2.0)
    with pytest.raises(ValueError, match="beta"):
        lo.lambda_gradients(s, y, ptr, "ndcg", beta=2.0)
    for kw, match in (({"beta": 0.0}, "beta"), ({"beta": np.inf}, "beta"), ({"lambda_": -1.0}, "lambda_"),
                      ({"beta": True}, "beta")):
        with pytest.raises(ValueError, match=match):
            lo.softmax_gradients(s, y, ptr, **kw)
    with pytest.raises(ValueError, match="ties must be one of"):
        lo.listmle_gradients(s, y, ptr, ties="random")
    with pytest.raises(ValueError, match="overflow"):
        lo.softmax_gradients([0.0, 1.0], [1e308, 1e308], [0, 2], beta=2.0)
    # out= is filled in place; the inputs are not touched
    s0, y0 = s.copy(), y.copy()
    out = (np.empty_like(s), np.empty_like(s))
    res = lo.softmax_gradients(s, y, ptr, out=out)
    assert res[0] is out[0] and np.array_equal(s, s0) and np.array_equal(y, y0)
    with pytest.raises(ValueError, match="overlaps"):
        lo.listmle_gradients(s, y, ptr, out=(s, np.empty_like(s)))


def test_one_and_two_threads_are_bit_identical():
    d = lo.make_ranking(300, docs_per_query=(1, 60), n_features=3, seed=2)
    s = np.random.default_rng(0).normal(size=d.y.shape[0])
    for fn in (lo.softmax_gradients, lo.listmle_gradients):
        one, two = fn(s, d.y, d.group_ptr, n_threads=1), fn(s, d.y, d.group_ptr, n_threads=2)
        np.testing.assert_array_equal(one[0], two[0])
        np.testing.assert_array_equal(one[1], two[1])


_NO_JIT = """
import json
import numpy as np
from lambda_objectives import listmle_gradients, softmax_gradients
rng = np.random.default_rng(8)
ptr = np.array([0, 7, 8, 20, 23])
s, y = rng.normal(size=23), rng.integers(0, 4, 23).astype(float)
out = [softmax_gradients(s, y, ptr, beta=1.5), listmle_gradients(s, y, ptr),
       listmle_gradients(s, y, ptr, ties="stable")]
print(json.dumps([[float(v).hex() for v in a] for pair in out for a in pair]))
"""


def test_the_kernels_are_valid_python_with_numba_off():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = []
    for off in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=off, PYTHONPATH=root)
        res = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", _NO_JIT], cwd=root, env=env,
                             capture_output=True, text=True, check=True)
        runs.append(np.array([[float.fromhex(v) for v in a] for a in json.loads(res.stdout)]))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("objective", [("softmax", {}), ("softmax", {"beta": 2.0, "lambda_": 0.0}),
                                       ("listmle", {}), ("listmle", {"ties": "stable"})])
def test_trains_in_both_engines_and_the_sklearn_rankers(objective):
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    name, opts = objective
    d = lo.make_ranking(80, docs_per_query=(5, 30), n_features=6, seed=9)
    base = lo.mean_metric(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg@10")
    params = {"num_leaves": 15, "learning_rate": 0.1, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1}
    booster = lgb.train(dict(params, objective=lo.LightGBMObjective(name, **opts)),
                        lgb.Dataset(d.X, d.y, group=d.group), 20)
    xobj = lo.XGBoostObjective(name, **opts)
    xbooster = xgb.train(xobj.params(max_depth=4, nthread=1), xgb.DMatrix(d.X, d.y, group=d.group), 20, obj=xobj)
    lr = lo.LGBMLambdaRanker(lo.LightGBMObjective(name, **opts), n_estimators=20, verbose=-1, n_jobs=1)
    xr = lo.XGBLambdaRanker(lo.XGBoostObjective(name, **opts), n_estimators=20, max_depth=4, nthread=1)
    preds = [booster.predict(d.X), xbooster.predict(xgb.DMatrix(d.X), output_margin=True)]
    for r in (lr, xr):
        r.fit(d.X, d.y, group=d.group)
        preds.append(r.predict(d.X))
    for pred in preds:
        assert lo.mean_metric(pred, d.y, d.group_ptr, "ndcg@10") > base + 0.05


def test_adapters_refuse_what_the_objectives_do_not_read():
    with pytest.raises(ValueError, match="ties"):
        lo.LightGBMObjective("softmax", ties="stable")
    with pytest.raises(ValueError, match="beta"):
        lo.XGBoostObjective("listmle", beta=2.0)
    with pytest.raises(ValueError, match="beta must be"):
        lo.LightGBMObjective("softmax", beta=-1.0)
    with pytest.raises(ValueError, match="ties must be"):
        lo.XGBoostObjective("listmle", ties="bogus")
    with pytest.raises(ValueError, match="preset"):
        lo.LightGBMObjective("listmle", preset="catboost")
    with pytest.raises(ValueError, match="weights"):
        lo.LightGBMObjective("softmax", preset="catboost").gradients([0.0, 1.0], [1.0, 0.0], [0, 2], weight=[1, 2])
    # preset="catboost" is CatBoost's QuerySoftMax: the exact back end's numbers, as float32
    s, y, ptr, _ = _queries(1)
    g, h = lo.LightGBMObjective("softmax", preset="catboost", beta=0.5).gradients(s, y, ptr)
    ge, he = lo.softmax_gradients(s, y, ptr, beta=0.5)
    np.testing.assert_array_equal(g, ge.astype(np.float32))
    np.testing.assert_array_equal(h, he.astype(np.float32))
