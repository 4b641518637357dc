"""RR@k (reciprocal rank of the first relevant document) and ΔRR@k of a swap.

``values`` are 0/1 relevance; ``RR@k = 1/(f+1)`` for the first relevant position ``f < k``, else 0.
A swap of positions ``a < b`` changes RR only when it moves the first relevant document: a relevant
``b`` moving above the current first (``a < f``) gives ``1/(a+1) − RR``; the first relevant ``a``
moving down to ``b`` leaves the next relevant document (``min(b, second)``) in front.
"""

from numba import njit


@njit(cache=True)
def rr_value(values, order, kk):
    """RR of the ranking ``order`` within its first ``kk`` positions."""
    for r in range(kk):
        if values[order[r]] > 0.0:
            return 1.0 / (r + 1.0)
    return 0.0


@njit(cache=True)
def rr_delta(ra, rb, a, b, kk, first, second, rr_first):
    """``|ΔRR@k|`` of swapping positions ``a < b``; ``rr_first = 1/(first+1)`` (0 beyond ``k``)."""
    if rb > 0.0 and ra == 0.0:
        if a < first:
            return 1.0 / (a + 1.0) - rr_first
        return 0.0
    if ra > 0.0 and rb == 0.0 and a == first:
        nxt = min(b, second)
        return rr_first - (1.0 / (nxt + 1.0) if nxt < kk else 0.0)
    return 0.0
