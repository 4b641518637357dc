"""Tests of reference.grower.TreeGrower: pair-histogram subtraction, the bounded exact-OLE search
against the unbounded one, pair histograms built inside the search, and a planted split."""

import numpy as np
import pytest
from conftest import assert_same_bits_at_three_threads

from lambda_objectives import lambda_gradients
from lambda_objectives.data.datasets import make_ranking
from reference import BinMapper, MARTRanker, TreeGrower


def test_pair_histogram_subtraction_equals_direct_build(small_ranking):
    """Exact OLE takes the larger child's pair histograms as parent − smaller − crossing: the
    grown tree must equal the one grown from pair histograms built directly at every node."""
    mapper = BinMapper().fit(small_ranking.X)
    binned, n_bins = mapper.transform(small_ranking.X), mapper.n_bins_
    s = np.random.default_rng(4).normal(size=small_ranking.y.shape[0])
    g, h, pairs = lambda_gradients(s, small_ranking.y, small_ranking.group_ptr, "ndcg", 10, return_pairs=True)
    rows = np.arange(binned.shape[0], dtype=np.int64)
    used = []

    class Direct(TreeGrower):
        FUSED_PAIR_WORK = 0  # every node's pair histograms in buffers: the subtraction's sources

        def _children_pairs(self, left_rows, node):
            out = super()._children_pairs(left_rows, node)
            used.append(out[2] is not None)
            return out[0], out[1], None, None

    class Counting(TreeGrower):
        FUSED_PAIR_WORK = 0

        def _children_pairs(self, left_rows, node):
            out = super()._children_pairs(left_rows, node)
            used.append(out[2] is not None)
            return out

    kw = dict(num_leaves=15, criterion="ole_exact", min_data_in_leaf=5, pairs=(pairs.i, pairs.j, pairs.h),
              exact_bounds=False)
    direct = Direct(binned, n_bins, g, h, rows, **kw).grow()
    used.clear()
    subtracted = Counting(binned, n_bins, g, h, rows, **kw).grow()
    assert any(used)  # the subtraction path really ran
    np.testing.assert_array_equal(direct["feature"], subtracted["feature"])
    np.testing.assert_array_equal(direct["bin"], subtracted["bin"])
    np.testing.assert_allclose(direct["gain"], subtracted["gain"], rtol=1e-9)
    np.testing.assert_allclose(direct["value"], subtracted["value"], rtol=1e-12)


class Dense(TreeGrower):
    """The grower with every exact-OLE node's pair histograms built into buffers (none inside its
    search): the brute-force side of the bounded and fused searches."""

    FUSED_PAIR_WORK = 0


@pytest.fixture(scope="module")
def ranking_20():
    d = make_ranking(150, docs_per_query=(5, 60), n_features=20, seed=7)
    mapper = BinMapper(63).fit(d.X)
    return d, mapper.transform(d.X), mapper.n_bins_


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bounded_exact_ole_grows_the_same_trees(ranking_20, seed):
    """Exact OLE with ``exact_bounds`` (pair histograms only for the features whose bound can still
    win) grows, bit for bit, the tree of the unbounded search that builds them for every feature,
    over leaf counts, minimum leaf sizes, λ₂, growth policies, row and column subsamples (the bounded
    one from 32-bit document ids, the brute one from the 64-bit ids ``lambda_gradients`` returns)."""
    d, binned, n_bins = ranking_20
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=d.y.shape[0]) * seed  # ties (seed 0) and random orders
    g, h, pairs = lambda_gradients(scores, d.y, d.group_ptr, "ndcg", (None, 10, 5)[seed], return_pairs=True)
    evaluated = []

    class Counting(TreeGrower):
        SERIAL_WORK = (0, 10 ** 9)[seed % 2]  # the multi-threaded and the single-threaded kernels

        def _bounded_split(self, node):
            before = int(node.pset.have.sum()) if node.pset.have is not None else 0
            out = super()._bounded_split(node)
            evaluated.append(int(node.pset.have.sum()) - before if node.pset.have is not None else 0)
            return out

    all_rows = np.arange(binned.shape[0], dtype=np.int64)
    cases = [dict(num_leaves=31, min_data_in_leaf=20, lambda_l2=0.0, growth="best_first"),
             dict(num_leaves=15, min_data_in_leaf=5, lambda_l2=1.0, growth="breadth_first"),
             dict(num_leaves=63, min_data_in_leaf=1, lambda_l2=0.0, growth="depth_first",
                  min_sum_hessian_in_leaf=0.0),
             dict(num_leaves=8, min_data_in_leaf=50, lambda_l2=10.0, growth="best_first", max_depth=3)]
    for kw in cases:
        for rows, mask in ((all_rows, None),
                           (np.sort(rng.choice(all_rows, all_rows.shape[0] // 2, replace=False)),
                            rng.random(binned.shape[1]) < 0.6)):
            args = (binned, n_bins, g, h, rows)
            common = dict(criterion="ole_exact", pairs=(pairs.i, pairs.j, pairs.h), feature_mask=mask, **kw)
            brute = Dense(*args, exact_bounds=False, **common).grow()
            # the bounded search with 32-bit document ids, as MARTRanker passes them
            ids32 = (pairs.i.astype(np.int32), pairs.j.astype(np.int32), pairs.h)
            bounded = Counting(*args, **dict(common, pairs=ids32)).grow()
            assert brute.shape == bounded.shape
            for name in brute.dtype.names:
                np.testing.assert_array_equal(brute[name], bounded[name], err_msg=f"{name} {kw}")
    assert evaluated and sum(evaluated) < 0.5 * len(evaluated) * binned.shape[1]  # the bound did prune


def test_bounded_exact_ole_without_pruning_is_the_unbounded_search(ranking_20):
    """Pairs with a negative Hessian void the bound: every feature is evaluated, as unbounded."""
    d, binned, n_bins = ranking_20
    g, h, pairs = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
    ph = pairs.h.copy()
    ph[0] = -ph[0]
    rows = np.arange(binned.shape[0], dtype=np.int64)
    kw = dict(criterion="ole_exact", num_leaves=15, pairs=(pairs.i, pairs.j, ph))
    grower = TreeGrower(binned, n_bins, g, h, rows, **kw)
    assert not grower.bounded
    tree, brute = grower.grow(), Dense(binned, n_bins, g, h, rows, exact_bounds=False, **kw).grow()
    for name in brute.dtype.names:
        np.testing.assert_array_equal(tree[name], brute[name])


@pytest.mark.parametrize("criterion", ["se", "ole", "ole_exact"])
def test_a_shared_root_pass_grows_the_same_trees(ranking_20, criterion, monkeypatch):
    """McRank's shared root pass (:func:`reference.grower.root_histograms`, serial or parallel)
    sums in the order of the per-tree root builds, and so do the single-threaded kernels of small
    nodes: every field of every tree is the same to the last bit, whichever kernel ran."""
    from reference.grower import root_histograms

    d, binned, n_bins = ranking_20
    rng = np.random.default_rng(5)
    g, h = rng.normal(size=(d.y.shape[0], 3)), rng.uniform(0.1, 1.0, size=(d.y.shape[0], 3))
    rows = np.sort(rng.choice(d.y.shape[0], 3 * d.y.shape[0] // 4, replace=False)).astype(np.int64)
    pairs = None
    if criterion == "ole_exact":
        g0, h0, p = lambda_gradients(rng.normal(size=d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
        g[:, 0], h[:, 0], pairs = g0, h0, (p.i, p.j, p.h)
    kw = dict(num_leaves=15, criterion=criterion, min_data_in_leaf=5, pairs=pairs)

    def grow(c, serial_work, **extra):
        monkeypatch.setattr(TreeGrower, "SERIAL_WORK", serial_work)
        gc, hc = np.ascontiguousarray(g[:, c]), np.ascontiguousarray(h[:, c])
        return TreeGrower(binned, n_bins, gc, hc, rows, **kw, **extra).grow()

    roots = root_histograms(binned, rows, g, h)
    monkeypatch.setattr(TreeGrower, "SERIAL_WORK", 10 ** 12)
    serial_roots = root_histograms(binned, rows, g, h)
    for c in range(1 if criterion == "ole_exact" else 3):
        parallel = grow(c, 0)
        for other in (grow(c, 10 ** 12), grow(c, 0, root_hist=roots[c].copy()),
                      grow(c, 0, root_hist=serial_roots[c].copy())):
            for name in parallel.dtype.names:
                np.testing.assert_array_equal(other[name], parallel[name])


def test_planted_split_recovered():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(2000, 5))
    y = (X[:, 3] > 0.62).astype(float) * 2 + np.abs(rng.normal(0, 0.05, 2000))
    m = MARTRanker(objective="ls", num_leaves=2, n_estimators=1, learning_rate=1.0).fit(X, y, group=[len(y)])
    root = m.trees_[0][0][0]
    assert root["feature"] == 3 and abs(root["threshold"] - 0.62) < 0.01


@pytest.mark.parametrize("n_pairs", [0, 1, 5000, 3 * (1 << 14) + 7])
def test_the_pair_partition_keeps_the_pairs_order_at_any_thread_count(n_pairs):
    """``_pair_sides`` and ``_pair_sides_parallel`` (over fixed chunks) return the pairs inside,
    outside and crossing the marked rows in their order, the same at 1 and 2 threads and with more
    pairs than a chunk (every chunk offset exercised)."""
    import numba

    from reference import grower

    rng = np.random.default_rng(n_pairs)
    member = rng.random(500) < 0.4
    pi = rng.integers(0, 500, n_pairs).astype(np.int64)
    pj = rng.integers(0, 500, n_pairs).astype(np.int64)
    ph = rng.random(n_pairs)
    a, b = member[pi], member[pj]
    want = [m for mask in (a & b, ~a & ~b, a ^ b) for m in (pi[mask], pj[mask], ph[mask])]
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for kernel in (grower._pair_sides, grower._pair_sides_parallel):
                got = kernel(member, pi, pj, ph)
                for x, y in zip(got, want):
                    np.testing.assert_array_equal(x, y)
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("criterion", ["se", "ole", "ole_exact"])
@pytest.mark.parametrize("growth", ["best_first", "breadth_first", "depth_first"])
def test_the_last_split_builds_nothing_for_its_leaves(ranking_20, criterion, growth):
    """The children of a tree's last split stay leaves, so the grower builds neither their histograms
    nor their pairs nor their split searches; the tree is the one a grower doing all of that grows."""
    d, binned, n_bins = ranking_20
    g, h, pairs = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10, return_pairs=True)

    class Everything(TreeGrower):
        LAST_SPLIT_LEAVES = False

    rows = np.arange(binned.shape[0], dtype=np.int64)
    for leaves, extra in ((2, {}), (5, {}), (12, {}), (6, {"lambda_l2": 1.0, "leaf_value": "mean"})):
        kw = dict(criterion=criterion, growth=growth, num_leaves=leaves, min_data_in_leaf=5,
                  pairs=(pairs.i, pairs.j, pairs.h) if criterion == "ole_exact" else None, **extra)
        fast = TreeGrower(binned, n_bins, g, h, rows, **kw).grow()
        full = Everything(binned, n_bins, g, h, rows, **kw).grow()
        assert (fast["feature"] < 0).sum() == leaves
        for name in fast.dtype.names:
            np.testing.assert_array_equal(fast[name], full[name], err_msg=f"{name} {leaves}")


def test_a_root_of_every_row_takes_the_pairs_as_they_are(ranking_20):
    """With every row in the root, exact OLE's root pairs are the pairs passed, not a partition of
    them: the tree equals the one grown where one more (unused) row makes the grower partition."""
    d, binned, n_bins = ranking_20
    g, h, pairs = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", None, return_pairs=True)
    rows = np.arange(binned.shape[0], dtype=np.int64)
    extra = np.asfortranarray(np.vstack([binned, binned[:1]]))
    kw = dict(criterion="ole_exact", num_leaves=9, min_data_in_leaf=5, pairs=(pairs.i, pairs.j, pairs.h))
    direct = TreeGrower(binned, n_bins, g, h, rows, **kw).grow()
    partitioned = TreeGrower(extra, n_bins, np.append(g, 0.0), np.append(h, 0.0), rows, **kw).grow()
    for name in direct.dtype.names:
        np.testing.assert_array_equal(direct[name], partitioned[name], err_msg=name)


THREAD_TREES = """
import hashlib, sys
import numpy as np
from lambda_objectives.data.datasets import make_ranking
from reference import MARTRanker
d = make_ranking(150, docs_per_query=(5, 60), n_features=9, seed=11)
for kw in (dict(criterion="se"), dict(criterion="ole"), dict(criterion="ole_exact"),
           dict(criterion="ole_exact", k=None, growth="breadth_first"), dict(objective="mcrank")):
    row = []
    for threads in (1, 2, 3):
        args = dict(objective="lambda", metric="ndcg", k=10, num_leaves=15, n_estimators=3, min_data_in_leaf=5,
                    n_threads=threads)
        args.update(kw)
        m = MARTRanker(**args).fit(d.X, d.y, group=d.group, history_loss=False)
        digest = hashlib.md5()
        for tree in m.trees_:
            for t in (tree if isinstance(tree, (list, tuple)) else [tree]):
                digest.update(np.ascontiguousarray(t).tobytes())
        digest.update(m.predict(d.X).tobytes())
        row.append(digest.hexdigest())
    print(sorted(kw.items()), *row)
"""


def test_trees_are_the_same_bits_at_one_two_and_three_threads():
    """Every kernel of a tree sums in an order fixed by its rows and pairs, never by the thread
    count: SE, Newton OLE, exact OLE (bounded best-first and full-list breadth-first) and McRank
    trees (every field of every node, and the predictions) are the same bits at 1, 2 and 3 threads
    (numba started with 3 threads in a fresh process, whatever the machine's cores)."""
    assert_same_bits_at_three_threads(THREAD_TREES, 5)


@pytest.mark.kernel
def test_gathered_sums_are_numpys_to_the_bit():
    """``gathered_sum(v, rows)`` (NumPy's pairwise order walked without recursion or a gathered copy)
    equals ``float(v[rows].sum())`` to the bit: every length from 0 to 300 (the unrolled block's
    edges at 8 and 128), lengths around the halvings up to 70,000, int32 and int64 rows, values of
    very different sizes (where the order of the additions shows)."""
    from reference.grower import _partition_sums, gathered_sum

    rng = np.random.default_rng(12)
    v = rng.normal(size=80_000) * rng.choice([1e-9, 1.0, 1e9], size=80_000)
    lengths = list(range(301)) + [1023, 1024, 1025, 4095, 4097, 8191, 8193, 16_385, 65_537, 70_000]
    for n in lengths:
        rows = np.sort(rng.choice(v.shape[0], n, replace=False))
        for dtype in (np.int64, np.int32):
            r = rows.astype(dtype)
            assert gathered_sum(v, r) == float(v[r].sum()), (n, dtype)
    binned = np.asfortranarray(rng.integers(0, 5, size=(3_000, 2)).astype(np.uint8))
    h = rng.uniform(size=3_000)
    rows = np.sort(rng.choice(3_000, 2_000, replace=False))
    sums = np.empty((2, 3))
    left, right = _partition_sums(binned, rows, 1, 2, v, h, sums)
    np.testing.assert_array_equal(left, rows[binned[rows, 1] <= 2])
    np.testing.assert_array_equal(right, rows[binned[rows, 1] > 2])
    for k, side in enumerate((left, right)):
        assert tuple(sums[k]) == (float(v[side].sum()), float(h[side].sum()), float(side.shape[0]))


@pytest.mark.kernel
def test_partition_keeps_each_sides_rows_in_order():
    """The branch-free ``_partition`` is the mask's split, each side in the rows' order and their dtype,
    as contiguous arrays: no rows, one row, every row to one side (bin 0 and the NaN bin 255 as the
    split bin), a fair coin per row, int32 and int64 rows, column- and row-major bins."""
    from reference.grower import _partition

    rng = np.random.default_rng(21)
    for order in ("F", "C"):
        binned = np.asarray(rng.integers(0, 256, size=(5_000, 3)).astype(np.uint8), order=order)
        binned[::7, 2] = 255
        for n in (0, 1, 2, 9, 4_999, 5_000):
            rows = np.sort(rng.choice(5_000, n, replace=False))
            for dtype in (np.int64, np.int32):
                r = rows.astype(dtype)
                for feature, b in ((0, 0), (1, 127), (2, 254), (2, 255), (0, 255)):
                    left, right = _partition(binned, r, feature, b)
                    go = binned[r, feature] <= b
                    for got, want in ((left, r[go]), (right, r[~go])):
                        assert got.dtype == dtype and got.flags.c_contiguous
                        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("criterion", ["se", "ole", "ole_exact"])
def test_trees_from_pooled_buffers_are_the_trees_from_fresh_ones(ranking_20, criterion):
    """Growers sharing a pool of histogram buffers (``buffers``, as a fit's trees do) grow the trees of
    growers allocating their own, tree after tree (the later trees on the earlier trees' buffers,
    whatever those hold), and every buffer a tree took is back in the pool once it is grown."""
    d, binned, n_bins = ranking_20
    rng = np.random.default_rng(13)
    rows = np.arange(binned.shape[0], dtype=np.int64)
    pool = {}
    for t in range(3):
        F = rng.normal(size=d.y.shape[0])
        g, h, pairs = lambda_gradients(F, d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
        kw = dict(criterion=criterion, num_leaves=12, min_data_in_leaf=5, pairs=(pairs.i, pairs.j, pairs.h))
        fresh = TreeGrower(binned, n_bins, g, h, rows, **kw).grow()
        grower = TreeGrower(binned, n_bins, g, h, rows, buffers=pool, **kw)
        pooled = grower.grow()
        for name in fresh.dtype.names:
            np.testing.assert_array_equal(pooled[name], fresh[name], err_msg=f"{name}, tree {t}")
        assert grower._taken == [] and sum(len(v) for v in pool.values()) > 0
    held = [id(b) for v in pool.values() for b in v]
    assert len(held) == len(set(held))  # no buffer handed out twice


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 8, 9, 13, 17])
def test_split_kernel_groups_of_eight_sum_as_one_feature_at_a_time(ranking_20, n_features):
    """``_split_children`` builds the smaller child in groups of 8 features (then 4, then one at a time):
    every bin is the plain row-order loop's sum, to the bit, and the larger child is ``parent − small``,
    at 1 and 2 threads."""
    from lambda_objectives import numba_threads
    from reference.grower import _split_children
    from reference.histogram import new_histogram

    d, binned, n_bins = ranking_20
    binned, n_bins = np.asfortranarray(binned[:, :n_features]), n_bins[:n_features]
    rng = np.random.default_rng(14)
    n = binned.shape[0]
    g, h = rng.normal(size=n), rng.uniform(size=n)
    rows = np.sort(rng.choice(n, n // 3, replace=False)).astype(np.int64)
    parent = rng.normal(size=(n_features, 256, 3))
    brute = np.zeros((n_features, 256, 3))
    for f in range(n_features):
        for r in rows:
            brute[f, binned[r, f]] += (g[r], h[r], 1.0)
    sums = np.array([[g[rows].sum(), h[rows].sum(), rows.shape[0]], [1.0, 1.0, 1.0]])
    for threads in (1, 2):
        with numba_threads(threads):
            small, large = new_histogram(n_features), parent.copy()
            gains, bins = np.empty((2, n_features)), np.empty((2, n_features), dtype=np.int64)
            _split_children(binned, rows, g, h, small, large, n_bins, np.ones(n_features, dtype=np.bool_), sums,
                            np.array([True, False]), 1, 0.0, 5.0, 1e-3, np.zeros((1, 1)), gains, bins)
            np.testing.assert_array_equal(small, brute)
            np.testing.assert_array_equal(large, parent - brute)



@pytest.mark.parametrize("bounded", [False, True])
def test_pair_histograms_built_inside_the_search_grow_the_same_trees(ranking_20, bounded):
    """A node whose pair histograms are built inside its search (``_pair_split``: every node without
    a bound, or below ``FUSED_PAIR_WORK`` without the bounds) grows, bit for bit, the tree of the
    nodes built into buffers (``FUSED_PAIR_WORK = 0``, unbounded), at any threshold; the fused
    search really ran, and never at 0."""
    d, binned, n_bins = ranking_20
    rng = np.random.default_rng(22)
    g, h, pairs = lambda_gradients(rng.normal(size=d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
    rows = np.arange(binned.shape[0], dtype=np.int64)
    kw = dict(criterion="ole_exact", num_leaves=31, min_data_in_leaf=3, pairs=(pairs.i, pairs.j, pairs.h))
    brute = Dense(binned, n_bins, g, h, rows, exact_bounds=False, **kw).grow()
    for work in (0, 2_000, 50_000, 10 ** 12):
        fused = []

        class Fused(TreeGrower):
            FUSED_PAIR_WORK = work

            def _pair_split(self, node):
                fused.append(node.pairs[0].shape[0])
                return super()._pair_split(node)

        tree = Fused(binned, n_bins, g, h, rows, exact_bounds=bounded, **kw).grow()
        for name in brute.dtype.names:
            np.testing.assert_array_equal(tree[name], brute[name], err_msg=f"{name}, work {work}")
        assert bool(fused) == (bounded or work > 0), work
        if work == 10 ** 12 and not bounded:
            assert max(fused) > 0  # nodes with pairs, not only empty ones


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 8, 11, 17])
def test_pair_split_kernel_is_the_search_on_built_pair_histograms(n_features):
    """``_pair_split_kernel`` (the pair histograms of each word built inside the search) returns, to
    the bit, the gains and bins of ``find_best_split`` on ``build_pair_histograms``' histograms: no
    pairs, one, a few and many, int32 and int64 ids, pairs of negative weight, masked features, λ₂,
    a last partial word, at 1 and 2 threads."""
    from lambda_objectives import numba_threads
    from reference.binning import pack_bins
    from reference.grower import _pair_split_kernel
    from reference.histogram import build_histogram, build_pair_histograms, new_histogram
    from reference.splitting import OLE_EXACT, find_best_split

    rng = np.random.default_rng(23)
    n = 400
    binned = np.asfortranarray(rng.integers(0, 40, size=(n, n_features)).astype(np.uint8))
    binned[::9, 0] = 255  # NaN bin
    n_bins = np.full(n_features, 40, dtype=np.int64)
    words = pack_bins(binned)
    g, h = rng.normal(size=n), rng.uniform(0.1, 1.0, size=n)
    rows = np.arange(n, dtype=np.int64)
    hist = new_histogram(n_features)
    build_histogram(words, rows, g, h, hist)
    G, H, N = float(g.sum()), float(h.sum()), float(n)
    for n_pairs in (0, 1, 5, 3_000):
        pi, pj = rng.integers(0, n, n_pairs), rng.integers(0, n, n_pairs)
        ph = rng.uniform(0.0, 0.05, n_pairs) * rng.choice([1.0, 1.0, -1.0], n_pairs)
        H_exact = H - 2.0 * float(ph.sum())
        mask = rng.random(n_features) < 0.7
        for ids in (np.int64, np.int32):
            for lam in (0.0, 1.0):
                pmax, pmin = np.empty((n_features, 256)), np.empty((n_features, 256))
                build_pair_histograms(words, pi.astype(ids), pj.astype(ids), ph, pmax, pmin)
                want_gain, want_bin = np.empty(n_features), np.empty(n_features, dtype=np.int64)
                find_best_split(hist, n_bins, mask, G, H, N, H_exact, OLE_EXACT, lam, 5.0, 1e-3, pmax, pmin, want_gain,
                                want_bin)
                for threads in (1, 2):
                    with numba_threads(threads):
                        gain, b = np.empty(n_features), np.empty(n_features, dtype=np.int64)
                        _pair_split_kernel(words, hist, n_bins, mask, G, H, N, H_exact, lam, 5.0, 1e-3, pi.astype(ids),
                                           pj.astype(ids), ph, gain, b)
                    np.testing.assert_array_equal(gain, want_gain, err_msg=f"{n_pairs} pairs, {ids}, λ {lam}")
                    np.testing.assert_array_equal(b, want_bin)
                    assert np.all(gain[~mask] == -np.inf) and np.all(b[~mask] == -1)
        assert n_pairs == 0 or np.isfinite(want_gain).any()


@pytest.mark.parametrize("criterion", ["se", "ole"])
def test_gradients_of_another_dtype_grow_the_float64_tree(ranking_20, criterion):
    """The grower takes g, h in float64 whatever their dtype (its kernels have one float64 variant): float32
    gradients grow, bit for bit, the tree of the same values converted by the caller, and are left as
    they were."""
    d, binned, n_bins = ranking_20
    g, h = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10)
    g32, h32 = g.astype(np.float32), h.astype(np.float32)
    before = (g32.copy(), h32.copy())
    rows = np.arange(binned.shape[0], dtype=np.int64)
    kw = dict(criterion=criterion, num_leaves=9, min_data_in_leaf=5)
    tree32 = TreeGrower(binned, n_bins, g32, h32, rows, **kw).grow()
    tree64 = TreeGrower(binned, n_bins, g32.astype(np.float64), h32.astype(np.float64), rows, **kw).grow()
    assert (tree64["feature"] >= 0).sum() > 0
    for name in tree64.dtype.names:
        np.testing.assert_array_equal(tree32[name], tree64[name], err_msg=name)
    np.testing.assert_array_equal(g32, before[0])
    np.testing.assert_array_equal(h32, before[1])


@pytest.mark.parametrize("criterion", ["se", "ole", "ole_exact"])
def test_trees_from_packed_words_given_or_packed_by_the_grower_are_the_same(ranking_20, criterion):
    """A grower handed ``words=pack_bins(binned)`` (as a fit's trees are) grows the tree of one packing
    the bins itself, bit for bit, on every row and on a row subsample; words of another matrix's shape or
    type are refused."""
    from reference.binning import pack_bins

    d, binned, n_bins = ranking_20
    g, h, pairs = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10, return_pairs=True)
    kw = dict(criterion=criterion, num_leaves=12, min_data_in_leaf=5, pairs=(pairs.i, pairs.j, pairs.h))
    words = pack_bins(binned)
    for rows in (np.arange(binned.shape[0], dtype=np.int64), np.arange(0, binned.shape[0], 2, dtype=np.int64)):
        own = TreeGrower(binned, n_bins, g, h, rows, **kw).grow()
        given = TreeGrower(binned, n_bins, g, h, rows, words=words, **kw).grow()
        assert (own["feature"] >= 0).sum() > 0
        for name in own.dtype.names:
            np.testing.assert_array_equal(given[name], own[name], err_msg=name)
    for bad in (words[:, :-1], words.astype(np.int64), np.asfortranarray(words), binned):
        with pytest.raises(ValueError, match="words must be None or reference.binning.pack_bins"):
            TreeGrower(binned, n_bins, g, h, rows, words=bad, **kw)
