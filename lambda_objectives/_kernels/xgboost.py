"""XGBoost 3.x ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` with the ``topk`` pair method
(``src/objective/lambdarank_obj.{h,cc}``), reproduced to float32 precision.

Differences from the exact kernels, each the engine's: float32 predictions, the float32 sigmoid
``1/(exp(min(-x, 88.7)) + 1 + 1e-16)``, ``h = 2 max(rho(1-rho), 1e-16) delta``, the *untruncated*
discount for ΔNDCG (XGBoost truncates which pairs are formed), XGBoost's own ΔAP bookkeeping over
graded labels, optional score normalisation ``delta/(|ds| + 0.01)`` and per-query ``log2(1+S)/S``,
gradient pairs accumulated in float32, then ``* w_q * n_groups/sum(w)``. IDCG is
``ranking.ideal_dcg`` (the engine's ``NDCGCache`` sums the same terms in the same order).
Ties keep input order (stable sort), as the engine does on CPU.

The ``mean`` pair method (``xgb_lambdarank_mean``) forms the same pair gradients on sampled pairs:
the model's ranking is stably sorted by label (descending); for every bucket of equal labels with
documents outside it, ``num_pair_per_sample`` times over, each document of the bucket is paired with
one uniformly drawn document outside the bucket. The draws are those of a GCC/libstdc++ build of
XGBoost 3.0-3.3: one ``std::minstd_rand`` per query seeded with ``(iteration + offset) * n_groups + q``
(uint32 arithmetic; ``offset`` 0 in 3.0, 1 in 3.1-3.3) and libstdc++'s ``uniform_int_distribution``
downscaling (``scaling = (2**31 - 3) // range``, reject ``r >= range * scaling``, ``r // scaling``).
IDCG is over the whole list, and normalisation is ``1/num_pair_per_sample`` (in float32).
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
def _xgb_map_stats(ys, n_rel, acc):
    """The engine's ``MAPStat``: relevant documents and ``sum y_u/(u+1)`` up to each rank position."""
    n_rel[0] = ys[0]
    acc[0] = ys[0] / 1.0
    for r in range(1, ys.shape[0]):
        n_rel[r] = n_rel[r - 1] + ys[r]
        acc[r] = acc[r - 1] + ys[r] / np.float64(r + 1)


@njit(cache=True, inline="always")  # inlined in numba's IR: as a call it slowed the topk loop down
def _xgb_delta(gs, discount, metric, inv_idcg, n_rel, acc, rh, rl, yh, yl):
    """The engine's |ΔZ| of one pair at rank positions ``rh`` (the larger label ``yh``) and ``rl``
    (``DeltaNDCG`` with the untruncated discount, ``DeltaMAP``, or 1 for ``rank:pairwise``)."""
    if metric == NDCG:
        gh = gs[rh]
        gl = gs[rl]
        dh = discount[rh]
        dl = discount[rl]
        return abs(((gh * dh + gl * dl) - (gl * dh + gh * dl)) * inv_idcg)
    if metric == MAP:
        a_r = rh
        b_r = rl
        ya = yh
        yb = yl
        if a_r > b_r:
            a_r, b_r = b_r, a_r
            ya, yb = yb, ya
        r_h = a_r + 1.0
        r_l = b_r + 1.0
        tot = n_rel[n_rel.shape[0] - 1]
        m = n_rel[b_r]
        nn = n_rel[a_r]
        bb = acc[b_r - 1] - acc[a_r]
        if ya < yb:
            return abs(((m / r_l - (nn + 1.0) / r_h) - bb) / tot)
        return abs(((nn / r_h - m / r_l) + bb) / tot)
    return 1.0


@njit(cache=True, inline="always")
def _xgb_pair(ss, rh, rl, delta, scale, gp, hp, unbiased, order, pos, ti, tj, li, lj):
    """The engine's ``LambdaGrad`` of one pair at rank positions ``rh`` (the larger label) and ``rl``,
    added to the float32 position sums ``gp``/``hp``; returns the pair's float32 gradient.

    ``unbiased`` (``lambdarank_unbiased``): with display positions ``ph = pos[order[rh]]`` and
    ``pl = pos[order[rl]]`` both below ``K = ti.shape[0]``, λ and h are divided by ``ti[ph]·tj[pl]`` when
    both factors are ``>= 1e-16``, and the pair's cost ``log(1/(1 − sig))·Δ`` (the engine's, the mirror
    of the paper's RankNet cost) is added to the per-row sums ``li[order[rh]] += cost/tj[pl]`` and
    ``lj[order[rl]] += cost/ti[ph]`` (each only when its divisor is ``>= 1e-16``).
    """
    sd = ss[rh] - ss[rl]  # float32 arithmetic, as the engine
    if scale:
        delta /= (np.float64(abs(sd)) + 0.01)
    sig = np.float64(_xgb_sigmoid(sd))
    lam = (sig - 1.0) * delta
    hes = max(sig * (1.0 - sig), 1e-16) * delta * 2.0
    if unbiased:
        ih = order[rh]
        il = order[rl]
        p_h = pos[ih]
        p_l = pos[il]
        kk = ti.shape[0]
        if p_h < kk and p_l < kk:
            tp = ti[p_h]
            tm = tj[p_l]
            if tm >= 1e-16 and tp >= 1e-16:
                lam /= (tp * tm)
                hes /= (tp * tm)
            cost = np.log(1.0 / (1.0 - sig)) * delta
            if tm >= 1e-16:
                li[ih] += cost / tm
            if tp >= 1e-16:
                lj[il] += cost / tp
    fg = np.float32(lam)
    fh = np.float32(hes)
    gp[rh] = gp[rh] + fg
    hp[rh] = hp[rh] + fh
    gp[rl] = gp[rl] - fg
    hp[rl] = hp[rl] + fh
    return fg


@njit(cache=True)
def _xgb_query(s, y, gains, discount, metric, inv_idcg, k, score_norm, norm, w, n_rel, acc, unbiased, pos, ti,
               tj, li, lj, g, h):
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
        _xgb_map_stats(ys, n_rel, acc)
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
            delta = _xgb_delta(gs, discount, metric, inv_idcg, n_rel, acc, rh, rl, yh, yl)
            fg = _xgb_pair(ss, rh, rl, delta, scale, gp, hp, unbiased, order, pos, ti, tj, li, lj)
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
                   group_w, w_norm, n_rel, acc, unbiased, pos, ti, tj, li, lj, grad, hess):
    """XGBoost topk ``rank:*`` gradients into float32 ``grad``/``hess``; ``metric`` a registry code
    (NDCG, MAP, RANKNET for ``rank:pairwise``).

    ``preds`` and ``labels`` are float32; ``gains`` per-document NDCG gains (``2**y - 1`` or
    ``y``, float64); ``discount[r] = 1/log2(r + 2)``; ``group_w`` per-query float32 weights (ones when the
    DMatrix has none); ``w_norm = n_groups / sum(w)`` as float32; ``n_rel``/``acc`` float64
    scratch of ``n_rows`` (used by MAP).

    ``unbiased`` switches on Unbiased LambdaMART as ``lambdarank_unbiased=True`` does (:func:`_xgb_pair`):
    ``pos`` the int64 display position of every row (the engine's: its index inside its query), ``ti`` /
    ``tj`` the float64 ``ti+`` / ``tj-`` of the round (``K`` = ``MaxPositionSize()`` entries), ``li`` /
    ``lj`` float64 per-row cost sums, zeroed by the caller (each query adds only to its own rows, so any
    thread count gives the same bits); :func:`~.position_bias.update_bias_factors` then re-estimates
    ``ti``/``tj``. Without ``unbiased`` those four arrays are not read.
    """
    n_q = group_ptr.shape[0] - 1
    for q in prange(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        _xgb_query(preds[a:b], labels[a:b], gains[a:b], discount, metric, inv_idcg[q], k, score_norm, norm,
                   group_w[q], n_rel[a:b], acc[a:b], unbiased, pos[a:b], ti, tj, li[a:b], lj[a:b], grad[a:b],
                   hess[a:b])
        for i in range(a, b):
            grad[i] = grad[i] * w_norm
            hess[i] = hess[i] * w_norm


# -- the mean pair method: std::minstd_rand and libstdc++'s uniform_int_distribution -------------------
_MINSTD_A = 48271
_MINSTD_M = 2147483647  # 2**31 - 1; the engine's outputs are 1 .. M - 1
_MINSTD_RANGE = 2147483645  # max() - min() = 2**31 - 3, not of the form 2**k - 1: libstdc++ downscales by division


@njit(cache=True)
def minstd_seed(seed):
    """The state of ``std::minstd_rand(seed)`` (``seed`` a uint32 value): ``seed mod M``, 1 when that is 0."""
    x = np.uint64(seed) % np.uint64(_MINSTD_M)
    if x == np.uint64(0):
        x = np.uint64(1)
    return x


@njit(cache=True)
def minstd_uniform(x, n):
    """One ``std::uniform_int_distribution<size_t>(0, n - 1)(rnd)`` on ``minstd_rand`` state ``x``, as
    libstdc++ computes it (``1 <= n < 2**31 - 3``): returns the new state and the draw.

    libstdc++ downscales an engine whose range is not ``2**32 - 1``/``2**64 - 1`` by integer division:
    ``scaling = range_engine // n``; draws ``r = rnd() - 1`` until ``r < n * scaling``; returns ``r // scaling``.
    (libc++ and MSVC draw otherwise.)
    """
    un = np.uint64(n)
    scaling = np.uint64(_MINSTD_RANGE) // un
    past = un * scaling
    while True:
        x = (x * np.uint64(_MINSTD_A)) % np.uint64(_MINSTD_M)
        r = x - np.uint64(1)
        if r < past:
            return x, np.int64(r // scaling)


@njit(cache=True)
def _xgb_mean_query(s, y, gains, discount, metric, inv_idcg, m, seed, score_norm, norm, w, n_rel, acc, unbiased,
                    pos, ti, tj, li, lj, g, h):
    n = s.shape[0]
    for i in range(n):
        g[i] = np.float32(0.0)
        h[i] = np.float32(0.0)
    if n == 0:
        return
    order = np.argsort(-s, kind="mergesort")
    ss = s[order]
    ys = y[order]
    gs = gains[order]
    gp = np.zeros(n, dtype=np.float32)
    hp = np.zeros(n, dtype=np.float32)
    if metric == MAP:
        _xgb_map_stats(ys, n_rel, acc)
    scale = score_norm and ss[0] != ss[n - 1]
    # rank positions stably sorted by label, descending: buckets of equal labels are runs
    by_label = np.argsort(-ys, kind="mergesort")
    x = minstd_seed(seed)
    i = 0
    while i < n:
        j = i + 1
        while j < n and ys[by_label[i]] == ys[by_label[j]]:
            j += 1
        n_out = i + (n - j)  # documents before and after the bucket
        if n_out > 0:
            for _ in range(m):
                for p in range(i, j):
                    x, r = minstd_uniform(x, n_out)
                    if r >= i:
                        r += j - i  # skip over the bucket
                    a = by_label[p]
                    b = by_label[r]
                    if ys[a] > ys[b]:
                        rh = a
                        rl = b
                    else:
                        rh = b
                        rl = a
                    # the topk loop's pair gradient (LambdaGrad), on the sampled pair
                    delta = _xgb_delta(gs, discount, metric, inv_idcg, n_rel, acc, rh, rl, ys[rh], ys[rl])
                    _xgb_pair(ss, rh, rl, delta, scale, gp, hp, unbiased, order, pos, ti, tj, li, lj)
        i = j
    if norm and m != 1:
        f = np.float32(1.0 / m)  # GradientPair::operator*(float)
        for r in range(n):
            gp[r] = gp[r] * f
            hp[r] = hp[r] * f
    for r in range(n):
        g[order[r]] = gp[r] * w
        h[order[r]] = hp[r] * w


@njit(cache=True, parallel=True)
def xgb_lambdarank_mean(preds, labels, gains, discount, group_ptr, metric, inv_idcg, m, seed0, score_norm, norm,
                        group_w, w_norm, n_rel, acc, unbiased, pos, ti, tj, li, lj, grad, hess):
    """XGBoost ``rank:*`` gradients with ``lambdarank_pair_method="mean"`` into float32 ``grad``/``hess``.

    Arguments as :func:`xgb_lambdarank`, except ``m`` (``num_pair_per_sample``) for ``k``, ``inv_idcg``
    over the whole list, and ``seed0 = ((iteration + offset) * n_groups) mod 2**32``: query ``q`` draws
    from ``std::minstd_rand((seed0 + q) mod 2**32)``, so the result does not depend on the thread count.
    """
    n_q = group_ptr.shape[0] - 1
    for q in prange(n_q):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        seed = (np.uint64(seed0) + np.uint64(q)) % np.uint64(4294967296)
        _xgb_mean_query(preds[a:b], labels[a:b], gains[a:b], discount, metric, inv_idcg[q], m, seed, score_norm,
                        norm, group_w[q], n_rel[a:b], acc[a:b], unbiased, pos[a:b], ti, tj, li[a:b], lj[a:b],
                        grad[a:b], hess[a:b])
        for i in range(a, b):
            grad[i] = grad[i] * w_norm
            hess[i] = hess[i] * w_norm
