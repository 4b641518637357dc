"""Ranking pieces every kernel shares, each written once: stable order, cut-off, discount, gains, IDCG.

Conventions (one place; every metric, lambda and engine-parity kernel uses them):

* ranking: scores descending; ties keep input order (a stable sort), as LightGBM's
  ``std::stable_sort`` and XGBoost's ``StableSort`` do;
* positions are 0-based inside kernels; the discount of position ``r`` is ``D_r = 1/log2(r + 2)``,
  i.e. ``1/log2(rank + 1)`` for the 1-based rank (Järvelin & Kekäläinen 2002);
* ``k <= 0`` or ``k > n`` means the whole list;
* gains are computed per document in Python (:func:`document_gains`) and passed to the kernels as
  float64 arrays, so one kernel serves exponential ``2**l - 1``, linear ``l`` and table gains.
"""

import math

import numpy as np
from numba import njit

from .._core.config import FLOAT, kernel_array

_INSERTION_MAX = 48  # below this an insertion sort beats argsort's negation copy and merge buffers
#: above this many scores the radix sort beats numba's merge sort (2026-11-27, 2 cores, one thread,
#: 20,000 normal scores in queries of n, ms in all: n = 256 equal at 1.2; 512: 0.65 against 1.48;
#: 1,000: 0.59 against 1.61; 128: 1.67 against 0.95)
_RADIX_MIN = 256
_RADIX_BITS = 11  # at most this many key bits per pass: 2,048 counters, six passes for a full key


@njit(cache=True)
def stable_order_desc(s):
    """Indices that sort ``s`` descending, ties in input order (stable).

    The permutation of ``np.argsort(-s, kind="mergesort")`` (``-0.0`` ties ``0.0``; NaN last): an
    insertion sort for short lists; above ``_INSERTION_MAX`` scores a bucket sort by value
    (:func:`_bucket_order_desc`, O(n) expected) when the scores are finite, else numba's merge sort
    (up to ``_RADIX_MIN`` scores) or a least-significant-digit radix sort of the scores' bit patterns
    (:func:`_radix_order_desc`). A stable order is unique, so every path gives the same indices.
    """
    n = s.shape[0]
    if n > _INSERTION_MAX:
        order = _bucket_order_desc(s)
        if order.shape[0] == n:
            return order
        if n > _RADIX_MIN:
            return _radix_order_desc(s, 64)
        return np.argsort(-s, kind="mergesort")
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        v = s[i]
        j = i
        # strict comparison: an equal score never overtakes an earlier one (stability)
        while j > 0 and s[order[j - 1]] < v:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    return order


#: a bucket of :func:`_bucket_order_desc` up to this size is finished by insertion, a larger one by the
#: merge sort (worst case O(n log n) however the scores bunch)
_BUCKET_INSERTION = 24


@njit(cache=True)
def _bucket_order_desc(s):
    """:func:`stable_order_desc` of finite scores by a bucket sort on their values
    (:func:`bucket_rank`); an empty array when a score is NaN or infinite or the range ``max − min``
    overflows (the caller sorts otherwise)."""
    n = s.shape[0]
    order = np.empty(n, dtype=np.int64)
    if not bucket_rank(s, order, np.empty(n), np.empty(2 * n + 1, dtype=np.int64)):
        return np.empty(0, dtype=np.int64)
    return order


@njit(cache=True, inline="always")
def _insert_desc(order, sr, lo, j, d, v):
    """One step of the insertion sorts of :func:`bucket_rank` and :func:`rank_desc`: index ``d`` with
    score ``v`` placed at the last position ``>= lo`` at or before ``j`` whose predecessor's score is
    not below ``v``, the entries of ``order``/``sr`` it passes shifted one to the right. Strict
    comparison: an equal score never overtakes an earlier one (stability)."""
    while j > lo and sr[j - 1] < v:
        order[j] = order[j - 1]
        sr[j] = sr[j - 1]
        j -= 1
    order[j] = d
    sr[j] = v


@njit(cache=True)
def bucket_rank(s, order, sr, work):
    """Fill ``order`` with :func:`stable_order_desc` ``(s)`` and ``sr`` with the scores in that order, by a
    bucket sort on their values, into the caller's arrays (``work``: at least ``2n + 1`` int64); returns
    ``False``, the arrays undefined, when a score is NaN or infinite or the range ``max − min`` overflows
    (the caller sorts otherwise).

    Score ``v`` goes to bucket ``int((max − v) · (n − 1)/(max − min))``, at most ``n − 1``: rounded
    subtraction, multiplication by a positive factor and truncation are each monotone, so a higher
    score never lands in a later bucket, and equal scores (``-0.0`` and ``0.0`` included) share one.
    The buckets are filled in input order (a counting sort: stable), each score beside its index, then
    each bucket is ordered descending, ties in input order: by insertion when small, by numba's merge
    sort when larger, not at all when all its scores are equal (the early rounds of boosting: few
    distinct scores). The scores travel with their indices, so the buckets are sorted on contiguous
    memory and the caller's rank-order copy of the scores comes free. O(n) for scores spread like any
    continuous distribution; bunched scores fall back to the merge sort per bucket.
    """
    n = s.shape[0]
    hi = s[0]
    lo = s[0]
    for i in range(n):
        v = s[i]
        if not (v > -np.inf and v < np.inf):  # NaN or infinite
            return False
        if v > hi:
            hi = v
        if v < lo:
            lo = v
    span = hi - lo
    if span == 0.0:
        for i in range(n):
            order[i] = i
            sr[i] = s[i]
        return True
    scale = (n - 1) / span
    if not (span < np.inf and scale < np.inf):  # the range overflows, or is too small to divide by
        return False
    start = work[:n + 1]
    bucket = work[n + 1:2 * n + 1]
    for b in range(n + 1):
        start[b] = 0
    for i in range(n):
        b = min(int((hi - s[i]) * scale), n - 1)
        bucket[i] = b
        start[b + 1] += 1
    largest = 0
    for b in range(n):
        largest = max(largest, start[b + 1])
        start[b + 1] += start[b]
    for i in range(n):
        b = bucket[i]
        j = start[b]
        order[j] = i
        sr[j] = s[i]
        start[b] = j + 1
    if largest <= _BUCKET_INSERTION:
        # one insertion sort over the whole array: a score only moves past strictly smaller ones, and
        # every score of an earlier bucket is strictly greater, so none leaves its bucket and this is
        # the per-bucket insertion below without its per-bucket branches (most buckets hold 0–2 scores)
        for i in range(1, n):
            if sr[i - 1] < sr[i]:
                _insert_desc(order, sr, 0, i, order[i], sr[i])
        return True
    # start[b] is now bucket b's end (and bucket b's start is start[b − 1], 0 for b = 0)
    lo_b = 0
    for b in range(n):
        end = start[b]
        size = end - lo_b
        if size > 1:
            first = sr[lo_b]
            equal = True
            for j in range(lo_b + 1, end):
                if sr[j] != first:
                    equal = False
                    break
            if not equal:
                if size <= _BUCKET_INSERTION:
                    for i in range(lo_b + 1, end):
                        _insert_desc(order, sr, lo_b, i, order[i], sr[i])
                else:
                    # the bucket's indices ascend, so the merge sort keeps ties in input order
                    perm = np.argsort(-sr[lo_b:end], kind="mergesort")
                    sub = order[lo_b:end].copy()
                    val = sr[lo_b:end].copy()
                    for j in range(size):
                        order[lo_b + j] = sub[perm[j]]
                        sr[lo_b + j] = val[perm[j]]
        lo_b = end
    return True


@njit(cache=True, inline="always")
def rank_desc(s, order, sr, work):
    """:func:`stable_order_desc` ``(s)`` into ``order`` and the scores in that order into ``sr``, without
    allocating for finite scores (``work``: at least ``2n + 1`` int64): insertion for short lists, else
    :func:`bucket_rank`, else (a non-finite score, an overflowing range) :func:`stable_order_desc`."""
    n = s.shape[0]
    if n <= _INSERTION_MAX:
        for i in range(n):
            _insert_desc(order, sr, 0, i, i, s[i])
        return
    if bucket_rank(s, order, sr, work):
        return
    other = stable_order_desc(s)
    for r in range(n):
        order[r] = other[r]
        sr[r] = s[other[r]]


@njit(cache=True)
def _radix_order_desc(s, max_passes):
    """:func:`stable_order_desc` by an LSD radix sort, O(n) per pass; numba's merge sort instead
    when the keys need more than ``max_passes`` passes.

    Each float64 becomes a uint64 key whose ascending order is the scores' descending order: the
    sign bit set (negative) keeps its bits, otherwise every bit but the sign is flipped; ``s + 0.0``
    first turns ``-0.0`` into ``0.0`` so the two tie. Only the bits that differ between keys are
    sorted on, in passes of at most ``_RADIX_BITS`` bits (graded gains differ in a dozen bits: one or
    two passes). Each pass is a stable counting sort, so equal keys keep input order. A NaN falls
    back to the merge sort, which puts it last.
    """
    n = s.shape[0]
    bits = (s + 0.0).view(np.uint64)
    sign = np.uint64(0x8000000000000000)
    rest = np.uint64(0x7FFFFFFFFFFFFFFF)
    key = np.empty(n, dtype=np.uint64)
    for i in range(n):
        if s[i] != s[i]:
            return np.argsort(-s, kind="mergesort")
        b = bits[i]
        key[i] = b if b & sign else b ^ rest
    differ = np.uint64(0)
    for i in range(n):
        differ |= key[i] ^ key[0]
    order = np.arange(n)
    if differ == 0:
        return order
    lo = 0
    while not (differ >> np.uint64(lo)) & np.uint64(1):
        lo += 1
    hi = 63
    while not (differ >> np.uint64(hi)) & np.uint64(1):
        hi -= 1
    passes = (hi - lo + _RADIX_BITS) // _RADIX_BITS
    if passes > max_passes:
        return np.argsort(-s, kind="mergesort")
    width = (hi - lo + passes) // passes  # ceil(span / passes): passes of equal width
    mask = np.uint64((1 << width) - 1)
    counts = np.zeros((passes, 1 << width), dtype=np.int64)
    for i in range(n):
        k = key[i] >> np.uint64(lo)
        for p in range(passes):
            counts[p, (k >> np.uint64(p * width)) & mask] += 1
    key2 = np.empty(n, dtype=np.uint64)
    order2 = np.empty(n, dtype=np.int64)
    for p in range(passes):
        start = counts[p]
        total = 0
        for d in range(start.shape[0]):
            c = start[d]
            start[d] = total
            total += c
        shift = np.uint64(lo + p * width)
        for i in range(n):
            k = key[i]
            d = (k >> shift) & mask
            j = start[d]
            start[d] = j + 1
            key2[j] = k
            order2[j] = order[i]
        key, key2 = key2, key
        order, order2 = order2, order
    return order


#: values below this (whole numbers >= 0: graded labels, their ``2**l − 1`` gains up to grade 8) are
#: ordered by counting in :func:`stable_order_asc` and :func:`ideal_dcg`
_COUNTING_LABELS = 256


@njit(cache=True)
def _counting_order_asc(v):
    """The stable ascending order of ``v`` by counting, O(n + 256), when every value is a whole number
    in ``[0, 256)``; otherwise an empty array (the callers sort instead)."""
    n = v.shape[0]
    counts = np.zeros(_COUNTING_LABELS + 1, dtype=np.int64)
    for i in range(n):
        x = v[i]
        if not (x >= 0.0 and x < _COUNTING_LABELS and x == math.floor(x)):
            return np.empty(0, dtype=np.int64)
        counts[int(x) + 1] += 1
    for c in range(_COUNTING_LABELS):
        counts[c + 1] += counts[c]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        c = int(v[i])
        order[counts[c]] = i
        counts[c] += 1
    return order


@njit(cache=True)
def stable_order_asc(v):
    """Indices that sort ``v`` ascending, ties in input order (stable): ``np.argsort(v, kind="mergesort")``.

    Graded labels (whole numbers in ``[0, 256)``) are ordered by counting (:func:`_counting_order_asc`),
    the same permutation as the merge sort; anything else falls back to the merge sort.
    """
    order = _counting_order_asc(v)
    if order.shape[0] == v.shape[0]:
        return order
    return np.argsort(v, kind="mergesort")


@njit(cache=True)
def cutoff(n, k):
    """The number of positions a metric@k looks at: ``min(k, n)``, ``n`` when ``k <= 0``."""
    if k <= 0 or k > n:
        return n
    return k


@njit(cache=True)
def position_log2(r):
    """``log2(r + 2)``, the DCG denominator of 0-based position ``r``, with libm's scalar ``log2``:
    the one home of the discount formula (:func:`discount_table` is its reciprocal; kernels that
    divide by it, as CatBoost and YetiRank do, call this).

    libm's ``log2`` is the one LightGBM and XGBoost compute their tables with, and Python's
    ``math.log2`` calls it too (equal bit for bit, checked in the tests), so a kernel gives the same
    bits compiled and as plain Python (``NUMBA_DISABLE_JIT``). numpy's ``np.log2`` is not that
    function outside numba (its own loops may differ by one ulp, e.g. at ``r = 1619``), so nothing
    here uses it.
    """
    return math.log2(2.0 + r)


@njit(cache=True)
def position_log2_table(n):
    """``L[r] = log2(r + 2)`` (:func:`position_log2`) for 0-based positions ``r < n`` (at least one)."""
    out = np.empty(max(n, 1), dtype=np.float64)
    for r in range(out.shape[0]):
        out[r] = position_log2(r)
    return out


@njit(cache=True)
def discount_table(n):
    """``D[r] = 1/log2(r + 2)`` for 0-based positions ``r < n`` (at least one): the reciprocal of
    :func:`position_log2_table`, shared by the exact kernels and the engine-parity presets."""
    return 1.0 / position_log2_table(n)


#: the longest discount table computed so far in this process (:func:`discount_prefix`)
_DISCOUNTS = [np.empty(0)]


def discount_prefix(n):
    """:func:`discount_table` ``(n)`` as the first entries of the longest table computed so far in this
    process (each entry depends on its position only, so a prefix has the same bits): a 20,000-document
    query no longer recomputes 20,000 logarithms every call. Kernels only read it; callers must too."""
    n = max(int(n), 1)
    table = _DISCOUNTS[0]
    if table.shape[0] < n:
        table = discount_table(max(n, 2 * table.shape[0]))
        _DISCOUNTS[0] = table
    return table[:n]


@njit(cache=True)
def dcg_in_order(values, order, kk, disc):
    """``sum_{r < kk} values[order[r]] * D_r``: the DCG of the first ``kk`` positions."""
    total = 0.0
    for r in range(kk):
        total += values[order[r]] * disc[r]
    return total


@njit(cache=True)
def ideal_dcg(gains, k, disc):
    """IDCG@k: the DCG@k of ``gains`` sorted descending (0 when every gain is 0).

    The descending sequence of the gains is unique, so any way of producing it gives the same sum
    bit for bit. Whole-number gains below 256 (``2**l − 1`` up to grade 8, linear grades) are ordered
    by counting (:func:`_counting_order_asc`, read backwards); other gains are sorted: above the
    insertion sort's range by the radix sort when it needs at most two passes, by
    :func:`stable_order_desc` otherwise."""
    n = gains.shape[0]
    kk = cutoff(n, k)
    total = 0.0
    asc = _counting_order_asc(gains)
    if asc.shape[0] == n:
        for r in range(kk):
            total += gains[asc[n - 1 - r]] * disc[r]
        return total
    if n > _INSERTION_MAX and n <= _RADIX_MIN:
        ideal = gains[_radix_order_desc(gains, 2)]
    else:
        ideal = gains[stable_order_desc(gains)]
    for r in range(kk):
        total += ideal[r] * disc[r]
    return total


def exp_gain(labels):
    """``2**l - 1``, the exponential gain (Burges et al. 2005); overflow gives inf for the caller to name."""
    with np.errstate(over="ignore"):
        return np.exp2(labels) - 1.0


def gain_table(kind="exp", label_gain=None, max_label=None):
    """Return the per-grade gain table ``G[label]`` as float64.

    ``kind="exp"``: ``2**label - 1``; ``"linear"``: ``label``; ``label_gain``: a user table
    (overrides ``kind``; must be finite and non-negative). ``max_label`` sizes the generated table
    (default 31 grades above 0, LightGBM's default table).
    """
    if label_gain is not None:
        g = kernel_array(np.asarray(label_gain, dtype=FLOAT).ravel())  # a read-only table compiles nothing new
        if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ValueError("label_gain must be a non-empty table of finite, non-negative gains")
        return g
    top = int(max_label) if max_label is not None else 30
    grades = np.arange(top + 1, dtype=FLOAT)
    if kind == "exp":
        return exp_gain(grades)
    if kind == "linear":
        return grades
    raise ValueError(f"gain must be 'exp' or 'linear' (or pass label_gain), got {kind!r}")


def document_gains(labels, kind="exp", label_gain=None):
    """Per-document gains for validated float64 ``labels`` (non-negative; whole for a table).

    Raises ``ValueError`` when a label has no entry in ``label_gain``.
    """
    if label_gain is None:
        if kind == "exp":
            return exp_gain(labels)
        if kind == "linear":
            return labels.copy()
        raise ValueError(f"gain must be 'exp' or 'linear' (or pass label_gain), got {kind!r}")
    table = gain_table(label_gain=label_gain)
    if labels.size and labels.max() >= table.shape[0]:
        i = int(np.argmax(labels >= table.shape[0]))
        raise ValueError(
            f"label {labels[i]:g} at row {i} has no entry in label_gain (table has {table.shape[0]} grades)"
        )
    return table[labels.astype(np.int64)]
