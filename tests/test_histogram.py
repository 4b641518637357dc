"""Tests of reference.histogram: histograms and their subtraction against a brute-force build."""

import numpy as np

import pytest

from lambda_objectives import lambda_gradients
from reference import BinMapper
from reference.binning import pack_bins
from reference import histogram as hist_module
from reference.histogram import build_histogram, build_pair_histograms, new_histogram


def test_histogram_subtraction_equals_brute_force(small_ranking):
    binned = BinMapper().fit_transform(small_ranking.X)
    rng = np.random.default_rng(0)
    g, h = rng.normal(size=binned.shape[0]), rng.uniform(size=binned.shape[0])
    rows = np.arange(binned.shape[0], dtype=np.int64)
    child = np.sort(rng.choice(rows, rows.shape[0] // 3, replace=False))
    rest = np.setdiff1d(rows, child)
    parent_h, child_h, direct = (new_histogram(binned.shape[1]) for _ in range(3))
    build_histogram(binned, rows, g, h, parent_h)
    out = parent_h.copy()
    build_histogram(binned, child, g, h, child_h, out)  # out: parent − child
    build_histogram(binned, rest, g, h, direct)
    np.testing.assert_allclose(out, direct, rtol=1e-10, atol=1e-10)
    brute = np.zeros_like(direct)
    for r in rest:
        for f in range(binned.shape[1]):
            brute[f, binned[r, f]] += (g[r], h[r], 1.0)
    np.testing.assert_allclose(direct, brute, rtol=1e-12, atol=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("serial", [False, True])
def test_per_feature_pair_histograms_are_bit_identical_to_the_full_build(small_ranking, serial):
    """Exact OLE builds a node's pair histograms only for the features it evaluates: the same sums
    in the same order as the all-feature build, to the last bit (and the single-threaded kernels'
    sums equal the multi-threaded ones)."""
    binned = BinMapper().fit_transform(small_ranking.X)
    s = np.random.default_rng(1).normal(size=binned.shape[0])
    _, _, p = lambda_gradients(s, small_ranking.y, small_ranking.group_ptr, "ndcg", 10, return_pairs=True)
    nf = binned.shape[1]
    full_max, full_min = np.empty((nf, 256)), np.empty((nf, 256))
    build_pair_histograms(pack_bins(binned), p.i, p.j, p.h, full_max, full_min)
    some = np.array([5, 0, 3], dtype=np.int64)
    out_max, out_min = np.full((nf, 256), np.nan), np.full((nf, 256), np.nan)
    kernel = hist_module.build_pair_histograms_of_serial if serial else hist_module.build_pair_histograms_of
    kernel(binned, some, p.i, p.j, p.h, out_max, out_min)
    np.testing.assert_array_equal(out_max[some], full_max[some])
    np.testing.assert_array_equal(out_min[some], full_min[some])
    assert np.isnan(np.delete(out_max, some, axis=0)).all()  # the other features untouched
    serial_max, serial_min = np.empty((nf, 256)), np.empty((nf, 256))
    hist_module.build_pair_histograms_serial(pack_bins(binned), p.i, p.j, p.h, serial_max, serial_min)
    np.testing.assert_array_equal(serial_max, full_max)
    np.testing.assert_array_equal(serial_min, full_min)
    brute_max, brute_min = np.zeros((nf, 256)), np.zeros((nf, 256))
    for i, j, x in zip(p.i, p.j, p.h):
        for f in range(nf):
            brute_max[f, max(binned[i, f], binned[j, f])] += x
            brute_min[f, min(binned[i, f], binned[j, f])] += x
    np.testing.assert_allclose(full_max, brute_max, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(full_min, brute_min, rtol=1e-12, atol=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("serial", [False, True])
def test_weight_histograms(small_ranking, serial):
    """The bound's weight channel: built alone, added, or in the row histogram's pass (which must
    leave that histogram bit-identical to ``build_histogram``'s)."""
    binned = BinMapper().fit_transform(small_ranking.X)
    rng = np.random.default_rng(2)
    g, h, w = rng.normal(size=binned.shape[0]), rng.uniform(size=binned.shape[0]), rng.normal(size=binned.shape[0])
    rows = np.sort(rng.choice(binned.shape[0], binned.shape[0] // 3, replace=False)).astype(np.int64)
    nf = binned.shape[1]
    brute = np.zeros((nf, 256))
    for r in rows:
        for f in range(nf):
            brute[f, binned[r, f]] += w[r]
    k = "_serial" if serial else ""
    alone = np.zeros((nf, 256))
    getattr(hist_module, "add_weight_histogram" + k)(pack_bins(binned), rows, w, alone)
    np.testing.assert_allclose(alone, brute, rtol=1e-12, atol=1e-12)
    added = np.ones((nf, 256))
    getattr(hist_module, "add_weight_histogram" + k)(pack_bins(binned), rows, w, added)
    np.testing.assert_allclose(added, 1.0 + alone, rtol=1e-12)
    plain, fused, fused_w = new_histogram(nf), new_histogram(nf), np.empty((nf, 256))
    build_histogram(binned, rows, g, h, plain)
    getattr(hist_module, "build_histogram_and_weights" + k)(pack_bins(binned), rows, g, h, w, fused, fused_w)
    np.testing.assert_array_equal(fused, plain)
    np.testing.assert_array_equal(fused_w, alone)


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 7, 8])
def test_feature_blocks_sum_as_one_feature_at_a_time(small_ranking, n_features):
    """``build_histogram`` adds each row to a block of features in turn (and the features left
    over one at a time): every bin's sums are those of a pass over one feature at a time (a plain
    loop over the rows in order, and the weight kernel's pass), to the last bit, at 1 and 2 threads."""
    from lambda_objectives import numba_threads

    X = np.hstack([small_ranking.X, small_ranking.X[:, ::-1]])[:, :n_features]
    binned = BinMapper().fit_transform(X)
    rng = np.random.default_rng(6)
    g, h = rng.normal(size=binned.shape[0]), rng.uniform(size=binned.shape[0])
    rows = np.sort(rng.choice(binned.shape[0], binned.shape[0] // 2, replace=False)).astype(np.int64)
    one_at_a_time, w = new_histogram(n_features), np.empty((n_features, 256))
    hist_module.build_histogram_and_weights_serial(pack_bins(binned), rows, g, h, h, one_at_a_time, w)
    brute = np.zeros((n_features, 256, 3))
    for f in range(n_features):
        for r in rows:
            brute[f, binned[r, f]] += (g[r], h[r], 1.0)
    np.testing.assert_array_equal(one_at_a_time, brute)
    for threads in (1, 2):
        with numba_threads(threads):
            out = new_histogram(n_features)
            build_histogram(binned, rows, g, h, out)
            np.testing.assert_array_equal(out, one_at_a_time)


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 8, 9, 17])
def test_weight_and_pair_kernels_in_feature_blocks_sum_as_one_feature_at_a_time(small_ranking, n_features):
    """The weight kernels add each row, and the pair kernels each pair, to a block of features in
    turn (features left over one at a time, ``build_pair_histograms_of`` through whatever subset
    and order it is given): every bin is the plain loop's sum over the rows or pairs in order, to the
    last bit, serial and parallel, at 1 and 2 threads."""
    from lambda_objectives import numba_threads

    X = np.hstack([small_ranking.X, small_ranking.X[:, ::-1], small_ranking.X[:, 1:]])[:, :n_features]
    binned = BinMapper().fit_transform(X)
    rng = np.random.default_rng(7)
    n = binned.shape[0]
    g, h, w = rng.normal(size=n), rng.uniform(size=n), rng.normal(size=n)
    rows = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int64)
    s = rng.normal(size=n)
    _, _, p = lambda_gradients(s, small_ranking.y, small_ranking.group_ptr, "ndcg", 10, return_pairs=True)
    brute_w = np.zeros((n_features, 256))
    for f in range(n_features):
        for r in rows:
            brute_w[f, binned[r, f]] += w[r]
    brute_max, brute_min = np.zeros((n_features, 256)), np.zeros((n_features, 256))
    for f in range(n_features):
        for i, j, x in zip(p.i, p.j, p.h):
            brute_max[f, max(binned[i, f], binned[j, f])] += x
            brute_min[f, min(binned[i, f], binned[j, f])] += x
    plain = new_histogram(n_features)
    build_histogram(binned, rows, g, h, plain)
    subsets = [np.arange(n_features)[::-1].copy(), rng.permutation(n_features)[: max(1, n_features - 2)],
               np.array([n_features - 1]), rng.permutation(n_features)[:5 % n_features + 1]]
    for threads in (1, 2):
        with numba_threads(threads):
            for k in ("", "_serial"):
                fused, fused_w = new_histogram(n_features), np.full((n_features, 256), np.nan)
                getattr(hist_module, "build_histogram_and_weights" + k)(pack_bins(binned), rows, g, h, w, fused, fused_w)
                np.testing.assert_array_equal(fused, plain)
                np.testing.assert_array_equal(fused_w, brute_w)
                added = np.zeros((n_features, 256))
                getattr(hist_module, "add_weight_histogram" + k)(pack_bins(binned), rows, w, added)
                np.testing.assert_array_equal(added, brute_w)
                full_max, full_min = np.full((n_features, 256), np.nan), np.full((n_features, 256), np.nan)
                getattr(hist_module, "build_pair_histograms" + k)(pack_bins(binned), p.i, p.j, p.h, full_max, full_min)
                np.testing.assert_array_equal(full_max, brute_max)
                np.testing.assert_array_equal(full_min, brute_min)
                for some in subsets:
                    some = some.astype(np.int64)
                    out_max, out_min = np.full((n_features, 256), np.nan), np.full((n_features, 256), np.nan)
                    getattr(hist_module, "build_pair_histograms_of" + k)(binned, some, p.i, p.j, p.h, out_max, out_min)
                    np.testing.assert_array_equal(out_max[some], brute_max[some])
                    np.testing.assert_array_equal(out_min[some], brute_min[some])
                    assert np.isnan(np.delete(out_max, some, axis=0)).all()


@pytest.mark.kernel
@pytest.mark.parametrize("serial", [False, True])
def test_several_columns_in_one_pass_are_bit_identical_to_one_at_a_time(small_ranking, serial):
    """McRank's grades share their root pass (``build_histograms``): each column's histogram is
    ``build_histogram``'s of that column to the last bit, at 1 and 2 threads."""
    from lambda_objectives import numba_threads

    binned = BinMapper().fit_transform(small_ranking.X)
    rng = np.random.default_rng(4)
    n, nf, k = binned.shape[0], binned.shape[1], 5
    g, h = rng.normal(size=(n, k)), rng.uniform(size=(n, k))
    g[::7, 1] = -0.0  # signed zeros and repeated values keep their sums too
    rows = np.sort(rng.choice(n, 2 * n // 3, replace=False)).astype(np.int64)
    kernel = hist_module.build_histograms_serial if serial else hist_module.build_histograms
    for threads in (1, 2):
        with numba_threads(threads):
            both = new_histogram(nf, k)
            kernel(binned, rows, g, h, both)
            for c in range(k):
                one = new_histogram(nf)
                build_histogram(binned, rows, np.ascontiguousarray(g[:, c]), np.ascontiguousarray(h[:, c]), one)
                np.testing.assert_array_equal(both[c], one)
    brute = np.zeros((nf, 256, 3))
    for r in rows:
        for f in range(nf):
            brute[f, binned[r, f]] += (g[r, 3], h[r, 3], 1.0)
    np.testing.assert_allclose(both[3], brute, rtol=1e-12, atol=1e-12)


def test_serial_twins_cache_apart_from_the_parallel_kernels(tmp_path):
    # numba names a kernel's on-disk cache after the function's qualified name and line: twins that
    # shared the parallel kernel's name loaded one cached build for both, so the "parallel" kernels of
    # exact OLE ran on one thread. Checked in a fresh process with an empty cache directory.
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from reference import histogram as H\n"
        "b = np.asfortranarray(np.arange(12, dtype=np.uint8).reshape(6, 2)); r = np.arange(6)\n"
        "x = np.ones(6); hist = np.empty((2, 256, 3)); w = np.empty((2, 256))\n"
        "for name in ('build_histogram_and_weights', 'build_histogram_and_weights_serial'):\n"
        "    getattr(H, name)(b, r, x, x, x, hist, w)\n"
        "print(H.build_histogram_and_weights.targetoptions.get('parallel'),\n"
        "      H.build_histogram_and_weights_serial.targetoptions.get('parallel'))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_DISABLE_JIT", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["True", "None"]
    index = sorted(f.name for f in tmp_path.rglob("*.nbi") if "build_histogram_and_weights" in f.name)
    assert len(index) == 2 and any("_serial" in f for f in index), index


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 8, 9])
def test_a_build_with_its_parent_leaves_the_sibling_subtracted_to_the_bit(small_ranking, n_features):
    """``build_histogram`` and ``build_histogram_and_weights`` given the parent's histogram turn it
    into the sibling's in the same kernel: the same bits as ``parent − child`` after a plain build
    (and the child's own histogram unchanged), serial and parallel, at 1 and 2 threads."""
    from lambda_objectives import numba_threads

    X = np.hstack([small_ranking.X, small_ranking.X[:, ::-1]])[:, :n_features]
    binned = BinMapper().fit_transform(X)
    rng = np.random.default_rng(8)
    n = binned.shape[0]
    g, h, w = rng.normal(size=n), rng.uniform(size=n), rng.normal(size=n)
    every = np.arange(n, dtype=np.int64)
    rows = np.sort(rng.choice(n, n // 3, replace=False)).astype(np.int64)
    parent, child, sibling = (new_histogram(n_features) for _ in range(3))
    build_histogram(binned, every, g, h, parent)
    build_histogram(binned, rows, g, h, child)
    np.subtract(parent, child, out=sibling)
    brute = np.zeros((n_features, 256, 3))
    for f in range(n_features):
        for r in np.setdiff1d(every, rows):
            brute[f, binned[r, f]] += (g[r], h[r], 1.0)
    np.testing.assert_allclose(sibling, brute, rtol=1e-10, atol=1e-10)
    for threads in (1, 2):
        with numba_threads(threads):
            out, p = new_histogram(n_features), parent.copy()
            build_histogram(binned, rows, g, h, out, p)
            np.testing.assert_array_equal(out, child)
            np.testing.assert_array_equal(p, sibling)
            for k in ("", "_serial"):
                out, p, out_w = new_histogram(n_features), parent.copy(), np.empty((n_features, 256))
                getattr(hist_module, "build_histogram_and_weights" + k)(pack_bins(binned), rows, g, h, w, out, out_w, p)
                np.testing.assert_array_equal(out, child)
                np.testing.assert_array_equal(p, sibling)


@pytest.mark.kernel
@pytest.mark.parametrize("n_features", [3, 8, 9])
def test_a_root_of_every_row_builds_without_the_row_index_to_the_bit(small_ranking, n_features):
    """``build_histogram`` with ``rows=None`` (every row, in order: a root, read without the index)
    gives the bits of the build over ``arange(n)``, and with a parent the same sibling, at 1 and 2
    threads, full feature blocks and features left over alike."""
    from lambda_objectives import numba_threads

    X = np.hstack([small_ranking.X, small_ranking.X[:, ::-1]])[:, :n_features]
    binned = BinMapper().fit_transform(X)
    rng = np.random.default_rng(9)
    n = binned.shape[0]
    g, h = rng.normal(size=n), rng.uniform(size=n)
    indexed, parent = new_histogram(n_features), rng.normal(size=(n_features, 256, 3))
    build_histogram(binned, np.arange(n, dtype=np.int64), g, h, indexed)
    for threads in (1, 2):
        with numba_threads(threads):
            out, p = new_histogram(n_features), parent.copy()
            build_histogram(binned, None, g, h, out, p)
            np.testing.assert_array_equal(out, indexed)
            np.testing.assert_array_equal(p, parent - indexed)
