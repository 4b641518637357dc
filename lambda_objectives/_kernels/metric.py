"""The metric driver: one query's metrics by registry code, and a ``prange`` loop over queries.

Every metric reads the query's scores and one per-document value array prepared by the registry
(gains for DCG/NDCG, satisfaction probabilities ``R`` for ERR, 0/1 relevance for MAP/MRR);
the formulas are in the metric modules. Ranking: scores descending, ties in input order.
"""

from numba import njit, prange

from .codes import DCG, ERR, MAP, NDCG
from .ap import ap_value
from .err import err_value
from .ndcg import dcg_value, ndcg_value
from .ranking import cutoff, stable_order_desc
from .rr import rr_value


@njit(cache=True)
def ranked_metric(values, order, metric, k, disc, ideal_zero):
    """The metric of one non-empty query from its ranking ``order`` (the documents by score
    descending, ties in input order)."""
    n = order.shape[0]
    kk = cutoff(n, k)
    if metric == NDCG:
        return ndcg_value(values, order, k, kk, disc, ideal_zero)
    if metric == DCG:
        return dcg_value(values, order, kk, disc)
    if metric == ERR:
        return err_value(values, order, kk)
    if metric == MAP:
        return ap_value(values, order, n, kk)
    return rr_value(values, order, kk)


@njit(cache=True)
def empty_query(metric, ideal_zero):
    """The metric of a query with no document: NDCG's ``ideal_zero`` (its ideal DCG is 0), else 0."""
    return ideal_zero if metric == NDCG else 0.0


@njit(cache=True)
def query_metric(scores, values, metric, k, disc, ideal_zero):
    """The metric of one query; ``ideal_zero`` is NDCG's value when the ideal DCG@k is 0."""
    if scores.shape[0] == 0:
        return empty_query(metric, ideal_zero)
    return ranked_metric(values, stable_order_desc(scores), metric, k, disc, ideal_zero)


@njit(cache=True, parallel=True)
def metrics_driver(scores, values, group_ptr, metrics, ks, disc, ideal_zero, out):
    """Fill ``out[m, q]`` with metric ``metrics[m]`` at cutoff ``ks[m]`` of query ``q``, reading
    ``values[m]``: each query ranked once for all of them (prange over queries; one metric is the
    case of ``metric_values``), each value :func:`query_metric`'s: the same ranking and formulas."""
    n_queries = group_ptr.shape[0] - 1
    for q in prange(n_queries):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        if b == a:
            for m in range(metrics.shape[0]):
                out[m, q] = empty_query(metrics[m], ideal_zero)
            continue
        order = stable_order_desc(scores[a:b])
        for m in range(metrics.shape[0]):
            out[m, q] = ranked_metric(values[m, a:b], order, metrics[m], ks[m], disc, ideal_zero)
