"""Histograms of (Σg, Σh, count) per feature and bin for the rows of one node."""

import types

import numpy as np
from numba import njit, prange

from .binning import WORD_FEATURES, pack_bins

N_BINS = 256  # uint8 bins; bin 255 holds NaN


#: Features one ``prange`` task of :func:`build_histogram` accumulates together, row by row.
FEATURE_BLOCK = 4


@njit(cache=True)
def _zero_histogram(hist, f):
    for b in range(N_BINS):
        hist[f, b, 0] = 0.0
        hist[f, b, 1] = 0.0
        hist[f, b, 2] = 0.0


@njit(cache=True, inline="always")
def ordered_gradients(rows, g, h):
    """``g[rows]``, ``h[rows]`` gathered into contiguous arrays ("ordered gradients", as LightGBM
    does), so that each feature's pass reads them sequentially."""
    n = rows.shape[0]
    og = np.empty(n)
    oh = np.empty(n)
    for t in range(n):
        og[t] = g[rows[t]]
        oh[t] = h[rows[t]]
    return og, oh


@njit(cache=True, inline="always")
def _word_bin(x, j):
    """The bin of the ``j``-th feature of word ``x`` (:func:`reference.binning.pack_bins`: bits ``8j`` to
    ``8j + 7``)."""
    return (x >> np.uint64(8 * j)) & np.uint64(0xFF)


@njit(cache=True, inline="always")
def _add_words(words, og, oh, hist, f0, j0, width):
    """Each row's word (``words[t]``, :func:`reference.binning.pack_bins`) added to the bins of features
    ``f0 .. f0 + width − 1``, bytes ``j0 .. j0 + width − 1`` of the word, in turn (``width`` a constant at
    every call, so the inner loop unrolls)."""
    shift = np.uint64(8 * j0)
    for t in range(words.shape[0]):
        w = words[t] >> shift  # then every feature's shift is a constant
        a = og[t]  # read once: the compiler cannot tell that the stores to hist leave og be
        c = oh[t]
        for j in range(width):
            b = _word_bin(w, j)
            hist[f0 + j, b, 0] += a
            hist[f0 + j, b, 1] += c
            hist[f0 + j, b, 2] += 1.0


@njit(cache=True, inline="always")
def _gather_words(words, k, rows):
    """``words[k, rows]`` into a contiguous array: the gather's loads are independent of one another,
    so a small node's scattered rows overlap their cache misses before the additions need them."""
    out = np.empty(rows.shape[0], dtype=np.uint64)
    for t in range(rows.shape[0]):
        out[t] = words[k, rows[t]]
    return out


@njit(cache=True, inline="always")
def build_feature_block(words, rows, og, oh, hist, f0, f1):
    """One task of :func:`build_histogram`: ``hist[f]`` for ``f0 <= f < f1`` (features of one word of
    ``words``, :func:`reference.binning.pack_bins`) over ``rows`` with their ordered gradients ``og``,
    ``oh``; ``rows`` None: every row, in order (``og``, ``oh`` then the gradients themselves).

    The rows' words are gathered first into a contiguous array, then each row is added to the features
    in groups of 8, then of 4 (``FEATURE_BLOCK``), then one at a time: a small node's rows are
    scattered, and the gather alone (its loads independent of one another) overlaps their cache misses,
    where the additions' loads wait on them (a 238-row node 0.41× the time of reading 8 columns of the
    column-major matrix a row, a 1,000-row one 0.83×, a 12,000-row one 0.83×; a root reads its words in
    place). Rows falling in one bin make a chain of dependent additions, and a group's features give
    the processor independent chains to overlap. Every bin's sum still runs over the rows in order,
    from 0.0, as a per-feature pass sums it, whatever the grouping and the layout."""
    k = f0 // WORD_FEATURES
    if rows is None:
        words_k = words[k]
    else:
        words_k = _gather_words(words, k, rows)
    for f in range(f0, f1):  # zeroed after the gather: in cache for the additions
        _zero_histogram(hist, f)
    f = f0
    while f1 - f >= 8:
        _add_words(words_k, og, oh, hist, f, f - 8 * k, 8)
        f += 8
    while f1 - f >= FEATURE_BLOCK:
        _add_words(words_k, og, oh, hist, f, f - 8 * k, FEATURE_BLOCK)
        f += FEATURE_BLOCK
    while f < f1:
        _add_words(words_k, og, oh, hist, f, f - 8 * k, 1)
        f += 1


@njit(cache=True, inline="always")
def subtract_features(parent, hist, f0, f1):
    """``parent[f] −= hist[f]`` for ``f0 <= f < f1``, bin by bin, on the features a task has just built
    (still in cache): a child's sibling without touching the sibling's rows (the subtraction trick)."""
    for f in range(f0, f1):
        for b in range(N_BINS):
            for c in range(3):
                parent[f, b, c] = parent[f, b, c] - hist[f, b, c]


def as_words(binned):
    """``binned`` as :func:`reference.binning.pack_bins` words: itself when it already is (uint64), its
    packed copy when it is the uint8 matrix (a caller building many histograms packs it once)."""
    return binned if binned.dtype == np.uint64 else pack_bins(binned)


@njit(cache=True, parallel=True)
def _build_histogram(words, rows, g, h, hist, parent):
    """:func:`build_histogram` on the packed words."""
    og, oh = (g, h) if rows is None else ordered_gradients(rows, g, h)
    n_features = hist.shape[0]
    for k in prange((n_features + WORD_FEATURES - 1) // WORD_FEATURES):
        f0 = k * WORD_FEATURES
        f1 = min(f0 + WORD_FEATURES, n_features)
        build_feature_block(words, rows, og, oh, hist, f0, f1)
        if parent is not None:
            subtract_features(parent, hist, f0, f1)


def build_histogram(binned, rows, g, h, hist, parent=None):
    """Fill ``hist[f, b] = (Σ g, Σ h, count)`` over ``rows`` for every feature, ``prange`` over
    words of ``WORD_FEATURES`` features (:func:`build_feature_block`; tasks of 4 features, half a
    word, read every word twice: a 33,990-row root so took 1.17–1.42× the column-major build's time,
    whole words 0.95–1.12×, on a loaded machine); with ``parent`` (the
    histogram of a node holding ``rows``), also turn it into its other child's, ``parent − hist`` in
    place (:func:`subtract_features`), each task on its own features as soon as it has built them:
    the subtraction costs no fork-join and no pass over memory of its own (it had a kernel of its
    own, ``subtract_histogram``, before).

    ``binned``: the uint8 matrix or its :func:`reference.binning.pack_bins` words (what the grower
    passes: the kernel reads words, :func:`as_words`). ``rows`` None: every row in order (a root; the
    gradients read as they are, no gathered copy).

    Every bin is summed over ``rows`` in order from 0.0, whatever the thread count and the layout.
    Sums are float64 whatever the gradients' dtype: hundreds of thousands of small terms.
    """
    _build_histogram(as_words(binned), rows, g, h, hist, parent)


@njit(cache=True, parallel=True)
def build_histograms(binned, rows, g, h, hists):
    """:func:`build_histogram` of several gradient columns over the same ``rows`` in one pass:
    ``hists[k]`` of ``g[:, k]`` and ``h[:, k]`` (``g``, ``h`` of shape (n_rows, K), ``hists`` of
    shape (K, n_features, N_BINS, 3)), as McRank's per-grade trees of one round need at their roots.

    Each row's values are gathered once, interleaved as ``(g_0, h_0, g_1, h_1, ..., 1.0)``, and
    each feature's bins are read once for all of them: a row adds its whole contiguous record to
    its bin's record, one loop the compiler turns into vector additions (0.67–0.80× the time of
    separate ``g``/``h`` columns and a count array on a 204 K-row root, 5 grades, 1 and 2 threads).
    Every lane is still its own sum over the rows in order from 0.0 (the last lane the count, the
    same for every column), so every column's histogram is :func:`build_histogram`'s to the bit.
    """
    n = rows.shape[0]
    n_cols = g.shape[1]
    width = 2 * n_cols + 1
    rec = np.empty((n, width))
    for t in range(n):
        r = rows[t]
        for k in range(n_cols):
            rec[t, 2 * k] = g[r, k]
            rec[t, 2 * k + 1] = h[r, k]
        rec[t, width - 1] = 1.0
    n_features = binned.shape[1]
    for f in prange(n_features):
        acc = np.zeros((N_BINS, width))  # this feature's sums, one record per bin
        for t in range(n):
            b = binned[rows[t], f]
            for j in range(width):
                acc[b, j] += rec[t, j]
        for k in range(n_cols):
            for b in range(N_BINS):
                hists[k, f, b, 0] = acc[b, 2 * k]
                hists[k, f, b, 1] = acc[b, 2 * k + 1]
                hists[k, f, b, 2] = acc[b, width - 1]


@njit(cache=True, parallel=True)
def build_histogram_and_weights(words, rows, g, h, w, hist, w_hist, parent=None):
    """:func:`build_histogram` (the same sums in the same order, and with ``parent`` the same
    subtraction) and, in the same pass, ``w_hist[f, b] = Σ w`` over ``rows`` (``w`` indexed by
    row): exact OLE's bound channel. ``words``: :func:`reference.binning.pack_bins`'s; a task takes
    one word (8 features), its rows' words gathered first as :func:`build_feature_block` does (the
    column-major bins read 8 cache lines a scattered row)."""
    n = rows.shape[0]
    og, oh = ordered_gradients(rows, g, h)
    ow = np.empty(n)
    for t in range(n):
        ow[t] = w[rows[t]]
    n_features = hist.shape[0]
    for k in prange((n_features + WORD_FEATURES - 1) // WORD_FEATURES):
        f0 = k * WORD_FEATURES
        f1 = min(f0 + WORD_FEATURES, n_features)
        words_k = _gather_words(words, k, rows)
        for f in range(f0, f1):
            _zero_histogram(hist, f)
            for b in range(N_BINS):
                w_hist[f, b] = 0.0
        if f1 - f0 == WORD_FEATURES:
            for t in range(n):
                x = words_k[t]
                a = og[t]
                c = oh[t]
                e = ow[t]
                for j in range(WORD_FEATURES):
                    b = _word_bin(x, j)
                    hist[f0 + j, b, 0] += a
                    hist[f0 + j, b, 1] += c
                    hist[f0 + j, b, 2] += 1.0
                    w_hist[f0 + j, b] += e
        else:
            for f in range(f0, f1):
                for t in range(n):
                    b = _word_bin(words_k[t], f - f0)
                    hist[f, b, 0] += og[t]
                    hist[f, b, 1] += oh[t]
                    hist[f, b, 2] += 1.0
                    w_hist[f, b] += ow[t]
        if parent is not None:
            subtract_features(parent, hist, f0, f1)


#: Features one ``prange`` task of :func:`build_pair_histograms` accumulates together, pair by pair: one
#: word of :func:`reference.binning.pack_bins`.
PAIR_FEATURE_BLOCK = WORD_FEATURES


@njit(cache=True, inline="always")
def _add_pair(out_max, out_min, f, bi, bj, x):
    """The pair rule, its one home: the weight ``x`` of a pair whose documents fall in bins ``bi`` and
    ``bj`` of feature ``f`` goes to ``out_max[f, max(bi, bj)]`` and ``out_min[f, min(bi, bj)]``."""
    if bi >= bj:
        out_max[f, bi] += x
        out_min[f, bj] += x
    else:
        out_max[f, bj] += x
        out_min[f, bi] += x


@njit(cache=True, inline="always")
def add_word_pairs(words, k, pi, pj, ph, out_max, out_min, r0, width):
    """Every pair (``pi``, ``pj``, ``ph``) added by :func:`_add_pair` to the first ``width`` features of
    word ``k`` of ``words`` (:func:`reference.binning.pack_bins`), feature ``j`` into row ``r0 + j`` of
    ``out_max``/``out_min``: a whole word reads each pair's two words and weight once and adds it to the
    word's features in turn (a constant trip count, unrolled), a last, partial word's features one at a
    time; either way every bin is summed over the pairs in order, as
    :func:`build_pair_histogram_feature` sums it (the same bits)."""
    if width == PAIR_FEATURE_BLOCK:
        for t in range(pi.shape[0]):
            wa = words[k, pi[t]]
            wc = words[k, pj[t]]
            x = ph[t]
            for j in range(PAIR_FEATURE_BLOCK):
                _add_pair(out_max, out_min, r0 + j, _word_bin(wa, j), _word_bin(wc, j), x)
    else:
        for j in range(width):
            for t in range(pi.shape[0]):
                _add_pair(out_max, out_min, r0 + j, _word_bin(words[k, pi[t]], j), _word_bin(words[k, pj[t]], j),
                          ph[t])


@njit(cache=True, parallel=True)
def build_pair_histograms(words, pi, pj, ph, out_max, out_min):
    """For exact OLE: per feature, Σ h_ij of the node's pairs by the larger and by the smaller
    bin of the pair's two documents (a pair is inside the left child of "bin <= b" iff its larger
    bin is <= b, inside the right child iff its smaller bin is > b).

    ``words``: :func:`reference.binning.pack_bins`'s. ``prange`` over words (``PAIR_FEATURE_BLOCK``
    = 8 features), each word's bins zeroed, then its pairs added (:func:`add_word_pairs`). A pair's
    documents are anywhere in the data: two words are two cache lines, where the column-major bins
    cost 16."""
    n_features = out_max.shape[0]
    for k in prange((n_features + PAIR_FEATURE_BLOCK - 1) // PAIR_FEATURE_BLOCK):
        f0 = k * PAIR_FEATURE_BLOCK
        f1 = min(f0 + PAIR_FEATURE_BLOCK, n_features)
        for f in range(f0, f1):
            for b in range(N_BINS):
                out_max[f, b] = 0.0
                out_min[f, b] = 0.0
        add_word_pairs(words, k, pi, pj, ph, out_max, out_min, f0, f1 - f0)


@njit(cache=True)
def build_pair_histogram_feature(binned, f, pi, pj, ph, out_max, out_min):
    """One feature of :func:`build_pair_histograms` into row ``f`` of ``out_max``/``out_min`` (the
    other rows untouched): every bin summed over the pairs in order, so the same sums to the last
    bit; exact OLE builds the pair histograms of a node only for the features that can still win."""
    for b in range(N_BINS):
        out_max[f, b] = 0.0
        out_min[f, b] = 0.0
    for t in range(pi.shape[0]):
        _add_pair(out_max, out_min, f, binned[pi[t], f], binned[pj[t], f], ph[t])


#: Features one ``prange`` task of :func:`build_pair_histograms_of` accumulates together.
PAIR_OF_BLOCK = 4


@njit(cache=True, parallel=True)
def build_pair_histograms_of(binned, features, pi, pj, ph, out_max, out_min):
    """:func:`build_pair_histogram_feature` for each feature of ``features`` (distinct) into its
    row of ``out_max``/``out_min``, the other rows untouched: the same sums to the last bit.

    ``prange`` over blocks of ``PAIR_OF_BLOCK`` features, each pair added to the block's four
    features in turn (their ids held in scalars: read through an array inside the pair loop, the
    block measured no faster than one feature per task), the features left over one per task.
    0.63× one feature per task at 1 thread for 12 features of a 68 K-row root's 390 K pairs."""
    n_blocks = features.shape[0] // PAIR_OF_BLOCK
    n_rest = features.shape[0] - n_blocks * PAIR_OF_BLOCK
    for k in prange(n_blocks + n_rest):
        if k >= n_blocks:
            f = features[n_blocks * PAIR_OF_BLOCK + k - n_blocks]
            build_pair_histogram_feature(binned, f, pi, pj, ph, out_max, out_min)
            continue
        f0 = features[PAIR_OF_BLOCK * k]
        f1 = features[PAIR_OF_BLOCK * k + 1]
        f2 = features[PAIR_OF_BLOCK * k + 2]
        f3 = features[PAIR_OF_BLOCK * k + 3]
        for b in range(N_BINS):
            out_max[f0, b] = 0.0
            out_min[f0, b] = 0.0
            out_max[f1, b] = 0.0
            out_min[f1, b] = 0.0
            out_max[f2, b] = 0.0
            out_min[f2, b] = 0.0
            out_max[f3, b] = 0.0
            out_min[f3, b] = 0.0
        for t in range(pi.shape[0]):
            a = pi[t]
            c = pj[t]
            x = ph[t]
            _add_pair(out_max, out_min, f0, binned[a, f0], binned[c, f0], x)
            _add_pair(out_max, out_min, f1, binned[a, f1], binned[c, f1], x)
            _add_pair(out_max, out_min, f2, binned[a, f2], binned[c, f2], x)
            _add_pair(out_max, out_min, f3, binned[a, f3], binned[c, f3], x)


def new_histogram(n_features, n_cols=None):
    """An uninitialised histogram (``(n_features, N_BINS, 3)``), or ``n_cols`` of them stacked."""
    shape = (n_features, N_BINS, 3) if n_cols is None else (n_cols, n_features, N_BINS, 3)
    return np.empty(shape, dtype=np.float64)


@njit(cache=True, parallel=True)
def add_weight_histogram(words, rows, w, out):
    """``out[f, b] += Σ w`` over ``rows`` (``w`` indexed by row; ``words``
    :func:`reference.binning.pack_bins`'s; ``prange`` over words, each task's rows' words gathered
    first, each row added to the word's features in turn); on a zeroed ``out``, the node's weight
    histogram."""
    n = rows.shape[0]
    ow = np.empty(n)
    for t in range(n):
        ow[t] = w[rows[t]]
    n_features = out.shape[0]
    for k in prange((n_features + WORD_FEATURES - 1) // WORD_FEATURES):
        f0 = k * WORD_FEATURES
        f1 = min(f0 + WORD_FEATURES, n_features)
        words_k = _gather_words(words, k, rows)
        if f1 - f0 == WORD_FEATURES:
            for t in range(n):
                x = words_k[t]
                e = ow[t]
                for j in range(WORD_FEATURES):
                    out[f0 + j, _word_bin(x, j)] += e
        else:
            for f in range(f0, f1):
                for t in range(n):
                    out[f, _word_bin(words_k[t], f - f0)] += ow[t]


#: Single-threaded builds of the same kernels (``prange`` runs as ``range``: the same sums in the
#: same order) for small row and pair sets, where starting the threads costs more than the work.
def _serial(kernel):
    fn = getattr(kernel, "py_func", kernel)  # plain functions under NUMBA_DISABLE_JIT
    # a function object of its own, named ``<kernel>_serial``: numba names a kernel's on-disk cache
    # after the function's qualified name and line, so a twin sharing the parallel kernel's would load
    # whichever build was cached first for both (the parallel kernels then ran on one thread)
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_serial"
    twin.__doc__ = fn.__doc__
    return njit(cache=True)(twin)


build_histograms_serial = _serial(build_histograms)
build_pair_histograms_serial = _serial(build_pair_histograms)
build_pair_histograms_of_serial = _serial(build_pair_histograms_of)
add_weight_histogram_serial = _serial(add_weight_histogram)
build_histogram_and_weights_serial = _serial(build_histogram_and_weights)
