"""LambdaLoss pair weights (lambda_objectives/_kernels/lambdaloss.py) against their definitions.

The definitions below are written from the papers' 1-based formulas, independent of the library
and of tests/_oracles.py: Wang et al. CIKM 2018 (NDCG-Loss2, NDCG-Loss2++), Jagerman et al.
SIGIR 2022 (LambdaLoss@K multiplier ``1/(1 − 1/D(max r))`` for ``max r > k``). Every pair ``a < b``
is checked, also those below the cut-off: the published LambdaLoss@K forms every pair. Then whole
gradients: every pair for ``ndcg_loss2@k``/``ndcg_loss2pp@k``, the pairs touching the top ``k`` for the
``_top`` forms (ours), against finite differences of the stated loss at fixed ranks.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lambda_objectives._kernels.lambdaloss import (
    gap_deltas,
    ndcg_loss2_weight,
    ndcg_loss2pp_weight,
)
from lambda_objectives._kernels.ranking import discount_table

pytestmark = pytest.mark.kernel


def D(x):
    """The papers' ``D(x) = log2(1 + x)`` (1-based ranks)."""
    return math.log2(1 + x)


def _definition(ri, rj, gi, gj, k, inv_idcg, mu=None):
    """NDCG-Loss2@k (``mu is None``) or NDCG-Loss2++@k weight of 1-based ranks ``ri < rj``."""
    d = rj - ri
    delta = abs(1 / D(d) - 1 / D(d + 1))
    at_k = 1 / (1 - 1 / D(rj)) if rj > k else 1.0
    if mu is None:
        return abs(gi - gj) * delta * at_k * inv_idcg

    def disc(r):  # the ΔNDCG@k discount: 0 beyond k
        return 1 / D(r) if r <= k else 0.0

    return abs(gi - gj) * (abs(disc(ri) - disc(rj)) + mu * delta * at_k) * inv_idcg


# Subnormal labels are refused by check_labels (1/IDCG would overflow), so the kernels never see them.
_lists = st.integers(2, 10).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.sampled_from([0.0, 1.0, 3.0]), st.floats(0, 4, allow_nan=False, allow_subnormal=False)),
             min_size=n, max_size=n),
    st.integers(1, n + 3)))


@settings(max_examples=200, deadline=None)
@given(q=_lists, mu=st.sampled_from([0.0, 0.5, 10.0]), gain=st.sampled_from(["exp", "linear"]))
def test_weights_equal_definitions_for_every_pair(q, mu, gain):
    labels, k = q
    n = len(labels)
    kk = min(k, n)
    gains = [2.0 ** y - 1 if gain == "exp" else y for y in labels]  # gains in rank order; ties allowed
    ideal = sorted(gains, reverse=True)[:kk]
    idcg = sum(g / D(r) for r, g in enumerate(ideal, start=1))
    inv = 1 / idcg if idcg > 0 else 0.0
    disc = discount_table(n)
    deltas, scale = np.empty(n), np.empty(n)
    gap_deltas(disc, kk, deltas, scale)
    for a in range(n):
        for b in range(a + 1, n):
            if labels[a] == labels[b]:
                continue
            got2 = ndcg_loss2_weight(gains[a], gains[b], a, b, deltas, scale, inv)
            assert got2 >= 0.0
            assert got2 == pytest.approx(_definition(a + 1, b + 1, gains[a], gains[b], kk, inv), rel=1e-12, abs=1e-300)
            gotpp = ndcg_loss2pp_weight(gains[a], gains[b], a, b, kk, disc, deltas, scale, inv, mu)
            assert gotpp >= 0.0
            assert gotpp == pytest.approx(_definition(a + 1, b + 1, gains[a], gains[b], kk, inv, mu),
                                          rel=1e-12, abs=1e-300)


def test_closed_form_values():
    disc = discount_table(3)
    deltas, scale = np.empty(3), np.empty(3)
    gap_deltas(disc, 3, deltas, scale)
    adjacent = 1 - 1 / math.log2(3)  # δ of neighbours, no cut-off
    assert ndcg_loss2_weight(3.0, 0.0, 0, 1, deltas, scale, 1 / 3) == pytest.approx(adjacent, rel=1e-15)
    gap_deltas(disc, 1, deltas, scale)  # k = 1: the lower member at 0-based 1 is beyond the cut-off
    assert ndcg_loss2_weight(3.0, 0.0, 0, 1, deltas, scale, 1 / 3) == pytest.approx(
        adjacent / (1 - 1 / math.log2(3)), rel=1e-15)
    # NDCG-Loss2++ with mu = 0 is the ΔNDCG@k weight
    gap_deltas(disc, 3, deltas, scale)
    assert ndcg_loss2pp_weight(3.0, 1.0, 0, 2, 3, disc, deltas, scale, 1 / 4, 0.0) == pytest.approx(
        2.0 * (1 - 1 / math.log2(4)) / 4, rel=1e-15)


def _loss(s, labels, ranks, k, sigma, mu, all_pairs):
    """The stated loss ``Σ_{y_i > y_j} w_ij log(1 + exp(−σ(s_i − s_j)))`` with the weights of the ranks
    ``ranks`` (1-based, frozen), exponential gains, IDCG@k; ``mu`` None: NDCG-Loss2, else ++."""
    gains = [2.0 ** y - 1 for y in labels]
    n = len(labels)
    kk = n if k is None else min(k, n)
    ideal = sorted(gains, reverse=True)[:kk]
    inv = 1 / sum(g / D(r) for r, g in enumerate(ideal, start=1))
    total = 0.0
    for i in range(n):
        for j in range(n):
            if not labels[i] > labels[j]:
                continue
            top, low = sorted((ranks[i], ranks[j]))
            if not all_pairs and top > kk:
                continue
            w = _definition(top, low, gains[i], gains[j], kk, inv, mu)
            total += w * math.log1p(math.exp(-sigma * (s[i] - s[j])))
    return total


@pytest.mark.parametrize("name, mu, all_pairs", [("ndcg_loss2", None, True), ("ndcg_loss2pp", 10.0, True),
                                                 ("ndcg_loss2_top", None, False), ("ndcg_loss2pp_top", 10.0, False)])
@pytest.mark.parametrize("k", [1, 3, 7, None])
def test_gradient_and_hessian_are_finite_differences_of_the_stated_loss(name, mu, all_pairs, k):
    from lambda_objectives import lambda_gradients

    rng = np.random.default_rng(5)
    n, sigma = 9, 1.3
    s = rng.normal(size=n)
    labels = [float(v) for v in rng.integers(0, 4, n)]
    order = sorted(range(n), key=lambda d: -s[d])
    ranks = {d: p + 1 for p, d in enumerate(order)}
    g, h = lambda_gradients(s, np.array(labels), [0, n], name, k, sigma)
    l0 = _loss(s, labels, ranks, k, sigma, mu, all_pairs)
    for i in range(n):
        lu, ld = (_loss(s + e * np.eye(n)[i], labels, ranks, k, sigma, mu, all_pairs) for e in (1e-6, -1e-6))
        assert g[i] == pytest.approx((lu - ld) / 2e-6, rel=1e-6, abs=1e-9)
        lu, ld = (_loss(s + e * np.eye(n)[i], labels, ranks, k, sigma, mu, all_pairs) for e in (1e-3, -1e-3))
        assert h[i] == pytest.approx((lu - 2 * l0 + ld) / 1e-6, rel=1e-5, abs=1e-9)


def test_the_top_forms_keep_the_results_the_plain_names_had():
    # values of ndcg_loss2@3 / ndcg_loss2pp@3 before the published all-pairs form took the plain names
    # (commit 741f5bb), in float.hex: the renamed variants reproduce them bit for bit
    from lambda_objectives import lambda_gradients

    s = np.array([0.3, -1.2, 0.8, 0.05, 1.4, -0.3, 0.6, 0.0])
    y = np.array([2.0, 0, 1, 3, 0, 1, 0, 2])
    old = {
        "ndcg_loss2_top@3": (
            ["-0x1.4a92e0d45714ap-3", "0x1.91e1bb26bdeb0p-12", "0x1.54f3e0258781ap-5", "-0x1.63e03fdd7b7fcp-3",
             "0x1.9f1a1b21a04ffp-4", "-0x1.dda539805c38ap-8", "0x1.e9fd062622a61p-3", "-0x1.48bec8804a5cep-5"],
            ["0x1.00f287c4e533ap-4", "0x1.61f9ed97a0194p-12", "0x1.6dff264960150p-5", "0x1.c6582e33b5435p-5",
             "0x1.9cc0d871fe8f3p-6", "0x1.c5c52cab36dafp-10", "0x1.8a817a56180b9p-4", "0x1.8c4b139820edfp-7"]),
        "ndcg_loss2pp_top@3": (
            ["-0x1.fd3b68a3307f0p+0", "0x1.6ab7b65841125p-7", "0x1.92ffd7385ed5ap-1", "-0x1.5de38f7918536p+1",
             "0x1.0ce4c35eb7efcp+1", "-0x1.81ef4ce228d88p-3", "0x1.69390d207dcb4p+1", "-0x1.9ea115ab4a442p-1"],
            ["0x1.7d8cea9e5f664p-1", "0x1.3f7b0a40f125fp-7", "0x1.324fadac5a16ep-1", "0x1.a4fc5e037d297p-1",
             "0x1.ee3548f8a658ep-2", "0x1.45be4da9b8c0ap-5", "0x1.1f621ece34ffep+0", "0x1.ce4fd654d091cp-3"]),
    }
    for name, (g_hex, h_hex) in old.items():
        g, h = lambda_gradients(s, y, [0, 8], name)
        assert [float(v).hex() for v in g] == g_hex and [float(v).hex() for v in h] == h_hex
        plain, _ = lambda_gradients(s, y, [0, 8], name.replace("_top", ""))
        assert not np.array_equal(plain, g)  # the published form differs with a cut-off
    # without a cut-off the two forms are one
    for base in ("ndcg_loss2", "ndcg_loss2pp"):
        np.testing.assert_array_equal(lambda_gradients(s, y, [0, 8], base)[0],
                                      lambda_gradients(s, y, [0, 8], base + "_top")[0])
