"""PL-Rank-3 with its Hessian (Kang, de Rijke & Oosterhuis, "Estimating the Hessian Matrix of Ranking
Objectives for Stochastic Learning to Rank with Gradient Boosted Trees", SIGIR 2024, arXiv:2404.12190;
PL-Rank-3: Oosterhuis, SIGIR 2022, arXiv:2204.10872): sampled first and second derivatives of the
expected DCG@K of a Plackett–Luce ranking policy.

Per query, ``π(d | remaining) ∝ e^{s_d}``. A ranking ``y`` (its top ``K' = min(K, n)`` positions) is
drawn by the Gumbel trick, sorting ``s_d + G_d`` descending with ``G_d = −log(−log u_d)``, computed as
the equivalent exponential race (``s_d + G_d = −log(X_d e^{−s_d})``, ``X_d = −log u_d ~ Exp(1)``: the
keys ``X_d e^{−s_d}`` ascending give the same order with one logarithm per document instead of two). With ``θ_i =
1/log2(i + 2)`` (0-based position ``i``), gains ``ρ``, the remaining mass ``D_i = Σ_{d ∉ y_{<i}} e^{s_d}``,
``PR_i = Σ_{j ≥ i} θ_j ρ_{y_j}`` (``PR_{K'} = 0``) and, up to position ``j``,

    DR_j = Σ_{i≤j} θ_i/D_i,  RI_j = Σ_{i≤j} PR_i/D_i,  C_j = Σ_{i≤j} 1/D_i,
    DR2_j = Σ_{i≤j} θ_i/D_i²,  RI2_j = Σ_{i≤j} PR_i/D_i²,

a document at position ``j`` (or ``j = K' − 1`` with ``PR_{j+1}`` read as 0 when it is not placed) has

    g_d = 1[placed] PR_{j+1} + e^{s_d} (ρ_d DR_j − RI_j)                 (PL-Rank-3, ∂E[DCG@K]/∂s_d)
    h_d = g_d (1[placed] − e^{s_d} C_j) + e^{s_d} (ρ_d DR_j − RI_j) − e^{2 s_d} (ρ_d DR2_j − RI2_j)

``h_d`` is the score-function derivative of ``E[g_d]``: ``g_d ∂ log π(y)/∂s_d`` plus ``∂g_d/∂s_d``
(Kang et al., the Hessian estimator). Both are averaged over the samples; each is unbiased for the
exact derivative. The kernels write ``−g`` and ``−h`` (the loss is ``−E[DCG@K]``), unnormalised (no
IDCG), times the query weight. ``h`` may be negative: ``E[DCG@K]`` is not concave.

Scale. A query whose scores all lie within :data:`SPAN` of its maximum ``m`` runs on ``e^{s_d − m}``
(at least ``e^{−300}``, so neither ``D_i`` nor ``1/D_i²`` leaves float64's range) with the race keys
``X_d e^{m − s_d}``. A query with a wider spread (issue #48: such scores were once clamped to ``m − 300``,
which tied them, ``s = [301, 0, 1]`` drawing documents 1 and 2 in either order with equal odds) takes
:func:`plrank_samples_rescaled`, exact at any finite gap: the race compares ``log X_d − s_d`` pairwise
through score differences, and each position ``j`` measures masses in units of ``e^{M_j}``, ``M_j`` the
largest score still unplaced there, so every exponent is ``s_d − M_j <= 0`` or ``M_j − M_{j-1} <= 0``.
The two agree to rounding where both apply (tests/test_plrank.py runs both on ordinary queries).

Random numbers: the counter-based generator of ``_kernels/yetirank.py``; draw ``r·n + i`` of the key of
``(seed, iteration, query)`` is document ``i``'s uniform in sample ``r``, so a call is bit-identical at
any thread count.
"""

import math

import numpy as np
from numba import njit, prange

from .yetirank import _GOLDEN, mix64, query_key

#: the widest score spread (max − min) of a query that runs on one scale ``e^{s − max}``; wider ones
#: take :func:`plrank_samples_rescaled` (see the module docstring)
SPAN = 300.0

_S11 = np.uint64(11)
_ULP53 = 2.0 ** -53


@njit(cache=True)
def uniform53(key, c):
    """Draw ``c`` (uint64) of the stream ``key``: uniform on ``(k + 1/2)/2^53``, strictly inside (0, 1)."""
    z = mix64(key + (c + np.uint64(1)) * _GOLDEN)
    return (np.float64(z >> _S11) + 0.5) * _ULP53


@njit(cache=True)
def sample_top(inv_e, key, r, kk, noisy, top):
    """The top ``kk`` of sample ``r``: documents by the race key ``−log(u) / e^{t}`` ascending (the
    order of ``t + Gumbel`` descending; ties in input order). ``inv_e`` is ``e^{−t}``."""
    n = inv_e.shape[0]
    base = np.uint64(r) * np.uint64(n)
    cnt = 0
    for i in range(n):
        u = uniform53(key, base + np.uint64(i))
        v = -math.log(u) * inv_e[i]
        noisy[i] = v
        if cnt < kk:
            j = cnt
            cnt += 1
        elif v < noisy[top[kk - 1]]:
            j = kk - 1
        else:
            continue
        # insertion: strict comparison keeps an earlier document ahead of a later one on a tie
        while j > 0 and noisy[top[j - 1]] > v:
            top[j] = top[j - 1]
            j -= 1
        top[j] = i


@njit(cache=True)
def plrank_query(s, gains, key, n_samples, k, disc, weight, grad, hess, e, noisy, top, placed, pr, inv_d):
    """One query's ``−g`` and ``−h`` (see the module docstring) into ``grad``/``hess``; ``k = 0``: the whole
    list. Scratch: ``e``, ``noisy`` (n), ``placed`` (n, False on entry and exit), ``top``, ``inv_d`` (K'),
    ``pr`` (K' + 1)."""
    n = s.shape[0]
    for i in range(n):
        grad[i] = 0.0
        hess[i] = 0.0
    if n <= 1:
        return  # one document: every ranking is the same
    kk = n if k <= 0 or k > n else k
    m = s[0]
    for i in range(1, n):
        m = max(m, s[i])
    pr[kk] = 0.0
    for i in range(n):
        if s[i] - m < -SPAN:
            plrank_samples_rescaled(s, gains, key, n_samples, kk, disc, grad, hess, e, noisy, top, placed, pr, inv_d)
            _scale(grad, hess, -weight / n_samples)
            return
    inv_e = np.empty(n)
    ones = np.ones(kk)  # one scale: the running sums are never carried
    ex_top = np.empty(kk)
    for i in range(n):
        t = s[i] - m  # within SPAN: e^t >= e^-300 and e^-t <= e^300, both normal
        e[i] = math.exp(t)
        inv_e[i] = math.exp(-t)
    for r in range(n_samples):
        sample_top(inv_e, key, r, kk, noisy, top)
        tail = 0.0
        if kk < n:
            for j in range(kk):
                placed[top[j]] = True
            for i in range(n):
                if not placed[i]:
                    tail += e[i]
        # remaining mass from the back: sums of positive terms, no cancellation
        d = tail
        for j in range(kk - 1, -1, -1):
            d += e[top[j]]
            inv_d[j] = 1.0 / d
            pr[j] = pr[j + 1] + disc[j] * gains[top[j]]
        for j in range(kk):
            ex_top[j] = e[top[j]]
        add_sample(kk, top, placed, inv_d, pr, disc, gains, ones, ex_top, e, grad, hess)
    _scale(grad, hess, -weight / n_samples)


@njit(cache=True)
def add_sample(kk, top, placed, inv_d, pr, disc, gains, carry, ex_top, ex_rest, grad, hess):
    """Add one sampled ranking's ``ĝ``, ``ĥ`` (the module docstring) to ``grad``, ``hess``, position ``j``
    on its own scale ``e^{M_j}``: ``inv_d[j] = e^{M_j}/D_j``, ``carry[j] = e^{M_j − M_{j−1}}`` takes the
    running sums from the previous position's scale (its square for the ``1/D²`` sums; ones on one
    scale, which leaves the sums bit for bit), ``ex_top[j] = e^{s_{top[j]} − M_j}`` and, for a document
    ``i`` left unplaced (``placed`` False; the flags of ``top`` are cleared here), ``ex_rest[i] =
    e^{s_i − M_{K'−1}}``."""
    c1 = 0.0
    dr = 0.0
    ri = 0.0
    dr2 = 0.0
    ri2 = 0.0
    for j in range(kk):
        f = carry[j]
        c1 *= f
        dr *= f
        ri *= f
        f *= f
        dr2 *= f
        ri2 *= f
        x = top[j]
        q = inv_d[j]
        c1 += q
        dr += disc[j] * q
        ri += pr[j] * q
        dr2 += disc[j] * q * q
        ri2 += pr[j] * q * q
        ex = ex_top[j]
        sp = ex * (gains[x] * dr - ri)
        g = pr[j + 1] + sp
        grad[x] += g
        hess[x] += g * (1.0 - ex * c1) + sp - ex * ex * (gains[x] * dr2 - ri2)
    n = grad.shape[0]
    if kk < n:
        for i in range(n):
            if placed[i]:
                placed[i] = False
            else:
                ex = ex_rest[i]
                sp = ex * (gains[i] * dr - ri)
                grad[i] += sp
                hess[i] += sp * (1.0 - ex * c1) - ex * ex * (gains[i] * dr2 - ri2)


@njit(cache=True)
def _scale(grad, hess, scale):
    for i in range(grad.shape[0]):
        grad[i] *= scale
        hess[i] *= scale


@njit(cache=True)
def sample_top_rescaled(s, key, r, kk, lx, top):
    """:func:`sample_top` with the race compared in log space: ``d`` goes before ``t`` when
    ``log X_d − s_d < log X_t − s_t``, tested as ``log X_d − log X_t < s_d − s_t`` (one score difference,
    no ``e^{±s}``), so the draw is exact at any finite spread of ``s``. ``lx`` receives ``log X``."""
    n = s.shape[0]
    base = np.uint64(r) * np.uint64(n)
    cnt = 0
    for i in range(n):
        u = uniform53(key, base + np.uint64(i))
        v = math.log(-math.log(u))
        lx[i] = v
        if cnt < kk:
            j = cnt
            cnt += 1
        elif v - lx[top[kk - 1]] < s[i] - s[top[kk - 1]]:
            j = kk - 1
        else:
            continue
        # insertion: strict comparison keeps an earlier document ahead of a later one on a tie
        while j > 0 and lx[top[j - 1]] - v > s[top[j - 1]] - s[i]:
            top[j] = top[j - 1]
            j -= 1
        top[j] = i


@njit(cache=True)
def plrank_samples_rescaled(s, gains, key, n_samples, kk, disc, grad, hess, mj, lx, top, placed, pr, inv_d):
    """The sums of :func:`plrank_query` over ``n_samples`` rankings, each position ``j`` in units of
    ``e^{M_j}`` (``M_j`` the largest score still unplaced): ``inv_d[j] = e^{M_j}/D_j`` (``D_j/e^{M_j}`` is
    in [1, n]), the running sums carried from ``M_{j−1}`` to ``M_j`` by ``e^{M_j − M_{j−1}} <= 1`` (and its
    square for the ``1/D²`` sums), and ``e^{s_x}`` read as ``e^{s_x − M_j} <= 1``. Adds the unscaled
    ``g``, ``h`` of every sample into ``grad``, ``hess``; scratch ``mj`` (>= K'), ``lx`` (n)."""
    n = s.shape[0]
    carry = np.empty(kk)
    ex_top = np.empty(kk)
    ex_rest = np.empty(n)
    for r in range(n_samples):
        sample_top_rescaled(s, key, r, kk, lx, top)
        # remaining mass from the back, as (largest score M, Σ e^{s − M}) rescaled whenever M rises
        big = -np.inf
        acc = 0.0
        if kk < n:
            for j in range(kk):
                placed[top[j]] = True
            for i in range(n):
                if not placed[i]:
                    if s[i] > big:
                        acc = acc * math.exp(big - s[i]) + 1.0
                        big = s[i]
                    else:
                        acc += math.exp(s[i] - big)
        for j in range(kk - 1, -1, -1):
            v = s[top[j]]
            if v > big:
                acc = acc * math.exp(big - v) + 1.0
                big = v
            else:
                acc += math.exp(v - big)
            mj[j] = big
            inv_d[j] = 1.0 / acc
            pr[j] = pr[j + 1] + disc[j] * gains[top[j]]
        for j in range(kk):
            carry[j] = 1.0 if j == 0 else math.exp(mj[j] - mj[j - 1])
            ex_top[j] = math.exp(s[top[j]] - mj[j])
        if kk < n:
            for i in range(n):
                if not placed[i]:
                    ex_rest[i] = math.exp(s[i] - mj[kk - 1])
        add_sample(kk, top, placed, inv_d, pr, disc, gains, carry, ex_top, ex_rest, grad, hess)


@njit(cache=True, parallel=True)
def plrank_driver(scores, gains, group_ptr, weights, seed, rnd, n_samples, k, disc, grad, hess):
    """All queries of one round (``prange``; each writes only its own rows; draws keyed by query)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        kk = n if k <= 0 or k > n else k
        plrank_query(scores[a:b], gains[a:b], query_key(seed, rnd, np.uint64(q)), n_samples, k, disc, weights[q],
                     grad[a:b], hess[a:b], np.empty(n), np.empty(n), np.empty(max(kk, 1), np.int64),
                     np.zeros(n, np.bool_), np.empty(kk + 1), np.empty(max(kk, 1)))
