"""AP@k (trec_eval ``map_cut``) and ΔAP@k of a swap, from prefix counts (binary relevance).

``values`` are 0/1 relevance. ``AP@k = (1/R) sum_{r<k, rel_r} c_r/(r+1)`` with ``c_r`` the number
of relevant documents at positions ``<= r`` and ``R`` all relevant documents of the query.

Swapping a relevant and a non-relevant document at positions ``a < b`` moves the relevant one across
the span; with the inclusive prefix count ``c`` and ``B_r = sum_{t<=r, t<k} rel_t/(t+1)``:

* relevant moves down (``rel_a = 1``): ``ΔAP·R = −c_a/(a+1) − (B_{min(b,k)−1} − B_a) + [b<k] c_b/(b+1)``;
* relevant moves up (``rel_b = 1``): ``ΔAP·R = (c_a+1)/(a+1) + (B_{min(b,k)−1} − B_a) − [b<k] c_b/(b+1)``.
"""

from numba import njit


@njit(cache=True)
def ap_value(values, order, n, kk):
    """AP of the ranking ``order`` truncated at ``kk``, normalised by all relevant documents (0 if none)."""
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


@njit(cache=True)
def relevance_prefix(vr, kk, count, reciprocal):
    """``count[r] = c_r`` and ``reciprocal[r] = B_r`` for relevance in rank order ``vr``.

    Returns ``(R, first, second)``: the number of relevant documents and the positions of the first
    two (``n`` when absent), which RR's swap change also reads.
    """
    n = vr.shape[0]
    run = 0.0
    b = 0.0
    first = n
    second = n
    for r in range(n):
        if vr[r] > 0.0:
            run += 1.0
            if r < kk:
                b += 1.0 / (r + 1.0)
            if first == n:
                first = r
            elif second == n:
                second = r
        count[r] = run
        reciprocal[r] = b
    return run, first, second


@njit(cache=True, inline="always")  # array arguments: LLVM alone does not inline it (2x slower ΔAP)
def ap_delta(ra, rb, a, b, kk, count, reciprocal, n_rel):
    """``|ΔAP@k|`` of swapping positions ``a < b`` with relevances ``ra``, ``rb``."""
    if ra == rb:
        return 0.0
    mid = reciprocal[min(b, kk) - 1] - reciprocal[a]
    at_b = count[b] / (b + 1.0) if b < kk else 0.0
    if ra > 0.0:
        dz = -count[a] / (a + 1.0) - mid + at_b
    else:
        dz = (count[a] + 1.0) / (a + 1.0) + mid - at_b
    return abs(dz) / n_rel
