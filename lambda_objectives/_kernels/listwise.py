"""Listwise softmax cross-entropy (CatBoost's ``QuerySoftMax``) and ListMLE: per-query kernels, O(n) and
O(n log n) per query, and their ``prange`` drivers over queries.

**Softmax** (Cao et al., ICML 2007, ListNet's top-one cross-entropy; CatBoost's ``QuerySoftMax``; the
best neural loss in Qin et al., ICLR 2021). With ``p = softmax(β s)`` over the query and ``T = Σ_i y_i``:
``L = −Σ_i y_i log p_i``, ``g_i = ∂L/∂s_i = β (T p_i − y_i)``, exact Hessian diagonal
``β² T p_i (1 − p_i)``; the kernel returns ``h_i = β T (β p_i (1 − p_i) + λ)``: CatBoost's ``lambda``
adds ``λ β T`` (the Hessian of a proximal term ``½ λ β T Σ (s_i − s_i⁰)²`` that is zero at the current
scores, so the gradient is the loss's). A query with ``T = 0`` gets zeros.

**ListMLE** (Xia, Liu, Wang, Zhang & Li, ICML 2008): minus the log Plackett–Luce likelihood of the
documents sorted by label. Ties in labels (``breslow=True``): the documents sorted by label descending
form groups of equal labels ``G_1, …, G_m`` (best first), ``S_g = G_g ∪ … ∪ G_m`` (the group and
everything below it), and Breslow's (1974) tie approximation of the likelihood of the group order gives

``L = Σ_{g<m} ( |G_g| · log Σ_{j∈S_g} e^{s_j} − Σ_{i∈G_g} s_i )``;

the last group's term is left out because whichever order its documents take, they fill the remaining
positions with probability 1. Without ties this is ListMLE exactly. ``breslow=False`` (``ties="stable"``)
makes every document a group of its own, in input order among equal labels (stable sort): the literal
ListMLE of that one permutation. With ``p_{ig} = e^{s_i} / Σ_{S_g} e^{s}`` and ``γ(i)`` the group of ``i``:
``g_i = Σ_{g ≤ γ(i), g<m} |G_g| p_{ig} − [γ(i) < m]`` and the exact Hessian diagonal
``h_i = Σ_{g ≤ γ(i), g<m} |G_g| p_{ig} (1 − p_{ig})`` (each term is a log-sum-exp, whose Hessian
``diag(p) − p pᵀ`` is PSD: the loss is convex and its exact diagonal is non-negative).
The sums over groups run as prefix sums relative to the latest group's log-sum-exp, itself kept as the
largest score below it plus the log of a sum in [1, n]: every exponent is a difference of scores (≤ 0), so
nothing overflows and a document's ``p_{ig}`` keeps its gap at any finite score (1e300 or −1e300).
"""

import math

import numpy as np
from numba import njit, prange


@njit(cache=True)
def softmax_query(s, y, beta, lam, weight, g, h):
    """Softmax cross-entropy gradient and Hessian (with CatBoost's ``λ``) of one query; ``y >= 0``."""
    n = s.shape[0]
    total = 0.0
    for i in range(n):
        if y[i] > 0:
            total += y[i]
    if n == 0 or total <= 0.0:
        for i in range(n):
            g[i] = 0.0
            h[i] = 0.0
        return
    m = s[0]
    for i in range(1, n):
        m = max(m, s[i])
    z = 0.0
    for i in range(n):
        g[i] = math.exp(beta * (s[i] - m))  # g holds e^{β(s − max)} until the last loop
        z += g[i]
    for i in range(n):
        p = g[i] / z
        g[i] = weight * beta * (total * p - y[i])
        h[i] = weight * beta * total * (beta * p * (1.0 - p) + lam)


@njit(cache=True, parallel=True)
def softmax_driver(scores, labels, group_ptr, beta, lam, weights, grad, hess):
    """All queries (``prange``; each writes only its own rows)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        softmax_query(scores[a:b], labels[a:b], beta, lam, weights[q], grad[a:b], hess[a:b])


@njit(cache=True)
def listmle_query(s, y, breslow, weight, g, h):
    """ListMLE gradient and exact Hessian diagonal of one query (ties: Breslow groups, or stable order)."""
    n = s.shape[0]
    if n <= 1:
        for i in range(n):
            g[i] = 0.0
            h[i] = 0.0
        return
    order = np.argsort(-y, kind="mergesort")  # labels descending, input order among ties
    start = np.empty(n, dtype=np.int64)       # position of the first document of each position's group
    for r in range(n):
        tied = breslow and r > 0 and y[order[r]] == y[order[r - 1]]
        start[r] = start[r - 1] if tied else r
    last = start[n - 1]  # the first position of the last group, whose term is identically zero
    # bottom-up: log Σ_{positions >= r} e^s = top[r] + lacc[r], top[r] the largest score from r down and
    # lacc[r] = log Σ e^{s − top[r]} in [0, log n]. The two are kept apart: their sum would round to a
    # multiple of top[r]'s ulp (0.125 at 1e15), which is all a document's p_{ig} is measured against.
    top = np.empty(n)
    lacc = np.empty(n)
    mx = -np.inf
    acc = 0.0
    for r in range(n - 1, -1, -1):
        v = s[order[r]]
        if v > mx:
            acc = acc * math.exp(mx - v) + 1.0 if mx > -np.inf else 1.0
            mx = v
        else:
            acc += math.exp(v - mx)
        top[r] = mx
        lacc[r] = math.log(acc)
    # top-down, relative to the latest group g whose term counts (position ref): c = Σ_{g' ≤ g} |G_g'|
    # e^{LSE_g − LSE_g'} and d = Σ |G_g'| e^{2(LSE_g − LSE_g')}, each term in (0, |G_g'|] since the sets
    # shrink; a document of group ≥ g has Σ |G| p = e^{s − LSE_g} c and Σ |G| p² = e^{2(s − LSE_g)} d, with
    # s − LSE_g = (s − top) − lacc <= 0 formed from score differences only: no overflow and no loss of
    # the gap at any finite score
    c = 0.0
    d = 0.0
    ref = -1
    r = 0
    while r < n:
        e = r + 1
        while e < n and start[e] == r:
            e += 1
        if r != last:
            size = float(e - r)
            if ref < 0:
                c = size
                d = size
            else:
                step = (top[r] - top[ref]) + (lacc[r] - lacc[ref])  # LSE_r − LSE_ref <= 0
                c = size + c * math.exp(step)
                d = size + d * math.exp(2.0 * step)
            ref = r
        for t in range(r, e):
            i = order[t]
            if ref < 0:  # one group: every order of it has probability 1
                a = 0.0
                b = 0.0
            else:
                x = (s[i] - top[ref]) - lacc[ref]
                a = math.exp(x) * c
                b = math.exp(2.0 * x) * d
            g[i] = weight * (a - (1.0 if r != last else 0.0))
            h[i] = weight * max(a - b, 0.0)  # Σ|G| p(1 − p) ≥ 0; the max absorbs rounding of the difference
        r = e


@njit(cache=True, parallel=True)
def listmle_driver(scores, labels, group_ptr, breslow, weights, grad, hess):
    """All queries (``prange``; each writes only its own rows)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        listmle_query(scores[a:b], labels[a:b], breslow, weights[q], grad[a:b], hess[a:b])
