"""Tests of reference.histogram: histograms and their subtraction against a brute-force build."""

import numpy as np

from reference import BinMapper
from reference.histogram import build_histogram, new_histogram, subtract_histogram


def test_histogram_subtraction_equals_brute_force(small_ranking):
    binned = BinMapper().fit_transform(small_ranking.X)
    rng = np.random.default_rng(0)
    g, h = rng.normal(size=binned.shape[0]), rng.uniform(size=binned.shape[0])
    rows = np.arange(binned.shape[0], dtype=np.int64)
    child = np.sort(rng.choice(rows, rows.shape[0] // 3, replace=False))
    rest = np.setdiff1d(rows, child)
    parent_h, child_h, out, direct = (new_histogram(binned.shape[1]) for _ in range(4))
    build_histogram(binned, rows, g, h, parent_h)
    build_histogram(binned, child, g, h, child_h)
    subtract_histogram(parent_h, child_h, out)
    build_histogram(binned, rest, g, h, direct)
    np.testing.assert_allclose(out, direct, rtol=1e-10, atol=1e-10)
    brute = np.zeros_like(direct)
    for r in rest:
        for f in range(binned.shape[1]):
            brute[f, binned[r, f]] += (g[r], h[r], 1.0)
    np.testing.assert_allclose(direct, brute, rtol=1e-12, atol=1e-12)
