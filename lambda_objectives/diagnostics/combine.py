"""The optimal linear combination of two rankers (Burges, MSR-TR-2010-82, §7.1), found exactly.

For scores ``s(α) = α·s1 + (1 − α)·s2`` a query's ranking, hence its metric, changes only at the
finitely many ``α`` where two of its documents with different labels swap: where
``α (s1_i − s1_j) + (1 − α)(s2_i − s2_j) = 0``. Between consecutive breakpoints the mean metric is
constant, so sweeping the breakpoints in increasing order, re-evaluating only the queries whose
documents cross there, gives the exact maximum over ``α ∈ [0, 1]``.

Convention: the metric is maximised over the open intervals between breakpoints and over the
two ends ``α = 0`` and ``α = 1``; at a breakpoint itself the tied documents would be ordered by
the tie rule (input position), an artefact we do not optimise. The returned ``α`` is the
midpoint of the best interval (the smallest such on ties) or the end that wins.
"""

import numpy as np
from numba import njit

from .. import _registry as reg
from .._core.config import FLOAT
from .._kernels.metric import query_metric
from .._kernels.ranking import discount_table
from ..checks import check_labels, check_scores
from ..data.groups import check_group_ptr
from ..metrics import IDEAL_ZERO, parse_metric

__all__ = ["best_linear_combination", "combination_breakpoints"]


@njit(cache=True)
def _breakpoints(s1, s2, labels, group_ptr, alpha, query, fill):
    """Count (``fill=False``) or record the crossings in (0, 1) of differently labelled documents."""
    c = 0
    for q in range(group_ptr.shape[0] - 1):
        a0, b0 = group_ptr[q], group_ptr[q + 1]
        for i in range(a0, b0):
            for j in range(i + 1, b0):
                if labels[i] != labels[j]:
                    d1 = s1[i] - s1[j]
                    d2 = s2[i] - s2[j]
                    if d1 != d2:
                        t = d2 / (d2 - d1)
                        if 0.0 < t < 1.0:
                            if fill:
                                alpha[c] = t
                                query[c] = q
                            c += 1
    return c


@njit(cache=True)
def _query_value(s1, s2, values, a0, b0, alpha, metric, k, disc, ideal_zero):
    s = alpha * s1[a0:b0] + (1.0 - alpha) * s2[a0:b0]
    return query_metric(s, values[a0:b0], metric, k, disc, ideal_zero)


@njit(cache=True)
def _sweep(s1, s2, values, group_ptr, alpha, query, metric, k, disc, ideal_zero):
    """Return (best total, best α, total at α=0, total at α=1) over the sorted breakpoints."""
    nq = group_ptr.shape[0] - 1
    m = alpha.shape[0]
    # interval boundaries: 0, the distinct breakpoints, 1
    first_mid = 0.5 * alpha[0] if m > 0 else 0.5
    current = np.empty(nq)
    total = 0.0
    for q in range(nq):
        current[q] = _query_value(s1, s2, values, group_ptr[q], group_ptr[q + 1], first_mid, metric, k, disc,
                                  ideal_zero)
        total += current[q]
    best, best_alpha = total, first_mid
    t = 0
    while t < m:
        a = alpha[t]
        u = t
        while u < m and alpha[u] == a:
            u += 1
        nxt = alpha[u] if u < m else 1.0
        mid = 0.5 * (a + nxt)
        for v in range(t, u):
            q = query[v]
            if v > t and q == query[v - 1]:
                continue  # breakpoints are sorted by (alpha, query): re-evaluate each query once
            new = _query_value(s1, s2, values, group_ptr[q], group_ptr[q + 1], mid, metric, k, disc, ideal_zero)
            total += new - current[q]
            current[q] = new
        if total > best + 1e-12:
            best, best_alpha = total, mid
        t = u
    at0 = 0.0
    at1 = 0.0
    for q in range(nq):
        at0 += _query_value(s1, s2, values, group_ptr[q], group_ptr[q + 1], 0.0, metric, k, disc, ideal_zero)
        at1 += _query_value(s1, s2, values, group_ptr[q], group_ptr[q + 1], 1.0, metric, k, disc, ideal_zero)
    return best, best_alpha, at0, at1


def combination_breakpoints(s1, s2, labels, group_ptr):
    """All ``α ∈ (0, 1)`` where two documents of a query with different labels swap, sorted,
    with the query of each (``(alpha, query)`` arrays)."""
    s1, s2 = check_scores(s1, "s1"), check_scores(s2, "s2")
    if s1.shape != s2.shape:
        raise ValueError(f"s1 has {s1.shape[0]} rows, s2 has {s2.shape[0]}")
    y = check_labels(labels, s1.shape[0])
    ptr = check_group_ptr(group_ptr, s1.shape[0])
    alpha, query = np.empty(0, dtype=FLOAT), np.empty(0, dtype=np.int64)
    n = _breakpoints(s1, s2, y, ptr, alpha, query, False)
    alpha, query = np.empty(n, dtype=FLOAT), np.empty(n, dtype=np.int64)
    _breakpoints(s1, s2, y, ptr, alpha, query, True)
    order = np.lexsort((query, alpha))
    return alpha[order], query[order]


def best_linear_combination(s1, s2, labels, group_ptr, metric="ndcg@10", k=None, *, gain="exp", label_gain=None,
                            max_label=None, threshold=0.0, ideal_zero="one"):
    """The ``α ∈ [0, 1]`` maximising the mean metric of ``α·s1 + (1 − α)·s2``, exactly.

    Parameters
    ----------
    s1, s2 : array-like (n,)
        The two rankers' scores.
    labels, group_ptr : as in :func:`lambda_objectives.metric_values`
    metric, k, gain, label_gain, max_label, threshold, ideal_zero : the metric and its options.

    Returns
    -------
    alpha : float
        See the module docstring for the convention (interval midpoint or an end).
    value : float
        The mean metric at ``alpha``.
    """
    metric, k = parse_metric(metric, k)
    s1, s2 = check_scores(s1, "s1"), check_scores(s2, "s2")
    y = check_labels(labels, s1.shape[0], integer=reg.needs_integer_labels(metric, gain, label_gain))
    ptr = check_group_ptr(group_ptr, s1.shape[0])
    nq = ptr.shape[0] - 1
    if nq == 0:
        raise ValueError("no queries")
    alpha, query = combination_breakpoints(s1, s2, y, ptr)
    values = reg.kernel_inputs(metric, y, gain=gain, label_gain=label_gain, max_label=max_label, threshold=threshold)
    disc = discount_table(int(np.diff(ptr).max()))
    best, best_alpha, at0, at1 = _sweep(s1, s2, values, ptr, alpha, query, reg.REGISTRY[metric].code,
                                        0 if k is None else k, disc, IDEAL_ZERO[ideal_zero])
    # the ends are candidates too (ties there are resolved by the tie rule, as the user would see)
    candidates = [(best, best_alpha), (at0, 0.0), (at1, 1.0)]
    value, a = max(candidates, key=lambda c: (c[0], -c[1]))
    return float(a), float(value / nq)
