"""Position-bias estimation steps, run once after each gradient pass (the three ``bias=`` ways).

* :func:`xgb_update_bias`: Unbiased LambdaMART's re-estimation of the per-position factors ``t⁺``/``t⁻``
  (Hu, Wang, Peng, Li, "Unbiased LambdaMART: An Unbiased Pairwise Learning-to-Rank Algorithm", WWW 2019,
  arXiv 1809.05818, eq. 30/31), as XGBoost 3.2 computes it (``LambdaRankUpdatePositionBias``,
  ``src/objective/lambdarank_obj.cc``)::

      L⁺_p = Σ_{rows at p} li_row,   t⁺_p = (L⁺_p / L⁺_0)^(1/(1 + bias_norm))   (only when L⁺_0 >= 1e-16)
      L⁻_p = Σ_{rows at p} lj_row,   t⁻_p = (L⁻_p / L⁻_0)^(1/(1 + bias_norm))   (only when L⁻_0 >= 1e-16)

  where ``li_row``/``lj_row`` are the pass's per-row sums of pair costs divided by the partner's factor
  (:func:`~.xgboost._xgb_pair`, :func:`~.pairs._pair_block`). Rows are added in row order (XGBoost adds
  query after query, each query's positions in order): the same bits at any thread count.
* :func:`additive_newton`: LightGBM 4.7's position-bias step (``UpdatePositionBiasFactors``,
  ``src/objective/rank_objective.hpp``): the model is ``score + b[position]``; after a pass, with the
  pass's (weighted, float32) gradients ``g`` and Hessians ``h`` and ``n_p`` rows at position ``p``::

      G_p = −Σ_{rows at p} g − μ n_p b_p,   H_p = −Σ_{rows at p} h − μ n_p,
      b_p ← b_p + lr · G_p / (|H_p| + 0.001)

  (``μ`` = ``lambdarank_position_bias_regularization``, ``lr`` = ``learning_rate``); ``b`` is float32
  (LightGBM's ``label_t``), the sums float64 in row order (LightGBM's order at one thread).
"""

import numpy as np
from numba import njit


@njit(cache=True)
def xgb_update_bias(li_row, lj_row, pos, reg, ti, tj):
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
    """One regularised Newton step per position on ``b`` (float32, in place; module docstring)."""
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
        b[p] = np.float32(np.float64(b[p]) + lr * g / (abs(h) + 0.001))


@njit(cache=True)
def shifted_scores(scores, pos, b, out):
    """``out = scores + b[pos]`` (float64 plus LightGBM's float32 bias, as the engine adds them)."""
    for r in range(scores.shape[0]):
        out[r] = scores[r] + np.float64(b[pos[r]])
