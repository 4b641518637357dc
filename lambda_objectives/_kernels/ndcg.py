"""DCG@k / NDCG@k and the closed form of ΔNDCG@k for a swap (Järvelin & Kekäläinen 2002; Burges 2010).

``values`` are the documents' gains ``G`` (prepared in Python, see ``ranking.document_gains``).

* ``DCG@k = sum_{r<k} G_{(r)} D_r`` and ``NDCG@k = DCG@k / IDCG@k``;
* swapping the documents at positions ``a < b`` changes DCG@k by
  ``(G_a − G_b)(D_b − D_a)`` with ``D_r = 0`` for ``r >= k``, so
  ``|ΔNDCG@k| = |G_a − G_b| · |D_a − D_b| / IDCG@k`` (Burges, MSR-TR-2010-82, §4).
"""

from numba import njit

from .ranking import dcg_in_order, ideal_dcg


@njit(cache=True)
def dcg_value(values, order, kk, disc):
    """DCG of the ranking ``order`` over its first ``kk`` positions."""
    return dcg_in_order(values, order, kk, disc)


@njit(cache=True)
def ndcg_value(values, order, k, kk, disc, ideal_zero):
    """NDCG@k of the ranking ``order``; ``ideal_zero`` when the ideal DCG@k is 0."""
    idcg = ideal_dcg(values, k, disc)
    if idcg == 0.0:
        return ideal_zero
    return dcg_in_order(values, order, kk, disc) / idcg


@njit(cache=True)
def ndcg_inverse_ideal(values, k, disc):
    """``1/IDCG@k`` for the pair loop (0 when IDCG@k is 0: then every |ΔNDCG| is 0)."""
    idcg = ideal_dcg(values, k, disc)
    return 0.0 if idcg == 0.0 else 1.0 / idcg


@njit(cache=True)
def ndcg_delta(ga, gb, a, b, kk, disc, inv_idcg):
    """``|ΔNDCG@k|`` of swapping positions ``a < b`` with gains ``ga``, ``gb``."""
    db = disc[b] if b < kk else 0.0
    return abs(ga - gb) * abs(disc[a] - db) * inv_idcg
