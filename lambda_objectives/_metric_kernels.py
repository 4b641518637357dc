"""LOW LEVEL metric kernels: one ``@njit`` function per query and a ``prange`` driver over queries.

Every kernel takes the query's scores and one per-document value array prepared by the Python
layer (``metrics.py``): gains for DCG/NDCG, satisfaction probabilities ``R`` for ERR, 0/1
relevance for MAP/MRR. Ranking: scores descending, ties in input order (stable).
``k <= 0`` means the whole list.
"""

import numpy as np
from numba import njit, prange

from ._ranking import stable_order_desc

DCG, NDCG, ERR, AP, RR = 0, 1, 2, 3, 4


@njit(cache=True)
def _cutoff(n, k):
    if k <= 0 or k > n:
        return n
    return k


@njit(cache=True)
def dcg_sorted(values_in_order, k, disc):
    """DCG@k of gains already in rank order: ``sum_{r<k} g_r * disc[r]``."""
    kk = _cutoff(values_in_order.shape[0], k)
    total = 0.0
    for r in range(kk):
        total += values_in_order[r] * disc[r]
    return total


@njit(cache=True)
def ideal_dcg(gains, k, disc):
    """Ideal DCG@k: gains sorted descending."""
    ideal = np.sort(gains)[::-1]
    return dcg_sorted(ideal, k, disc)


@njit(cache=True)
def query_metric(scores, values, metric, k, disc, ideal_zero):
    """The metric of one query; ``values`` as described in the module docstring."""
    n = scores.shape[0]
    if n == 0:
        return ideal_zero if metric == NDCG else 0.0
    order = stable_order_desc(scores)
    kk = _cutoff(n, k)
    if metric == DCG or metric == NDCG:
        dcg = 0.0
        for r in range(kk):
            dcg += values[order[r]] * disc[r]
        if metric == DCG:
            return dcg
        idcg = ideal_dcg(values, k, disc)
        if idcg == 0.0:
            return ideal_zero
        return dcg / idcg
    if metric == ERR:
        total = 0.0
        not_stopped = 1.0
        for r in range(kk):
            R = values[order[r]]
            total += not_stopped * R / (r + 1.0)
            not_stopped *= 1.0 - R
        return total
    if metric == AP:
        n_rel = 0.0
        for i in range(n):
            n_rel += values[i]
        if n_rel == 0.0:
            return 0.0
        hits = 0.0
        total = 0.0
        for r in range(kk):
            if values[order[r]] > 0.0:
                hits += 1.0
                total += hits / (r + 1.0)
        return total / n_rel
    # RR
    for r in range(kk):
        if values[order[r]] > 0.0:
            return 1.0 / (r + 1.0)
    return 0.0


@njit(cache=True, parallel=True)
def metric_driver(scores, values, group_ptr, metric, k, disc, ideal_zero, out):
    """Fill ``out[q]`` with the metric of query ``q``; queries are independent (prange)."""
    n_queries = group_ptr.shape[0] - 1
    for q in prange(n_queries):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        out[q] = query_metric(scores[a:b], values[a:b], metric, k, disc, ideal_zero)
