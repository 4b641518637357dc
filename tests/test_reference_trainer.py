"""Tests of the reference MART trainer: the paper's Theorem 2, σ-invariance, LightGBM parity,
histogram subtraction, exact OLE against brute force, persistence and bad input."""

import numpy as np
import pytest

from conftest import shared_file
from lambda_objectives import lambda_gradients, mean_metric
from lambda_objectives.datasets import make_ranking
from reference import BinMapper, MARTRanker, TreeGrower
from reference.histogram import build_histogram, new_histogram, subtract_histogram
from reference.splitting import CRITERIA, find_best_split


@pytest.fixture(scope="module")
def small():
    return make_ranking(120, docs_per_query=(5, 40), n_features=8, seed=3)


def _same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ra, rb in zip(a.trees_, b.trees_):
        for ta, tb in zip(ra, rb):
            np.testing.assert_array_equal(ta["feature"], tb["feature"])
            np.testing.assert_array_equal(ta["bin"], tb["bin"])
            np.testing.assert_allclose(ta["value"], tb["value"], rtol=1e-12)


@pytest.mark.parametrize("growth", ["best_first", "breadth_first", "depth_first"])
def test_theorem2_se_and_ole_identical_for_least_squares(small, growth):
    # With h = 1, G²/H = G²/N: both criteria pick the same split at every node.
    kw = dict(objective="ls", growth=growth, num_leaves=10, n_estimators=15, learning_rate=0.1)
    se = MARTRanker(criterion="se", **kw).fit(small.X, small.y, group=small.group)
    ole = MARTRanker(criterion="ole", **kw).fit(small.X, small.y, group=small.group)
    _same_trees(se, ole)


def test_theorem2_on_mq2008(shared_data):
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(shared_file(shared_data, "MQ2008", "Fold1", "train.txt")), query_id=True)
    X = X.toarray()
    kw = dict(objective="ls", growth="breadth_first", num_leaves=20, n_estimators=10)
    _same_trees(MARTRanker(criterion="se", **kw).fit(X, y, qid=qid), MARTRanker(criterion="ole", **kw).fit(X, y, qid=qid))


def test_sigma_invariance(small):
    # Burges §7: σ=2 gives scores exactly half of σ=1's at the same learning rate (same rankings).
    kw = dict(objective="lambda", metric="ndcg", k=10, num_leaves=8, n_estimators=10, min_sum_hessian_in_leaf=0.0)
    s1 = MARTRanker(sigma=1.0, **kw).fit(small.X, small.y, group=small.group).predict(small.X)
    s2 = MARTRanker(sigma=2.0, **kw).fit(small.X, small.y, group=small.group).predict(small.X)
    np.testing.assert_allclose(2.0 * s2, s1, rtol=1e-9, atol=1e-12)


def test_histogram_subtraction_equals_brute_force(small):
    binned = BinMapper().fit_transform(small.X)
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


def test_pair_histogram_subtraction_equals_direct_build(small):
    """Exact OLE takes the larger child's pair histograms as parent − smaller − crossing: the
    grown tree must equal the one grown from pair histograms built directly at every node."""
    mapper = BinMapper().fit(small.X)
    binned, n_bins = mapper.transform(small.X), mapper.n_bins_
    s = np.random.default_rng(4).normal(size=small.y.shape[0])
    g, h, pairs = lambda_gradients(s, small.y, small.group_ptr, "ndcg", 10, return_pairs=True)
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


def test_exact_ole_gain_equals_brute_force():
    d = make_ranking(6, docs_per_query=(6, 12), n_features=3, seed=5)
    s = np.random.default_rng(2).normal(size=d.y.shape[0])
    g, h, pairs = lambda_gradients(s, d.y, d.group_ptr, "ndcg", 5, return_pairs=True)
    mapper = BinMapper(8).fit(d.X)
    binned = mapper.transform(d.X)
    rows = np.arange(d.y.shape[0], dtype=np.int64)
    hist = new_histogram(3)
    build_histogram(binned, rows, g, h, hist)
    from reference.histogram import build_pair_histograms

    pmax, pmin = np.empty((3, 256)), np.empty((3, 256))
    build_pair_histograms(binned, pairs.i, pairs.j, pairs.h, pmax, pmin)
    H_exact = h.sum() - 2 * pairs.h.sum()
    gain, best_bin = np.empty(3), np.empty(3, dtype=np.int64)
    find_best_split(hist, mapper.n_bins_, np.ones(3, bool), g.sum(), h.sum(), float(len(rows)), H_exact,
                    CRITERIA["ole_exact"], 0.0, 1.0, 0.0, pmax, pmin, gain, best_bin)

    def exact_h(members):
        inside = members[pairs.i] & members[pairs.j]
        return h[members].sum() - 2 * pairs.h[inside].sum()

    def score(G, H):
        return G * G / H if H > 1e-12 else 0.0

    for f in range(3):
        brute = []
        for b in range(mapper.n_bins_[f] - 1):
            left = binned[:, f] <= b
            if left.sum() < 1 or (~left).sum() < 1:
                continue
            brute.append((score(g[left].sum(), exact_h(left)) + score(g[~left].sum(), exact_h(~left))
                          - score(g.sum(), H_exact), b))
        top = max(brute)
        assert gain[f] == pytest.approx(top[0], rel=1e-10, abs=1e-12)
        assert best_bin[f] == top[1]


def test_lightgbm_first_tree_parity():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(4)
    d = make_ranking(300, docs_per_query=(10, 60), n_features=6, seed=4)
    X = np.round(d.X * 2).clip(-4, 4).astype(np.float64)  # few distinct values: identical bins
    g, h = lambda_gradients(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg", 10)
    g32, h32 = g.astype(np.float32), h.astype(np.float32)
    params = dict(objective=lambda p, ds: (g32, h32), num_leaves=7, learning_rate=1.0, min_data_in_leaf=20,
                  min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0, verbose=-1, num_threads=1, max_bin=255,
                  min_data_in_bin=1, boost_from_average=False, deterministic=True)
    booster = lgb.train(params, lgb.Dataset(X, d.y, group=d.group), 1)
    lgb_splits = []

    def walk(node):
        if "split_feature" in node:
            # integer-valued features: the partition of a threshold t is {x <= floor(t)}; LightGBM
            # places zero-crossing thresholds at ±1e-35, ours halfway between values
            lgb_splits.append((node["split_feature"], np.floor(node["threshold"]), round(node["split_gain"], 3)))
            walk(node["left_child"])
            walk(node["right_child"])

    walk(booster.dump_model()["tree_info"][0]["tree_structure"])
    mapper = BinMapper().fit(X)
    tree = TreeGrower(mapper.transform(X), mapper.n_bins_, g32.astype(np.float64), h32.astype(np.float64),
                      np.arange(X.shape[0], dtype=np.int64), num_leaves=7, criterion="ole").grow()
    ours = [(int(n["feature"]), np.floor(mapper.bin_upper_value(int(n["feature"]), int(n["bin"]))),
             round(float(n["gain"]), 3)) for n in tree if n["feature"] >= 0]
    assert sorted(ours) == sorted(lgb_splits), (ours, lgb_splits)
    assert rng is not None


def test_mq2008_ndcg_close_to_lightgbm_with_same_objective(shared_data):
    lgb = pytest.importorskip("lightgbm")
    from lambda_objectives import LightGBMObjective, load_letor

    tr = load_letor(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"), dtype=np.float64)
    te = load_letor(shared_file(shared_data, "MQ2008", "Fold1", "test.txt"), dtype=np.float64, n_features=tr.X.shape[1])
    rounds = 100
    model = MARTRanker(objective="lambda", metric="ndcg", k=10, criterion="ole", num_leaves=15, learning_rate=0.1,
                       n_estimators=rounds)
    model.fit(tr.X, tr.y, group=tr.group, history_loss=False)
    params = dict(model.get_equivalent_params("lightgbm"), objective=LightGBMObjective("ndcg", k=10), num_threads=1,
                  deterministic=True)
    booster = lgb.train(params, lgb.Dataset(tr.X, tr.y, group=tr.group), rounds)
    ours = mean_metric(model.predict(te.X), te.y, te.group_ptr, "ndcg@10")
    theirs = mean_metric(booster.predict(te.X), te.y, te.group_ptr, "ndcg@10")
    assert abs(ours - theirs) < 0.005, (ours, theirs)


def test_save_load_bitwise_and_inspection(tmp_path, small):
    m = MARTRanker(objective="mcrank", num_leaves=6, n_estimators=4).fit(small.X, small.y, group=small.group)
    m.save(tmp_path / "m.json")
    back = MARTRanker.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(small.X), m.predict(small.X))
    assert "leaf value=" in m.dump_text() and m.feature_importance("split").sum() > 0
    assert m.feature_importance("gain").shape == (small.X.shape[1],)
    text = (tmp_path / "m.json").read_text().replace('"version": 1', '"version": 99')
    (tmp_path / "old.json").write_text(text)
    with pytest.raises(ValueError, match="version 99"):
        MARTRanker.load(tmp_path / "old.json")
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(ValueError, match="not a MARTRanker model"):
        MARTRanker.load(tmp_path / "junk.json")


def test_history_early_stopping_subsampling_and_init_score(small):
    m = MARTRanker(objective="lambda", k=10, num_leaves=6, n_estimators=40, subsample=0.7, colsample=0.5,
                   growth="breadth_first", criterion="se").fit(
        small.X, small.y, group=small.group, eval_set=[(small.X[:500], small.y[:500], None)],
        early_stopping_rounds=3)
    h = m.history_["valid_0"]
    assert len(h["ndcg@10"]) == len(m.trees_) <= 40 and np.isfinite(h["loss"]).all()
    assert m.history_["train"]["loss"][-1] < m.history_["train"]["loss"][0]
    # model adaptation: boosting continues from a base model's scores
    base = np.asarray(small.X[:, 0], dtype=float)
    adapted = MARTRanker(objective="lambda", k=10, num_leaves=6, n_estimators=5).fit(
        small.X, small.y, group=small.group, init_score=base)
    plain = MARTRanker(objective="lambda", k=10, num_leaves=6, n_estimators=5).fit(small.X, small.y, group=small.group)
    assert adapted.history_["train"]["ndcg@10"][0] != plain.history_["train"]["ndcg@10"][0]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda d: MARTRanker().fit(d.X, np.where(np.arange(len(d.y)) == 3, np.nan, d.y), group=d.group), "non-finite"),
        (lambda d: MARTRanker().fit(d.X, d.y, group=d.group[:-1]), "sum to"),
        (lambda d: MARTRanker(n_estimators=1).fit(d.X, d.y, group=d.group, eval_set=[(d.X[:, :3], d.y, d.group)]),
         "eval set 0 has 3 features"),
        (lambda d: MARTRanker(criterion="gini").fit(d.X, d.y, group=d.group), "criterion"),
        (lambda d: MARTRanker(objective="ls", criterion="ole_exact").fit(d.X, d.y, group=d.group), "pairwise"),
        (lambda d: MARTRanker(n_estimators=1).fit(d.X, d.y, group=d.group).predict(d.X[:, :2]), "2 features"),
    ],
)
def test_bad_input(small, call, match):
    with pytest.raises(ValueError, match=match):
        call(small)


def test_n_threads_is_honoured_and_does_not_change_the_model(small, monkeypatch):
    import numba

    import reference.grower as grower

    seen = []
    real = grower.build_histogram

    def spy(*args):
        seen.append(numba.get_num_threads())
        return real(*args)

    monkeypatch.setattr(grower, "build_histogram", spy)
    kw = dict(objective="lambda", metric="ndcg", k=10, criterion="ole_exact", num_leaves=7, n_estimators=3)
    one = MARTRanker(n_threads=1, **kw).fit(small.X, small.y, group=small.group)
    assert set(seen) == {1}
    seen.clear()
    every = MARTRanker(n_threads=None, **kw).fit(small.X, small.y, group=small.group)
    assert set(seen) == {numba.config.NUMBA_NUM_THREADS}
    # each kernel writes only its own slice: the thread count cannot change a single bit
    np.testing.assert_array_equal(one.predict(small.X), every.predict(small.X))
