"""Split finding on histograms with the criteria of Xia, Zhai & Wang: SE, OLE and exact OLE.

For a candidate split of a node into L and R (``bin <= b`` goes left, NaN right), with
``G, H, N`` the sums of gradients, Hessians and counts, the gain (reduction of the criterion's
error) is

* ``"se"`` (least squares on the pseudo-responses ``r = −g``, Friedman's MART; the paper's Eq. 3
  in the incremental form of its Eq. 14): ``G_L²/N_L + G_R²/N_R − G²/N``;
* ``"ole"`` (objective-loss-based error with derivative-additive second derivatives, Eq. 13;
  LightGBM's/XGBoost's gain): ``G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)``;
* ``"ole_exact"``: as ``"ole"`` with each child's Hessian reduced by ``2 Σ h_ij`` over the pairs
  whose two documents both fall in that child (their outputs move together).

Splits need ``N_L, N_R >= min_data_in_leaf`` and ``H_L, H_R >= min_sum_hessian_in_leaf`` (the
plain Hessian sums, as LightGBM) and a gain > 0. Ties go to the lower feature, then lower bin.
"""

import numpy as np
from numba import njit, prange

SE, OLE, OLE_EXACT = 0, 1, 2
CRITERIA = {"se": SE, "ole": OLE, "ole_exact": OLE_EXACT}


@njit(cache=True)
def _score(g, h, n, criterion, lam):
    if criterion == SE:
        return g * g / n
    d = h + lam
    # exact-OLE Hessians count only pairs crossing the node boundary and can be 0 (a node holding
    # whole queries): no curvature, no error term.
    if d <= 1e-12:
        return 0.0
    return g * g / d


@njit(cache=True, parallel=True)
def find_best_split(hist, n_bins, feature_mask, G, H, N, H_exact, criterion, lam, min_data, min_hess,
                    pair_max, pair_min, out_gain, out_bin):
    """Best gain and bin per feature into ``out_gain``/``out_bin`` (−inf when none)."""
    n_features = hist.shape[0]
    for f in prange(n_features):
        out_gain[f] = -np.inf
        out_bin[f] = -1
        if not feature_mask[f]:
            continue
        parent = _score(G, H_exact, N, criterion, lam)
        pairs_total = 0.0
        if criterion == OLE_EXACT:
            for b in range(hist.shape[1]):
                pairs_total += pair_min[f, b]
        gl = 0.0
        hl = 0.0
        nl = 0.0
        pl = 0.0  # Σ h_ij of pairs inside L
        pr_out = 0.0  # Σ h_ij of pairs with their smaller bin <= b (not inside R)
        for b in range(n_bins[f] - 1):
            gl += hist[f, b, 0]
            hl += hist[f, b, 1]
            nl += hist[f, b, 2]
            if criterion == OLE_EXACT:
                pl += pair_max[f, b]
                pr_out += pair_min[f, b]
            gr = G - gl
            hr = H - hl
            nr = N - nl
            if nl < min_data or nr < min_data or hl < min_hess or hr < min_hess:
                continue
            if criterion == OLE_EXACT:
                gain = _score(gl, hl - 2.0 * pl, nl, criterion, lam) + \
                    _score(gr, hr - 2.0 * (pairs_total - pr_out), nr, criterion, lam) - parent
            else:
                gain = _score(gl, hl, nl, criterion, lam) + _score(gr, hr, nr, criterion, lam) - parent
            if gain > out_gain[f]:
                out_gain[f] = gain
                out_bin[f] = b
        if criterion == OLE_EXACT and out_bin[f] < 0:
            out_gain[f] = -np.inf


@njit(cache=True)
def pick(out_gain, out_bin):
    """(gain, feature, bin) of the best feature; first one on ties; feature −1 when none > 0."""
    best = 0.0
    feat = -1
    for f in range(out_gain.shape[0]):
        if out_gain[f] > best:
            best = out_gain[f]
            feat = f
    if feat < 0:
        return 0.0, -1, -1
    return best, feat, out_bin[feat]
