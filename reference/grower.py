"""Growing one regression tree on binned data with a leaf limit: best-first, breadth-first or depth-first."""

import numba
import numpy as np
from numba import njit, prange

from . import histogram as _hist
from .binning import WORD_FEATURES, pack_bins
from .histogram import (
    N_BINS,
    add_word_pairs,
    as_words,
    build_feature_block,
    build_histogram,
    build_pair_histograms,
    new_histogram,
    ordered_gradients,
    subtract_features,
)
from .splitting import (
    CRITERIA,
    OLE,
    OLE_EXACT,
    best_bin,
    exact_gain_bounds,
    find_best_split,
    pick,
)

#: One record per node; leaves have ``feature == -1``. ``bin``: rows with ``binned <= bin`` go
#: left (NaN, bin 255, always right); ``threshold`` is the same split on raw values.
NODE_DTYPE = np.dtype([
    ("feature", np.int32), ("bin", np.int32), ("threshold", np.float64), ("left", np.int32),
    ("right", np.int32), ("value", np.float64), ("gain", np.float64), ("count", np.int64),
    ("sum_g", np.float64), ("sum_h", np.float64), ("depth", np.int32),
])
GROWTH = ("best_first", "breadth_first", "depth_first")


@njit(cache=True)
def _partition(binned, rows, feature, b):
    """``rows`` split by ``binned[r, feature] <= b`` into (left, right), each in ``rows``' order.

    Branch-free: the side a row goes to is an unpredictable coin on most splits, and a mispredicted
    branch costs more than writing each row to both sides and advancing one of them (a 34,000-row
    root 0.35× the time of the branching loop, 8,000 scattered rows 0.90×; the same arrays). Each side is a view
    of a buffer one longer than it, whose last slot takes the writes that fall past its end."""
    n = rows.shape[0]
    col = binned[:, feature]
    n_left = 0
    for t in range(n):
        n_left += col[rows[t]] <= b
    left = np.empty(n_left + 1, dtype=rows.dtype)
    right = np.empty(n - n_left + 1, dtype=rows.dtype)
    a = 0
    c = 0
    for t in range(n):
        r = rows[t]
        go = col[r] <= b
        left[a] = r
        right[c] = r
        a += go
        c += 1 - go
    return left[:n_left], right[:n - n_left]


@njit(cache=True, inline="always")
def _block_sum(v, rows, lo, n):
    """NumPy's pairwise sum of ``v[rows[lo:lo + n]]`` for ``n <= 128`` (``pairwise_sum`` of
    NumPy's ``loops_utils.h.src``): fewer than 8 terms in a row; otherwise eight interleaved
    partial sums combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += v[rows[i]]
        return res
    r0, r1, r2, r3 = v[rows[lo]], v[rows[lo + 1]], v[rows[lo + 2]], v[rows[lo + 3]]
    r4, r5, r6, r7 = v[rows[lo + 4]], v[rows[lo + 5]], v[rows[lo + 6]], v[rows[lo + 7]]
    m = n - n % 8
    for i in range(lo + 8, lo + m, 8):
        r0 += v[rows[i]]
        r1 += v[rows[i + 1]]
        r2 += v[rows[i + 2]]
        r3 += v[rows[i + 3]]
        r4 += v[rows[i + 4]]
        r5 += v[rows[i + 5]]
        r6 += v[rows[i + 6]]
        r7 += v[rows[i + 7]]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(lo + m, lo + n):
        res += v[rows[i]]
    return res


@njit(cache=True)
def _pairwise_sum(v, rows):
    """NumPy's pairwise sum of ``v[rows]``: above 128 terms, the sum of the two halves' sums, the
    first half ``n // 2`` rounded down to a multiple of 8, each summed so (:func:`_block_sum` at
    the leaves). NumPy recurses; this walks the same tree with a stack of its own (numba's on-disk
    cache breaks recursive functions: numba issue #6061)."""
    frame_lo = np.empty(128, dtype=np.int64)
    frame_n = np.empty(128, dtype=np.int64)
    frame_done = np.empty(128, dtype=np.bool_)  # both halves summed: add them
    vals = np.empty(128)
    frame_lo[0], frame_n[0], frame_done[0] = 0, rows.shape[0], False
    sp = 1
    vp = 0
    while sp > 0:
        sp -= 1
        lo, n, done = frame_lo[sp], frame_n[sp], frame_done[sp]
        if done:
            vals[vp - 2] = vals[vp - 2] + vals[vp - 1]
            vp -= 1
        elif n <= 128:
            vals[vp] = _block_sum(v, rows, lo, n)
            vp += 1
        else:
            n2 = n // 2
            n2 -= n2 % 8
            # popped in reverse: the first half, the second, then their sum
            frame_lo[sp], frame_n[sp], frame_done[sp] = lo, n, True
            frame_lo[sp + 1], frame_n[sp + 1], frame_done[sp + 1] = lo + n2, n - n2, False
            frame_lo[sp + 2], frame_n[sp + 2], frame_done[sp + 2] = lo, n2, False
            sp += 3
    return vals[0]


@njit(cache=True)
def gathered_sum(v, rows):
    """``float(v[rows].sum())`` to the bit (NumPy's reduction starts from its identity, 0.0, and adds
    the contiguous gathered array's pairwise sum), without the gathered copy or a NumPy call: the
    leaf values' bits come from these sums."""
    return 0.0 + _pairwise_sum(v, rows)


@njit(cache=True)
def _partition_sums(binned, rows, feature, b, g, h, sums):
    """:func:`_partition` and each side's ``(Σ g, Σ h, count)`` into ``sums[0]`` (left) and
    ``sums[1]`` (right), the sums as :func:`gathered_sum` makes them: one call a split where the
    grower made nine (the partition, then a gather and a NumPy sum per side and column)."""
    left, right = _partition(binned, rows, feature, b)
    for k, side in enumerate((left, right)):
        sums[k, 0] = gathered_sum(g, side)
        sums[k, 1] = gathered_sum(h, side)
        sums[k, 2] = side.shape[0]
    return left, right


@njit(cache=True)
def _label_pairs(member, pi, pj, t0, t1, side, counts):
    """``side[t]`` for the pairs ``t0 <= t < t1``: 0 both documents marked in ``member``, 1 neither,
    2 one each; ``counts[k]`` += the pairs labelled ``k``."""
    for t in range(t0, t1):
        a = member[pi[t]]
        b = member[pj[t]]
        k = 0 if (a and b) else (2 if (a or b) else 1)
        side[t] = k
        counts[k] += 1


@njit(cache=True)
def _new_sides(counts, pi, pj, ph):
    """Empty ``(i, j, h)`` × 3 for ``counts[k]`` pairs of each label ``k``."""
    return (np.empty(counts[0], pi.dtype), np.empty(counts[0], pj.dtype), np.empty(counts[0], ph.dtype),
            np.empty(counts[1], pi.dtype), np.empty(counts[1], pj.dtype), np.empty(counts[1], ph.dtype),
            np.empty(counts[2], pi.dtype), np.empty(counts[2], pj.dtype), np.empty(counts[2], ph.dtype))


@njit(cache=True)
def _copy_pairs(pi, pj, ph, side, t0, t1, c0, c1, c2, out):
    """Copy the pairs ``t0 <= t < t1`` in order into ``out`` (:func:`_new_sides`) by label, those
    labelled ``k`` from place ``ck`` on."""
    i0, j0, h0, i1, j1, h1, i2, j2, h2 = out
    for t in range(t0, t1):
        k = side[t]
        if k == 0:
            i0[c0], j0[c0], h0[c0] = pi[t], pj[t], ph[t]
            c0 += 1
        elif k == 1:
            i1[c1], j1[c1], h1[c1] = pi[t], pj[t], ph[t]
            c1 += 1
        else:
            i2[c2], j2[c2], h2[c2] = pi[t], pj[t], ph[t]
            c2 += 1


@njit(cache=True)
def _pair_sides(member, pi, pj, ph):
    """The pairs with both documents marked in ``member``, with neither, and crossing (one each):
    nine arrays ``(i, j, h)`` × 3, each keeping the pairs' order."""
    n = pi.shape[0]
    side = np.empty(n, dtype=np.int8)
    counts = np.zeros(3, dtype=np.int64)
    _label_pairs(member, pi, pj, 0, n, side, counts)
    out = _new_sides(counts, pi, pj, ph)
    _copy_pairs(pi, pj, ph, side, 0, n, 0, 0, 0, out)
    return out


#: Pairs per task of :func:`_pair_sides_parallel`: a fixed split, so that nothing depends on the
#: thread count.
PAIR_CHUNK = 1 << 14


@njit(cache=True, parallel=True)
def _pair_sides_parallel(member, pi, pj, ph):
    """:func:`_pair_sides` (the same arrays) in two parallel passes over chunks of ``PAIR_CHUNK``
    pairs: the first labels each pair and counts the labels per chunk, the second copies each
    chunk's pairs from its offset (the counts of the chunks before it), so every output is in the
    pairs' order at any thread count."""
    n = pi.shape[0]
    n_chunks = max(1, (n + PAIR_CHUNK - 1) // PAIR_CHUNK)
    side = np.empty(n, dtype=np.int8)
    counts = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        _label_pairs(member, pi, pj, c * PAIR_CHUNK, min(n, (c + 1) * PAIR_CHUNK), side, counts[c])
    offsets = np.empty((n_chunks, 3), dtype=np.int64)
    total = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        for k in range(3):
            offsets[c, k] = total[k]
            total[k] += counts[c, k]
    out = _new_sides(total, pi, pj, ph)
    for c in prange(n_chunks):
        _copy_pairs(pi, pj, ph, side, c * PAIR_CHUNK, min(n, (c + 1) * PAIR_CHUNK), offsets[c, 0], offsets[c, 1],
                    offsets[c, 2], out)
    return out


#: Pairs from which, with more than one thread, :func:`_pair_sides_parallel` partitions them: below, the
#: chunk bookkeeping costs more than the second thread returns (2 threads: 400 K pairs 4.2 against 6.3 ms,
#: 100 K 1.26 against 1.55, 30 K 0.28 against 0.26; at 1 thread the one-pass loop is 15–30 % faster).
PARALLEL_PAIRS = 1 << 16


def _split_pairs(member, pairs):
    """The pairs inside the marked rows, outside them, and crossing: three ``(i, j, h)`` tuples."""
    parallel = pairs[0].shape[0] >= PARALLEL_PAIRS and numba.get_num_threads() > 1
    kernel = _pair_sides_parallel if parallel else _pair_sides
    out = kernel(member, pairs[0], pairs[1], pairs[2])
    return out[0:3], out[3:6], out[6:9]


@njit(cache=True)
def _subtract_pair_rows(out_max, out_min, parent_max, parent_min, small_max, small_min, cross_max, cross_min,
                        features):
    """``out[f] = (parent[f] − small[f]) − crossing[f]`` for each ``f`` of ``features``, for the pair
    histograms by larger (``_max``) and by smaller bin (``_min``): a subtracted pair set's rows in one
    call, where NumPy's fancy indexing made three temporaries a side (the same operations in the
    same order, so the same bits)."""
    for f in features:
        for b in range(out_max.shape[1]):
            out_max[f, b] = (parent_max[f, b] - small_max[f, b]) - cross_max[f, b]
            out_min[f, b] = (parent_min[f, b] - small_min[f, b]) - cross_min[f, b]


@njit(cache=True)
def _heavy_pairs(pi, pj, ph, threshold):
    """The pairs with ``h_ij >= threshold``, in their order."""
    n = 0
    for t in range(ph.shape[0]):
        if ph[t] >= threshold:
            n += 1
    i, j, h = np.empty(n, pi.dtype), np.empty(n, pj.dtype), np.empty(n, ph.dtype)
    n = 0
    for t in range(ph.shape[0]):
        if ph[t] >= threshold:
            i[n], j[n], h[n] = pi[t], pj[t], ph[t]
            n += 1
    return i, j, h


@njit(cache=True)
def _abs_sum(rows, w):
    total = 0.0
    for t in range(rows.shape[0]):
        total += abs(w[rows[t]])
    return total


@njit(cache=True)
def _crossing_weights(pi, pj, ph, out, mark):
    """``out[i] = Σ h_ij`` over the given pairs of each document ``i`` in them; returns those
    documents (``mark``: a False scratch array, left False)."""
    n_docs = 0
    docs = np.empty(2 * pi.shape[0], dtype=np.int64)
    for t in range(pi.shape[0]):
        for d in (pi[t], pj[t]):
            if not mark[d]:
                mark[d] = True
                out[d] = 0.0
                docs[n_docs] = d
                n_docs += 1
    for t in range(pi.shape[0]):
        out[pi[t]] += ph[t]
        out[pj[t]] += ph[t]
    for t in range(n_docs):
        mark[docs[t]] = False
    return docs[:n_docs]


@njit(cache=True)
def _doc_weights(rows, h, pi, pj, ph, out):
    """``out[i] = h_i − Σ_j h_ij`` for ``i`` in ``rows`` over the given pairs (all inside ``rows``)."""
    for t in range(rows.shape[0]):
        out[rows[t]] = h[rows[t]]
    for t in range(pi.shape[0]):
        out[pi[t]] -= ph[t]
        out[pj[t]] -= ph[t]


#: Features a task of :func:`_split_children` builds, subtracts and searches: one word of
#: :func:`reference.binning.pack_bins`, and 8 features' independent chains of additions hide more of
#: the rows' latency than 4 (the 29 splits of real trees, replayed: 0.93× the time at 1 thread).
SPLIT_BLOCK = WORD_FEATURES


@njit(cache=True, parallel=True)
def _split_kernel(words, rows, g, h, small_hist, parent_hist, n_bins, feature_mask, sums, search, criterion, lam,
                  min_data, min_hess, no_pairs, gains, bins):
    """:func:`_split_children` on the packed words."""
    og, oh = ordered_gradients(rows, g, h)
    n_features = small_hist.shape[0]
    for k in prange((n_features + SPLIT_BLOCK - 1) // SPLIT_BLOCK):
        f0 = k * SPLIT_BLOCK
        f1 = min(f0 + SPLIT_BLOCK, n_features)
        build_feature_block(words, rows, og, oh, small_hist, f0, f1)
        subtract_features(parent_hist, small_hist, f0, f1)
        for f in range(f0, f1):
            for c in range(2):
                gains[c, f] = -np.inf
                bins[c, f] = -1
                if search[c] and feature_mask[f]:
                    hist = small_hist if c == 0 else parent_hist
                    gain, b = best_bin(hist, n_bins, np.int64(f), sums[c, 0], sums[c, 1], sums[c, 2], sums[c, 1],
                                       criterion, lam, min_data, min_hess, no_pairs[0], no_pairs[0])
                    gains[c, f] = gain
                    bins[c, f] = b


def _split_children(binned, rows, g, h, small_hist, parent_hist, n_bins, feature_mask, sums, search, criterion, lam,
                    min_data, min_hess, no_pairs, gains, bins):
    """A split's whole histogram work in one kernel (SE and Newton OLE): the smaller child's
    histogram over ``rows`` into ``small_hist``, the larger child's in ``parent_hist`` (parent −
    small, in place), and each child's best gain and bin per feature into ``gains[c]``, ``bins[c]``
    (child 0 the smaller, 1 the larger; searched when ``search[c]``, ``sums[c]`` its ``(G, H, N)``;
    −inf and −1 otherwise and for masked features). ``binned``: the uint8 matrix or its
    :func:`reference.binning.pack_bins` words (the grower's: the kernel reads words).

    ``prange`` over blocks of ``SPLIT_BLOCK`` features (one word): a task builds its features
    (:func:`reference.histogram.build_feature_block`), subtracts them from the parent's and searches
    them in both children while they are in cache, so a split takes one fork-join instead of four
    (build, subtraction, two searches). The same sums and gains to the bit as those four kernels:
    each is the same operation on the same numbers (:func:`reference.splitting.find_best_split`
    calls :func:`reference.splitting.best_bin` per feature, as here).
    """
    _split_kernel(as_words(binned), rows, g, h, small_hist, parent_hist, n_bins, feature_mask, sums, search,
                  criterion, lam, min_data, min_hess, no_pairs, gains, bins)


@njit(cache=True, parallel=True)
def _pair_split_kernel(words, hist, n_bins, feature_mask, G, H, N, H_exact, lam, min_data, min_hess, pi, pj, ph,
                       out_gain, out_bin):
    """Exact OLE's :func:`reference.splitting.find_best_split` of a node with few pairs (``pi``, ``pj``,
    ``ph``), its pair histograms built inside the search and never kept: ``prange`` over words, a task
    adds the pairs to its word's features in pair histograms of its own (:func:`reference.histogram.
    add_word_pairs`, 32 KB, in the core's cache) and searches them at once.

    Built into the node's ``(n_features, N_BINS)`` buffers, a node of a few pairs paid for the buffers,
    not for its pairs: zeroing 557 KB and reading it back in the search (a build of 0 to 10 pairs took
    ≈ 80 µs in a tree, with 136 features; 26 nodes of a ``make_mslr_like(300)`` tree take this path).
    Every bin holds the same sum as there (the pairs in order, from 0.0), so the same gains and bins to
    the bit."""
    n_features = hist.shape[0]
    # no pairs: every pair term is 0.0 and H_exact is H, so exact OLE's gains are Newton OLE's to the
    # bit, searched without reading the pair histograms
    criterion = OLE_EXACT if pi.shape[0] > 0 else OLE
    for k in prange((n_features + WORD_FEATURES - 1) // WORD_FEATURES):
        f0 = k * WORD_FEATURES
        f1 = min(f0 + WORD_FEATURES, n_features)
        wanted = False
        for f in range(f0, f1):
            out_gain[f] = -np.inf
            out_bin[f] = -1
            wanted = wanted or feature_mask[f]
        if not wanted:
            continue
        pmax = np.zeros((WORD_FEATURES, N_BINS))
        pmin = np.zeros((WORD_FEATURES, N_BINS))
        add_word_pairs(words, k, pi, pj, ph, pmax, pmin, 0, f1 - f0)
        for f in range(f0, f1):
            if feature_mask[f]:
                gain, b = best_bin(hist, n_bins, np.int64(f), G, H, N, H_exact, criterion, lam, min_data, min_hess,
                                   pmax[f - f0], pmin[f - f0])
                out_gain[f] = gain
                out_bin[f] = b


class _PairSet:
    """A node's pairs and their pair histograms (by larger and smaller bin), built per feature on
    demand. ``src`` is None when they are summed from the pairs, or ``(parent, small, crossing)``
    when they are ``parent − small − crossing``, as the unbounded path computes them: either way
    the same operations on the same numbers, so the same bits."""

    __slots__ = ("have", "pairs", "pmax", "pmin", "src")

    def __init__(self, pairs, src=None):
        self.pairs, self.src = pairs, src
        self.pmax = self.pmin = self.have = None

    @property
    def n(self):
        return self.pairs[0].shape[0]


class _Node:
    __slots__ = ("rows", "G", "H", "N", "H_exact", "depth", "hist", "pairs", "phist", "split", "id", "pset",
                 "bound")


class TreeGrower:
    """Grow one tree from per-row gradients ``g`` and Hessians ``h`` on ``binned`` data.

    Parameters
    ----------
    binned : uint8 array (n_rows, n_features), column-major
    n_bins : int array (n_features,), bins per feature (without the NaN bin)
    g, h : float arrays (n_rows,)
        Converted to float64 (not copied when already float64 and contiguous).
    rows : int64 array, the rows this tree is fitted on (a query subsample, or all)
    criterion : {"se", "ole", "ole_exact"}
    growth : {"best_first", "breadth_first", "depth_first"}
        Which splittable leaf is split next until ``num_leaves``: the one of largest gain
        (LightGBM's leaf-wise); level by level, left to right (the paper's width-first); or
        always the most recent left child first (depth-first).
    leaf_value : {"newton", "mean"}
        ``−G/(H+λ)`` (Burges' γ = Σλ/Σw) or ``−G/N`` (plain least-squares MART).
    leaf_hessian : {"diagonal", "exact"}
        With pairs: the exact pair-aware Hessian in the Newton step (falls back to the diagonal
        one when the exact Hessian is below ``min_sum_hessian_in_leaf``).
    pairs : (i, j, h) arrays, optional
        Per-pair Hessian terms for ``"ole_exact"``.
    feature_mask : bool array, optional
        Features this tree may split on (column subsampling).
    exact_bounds : bool
        Exact OLE only: build a node's pair histograms (O(pairs) per feature) only for the features
        whose upper bound of the exact gain can still beat the best exact gain found, taking them
        in decreasing order of that bound (see ``reference.splitting.exact_gain_bounds``).
        The same trees, gains and leaf values as ``False``, which builds them for every feature.
    root_hist : float64 array (n_features, N_BINS, 3), optional
        The histogram of ``g``, ``h`` over ``rows``, already built (McRank's grades share one pass:
        ``root_histograms``); the grower takes the buffer over (it becomes a child's).
    buffers : dict, optional
        A pool of histogram buffers shared by the trees of one fit (the same ``binned``): the grower
        takes its histograms from it when it holds one of the shape, and puts every histogram it
        took or allocated back when the tree is grown (no buffer of a tree outlives :meth:`grow`).
        Exact OLE allocates a few hundred histograms a tree; fresh from the allocator, their pages
        are faulted in on first write (3,000–4,000 page faults a round on a 34 K-row set).
    words : uint64 array, optional
        ``reference.binning.pack_bins(binned)``, which the row histograms read; packed here when not
        given (a fit's trees share one: :class:`reference.MARTRanker` packs its training set once).
    """

    #: The share of the root's pairs, the heaviest, whose pair histograms give the bound its
    #: crossing term in every node (without them the root's bound is void: no pair leaves it).
    BOUND_PAIRS = 0.03
    #: A node is bounded when its pairs are at least this share of its rows (below, building
    #: its pair histograms for every feature costs less than the bound's row-histogram channel).
    BOUND_MIN_PAIRS_PER_ROW = 0.25
    #: Histogram updates (rows or pairs × features) below which a kernel runs on one thread.
    SERIAL_WORK = 50_000
    #: Without ``exact_bounds``: the pair updates (pairs × features) below which a node that builds
    #: its pair histograms from its pairs builds them inside its search (``_pair_split``), not
    #: into buffers (built after all when a child subtracts from them; 0: never; the same trees
    #: either way, tested). With the bounds, every such node without a bound does.
    FUSED_PAIR_WORK = 50_000
    #: The children of the last split a leaf limit allows stay leaves: nothing but their rows and
    #: gradient sums is built for them (False: their histograms, pairs and split searches too, as
    #: for any other node; the same tree, tested)
    LAST_SPLIT_LEAVES = True

    def __init__(self, binned, n_bins, g, h, rows, *, num_leaves=31, criterion="ole", growth="best_first",
                 min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0, max_depth=None,
                 leaf_value="newton", leaf_hessian="diagonal", pairs=None, feature_mask=None, exact_bounds=True,
                 root_hist=None, buffers=None, words=None):
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {tuple(CRITERIA)}, got {criterion!r}")
        if growth not in GROWTH:
            raise ValueError(f"growth must be one of {GROWTH}, got {growth!r}")
        if num_leaves < 2:
            raise ValueError(f"num_leaves must be >= 2, got {num_leaves}")
        if CRITERIA[criterion] == OLE_EXACT and pairs is None:
            raise ValueError("criterion='ole_exact' needs the per-pair Hessians (a lambda objective)")
        if buffers is not None and not isinstance(buffers, dict):
            raise ValueError(f"buffers must be None or a dict a grower filled, got {type(buffers).__name__}")
        # float64 whatever the caller's dtype (the kernels accumulate in float64; one compiled variant):
        # a float64 array is used as it is, anything else converted, never written to
        g = np.ascontiguousarray(g, dtype=np.float64)
        h = np.ascontiguousarray(h, dtype=np.float64)
        self.binned, self.n_bins, self.g, self.h = binned, n_bins, g, h
        if words is not None and not (isinstance(words, np.ndarray) and words.dtype == np.uint64 and
                                      words.shape == ((binned.shape[1] + WORD_FEATURES - 1) // WORD_FEATURES,
                                                      binned.shape[0]) and words.flags.c_contiguous):
            raise ValueError("words must be None or reference.binning.pack_bins(binned), got "
                             f"{type(words).__name__} {getattr(words, 'dtype', '')} {getattr(words, 'shape', '')}")
        if words is not None:
            # stale words (another matrix of the same shape) would grow silently wrong trees: a spot
            # check of up to 64 evenly spread rows, every feature, against the bins (a full comparison
            # costs a root pass each tree; MARTRanker packs once a fit and passes its own)
            spot = np.unique(np.linspace(0, binned.shape[0] - 1, min(64, binned.shape[0])).astype(np.int64))
            if binned.shape[0] and not np.array_equal(pack_bins(np.asarray(binned)[spot]), words[:, spot]):
                raise ValueError("words must be None or reference.binning.pack_bins(binned): these words hold "
                                 "other bins than binned (packed from another matrix?)")
        # the row histograms read the bins as words of 8 features (one load for a row's block)
        self.words = pack_bins(binned) if words is None else words
        self.rows, self.root_hist = rows, root_hist
        self._pool, self._taken = buffers, []
        self.num_leaves, self.criterion, self.growth = num_leaves, CRITERIA[criterion], growth
        self.min_data, self.min_hess, self.lam = float(min_data_in_leaf), float(min_sum_hessian_in_leaf), float(lambda_l2)
        self.max_depth = max_depth
        self.leaf_value, self.leaf_hessian = leaf_value, leaf_hessian
        self.pairs = pairs
        self.exact = self.criterion == OLE_EXACT or (leaf_hessian == "exact" and pairs is not None)
        n_features = binned.shape[1]
        self.feature_mask = np.ones(n_features, dtype=np.bool_) if feature_mask is None else feature_mask
        self._gain = np.empty(n_features)
        self._bin = np.empty(n_features, dtype=np.int64)
        self._gains = np.empty((2, n_features))
        self._bins = np.empty((2, n_features), dtype=np.int64)
        self._member = np.zeros(binned.shape[0], dtype=np.bool_) if self.exact else None
        self._empty_pairs = np.zeros((1, 1))
        # the bound needs finite h_ij >= 0 and finite Hessians; otherwise every feature is evaluated
        self.bounded = bool(exact_bounds) and self.criterion == OLE_EXACT and \
            bool(np.all((pairs[2] >= 0.0) & (pairs[2] < np.inf))) and bool(np.all(np.isfinite(h)))
        if self.bounded:
            self._bound = np.empty(n_features)
            self._w = np.empty(binned.shape[0])
            self._x = np.empty(binned.shape[0])
            self._zeros = np.zeros((n_features, N_BINS))

    def _buffer(self, channels=None):
        """An uninitialised ``(n_features, N_BINS)`` buffer, or with ``channels`` a row histogram
        ``(n_features, N_BINS, channels)``: from the pool (``buffers``) when it holds one, and put
        back into it when the tree is grown."""
        shape = (self.binned.shape[1], N_BINS) if channels is None else (self.binned.shape[1], N_BINS, channels)
        free = None if self._pool is None else self._pool.get(shape)
        if free:
            buf = free.pop()
            if not (isinstance(buf, np.ndarray) and buf.dtype == np.float64 and buf.shape == shape and
                    buf.flags.c_contiguous and buf.flags.writeable):
                raise ValueError(f"buffers must be None or a dict a grower filled: its entry {shape} holds "
                                 f"{type(buf).__name__} {getattr(buf, 'dtype', '')} {getattr(buf, 'shape', '')}, not a "
                                 "writeable C-contiguous float64 array of that shape")
        else:
            buf = np.empty(shape)
        self._taken.append(buf)
        return buf

    def _make_node(self, rows, depth, hist, pairs, phist=None, pset=None, bound=None, final=False, sums=None):
        """A node of ``rows`` with its sums (``sums``: ``(Σ g, Σ h, count)`` already made, as NumPy sums
        them: :func:`_partition_sums`) and, unless ``final`` (a leaf for good), its best split."""
        node = _Node()
        node.rows, node.depth, node.hist, node.pairs, node.phist = rows, depth, hist, pairs, phist
        node.pset, node.bound = pset, bound
        if sums is None:
            node.G = float(self.g[rows].sum())
            node.H = float(self.h[rows].sum())
        else:
            node.G, node.H = float(sums[0]), float(sums[1])
        node.N = float(rows.shape[0])
        node.H_exact = node.H - 2.0 * float(pairs[2].sum()) if pairs is not None else node.H
        node.split = None
        if not final and self._searchable(node):
            node.split = self._best_split(node)
        return node

    def _searchable(self, node):
        """Whether a node is searched for a split: above ``max_depth``, and with the rows and the
        Hessian for two children."""
        return (self.max_depth is None or node.depth < self.max_depth) and \
            not (node.N < 2 * self.min_data or node.H < 2 * self.min_hess)

    def _fused_children(self, node, left_rows, right_rows, kid_sums):
        """The children of ``node`` (SE, Newton OLE) with their histograms and best splits from one
        :func:`_split_children` call; ``node.hist`` becomes the larger child's. ``kid_sums``: the
        children's ``(Σ g, Σ h, count)`` (:func:`_partition_sums`)."""
        kids = [self._make_node(r, node.depth + 1, None, None, final=True, sums=kid_sums[k])
                for k, r in enumerate((left_rows, right_rows))]
        small_first = left_rows.shape[0] <= right_rows.shape[0]
        small, large = kids if small_first else kids[::-1]
        both = (small, large)
        sums = kid_sums if small_first else kid_sums[::-1].copy()
        search = np.array([self._searchable(k) for k in both])
        small.hist, large.hist = self._buffer(3), node.hist
        node.hist = None
        _split_children(self.words, small.rows, self.g, self.h, small.hist, large.hist, self.n_bins,
                        self.feature_mask, sums, search, self.criterion, self.lam, self.min_data, self.min_hess,
                        self._empty_pairs, self._gains, self._bins)
        for c, kid in enumerate(both):
            if search[c]:
                gain, feature, b = pick(self._gains[c], self._bins[c])
                kid.split = None if feature < 0 else (gain, int(feature), int(b))
        return kids

    def _best_split(self, node):
        if self.bounded:
            if node.bound is not None:
                return self._bounded_split(node)
            if node.pset.src is None and node.pset.pmax is None:
                # no bound (fewer pairs than BOUND_MIN_PAIRS_PER_ROW of its rows) and its pair histograms
                # summed from its pairs, not subtracted: summed inside the search, to the same bits; a
                # child subtracting from them has them built then (_feature_pair_histograms)
                return self._pair_split(node)
            self._all_pair_histograms(node.pset)
            pmax, pmin = node.pset.pmax, node.pset.pmin
            h_parent = node.H_exact
        elif self.criterion == OLE_EXACT:
            if node.phist is None:
                if self._few_pairs(node.pairs[0].shape[0]):
                    return self._pair_split(node)
                node.phist = self._pair_histograms(node.pairs)
            pmax, pmin = node.phist
            h_parent = node.H_exact
        else:
            pmax = pmin = self._empty_pairs
            h_parent = node.H
        find_best_split(node.hist, self.n_bins, self.feature_mask, node.G, node.H, node.N, h_parent,
                        self.criterion, self.lam, self.min_data, self.min_hess, pmax, pmin, self._gain, self._bin)
        return self._picked()

    def _few_pairs(self, n_pairs):
        return n_pairs * self.binned.shape[1] < self.FUSED_PAIR_WORK

    def _pair_split(self, node):
        """:meth:`_best_split` of an exact-OLE node with few pairs: its pair histograms built inside the
        search (:func:`_pair_split_kernel`), not kept: built after all, from the same pairs, when a child
        subtracts from them."""
        _pair_split_kernel(self.words, node.hist, self.n_bins, self.feature_mask, node.G, node.H, node.N,
                           node.H_exact, self.lam, self.min_data, self.min_hess, node.pairs[0], node.pairs[1],
                           node.pairs[2], self._gain, self._bin)
        return self._picked()

    def _picked(self):
        """The split :func:`reference.splitting.pick` makes of the per-feature gains just searched."""
        gain, feature, b = pick(self._gain, self._bin)
        if feature < 0:
            return None
        return gain, int(feature), int(b)

    def _bounded_split(self, node):
        """:meth:`_best_split` of exact OLE evaluating only the features that can still win."""
        w, slack, heavy = node.bound
        s_max, s_min = heavy if heavy is not None else (self._zeros, self._zeros)
        bound = self._bound
        exact_gain_bounds(node.hist, self._zeros if w is None else w, s_max, s_min, self.n_bins, self.feature_mask,
                          node.G, node.H, node.N, node.H_exact, self.lam, self.min_data, self.min_hess,
                          self._tol + slack, bound)
        best, best_f, best_b = 0.0, -1, -1  # pick's rule: the largest gain > 0, the lowest feature on ties
        order = np.lexsort((np.arange(bound.shape[0]), -bound))
        # one feature per thread first (most nodes stop there), then a block per thread: a batch's
        # features share each pass over the pairs (``PAIR_OF_BLOCK``), and the features a batch
        # builds beyond the one that ends the search cost time, never a different split
        threads = numba.get_num_threads()
        batch_size = threads
        pos = 0
        while pos < order.shape[0]:
            batch = []  # the next features, by decreasing bound, that can still win
            while pos < order.shape[0] and len(batch) < batch_size:
                f = order[pos]
                u = bound[f]
                if u < best or u == -np.inf:
                    pos = order.shape[0]
                    break
                pos += 1
                if u == best and (best_f < 0 or f > best_f):
                    continue
                batch.append(f)
            if not batch:
                break
            batch_size = _hist.PAIR_OF_BLOCK * threads
            self._feature_pair_histograms(node.pset, np.array(batch, dtype=np.int64))
            for f in batch:
                gain, b = best_bin(node.hist, self.n_bins, f, node.G, node.H, node.N, node.H_exact, self.criterion,
                                   self.lam, self.min_data, self.min_hess, node.pset.pmax[f], node.pset.pmin[f])
                if gain > best or (gain == best and best_f >= 0 and f < best_f):
                    best, best_f, best_b = gain, f, b
        if best_f < 0:
            return None
        return best, int(best_f), int(best_b)

    def _kernel(self, name, work):
        """The histogram kernel ``name``, single-threaded for less than ``SERIAL_WORK`` updates."""
        return getattr(_hist, name + "_serial" if work < self.SERIAL_WORK else name)

    def _allocate(self, ps):
        if ps.pmax is None:
            n_features = self.binned.shape[1]
            ps.pmax = self._buffer()
            ps.pmin = self._buffer()
            ps.have = np.zeros(n_features, dtype=np.bool_)

    def _feature_pair_histograms(self, ps, features):
        """The pair histograms of ``features`` (an int64 array) of the pair set ``ps`` into its
        rows (built once, then kept; several features in parallel)."""
        self._allocate(ps)
        missing = features[~ps.have[features]]
        if missing.shape[0] == 0:
            return
        if ps.src is None:
            self._kernel("build_pair_histograms_of", ps.n * missing.shape[0])(
                self.binned, missing, ps.pairs[0], ps.pairs[1], ps.pairs[2], ps.pmax, ps.pmin)
        else:
            parent, small, crossing = ps.src
            for x in ps.src:
                self._feature_pair_histograms(x, missing)
            _subtract_pair_rows(ps.pmax, ps.pmin, parent.pmax, parent.pmin, small.pmax, small.pmin, crossing.pmax,
                                crossing.pmin, missing)
        ps.have[missing] = True

    def _all_pair_histograms(self, ps):
        self._allocate(ps)
        if ps.have.all():
            return
        if ps.src is None:
            self._kernel("build_pair_histograms", ps.n * self.binned.shape[1])(
                self.words, ps.pairs[0], ps.pairs[1], ps.pairs[2], ps.pmax, ps.pmin)
        else:
            parent, small, crossing = ps.src
            for x in ps.src:
                self._all_pair_histograms(x)
            np.subtract(parent.pmax, small.pmax, out=ps.pmax)
            ps.pmax -= crossing.pmax
            np.subtract(parent.pmin, small.pmin, out=ps.pmin)
            ps.pmin -= crossing.pmin
        ps.have[:] = True

    def _wants_bound(self, n_pairs, n_rows):
        return n_pairs >= self.BOUND_MIN_PAIRS_PER_ROW * n_rows

    def _weight_histogram(self, rows, pairs, hist=None, parent=None):
        """``(Σ w per feature and bin over rows, 0)`` for ``w_i = h_i − Σ_j h_ij`` over ``pairs`` (the
        node's), or ``(None, Σ|w|)`` when that is negligible (a node of whole queries: the root),
        for a bound taking ``Σ w >= −Σ|w|``. With ``hist``, also fills the rows' histogram
        (:func:`build_histogram`) in the same pass, and with ``parent`` turns it into the other
        child's (``parent − hist``, in place)."""
        _doc_weights(rows, self.h, pairs[0], pairs[1], pairs[2], self._w)
        slack = _abs_sum(rows, self._w)
        if slack <= 1e-9 * self._h_root:
            if hist is not None:
                build_histogram(self.words, rows, self.g, self.h, hist, parent)
            return None, slack
        if hist is not None:
            out = self._buffer()
            self._kernel("build_histogram_and_weights", rows.shape[0] * self.binned.shape[1])(
                self.words, rows, self.g, self.h, self._w, hist, out, parent)
        else:
            out = self._buffer()
            out.fill(0.0)
            self._kernel("add_weight_histogram", rows.shape[0] * self.binned.shape[1])(self.words, rows, self._w, out)
        return out, 0.0

    def _heavy(self, pairs):
        return _heavy_pairs(pairs[0], pairs[1], pairs[2], self._heavy_h)

    def _heavy_pair_histograms(self, heavy, out=None):
        """The pair histograms of the heavy pairs ``heavy`` (see :meth:`_heavy`)."""
        if out is None:
            out = (self._buffer(), self._buffer())
        self._kernel("build_pair_histograms", heavy[0].shape[0] * self.binned.shape[1])(
            self.words, heavy[0], heavy[1], heavy[2], out[0], out[1])
        return out

    def _bounded_children(self, node, left_rows, right_rows, small_hist):
        """The children's pairs, pair sets and bounds (None for a child evaluated in full); fills
        ``small_hist``, the histogram of the child with fewer rows, and turns ``node.hist`` into the
        other child's.

        Pair sets follow :meth:`_children_pairs`'s choice between direct and subtracted pair
        histograms. A node's bound holds ``Σ w`` per bin (:meth:`_weight_histogram`) and the pair
        histograms of its heavy pairs. The larger child's ``Σ w`` is the parent's minus the smaller
        child's plus, in the bins of each document, its crossing pairs' weight (a pair leaving the
        child was inside the node: ``w_i`` grows by ``h_ij``) when fewer documents have crossing
        pairs than the larger child has rows; the heavy pairs' histograms are subtracted likewise.
        """
        self._member[left_rows] = True
        left, right, cross = _split_pairs(self._member, node.pairs)
        self._member[left_rows] = False
        n_left, n_right, n_cross = left[0].shape[0], right[0].shape[0], cross[0].shape[0]
        if n_cross >= max(n_left, n_right):
            lps, rps = _PairSet(left), _PairSet(right)
        else:
            xps = _PairSet(cross)
            if n_left <= n_right:
                lps = _PairSet(left)
                rps = _PairSet(right, (node.pset, lps, xps))
            else:
                rps = _PairSet(right)
                lps = _PairSet(left, (node.pset, rps, xps))
        kids = [(left_rows, left), (right_rows, right)]
        wants = [self._wants_bound(p[0].shape[0], r.shape[0]) for r, p in kids]
        bounds = [None, None]
        parent_w, _, parent_heavy = node.bound if node.bound is not None else (None, 0.0, None)
        node.bound = None
        # Σ w
        w = [None, None]
        s, big = (0, 1) if left_rows.shape[0] <= right_rows.shape[0] else (1, 0)
        touched = None
        if wants[big] and parent_w is not None:
            touched = _crossing_weights(cross[0], cross[1], cross[2], self._x, self._member)
            if touched.shape[0] >= kids[big][0].shape[0]:
                touched = None
        if wants[s] or touched is not None:
            w[s] = self._weight_histogram(*kids[s], hist=small_hist, parent=node.hist)
        else:
            build_histogram(self.words, kids[s][0], self.g, self.h, small_hist, node.hist)
        if touched is not None:
            # Σ_large w_parent = parent − Σ_small w_parent; w_child = w_parent + crossing weight
            small_w, small_slack = w[s]
            if small_w is not None:
                parent_w -= small_w
            touched.sort()
            self._kernel("add_weight_histogram", touched.shape[0] * self.binned.shape[1])(
                self.words, touched, self._x, parent_w)
            w[big] = (parent_w, small_slack)
        elif wants[big]:
            w[big] = self._weight_histogram(*kids[big])
        if not any(wants):
            return left, right, lps, rps, None, None
        # heavy pairs
        kid_pairs = (left, right)
        hs = [None, None]
        n_heavy = [int(np.count_nonzero(p[2] >= self._heavy_h)) for p in (left, right, cross)]
        s, big = (0, 1) if n_heavy[0] <= n_heavy[1] else (1, 0)
        subtract = wants[big] and parent_heavy is not None and n_heavy[s] + n_heavy[2] < n_heavy[big]
        if wants[s] or subtract:
            hs[s] = self._heavy_pair_histograms(self._heavy(kid_pairs[s]))
        if subtract:
            crossing = self._heavy_pair_histograms(self._heavy(cross))
            for a, b, c in zip(parent_heavy, hs[s], crossing):
                a -= b
                a -= c
            hs[big] = parent_heavy
        elif wants[big]:
            hs[big] = self._heavy_pair_histograms(self._heavy(kid_pairs[big]))
        for k in range(2):
            if wants[k]:
                bounds[k] = (w[k][0], w[k][1], hs[k])
        return left, right, lps, rps, bounds[0], bounds[1]

    def _pair_histograms(self, pairs):
        pmax = self._buffer()
        pmin = self._buffer()
        build_pair_histograms(self.words, pairs[0], pairs[1], pairs[2], pmax, pmin)
        return pmax, pmin

    def _children_pairs(self, left_rows, node):
        """The children's pairs and, where it is cheaper, their pair histograms.

        The pair histograms of a node are those of its two children plus those of the pairs
        crossing the split, so the child with more pairs can be had by subtraction from the
        parent's at the cost of the smaller child and the crossing pairs, whenever the crossing
        pairs are fewer than the larger child's (typical of a split that cuts off a few rows).
        """
        if not self.exact:
            return None, None, None, None
        self._member[left_rows] = True
        left, right, cross = _split_pairs(self._member, node.pairs)
        self._member[left_rows] = False
        if node.phist is None and self.criterion != OLE_EXACT:  # only exact OLE keeps pair histograms
            return left, right, None, None
        n_left, n_right, n_cross = left[0].shape[0], right[0].shape[0], cross[0].shape[0]
        if n_cross >= max(n_left, n_right):
            return left, right, None, None
        if node.phist is None:
            # searched by _pair_split, which keeps no pair histograms: built now, as the search
            # would have built them (the same sums), for the larger child's subtraction
            node.phist = self._pair_histograms(node.pairs)
        small_is_left = n_left <= n_right
        small = self._pair_histograms(left if small_is_left else right)
        crossing = self._pair_histograms(cross)
        large = node.phist  # the parent's buffers become the larger child's
        for a, b, c in zip(large, small, crossing):
            a -= b
            a -= c
        return (left, right, small, large) if small_is_left else (left, right, large, small)

    def _exact_children(self, node, left_rows, right_rows, kid_sums):
        """The children of ``node`` with their pairs (exact OLE, or the exact leaf Hessian): the
        smaller child's histogram built, the larger's in the parent's buffer (parent − small, in
        the same kernel), pairs and pair histograms as :meth:`_bounded_children` or
        :meth:`_children_pairs` make them. ``kid_sums``: the children's ``(Σ g, Σ h, count)``
        (:func:`_partition_sums`)."""
        small, large = (left_rows, right_rows) if left_rows.shape[0] <= right_rows.shape[0] else (right_rows, left_rows)
        h_small = self._buffer(3)
        # the small child's histogram, and in the same kernel the large one's in the parent's
        # buffer (parent − small, each feature as soon as its small sums are built)
        if self.bounded:
            lp, rp, lps, rps, lb, rb = self._bounded_children(node, left_rows, right_rows, h_small)
        else:
            build_histogram(self.words, small, self.g, self.h, h_small, node.hist)
        h_large = node.hist
        hl, hr = (h_small, h_large) if small is left_rows else (h_large, h_small)
        node.hist = None
        if self.bounded:
            node.pset = None  # kept alive only by a child whose pair histograms subtract from it
            left = self._make_node(left_rows, node.depth + 1, hl, lp, pset=lps, bound=lb, sums=kid_sums[0])
            right = self._make_node(right_rows, node.depth + 1, hr, rp, pset=rps, bound=rb, sums=kid_sums[1])
        else:
            lp, rp, lph, rph = self._children_pairs(left_rows, node)
            node.phist = None
            left = self._make_node(left_rows, node.depth + 1, hl, lp, lph, sums=kid_sums[0])
            right = self._make_node(right_rows, node.depth + 1, hr, rp, rph, sums=kid_sums[1])
        return left, right

    def grow(self):
        """Return the tree as a ``NODE_DTYPE`` array (node 0 is the root)."""
        hist = self.root_hist
        self.root_hist = None
        every_row = self.rows.shape[0] == self.binned.shape[0] and \
            np.array_equal(self.rows, np.arange(self.rows.shape[0]))
        if hist is None:
            hist = self._buffer(3)
            # rows None: every row in order, read without the index (the same sums)
            build_histogram(self.words, None if every_row else self.rows, self.g, self.h, hist)
        root_pairs = None
        if self.exact:
            if every_row:
                root_pairs = tuple(self.pairs)  # every row is in the root, so is every pair, in order
            else:
                self._member[self.rows] = True
                root_pairs = _split_pairs(self._member, self.pairs)[0]
                self._member[self.rows] = False
        if self.bounded:
            # a bound on the rounding errors of the exact child Hessians and of their lower
            # bounds: every partial sum is at most ``scale`` in size and takes at most ``n_ops``
            # roundings (rows, pairs, bins and subtractions)
            h_root = float(np.abs(self.h[self.rows]).sum())
            p_root = float(root_pairs[2].sum())
            n_ops = self.rows.shape[0] + 2 * root_pairs[0].shape[0] + 4 * N_BINS * (self.num_leaves + 2)
            self._tol = 4.0 * np.finfo(np.float64).eps * n_ops * (h_root + 4.0 * p_root)
            self._h_root = h_root
            n = root_pairs[0].shape[0]
            k = int(self.BOUND_PAIRS * n)
            self._heavy_h = np.partition(root_pairs[2], n - k)[n - k] if k > 0 else np.inf
            bound = None
            if self._wants_bound(n, self.rows.shape[0]):
                bound = self._weight_histogram(self.rows, root_pairs) + \
                    (self._heavy_pair_histograms(self._heavy(root_pairs)),)
            root = self._make_node(self.rows, 0, hist, root_pairs, pset=_PairSet(root_pairs), bound=bound)
        else:
            root = self._make_node(self.rows, 0, hist, root_pairs)
        nodes = [root]
        children = {}
        order = [0]  # frontier: node ids, policy decides which to split
        n_leaves = 1
        while n_leaves < self.num_leaves:
            candidates = [i for i in order if nodes[i].split is not None]
            if not candidates:
                break
            if self.growth == "best_first":
                nid = max(candidates, key=lambda i: (nodes[i].split[0], -i))
            elif self.growth == "breadth_first":
                nid = min(candidates, key=lambda i: (nodes[i].depth, i))
            else:  # depth_first: the most recently created node first (left before right)
                nid = candidates[-1]
            node = nodes[nid]
            gain, feature, b = node.split
            kid_sums = np.empty((2, 3))
            left_rows, right_rows = _partition_sums(self.binned, node.rows, feature, b, self.g, self.h, kid_sums)
            if self.LAST_SPLIT_LEAVES and n_leaves + 1 == self.num_leaves and \
                    not (self.exact and self.leaf_hessian == "exact"):
                # the last split: its children stay leaves, and a leaf reads only its rows and their
                # gradient sums, so their histograms, pairs and split searches are never built
                node.hist = node.phist = node.pset = node.bound = None
                nodes += [self._make_node(left_rows, node.depth + 1, None, None, final=True, sums=kid_sums[0]),
                          self._make_node(right_rows, node.depth + 1, None, None, final=True, sums=kid_sums[1])]
                children[nid] = (len(nodes) - 2, len(nodes) - 1)
                n_leaves += 1
                break
            if self.exact:
                left, right = self._exact_children(node, left_rows, right_rows, kid_sums)
            else:
                left, right = self._fused_children(node, left_rows, right_rows, kid_sums)
            nodes += [left, right]
            children[nid] = (len(nodes) - 2, len(nodes) - 1)
            order.remove(nid)
            if self.growth == "depth_first":
                order += [len(nodes) - 1, len(nodes) - 2]  # left child is split next
            else:
                order += [len(nodes) - 2, len(nodes) - 1]
            n_leaves += 1
        # each leaf's rows (node id -> rows), the partition the tree makes of ``rows``: a caller adding
        # the tree to these rows' scores needs no traversal (the same assignment, ``binned <= bin``)
        self.leaf_rows_ = {i: nodes[i].rows for i in range(len(nodes)) if i not in children}
        tree = self._to_array(nodes, children)
        if self._pool is not None:  # the nodes and their histograms end with the tree
            for buf in self._taken:
                self._pool.setdefault(buf.shape, []).append(buf)
        self._taken = []
        return tree

    def _leaf_value(self, node):
        if self.leaf_value == "mean":
            return -node.G / node.N if node.N > 0 else 0.0
        H = node.H
        if self.leaf_hessian == "exact" and self.exact and node.H_exact > self.min_hess:
            H = node.H_exact
        d = H + self.lam
        return -node.G / d if d > 0 else 0.0

    def _to_array(self, nodes, children):
        # columns filled whole: assigning a structured array's records one field at a time cost
        # ~0.3 ms a 61-node tree, a tenth of a small data set's tree
        n = len(nodes)
        cols = {name: np.empty(n, dtype=NODE_DTYPE[name]) for name in ("feature", "bin", "left", "right", "value",
                                                                       "gain", "count", "sum_g", "sum_h", "depth")}
        for i, node in enumerate(nodes):
            cols["count"][i], cols["sum_g"][i], cols["sum_h"][i], cols["depth"][i] = node.N, node.G, node.H, node.depth
            if i in children:
                gain, feature, b = node.split
                cols["feature"][i], cols["bin"][i], cols["gain"][i] = feature, b, gain
                cols["left"][i], cols["right"][i] = children[i]
                cols["value"][i] = np.nan
            else:
                cols["feature"][i] = cols["bin"][i] = cols["left"][i] = cols["right"][i] = -1
                cols["gain"][i] = 0.0
                cols["value"][i] = self._leaf_value(node)
        tree = np.zeros(n, dtype=NODE_DTYPE)
        for name, col in cols.items():
            tree[name] = col
        return tree


def root_histograms(binned, rows, g, h):
    """The root histograms of several trees grown on the same ``rows`` of ``binned`` from the
    columns of ``g``, ``h`` (n_rows, K), in one pass (:func:`reference.histogram.build_histograms`):
    ``(K, n_features, N_BINS, 3)``, ``[k]`` the ``root_hist`` of the tree of column ``k``."""
    hists = new_histogram(binned.shape[1], g.shape[1])
    work = rows.shape[0] * binned.shape[1]
    kernel = _hist.build_histograms_serial if work < TreeGrower.SERIAL_WORK else _hist.build_histograms
    kernel(binned, rows, g, h, hists)
    return hists


@njit(cache=True, parallel=True)
def predict_binned(trees_feature, trees_bin, trees_left, trees_right, trees_value, offsets, binned, out):
    """Add every tree's leaf value to ``out`` for each row of ``binned`` (trees concatenated)."""
    n = binned.shape[0]
    for r in prange(n):
        total = 0.0
        for t in range(offsets.shape[0] - 1):
            node = offsets[t]
            base = offsets[t]
            while trees_feature[node] >= 0:
                if binned[r, trees_feature[node]] <= trees_bin[node]:
                    node = base + trees_left[node]
                else:
                    node = base + trees_right[node]
            total += trees_value[node]
        out[r] += total
