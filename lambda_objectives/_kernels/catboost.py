"""CatBoost's native ``LambdaMart`` derivatives (``TLambdaMartError``, catboost >= 1.2.1) reproduced.

Read from ``catboost/private/libs/algo_helpers/error_functions.cpp`` and checked against the
engine through :func:`lambda_objectives.validation.probe_catboost` (tests/test_kernels_catboost.py). Written
here from that reading, in our own structure. Conventions, all the engine's:

* ranking: approxes descending, ties in input order (CatBoost's ``StableSort``); positions ``p``
  0-based;
* every pair ``(hi, lo)`` (``hi`` the document with the larger target) gets a weight ``delta >= 0``
  (metric-specific, below) and adds, with ``ds = s_hi - s_lo`` and ``rho = 1/(1 + exp(sigma ds))``,
  ``g_hi -= sigma delta rho``, ``g_lo += sigma delta rho``, ``h_hi, h_lo += sigma^2 delta rho (1 - rho)``.
  ``g`` is ``+dC/ds`` and ``h`` ``+d2C/ds2`` of the weighted pairwise logistic cost: exactly the
  signs the probe measures in CatBoost's ``der1``/``der2`` for this loss (its other losses use
  ``-dL/ds``);
* ``norm=True``: ``delta /= 0.01 + |ds|`` (a float64 0.01, unlike LightGBM's ``0.01f``) unless the
  query's highest and lowest approx are equal, and afterwards the query's ``g`` and ``h`` are
  multiplied by ``log2(1 + S)/S`` with ``S = sum over pairs of 2 sigma delta rho`` (when ``S > 0``);
* NDCG and DCG share one weight: ``|N(t_hi) - N(t_lo)| * |1/L(p_hi) - 1/L(p_lo)| / IDCG@top`` with
  ``N(t) = t`` (``type=Base``, default) or ``2**t - 1`` (``type=Exp``), ``L(p) = log2(2 + p)``
  (``denominator=LogPosition``, default) or ``1 + p`` (``Position``), the ideal DCG over the
  ``top`` best targets, and pairs formed only when at least one document is in the top ``top``
  (the discount itself is not truncated). ``DCG`` is divided by the ideal DCG as well;
* MRR (relevant: target > 0; ``top`` ignored): pairs of a relevant document ranked at ``a`` and an
  irrelevant one at ``b``, formed for the first relevant document (position ``f``) with every
  irrelevant document and for any other relevant document only with the irrelevant ones above
  ``f``. Weight ``1/(b+1) - 1/(a+1)`` if ``b < a``; else ``1/(a+1) - 1/(min(b, f2)+1)`` with ``f2``
  the second relevant position (``b`` if there is none);
* ERR (``top`` ignored; targets are the stop probabilities themselves, CatBoost's ERR domain is
  [0, 1]): for ``a < b`` with different targets,
  ``delta = P_a |(t_a - t_b)/(a+1) + M (t_b - t_a) + Q (t_b - t_a)/(b+1)|`` where ``P_a`` is the
  product of ``1 - t`` over positions above ``a`` and ``M``, ``Q`` are running sums/products
  ``M = sum Q_c t_c/(c+1)``, ``Q = prod (1 - t_c)`` over the positions ``c`` in ``(a, b)`` *whose
  target differs from t_a* (same-target documents are skipped before the update);
* MAP (relevant: target > 0; ``top`` ignored): for ``a < b`` of different relevance,
  ``delta = 1/(a+1) + sum 1/(c+1)`` over the relevant ``c`` in ``(a, b)`` seen while ``a`` is
  irrelevant (for a relevant ``a`` the sum stays empty); no division by the number of relevant
  documents.

Queries of one document get zeros. Accumulation in float64 in CatBoost's loop order; ERR's target differences, ``t/(a+1)`` and
``1 - t`` in float32, as CatBoost computes them on its float32 targets.
"""

import numpy as np
from numba import njit, prange

from .ranking import position_log2, stable_order_desc

NDCG = 0
MRR = 1
ERR = 2
MAP = 3


@njit(cache=True)
def _pair(o, app, hi, lo, delta, sigma, norm, same, grad, hess):
    """Add one pair's terms; returns its contribution ``2 sigma delta rho`` to ``S``."""
    ds = app[hi] - app[lo]
    if norm and not same:
        delta /= 0.01 + abs(ds)
    rho = 1.0 / (1.0 + np.exp(sigma * ds))
    g = -sigma * delta * rho
    h = sigma * sigma * delta * rho * (1.0 - rho)
    grad[o[hi]] += g
    hess[o[hi]] += h
    grad[o[lo]] -= g
    hess[o[lo]] += h
    return -2.0 * g


@njit(cache=True)
def _numerator(t, exp_gain):
    return 2.0 ** t - 1.0 if exp_gain else t


@njit(cache=True)
def _denominator(p, log_position):
    return position_log2(p) if log_position else 1.0 + p


@njit(cache=True)
def catboost_lambdamart_query(s, t, metric, top, sigma, norm, exp_gain, log_position, grad, hess):
    """One query's CatBoost ``LambdaMart`` ``der1``/``der2`` into ``grad``/``hess`` (zeroed here)."""
    n = s.shape[0]
    grad[:] = 0.0
    hess[:] = 0.0
    if n <= 1:
        return
    o = stable_order_desc(s)
    app = s[o]  # approx at position p
    tg = t[o]   # target at position p
    same = app[0] == app[n - 1]
    total = 0.0
    if metric == NDCG:
        T = n if (top < 0 or top > n) else top
        ideal_t = np.sort(t)[::-1]
        ideal = 0.0
        for p in range(T):
            ideal += _numerator(ideal_t[p], exp_gain) / _denominator(p, log_position)
        for a in range(n):
            bound = n if a < T else T
            for b in range(bound):
                if tg[a] <= tg[b]:
                    continue
                num = _numerator(tg[a], exp_gain) - _numerator(tg[b], exp_gain)
                den = abs(1.0 / _denominator(a, log_position) - 1.0 / _denominator(b, log_position))
                total += _pair(o, app, a, b, num * den / ideal, sigma, norm, same, grad, hess)
    elif metric == MRR:
        first = -1
        second = -1
        for p in range(n):
            if tg[p] > 0:
                if first < 0:
                    first = p
                else:
                    second = p
                    break
        if first < 0:
            return
        for a in range(n):
            if not tg[a] > 0:
                continue
            bound = n if a == first else first
            for b in range(bound):
                if tg[b] > 0:
                    continue
                if b < a:
                    delta = 1.0 / (b + 1) - 1.0 / (a + 1)
                elif second < 0 or b < second:
                    delta = 1.0 / (a + 1) - 1.0 / (b + 1)
                else:
                    delta = 1.0 / (a + 1) - 1.0 / (second + 1)
                total += _pair(o, app, a, b, delta, sigma, norm, same, grad, hess)
    elif metric == ERR:
        t32 = tg.astype(np.float32)
        p_first = 1.0
        for a in range(n):
            p_mid = 1.0
            mid_rr = 0.0
            for b in range(a + 1, n):
                if tg[a] == tg[b]:
                    continue  # CatBoost skips before updating the running sums (see module doc)
                # CatBoost's targets are float32 and these three are float32 operations there
                # (float - float, float / size_t, 1 - float): rounded the same way here
                # (np.float64 explicitly: numpy would keep float32 under NUMBA_DISABLE_JIT=1)
                up = np.float64(t32[b] - t32[a])
                first_term = np.float64((t32[a] - t32[b]) / np.float32(a + 1))
                d = first_term + mid_rr * up + p_mid * up / (b + 1)
                delta = p_first * abs(d)
                mid_rr += p_mid * tg[b] / (b + 1)
                p_mid *= np.float64(np.float32(1.0) - t32[b])
                if tg[a] > tg[b]:
                    total += _pair(o, app, a, b, delta, sigma, norm, same, grad, hess)
                else:
                    total += _pair(o, app, b, a, delta, sigma, norm, same, grad, hess)
            p_first *= np.float64(np.float32(1.0) - t32[a])
    else:  # MAP
        for a in range(n):
            rel_a = tg[a] > 0
            sum_rr = 1.0 / (a + 1)
            for b in range(a + 1, n):
                rel_b = tg[b] > 0
                if rel_a == rel_b:
                    continue
                if tg[a] > tg[b]:
                    total += _pair(o, app, a, b, sum_rr, sigma, norm, same, grad, hess)
                else:
                    total += _pair(o, app, b, a, sum_rr, sigma, norm, same, grad, hess)
                if rel_b:
                    sum_rr += 1.0 / (b + 1)
    if norm and total > 0:
        f = np.log2(1.0 + total) / total
        for i in range(n):
            grad[i] *= f
            hess[i] *= f


@njit(cache=True, parallel=True)
def catboost_lambdamart(scores, targets, group_ptr, metric, top, sigma, norm, exp_gain, log_position,
                        grad, hess):
    """All queries (one ``prange`` task per query, each writing only its own slice)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        catboost_lambdamart_query(scores[a:b], targets[a:b], metric, top, sigma, norm, exp_gain,
                                  log_position, grad[a:b], hess[a:b])
