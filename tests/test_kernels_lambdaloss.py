"""LambdaLoss pair weights (lambda_objectives/_kernels/lambdaloss.py) against their definitions.

The definitions below are written from the papers' 1-based formulas, independent of the library
and of tests/_oracles.py: Wang et al. CIKM 2018 (NDCG-Loss2, NDCG-Loss2++), Jagerman et al.
SIGIR 2022 (LambdaLoss@K multiplier ``1/(1 − 1/D(max r))`` for ``max r > k``). Every pair ``a < b``
is checked for NDCG-Loss2(@K), also those the pair loop skips (``a >= k``); NDCG-Loss2++ on the
pairs the loop forms (``a < k``: its ρ term reads the upper member's discount untruncated).
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
            if a >= kk:
                continue
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
