"""The one pair loop of every lambda objective: RankNet forces weighted by a metric's |ΔZ|.

Each query is ranked once (``ranking.stable_order_desc``) and every pair ``(a, b)`` of rank
positions with ``a < b``, ``a < k`` (every ``a`` for the published LambdaLoss@K) and different labels
gets the weight ``|ΔZ|`` of the metric
selected by its registry code (the closed forms live in the metric modules: ``ndcg``, ``err``,
``ap``, ``rr``; the LambdaLoss weights in ``lambdaloss``; RankNet's weight is 1). With ``ρ = 1/(1 + exp(σ(s_hi − s_lo)))`` the pair adds
``∓σ|ΔZ|ρ`` to the gradients and ``σ²|ΔZ|ρ(1 − ρ)`` to both Hessians (Burges, MSR-TR-2010-82,
§4 and §7), so one query costs ``O(n · min(n, k))``.

``values`` carries the per-document quantity of the metric (gain, ``R`` or 0/1 relevance),
prepared by the registry's input function, so metric and lambdas never disagree on gains.

``pair_method="mean"`` (:func:`query_lambdas_sampled`) forms sampled pairs instead, O(n · m): each
document at position ``r`` draws ``m`` partners uniformly, with replacement, from its pool ``C_r`` (the
documents with another label; for a document below the cut-off of a top-k objective, only those in the
top k, the other pairs having weight 0), and each draw adds the RankNet force of the pair with its
exact ``|ΔZ|`` times ``|C_r|/(2m)`` to both members. A pair ``(i, j)`` is drawn by ``i`` ``m/|C_i|``
times and by ``j`` ``m/|C_j|`` times in expectation, so its expected total weight is ``1/2 + 1/2 = 1``:
``E[g] = g_all`` and ``E[h] = h_all`` for every document (before ``normalize``, whose factor is of the
sampled total). A pool of at most ``m`` documents is taken whole, each with weight 1/2, so lists with
``n − 1 <= m`` give the full-list result (up to summation order).
"""

import math

import numpy as np
from numba import njit, prange

from .._registry import (ERR, GAIN_DIFF, LABEL_DIFF, MAP, MRR, NDCG, NDCG_LOSS2, NDCG_LOSS2_TOP, NDCG_LOSS2PP,
                         NDCG_LOSS2PP_TOP, RANKNET)
from .ap import ap_delta, relevance_prefix
from .err import err_advance, err_delta, err_delta_any, err_prefix, err_suffix
from .lambdaloss import gap_deltas, ndcg_loss2_weight, ndcg_loss2pp_weight
from .ndcg import ndcg_delta, ndcg_inverse_ideal
from .ranking import cutoff, stable_order_desc
from .rr import rr_delta
from .yetirank import content_key, query_key, uniform53

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
def _scatter(gr, hr, order, weight, normalize, total, g, h):
    """Rank-order sums back to document order, times the query weight and LightGBM's
    ``lambdarank_norm`` factor ``log2(1 + S)/S`` (``S`` = the query's total |λ|); returns the scale."""
    scale = weight
    if normalize == NORM_LAMBDARANK and total > 0.0:
        scale *= math.log2(1.0 + total) / total
    for r in range(order.shape[0]):
        g[order[r]] = gr[r] * scale
        h[order[r]] = hr[r] * scale
    return scale


@njit(cache=True)
def query_lambdas(s, lab, val, metric, k, sigma, disc, weight, normalize, g, h,
                  store, pi, pj, ph, row0, want_cost, mu):
    """Fill ``g``/``h`` (this query's rows) and, if ``store``, the pair slots.

    Returns ``(pairs stored, cost)``; ``cost`` (only with ``want_cost``) is the query's
    fixed-ranking pairwise cost ``weight · Σ |ΔZ| log(1 + exp(−σ(s_hi − s_lo)))``. ``mu`` is
    NDCG-Loss2++'s weight of the rank-gap term (unused by the other codes).
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    if n <= 1:
        return 0, 0.0
    kk = cutoff(n, k)
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
    n_rel = 0.0
    first = n
    second = n
    if metric == NDCG or metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP or metric == NDCG_LOSS2_TOP \
            or metric == NDCG_LOSS2PP_TOP:
        inv = ndcg_inverse_ideal(val, k, disc)
        if inv == 0.0:
            return 0, 0.0
        if metric != NDCG:
            gap_deltas(disc, kk, acc, pref)  # LambdaLoss's δ per rank gap and @K multiplier
    elif metric == ERR:
        if not err_prefix(vr, pref):
            return 0, 0.0
    elif metric == MAP or metric == MRR:
        n_rel, first, second = relevance_prefix(vr, kk, pref, acc)
        if n_rel == 0.0:
            return 0, 0.0
    rr_first = 1.0 / (first + 1.0) if first < kk else 0.0

    count = 0
    total = 0.0
    cost = 0.0
    # the published LambdaLoss@K forms every pair (its @K multiplier weights pairs below k); every
    # other weight is 0 for a pair entirely below k, so those loops stop at the cut-off
    a_end = n if (metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP) else kk
    for a in range(a_end):
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
                    dz = ndcg_delta(ra, rb, a, b, kk, disc, inv)
                elif metric == ERR:
                    dz = err_delta(ra, rb, a, b, kk, pref[a], q_prod, s_sum)
                elif metric == MAP:
                    dz = ap_delta(ra, rb, a, b, kk, pref, acc, n_rel)
                elif metric == MRR:
                    dz = rr_delta(ra, rb, a, b, kk, first, second, rr_first)
                elif metric == NDCG_LOSS2 or metric == NDCG_LOSS2_TOP:
                    dz = ndcg_loss2_weight(ra, rb, a, b, acc, pref, inv)
                elif metric == NDCG_LOSS2PP or metric == NDCG_LOSS2PP_TOP:
                    dz = ndcg_loss2pp_weight(ra, rb, a, b, kk, disc, acc, pref, inv, mu)
                elif metric == LABEL_DIFF:
                    dz = abs(la - lb)
                elif metric == GAIN_DIFF:
                    dz = abs(ra - rb)
                else:  # RankNet
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
                q_prod, s_sum = err_advance(rb, b, kk, q_prod, s_sum)
        gr[a] += ga
        hr[a] += ha

    scale = _scatter(gr, hr, order, weight, normalize, total, g, h)
    if store:
        for c in range(count):
            ph[c] *= scale
    return count, cost * weight


@njit(cache=True)
def _pool(labels, lab):
    """``(lo, hi)``: the block of label ``lab`` in the sorted ``labels`` (the rest is the partner pool)."""
    return np.searchsorted(labels, lab, side="left"), np.searchsorted(labels, lab, side="right")


@njit(cache=True)
def query_lambdas_sampled(s, lab, val, metric, k, sigma, disc, weight, normalize, g, h,
                          store, pi, pj, ph, row0, want_cost, mu, m, key):
    """:func:`query_lambdas` with ``m`` sampled partners per document (module docstring), the draws
    of stream ``key``: draw ``j`` of the document in row ``d`` of the query is number ``d·m + j``.

    Each sampled pair gets the exact ``|ΔZ|`` of the same closed forms (ERR's from prefix and suffix
    tables, :func:`~.err.err_delta_any`). Returns ``(pairs stored, cost)``, the cost estimated alike.
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    if n <= 1:
        return 0, 0.0
    kk = cutoff(n, k)
    order = stable_order_desc(s)
    work = np.empty(9 * n + 2)
    sr = work[0:n]
    lr = work[n:2 * n]
    vr = work[2 * n:3 * n]
    gr = work[3 * n:4 * n]
    hr = work[4 * n:5 * n]
    er = work[5 * n:6 * n]
    acc = work[6 * n:7 * n]
    pref = work[7 * n:8 * n + 1]
    suf = work[8 * n + 1:9 * n + 2]
    for r in range(n):
        d = order[r]
        sr[r] = s[d]
        lr[r] = lab[d]
        vr[r] = val[d]
        gr[r] = 0.0
        hr[r] = 0.0
        er[r] = math.exp(sigma * (s[d] - s[order[0]]))

    inv = 0.0
    n_rel = 0.0
    first = n
    second = n
    if metric == NDCG or metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP or metric == NDCG_LOSS2_TOP \
            or metric == NDCG_LOSS2PP_TOP:
        inv = ndcg_inverse_ideal(val, k, disc)
        if inv == 0.0:
            return 0, 0.0
        if metric != NDCG:
            gap_deltas(disc, kk, acc, pref)
    elif metric == ERR:
        if not err_prefix(vr, pref):
            return 0, 0.0
        err_suffix(vr, pref, kk, suf)
    elif metric == MAP or metric == MRR:
        n_rel, first, second = relevance_prefix(vr, kk, pref, acc)
        if n_rel == 0.0:
            return 0, 0.0
    rr_first = 1.0 / (first + 1.0) if first < kk else 0.0

    # partner pools: positions sorted by label (ties by position), all n or only the top kk
    # (below the cut-off of a top-k objective every pair without a top-k member weighs 0)
    top_only = kk < n and not (metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP)
    by_all = np.argsort(lr, kind="mergesort")
    lab_all = lr[by_all]
    by_top = np.argsort(lr[:kk], kind="mergesort") if top_only else by_all[:0]
    lab_top = lr[:kk][by_top]

    count = 0
    total = 0.0
    cost = 0.0
    mm = np.uint64(m)
    for r in range(n):
        if top_only and r >= kk:
            pool = by_top
            lo, hi = _pool(lab_top, lr[r])
        else:
            pool = by_all
            lo, hi = _pool(lab_all, lr[r])
        size = pool.shape[0] - (hi - lo)
        if size == 0:
            continue
        whole = size <= m
        draws = size if whole else m
        share = 0.5 if whole else size / (2.0 * m)
        base = np.uint64(order[r]) * mm
        for j in range(draws):
            # u·size < size in exact arithmetic; the product can round up to size (a tie), hence the min
            idx = j if whole else min(int(uniform53(key, base + np.uint64(j)) * size), size - 1)
            p = pool[idx if idx < lo else idx + (hi - lo)]
            a = min(r, p)
            b = max(r, p)
            la = lr[a]
            lb = lr[b]
            ra = vr[a]
            rb = vr[b]
            if metric == NDCG:
                dz = ndcg_delta(ra, rb, a, b, kk, disc, inv)
            elif metric == ERR:
                dz = err_delta_any(vr, a, b, kk, pref, suf)
            elif metric == MAP:
                dz = ap_delta(ra, rb, a, b, kk, pref, acc, n_rel)
            elif metric == MRR:
                dz = rr_delta(ra, rb, a, b, kk, first, second, rr_first)
            elif metric == NDCG_LOSS2 or metric == NDCG_LOSS2_TOP:
                dz = ndcg_loss2_weight(ra, rb, a, b, acc, pref, inv)
            elif metric == NDCG_LOSS2PP or metric == NDCG_LOSS2PP_TOP:
                dz = ndcg_loss2pp_weight(ra, rb, a, b, kk, disc, acc, pref, inv, mu)
            elif metric == LABEL_DIFF:
                dz = abs(la - lb)
            elif metric == GAIN_DIFF:
                dz = abs(ra - rb)
            else:  # RankNet
                dz = 1.0
            if dz == 0.0:
                continue
            dz *= share
            a_hi = la > lb
            ea = er[a]
            eb = er[b]
            if ea > _TINY and eb > _TINY:
                rho = (eb if a_hi else ea) / (ea + eb)
            else:
                x = sigma * (sr[a] - sr[b])
                rho = _rho(x if a_hi else -x)
            lam = sigma * dz * rho
            hh = sigma * sigma * dz * rho * (1.0 - rho)
            signed = -lam if a_hi else lam
            gr[a] += signed
            gr[b] -= signed
            hr[a] += hh
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

    scale = _scatter(gr, hr, order, weight, normalize, total, g, h)
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
        kk = cutoff(n, k)
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


def _make_driver(metric):
    """The ``prange`` driver of one metric code.

    ``metric`` is a constant of the closure, so numba compiles (and caches) one pair loop per
    metric with every other metric's branches pruned: adding an objective costs the others nothing.
    """

    @njit(cache=True, parallel=True)
    def driver(scores, labels, values, group_ptr, k, sigma, disc, weights, normalize, grad, hess, store,
               pair_ptr, pi, pj, ph, counts, schedule, n_chunks, want_cost, cost, mu):
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
                                          pi[p0:p1], pj[p0:p1], ph[p0:p1], a, want_cost, mu)
                counts[q] = stored
                cost[q] = v

    return driver


def _make_sampled_driver(metric):
    """The ``prange`` driver of one metric code with sampled pairs (``pair_method="mean"``).

    Query ``q``'s stream is keyed by ``(seed, iteration, content_key(its labels' bits))``: the same
    query draws the same partners wherever it sits in the data, however the data is partitioned or
    scheduled over threads, and whichever worker computes it.
    """

    @njit(cache=True, parallel=True)
    def driver(scores, labels, values, group_ptr, k, sigma, disc, weights, normalize, grad, hess, store,
               pair_ptr, pi, pj, ph, counts, schedule, n_chunks, want_cost, cost, mu, m, label_bits, seed, rnd):
        n_queries = group_ptr.shape[0] - 1
        for c in prange(n_chunks):
            for t in range(c, n_queries, n_chunks):
                q = schedule[t]
                a = group_ptr[q]
                b = group_ptr[q + 1]
                p0 = pair_ptr[q]
                p1 = pair_ptr[q + 1]
                key = query_key(seed, rnd, content_key(label_bits[a:b]))
                stored, v = query_lambdas_sampled(scores[a:b], labels[a:b], values[a:b], metric, k, sigma, disc,
                                                  weights[q], normalize, grad[a:b], hess[a:b], store,
                                                  pi[p0:p1], pj[p0:p1], ph[p0:p1], a, want_cost, mu, m, key)
                counts[q] = stored
                cost[q] = v

    return driver


#: registry code -> its driver. Each query is dealt to one of ``n_chunks`` parallel chunks by
#: ``schedule`` (queries by decreasing cost, round-robin), so uneven list lengths still balance;
#: each query writes only its own rows and pair slots, so the result does not depend on the threads.
DRIVERS = {code: _make_driver(code)
           for code in (NDCG, ERR, MAP, MRR, RANKNET, NDCG_LOSS2, NDCG_LOSS2PP, LABEL_DIFF, GAIN_DIFF,
                        NDCG_LOSS2_TOP, NDCG_LOSS2PP_TOP)}
#: registry code -> its driver with sampled pairs (``pair_method="mean"``), the same schedule
SAMPLED_DRIVERS = {code: _make_sampled_driver(code) for code in DRIVERS}


@njit
def _custom_query(s, lab, val, k, sigma, weight, normalize, g, h, weight_fn):
    """One query with a user's pair weight ``weight_fn(a, b, label_a, label_b, gain_a, gain_b, k)``.

    The same pairs (``a < b``, ``a < k``, labels differ) and the same RankNet force as
    :func:`query_lambdas`; returns the number of non-finite or negative weights met (0 = fine).
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    if n <= 1:
        return 0
    kk = cutoff(n, k)
    order = stable_order_desc(s)
    gr = np.zeros(n)
    hr = np.zeros(n)
    bad = 0
    total = 0.0
    for a in range(kk):
        da = order[a]
        for b in range(a + 1, n):
            db = order[b]
            if lab[da] == lab[db]:
                continue
            w = weight_fn(a, b, lab[da], lab[db], val[da], val[db], kk)
            if not (w >= 0.0 and w < np.inf):
                bad += 1
                continue
            if w == 0.0:
                continue
            a_hi = lab[da] > lab[db]
            x = sigma * (s[da] - s[db])
            rho = _rho(x if a_hi else -x)
            lam = sigma * w * rho
            hh = sigma * sigma * w * rho * (1.0 - rho)
            signed = -lam if a_hi else lam
            gr[a] += signed
            gr[b] -= signed
            hr[a] += hh
            hr[b] += hh
            total += 2.0 * lam
    _scatter(gr, hr, order, weight, normalize, total, g, h)
    return bad


@njit(parallel=True)
def custom_lambda_driver(scores, labels, values, group_ptr, k, sigma, weights, normalize, grad, hess, bad,
                         weight_fn):
    """The driver for a user's njit pair weight. Not cached: numba compiles one specialisation per
    weight function, and a function-typed argument never hits the on-disk cache. ``bad[q]``
    counts query ``q``'s unusable weights."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        bad[q] = _custom_query(scores[a:b], labels[a:b], values[a:b], k, sigma, weights[q], normalize,
                               grad[a:b], hess[a:b], weight_fn)
