"""The theorems of Xia, Zhai & Wang tested for what they say, by brute force over every candidate
split: SE (their Eq. 3), weighted SE, OLE (Eq. 13) and the true loss reduction computed from the
loss itself, and the split each criterion of :mod:`reference.splitting` picks."""

import numpy as np
import pytest
from conftest import shared_file

from lambda_objectives import lambda_gradients
from lambda_objectives.data.datasets import make_ranking
from reference import BinMapper, MARTRanker
from reference.binning import pack_bins
from reference.histogram import build_histogram, build_pair_histograms, new_histogram
from reference.losses import LeastSquares, Logistic, McRank
from reference.splitting import CRITERIA, find_best_split


@pytest.fixture(scope="module")
def data():
    d = make_ranking(12, docs_per_query=(6, 14), n_features=3, seed=11)
    mapper = BinMapper(8).fit(d.X)
    return d, mapper, mapper.transform(d.X)


def _splits(binned, mapper):
    for f in range(binned.shape[1]):
        for b in range(mapper.n_bins_[f] - 1):
            left = binned[:, f] <= b
            if 0 < left.sum() < left.size:
                yield f, b, left


def _kernel_pick(binned, mapper, g, h, criterion, pairs=None):
    """(gain, feature, bin) the kernel chooses at the root, no minimum child size or Hessian."""
    n, nf = binned.shape
    rows = np.arange(n, dtype=np.int64)
    hist = new_histogram(nf)
    build_histogram(binned, rows, g, h, hist)
    pmax, pmin = np.zeros((nf, 256)), np.zeros((nf, 256))
    H_exact = h.sum()
    if pairs is not None:
        build_pair_histograms(pack_bins(binned), pairs.i, pairs.j, pairs.h, pmax, pmin)
        H_exact = h.sum() - 2 * pairs.h.sum()
    gain, best = np.empty(nf), np.empty(nf, dtype=np.int64)
    find_best_split(hist, mapper.n_bins_, np.ones(nf, bool), g.sum(), h.sum(), float(n), H_exact,
                    CRITERIA[criterion], 0.0, 1.0, 0.0, pmax, pmin, gain, best)
    f = int(np.argmax(gain))
    return gain[f], f, int(best[f])


def _first_best(values, splits, key=max):
    """The best split with the kernel's tie rule (lowest feature, then lowest bin)."""
    target = key(values)
    for v, (f, b) in zip(values, splits):
        if v == target:
            return f, b


def test_theorem2_least_squares_se_wse_ole_and_true_reduction_agree_on_every_split(data):
    d, mapper, binned = data
    rng = np.random.default_rng(0)
    F = rng.normal(size=d.y.size)
    loss = LeastSquares()
    g, h = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, d.y, d.group_ptr, g, h)
    r = -g  # pseudo-responses
    se, wse, ole, true, where = [], [], [], [], []
    for f, b, left in _splits(binned, mapper):
        kids = (left, ~left)
        se.append(sum(((r[c] - r[c].mean()) ** 2).sum() for c in kids))                       # Eq. 3
        wse.append(sum((h[c] * (r[c] / h[c] - (h[c] * r[c] / h[c]).sum() / h[c].sum()) ** 2).sum()
                       for c in kids))                                                           # weights h
        ole.append(-0.5 * sum(g[c].sum() ** 2 / h[c].sum() for c in kids))                     # Eq. 13
        step = np.zeros_like(F)
        for c in kids:  # refit each leaf to minimise the loss itself
            step[c] = r[c].mean()
        # the reference losses report a per-document mean; the criteria are about the sum
        true.append(d.y.size * (loss.loss(F, d.y, d.group_ptr) - loss.loss(F + step, d.y, d.group_ptr)))
        where.append((f, b))
    se, wse, ole, true = map(np.array, (se, wse, ole, true))
    # Theorem 2: SE = WSE (h = 1), OLE is exactly minus the true reduction (the loss is quadratic),
    # and SE is an affine function of the reduction, so all rank every split alike.
    np.testing.assert_allclose(wse, se, rtol=1e-12)
    np.testing.assert_allclose(ole, -true, rtol=1e-10)
    assert np.ptp(se + 2 * true) < 1e-8 * abs(se[0])
    best = _first_best(list(true), where)
    for criterion in ("se", "ole"):
        gain, f, b = _kernel_pick(binned, mapper, g, h, criterion)
        assert (f, b) == best
        # the kernel's gain G_L²/H_L + G_R²/H_R − G²/H: twice the reduction, less the parent's own
        # constant refit G²/H (F is not at the optimal constant)
        assert gain == pytest.approx(2 * max(true) - g.sum() ** 2 / g.size, rel=1e-9)


@pytest.mark.parametrize("kind", ["logistic", "mcrank"])
def test_theorem1_weighted_se_is_ole_for_derivative_additive_losses(data, kind):
    d, mapper, binned = data
    rng = np.random.default_rng(1)
    if kind == "logistic":
        loss, F = Logistic(threshold=0.0), rng.normal(size=d.y.size)
        col = slice(None)
    else:
        loss, F = McRank(int(d.y.max()) + 1), rng.normal(size=(d.y.size, int(d.y.max()) + 1))
        col = 2  # one class's tree: the loss of that column is a sum over documents
    g_all, h_all = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, d.y, d.group_ptr, g_all, h_all)
    g, h = np.ascontiguousarray(g_all[:, col] if F.ndim == 2 else g_all), \
        np.ascontiguousarray(h_all[:, col] if F.ndim == 2 else h_all)
    r = -g / h  # WSE's responses, weights h (Newton's weighted least squares)
    wse, ole_gain, where = [], [], []
    eta, reductions, predicted = 1e-3, [], []
    base = d.y.size * loss.loss(F, d.y, d.group_ptr)  # the losses report a per-document mean
    for f, b, left in _splits(binned, mapper):
        kids = (left, ~left)
        wse.append(sum((h[c] * (r[c] - (h[c] * r[c]).sum() / h[c].sum()) ** 2).sum() for c in kids))
        ole_gain.append(sum(g[c].sum() ** 2 / h[c].sum() for c in kids) - g.sum() ** 2 / h.sum())
        where.append((f, b))
        # the true loss after a Newton step of size eta in each leaf, against Eq. 13's prediction
        step = np.zeros(d.y.size)
        for c in kids:
            step[c] = -eta * g[c].sum() / h[c].sum()
        F2 = F.copy()
        if F.ndim == 2:
            F2[:, col] += step
        else:
            F2 += step
        reductions.append(base - d.y.size * loss.loss(F2, d.y, d.group_ptr))
        predicted.append((eta - eta ** 2 / 2) * sum(g[c].sum() ** 2 / h[c].sum() for c in kids))
    wse, ole_gain = np.array(wse), np.array(ole_gain)
    # Theorem 1: WSE(split) + OLE gain(split) is the same for every split (the parent's WSE).
    total = wse + ole_gain
    assert np.ptp(total) < 1e-9 * abs(total[0])
    # Eq. 13 is the second-order expansion of the true loss reduction: the error is O(eta³).
    err = np.abs(np.array(reductions) - np.array(predicted))
    scale = np.abs(predicted).max() / eta
    assert err.max() < 10 * eta ** 3 * scale  # O(eta³); the terms kept are O(eta) and O(eta²)
    gain, f, b = _kernel_pick(binned, mapper, g, h, "ole")
    assert (f, b) == _first_best(list(ole_gain), where) == _first_best(list(-wse), where)
    assert gain == pytest.approx(ole_gain.max(), rel=1e-9)


def test_exact_ole_is_the_second_derivative_of_the_pairwise_cost(data):
    """The paper's OLE for a pairwise loss: each child's G and H are the first and second
    derivatives of the true fixed-ranking cost C(s + t·1_child) in t, here by finite differences
    of the cost itself. The diagonal (derivative-additive) Hessian differs wherever pairs lie
    inside a child."""
    d, mapper, binned = data
    s = np.random.default_rng(2).permutation(d.y.size) * 0.01  # distinct scores, gaps >= 0.01
    g, h, pairs = lambda_gradients(s, d.y, d.group_ptr, "ndcg", None, return_pairs=True)
    gaps = np.diff(np.sort(s))
    t = 1e-4
    assert gaps.min() > 4 * t  # the ranking, hence every |ΔZ|, stays fixed under the probes

    def cost(x):
        return lambda_gradients(x, d.y, d.group_ptr, "ndcg", None, return_cost=True)[2].sum()

    def derivatives(member):
        c0, cp, cm = cost(s), cost(s + t * member), cost(s - t * member)
        return (cp - cm) / (2 * t), (cp - 2 * c0 + cm) / t ** 2

    G, Hn = derivatives(np.ones(d.y.size))
    assert abs(G) < 1e-6 and abs(Hn) < 1e-3  # moving every document together changes nothing
    exact, diagonal, where = [], [], []
    for f, b, left in _splits(binned, mapper):
        gl, hl = derivatives(left.astype(float))
        gr, hr = derivatives((~left).astype(float))
        np.testing.assert_allclose([gl, gr], [g[left].sum(), g[~left].sum()], rtol=1e-6, atol=1e-9)
        exact.append(gl * gl / hl + gr * gr / hr)
        diagonal.append(g[left].sum() ** 2 / h[left].sum() + g[~left].sum() ** 2 / h[~left].sum())
        where.append((f, b))
    gain, f, b = _kernel_pick(binned, mapper, g, h, "ole_exact", pairs)
    assert gain == pytest.approx(max(exact), rel=1e-4)  # the parent term is 0: its H_exact is 0
    assert (f, b) == _first_best(exact, where)
    assert not np.allclose(exact, diagonal, rtol=1e-3)


@pytest.mark.parametrize("breaker, holds", [
    ({}, True),
    ({"lambda_l2": 1.0}, False),                              # −G/(H+λ) is not homogeneous in σ
    ({"kernel_options": {"normalize": "lambdarank"}}, False),  # log2(1+S)/S is not either
    ({"min_sum_hessian_in_leaf": 30.0}, False),                # H grows as σ²: other splits pass the minimum
])
def test_sigma_invariance_holds_exactly_when_documented(breaker, holds):
    """Burges §7: with σ=2 every score is half that of σ=1 (same rankings), but only with
    λ₂ = 0, no binding minimum Hessian and no lambdarank normalisation (docs/math.md)."""
    from reference import MARTRanker

    d = make_ranking(80, docs_per_query=(5, 30), n_features=6, seed=3)
    kw = dict(objective="lambda", metric="ndcg", k=10, num_leaves=8, n_estimators=8, min_sum_hessian_in_leaf=0.0)
    kw.update(breaker)
    s1 = MARTRanker(sigma=1.0, **kw).fit(d.X, d.y, group=d.group).predict(d.X)
    s2 = MARTRanker(sigma=2.0, **kw).fit(d.X, d.y, group=d.group).predict(d.X)
    assert np.allclose(2.0 * s2, s1, rtol=1e-9, atol=1e-12) == holds


def _same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ra, rb in zip(a.trees_, b.trees_):
        for ta, tb in zip(ra, rb):
            np.testing.assert_array_equal(ta["feature"], tb["feature"])
            np.testing.assert_array_equal(ta["bin"], tb["bin"])
            np.testing.assert_allclose(ta["value"], tb["value"], rtol=1e-12)


@pytest.mark.parametrize("growth", ["best_first", "breadth_first", "depth_first"])
def test_theorem2_se_and_ole_identical_for_least_squares(small_ranking, growth):
    # With h = 1, G²/H = G²/N: both criteria pick the same split at every node.
    kw = dict(objective="ls", growth=growth, num_leaves=10, n_estimators=15, learning_rate=0.1)
    se = MARTRanker(criterion="se", **kw).fit(small_ranking.X, small_ranking.y, group=small_ranking.group)
    ole = MARTRanker(criterion="ole", **kw).fit(small_ranking.X, small_ranking.y, group=small_ranking.group)
    _same_trees(se, ole)


def test_theorem2_on_mq2008(shared_data):
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(shared_file(shared_data, "MQ2008", "Fold1", "train.txt")), query_id=True)
    X = X.toarray()
    kw = dict(objective="ls", growth="breadth_first", num_leaves=20, n_estimators=10)
    _same_trees(MARTRanker(criterion="se", **kw).fit(X, y, qid=qid), MARTRanker(criterion="ole", **kw).fit(X, y, qid=qid))


def test_exact_ole_gain_equals_brute_force():
    d = make_ranking(6, docs_per_query=(6, 12), n_features=3, seed=5)
    s = np.random.default_rng(2).normal(size=d.y.shape[0])
    g, h, pairs = lambda_gradients(s, d.y, d.group_ptr, "ndcg", 5, return_pairs=True)
    mapper = BinMapper(8).fit(d.X)
    binned = mapper.transform(d.X)
    rows = np.arange(d.y.shape[0], dtype=np.int64)
    hist = new_histogram(3)
    build_histogram(binned, rows, g, h, hist)
    from reference.histogram import build_pair_histograms

    pmax, pmin = np.empty((3, 256)), np.empty((3, 256))
    build_pair_histograms(pack_bins(binned), pairs.i, pairs.j, pairs.h, pmax, pmin)
    H_exact = h.sum() - 2 * pairs.h.sum()
    gain, best_bin = np.empty(3), np.empty(3, dtype=np.int64)
    find_best_split(hist, mapper.n_bins_, np.ones(3, bool), g.sum(), h.sum(), float(len(rows)), H_exact,
                    CRITERIA["ole_exact"], 0.0, 1.0, 0.0, pmax, pmin, gain, best_bin)

    def exact_h(members):
        inside = members[pairs.i] & members[pairs.j]
        return h[members].sum() - 2 * pairs.h[inside].sum()

    def score(G, H):
        return G * G / H if H > 1e-12 else 0.0

    for f in range(3):
        brute = []
        for b in range(mapper.n_bins_[f] - 1):
            left = binned[:, f] <= b
            if left.sum() < 1 or (~left).sum() < 1:
                continue
            brute.append((score(g[left].sum(), exact_h(left)) + score(g[~left].sum(), exact_h(~left))
                          - score(g.sum(), H_exact), b))
        top = max(brute)
        assert gain[f] == pytest.approx(top[0], rel=1e-10, abs=1e-12)
        assert best_bin[f] == top[1]


@pytest.mark.kernel
@pytest.mark.parametrize("lam, min_data", [(0.0, 1.0), (2.0, 10.0)])
def test_exact_gain_bounds_bound_every_features_exact_gain(lam, min_data):
    """The bound the bounded exact-OLE search prunes with (``exact_gain_bounds``) is at least the
    exact gain ``best_bin`` returns, for every feature, in nodes that hold part of the queries'
    documents (pairs leave them) and at the root (none does: only the heavy pairs' crossing term
    bounds it)."""
    from reference.histogram import add_weight_histogram
    from reference.splitting import OLE_EXACT, best_bin, exact_gain_bounds

    d = make_ranking(40, docs_per_query=(5, 30), n_features=6, seed=9)
    mapper = BinMapper(16).fit(d.X)
    binned, n_bins = mapper.transform(d.X), mapper.n_bins_
    s = np.random.default_rng(3).normal(size=d.y.shape[0])
    g, h, pairs = lambda_gradients(s, d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
    rng = np.random.default_rng(4)
    nf = binned.shape[1]
    for node in range(6):
        member = np.ones(d.y.shape[0], bool) if node == 0 else rng.random(d.y.shape[0]) < 0.6
        rows = np.flatnonzero(member).astype(np.int64)
        inside = member[pairs.i] & member[pairs.j]
        pi, pj, ph = pairs.i[inside], pairs.j[inside], pairs.h[inside]
        hist = new_histogram(nf)
        build_histogram(binned, rows, g, h, hist)
        pmax, pmin = np.empty((nf, 256)), np.empty((nf, 256))
        build_pair_histograms(pack_bins(binned), pi, pj, ph, pmax, pmin)
        w = h.copy()  # h_i minus its pairs inside the node
        np.subtract.at(w, pi, ph)
        np.subtract.at(w, pj, ph)
        w_hist = np.zeros((nf, 256))
        add_weight_histogram(pack_bins(binned), rows, w, w_hist)
        heavy = ph >= np.quantile(ph, 0.9) if node % 2 == 0 else np.zeros(ph.shape[0], bool)
        s_max, s_min = np.zeros((nf, 256)), np.zeros((nf, 256))
        build_pair_histograms(pack_bins(binned), pi[heavy], pj[heavy], ph[heavy], s_max, s_min)
        G, H, N = g[rows].sum(), h[rows].sum(), float(rows.shape[0])
        H_exact = H - 2 * ph.sum()
        bound = np.empty(nf)
        exact_gain_bounds(hist, w_hist, s_max, s_min, n_bins, np.ones(nf, bool), G, H, N, H_exact, lam, min_data,
                          1e-3, 1e-9 * H, bound)
        for f in range(nf):
            gain, _ = best_bin(hist, n_bins, f, G, H, N, H_exact, OLE_EXACT, lam, min_data, 1e-3, pmax[f], pmin[f])
            assert bound[f] >= gain
            assert (gain == -np.inf) == (bound[f] == -np.inf)  # the same bins qualify
        if node > 0:
            assert np.isfinite(bound).any()  # pairs leave the node: a finite bound
