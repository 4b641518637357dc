"""XGBoost 3.x ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` with the ``topk`` pair method
(``src/objective/lambdarank_obj.{h,cc}``), reproduced to float32 precision.

Differences from the exact kernels, each the engine's: float32 predictions, the float32 sigmoid
``1/(exp(min(-x, 88.7)) + 1 + 1e-16)``, ``h = 2 max(rho(1-rho), 1e-16) delta``, the *untruncated*
discount for ΔNDCG (XGBoost truncates which pairs are formed), XGBoost's own ΔAP bookkeeping over
graded labels, optional score normalisation ``delta/(|ds| + 0.01)`` and per-query ``log2(1+S)/S``,
gradient pairs accumulated in float32, then ``* w_q * n_groups/sum(w)``. IDCG is
``ranking.ideal_dcg`` (the engine's ``NDCGCache`` sums the same terms in the same order).
Ties keep input order (stable sort), as the engine does on CPU.
"""

import numpy as np
from numba import njit, prange

from .._registry import MAP, NDCG
from .ranking import ideal_dcg

@njit(cache=True)
def xgb_inverse_idcg(gains, group_ptr, k, discount, out):
    """``1/IDCG@min(k, n)`` per query from per-document gains (0 when the ideal DCG is 0)."""
    for q in range(group_ptr.shape[0] - 1):
        idcg = ideal_dcg(gains[group_ptr[q]:group_ptr[q + 1]], k, discount)
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
    # scores, labels and gains by *position*, and float32 accumulators by position: the same additions
    # in the same order per document as the engine's indexed loop, without a gather per pair
    ss = s[order]
    ys = y[order]
    gs = gains[order]
    gp = np.zeros(n, dtype=np.float32)
    hp = np.zeros(n, dtype=np.float32)
    if metric == MAP:
        n_rel[0] = ys[0]
        acc[0] = ys[0] / 1.0
        for r in range(1, n):
            n_rel[r] = n_rel[r - 1] + ys[r]
            acc[r] = acc[r - 1] + ys[r] / np.float64(r + 1)
    best = ss[0]
    worst = ss[n - 1]
    scale = score_norm and best != worst
    sum_lambda = 0.0
    for i in range(min(n, k)):
        yi = ys[i]
        for j in range(i + 1, n):
            yj = ys[j]
            if yi == yj:
                continue
            if yi < yj:
                rh = j
                rl = i
                yh = yj
                yl = yi
            else:
                rh = i
                rl = j
                yh = yi
                yl = yj
            sd = ss[rh] - ss[rl]  # float32 arithmetic, as the engine
            dscore = np.float64(abs(sd))
            sig = np.float64(_xgb_sigmoid(sd))
            if metric == NDCG:
                gh = gs[rh]
                gl = gs[rl]
                dh = discount[rh]
                dl = discount[rl]
                delta = ((gh * dh + gl * dl) - (gl * dh + gh * dl)) * inv_idcg
            elif metric == MAP:
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
            if scale:
                delta /= (dscore + 0.01)
            lam = (sig - 1.0) * delta
            hs = max(sig * (1.0 - sig), 1e-16) * delta * 2.0
            fg = np.float32(lam)
            fh = np.float32(hs)
            gp[rh] = gp[rh] + fg
            hp[rh] = hp[rh] + fh
            gp[rl] = gp[rl] - fg
            hp[rl] = hp[rl] + fh
            sum_lambda += -2.0 * np.float64(fg)
    if norm and sum_lambda > 0.0:
        f = np.float32(np.log2(1.0 + sum_lambda) / sum_lambda)
        for r in range(n):
            gp[r] = gp[r] * f
            hp[r] = hp[r] * f
    for r in range(n):
        g[order[r]] = gp[r] * w
        h[order[r]] = hp[r] * w


@njit(cache=True, parallel=True)
def xgb_lambdarank(preds, labels, gains, discount, group_ptr, metric, inv_idcg, k, score_norm, norm,
                   group_w, w_norm, n_rel, acc, grad, hess):
    """XGBoost topk ``rank:*`` gradients into float32 ``grad``/``hess``; ``metric`` a registry code
    (NDCG, MAP, RANKNET for ``rank:pairwise``).

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
