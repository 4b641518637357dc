"""YetiRank (Gulin, Kuralenok & Pavlov 2011; CatBoost's ``YetiRank``) as one round's gradients.

Per query and boosting round, ``P`` noisy rankings are drawn: every score gets logistic noise the
way CatBoost adds it (``exp(s)`` times ``u/(1.000001 − u)``, ``u`` uniform on a float32 grid, i.e.
``s + log u − log(1.000001 − u)``), the list is sorted descending (ties in input order) and each
pair of neighbours ``(t − 1, t)`` with different labels gets a weight:

* ``CLASSIC`` (CatBoost's default ``mode=Classic``): ``0.15 · decay^(t−1) · |y_a − y_b|``;
* ``NDCG`` (CatBoost's ``mode=NDCG``, one neighbour, no ``top``, ``dcg_type=Base``,
  ``LogPosition``): ``|ΔDCG|/IDCG`` of swapping the two, linear gain, no decay.

Weights are averaged over the ``P`` rankings and fed, at the noise-free scores, to the pairwise
logistic loss ``W log(1 + e^{−(s_hi − s_lo)})`` (CatBoost's ``PairLogit``): per pair
``g_hi −= W p``, ``g_lo += W p``, ``h_hi, h_lo += W p (1 − p)`` with ``p = 1/(1 + e^{s_hi − s_lo})``,
the gradient and Newton Hessian of the loss the engines minimise (CatBoost's ``der1``/``der2``
with the opposite sign). Both are linear in ``W``, so each ranking's pairs are added as drawn.

Random numbers: a counter-based generator, so the draws depend on ``(seed, round, query)`` only,
never on the thread that handles a query: the query's key is ``splitmix64`` chained over the
three, and draw ``c`` of the query is the ``splitmix64`` finaliser of ``key + (c + 1) · golden``
(Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). 64-bit
arithmetic wraps on purpose; the Python layer silences numpy's overflow warnings for
``NUMBA_DISABLE_JIT=1`` runs, which give the same bits (``math``'s exp/log, not numpy's).
"""

import math

import numpy as np
from numba import njit, prange

from .ranking import position_log2, stable_order_desc

CLASSIC = 0
NDCG = 1

#: CatBoost's YetiRank constants (``yetirank_helpers.cpp``): the Classic pair scale ("like in
#: GPU") and the float32 shift in the noise ``u / (1.000001f − u)``
PAIR_SCALE = 0.15
NOISE_SHIFT = np.float32(1.000001)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S40 = np.uint64(40)
_ULP24 = np.float32(2.0 ** -24)


@njit(cache=True)
def mix64(z):
    """The splitmix64 finaliser (a bijection of uint64)."""
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@njit(cache=True)
def query_key(seed, rnd, q):
    """The generator key of query ``q`` in round ``rnd`` (all uint64)."""
    h = mix64(seed + _GOLDEN)
    h = mix64(h + rnd + _GOLDEN)
    return mix64(h + q + _GOLDEN)


@njit(cache=True)
def uniform32(key, c):
    """Draw ``c`` (uint64) of the stream ``key``: uniform on the float32 grid ``k/2^24`` in [0, 1)."""
    z = mix64(key + (c + np.uint64(1)) * _GOLDEN)
    return np.float32(z >> _S40) * _ULP24


@njit(cache=True)
def noisy_scores(s, key, perm, out):
    """Ranking ``perm``'s keys: ``s + log(u/(1.000001 − u))``, the ratio in float32 as CatBoost has it."""
    m = s.shape[0]
    base = np.uint64(perm) * np.uint64(m)
    for i in range(m):
        u = uniform32(key, base + np.uint64(i))
        ratio = u / (NOISE_SHIFT - u)
        # u = 0: −inf, last place, as CatBoost's 0 multiplier. math, not numpy: numpy's own SIMD
        # log/exp can differ from the C library's in the last bit, and numba calls the C library's
        out[i] = s[i] + math.log(np.float64(ratio)) if ratio > 0 else -np.inf


@njit(cache=True)
def yetirank_query(s, y, key, permutations, decay, mode, weight, grad, hess, noisy):
    """One query's YetiRank gradient/Hessian into ``grad``/``hess`` (zeroed here); ``noisy`` scratch (m,)."""
    m = s.shape[0]
    for i in range(m):
        grad[i] = 0.0
        hess[i] = 0.0
    if m <= 1:
        return
    idcg = 1.0
    if mode == NDCG:
        ideal = np.sort(y)[::-1]
        idcg = 0.0
        for p in range(m):
            idcg += ideal[p] / position_log2(p)
        if idcg <= 0.0:
            return  # all labels 0: no pair has a weight
    scale = weight / permutations
    for r in range(permutations):
        noisy_scores(s, key, r, noisy)
        o = stable_order_desc(noisy)
        coef = PAIR_SCALE
        for t in range(1, m):
            a = o[t - 1]
            b = o[t]
            if y[a] != y[b]:
                if mode == CLASSIC:
                    w = coef * abs(y[a] - y[b])
                else:
                    w = abs((y[a] - y[b]) * (1.0 / position_log2(t - 1) - 1.0 / position_log2(t))) / idcg
                if y[a] > y[b]:
                    hi, lo = a, b
                else:
                    hi, lo = b, a
                p = 1.0 / (1.0 + math.exp(s[hi] - s[lo]))
                wp = scale * w * p
                grad[hi] -= wp
                grad[lo] += wp
                hp = wp * (1.0 - p)
                hess[hi] += hp
                hess[lo] += hp
            coef *= decay


@njit(cache=True, parallel=True)
def yetirank_driver(scores, labels, group_ptr, weights, seed, rnd, permutations, decay, mode, grad, hess):
    """All queries of one round (``prange``; each writes only its own rows; draws keyed by query)."""
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        noisy = np.empty(b - a)
        yetirank_query(scores[a:b], labels[a:b], query_key(seed, rnd, np.uint64(q)), permutations, decay, mode,
                       weights[q], grad[a:b], hess[a:b], noisy)
