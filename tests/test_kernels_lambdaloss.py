"""LambdaLoss pair weights (lambda_objectives/_kernels/lambdaloss.py) against their definitions.

The reference below is written from the papers' 1-based formulas, independent of the library:
Wang et al. CIKM 2018 (NDCG-Loss2, NDCG-Loss2++), Jagerman et al. SIGIR 2022 (LambdaLoss@K).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lambda_objectives._kernels import lambdaloss as ll

pytestmark = pytest.mark.kernel

WEIGHTS = ("ndcg_loss2", "ndcg_loss2_at_k", "ndcg_loss2pp", "label_diff", "gain_diff")


def _rank1(scores):
    """1-based rank of each document: scores descending, ties in input order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    r = [0] * len(scores)
    for pos, d in enumerate(order):
        r[d] = pos + 1
    return r


def _idcg(gains, k):
    ideal = sorted(gains, reverse=True)[:k]
    return sum(g / math.log2(1 + r) for r, g in enumerate(ideal, start=1))


def _weight_def(weight, ri, rj, gi, gj, yi, yj, idcg, k, mu):
    """The pair weight from its definition, 1-based ranks ``ri, rj`` (any order)."""
    def D(x):  # the papers' D
        return math.log2(1 + x)

    inv = 1.0 / idcg if idcg > 0 else 0.0
    d = abs(ri - rj)
    delta = abs(1 / D(d) - 1 / D(d + 1))
    mx = max(ri, rj)
    mu_k = 1 / (1 - 1 / D(mx)) if mx > k else 1.0
    if weight == "ndcg_loss2":
        return abs(gi - gj) * delta * inv
    if weight == "ndcg_loss2_at_k":
        return abs(gi - gj) * delta * mu_k * inv
    if weight == "ndcg_loss2pp":
        def disc(r):  # the ΔNDCG@k discount
            return 1 / D(r) if r <= k else 0.0
        rho = abs(disc(ri) - disc(rj))
        return abs(gi - gj) * (rho + mu * delta * mu_k) * inv
    if weight == "label_diff":
        return abs(yi - yj)
    if weight == "gain_diff":
        return abs(gi - gj)
    raise AssertionError(weight)


def lambdaloss_gradients_reference(scores, labels, gains, weight, k, mu, sigma):
    """Per-query g, h of ``L = Σ_{y_i > y_j} w_ij log(1 + exp(−σ(s_i − s_j)))``, ranks fixed.

    Double loop over all ordered pairs; ``k = None`` means no cut-off. Returns ``(g, h, W)`` with
    ``W[i][j]`` the weight of the pair (i above j in label), for the weight test and the loss.
    """
    n = len(scores)
    kk = n if k is None else k
    r = _rank1(scores)
    idcg = _idcg(gains, kk if weight != "ndcg_loss2" else n)
    W = [[0.0] * n for _ in range(n)]
    g = [0.0] * n
    h = [0.0] * n
    for i in range(n):
        for j in range(n):
            if labels[i] > labels[j]:
                w = _weight_def(weight, r[i], r[j], gains[i], gains[j], labels[i], labels[j], idcg, kk, mu)
                W[i][j] = w
                rho = 1.0 / (1.0 + math.exp(sigma * (scores[i] - scores[j])))
                g[i] -= sigma * w * rho
                g[j] += sigma * w * rho
                h[i] += sigma * sigma * w * rho * (1 - rho)
                h[j] += sigma * sigma * w * rho * (1 - rho)
    return g, h, W


def _loss(scores, labels, W, sigma):
    n = len(scores)
    return sum(W[i][j] * math.log1p(math.exp(-sigma * (scores[i] - scores[j])))
               for i in range(n) for j in range(n) if labels[i] > labels[j])


_FN = {name: getattr(ll, name) for name in WEIGHTS}

# lists with ties in both scores and labels; real-valued labels
_queries = st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n),
    st.lists(st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0]), st.floats(0, 4, allow_nan=False)),
             min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(q=_queries, k=st.integers(1, 12), mu=st.sampled_from([0.0, 0.5, ll.DEFAULT_MU]),
       gain=st.sampled_from(["exp", "linear"]), weight=st.sampled_from(WEIGHTS))
def test_weight_equals_definition_for_every_pair(q, k, mu, gain, weight):
    scores, labels = q
    n = len(scores)
    gains = [2.0 ** y - 1 if gain == "exp" else y for y in labels]
    _, _, W = lambdaloss_gradients_reference(scores, labels, gains, weight, k, mu, 1.0)
    kk = min(k, n) if weight != "ndcg_loss2" else n
    idcg = _idcg(gains, kk)
    inv = 1.0 / idcg if idcg > 0 else 0.0
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    for a in range(n):
        for b in range(a + 1, n):
            i, j = order[a], order[b]
            if labels[i] == labels[j]:
                continue
            got = _FN[weight](a, b, gains[i], gains[j], labels[i], labels[j], inv, k, mu)
            want = W[i][j] if labels[i] > labels[j] else W[j][i]
            assert got >= 0.0
            assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
            # the documented skip rule: only NDCG-Loss2++ with mu == 0 vanishes for a >= k
            if weight == "ndcg_loss2pp" and mu == 0.0 and a >= k:
                assert got == 0.0


@pytest.mark.parametrize("weight", WEIGHTS)
@pytest.mark.parametrize("k", [1, 3, None])
def test_reference_gradient_is_finite_difference_of_loss(weight, k):
    rng = np.random.default_rng(7)
    scores = list(rng.normal(size=8))
    labels = [0.0, 2.0, 1.0, 0.0, 3.5, 1.0, 0.0, 2.25]  # real-valued, with ties
    gains = [2.0 ** y - 1 for y in labels]
    sigma = 1.7
    g, h, W = lambdaloss_gradients_reference(scores, labels, gains, weight, k, 2.0, sigma)
    eps = 1e-6
    for d in range(len(scores)):
        up = list(scores)
        dn = list(scores)
        up[d] += eps
        dn[d] -= eps
        fd = (_loss(up, labels, W, sigma) - _loss(dn, labels, W, sigma)) / (2 * eps)
        assert g[d] == pytest.approx(fd, rel=1e-6, abs=1e-9)
        # diagonal Hessian: finite difference of the gradient of the fixed-weight loss
        e2 = 1e-4
        up[d] = scores[d] + e2
        dn[d] = scores[d] - e2
        fd2 = (_loss(up, labels, W, sigma) - 2 * _loss(scores, labels, W, sigma)
               + _loss(dn, labels, W, sigma)) / e2 ** 2
        assert h[d] == pytest.approx(fd2, rel=1e-5, abs=1e-7)


def test_closed_form_values():
    # adjacent pair: δ = 1 − 1/log2(3); gains 3 and 0, IDCG = 3 (k = n = 2)
    delta = 1 - 1 / math.log2(3)
    assert ll.ndcg_loss2(0, 1, 3.0, 0.0, 2.0, 0.0, 1 / 3, 2, 0.0) == pytest.approx(delta, rel=1e-15)
    # LambdaLoss@1: lower member at 0-based 1 >= k = 1, factor 1/(1 − 1/log2(3))
    assert ll.ndcg_loss2_at_k(0, 1, 3.0, 0.0, 2.0, 0.0, 1 / 3, 1, 0.0) == pytest.approx(
        delta / (1 - 1 / math.log2(3)), rel=1e-15)
    # NDCG-Loss2++ with mu = 0 is the ΔNDCG@k weight
    assert ll.ndcg_loss2pp(0, 2, 3.0, 1.0, 2.0, 1.0, 1 / 4, 3, 0.0) == pytest.approx(
        2.0 * (1 - 1 / math.log2(4)) / 4, rel=1e-15)
    assert ll.label_diff(0, 5, 0.0, 0.0, 2.5, 0.25, 0.0, 1, 0.0) == 2.25
    assert ll.gain_diff(0, 5, 7.0, 1.0, 3.0, 1.0, 0.0, 1, 0.0) == 6.0
    assert ll.ndcg_loss2(0, 1, 3.0, 0.0, 2.0, 0.0, 0.0, 2, 0.0) == 0.0  # IDCG = 0 convention
