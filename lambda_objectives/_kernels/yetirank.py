"""YetiRank (Gulin, Kuralenok & Pavlov 2011; CatBoost's ``YetiRank``) and YetiLoss (Lyzhin, Ustimenko,
Gulin & Prokhorenkova, "Which tricks are important for learning to rank?", ICML 2023; CatBoost's
``YetiRank:mode=…``) as one round's gradients. Read off ``yetirank_helpers.cpp`` of CatBoost 1.2.10.

Per query and boosting round, ``P`` noisy rankings are drawn and sorted descending (ties in input
order). The noise (CatBoost's ``noise=``): ``GUMBEL`` (its default; in fact logistic) multiplies
``exp(s)`` by ``u/(1.000001 − u)``, ``u`` uniform on a float32 grid, i.e. ``s + log u − log(1.000001 − u)``;
``GAUSS`` adds ``N(0, noise_power)``; ``NO_NOISE`` ranks by ``s`` (one ranking). Pairs and their weight
(1-based positions ``d < e``; ``R`` = label, "relevant" = label > 0):

* ``CLASSIC`` (CatBoost's default ``mode=Classic``): neighbours ``(d, d+1)`` of the whole list,
  ``0.15 · decay^(d−1) · |y_a − y_b|``; it reads neither ``top`` nor ``num_neighbors``.

Every other mode pairs position ``d ≤ top`` with ``d+1 … d+num_neighbors``:

* ``DCG`` / ``NDCG``: ``|ΔDCG|`` of the swap (linear gain, ``1/log2(1 + d)`` discount, 0 beyond
  ``top``), ``NDCG`` divided by the IDCG of the first ``top`` positions: ``ndcg.py``'s formula;
* ``MRR``: first documents up to the first relevant one; a relevant/irrelevant pair weighs
  ``1/d − 1/e`` (``|ΔRR|`` for ``num_neighbors=1``; beyond, CatBoost's, not ``rr.py``'s exact one);
* ``ERR``: ``|ΔERR|`` of the swap (``err.py``'s ``err_delta``), labels read as stop probabilities in
  [0, 1] (CatBoost's), the partner's terms not cut at ``top``;
* ``MAP``: a relevant/irrelevant pair weighs ``1/d + Σ 1/p`` over the relevant positions ``d < p < e``:
  CatBoost's weight, not ``|ΔAP|`` (``ap.py``; for ``e = d + 1`` that is ``c_d/(d(d+1))/R``).

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

from .err import err_advance, err_delta
from .position_bias import BIAS_NONE, debias
from .ranking import position_log2, stable_order_desc

#: pair-weight modes (CatBoost's ``mode=``) and noises (CatBoost's ``noise=``)
CLASSIC = 0
NDCG = 1
DCG = 2
MRR = 3
ERR = 4
MAP = 5
GUMBEL = 0
GAUSS = 1
NO_NOISE = 2

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
_S11 = np.uint64(11)
_ULP53 = 2.0 ** -53


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
def uniform53(key, c):
    """Draw ``c`` (uint64) of the stream ``key`` as a float64 on the grid ``k/2^53`` in [0, 1)."""
    z = mix64(key + (c + np.uint64(1)) * _GOLDEN)
    return np.float64(z >> _S11) * _ULP53


@njit(cache=True)
def content_key(bits):
    """A key of a query from its content: ``splitmix64`` chained over its length and ``bits`` (its labels'
    float64 bit patterns in row order), so the same query has the same key wherever it sits in the data."""
    h = content_key_start(bits.shape[0])
    for i in range(bits.shape[0]):
        h = content_key_step(h, bits[i])
    return h


@njit(cache=True, inline="always")
def content_key_start(n):
    """:func:`content_key`'s chain before the first label of a query of ``n`` documents."""
    return mix64(np.uint64(n) + _GOLDEN)


@njit(cache=True, inline="always")
def content_key_step(h, bits):
    """:func:`content_key`'s chain ``h`` after one more label's bit pattern (a kernel that reads the labels
    in row order anyway folds the chain into that loop)."""
    return mix64((h ^ bits) + _GOLDEN)


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
def gauss_scores(s, key, perm, sigma, out):
    """Ranking ``perm``'s keys: ``s + sigma · z``, ``z`` standard normal (Box–Muller on two 53-bit draws).

    CatBoost's ``noise=Gauss`` multiplies ``exp(s)`` by ``exp(N(0, noise_power))`` (its polar method);
    any exact normal generator has the same expectation.
    """
    m = s.shape[0]
    base = np.uint64(perm) * np.uint64(2 * m)
    for i in range(m):
        c = base + np.uint64(2 * i)
        u1 = 1.0 - np.float64(mix64(key + (c + np.uint64(1)) * _GOLDEN) >> _S11) * _ULP53  # (0, 1]
        u2 = np.float64(mix64(key + (c + np.uint64(2)) * _GOLDEN) >> _S11) * _ULP53
        out[i] = s[i] + sigma * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True)
def add_pair(s, y, a, b, w, scale, grad, hess, bias, fa, fb, ca, cb):
    """PairLogit's derivatives of one drawn pair of weight ``w`` (times ``scale``), if the labels differ;
    ``bias``: the weight passes through :func:`~.position_bias.debias` first (its cost before ``scale``)."""
    if y[a] == y[b]:
        return
    if bias != BIAS_NONE and w != 0.0:
        w = debias(w, y[a] > y[b], a, b, s[a] - s[b], bias, fa, fb, ca, cb)
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


@njit(cache=True)
def ranking_pairs(s, y, o, mode, decay, top, neighbors, disc, idcg, scale, grad, hess, bias, fa, fb, ca, cb):
    """One noisy ranking ``o``'s pairs, CatBoost's weight of ``mode`` each (module docstring).

    ``top``: first positions ``i < top`` (``top <= m``); ``neighbors``: partners ``i+1 … i+neighbors``
    (``m`` for all); ``disc[p]``: the DCG discount, 0 from ``top`` on; ``idcg``: ``NDCG``'s divisor.
    """
    m = s.shape[0]
    if mode == CLASSIC:
        coef = PAIR_SCALE
        for t in range(1, m):
            a = o[t - 1]
            b = o[t]
            add_pair(s, y, a, b, coef * abs(y[a] - y[b]), scale, grad, hess, bias, fa, fb, ca, cb)
            coef *= decay
        return
    p_first = 1.0  # ERR: probability that the user reaches position i
    for i in range(top):
        a = o[i]
        ra = y[a] > 0.0
        bound = min(m, i + 1 + neighbors)
        if mode == DCG or mode == NDCG:
            for j in range(i + 1, bound):
                b = o[j]
                add_pair(s, y, a, b, abs((y[a] - y[b]) * (disc[i] - disc[j])) / idcg, scale, grad, hess, bias, fa,
                         fb, ca, cb)
        elif mode == MRR:
            for j in range(i + 1, bound):
                b = o[j]
                if ra != (y[b] > 0.0):
                    add_pair(s, y, a, b, 1.0 / (i + 1.0) - 1.0 / (j + 1.0), scale, grad, hess, bias, fa, fb, ca,
                             cb)
            if ra:
                return  # CatBoost stops after the first relevant document's pairs
        elif mode == MAP:
            sum_rr = 1.0 / (i + 1.0)
            for j in range(i + 1, bound):
                b = o[j]
                rb = y[b] > 0.0
                if ra != rb:
                    add_pair(s, y, a, b, sum_rr, scale, grad, hess, bias, fa, fb, ca, cb)
                if rb:
                    sum_rr += 1.0 / (j + 1.0)
        else:  # ERR, labels as stop probabilities; the partner's terms are never cut at top
            q_prod = 1.0
            s_sum = 0.0
            for j in range(i + 1, bound):
                b = o[j]
                add_pair(s, y, a, b, err_delta(y[a], y[b], i, j, m, p_first, q_prod, s_sum), scale, grad, hess,
                         bias, fa, fb, ca, cb)
                q_prod, s_sum = err_advance(y[b], j, m, q_prod, s_sum)
            p_first *= 1.0 - y[a]


@njit(cache=True)
def yetirank_query(s, y, key, permutations, decay, mode, noise, noise_power, top, neighbors, weight, grad, hess,
                   noisy, bias, fa, fb, ca, cb):
    """One query's YetiRank gradient/Hessian into ``grad``/``hess`` (zeroed here); ``noisy`` scratch (m,).

    ``top`` < 0 or ``neighbors`` < 0: all positions. ``noise`` ``NO_NOISE`` ranks once (every ranking is
    the noise-free one).
    """
    m = s.shape[0]
    for i in range(m):
        grad[i] = 0.0
        hess[i] = 0.0
    if m <= 1:
        return
    kk = m if top < 0 else min(top, m)
    nb = m if neighbors < 0 else neighbors
    disc = np.zeros(m)
    for p in range(kk):
        disc[p] = 1.0 / position_log2(p)
    idcg = 1.0
    if mode == NDCG:
        ideal = np.sort(y)[::-1]
        idcg = 0.0
        for p in range(kk):
            idcg += ideal[p] / position_log2(p)
        if idcg <= 0.0:
            return  # all labels 0: no pair has a weight
    rankings = 1 if noise == NO_NOISE else permutations
    scale = weight / rankings
    for r in range(rankings):
        if noise == GUMBEL:
            noisy_scores(s, key, r, noisy)
        elif noise == GAUSS:
            gauss_scores(s, key, r, noise_power, noisy)
        else:
            noisy[:] = s
        ranking_pairs(s, y, stable_order_desc(noisy), mode, decay, kk, nb, disc, idcg, scale, grad, hess, bias, fa,
                      fb, ca, cb)


@njit(cache=True)
def yetirank_driver(scores, labels, group_ptr, weights, seed, rnd, permutations, decay, mode, noise, noise_power,
                    top, neighbors, grad, hess):
    """All queries of one round (:func:`yetirank_driver_biased` without position bias)."""
    none = np.zeros(0)
    yetirank_driver_biased(scores, labels, group_ptr, weights, seed, rnd, permutations, decay, mode, noise,
                           noise_power, top, neighbors, grad, hess, BIAS_NONE, none, none, none, none)


@njit(cache=True, parallel=True)
def yetirank_driver_biased(scores, labels, group_ptr, weights, seed, rnd, permutations, decay, mode, noise,
                           noise_power, top, neighbors, grad, hess, bias, fa, fb, ca, cb):
    """All queries of one round (``prange``; each writes only its own rows; draws keyed by query), with
    position-bias factors (``bias``, per-row ``fa``/``fb`` and cost sums ``ca``/``cb``, or empty arrays
    with ``BIAS_NONE``: :func:`~.position_bias.debias`)."""
    biased = bias != BIAS_NONE
    for q in prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        noisy = np.empty(b - a)
        lo = a if biased else 0
        hi = b if biased else 0
        yetirank_query(scores[a:b], labels[a:b], query_key(seed, rnd, np.uint64(q)), permutations, decay, mode,
                       noise, noise_power, top, neighbors, weights[q], grad[a:b], hess[a:b], noisy, bias,
                       fa[lo:hi], fb[lo:hi], ca[lo:hi], cb[lo:hi])
