"""ERR@k (Chapelle, Metzler, Zhang & Grinspan 2009) and ΔERR@k by Burges' prefix products.

``values`` are the satisfaction probabilities ``R = (2**l − 1) / 2**max_label``.

* ``ERR@k = sum_{r<k} R_r/(r+1) · P_r`` with ``P_r = prod_{t<r}(1 − R_t)``;
* swapping positions ``a < b`` (Burges, MSR-TR-2010-82, §3, in its division-free form): with
  ``Q = prod_{a<t<b}(1 − R_t)`` and ``S = sum_{a<t<min(b,k)} prod_{a<u<t}(1 − R_u) R_t/(t+1)``, both
  carried along the inner loop over ``b`` (:func:`err_advance`), so one query costs
  ``O(n · min(n, k))`` instead of the naive ``O(n² k)``:
  ``ΔERR = (R_b − R_a) P_a/(a+1) + P_a (R_a − R_b) S + [b<k] P_a Q (R_a − R_b)/(b+1)``.
* one pair at a time (the sampled pairs of ``pair_method="mean"``, :func:`err_delta_any`): since
  ``P_t = P_{a+1} prod_{a<u<t}(1 − R_u)``, ``P_a S = (V_{a+1} − V_b)/(1 − R_a)`` and
  ``P_a Q = P_b/(1 − R_a)`` with the suffix sums ``V_t = sum_{t<=u<k} P_u R_u/(u+1)``
  (:func:`err_suffix`), O(1) per pair. ``R < 1`` for every grade (``R = (2^l − 1)/2^max``); where
  ``1 − R_a`` rounds to 0 (grades above 52) the span is walked instead (:func:`err_advance`).
  Suffix rather than prefix sums: ``V_{a+1} − V_b`` errs by ``O(eps V_b) <= O(eps P_b log n)``, below
  the pair's first term, where a prefix difference would err by ``eps`` ERR for every deep pair.
"""

from numba import njit


@njit(cache=True)
def err_value(values, order, kk):
    """ERR of the ranking ``order`` over its first ``kk`` positions."""
    total = 0.0
    not_stopped = 1.0
    for r in range(kk):
        R = values[order[r]]
        total += not_stopped * R / (r + 1.0)
        not_stopped *= 1.0 - R
    return total


@njit(cache=True)
def err_prefix(vr, pref):
    """``pref[r] = P_r`` for the values in rank order ``vr`` (``pref`` has ``n + 1`` slots).

    Returns whether any document has ``R > 0`` (else every ΔERR is 0).
    """
    n = vr.shape[0]
    pref[0] = 1.0
    any_rel = False
    for r in range(n):
        pref[r + 1] = pref[r] * (1.0 - vr[r])
        if vr[r] > 0.0:
            any_rel = True
    return any_rel


@njit(cache=True)
def err_delta(ra, rb, a, b, kk, p_a, q_prod, s_sum):
    """``|ΔERR@k|`` of swapping positions ``a < b``; ``p_a = P_a``, ``q_prod = Q``, ``s_sum = S``."""
    dz = (rb - ra) * p_a / (a + 1.0) + p_a * (ra - rb) * s_sum
    if b < kk:
        dz += p_a * q_prod * (ra - rb) / (b + 1.0)
    return abs(dz)


@njit(cache=True)
def err_advance(rb, b, kk, q_prod, s_sum):
    """``(Q, S)`` once position ``b`` joins the span between ``a`` and the next ``b``."""
    if b < kk:
        s_sum += q_prod * rb / (b + 1.0)
    return q_prod * (1.0 - rb), s_sum


@njit(cache=True)
def err_suffix(vr, pref, kk, suffix):
    """``suffix[t] = V_t = sum_{t<=u<kk} P_u R_u/(u+1)`` (``n + 1`` slots; ``pref`` from :func:`err_prefix`)."""
    n = vr.shape[0]
    suffix[n] = 0.0
    for t in range(n - 1, -1, -1):
        suffix[t] = suffix[t + 1] + (pref[t] * vr[t] / (t + 1.0) if t < kk else 0.0)


@njit(cache=True)
def err_delta_any(vr, a, b, kk, pref, suffix):
    """``|ΔERR@k|`` of swapping positions ``a < b`` from the prefix and suffix tables, O(1) (module docstring)."""
    ra = vr[a]
    rb = vr[b]
    keep = 1.0 - ra
    if keep == 0.0:  # R_a rounds to 1: P vanishes past a, walk the span as the full loop does
        q_prod = 1.0
        s_sum = 0.0
        for t in range(a + 1, b):
            q_prod, s_sum = err_advance(vr[t], t, kk, q_prod, s_sum)
        return err_delta(ra, rb, a, b, kk, pref[a], q_prod, s_sum)
    dz = (rb - ra) * pref[a] / (a + 1.0) + (ra - rb) * (suffix[a + 1] - suffix[b]) / keep
    if b < kk:
        dz += pref[b] * (ra - rb) / (keep * (b + 1.0))
    return abs(dz)
