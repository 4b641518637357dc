"""Numba kernels that reproduce the engines' built-in ranking objectives ("native-parity presets").

Two families, each a per-query kernel plus a ``prange`` driver writing into caller buffers:

* ``lgb_lambdarank``: LightGBM 4.x ``objective="lambdarank"`` (``src/objective/rank_objective.hpp``,
  ``LambdarankNDCG::GetGradientsForOneQuery``), reproduced bit for bit: the 2**20-bin sigmoid
  table over ``[-25/sigma, 25/sigma]`` read at the bin's left edge, the ``0.01f`` score
  normaliser, float32 per-document accumulation in the engine's pair order, a float64
  ``sum_lambdas``, ``maxDCG@min(k, n)`` from the ``label_gain`` table, the untruncated discount
  ``1/log2(2 + r)``, pairs whose higher-ranked document is in the top ``k`` (truncation level),
  documents scored ``-inf`` skipped, per-document weights applied in float32 last.
* ``xgb_lambdarank``: XGBoost 3.x ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` with the
  ``topk`` pair method (``src/objective/lambdarank_obj.{h,cc}``): float32 predictions, the float32
  sigmoid ``1/(exp(min(-x, 88.7)) + 1 + 1e-16)``, ``h = 2 max(rho(1-rho), 1e-16) delta``,
  optional score normalisation ``delta/(|ds| + 0.01)`` and per-query ``log2(1+S)/S``
  normalisation, gradient pairs accumulated in float32, then ``* w_q * n_groups/sum(w)``.

Ties in the current scores keep input order (stable sort), as both engines do on CPU.
"""

import numpy as np
from numba import njit, prange

LGB_SIGMOID_BINS = 1024 * 1024
#: ``0.01f`` as LightGBM adds it to ``|ds|`` (a float literal promoted to double).
LGB_SCORE_EPS = float(np.float32(0.01))
METRIC_CODES = {"ndcg": 0, "map": 1, "pairwise": 2}


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
def lgb_inverse_max_dcg(labels, group_ptr, label_gain, k, out):
    """``1/maxDCG@min(k, n)`` per query (0 when the ideal DCG is 0), LightGBM's counting form."""
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
            ret += (1.0 / np.log2(2.0 + j)) * label_gain[top]
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
    best = s[order[0]]
    worst_idx = n - 1
    if worst_idx > 0 and s[order[worst_idx]] == -np.inf:
        worst_idx -= 1
    worst = s[order[worst_idx]]
    eps = np.float32(0.01)
    sum_lambdas = 0.0
    top = min(n - 1, k)
    for i in range(top):
        oi = order[i]
        if s[oi] == -np.inf:
            continue
        yi = y[oi]
        di = discount[i]
        for j in range(i + 1, n):
            oj = order[j]
            if s[oj] == -np.inf:
                continue
            yj = y[oj]
            if yi == yj:
                continue
            if yi > yj:
                high = oi
                low = oj
                dh = di
                dl = discount[j]
            else:
                high = oj
                low = oi
                dh = discount[j]
                dl = di
            ds = s[high] - s[low]
            gap = label_gain[int(y[high])] - label_gain[int(y[low])]
            delta = gap * abs(dh - dl) * inv_max_dcg
            if norm and best != worst:
                delta /= (np.float64(eps) + abs(ds))
            if ds <= tmin:
                rho = table[0]
            elif ds >= tmax:
                rho = table[table.shape[0] - 1]
            else:
                rho = table[np.intp((ds - tmin) * factor)]
            p_h = rho * (1.0 - rho)
            p_l = rho * (-sigma * delta)
            p_h = p_h * (sigma * sigma * delta)
            fl = np.float32(p_l)
            fh = np.float32(p_h)
            lam[low] = lam[low] - fl
            hes[low] = hes[low] + fh
            lam[high] = lam[high] + fl
            hes[high] = hes[high] + fh
            sum_lambdas -= 2.0 * p_l
    if norm and sum_lambdas > 0.0:
        f = np.log2(1.0 + sum_lambdas) / sum_lambdas
        for i in range(n):
            lam[i] = np.float32(lam[i] * f)
            hes[i] = np.float32(hes[i] * f)


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


@njit(cache=True)
def xgb_inverse_idcg(labels, group_ptr, k, exp_gain, out):
    """``1/IDCG@min(k, n)`` per query (0 when it is 0), XGBoost's ``NDCGCache`` convention."""
    n_q = group_ptr.shape[0] - 1
    for q in range(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        yl = np.sort(labels[a:b])[::-1]
        idcg = 0.0
        for i in range(min(b - a, k)):
            g = (2.0 ** yl[i] - 1.0) if exp_gain else np.float64(yl[i])
            idcg += (1.0 / np.log2(i + 2.0)) * g
        out[q] = 0.0 if idcg == 0.0 else 1.0 / idcg


@njit(cache=True)
def _xgb_sigmoid(x):
    # XGBoost's float overload of common::Sigmoid, evaluated in float32.
    z = min(-x, np.float32(88.7))
    denom = np.exp(z) + np.float32(1.0) + np.float32(1e-16)
    return np.float32(1.0) / denom


@njit(cache=True)
def _xgb_query(s, y, gains, discount, metric, inv_idcg, k, score_norm, norm, w, n_rel, acc, g, h):
    n = s.shape[0]
    for i in range(n):
        g[i] = np.float32(0.0)
        h[i] = np.float32(0.0)
    if n == 0:
        return
    order = np.argsort(-s, kind="mergesort")
    if metric == 1:
        n_rel[0] = y[order[0]]
        acc[0] = y[order[0]] / 1.0
        for r in range(1, n):
            n_rel[r] = n_rel[r - 1] + y[order[r]]
            acc[r] = acc[r - 1] + y[order[r]] / np.float64(r + 1)
    best = s[order[0]]
    worst = s[order[n - 1]]
    sum_lambda = 0.0
    for i in range(min(n, k)):
        for j in range(i + 1, n):
            rh = i
            rl = j
            if y[order[rh]] == y[order[rl]]:
                continue
            if y[order[rh]] < y[order[rl]]:
                rh = j
                rl = i
            ih = order[rh]
            il = order[rl]
            yh = y[ih]
            yl = y[il]
            sd = s[ih] - s[il]  # float32 arithmetic, as the engine
            dscore = np.float64(abs(sd))
            sig = np.float64(_xgb_sigmoid(sd))
            if metric == 0:
                gh = gains[ih]
                gl = gains[il]
                dh = discount[rh]
                dl = discount[rl]
                delta = ((gh * dh + gl * dl) - (gl * dh + gh * dl)) * inv_idcg
            elif metric == 1:
                a_r = rh
                b_r = rl
                ya = yh
                yb = yl
                if a_r > b_r:
                    a_r, b_r = b_r, a_r
                    ya, yb = yb, ya
                r_h = a_r + 1.0
                r_l = b_r + 1.0
                tot = n_rel[n - 1]
                m = n_rel[b_r]
                nn = n_rel[a_r]
                bb = acc[b_r - 1] - acc[a_r]
                if ya < yb:
                    delta = ((m / r_l - (nn + 1.0) / r_h) - bb) / tot
                else:
                    delta = ((nn / r_h - m / r_l) + bb) / tot
            else:
                delta = 1.0
            delta = abs(delta)
            if score_norm and best != worst:
                delta /= (dscore + 0.01)
            lam = (sig - 1.0) * delta
            hs = max(sig * (1.0 - sig), 1e-16) * delta * 2.0
            fg = np.float32(lam)
            fh = np.float32(hs)
            g[ih] = g[ih] + fg
            h[ih] = h[ih] + fh
            g[il] = g[il] - fg
            h[il] = h[il] + fh
            sum_lambda += -2.0 * np.float64(fg)
    if norm and sum_lambda > 0.0:
        f = np.float32(np.log2(1.0 + sum_lambda) / sum_lambda)
        for i in range(n):
            g[i] = g[i] * f
            h[i] = h[i] * f
    for i in range(n):
        g[i] = g[i] * w
        h[i] = h[i] * w


@njit(cache=True, parallel=True)
def xgb_lambdarank(preds, labels, gains, discount, group_ptr, metric, inv_idcg, k, score_norm, norm,
                   group_w, w_norm, n_rel, acc, grad, hess):
    """XGBoost topk ``rank:*`` gradients into float32 ``grad``/``hess``.

    ``preds`` and ``labels`` are float32; ``gains`` per-document NDCG gains (``2**y - 1`` or
    ``y``, float64); ``discount[r] = 1/log2(r + 2)``; ``group_w`` per-query float32 weights (ones when the
    DMatrix has none); ``w_norm = n_groups / sum(w)`` as float32; ``n_rel``/``acc`` float64
    scratch of ``n_rows`` (used by MAP).
    """
    n_q = group_ptr.shape[0] - 1
    for q in prange(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        _xgb_query(preds[a:b], labels[a:b], gains[a:b], discount, metric, inv_idcg[q], k, score_norm, norm,
                   group_w[q], n_rel[a:b], acc[a:b], grad[a:b], hess[a:b])
        for i in range(a, b):
            grad[i] = grad[i] * w_norm
            hess[i] = hess[i] * w_norm


@njit(cache=True)
def engine_discount(n):
    """``1/log2(2 + r)`` for ``r < n``, with libm ``log2`` as both engines compute their tables."""
    out = np.empty(n, dtype=np.float64)
    for r in range(n):
        out[r] = 1.0 / np.log2(2.0 + r)
    return out
