"""LightGBM 4.x ``objective="lambdarank"`` reproduced bit for bit (``src/objective/rank_objective.hpp``,
``LambdarankNDCG::GetGradientsForOneQuery``).

Where this differs from the exact ΔNDCG of ``ndcg.py``, it is because the engine does, and each
difference is needed for bit-exactness: the 2**20-bin sigmoid table over ``[-25/sigma, 25/sigma]``
read at the bin's left edge (instead of ``exp``), the ``0.01f`` score normaliser, float32
per-document accumulation in the engine's pair order, a float64 ``sum_lambdas``, ``maxDCG@min(k, n)``
from the ``label_gain`` table in the engine's counting order, the *untruncated* discount of
``ranking.discount_table`` (LightGBM truncates which pairs are formed, not the metric), pairs whose
higher-ranked document is in the top ``k``, documents scored ``-inf`` skipped, per-document weights
applied in float32 last. Ties keep input order (stable sort), as the engine does.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def lgb_sigmoid_table(sigma):
    """LightGBM's sigmoid lookup table: ``(table, min_input, max_input, idx_factor)``.

    ``table[i] = 1/(1 + exp(sigma * (i/factor + min_input)))`` with ``min_input = -50/sigma/2``;
    built with libm ``exp`` in float64 exactly as the engine does.
    """
    bins = 1024 * 1024
    min_in = -50.0 / sigma / 2.0
    max_in = -min_in
    factor = bins / (max_in - min_in)
    table = np.empty(bins, dtype=np.float64)
    for i in range(bins):
        score = i / factor + min_in
        table[i] = 1.0 / (1.0 + np.exp(score * sigma))
    return table, min_in, max_in, factor


@njit(cache=True)
def lgb_inverse_max_dcg(labels, group_ptr, label_gain, k, discount, out):
    """``1/maxDCG@min(k, n)`` per query (0 when the ideal DCG is 0), in LightGBM's counting form.

    Deliberately not ``ranking.ideal_dcg``: LightGBM (``DCGCalculator::CalMaxDCGAtK``) walks a
    per-grade count table from the top grade and reads gains from ``label_gain``; the same sum in
    the same order is what makes the preset bit-exact.
    """
    n_q = group_ptr.shape[0] - 1
    n_grades = label_gain.shape[0]
    cnt = np.zeros(n_grades, dtype=np.int64)
    for q in range(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        cnt[:] = 0
        for i in range(a, b):
            cnt[int(labels[i])] += 1
        top = n_grades - 1
        kk = min(k, b - a)
        ret = 0.0
        for j in range(kk):
            while top > 0 and cnt[top] <= 0:
                top -= 1
            ret += discount[j] * label_gain[top]
            cnt[top] -= 1
        out[q] = 1.0 / ret if ret > 0.0 else 0.0


@njit(cache=True)
def _lgb_query(s, y, label_gain, discount, inv_max_dcg, k, sigma, norm, table, tmin, tmax, factor, lam, hes):
    n = s.shape[0]
    for i in range(n):
        lam[i] = np.float32(0.0)
        hes[i] = np.float32(0.0)
    if n < 2:
        return
    order = np.argsort(-s, kind="mergesort")
    # the pair loop reads scores and gains and accumulates by *position*, in contiguous arrays: the
    # same additions in the same order per document as the engine's indexed loop (bit-identical),
    # without a gather through ``order`` per pair
    ss = s[order]
    ys = y[order]
    gs = label_gain[ys.astype(np.int64)]
    lp = np.zeros(n, dtype=np.float32)
    hp = np.zeros(n, dtype=np.float32)
    best = ss[0]
    worst_idx = n - 1
    if worst_idx > 0 and ss[worst_idx] == -np.inf:
        worst_idx -= 1
    worst = ss[worst_idx]
    scale = norm and best != worst
    eps = np.float64(np.float32(0.01))  # LightGBM's 0.01f, promoted to double where it is added
    last = table.shape[0] - 1
    ss2 = sigma * sigma
    sum_lambdas = 0.0
    top = min(n - 1, k)
    for i in range(top):
        si = ss[i]
        if si == -np.inf:
            continue
        yi = ys[i]
        gi = gs[i]
        di = discount[i]
        for j in range(i + 1, n):
            sj = ss[j]
            if sj == -np.inf:
                continue
            yj = ys[j]
            if yi == yj:
                continue
            dj = discount[j]
            if yi > yj:
                h = i
                lo = j
                ds = si - sj
                gap = gi - gs[j]
            else:
                h = j
                lo = i
                ds = sj - si
                gap = gs[j] - gi
            delta = gap * abs(di - dj) * inv_max_dcg
            if scale:
                delta /= (eps + abs(ds))
            if ds <= tmin:
                rho = table[0]
            elif ds >= tmax:
                rho = table[last]
            else:
                rho = table[np.intp((ds - tmin) * factor)]
            p_l = rho * (-sigma * delta)
            p_h = (rho * (1.0 - rho)) * (ss2 * delta)
            fl = np.float32(p_l)
            fh = np.float32(p_h)
            lp[lo] = lp[lo] - fl
            hp[lo] = hp[lo] + fh
            lp[h] = lp[h] + fl
            hp[h] = hp[h] + fh
            sum_lambdas -= 2.0 * p_l
    f = 1.0
    if norm and sum_lambdas > 0.0:
        f = np.log2(1.0 + sum_lambdas) / sum_lambdas
        for r in range(n):
            lam[order[r]] = np.float32(lp[r] * f)
            hes[order[r]] = np.float32(hp[r] * f)
    else:
        for r in range(n):
            lam[order[r]] = lp[r]
            hes[order[r]] = hp[r]


@njit(cache=True, parallel=True)
def lgb_lambdarank(scores, labels, group_ptr, label_gain, discount, inv_max_dcg, k, sigma, norm,
                   table, tmin, tmax, factor, weights, use_weights, grad, hess):
    """LightGBM ``lambdarank`` gradients into float32 ``grad``/``hess`` (one ``prange`` task per query).

    ``discount[r] = 1/log2(2 + r)`` for every position of the longest query (the engine's table).
    """
    n_q = group_ptr.shape[0] - 1
    for q in prange(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        _lgb_query(scores[a:b], labels[a:b], label_gain, discount, inv_max_dcg[q], k, sigma, norm,
                   table, tmin, tmax, factor, grad[a:b], hess[a:b])
        if use_weights:
            for i in range(a, b):
                grad[i] = grad[i] * weights[i]
                hess[i] = hess[i] * weights[i]
