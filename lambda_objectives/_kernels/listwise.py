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
The sums over groups run as prefix sums in the log domain, so no exponential overflows.
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
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


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
    # bottom-up: lse[r] = log Σ_{positions >= r} e^s, kept at each group's first position
    lse = np.empty(n)
    mx = -np.inf
    acc = 0.0
    for r in range(n - 1, -1, -1):
        v = s[order[r]]
        if v > mx:
            acc = acc * math.exp(mx - v) + 1.0 if mx > -np.inf else 1.0
            mx = v
        else:
            acc += math.exp(v - mx)
        lse[r] = mx + math.log(acc)
    # top-down: log Σ_{groups so far} |G| e^{−LSE} and |G| e^{−2 LSE}; a document's Σ |G| p and Σ |G| p²
    # are e^{s} and e^{2s} times them (bounded by n: each group's LSE is at least the document's s)
    logc = -np.inf
    logd = -np.inf
    r = 0
    while r < n:
        e = r + 1
        while e < n and start[e] == r:
            e += 1
        if r != last:
            lm = math.log(e - r)
            logc = _logaddexp(logc, lm - lse[r])
            logd = _logaddexp(logd, lm - 2.0 * lse[r])
        for t in range(r, e):
            i = order[t]
            a = math.exp(s[i] + logc)
            b = math.exp(2.0 * s[i] + logd)
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
