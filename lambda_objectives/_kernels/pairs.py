"""The one pair loop of every lambda objective: RankNet forces weighted by a metric's |ΔZ|.

Each query is ranked once (``ranking.stable_order_desc``) and every pair ``(a, b)`` of rank
positions with ``a < b``, ``a < k`` (every ``a`` for the published LambdaLoss@K) and different labels
gets the weight ``|ΔZ|`` of the metric
selected by its registry code (the closed forms live in the metric modules: ``ndcg``, ``err``,
``ap``, ``rr``; the LambdaLoss weights in ``lambdaloss``; RankNet's weight is 1). With ``ρ = 1/(1 + exp(σ(s_hi − s_lo)))`` the pair adds
``∓σ|ΔZ|ρ`` to the gradients and ``σ²|ΔZ|ρ(1 − ρ)`` to both Hessians (Burges, MSR-TR-2010-82,
§4 and §7), so one query costs ``O(n · min(n, k))``.

A long query (more than :data:`SPLIT_PAIRS` pairs visited) has its pair loop cut into blocks of rank
positions ``a`` of about equal pair count, run over the threads, each into sums of its own, added in
block order (:func:`split_begin`): one 20,000-document query uses every thread, and the result is the
same to the bit at any thread count (the cut depends on the query only; it changes the order of the
sums against the unsplit loop, ~1e-15 relative).

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

from .codes import (ERR, GAIN_DIFF, LABEL_DIFF, MAP, MRR, NDCG, NDCG_LOSS2, NDCG_LOSS2_TOP, NDCG_LOSS2PP,
                    NDCG_LOSS2PP_TOP, RANKNET)
from .ap import ap_delta, relevance_prefix
from .err import err_advance, err_delta, err_delta_any, err_prefix, err_suffix
from .lambdaloss import gap_deltas, ndcg_loss2_weight, ndcg_loss2pp_weight
from .position_bias import BIAS_ESTIMATE, BIAS_FACTORS, BIAS_NONE, debias  # noqa: F401 (the codes: lambdas.py)
from .ndcg import ndcg_delta, ndcg_inverse_ideal
from .ranking import _COUNTING_LABELS, cutoff, rank_desc, stable_order_asc, stable_order_desc
from .rr import rr_delta
from .yetirank import content_key, content_key_start, content_key_step, query_key, uniform53

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
def pair_rows(metric, n, k):
    """The rank positions ``a`` whose pairs ``(a, b > a)`` are formed: all ``n`` for the published
    LambdaLoss@K (its @K multiplier weights pairs below k), else the top ``min(n, k)`` (every other
    weight is 0 for a pair entirely below k)."""
    return n if (metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP) else cutoff(n, k)


@njit(cache=True, inline="always")
def _query_tables(s, lab, val, metric, k, sigma, disc):
    """Rank one query (``n >= 2``) and build what its pair loop reads.

    Returns ``(order, work, views, tab)``: ``order`` the stable ranking; ``work`` one float64 array
    whose ``views`` (:func:`_work_views`) are, in rank order, ``sr`` (scores), ``lr`` (labels), ``vr``
    (values), ``gr``/``hr`` (zeroed sums), ``er`` (``exp(σ(s − max s))``), ``acc``/``pref`` (the
    metric's tables); ``tab`` is :func:`_metric_tables`'. Inlined (``inline="always"``, as the other
    helpers of the pair loop): short queries pay no call.
    """
    n = s.shape[0]
    order = stable_order_desc(s)
    # one allocation for every per-query table: short queries are dominated by allocator calls
    work = np.empty(8 * n + 1)
    sr, lr, vr, gr, hr, er, acc, pref = _work_views(work, n)
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
    return order, work, (sr, lr, vr, gr, hr, er, acc, pref), _metric_tables(val, vr, acc, pref, metric, n, k, disc,
                                                                           -1.0)


@njit(cache=True, inline="always")
def _metric_tables(val, vr, acc, pref, metric, n, k, disc, inv_given):
    """The per-query scalars of the metric, ``(kk, a_end, inv, n_rel, first, second, rr_first)``, its
    tables written into ``acc``/``pref`` (``val``: the values in row order, ``vr`` in rank order);
    ``a_end`` is :func:`pair_rows`, or 0 when the ideal value is 0 (every |ΔZ| is 0); ``inv_given >= 0``:
    the NDCG family's ``1/IDCG@k`` computed already (:func:`sampled_constants`, :func:`sampled_tables`)."""
    kk = cutoff(n, k)
    inv = 0.0
    n_rel = 0.0
    first = n
    second = n
    a_end = pair_rows(metric, n, k)
    if metric == NDCG or metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP or metric == NDCG_LOSS2_TOP \
            or metric == NDCG_LOSS2PP_TOP:
        inv = ndcg_inverse_ideal(val, k, disc) if inv_given < 0.0 else inv_given
        if inv == 0.0:
            a_end = 0
        elif metric != NDCG:
            gap_deltas(disc, kk, acc, pref)  # LambdaLoss's δ per rank gap and @K multiplier
    elif metric == ERR:
        if not err_prefix(vr, pref):
            a_end = 0
    elif metric == MAP or metric == MRR:
        n_rel, first, second = relevance_prefix(vr, kk, pref, acc)
        if n_rel == 0.0:
            a_end = 0
    rr_first = 1.0 / (first + 1.0) if first < kk else 0.0
    return kk, a_end, inv, n_rel, first, second, rr_first


@njit(cache=True, inline="always")
def _work_views(work, n):
    """``(sr, lr, vr, gr, hr, er, acc, pref)``: the per-query tables inside :func:`_query_tables`' array."""
    return (work[0:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n], work[4 * n:5 * n], work[5 * n:6 * n],
            work[6 * n:7 * n], work[7 * n:8 * n + 1])


@njit(cache=True, inline="always")
def _pair_block(a_lo, a_hi, metric, sigma, disc, mu, views, tab, gr, hr, want_cost, store, order, row0, pi, pj, ph,
                count, bias, fa, fb, ca, cb):
    """The pair loop over rank positions ``a_lo <= a < a_hi`` (each with every ``b > a``): the one home
    of the pair formulas, for a whole query (:func:`query_lambdas`) and for a block of a long one
    (:func:`split_begin`).

    Adds each pair's force to ``gr``/``hr`` (rank order; only entries ``>= a_lo`` are touched), stores
    its pair in slots ``count, count + 1, ...`` and returns ``(next slot, Σ 2|λ|, Σ cost terms)``. With
    ``bias`` each weight passes through :func:`~.position_bias.debias` first (``fa``/``fb``/``ca``/``cb`` per row of the query).
    ERR's running ``q_prod``/``s_sum`` start afresh at every ``a``, so blocks over ``a`` are independent.
    """
    n = order.shape[0]
    sr, lr, vr, _gr, _hr, er, acc, pref = views
    kk, a_end, inv, n_rel, first, second, rr_first = tab
    total = 0.0
    cost = 0.0
    for a in range(a_lo, a_hi):
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
                if dz != 0.0 and bias != BIAS_NONE:
                    dz = debias(dz, la > lb, order[a], order[b], sigma * (sr[a] - sr[b]), bias, fa, fb, ca, cb)
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
    return count, total, cost


@njit(cache=True, inline="always")
def _finish(gr, hr, order, weight, normalize, total, g, h, store, ph, count, cost):
    """Scatter the rank-order sums to ``g``/``h``, scale the ``count`` stored Hessian terms alike;
    returns ``(count, weighted cost)``."""
    scale = _scatter(gr, hr, order, weight, normalize, total, g, h)
    if store:
        for c in range(count):
            ph[c] *= scale
    return count, cost * weight


@njit(cache=True)
def query_lambdas(s, lab, val, metric, k, sigma, disc, weight, normalize, g, h,
                  store, pi, pj, ph, row0, want_cost, mu, bias, fa, fb, ca, cb):
    """Fill ``g``/``h`` (this query's rows) and, if ``store``, the pair slots.

    Returns ``(pairs stored, cost)``; ``cost`` (only with ``want_cost``) is the query's
    fixed-ranking pairwise cost ``weight · Σ |ΔZ| log(1 + exp(−σ(s_hi − s_lo)))``. ``mu`` is
    NDCG-Loss2++'s weight of the rank-gap term (unused by the other codes). ``bias``, ``fa``, ``fb``,
    ``ca``, ``cb``: the position-bias factors and cost sums of :func:`~.position_bias.debias` (rows of this query).
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    if n <= 1:
        return 0, 0.0
    order, work, views, tab = _query_tables(s, lab, val, metric, k, sigma, disc)
    if tab[1] == 0:
        return 0, 0.0
    gr = views[3]
    hr = views[4]
    count, total, cost = _pair_block(0, tab[1], metric, sigma, disc, mu, views, tab, gr, hr, want_cost, store, order,
                                     row0, pi, pj, ph, 0, bias, fa, fb, ca, cb)
    return _finish(gr, hr, order, weight, normalize, total, g, h, store, ph, count, cost)


#: the most blocks a long query's pair loop is cut into (enough for 32 threads)
MAX_BLOCKS = 32
#: a query is split once its pair loop visits this many pairs (a full list of ~2,000 documents, ~10 ms
#: at one thread): below it, queries in parallel balance the threads and a split only adds overhead
SPLIT_PAIRS = 1 << 21
#: a block visits at least this many pairs per document of its query (its sums cost two arrays of n)
BLOCK_SPAN = 64


@njit(cache=True)
def split_blocks(metric, n, k, split_pairs, block_span):
    """How many blocks the pair loop of a query of ``n`` documents is cut into (1 = not split).

    A function of the query (``n``, ``k``, the metric's :func:`pair_rows`) and of the two constants
    only, never of the threads: ``W = Σ_{a < a_end} (n − 1 − a)`` pairs are visited; below
    ``split_pairs`` the query is not split, else it gets ``W // (block_span · n)`` blocks, at least 2,
    at most :data:`MAX_BLOCKS` and ``a_end``.
    """
    a_end = pair_rows(metric, n, k)
    work = a_end * (n - 1) - a_end * (a_end - 1) // 2
    if work < split_pairs:
        return 1
    return min(a_end, MAX_BLOCKS, max(2, work // (block_span * n)))


@njit(cache=True)
def block_bounds(n, a_end, n_blocks):
    """``bounds`` (``n_blocks + 1`` rank positions): block ``j`` is rows ``bounds[j] <= a < bounds[j+1]``,
    cut so each block visits about ``1/n_blocks`` of the pairs (row ``a`` has ``n − 1 − a``)."""
    bounds = np.empty(n_blocks + 1, dtype=np.int64)
    total = a_end * (n - 1) - a_end * (a_end - 1) // 2
    bounds[0] = 0
    j = 1
    done = 0
    for a in range(a_end):
        while j < n_blocks and done * n_blocks >= j * total:
            bounds[j] = a
            j += 1
        done += n - 1 - a
    while j <= n_blocks:
        bounds[j] = a_end
        j += 1
    return bounds


@njit(cache=True)
def block_slots(lr, bounds):
    """The first pair slot of each block (``n_blocks + 1`` entries): block ``j`` may store at most its
    pairs with different labels, ``Σ_{bounds[j] <= a < bounds[j+1]}`` (documents below ``a`` with
    another label), so blocks write apart and are then packed in block order: today's slot order."""
    n = lr.shape[0]
    by = stable_order_asc(lr)  # stable: a label's positions ascending
    unequal = np.empty(n, dtype=np.int64)
    i = 0
    while i < n:
        e = i
        while e < n and lr[by[e]] == lr[by[i]]:
            e += 1
        for t in range(i, e):
            unequal[by[t]] = (n - 1 - by[t]) - (e - 1 - t)
        i = e
    n_blocks = bounds.shape[0] - 1
    slots = np.zeros(n_blocks + 1, dtype=np.int64)
    for j in range(n_blocks):
        c = 0
        for a in range(bounds[j], bounds[j + 1]):
            c += unequal[a]
        slots[j + 1] = slots[j] + c
    return slots


@njit(cache=True)
def split_begin(s, lab, val, metric, k, sigma, disc, g, h, store, n_blocks):
    """A long query split into ``n_blocks`` blocks of its pair loop: the serial part before the blocks.

    The rows ``a`` of the pair loop are cut into blocks of about equal pair count
    (:func:`block_bounds`, a function of the query only); each block then runs :func:`_pair_block`
    (in the driver's ``prange``) into sums of its own: gradient and Hessian rows ``bg[j]``/``bh[j]``
    (only entries ``>= bounds[j]``, zeroed by the block), Σ|λ|, cost and pair slots from ``slots[j]``.
    :func:`split_end` adds the blocks in block order, so the result is the same to the bit at any number
    of threads; it differs from the unsplit :func:`query_lambdas` only by the order of the sums (about
    1e-15 relative). Returns ``(order, work, views, tab, bounds, slots, bg, bh)``.
    """
    n = s.shape[0]
    for r in range(n):
        g[r] = 0.0
        h[r] = 0.0
    order, work, views, tab = _query_tables(s, lab, val, metric, k, sigma, disc)
    bounds = block_bounds(n, tab[1], n_blocks)  # a_end = 0 (every |ΔZ| is 0): every block empty
    slots = block_slots(work[n:2 * n], bounds) if store else np.zeros(n_blocks + 1, dtype=np.int64)
    return order, work, views, tab, bounds, slots, np.empty((n_blocks, n)), np.empty((n_blocks, n))


@njit(cache=True)
def split_end(order, work, bounds, slots, bg, bh, ends, totals, costs, weight, normalize, g, h, store, pi, pj, ph):
    """After the blocks of :func:`split_begin`: every sum in block order, the pair slots packed
    (block ``j`` filled ``slots[j]:ends[j]``), then :func:`_finish`; returns ``(pairs stored, cost)``."""
    n = order.shape[0]
    n_blocks = bounds.shape[0] - 1
    total = 0.0
    cost = 0.0
    count = 0
    for j in range(n_blocks):
        total += totals[j]
        cost += costs[j]
        if store:
            for c in range(slots[j], ends[j]):  # count + (c - slots[j]) <= c: a forward copy
                pi[count + c - slots[j]] = pi[c]
                pj[count + c - slots[j]] = pj[c]
                ph[count + c - slots[j]] = ph[c]
        count += ends[j] - slots[j]
    gr = work[3 * n:4 * n]
    hr = work[4 * n:5 * n]
    for r in range(n):
        sg = 0.0
        sh = 0.0
        for j in range(n_blocks):
            if bounds[j] > r:  # block j (and every later one) never touched r
                break
            sg += bg[j, r]
            sh += bh[j, r]
        gr[r] = sg
        hr[r] = sh
    return _finish(gr, hr, order, weight, normalize, total, g, h, store, ph, count, cost)


@njit(cache=True)
def _pool(labels, lab):
    """``(lo, hi)``: the block of label ``lab`` in the sorted ``labels`` (the rest is the partner pool)."""
    return np.searchsorted(labels, lab, side="left"), np.searchsorted(labels, lab, side="right")


@njit(cache=True, inline="always")
def sampled_workspace_size(n):
    """``(floats, ints)``: the lengths of :func:`sampled_tables`' workspaces for a query of ``n`` documents."""
    return 9 * n + 2, 4 * n + 1 + 2 * (_COUNTING_LABELS + 2)


@njit(cache=True, inline="always")
def _sampled_views(fws, iws, n):
    """The views of :func:`sampled_tables`' workspaces: the eight of :func:`_work_views`, ERR's suffix
    table ``suf``, ``order``, the pools' ``by_all``, ``blk`` (each position's label block, for labels
    that are not graded), ``lstart`` (graded labels: label ``c``'s block is ``lstart[c]:lstart[c + 1]``)."""
    nl = _COUNTING_LABELS + 2
    return (_work_views(fws, n), fws[8 * n + 1:9 * n + 2], iws[0:n], iws[n:2 * n], iws[2 * n:4 * n],
            iws[4 * n + 1:4 * n + 1 + nl])


@njit(cache=True, inline="always")
def _count_whole(x, counts):
    """``counts[c]`` = how many of ``x`` equal ``c`` when every value is a whole number in ``[0, 256)``
    (only ``counts[:top + 1]`` written); returns ``top``, the largest, or -1 when some value is not such
    a number (``counts`` then undefined)."""
    top = -1
    for i in range(x.shape[0]):
        v = x[i]
        if not (v >= 0.0 and v < _COUNTING_LABELS and v == math.floor(v)):
            return -1
        top = max(top, int(v))
    for c in range(top + 1):
        counts[c] = 0
    for i in range(x.shape[0]):
        counts[int(x[i])] += 1
    return top


@njit(cache=True)
def sampled_tables(s, lab, val, bits, sigma, k, disc, want_ideal, fws, iws):
    """What a sampled query (``n >= 2``) needs before its draws that does not depend on the metric, in
    the caller's workspaces (:func:`sampled_workspace_size`, views :func:`_sampled_views`): compiled
    once, not once a metric code, and no allocation for finite scores and graded labels.

    The ranking with the scores in rank order (:func:`~.ranking.rank_desc`); the labels counted (and,
    ``want_ideal``, the values) in row order; then in one pass over the ranks the labels' and values'
    copies, ``exp(σ(s − max s))``, the zeroed sums and the partner pools: ``by_all`` the positions by
    label, ties by position (``stable_order_asc``'s permutation), label ``c``'s block
    ``lstart[c]:lstart[c + 1]``. Returns ``(graded, ideal)``: ``graded`` whether every label is a whole
    number in ``[0, 256)`` (else ``blk`` holds each position's block and the pools were sorted),
    ``ideal`` IDCG@k from the values' counts (the sum of :func:`~.ranking.ideal_dcg`'s counting path
    in its order: the same bits), or -1 when not asked or the values are not whole numbers below 256,
    and ``key`` the labels' :func:`~.yetirank.content_key` of ``bits`` (their bit patterns) when ``bits``
    is not empty, folded into the labels' row-order pass (the chain is bound by its latency: beside the
    counting it costs little more than alone), else 0.
    """
    n = s.shape[0]
    (sr, lr, vr, gr, hr, er, acc, pref), suf, order, by_all, blk, lstart = _sampled_views(fws, iws, n)
    nl = _COUNTING_LABELS + 2
    cursor = iws[4 * n + 1 + nl:4 * n + 1 + 2 * nl]
    ideal = -1.0
    if want_ideal:
        top = _count_whole(val, cursor)
        if top >= 0:
            # the values descending, each whole value c repeated cursor[c] times: ideal_dcg's sum in its order
            kk = cutoff(n, k)
            ideal = 0.0
            c = top
            for r in range(kk):
                while cursor[c] == 0:
                    c -= 1
                ideal += float(c) * disc[r]
                cursor[c] -= 1
    counts = lstart[1:]
    key = content_key_start(n)
    hashing = bits.shape[0] > 0
    top = -1
    for i in range(n):
        if hashing:
            key = content_key_step(key, bits[i])
        x = lab[i]
        if top >= -1:
            if x >= 0.0 and x < _COUNTING_LABELS and x == math.floor(x):
                top = max(top, int(x))
            else:
                top = -2  # not graded
    graded = top >= 0
    if graded:
        for c in range(top + 1):
            counts[c] = 0
        for i in range(n):
            counts[int(lab[i])] += 1
    if graded:
        lstart[0] = 0
        for c in range(top + 1):
            lstart[c + 1] += lstart[c]
            cursor[c] = lstart[c]  # where label c's next position goes in by_all
    rank_desc(s, order, sr, iws[2 * n:4 * n + 1])
    first = sr[0]
    for r in range(n):
        d = order[r]
        x = lab[d]
        lr[r] = x
        vr[r] = val[d]
        gr[r] = 0.0
        hr[r] = 0.0
        # rho = 1/(1+exp(sigma(s_hi - s_lo))) = e_lo/(e_lo + e_hi) with e = exp(sigma(s - max s)):
        # one exp per document instead of one per pair (as _query_tables)
        er[r] = math.exp(sigma * (sr[r] - first))
        if graded:  # positions come in rank order: each label's block fills in rank order
            c = int(x)
            by_all[cursor[c]] = r
            cursor[c] += 1
    key = key if hashing else np.uint64(0)
    if graded:
        return True, ideal, key
    by = stable_order_asc(lr)
    # each position's label block in the sorted labels, in one pass (a binary search per document
    # cost more than the pair it draws)
    i0 = 0
    while i0 < n:
        i1 = i0 + 1
        while i1 < n and lr[by[i1]] == lr[by[i0]]:
            i1 += 1
        for i in range(i0, i1):
            by_all[i] = by[i]
            blk[2 * by[i]] = i0
            blk[2 * by[i] + 1] = i1
        i0 = i1
    return False, ideal, key


@njit(cache=True)
def query_lambdas_sampled(s, lab, val, metric, k, sigma, disc, weight, normalize, g, h,
                          store, pi, pj, ph, row0, want_cost, mu, m, seed, rnd, key, bits, inv_given, bias, fa, fb, ca,
                          cb, fws, iws):
    """:func:`query_lambdas` with ``m`` sampled partners per document (module docstring), the draws
    of stream ``key`` (or, when ``bits`` is not empty, of ``query_key(seed, rnd, content_key(bits))``, the
    labels' bit patterns hashed in :func:`sampled_tables`): draw ``j`` of the document in row ``d`` of the
    query is number ``d·m + j``;
    ``inv_given`` the NDCG family's ``1/IDCG@k`` when known (:func:`sampled_constants`), else -1;
    ``fws``/``iws`` the workspaces of :func:`sampled_tables` (at least :func:`sampled_workspace_size`).

    Each sampled pair gets the exact ``|ΔZ|`` of the same closed forms (ERR's from prefix and suffix
    tables, :func:`~.err.err_delta_any`). Returns ``(pairs stored, cost)``, the cost estimated alike.
    """
    n = s.shape[0]
    if n <= 1:
        for r in range(n):
            g[r] = 0.0
            h[r] = 0.0
        return 0, 0.0
    ndcg_family = metric == NDCG or metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP or metric == NDCG_LOSS2_TOP \
        or metric == NDCG_LOSS2PP_TOP
    graded, ideal, ck = sampled_tables(s, lab, val, bits, sigma, k, disc, ndcg_family and inv_given < 0.0, fws, iws)
    if bits.shape[0] > 0:
        key = query_key(seed, rnd, ck)
    (sr, lr, vr, gr, hr, er, acc, pref), suf, order, by_all, blk, lstart = _sampled_views(fws, iws, n)
    if ideal >= 0.0:  # ndcg_inverse_ideal from sampled_tables' IDCG
        inv_given = 0.0 if ideal == 0.0 else 1.0 / ideal
    kk, a_end, inv, n_rel, first, second, rr_first = _metric_tables(val, vr, acc, pref, metric, n, k, disc, inv_given)
    if a_end == 0:  # the ideal value is 0: every |ΔZ| is 0
        for r in range(n):
            g[r] = 0.0
            h[r] = 0.0
        return 0, 0.0
    if metric == ERR:  # a sampled pair may lie anywhere: ERR's suffix table too
        err_suffix(vr, pref, kk, suf)

    # partner pools: positions sorted by label (ties by position), all n or only the top kk
    # (below the cut-off of a top-k objective every pair without a top-k member weighs 0)
    top_only = kk < n and not (metric == NDCG_LOSS2 or metric == NDCG_LOSS2PP)
    by_top = stable_order_asc(lr[:kk]) if top_only else by_all[:0]
    lab_top = lr[:kk][by_top]

    count = 0
    total = 0.0
    cost = 0.0
    mm = np.uint64(m)
    for r in range(n):
        # which pool is a flag, not an array variable: rebinding an array in the loop costs a reference
        # count increment and decrement per document (the pass took 1/0.93 the time at 5,000 documents)
        below = top_only and r >= kk
        if below:
            lo, hi = _pool(lab_top, lr[r])
        elif graded:
            c = int(lr[r])
            lo = lstart[c]
            hi = lstart[c + 1]
        else:
            lo = blk[2 * r]
            hi = blk[2 * r + 1]
        size = (kk if below else n) - (hi - lo)
        if size == 0:
            continue
        whole = size <= m
        draws = size if whole else m
        share = 0.5 if whole else size / (2.0 * m)
        base = np.uint64(order[r]) * mm
        for j in range(draws):
            # u·size < size in exact arithmetic; the product can round up to size (a tie), hence the min
            idx = j if whole else min(int(uniform53(key, base + np.uint64(j)) * size), size - 1)
            at = idx if idx < lo else idx + (hi - lo)
            p = by_top[at] if below else by_all[at]
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
            if bias != BIAS_NONE:
                dz = debias(dz, a_hi, order[a], order[b], sigma * (sr[a] - sr[b]), bias, fa, fb, ca, cb)
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

    return _finish(gr, hr, order, weight, normalize, total, g, h, store, ph, count, cost)


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
    Queries below ``split_pairs`` pairs (:func:`split_blocks`) run whole, in parallel chunks; longer
    ones then run one after another, each with the blocks of its pair loop over the threads
    (:func:`split_begin`). Which queries are split, and how, depends on the queries only.
    """

    @njit(cache=True, parallel=True)
    def driver(scores, labels, values, group_ptr, k, sigma, disc, weights, normalize, grad, hess, store,
               pair_ptr, pi, pj, ph, counts, schedule, n_chunks, want_cost, cost, mu, split_pairs, block_span,
               bias, fa, fb, ca, cb):
        n_queries = group_ptr.shape[0] - 1
        for c in prange(n_chunks):
            for t in range(c, n_queries, n_chunks):
                q = schedule[t]
                a = group_ptr[q]
                b = group_ptr[q + 1]
                if split_blocks(metric, b - a, k, split_pairs, block_span) > 1:
                    continue
                p0 = pair_ptr[q]
                p1 = pair_ptr[q + 1]
                stored, v = query_lambdas(scores[a:b], labels[a:b], values[a:b], metric, k, sigma, disc,
                                          weights[q], normalize, grad[a:b], hess[a:b], store,
                                          pi[p0:p1], pj[p0:p1], ph[p0:p1], a, want_cost, mu, bias, fa[a:b],
                                          fb[a:b], ca[a:b], cb[a:b])
                counts[q] = stored
                cost[q] = v
        for q in range(n_queries):
            a = group_ptr[q]
            b = group_ptr[q + 1]
            n_blocks = split_blocks(metric, b - a, k, split_pairs, block_span)
            if n_blocks <= 1:
                continue
            p0 = pair_ptr[q]
            p1 = pair_ptr[q + 1]
            order, work, views, tab, bounds, slots, bg, bh = split_begin(scores[a:b], labels[a:b], values[a:b], metric, k,
                                                                  sigma, disc, grad[a:b], hess[a:b], store, n_blocks)
            ends = np.empty(n_blocks, dtype=np.int64)
            totals = np.empty(n_blocks)
            costs = np.empty(n_blocks)
            for j in prange(n_blocks):
                lo = bounds[j]
                for r in range(lo, b - a):
                    bg[j, r] = 0.0
                    bh[j, r] = 0.0
                # a split query's blocks read fa/fb only: the caller does not split with BIAS_ESTIMATE
                e, tj, cj = _pair_block(lo, bounds[j + 1], metric, sigma, disc, mu, views, tab, bg[j], bh[j],
                                        want_cost, store, order, a, pi[p0:p1], pj[p0:p1], ph[p0:p1], slots[j],
                                        bias, fa[a:b], fb[a:b], ca[a:b], cb[a:b])
                ends[j] = e
                totals[j] = tj
                costs[j] = cj
            stored, v = split_end(order, work, bounds, slots, bg, bh, ends, totals, costs, weights[q], normalize,
                                  grad[a:b], hess[a:b], store, pi[p0:p1], pj[p0:p1], ph[p0:p1])
            counts[q] = stored
            cost[q] = v

    return driver


def _make_sampled_driver(metric):
    """The ``prange`` driver of one metric code with sampled pairs (``pair_method="mean"``).

    Query ``q``'s stream is keyed by ``(seed, iteration, content_key(its labels' bits))``: the same
    query draws the same partners wherever it sits in the data, however the data is partitioned or
    scheduled over threads, and whichever worker computes it. ``keys``/``invs``: each query's content
    key and ``1/IDCG@k`` when computed once for the data set (:func:`sampled_constants`, the adapters),
    else empty (computed here).
    """

    @njit(cache=True, parallel=True)
    def driver(scores, labels, values, group_ptr, k, sigma, disc, weights, normalize, grad, hess, store,
               pair_ptr, pi, pj, ph, counts, schedule, n_chunks, want_cost, cost, mu, m, label_bits, seed, rnd,
               keys, invs, bias, fa, fb, ca, cb):
        n_queries = group_ptr.shape[0] - 1
        for c in prange(n_chunks):
            # one workspace a chunk, of its longest query: no allocation a query
            longest = 0
            for t in range(c, n_queries, n_chunks):
                longest = max(longest, group_ptr[schedule[t] + 1] - group_ptr[schedule[t]])
            nf, ni = sampled_workspace_size(longest)
            fws = np.empty(nf)
            iws = np.empty(ni, dtype=np.int64)
            for t in range(c, n_queries, n_chunks):
                q = schedule[t]
                a = group_ptr[q]
                b = group_ptr[q + 1]
                p0 = pair_ptr[q]
                p1 = pair_ptr[q + 1]
                # without the data set's keys each query hashes its labels inside the kernel
                given = keys.shape[0] > 0
                ck = keys[q] if given else np.uint64(0)
                inv = invs[q] if invs.shape[0] > 0 else -1.0
                hashed = label_bits[a:a] if given else label_bits[a:b]
                stored, v = query_lambdas_sampled(scores[a:b], labels[a:b], values[a:b], metric, k, sigma, disc,
                                                  weights[q], normalize, grad[a:b], hess[a:b], store,
                                                  pi[p0:p1], pj[p0:p1], ph[p0:p1], a, want_cost, mu, m, seed, rnd,
                                                  query_key(seed, rnd, ck), hashed, inv,
                                                  bias, fa[a:b], fb[a:b], ca[a:b], cb[a:b], fws, iws)
                counts[q] = stored
                cost[q] = v

    return driver


@njit(cache=True)
def sampled_constants(values, label_bits, group_ptr, k, disc, ndcg_family):
    """What the sampled drivers compute per query that depends on the data set only, once for a data
    set (the adapters call the driver every boosting round): ``(keys, invs)``, each query's
    :func:`content_key` and, for the NDCG family (``ndcg_family``), its ``1/IDCG@k``
    (:func:`ndcg_inverse_ideal`, the same call as the pair loop's: the same bits); -1 otherwise."""
    n_queries = group_ptr.shape[0] - 1
    keys = np.empty(n_queries, dtype=np.uint64)
    invs = np.full(n_queries, -1.0)
    for q in range(n_queries):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        keys[q] = content_key(label_bits[a:b])
        if ndcg_family and b - a > 1:
            invs[q] = ndcg_inverse_ideal(values[a:b], k, disc)
    return keys, invs


#: registry code -> its driver. Each query is dealt to one of ``n_chunks`` parallel chunks by
#: ``schedule`` (queries by decreasing cost, round-robin), so uneven list lengths still balance;
#: each query writes only its own rows and pair slots, and a long query's blocks are added in block
#: order, so the result does not depend on the threads.
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
