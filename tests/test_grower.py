"""Tests of reference.grower.TreeGrower: pair-histogram subtraction and a planted split."""

import numpy as np

from lambda_objectives import lambda_gradients
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
        def _children_pairs(self, left_rows, node):
            out = super()._children_pairs(left_rows, node)
            used.append(out[2] is not None)
            return out[0], out[1], None, None

    class Counting(TreeGrower):
        def _children_pairs(self, left_rows, node):
            out = super()._children_pairs(left_rows, node)
            used.append(out[2] is not None)
            return out

    kw = dict(num_leaves=15, criterion="ole_exact", min_data_in_leaf=5, pairs=(pairs.i, pairs.j, pairs.h))
    direct = Direct(binned, n_bins, g, h, rows, **kw).grow()
    used.clear()
    subtracted = Counting(binned, n_bins, g, h, rows, **kw).grow()
    assert any(used)  # the subtraction path really ran
    np.testing.assert_array_equal(direct["feature"], subtracted["feature"])
    np.testing.assert_array_equal(direct["bin"], subtracted["bin"])
    np.testing.assert_allclose(direct["gain"], subtracted["gain"], rtol=1e-9)
    np.testing.assert_allclose(direct["value"], subtracted["value"], rtol=1e-12)


def test_planted_split_recovered():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(2000, 5))
    y = (X[:, 3] > 0.62).astype(float) * 2 + np.abs(rng.normal(0, 0.05, 2000))
    m = MARTRanker(objective="ls", num_leaves=2, n_estimators=1, learning_rate=1.0).fit(X, y)
    root = m.trees_[0][0][0]
    assert root["feature"] == 3 and abs(root["threshold"] - 0.62) < 0.01
