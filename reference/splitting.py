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


@njit(cache=True)
def best_bin(hist, n_bins, f, G, H, N, H_exact, criterion, lam, min_data, min_hess, pair_max, pair_min):
    """(best gain, its bin) of feature ``f``, (−inf, −1) when no bin qualifies (``pair_max`` and
    ``pair_min``: feature ``f``'s rows of the pair histograms, ``N_BINS`` long, read only by exact OLE;
    any 1-D array otherwise)."""
    best = -np.inf
    best_b = -1
    parent = _score(G, H_exact, N, criterion, lam)
    pairs_total = 0.0
    if criterion == OLE_EXACT:
        for b in range(hist.shape[1]):
            pairs_total += pair_min[b]
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
            pl += pair_max[b]
            pr_out += pair_min[b]
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
        if gain > best:
            best = gain
            best_b = b
    if best_b < 0:
        best = -np.inf
    return best, best_b


@njit(cache=True, parallel=True)
def find_best_split(hist, n_bins, feature_mask, G, H, N, H_exact, criterion, lam, min_data, min_hess,
                    pair_max, pair_min, out_gain, out_bin):
    """Best gain and bin per feature into ``out_gain``/``out_bin`` (−inf when none); ``pair_max``,
    ``pair_min``: the pair histograms ``(n_features, N_BINS)`` for exact OLE, any 2-D array otherwise."""
    n_features = hist.shape[0]
    for f in prange(n_features):
        out_gain[f] = -np.inf
        out_bin[f] = -1
        if not feature_mask[f]:
            continue
        # np.int64(f): prange's index is unsigned, the grower's bounded search passes a Python int; one
        # type, one compiled best_bin (issue #48: each argument type compiles the function again)
        fi = np.int64(f)
        pf = fi if criterion == OLE_EXACT else np.int64(0)  # any other criterion: a (1, 1) placeholder
        gain, b = best_bin(hist, n_bins, fi, G, H, N, H_exact, criterion, lam, min_data, min_hess, pair_max[pf],
                           pair_min[pf])
        out_gain[f] = gain
        out_bin[f] = b


@njit(cache=True)
def _score_bound(g, h_low, lam):
    """An upper bound of ``_score(g, h, ., OLE_EXACT, lam)`` for every ``h >= h_low``."""
    d = h_low + lam
    if d <= 1e-12:
        return 0.0 if g == 0.0 else np.inf
    return g * g / d


@njit(cache=True, parallel=True)
def exact_gain_bounds(hist, w_hist, s_max, s_min, n_bins, feature_mask, G, H, N, H_exact, lam, min_data, min_hess,
                      tol, out_bound):
    """Per feature, an upper bound of the best exact-OLE gain :func:`best_bin` can return (−inf
    when no bin qualifies), from one row-histogram channel instead of the pair histograms.

    Exact OLE's left Hessian ``H_L − 2 P_LL`` is the Hessian of the pairs leaving ``L``: those
    leaving the node (``Σ_{i∈L} w_i`` with ``w_i = h_i − Σ_{j in the node} h_ij``, per bin in ``w_hist``)
    plus those crossing to ``R``, at least the crossing pairs of any subset ``S`` of the node's
    pairs (their pair histograms by larger and smaller bin in ``s_max``, ``s_min``; zero for an
    empty ``S``), because every ``h_ij >= 0``; likewise on the right. The bound is lowered by
    ``tol``, a bound on the rounding errors of both sides, so it bounds the computed gain; the
    validity rules (minimum count and Hessian) are evaluated with the same arithmetic.
    """
    n_features = hist.shape[0]
    for f in prange(n_features):
        out_bound[f] = -np.inf
        if not feature_mask[f]:
            continue
        parent = _score(G, H_exact, N, OLE_EXACT, lam)
        w_total = 0.0
        for b in range(hist.shape[1]):
            w_total += w_hist[f, b]
        gl = 0.0
        hl = 0.0
        nl = 0.0
        wl = 0.0
        s_in_l = 0.0  # S pairs with their larger bin <= b (inside L)
        s_out_r = 0.0  # S pairs with their smaller bin <= b (not inside R)
        for b in range(n_bins[f] - 1):
            gl += hist[f, b, 0]
            hl += hist[f, b, 1]
            nl += hist[f, b, 2]
            wl += w_hist[f, b]
            s_in_l += s_max[f, b]
            s_out_r += s_min[f, b]
            gr = G - gl
            hr = H - hl
            nr = N - nl
            if nl < min_data or nr < min_data or hl < min_hess or hr < min_hess:
                continue
            crossing = s_out_r - s_in_l
            low_l = (wl + crossing) - tol
            low_r = ((w_total - wl) + crossing) - tol
            bound = _score_bound(gl, low_l, lam) + _score_bound(gr, low_r, lam) - parent
            if np.isnan(bound):  # no bound
                bound = np.inf
            if bound > out_bound[f]:
                out_bound[f] = bound


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
