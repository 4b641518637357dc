"""Position-bias estimation steps, run once after each gradient pass (the three ``bias=`` ways).

* :func:`debias`: a pair's weight times its factors, in the pair loops (``pairs.py``, ``yetirank.py``);
* :func:`update_bias_factors`: Unbiased LambdaMART's re-estimation of the per-position factors ``t⁺``/``t⁻``
  (Hu, Wang, Peng, Li, "Unbiased LambdaMART: An Unbiased Pairwise Learning-to-Rank Algorithm", WWW 2019,
  arXiv 1809.05818, eq. 30/31), as XGBoost 3.2 computes it (``LambdaRankUpdatePositionBias``,
  ``src/objective/lambdarank_obj.cc``)::

      L⁺_p = Σ_{rows at p} li_row,   t⁺_p = (L⁺_p / L⁺_0)^(1/(1 + bias_norm))   (only when L⁺_0 >= 1e-16)
      L⁻_p = Σ_{rows at p} lj_row,   t⁻_p = (L⁻_p / L⁻_0)^(1/(1 + bias_norm))   (only when L⁻_0 >= 1e-16)

  where ``li_row``/``lj_row`` are the pass's per-row sums of pair costs divided by the partner's factor
  (:func:`~.xgboost._xgb_pair`, :func:`debias`). Rows are added in row order (XGBoost adds
  query after query, each query's positions in order): the same bits at any thread count.
* :func:`additive_newton`: LightGBM 4.7's position-bias step (``UpdatePositionBiasFactors``,
  ``src/objective/rank_objective.hpp``): the model is ``score + b[position]``; after a pass, with the
  pass's (weighted, float32) gradients ``g`` and Hessians ``h`` and ``n_p`` rows at position ``p``::

      G_p = −Σ_{rows at p} g − μ n_p b_p,   H_p = −Σ_{rows at p} h − μ n_p,
      b_p ← b_p + lr · G_p / (|H_p| + 0.001)

  (``μ`` = ``lambdarank_position_bias_regularization``, ``lr`` = ``learning_rate``); ``b`` is float32
  (LightGBM's ``label_t``), the sums float64 in row order (LightGBM's order at one thread).
"""

import math

import numpy as np
from numba import njit

#: ``bias`` codes of the pair loops (``bias=`` of :func:`lambda_objectives.lambda_gradients`): none; pair
#: factors only (``"ips"``); pair factors and the pass's cost sums for re-estimating them (``"pairwise"``)
BIAS_NONE, BIAS_FACTORS, BIAS_ESTIMATE = 0, 1, 2


@njit(cache=True, inline="always")
def debias(dz, a_hi, da, db, x, bias, fa, fb, ca, cb):
    """A pair's weight ``dz`` times its position-bias factor ``fa[high]·fb[low]`` (rows of the query,
    ``da``/``db`` the rows of rank positions ``a < b``, ``a_hi`` whether ``a`` is the upper-labelled one,
    ``x = σ(s_a − s_b)``). With ``bias == BIAS_ESTIMATE`` the pair's RankNet cost ``c = dz·log(1 +
    exp(−σ(s_high − s_low)))`` (before the factor; Hu et al. 2019, eq. 30/31) is added to the per-row sums
    ``ca[high] += c·fb[low]`` and ``cb[low] += c·fa[high]``."""
    dh = da if a_hi else db
    dl = db if a_hi else da
    if bias == BIAS_ESTIMATE:
        xx = x if a_hi else -x
        if xx > 0.0:
            c = dz * math.log1p(math.exp(-xx))
        else:
            c = dz * (-xx + math.log1p(math.exp(xx)))
        ca[dh] += c * fb[dl]
        cb[dl] += c * fa[dh]
    return dz * (fa[dh] * fb[dl])


@njit(cache=True)
def update_bias_factors(li_row, lj_row, pos, reg, ti, tj):
    """Re-estimate ``ti`` (``t⁺``) and ``tj`` (``t⁻``) in place from the per-row cost sums (module
    docstring); rows at a position ``>= ti.shape[0]`` are not tracked. ``reg = 1/(1 + bias_norm)``.
    Returns the per-position sums ``(L⁺, L⁻)``."""
    kk = ti.shape[0]
    li = np.zeros(kk)
    lj = np.zeros(kk)
    for r in range(pos.shape[0]):
        p = pos[r]
        if p < kk:
            li[p] += li_row[r]
            lj[p] += lj_row[r]
    for i in range(kk):
        if li[0] >= 1e-16:
            ti[i] = (li[i] / li[0]) ** reg
        if lj[0] >= 1e-16:
            tj[i] = (lj[i] / lj[0]) ** reg
    return li, lj


@njit(cache=True)
def additive_newton(grad, hess, pos, lr, reg, b):
    """One regularised Newton step per position on ``b`` (in place; module docstring); ``b`` float32 for
    LightGBM's parity, float64 elsewhere."""
    n_pos = b.shape[0]
    gsum = np.zeros(n_pos)
    hsum = np.zeros(n_pos)
    count = np.zeros(n_pos, dtype=np.int64)
    for r in range(pos.shape[0]):
        p = pos[r]
        gsum[p] -= grad[r]
        hsum[p] -= hess[r]
        count[p] += 1
    for p in range(n_pos):
        g = gsum[p] - np.float64(b[p]) * reg * count[p]
        h = hsum[p] - reg * count[p]
        # into b's own dtype: float32 for LightGBM's label_t (rounded as the engine stores it), float64 otherwise
        b[p] = np.float64(b[p]) + lr * g / (abs(h) + 0.001)


@njit(cache=True)
def shifted_scores(scores, pos, b, out):
    """``out = scores + b[pos]`` (float64 plus LightGBM's float32 bias, as the engine adds them)."""
    for r in range(scores.shape[0]):
        out[r] = scores[r] + np.float64(b[pos[r]])
