"""LOW LEVEL lambda kernels: per-query gradient/Hessian of LambdaMART for ΔNDCG, ΔERR, ΔMAP, ΔMRR, RankNet.

Each query is ranked once (scores descending, ties in input order) and every pair ``(a, b)`` of
rank positions with ``a < b``, ``a < k`` and different labels gets the closed-form ``|ΔZ|`` of
swapping the two documents, so one query costs ``O(n * min(n, k))``:

* ΔNDCG@k = |G_a − G_b| · |D_a − D_b| / IDCG@k, ``D_r = 1/log2(r+2)`` for ``r < k``, else 0;
* ΔERR@k: Burges' prefix-product construction (MSR-TR-2010-82 §3) in its division-free form:
  with ``P_a = prod_{t<a}(1−R_t)``, ``Q = prod_{a<t<b}(1−R_t)`` and
  ``S = sum_{a<t<min(b,k)} prod_{a<u<t}(1−R_u) R_t/(t+1)`` carried along the inner loop,
  ``ΔERR = (R_b − R_a) P_a/(a+1) + P_a (R_a − R_b) S + [b<k] P_a Q (R_a − R_b)/(b+1)``;
* ΔAP@k (binary relevance): from the inclusive prefix count ``c`` of relevant documents and
  the prefix sum ``B`` of ``rel_t/(t+1)`` over ``t < k``;
* ΔRR@k: from the first and second relevant positions;
* RankNet: ``|ΔZ| = 1``.

``values`` carries the per-document quantity of the metric (gain, ``R`` or 0/1 relevance),
prepared by the Python layer with the metric module's own function, so metric and lambdas can
never disagree on gains.
"""

import math

import numpy as np
from numba import njit, prange

from ._metric_kernels import ideal_dcg
from ._ranking import stable_order_desc

NDCG, ERR, MAP, MRR, RANKNET = 0, 1, 2, 3, 4
NORM_NONE, NORM_LAMBDARANK = 0, 1
_TINY = 1e-280


@njit(cache=True)
def _rho(x):
    """``1/(1+exp(x))`` without overflow (also as plain Python under NUMBA_DISABLE_JIT)."""
    if x > 0.0:
        e = math.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(x))


@njit(cache=True)
def query_lambdas(s, lab, val, metric, k, sigma, disc, weight, normalize, g, h,
                  store, pi, pj, ph, row0, want_cost):
    """Fill ``g``/``h`` (this query's rows) and, if ``store``, the pair slots.

    Returns ``(pairs stored, cost)``; ``cost`` (only with ``want_cost``) is the query's
    fixed-ranking pairwise cost ``weight · Σ |ΔZ| log(1 + exp(−σ(s_hi − s_lo)))``.
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    if n <= 1:
        return 0, 0.0
    kk = n if (k <= 0 or k > n) else k
    order = stable_order_desc(s)
    # one allocation for every per-query table: short queries are dominated by allocator calls
    work = np.empty(8 * n + 1)
    sr = work[0:n]
    lr = work[n:2 * n]
    vr = work[2 * n:3 * n]
    gr = work[3 * n:4 * n]
    hr = work[4 * n:5 * n]
    er = work[5 * n:6 * n]
    acc = work[6 * n:7 * n]
    pref = work[7 * n:8 * n + 1]
    for r in range(n):
        d = order[r]
        sr[r] = s[d]
        lr[r] = lab[d]
        vr[r] = val[d]
        gr[r] = 0.0
        hr[r] = 0.0
    # rho = 1/(1+exp(sigma(s_hi - s_lo))) = e_lo/(e_lo + e_hi) with e = exp(sigma(s - max s)):
    # one exp per document instead of one per pair; e <= 1 cannot overflow, and pairs whose
    # e underflows towards subnormals fall back to the direct formula.
    for r in range(n):
        er[r] = math.exp(sigma * (sr[r] - sr[0]))

    # Per-query tables of the metric; an ideal value of 0 means every |ΔZ| is 0.
    inv = 0.0
    # pref, ERR: P; MAP: inclusive relevant count c. acc, MAP: B (prefix of rel_t/(t+1), t < k)
    n_rel = 0.0
    first = n
    second = n
    if metric == NDCG:
        idcg = ideal_dcg(val, k, disc)
        if idcg == 0.0:
            return 0, 0.0
        inv = 1.0 / idcg
    elif metric == ERR:
        pref[0] = 1.0
        any_rel = False
        for r in range(n):
            pref[r + 1] = pref[r] * (1.0 - vr[r])
            if vr[r] > 0.0:
                any_rel = True
        if not any_rel:
            return 0, 0.0
    elif metric == MAP or metric == MRR:
        run = 0.0
        b = 0.0
        for r in range(n):
            if vr[r] > 0.0:
                run += 1.0
                if r < kk:
                    b += 1.0 / (r + 1.0)
                if first == n:
                    first = r
                elif second == n:
                    second = r
            pref[r] = run
            acc[r] = b
        n_rel = run
        if n_rel == 0.0:
            return 0, 0.0
    rr_first = 1.0 / (first + 1.0) if first < kk else 0.0

    count = 0
    total = 0.0
    cost = 0.0
    for a in range(kk):
        la = lr[a]
        ra = vr[a]
        q_prod = 1.0
        s_sum = 0.0
        ea = er[a]
        # a's own sums stay in registers across the inner loop (no store/load through gr[a])
        ga = 0.0
        ha = 0.0
        for b in range(a + 1, n):
            lb = lr[b]
            rb = vr[b]
            if la != lb:
                if metric == NDCG:
                    db = disc[b] if b < kk else 0.0
                    dz = abs(ra - rb) * abs(disc[a] - db) * inv
                elif metric == ERR:
                    dz = (rb - ra) * pref[a] / (a + 1.0) + pref[a] * (ra - rb) * s_sum
                    if b < kk:
                        dz += pref[a] * q_prod * (ra - rb) / (b + 1.0)
                    dz = abs(dz)
                elif metric == MAP:
                    if ra == rb:
                        dz = 0.0
                    else:
                        mid = acc[min(b, kk) - 1] - acc[a]
                        at_b = pref[b] / (b + 1.0) if b < kk else 0.0
                        if ra > 0.0:
                            dz = -pref[a] / (a + 1.0) - mid + at_b
                        else:
                            dz = (pref[a] + 1.0) / (a + 1.0) + mid - at_b
                        dz = abs(dz) / n_rel
                elif metric == MRR:
                    dz = 0.0
                    if rb > 0.0 and ra == 0.0:
                        if a < first:
                            dz = 1.0 / (a + 1.0) - rr_first
                    elif ra > 0.0 and rb == 0.0 and a == first:
                        nxt = min(b, second)
                        dz = rr_first - (1.0 / (nxt + 1.0) if nxt < kk else 0.0)
                else:
                    dz = 1.0
                if dz != 0.0:
                    # branch-free orientation: the pair's upper-labelled member is a or b
                    a_hi = la > lb
                    eb = er[b]
                    if ea > _TINY and eb > _TINY:
                        rho = (eb if a_hi else ea) / (ea + eb)
                    else:
                        x = sigma * (sr[a] - sr[b])
                        rho = _rho(x if a_hi else -x)
                    lam = sigma * dz * rho
                    hh = sigma * sigma * dz * rho * (1.0 - rho)
                    signed = -lam if a_hi else lam
                    ga += signed
                    gr[b] -= signed
                    ha += hh
                    hr[b] += hh
                    total += 2.0 * lam
                    if want_cost:
                        x = sigma * (sr[a] - sr[b])
                        if not a_hi:
                            x = -x
                        if x > 0.0:
                            cost += dz * math.log1p(math.exp(-x))
                        else:
                            cost += dz * (-x + math.log1p(math.exp(x)))
                    if store:
                        pi[count] = row0 + (order[a] if a_hi else order[b])
                        pj[count] = row0 + (order[b] if a_hi else order[a])
                        ph[count] = hh
                    count += 1
            if metric == ERR:
                if b < kk:
                    s_sum += q_prod * rb / (b + 1.0)
                q_prod *= 1.0 - rb
        gr[a] += ga
        hr[a] += ha

    scale = weight
    if normalize == NORM_LAMBDARANK and total > 0.0:
        scale *= math.log2(1.0 + total) / total
    for r in range(n):
        g[order[r]] = gr[r] * scale
        h[order[r]] = hr[r] * scale
    if store:
        for c in range(count):
            ph[c] *= scale
    return count, cost * weight


@njit(cache=True)
def pair_capacity(lab, group_ptr, k):
    """Per query, the number of pairs a query can form (labels differ, top member within k)."""
    n_queries = group_ptr.shape[0] - 1
    cap = np.zeros(n_queries, dtype=np.int64)
    for q in range(n_queries):
        a0 = group_ptr[q]
        n = group_ptr[q + 1] - a0
        kk = n if (k <= 0 or k > n) else k
        # Pairs with the upper member in the top kk are bounded by the count of unequal labels
        # among all pairs touching the top kk, independent of the ranking.
        labels = np.sort(lab[a0:a0 + n])
        same = 0
        run = 1
        for r in range(1, n + 1):
            if r < n and labels[r] == labels[r - 1]:
                run += 1
            else:
                same += run * (run - 1) // 2
                run = 1
        total = n * (n - 1) // 2 - same
        bound = kk * n - kk * (kk + 1) // 2
        cap[q] = min(total, bound)
    return cap


@njit(cache=True, parallel=True)
def lambda_driver(scores, labels, values, group_ptr, metric, k, sigma, disc, weights, normalize,
                  grad, hess, store, pair_ptr, pi, pj, ph, counts, schedule, n_chunks, want_cost, cost):
    """All queries; ``schedule`` lists queries by decreasing cost and is dealt round-robin to
    ``n_chunks`` parallel chunks, so uneven list lengths still balance. Each query writes only
    its own rows (and its own pair slots), so the result does not depend on the thread count."""
    n_queries = group_ptr.shape[0] - 1
    for c in prange(n_chunks):
        for t in range(c, n_queries, n_chunks):
            q = schedule[t]
            a = group_ptr[q]
            b = group_ptr[q + 1]
            p0 = pair_ptr[q]
            p1 = pair_ptr[q + 1]
            stored, v = query_lambdas(scores[a:b], labels[a:b], values[a:b], metric, k, sigma, disc,
                                 weights[q], normalize, grad[a:b], hess[a:b], store,
                                 pi[p0:p1], pj[p0:p1], ph[p0:p1], a, want_cost)
            counts[q] = stored
            cost[q] = v
