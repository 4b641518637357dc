"""LOW LEVEL XE-NDCG kernels (Bruch, Zoghi, Bendersky & Najork, WWW 2021, arXiv 1911.09798).

Per query, with ``ρ = softmax(s)`` and the randomised targets ``φ_i = 2^{y_i} − γ_i``
(``γ_i ∈ [0, 1)`` drawn afresh each round), the loss is the cross entropy

.. math:: L = −\\sum_i p_i \\log ρ_i,\\qquad p_i = φ_i / \\sum_j φ_j .

Two kernels, both O(n) per query:

* :func:`xendcg_query`: the exact gradient ``∂L/∂s_i = ρ_i − p_i`` (the ``p_i`` sum to 1) and the
  exact diagonal of the Hessian ``ρ_i(1 − ρ_i)``, float64;
* :func:`xendcg_query_lightgbm`: LightGBM 4.x ``rank_xendcg`` (``RankXENDCG::GetGradientsForOneQuery``
  in src/objective/rank_objective.hpp), reproduced operation by operation: the first-order term
  ``ρ_i − p_i`` plus two further terms of a series,
  ``L2_i = ρ_i Σ_{j≠i} L1_j/(1−ρ_j)`` and ``L3_i = ρ_i Σ_{j≠i} L2_j/(1−ρ_j)``, accumulated into a
  float32 gradient; labels truncated to int for ``2^y``; ``1/max(1e-15f, Σφ)``. This is NOT the
  gradient of ``L``.

LightGBM's γ come from its ``Random`` class (include/LightGBM/utils/random.h), one generator per
query seeded ``objective_seed + query``, advanced by one ``NextFloat`` per document per round
(queries with one document draw nothing): :func:`lightgbm_gammas` does the same on an int64
state array the caller keeps between rounds.
"""

import math

import numpy as np
from numba import njit, prange

PRESET_EXACT, PRESET_LIGHTGBM = 0, 1

#: LightGBM's ``kEpsilon`` is the float literal ``1e-15f``; as a double it is this value.
_LGB_EPS = float(np.float32(1e-15))
_LCG_MUL, _LCG_ADD, _MASK32 = 214013, 2531011, 0xFFFFFFFF


@njit(cache=True)
def xendcg_query(s, lab, gam, g, h):
    """Exact XE-NDCG gradient and Hessian diagonal of one query into ``g``, ``h`` (float64).

    ``g_i = ρ_i − φ_i/Σφ`` with ``φ_i = 2^{y_i} − γ_i``; ``h_i = ρ_i (1 − ρ_i)``. Queries with
    at most one document, or with ``Σφ <= 0``, get zeros. Softmax shifted by the maximum score.
    """
    n = s.shape[0]
    for i in range(n):
        g[i] = 0.0
        h[i] = 0.0
    if n <= 1:
        return
    smax = s[0]
    for i in range(1, n):
        smax = max(smax, s[i])
    z = 0.0
    tot = 0.0
    for i in range(n):
        e = math.exp(s[i] - smax)
        g[i] = e  # g holds exp until normalised below
        z += e
        tot += 2.0 ** lab[i] - gam[i]
    if tot <= 0.0:
        for i in range(n):
            g[i] = 0.0
        return
    for i in range(n):
        rho = g[i] / z
        g[i] = rho - (2.0 ** lab[i] - gam[i]) / tot
        h[i] = rho * (1.0 - rho)


@njit(cache=True, inline="always")
def _div(a, b):
    """``a / b`` with IEEE results for ``b == 0`` (C++ semantics; Python would raise)."""
    if b != 0.0:
        return a / b
    if a == 0.0:
        return math.nan
    return math.copysign(math.inf, a)


@njit(cache=True)
def xendcg_query_lightgbm(s, lab, gam, g, h, work):
    """LightGBM 4.x ``rank_xendcg`` gradient/Hessian of one query, float32-rounded into float64 ``g``, ``h``.

    ``gam`` are the generator's float32 draws (as float64), ``work`` a scratch array of at
    least ``2n``. Order of operations and roundings follow ``RankXENDCG::GetGradientsForOneQuery``
    and ``Common::Softmax``; the gradient is accumulated in float32 like LightGBM's ``score_t``.
    """
    n = s.shape[0]
    if n <= 1:
        for i in range(n):
            g[i] = 0.0
            h[i] = 0.0
        return
    rho = work[0:n]
    par = work[n:2 * n]
    wmax = s[0]
    for i in range(1, n):
        wmax = max(s[i], wmax)
    wsum = 0.0
    for i in range(n):
        rho[i] = math.exp(s[i] - wmax)
        wsum += rho[i]
    for i in range(n):
        rho[i] /= wsum
    inv = 0.0
    for i in range(n):
        par[i] = 2.0 ** int(np.float32(lab[i])) - gam[i]
        inv += par[i]
    inv = 1.0 / max(_LGB_EPS, inv)
    sum_l1 = 0.0
    for i in range(n):
        term = -par[i] * inv + rho[i]
        g[i] = np.float32(term)
        par[i] = _div(term, 1.0 - rho[i])
        sum_l1 += par[i]
    sum_l2 = 0.0
    for i in range(n):
        term = rho[i] * (sum_l1 - par[i])
        g[i] = np.float32(np.float32(g[i]) + np.float32(term))
        par[i] = _div(term, 1.0 - rho[i])
        sum_l2 += par[i]
    for i in range(n):
        g[i] = np.float32(np.float32(g[i]) + np.float32(rho[i] * (sum_l2 - par[i])))
        h[i] = np.float32(rho[i] * (1.0 - rho[i]))


@njit(cache=True, parallel=True)
def xendcg_driver(scores, labels, group_ptr, gammas, preset, g, h):
    """All queries (``prange`` over queries, each writes only its own rows, so the result does
    not depend on the thread count; the caller sets the thread count). ``preset`` is
    :data:`PRESET_EXACT` or :data:`PRESET_LIGHTGBM`."""
    n_queries = group_ptr.shape[0] - 1
    for q in prange(n_queries):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        if preset == PRESET_LIGHTGBM:
            work = np.empty(2 * (b - a))
            xendcg_query_lightgbm(scores[a:b], labels[a:b], gammas[a:b], g[a:b], h[a:b], work)
        else:
            xendcg_query(scores[a:b], labels[a:b], gammas[a:b], g[a:b], h[a:b])


@njit(cache=True)
def lightgbm_gammas(states, group_ptr, out):
    """Draw this round's γ for every document from LightGBM's per-query generators.

    ``states[q]`` is query ``q``'s ``Random::x`` (uint32 kept in an int64); each draw is
    ``x = 214013 x + 2531011 (mod 2^32)``, ``γ = ((x >> 16) & 0x7FFF) / 32768`` (``NextFloat``:
    exact in float32). Queries with fewer than two documents draw nothing (LightGBM returns
    before sampling). ``states`` is advanced in place.
    """
    n_queries = group_ptr.shape[0] - 1
    for q in range(n_queries):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        if b - a <= 1:
            for i in range(a, b):
                out[i] = 0.0
            continue
        x = states[q]
        for i in range(a, b):
            x = (_LCG_MUL * x + _LCG_ADD) & _MASK32
            out[i] = ((x >> 16) & 0x7FFF) / 32768.0
        states[q] = x
