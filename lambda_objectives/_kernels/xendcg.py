"""XE-NDCG (Bruch, Zoghi, Bendersky & Najork, "An Alternative Cross Entropy Loss for
Learning-to-Rank", WWW 2021, arXiv:1911.09798): a listwise softmax cross-entropy, O(n) per query.

With ``ρ = softmax(s)`` over the query and targets ``φ_i = 2^{y_i} − γ_i`` (``γ_i ~ U[0, 1)``, drawn
afresh per document per round), the loss is ``L = −Σ_i (φ_i/Σφ) log ρ_i``; its gradient is
``∂L/∂s_i = ρ_i − φ_i/Σφ`` and its Hessian diagonal ``ρ_i (1 − ρ_i)`` (:func:`xendcg_query`). Every ``φ``
is finite (labels below 1024), but their sum can overflow (two labels of 1023): the kernel then divides
the ``φ`` by a power of two, which leaves the ratios ``φ_i/Σφ`` exact.

LightGBM's ``rank_xendcg`` (``src/objective/rank_objective.hpp``, ``RankXENDCG``) differs on purpose
and :func:`lgb_xendcg_query` reproduces it: ``γ`` from LightGBM's ``Random`` (a 32-bit LCG
``x ← 214013 x + 2531011``, ``γ = ((x >> 16) & 0x7FFF) / 32768`` in float32) seeded with
``objective_seed + query`` and advancing across rounds; ``2^{int(y)}`` (labels truncated; LightGBM's
``Common::Pow(2, int)`` multiplies 32-bit ints, which overflow from label 32 on, so the adapters refuse
such labels for this preset); the sum of
``φ`` floored at LightGBM's ``kEpsilon``; and the gradient replaced by its first three terms of a
series (first-order ``ρ − p``, then two corrections ``ρ_i Σ_{j≠i} t_j/(1 − ρ_j)``), accumulated in
float32 as the engine does.
"""

import math

import numpy as np
from numba import njit, prange

#: LightGBM's ``kEpsilon`` (``1e-15f``: a float literal stored in a double)
LGB_EPSILON = float(np.float32(1e-15))


@njit(cache=True)
def _softmax(s, rho):
    m = s[0]
    for i in range(1, s.shape[0]):
        m = max(m, s[i])
    total = 0.0
    for i in range(s.shape[0]):
        rho[i] = math.exp(s[i] - m)
        total += rho[i]
    for i in range(s.shape[0]):
        rho[i] /= total


@njit(cache=True)
def xendcg_query(s, targets, weight, g, h):
    """Exact XE-NDCG gradient and Hessian diagonal of one query; ``targets`` are ``φ`` (> 0)."""
    n = s.shape[0]
    if n <= 1:
        for i in range(n):
            g[i] = 0.0
            h[i] = 0.0
        return
    rho = np.empty(n)
    _softmax(s, rho)
    total = 0.0
    for i in range(n):
        total += targets[i]
    scale = 1.0
    if total == np.inf:
        # Σφ overflowed (labels near 1023): divide every φ by 2^e, e the exponent of the largest, which
        # is exact (a power of two), so each φ_i/Σφ is the ratio infinite-range arithmetic rounds to.
        # Only here: a φ scaled into the subnormals would lose bits the unscaled quotient keeps.
        big = 0.0
        for i in range(n):
            big = max(big, targets[i])
        scale = math.ldexp(1.0, -math.frexp(big)[1])
        total = 0.0
        for i in range(n):
            total += targets[i] * scale
    for i in range(n):
        g[i] = weight * (rho[i] - targets[i] * scale / total)
        h[i] = weight * rho[i] * (1.0 - rho[i])


@njit(cache=True, parallel=True)
def xendcg_driver(scores, targets, group_ptr, weights, grad, hess):
    """All queries (``prange``; each writes only its own rows)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        xendcg_query(scores[a:b], targets[a:b], weights[q], grad[a:b], hess[a:b])


@njit(cache=True)
def lgb_next_float(state):
    """LightGBM's ``Random::NextFloat`` on a one-element uint32 state (advanced in place)."""
    x = (np.uint32(214013) * state[0] + np.uint32(2531011)) & np.uint32(0xFFFFFFFF)
    state[0] = np.uint32(x)
    return np.float32((x >> np.uint32(16)) & np.uint32(0x7FFF)) / np.float32(32768.0)


@njit(cache=True)
def lgb_xendcg_query(s, y, state, g, h):
    """LightGBM ``rank_xendcg`` for one query, float32 outputs; ``state`` its generator (advanced)."""
    n = s.shape[0]
    if n <= 1:
        for i in range(n):
            g[i] = np.float32(0.0)
            h[i] = np.float32(0.0)
        return
    rho = np.empty(n)
    _softmax(s, rho)
    params = np.empty(n)
    denom = 0.0
    for i in range(n):
        params[i] = 2.0 ** int(y[i]) - np.float64(lgb_next_float(state))
        denom += params[i]
    inv = 1.0 / max(LGB_EPSILON, denom)
    sum_l1 = 0.0
    for i in range(n):
        term = -params[i] * inv + rho[i]
        g[i] = np.float32(term)
        params[i] = term / (1.0 - rho[i])
        sum_l1 += params[i]
    sum_l2 = 0.0
    for i in range(n):
        term = rho[i] * (sum_l1 - params[i])
        g[i] = g[i] + np.float32(term)
        params[i] = term / (1.0 - rho[i])
        sum_l2 += params[i]
    for i in range(n):
        g[i] = g[i] + np.float32(rho[i] * (sum_l2 - params[i]))
        h[i] = np.float32(rho[i] * (1.0 - rho[i]))


@njit(cache=True, parallel=True)
def lgb_xendcg_driver(scores, labels, group_ptr, states, grad, hess):
    """All queries; ``states[q]`` is query ``q``'s generator (``objective_seed + q`` at the start)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        lgb_xendcg_query(scores[a:b], labels[a:b], states[q:q + 1], grad[a:b], hess[a:b])
