"""Engine adapters: parity with the native objectives on real data, API paths, guards."""

import warnings

import numpy as np
import pytest

from lambda_objectives import metric_values

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

from _oracles import metric_of_query  # noqa: E402
from conftest import shared_file, ten_row_queries  # noqa: E402

from lambda_objectives.adapters import (  # noqa: E402
    HessianWarning,
    LightGBMObjective,
    XGBLambdaRanker,
    XGBoostObjective,
    lightgbm_metric,
    xgboost_metric,
)


def _load(path, query_file=None):
    from sklearn.datasets import load_svmlight_file

    if query_file is None:
        X, y, qid = load_svmlight_file(str(path), query_id=True)
        ptr = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    else:
        X, y = load_svmlight_file(str(path))
        ptr = np.r_[0, np.cumsum(np.loadtxt(query_file, dtype=np.int64))]
    return np.asarray(X.todense(), dtype=np.float32), y, ptr


@pytest.fixture(scope="module")
def mq2008(shared_data):
    tr = _load(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"))
    te = _load(shared_file(shared_data, "MQ2008", "Fold1", "test.txt"))
    return tr, te


@pytest.fixture(scope="module")
def yahoo(shared_data):
    d = "yahoo-sample"
    tr = _load(shared_file(shared_data, d, "rank.train"), shared_file(shared_data, d, "rank.train.query"))
    te = _load(shared_file(shared_data, d, "rank.test"), shared_file(shared_data, d, "rank.test.query"))
    n = min(tr[0].shape[1], te[0].shape[1])  # svmlight infers widths per file
    return (tr[0][:, :n], tr[1], tr[2]), (te[0][:, :n], te[1], te[2])


def _mean_ndcg(scores, y, ptr, k=10):
    return np.mean([metric_of_query(list(scores[a:b]), list(y[a:b]), "ndcg", k)
                    for a, b in zip(ptr[:-1], ptr[1:])])


LGB_PARAMS = dict(verbose=-1, num_threads=1, deterministic=True, force_row_wise=True, num_leaves=15,
                  learning_rate=0.1, min_data_in_leaf=20)


@pytest.mark.parametrize("dataset", ["mq2008", "yahoo"])
def test_lightgbm_preset_equals_native_lambdarank(dataset, request):
    (X, y, ptr), (Xt, yt, ptrt) = request.getfixturevalue(dataset)
    group = np.diff(ptr)
    native1 = lgb.train({**LGB_PARAMS, "objective": "lambdarank"}, lgb.Dataset(X, y, group=group), 1)
    ours1 = lgb.train({**LGB_PARAMS, "objective": LightGBMObjective(preset="lightgbm")},
                      lgb.Dataset(X, y, group=group), 1)
    tree = lambda b: b.model_to_string().split("Tree=0")[1].split("end of trees")[0]  # noqa: E731
    assert tree(native1) == tree(ours1)  # one round: the identical tree, text for text

    rounds = 100
    native = lgb.train({**LGB_PARAMS, "objective": "lambdarank"}, lgb.Dataset(X, y, group=group), rounds)
    obj = LightGBMObjective(preset="lightgbm")
    ours = lgb.train({**LGB_PARAMS, "objective": obj}, lgb.Dataset(X, y, group=group), rounds)
    pn, po = native.predict(Xt), ours.predict(Xt)
    np.testing.assert_array_equal(pn, po)  # bit-exact
    assert abs(_mean_ndcg(pn, yt, ptrt) - _mean_ndcg(po, yt, ptrt)) <= 1e-4


@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
def test_xgboost_preset_equals_native(metric, mq2008):
    (X, y, ptr), (Xt, yt, ptrt) = mq2008
    if metric == "map":
        y = (y > 0).astype(float)
    params = dict(nthread=1, max_depth=4, eta=0.1, base_score=0.0, tree_method="hist")
    dtrain = xgb.DMatrix(X, y, group=np.diff(ptr))
    native = xgb.train({**params, "objective": f"rank:{metric}"}, dtrain, 30)
    ours = xgb.train(params, dtrain, 30, obj=XGBoostObjective(metric, preset="xgboost"))
    dt = xgb.DMatrix(Xt)
    pn, po = native.predict(dt, output_margin=True), ours.predict(dt, output_margin=True)
    np.testing.assert_allclose(po, pn, atol=1e-5)
    assert abs(_mean_ndcg(pn, yt, ptrt) - _mean_ndcg(po, yt, ptrt)) <= 1e-4


def test_xgboost_preset_group_weights_and_options(yahoo):
    (X, y, ptr), _ = yahoo
    n_q = len(ptr) - 1
    w = np.random.default_rng(0).uniform(0.5, 2.0, n_q)
    dtrain = xgb.DMatrix(X, y, group=np.diff(ptr), weight=w)
    opts = dict(lambdarank_num_pair_per_sample=5, lambdarank_score_normalization=False)
    params = dict(nthread=1, max_depth=4, eta=0.3, base_score=0.0)
    native = xgb.train({**params, "objective": "rank:ndcg", **opts}, dtrain, 10)
    ours = xgb.train(params, dtrain, 10, obj=XGBoostObjective(k=5, preset="xgboost", score_normalization=False))
    np.testing.assert_allclose(ours.predict(dtrain, output_margin=True),
                               native.predict(dtrain, output_margin=True), atol=1e-5)


@pytest.fixture(scope="module")
def ohsumed(shared_data):
    return _load(shared_file(shared_data, "OHSUMED", "QueryLevelNorm", "Fold1", "train.txt"))


XGB_MEAN_PARAMS = dict(nthread=1, max_depth=4, eta=0.1, base_score=0.0, tree_method="hist")


def _native_and_mean_preset(X, y, ptr, metric, m, rounds, weight=None, nthread=1, **options):
    if metric == "map":
        y = (y > 0).astype(float)
    dtrain = xgb.DMatrix(X, y, group=np.diff(ptr), weight=weight)
    params = {**XGB_MEAN_PARAMS, "nthread": nthread}
    native = xgb.train({**params, "objective": f"rank:{metric}", "lambdarank_pair_method": "mean",
                        "lambdarank_num_pair_per_sample": m, **{f"lambdarank_{k}": v for k, v in options.items()}},
                       dtrain, rounds)
    obj = XGBoostObjective(metric, preset="xgboost", pair_method="mean", num_pair_per_sample=m, **options)
    ours = xgb.train(params, dtrain, rounds, obj=obj)
    assert obj.iteration == rounds
    return native.predict(dtrain, output_margin=True), ours.predict(dtrain, output_margin=True)


@pytest.mark.parametrize("m", [1, 4])
@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
@pytest.mark.parametrize("dataset", ["mq2008", "ohsumed"])
def test_xgboost_mean_preset_equals_native(dataset, metric, m, request):
    """XGBoost 3.0-3.3 on Linux: the sampled pairs, hence the predictions, are the native ones
    (bit for bit with XGBoost 3.2.0; a seed off by one round is off by ~1 in the margins)."""
    data = request.getfixturevalue(dataset)
    X, y, ptr = data[0] if dataset == "mq2008" else data
    pn, po = _native_and_mean_preset(X, y, ptr, metric, m, 12)
    np.testing.assert_allclose(po, pn, rtol=0, atol=1e-6)


def test_xgboost_mean_preset_synthetic_weights_threads_continuation_and_cv():
    from lambda_objectives import make_ranking

    d = make_ranking(40, docs_per_query=(2, 30), n_features=5, seed=11)
    w = np.random.default_rng(1).uniform(0.5, 2.0, d.group.shape[0])
    for m in (1, 3):
        pn, po = _native_and_mean_preset(d.X, d.y, d.group_ptr, "ndcg", m, 10, weight=w, nthread=2,
                                         score_normalization=False)
        np.testing.assert_allclose(po, pn, rtol=0, atol=1e-6)
    dtrain = xgb.DMatrix(d.X, d.y, group=d.group)
    native_params = {**XGB_MEAN_PARAMS, "objective": "rank:ndcg", "lambdarank_pair_method": "mean"}
    # training continuation: xgb.train numbers its rounds from 0 again, so the callback (or iteration = 0) is needed
    native = xgb.train(native_params, dtrain, 4, xgb_model=xgb.train(native_params, dtrain, 4))
    obj = XGBoostObjective(preset="xgboost", pair_method="mean")
    counted = xgb.train(XGB_MEAN_PARAMS, dtrain, 4, obj=obj, xgb_model=xgb.train(XGB_MEAN_PARAMS, dtrain, 4, obj=obj))
    assert obj.iteration == 8
    synced = xgb.train(XGB_MEAN_PARAMS, dtrain, 4, obj=obj, callbacks=[obj.iteration_callback()],
                       xgb_model=xgb.train(XGB_MEAN_PARAMS, dtrain, 4, obj=obj, callbacks=[obj.iteration_callback()]))
    assert obj.iteration == 4
    pn = native.predict(dtrain, output_margin=True)
    np.testing.assert_allclose(synced.predict(dtrain, output_margin=True), pn, rtol=0, atol=1e-6)
    assert np.abs(counted.predict(dtrain, output_margin=True) - pn).max() > 1e-3
    # xgb.cv calls the one objective once per fold and round
    cv_params = dict(XGB_MEAN_PARAMS, eval_metric="ndcg@5")
    native = xgb.cv({**native_params, "eval_metric": "ndcg@5"}, dtrain, 4, nfold=3, seed=0)
    obj = XGBoostObjective(preset="xgboost", pair_method="mean")
    ours = xgb.cv(cv_params, dtrain, 4, nfold=3, seed=0, obj=obj, callbacks=[obj.iteration_callback()])
    np.testing.assert_allclose(ours.values, native.values, rtol=0, atol=1e-6)


def test_xgboost_mean_preset_refuses_versions_it_cannot_reproduce(monkeypatch):
    monkeypatch.setattr(xgb, "__version__", "3.4.1")
    with pytest.raises(ValueError, match="PR #12332"):
        XGBoostObjective(preset="xgboost", pair_method="mean")
    XGBoostObjective(preset="xgboost")  # topk is the same in every 3.x


def test_lgbmranker_receives_group_through_four_argument_call(yahoo):
    (X, y, ptr), _ = yahoo
    seen = []

    class Spy(LightGBMObjective):
        def __call__(self, preds, train_data, weight=None, group=None):
            seen.append(None if group is None else np.asarray(group).copy())
            return super().__call__(preds, train_data, weight, group)

    kw = dict(n_estimators=5, num_leaves=15, learning_rate=0.1, verbose=-1, n_jobs=1, deterministic=True,
              force_row_wise=True)
    ours = lgb.LGBMRanker(objective=Spy(preset="lightgbm"), **kw).fit(X, y, group=np.diff(ptr))
    native = lgb.LGBMRanker(objective="lambdarank", **kw).fit(X, y, group=np.diff(ptr))
    assert len(seen) == 5 and np.array_equal(seen[0], np.diff(ptr))
    np.testing.assert_array_equal(ours.predict(X), native.predict(X))
    sk = LightGBMObjective(preset="lightgbm")
    via_method = lgb.LGBMRanker(objective=sk.sklearn, **kw).fit(X, y, group=np.diff(ptr))
    np.testing.assert_array_equal(via_method.predict(X), native.predict(X))


def test_hessian_trap_warns_or_raises():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.tile([1.0, 1.0, 1.0], 20)  # no pair has different labels: every Hessian is 0
    ds = lgb.Dataset(X, y, group=[3] * 20)
    with pytest.warns(HessianWarning, match="min_sum_hessian_in_leaf"):
        lgb.train({"objective": LightGBMObjective(preset="lightgbm"), "verbose": -1}, ds, 2)
    with pytest.raises(ValueError, match="2239"):
        lgb.train({"objective": LightGBMObjective(preset="lightgbm", check_hessian="raise"), "verbose": -1},
                  lgb.Dataset(X, y, group=[3] * 20), 2)
    y2 = np.tile([0.0, 1.0, 2.0], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", HessianWarning)
        lgb.train({"objective": LightGBMObjective(preset="lightgbm"), "verbose": -1},
                  lgb.Dataset(X, y2, group=[3] * 20), 2)


def test_xgb_ranker_rejects_unsorted_qid_and_trains_sorted(yahoo):
    (X, y, ptr), (Xt, yt, ptrt) = yahoo
    qid = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    bad = qid.copy()
    bad[[0, -1]] = bad[[-1, 0]]
    with pytest.raises(ValueError, match="non-decreasing"):
        XGBLambdaRanker(XGBoostObjective(preset="xgboost")).fit(X, y, qid=bad)
    qidt = np.repeat(np.arange(len(ptrt) - 1), np.diff(ptrt))
    r = XGBLambdaRanker(XGBoostObjective(preset="xgboost"), n_estimators=20, max_depth=4, nthread=1,
                        eval_metric="ndcg@10", early_stopping_rounds=5)
    r.fit(X, y, qid=qid, eval_set=[(Xt, yt)], eval_qid=[qidt])
    assert "ndcg@10" in r.evals_result_["validation_0"]
    assert r.booster_.best_iteration >= 0
    assert r.predict(Xt).shape == (Xt.shape[0],)


def test_eval_metrics_match_oracle_and_names():
    rng = np.random.default_rng(1)
    ptr = np.array([0, 4, 9, 12])
    y = rng.integers(0, 3, 12).astype(float)
    s = rng.normal(size=12)
    for spec, opts in [("ndcg@3", {}), ("err@5", {"max_label": 2}), ("map@4", {}), ("mrr@2", {})]:
        name, kk = spec.split("@")
        want = np.mean([metric_of_query(list(s[a:b]), list(y[a:b]), name, int(kk), **opts)
                        for a, b in zip(ptr[:-1], ptr[1:])])
        ds = lgb.Dataset(np.zeros((12, 1)), y, group=np.diff(ptr)).construct()
        nm, val, higher = lightgbm_metric(spec)(s, ds)
        assert nm == "lo_" + spec and higher is True and val == pytest.approx(want, abs=1e-12)
        nm2, val2, _ = lightgbm_metric(spec)(y, s, None, np.diff(ptr))  # sklearn form
        assert val2 == pytest.approx(want, abs=1e-12)
        d = xgb.DMatrix(np.zeros((12, 1)), y, group=np.diff(ptr))
        assert xgboost_metric(spec)(s.astype(np.float32), d)[1] == pytest.approx(want, abs=1e-6)
    with pytest.raises(ValueError, match="metric"):
        lightgbm_metric("auc@3")


def test_feval_drives_lightgbm_early_stopping(yahoo):
    (X, y, ptr), (Xt, yt, ptrt) = yahoo
    tr = lgb.Dataset(X, y, group=np.diff(ptr))
    va = lgb.Dataset(Xt, yt, group=np.diff(ptrt), reference=tr)
    log = {}
    b = lgb.train({**LGB_PARAMS, "objective": LightGBMObjective(preset="lightgbm"), "metric": "None"}, tr, 30,
                  valid_sets=[va], valid_names=["test"], feval=[lightgbm_metric("ndcg@10"), lightgbm_metric("err@5")],
                  callbacks=[lgb.record_evaluation(log), lgb.early_stopping(3, first_metric_only=True, verbose=False)])
    assert set(log["test"]) == {"lo_ndcg@10", "lo_err@5"}
    best = b.best_iteration
    assert log["test"]["lo_ndcg@10"][best - 1] == max(log["test"]["lo_ndcg@10"][:best])
    want = np.mean([metric_of_query(list(p[a:c]), list(yt[a:c]), "ndcg", 10)
                    for p in [b.predict(Xt, num_iteration=best)] for a, c in zip(ptrt[:-1], ptrt[1:])])
    assert log["test"]["lo_ndcg@10"][best - 1] == pytest.approx(want, abs=1e-12)


def test_objectives_without_preset_train_end_to_end(mq2008):
    pytest.importorskip("lambda_objectives.objectives.lambdas", reason="lambdas.py not written yet")
    (X, y, ptr), (Xt, yt, ptrt) = mq2008
    group = np.diff(ptr)

    def held_out(p, m):
        return np.mean([metric_of_query(list(p[a:c]), list(yt[a:c]), m, 10, **({"max_label": 2} if m == "err" else {}))
                        for a, c in zip(ptrt[:-1], ptrt[1:])])

    untrained = {m: held_out(np.zeros(len(yt)), m) for m in ("err", "map", "mrr", "ndcg")}
    preds = {}
    for metric in ("ranknet", "err", "map", "mrr", "ndcg"):
        obj = LightGBMObjective(metric, k=10)
        b = lgb.train({**LGB_PARAMS, "objective": obj, "min_sum_hessian_in_leaf": 1e-9},
                      lgb.Dataset(X, y, group=group), 50)
        xr = XGBLambdaRanker(XGBoostObjective(metric, k=10, min_child_weight=1e-9), n_estimators=20,
                             max_depth=4, nthread=1).fit(X, y, group=group)
        preds[("lightgbm", metric)] = b.predict(Xt)
        preds[("xgboost", metric)] = xr.predict(Xt)
    table = {}
    for engine in ("lightgbm", "xgboost"):
        for metric in ("err", "map", "mrr", "ndcg"):
            ours = held_out(preds[(engine, metric)], metric)
            ranknet = held_out(preds[(engine, "ranknet")], metric)
            table[(engine, metric)] = (round(ours, 4), round(ranknet, 4))
            assert ours > untrained[metric], (engine, metric, ours, untrained[metric])
    # improvement over RankNet is reported, not asserted: it is data dependent
    print("held-out metric@10 (own objective, RankNet):", table, "untrained:", untrained)


def test_default_backend_is_lambda_gradients_with_document_weights():
    lam = pytest.importorskip("lambda_objectives.objectives.lambdas", reason="lambdas.py not written yet")
    rng = np.random.default_rng(5)
    ptr = np.array([0, 7, 15, 20])
    y = rng.integers(0, 4, 20).astype(float)
    s = rng.normal(size=20)
    w = rng.uniform(0.5, 2, 20).astype(np.float32).astype(float)  # LightGBM stores float32 weights
    for metric in ("err", "map", "mrr", "ndcg", "ranknet"):
        g, h = lam.lambda_gradients(s, y, ptr, metric, 5, 1.5)
        ds = lgb.Dataset(np.zeros((20, 1)), y, group=np.diff(ptr), weight=w).construct()
        go, ho = LightGBMObjective(metric, k=5, sigma=1.5)(s, ds)
        np.testing.assert_array_equal(go, (g * w).astype(np.float32))
        np.testing.assert_array_equal(ho, (h * w).astype(np.float32))


@pytest.mark.parametrize("opts", [{"pair_method": "mean", "num_pair_per_sample": 2, "seed": 7},
                                  {"metric": "err", "k": 5, "normalize": "lambdarank"},
                                  {"metric": "ndcg_loss2pp", "k": 3, "mu": 5.0, "pair_method": "mean"}])
def test_the_prepared_pair_path_is_lambda_gradients_round_by_round(opts):
    """The exact back end checks the data set and builds its tables once (``lambdas.pair_setup``),
    then each round runs only the pair loop: the same bits as ``lambda_gradients`` with that round's
    ``iteration``, the document weights applied after, the float32 hand-back."""
    lam = pytest.importorskip("lambda_objectives.objectives.lambdas")
    opts = dict(opts)
    metric = opts.pop("metric", "ndcg")
    X, y, ptr, s = _small_ranking(3)
    w = np.linspace(0.5, 2.0, len(ptr) - 1).astype(np.float32)
    dm = xgb.DMatrix(X, y, group=np.diff(ptr), weight=w)
    obj = XGBoostObjective(metric, **opts)
    for r in range(3):
        p = (s + 0.1 * r).astype(np.float32)
        g, h = obj(p, dm)
        kw = {key: v for key, v in opts.items() if key != "k"}
        if "pair_method" in opts:
            kw["iteration"] = r
        if metric == "err":
            kw["max_label"] = float(y.max())
        eg, eh = lam.lambda_gradients(p.astype(np.float64), y, ptr, metric, opts.get("k"), **kw)
        rw = np.repeat(w.astype(np.float64), np.diff(ptr))
        np.testing.assert_array_equal(g, (eg * rw).astype(np.float32))
        np.testing.assert_array_equal(h, (eh * rw).astype(np.float32))


def _small_ranking(seed=0, n_q=12):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, n_q)
    ptr = np.r_[0, np.cumsum(sizes)]
    n = int(ptr[-1])
    return rng.normal(size=(n, 4)), rng.integers(0, 4, n).astype(float), ptr, rng.normal(size=n)


def test_xgboost_objective_sees_set_label_set_weight_set_group():
    X, y, ptr, s = _small_ranking()
    dm = xgb.DMatrix(X, y, group=np.diff(ptr))
    obj = XGBoostObjective("ndcg", k=5)
    p = s.astype(np.float32)
    obj(p, dm)
    y2 = y[::-1].copy()
    dm.set_label(y2)  # on 0.1 the cache kept the old labels: same gradients as before
    got = obj(p, dm)[0].copy()
    want = XGBoostObjective("ndcg", k=5)(p, xgb.DMatrix(X, y2, group=np.diff(ptr)))[0]
    np.testing.assert_array_equal(got, want)
    w = np.linspace(0.5, 2.0, len(ptr) - 1)
    dm.set_weight(w)
    got = obj(p, dm)[0].copy()
    want = XGBoostObjective("ndcg", k=5)(p, xgb.DMatrix(X, y2, group=np.diff(ptr), weight=w))[0]
    np.testing.assert_array_equal(got, want)
    merged = np.r_[np.diff(ptr)[:2].sum(), np.diff(ptr)[2:]]
    dm2 = xgb.DMatrix(X, y2, group=np.diff(ptr))
    obj(p, dm2)
    dm2.set_group(merged)
    got = obj(p, dm2)[0].copy()
    want = XGBoostObjective("ndcg", k=5)(p, xgb.DMatrix(X, y2, group=merged))[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_xgboost_reads_its_arrays_as_views_equal_to_the_getters(weighted):
    """Each round the objective compares the DMatrix's label, group_ptr and weight with its cached
    copies through read-only views of XGBoost's arrays (the getters copy); the views equal the getters'
    arrays, and the state it keeps holds copies, never a view of the engine's memory."""
    from lambda_objectives.adapters.xgboost import _info_views

    X, y, ptr, s = _small_ranking(3)
    w = np.linspace(0.5, 2.0, len(ptr) - 1) if weighted else None
    dm = xgb.DMatrix(X, y, group=np.diff(ptr), weight=w)
    views = _info_views(dm)
    assert views is not None  # the installed XGBoost has XGDMatrixGetInfoRef: the fast path is the one in use
    label, gptr, weight = views
    np.testing.assert_array_equal(label, dm.get_label())
    np.testing.assert_array_equal(gptr, dm.get_uint_info("group_ptr"))
    assert (weight is None) == (not weighted)
    if weighted:
        np.testing.assert_array_equal(weight, dm.get_weight())
    assert not any(v.flags.writeable for v in views if v is not None)
    obj = XGBoostObjective("ndcg", k=5)
    p = s.astype(np.float32)
    first = obj(p, dm)[0].copy()
    st = obj._slot()[1]
    assert obj._cached(dm, *views) is st
    assert not any(np.shares_memory(kept, v) for kept in st["key"] if kept is not None for v in views
                   if v is not None)
    np.testing.assert_array_equal(obj(p, dm)[0], first)
    del dm, views, label, gptr, weight  # XGBoost frees its arrays; the cached copies stay usable
    np.testing.assert_array_equal(obj(p, xgb.DMatrix(X, y, group=np.diff(ptr), weight=w))[0], first)


def test_xgboost_falls_back_to_the_getters(monkeypatch):
    """Without the views (another XGBoost build) the public getters give the same gradients and still
    see set_label."""
    from lambda_objectives.adapters import xgboost as xgb_adapter

    X, y, ptr, s = _small_ranking(4)
    p = s.astype(np.float32)
    want = XGBoostObjective("ndcg", k=5)(p, xgb.DMatrix(X, y, group=np.diff(ptr)))[0].copy()
    monkeypatch.setattr(xgb_adapter, "_info_views", lambda dmatrix: None)
    dm = xgb.DMatrix(X, y, group=np.diff(ptr))
    obj = XGBoostObjective("ndcg", k=5)
    np.testing.assert_array_equal(obj(p, dm)[0], want)
    dm.set_label(y[::-1].copy())
    np.testing.assert_array_equal(obj(p, dm)[0],
                                  XGBoostObjective("ndcg", k=5)(p, xgb.DMatrix(X, y[::-1].copy(),
                                                                             group=np.diff(ptr)))[0])


def test_lightgbm_objective_sees_new_weights_and_labels():
    X, y, ptr, s = _small_ranking(1)
    group = np.diff(ptr)
    w1, w2 = np.ones(len(y)), np.linspace(0.5, 2.0, len(y))
    obj = LightGBMObjective("ndcg", k=5)
    obj(y, s, w1, group)
    got = obj(y, s, w2, group)[0].copy()  # 0.1 kept w1 here
    np.testing.assert_array_equal(got, LightGBMObjective("ndcg", k=5)(y, s, w2, group)[0])
    ds = lgb.Dataset(X, y, group=group).construct()
    obj2 = LightGBMObjective("ndcg", k=5)
    obj2(s, ds)
    ds.set_label(y[::-1].copy())
    got = obj2(s, ds)[0].copy()
    want = LightGBMObjective("ndcg", k=5)(s, lgb.Dataset(X, y[::-1].copy(), group=group).construct())[0]
    np.testing.assert_array_equal(got, want)


def test_non_finite_gradients_never_reach_the_engine():
    X, y, ptr, s = _small_ranking(2)
    s = s.copy()
    s[3] = np.nan  # the presets' kernels do not validate scores; the NaN used to pass through silently
    for obj in (LightGBMObjective(preset="lightgbm"), XGBoostObjective(preset="xgboost"),
                LightGBMObjective(preset="lightgbm", check_hessian=False)):
        with pytest.raises(ValueError, match="scores is not finite at row 3"):  # now refused at the boundary
            obj.gradients(s, y, ptr)
    ds = lgb.Dataset(X, np.r_[1024.0, y[1:]], group=np.diff(ptr))
    with pytest.raises(ValueError, match="overflow"):
        lgb.train({"objective": LightGBMObjective("ndcg"), "verbose": -1}, ds, 2)


def test_eval_metrics_without_groups_raise_a_clear_error():
    X, y, ptr, s = _small_ranking(3)
    with pytest.raises(ValueError, match="no query groups"):
        xgboost_metric("ndcg@10")(s.astype(np.float32), xgb.DMatrix(X, y))
    with pytest.raises(ValueError, match="no query groups"):
        lightgbm_metric("ndcg@10")(s, lgb.Dataset(X, y).construct())
    with pytest.raises(ValueError, match="no query groups"):
        lightgbm_metric("ndcg@10")(y, s, None, None)


def test_eval_metrics_and_objectives_pickle():
    import pickle

    X, y, ptr, s = _small_ranking(4)
    dm = xgb.DMatrix(X, y, group=np.diff(ptr))
    ds = lgb.Dataset(X, y, group=np.diff(ptr)).construct()
    for make, call in ((lightgbm_metric, lambda m: m(s, ds)[1]), (xgboost_metric, lambda m: m(s, dm)[1])):
        m = make("err@5")
        before = call(m)
        again = pickle.loads(pickle.dumps(m))
        assert call(again) == before and again.name.endswith("err@5")
    obj = XGBoostObjective("ndcg", k=5)
    obj(s.astype(np.float32), dm)
    clone = pickle.loads(pickle.dumps(obj))
    np.testing.assert_array_equal(clone(s.astype(np.float32), dm)[0], obj(s.astype(np.float32), dm)[0])


def test_xgboost_early_stopping_maximises_err(yahoo):
    from lambda_objectives import xgboost_early_stopping

    (X, y, ptr), (Xt, yt, ptrt) = yahoo
    obj = XGBoostObjective("ndcg", k=10)
    assert "eval_metric" not in obj.params()  # no second, native metric to drive stopping
    dtr = xgb.DMatrix(X, y, group=np.diff(ptr))
    dva = xgb.DMatrix(Xt, yt, group=np.diff(ptrt))
    metric = xgboost_metric("err@10")
    assert metric.maximize is True
    log = {}
    b = xgb.train(dict(obj.params(), max_depth=3, eta=0.3, nthread=1), dtr, 40, obj=obj, evals=[(dva, "va")],
                  custom_metric=metric, evals_result=log, verbose_eval=False,
                  callbacks=[xgboost_early_stopping(5, metric)])
    hist = log["va"]["err@10"]
    assert b.best_iteration == int(np.argmax(hist))
    r = XGBLambdaRanker(XGBoostObjective("ndcg", k=10), n_estimators=40, eval_metric="err@10", early_stopping_rounds=5,
                        max_depth=3, eta=0.3, nthread=1)
    r.fit(X, y, group=np.diff(ptr), eval_set=[(Xt, yt)], eval_group=[np.diff(ptrt)])
    hist = r.evals_result_["validation_0"]["err@10"]
    assert r.booster_.best_iteration == int(np.argmax(hist))


# --- XGBLambdaRanker as a scikit-learn estimator ---------------------------------------------
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

_PER_QUERY = "XGBoost ranking weights are per query, the check passes one weight per row"
#: checks a ranker cannot pass, and why
XGB_RANKER_EXPECTED_FAILURES = {
    "check_no_attributes_set_in_init": "XGBoost parameters arrive as **xgb_params (like xgb.XGBRanker's "
                                       "**kwargs); each is stored as its own attribute so get_params/clone see it",
    "check_dtype_object": "relevance labels are numeric grades: a string y raises 'y must be numeric', "
                          "not a classifier's 'Unknown label type'",
    **{name: _PER_QUERY for name in (
        "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
        "check_all_zero_sample_weights_error", "check_sample_weights_shape", "check_sample_weights_not_overwritten",
        "check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")},
}


_TenRowQueries = ten_row_queries(XGBLambdaRanker, __name__, "_TenRowQueries")


@pytest.mark.filterwarnings("ignore::lambda_objectives.adapters.HessianWarning")
@parametrize_with_checks([_TenRowQueries(n_estimators=3, max_depth=2, nthread=1)],
                         expected_failed_checks=lambda est: XGB_RANKER_EXPECTED_FAILURES)
def test_xgb_ranker_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _ranking_frame(seed=0, n_q=60):
    import pandas as pd

    from lambda_objectives import make_ranking

    d = make_ranking(n_q, docs_per_query=(5, 20), n_features=5, seed=seed)
    df = pd.DataFrame(d.X, columns=[f"f{i}" for i in range(5)])
    df.insert(0, "qid", d.qid)
    return d, df


def test_xgb_ranker_params_clone_and_fitted_attributes():
    from sklearn.base import clone

    d, df = _ranking_frame()
    r = XGBLambdaRanker("err", n_estimators=8, max_depth=3, nthread=1, eta=0.3)
    c = clone(r)
    assert c.get_params() == r.get_params() and c.get_params()["max_depth"] == 3
    assert "max_depth=3" in repr(r)
    r.set_params(max_depth=2, n_estimators=6, early_stopping_rounds=3)
    assert r.get_params()["max_depth"] == 2 and r.n_estimators == 6
    r.fit(df, d.y, eval_set=[(df, d.y)])
    assert r.n_features_in_ == 5 and list(r.feature_names_in_) == [f"f{i}" for i in range(5)]
    assert r.feature_importances_.shape == (5,) and r.feature_importances_.sum() == pytest.approx(1.0)
    hist = r.evals_result_["validation_0"]["err@10"]
    # XGBoost's convention (issue #48): best_iteration_ is 0-based, as XGBRanker.best_iteration
    assert r.best_score_["validation_0"]["err@10"] == hist[r.best_iteration_] == max(hist)
    np.testing.assert_array_equal(r.predict(df), r.predict(d.X))  # the qid column is not a feature
    assert r.score(df, d.y) == pytest.approx(r.score(d.X, d.y, qid=d.qid))
    with pytest.raises(ValueError, match="per query"):
        XGBLambdaRanker(n_estimators=2).fit(d.X, d.y, qid=d.qid, sample_weight=np.ones(len(d.y)))
    # rows without queries are never one query, in fit, score and eval_set alike
    with pytest.raises(ValueError, match="XGBLambdaRanker.fit: no queries.*set_score_request"):
        XGBLambdaRanker(n_estimators=2).fit(d.X, d.y)
    with pytest.raises(ValueError, match="XGBLambdaRanker.score: no queries"):
        r.score(d.X, d.y)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: no queries"):
        XGBLambdaRanker(n_estimators=2).fit(d.X, d.y, qid=d.qid, eval_set=[(d.X, d.y)])
    with pytest.raises(ValueError, match="needs an eval_set"):
        XGBLambdaRanker(n_estimators=2, early_stopping_rounds=2).fit(d.X, d.y, qid=d.qid)


def test_xgb_ranker_grid_search_with_group_k_fold():
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

    d, df = _ranking_frame(1)
    search = GridSearchCV(XGBLambdaRanker(n_estimators=5, nthread=1),
                          {"max_depth": [2, 4], "eta": [0.1, 0.3]}, cv=GroupKFold(3))
    search.fit(df, d.y, groups=d.qid)
    assert set(search.best_params_) == {"max_depth", "eta"} and 0 < search.best_score_ <= 1
    assert len(search.cv_results_["mean_test_score"]) == 4
    # numpy X and qid=: without routing the test folds reach score() without queries, which raises
    # (before, each fold was scored as one list: 0.47 where the per-query value is 0.78 on MQ2008)
    with pytest.raises(ValueError, match="XGBLambdaRanker.score: no queries"):
        GridSearchCV(XGBLambdaRanker(n_estimators=5, nthread=1), {"max_depth": [2, 4]}, cv=GroupKFold(3),
                     error_score="raise").fit(d.X, d.y, groups=d.qid, qid=d.qid)
    # with metadata routing, fit and score get each fold's qid: the DataFrame form's numbers exactly
    with sklearn.config_context(enable_metadata_routing=True):
        est = XGBLambdaRanker(n_estimators=5, nthread=1).set_fit_request(qid=True).set_score_request(qid=True)
        routed = GridSearchCV(est, {"max_depth": [2, 4], "eta": [0.1, 0.3]}, cv=GroupKFold(3))
        routed.fit(d.X, d.y, groups=d.qid, qid=d.qid)
        scores = cross_val_score(est, d.X, d.y, cv=GroupKFold(3), params={"qid": d.qid, "groups": d.qid})
    np.testing.assert_allclose(routed.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"])
    assert routed.best_params_ == search.best_params_
    framed = cross_val_score(XGBLambdaRanker(n_estimators=5, nthread=1), df, d.y, groups=d.qid, cv=GroupKFold(3))
    np.testing.assert_allclose(scores, framed)


@pytest.mark.parametrize("metric", ["ndcg_loss2@10", "ndcg_loss2pp@10", "ndcg_loss2_top@10", "ndcg_loss2pp_top@10", "gain_diff", "xendcg", "yetirank"])
def test_new_objectives_train_in_every_engine_path(metric):
    from lambda_objectives import make_ranking, mean_metric

    d = make_ranking(80, docs_per_query=(5, 30), n_features=6, seed=9)
    base = mean_metric(np.zeros(d.y.shape[0]), d.y, d.group_ptr, "ndcg@10")
    opts = {"mu": 2.0} if metric.startswith("ndcg_loss2pp") else {}
    booster = lgb.train(dict(LGB_PARAMS, objective=LightGBMObjective(metric, **opts)),
                        lgb.Dataset(d.X, d.y, group=d.group), 20)
    ranker = lgb.LGBMRanker(objective=LightGBMObjective(metric, **opts), n_estimators=20, verbose=-1, n_jobs=1)
    ranker.fit(d.X, d.y, group=d.group)
    xobj = XGBoostObjective(metric, **opts)
    xbooster = xgb.train(xobj.params(max_depth=4, nthread=1), xgb.DMatrix(d.X, d.y, group=d.group), 20, obj=xobj)
    xr = XGBLambdaRanker(XGBoostObjective(metric, **opts), n_estimators=20, max_depth=4, nthread=1)
    xr.fit(d.X, d.y, group=d.group)
    for pred in (booster.predict(d.X), ranker.predict(d.X), xbooster.predict(xgb.DMatrix(d.X), output_margin=True),
                 xr.predict(d.X)):
        assert mean_metric(pred, d.y, d.group_ptr, "ndcg@10") > base + 0.05


def test_a_user_njit_pair_weight_goes_through_the_adapters():
    import numba

    from lambda_objectives import lambda_gradients

    @numba.njit
    def top_heavy(a, b, label_a, label_b, gain_a, gain_b, k):
        return abs(gain_a - gain_b) / (1.0 + a)

    s, y, ptr = np.array([0.3, 0.1, 0.5, -0.2]), np.array([2.0, 0.0, 1.0, 0.0]), np.array([0, 4])
    g, h = LightGBMObjective(top_heavy, k=3).gradients(s, y, ptr)
    want_g, want_h = lambda_gradients(s, y, ptr, top_heavy, 3)
    np.testing.assert_array_equal(g, want_g.astype(np.float32))
    np.testing.assert_array_equal(h, want_h.astype(np.float32))
    with pytest.raises(ValueError, match="preset=None"):
        LightGBMObjective(top_heavy, preset="lightgbm")


def test_preset_catboost_is_catboosts_lambdamart_and_trains_lightgbm():
    from lambda_objectives.catboost import catboost_lambdamart_gradients
    from lambda_objectives import make_ranking, mean_metric

    d = make_ranking(60, docs_per_query=(5, 20), n_features=5, seed=4)
    s = np.random.default_rng(0).normal(size=d.y.size)
    for metric, opts in (("ndcg@5", {"norm": False}), ("mrr", {}), ("map", {"norm": True})):
        g, h = LightGBMObjective(metric, preset="catboost", **opts).gradients(s, d.y, d.group_ptr)
        name, k = metric.split("@") if "@" in metric else (metric, None)
        want_g, want_h = catboost_lambdamart_gradients(s, d.y, d.group_ptr, name, top=None if k is None else int(k),
                                                       norm=opts.get("norm", True))
        np.testing.assert_array_equal(g, want_g.astype(np.float32))
        np.testing.assert_array_equal(h, want_h.astype(np.float32))
    with pytest.raises(ValueError, match="stop probabilities"):
        LightGBMObjective("err", preset="catboost").gradients(s, d.y, d.group_ptr)
    with pytest.raises(ValueError, match="ignores weights"):
        LightGBMObjective("ndcg", preset="catboost").gradients(s, d.y, d.group_ptr, weight=np.ones(d.y.size))
    booster = lgb.train(dict(LGB_PARAMS, objective=LightGBMObjective("ndcg", preset="catboost")),
                        lgb.Dataset(d.X, d.y, group=d.group), 20)
    assert mean_metric(booster.predict(d.X), d.y, d.group_ptr, "ndcg@10") > \
        mean_metric(np.zeros(d.y.size), d.y, d.group_ptr, "ndcg@10") + 0.05


# --- CatBoost eval metric ---------------------------------------------------------------------
def _catboost():
    return pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")


def _pool(cb, X, y, ptr):
    return cb.Pool(X, y, group_id=np.repeat(np.arange(len(ptr) - 1), np.diff(ptr)))


def test_catboost_metric_is_catboosts_ndcg_and_early_stopping_uses_it(mq2008):
    cb = _catboost()
    from lambda_objectives.catboost import catboost_metric
    from lambda_objectives import metric_values

    (X, y, ptr), (Xt, yt, ptrt) = mq2008
    train, valid = _pool(cb, X, y, ptr), _pool(cb, Xt, yt, ptrt)
    ours = catboost_metric("ndcg@10", [train, valid], ties="pessimistic")
    model = cb.CatBoost({"loss_function": "YetiRank", "iterations": 200, "learning_rate": 0.3, "random_seed": 0,
                         "verbose": False, "thread_count": 1, "allow_writing_files": False, "eval_metric": ours,
                         "custom_metric": ["NDCG:top=10;type=Exp"]})
    model.fit(train, eval_set=valid, early_stopping_rounds=10)
    got = model.get_evals_result()["validation"]
    ndcg = np.array(got["CatBoostEval"])
    # CatBoost's NDCG: exponential gain, 1 for a query with no relevant document, ties lower label first
    np.testing.assert_allclose(ndcg, got["NDCG:top=10;type=Exp"], rtol=1e-12)
    assert model.get_best_iteration() == int(np.argmax(ndcg))
    assert len(ndcg) == model.get_best_iteration() + 11  # stopped by our metric, 10 rounds after its best
    s = model.predict(Xt, prediction_type="RawFormulaVal")
    order = np.lexsort((yt, np.repeat(np.arange(len(ptrt) - 1), np.diff(ptrt))))
    assert ndcg[model.get_best_iteration()] == pytest.approx(metric_values(s[order], yt[order], ptrt, "ndcg", 10).mean(),
                                                             rel=1e-12)
    stable = catboost_metric("ndcg@10", [(yt, ptrt)])
    assert stable.evaluate([s], yt, None)[0] == pytest.approx(metric_values(s, yt, ptrt, "ndcg", 10).mean(), rel=1e-12)


def test_catboost_metric_refuses_data_it_was_not_bound_to():
    cb = _catboost()
    from lambda_objectives.catboost import catboost_metric

    y, ptr = np.array([1.0, 0, 2, 0, 1]), np.array([0, 2, 5])
    m = catboost_metric("ndcg@3", [(y, ptr)])
    with pytest.raises(ValueError, match="match none of the 1 bound"):
        m.evaluate([np.zeros(5)], np.array([0.0, 1, 2, 0, 1]), None)
    with pytest.raises(ValueError, match="match none"):
        m.evaluate([np.zeros(4)], y[:4], None)
    twice = catboost_metric("ndcg@3", [(y, ptr), (y, [0, 3, 5])])
    with pytest.raises(ValueError, match="different query groups"):
        twice.evaluate([np.zeros(5)], y, None)
    with pytest.raises(ValueError, match="weights for 5 documents"):
        m.evaluate([np.zeros(5)], y, np.full(4, 2.0))
    with pytest.raises(ValueError, match="not all zero"):
        m.evaluate([np.zeros(5)], y, np.zeros(5))
    with pytest.raises(ValueError, match="no group_id"):
        catboost_metric("ndcg@3", [cb.Pool(np.zeros((5, 1)), y)])
    with pytest.raises(ValueError, match="ties"):
        catboost_metric("ndcg@3", [(y, ptr)], ties="random")
    with pytest.raises(ValueError, match="eval metric must be one of"):
        catboost_metric("dcg@3", [(y, ptr)])
    assert m.is_max_optimal() and m.get_final_error(*m.evaluate([np.array([0.5, 0.1, 3, 0, 1])], y, None)) == 1.0


@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("preset", [None, "catboost"])
def test_yetirank_advances_its_round_counter_once_per_engine_call(engine, preset):
    """Call ``r`` on one data set is round ``r`` of yetirank_gradients; a new data set starts at round 0."""
    from lambda_objectives import make_ranking, yetirank_gradients

    d = make_ranking(12, docs_per_query=(3, 10), n_features=3, seed=2)
    s = np.random.default_rng(0).normal(size=d.y.shape[0])
    if engine == "lightgbm":
        obj = LightGBMObjective("yetirank", preset=preset, seed=5, permutations=3)
        data = lgb.Dataset(d.X, d.y, group=d.group).construct()
        call = lambda: obj(s, data)  # noqa: E731
    else:
        obj = XGBoostObjective("yetirank", preset=preset, seed=5, permutations=3)
        data = xgb.DMatrix(d.X, d.y, group=d.group)
        call = lambda: obj(s.astype(np.float32), data)  # noqa: E731
    s_engine = s if engine == "lightgbm" else s.astype(np.float32).astype(np.float64)
    for r in range(3):
        g, h = call()
        want_g, want_h = yetirank_gradients(s_engine, d.y, d.group_ptr, seed=5, permutations=3, iteration=r)
        np.testing.assert_array_equal(g, want_g.astype(np.float32))
        np.testing.assert_array_equal(h, want_h.astype(np.float32))


def test_yetirank_runs_are_reproducible_and_seeded():
    from lambda_objectives import make_ranking

    d = make_ranking(40, docs_per_query=(5, 20), n_features=5, seed=4)

    def fit(seed):
        obj = LightGBMObjective("yetirank", seed=seed)
        return lgb.train(dict(LGB_PARAMS, objective=obj), lgb.Dataset(d.X, d.y, group=d.group), 8).predict(d.X)

    np.testing.assert_array_equal(fit(1), fit(1))
    assert not np.array_equal(fit(1), fit(2))


@pytest.mark.parametrize("opts", [{"mode": "mrr", "num_neighbors": 2}, {"mode": "map", "noise": "gauss", "top": 5},
                                  {"mode": "err", "num_neighbors": -1}])
def test_yetiloss_modes_train_seeded_and_thread_independent_in_both_engines(opts):
    """The YetiLoss options reach the kernel through both adapters: a run is fixed by its seed, the
    same bit for bit with our kernel on 1 or 2 threads, and another seed or mode trains another model."""
    from lambda_objectives import make_ranking

    d = make_ranking(30, docs_per_query=(4, 15), n_features=5, seed=6)
    y = d.y / 4.0 if opts["mode"] == "err" else d.y  # ERR: stop probabilities

    def fit(engine, seed=1, threads=1, **kw):
        o = {**opts, **kw}
        if engine == "lightgbm":
            obj = LightGBMObjective("yetirank", seed=seed, n_threads=threads, **o)
            return lgb.train(dict(LGB_PARAMS, objective=obj), lgb.Dataset(d.X, y, group=d.group), 6).predict(d.X)
        obj = XGBoostObjective("yetirank", seed=seed, n_threads=threads, **o)
        return xgb.train({"nthread": 1, "max_depth": 3}, xgb.DMatrix(d.X, y, group=d.group), 6, obj=obj).predict(
            xgb.DMatrix(d.X))

    for engine in ("lightgbm", "xgboost"):
        one = fit(engine)
        np.testing.assert_array_equal(one, fit(engine, threads=2))
        assert not np.array_equal(one, fit(engine, seed=2))
        assert not np.array_equal(one, fit(engine, mode="ndcg"))


@pytest.mark.parametrize("kwargs, match", [
    ({"k": 10}, "no cutoff"),
    ({"sigma": 2.0}, "no sigma"),
    ({"permutations": 0}, "permutations must be an integer >= 1"),
    ({"decay": 0.0}, r"decay must be a number in \(0, 1\]"),
    ({"mode": "pfound"}, "mode must be one of"),
    ({"top": 3}, "top=3: mode='classic' .* does not read it"),
    ({"mode": "map", "decay": 0.5}, "decay=0.5: mode='map' .* does not read it"),
    ({"mode": "mrr", "noise": "gauss", "noise_power": -1.0}, "noise_power must be a finite number > 0"),
    ({"seed": -3}, "seed must be an integer >= 0"),
    ({"norm": False}, "unknown options for metric='yetirank'"),
    ({"preset": "lightgbm"}, "unknown metric 'yetirank'"),
    ({"preset": "xgboost"}, "unknown metric 'yetirank'"),
])
def test_yetirank_bad_options_fail_at_construction(kwargs, match):
    for cls in (LightGBMObjective, XGBoostObjective):
        with pytest.raises(ValueError, match=match):
            cls("yetirank", **kwargs)


def test_lgbm_ranker_refits_with_one_objective_start_from_round_zero():
    """LGBMRanker's 4-argument call: a new fit is a new data set, so YetiRank's rounds restart."""
    from lambda_objectives import make_ranking

    d = make_ranking(30, docs_per_query=(5, 15), n_features=4, seed=6)
    obj = LightGBMObjective("yetirank", seed=2)
    ranker = lgb.LGBMRanker(objective=obj, n_estimators=5, verbose=-1, n_jobs=1)
    first = ranker.fit(d.X, d.y, group=d.group).predict(d.X)
    np.testing.assert_array_equal(ranker.fit(d.X, d.y, group=d.group).predict(d.X), first)


def test_lightgbm_metric_names_do_not_clash_and_weights_count_as_in_the_engines():
    # LGBMRanker adds LightGBM's ndcg@1..5: a plain "ndcg@5" of ours shared one history list with it
    from lambda_objectives import make_ranking

    d = make_ranking(60, docs_per_query=(5, 20), n_features=5, seed=2)
    rng = np.random.default_rng(0)
    doc_w, query_w = rng.uniform(0.2, 3, d.y.shape[0]), rng.uniform(0.2, 3, d.n_queries)
    assert np.any(np.maximum.reduceat(d.y, d.group_ptr[:-1]) == 0)  # a query without relevant documents
    r = lgb.LGBMRanker(n_estimators=3, num_leaves=7, verbose=-1, n_jobs=1)
    r.fit(d.X, d.y, group=d.group, eval_set=[(d.X.copy(), d.y.copy())], eval_group=[d.group], eval_at=[5],
          eval_metric=lightgbm_metric("ndcg@5"))
    assert {"ndcg@5", "lo_ndcg@5"} <= set(r.evals_result_["valid_0"]) and len(r.evals_result_["valid_0"]["lo_ndcg@5"]) == 3
    # weights: LightGBM's per-document weights (a query weighs their mean), XGBoost's per query; our value
    # equals the engine's own weighted NDCG where that is a weighted mean: every query has a relevant
    # document (the engines add an empty one unweighted: see
    # test_weighted_ndcg_differs_from_the_engines_only_on_queries_without_relevant_documents)
    y = d.y.copy()
    y[d.group_ptr[:-1][np.maximum.reduceat(y, d.group_ptr[:-1]) == 0]] = 1.0
    log = {}
    ds = lgb.Dataset(d.X, y, group=d.group, weight=doc_w)
    lgb.train({"objective": "lambdarank", "metric": "ndcg", "eval_at": [5], "verbose": -1, "num_leaves": 7}, ds, 5,
              valid_sets=[ds], valid_names=["t"], feval=lightgbm_metric("ndcg@5"), callbacks=[lgb.record_evaluation(log)])
    np.testing.assert_allclose(log["t"]["lo_ndcg@5"], log["t"]["ndcg@5"], rtol=1e-6)
    dm = xgb.DMatrix(d.X, y, group=d.group, weight=query_w)
    native, ours = {}, {}
    bx = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5", "max_depth": 3}, dm, 5, evals=[(dm, "t")],
                   evals_result=native, verbose_eval=False)
    assert xgboost_metric("ndcg@5", convention="xgboost")(bx.predict(dm, output_margin=True), dm)[1] == \
        pytest.approx(native["t"]["ndcg@5"][-1], rel=1e-6)
    unweighted = np.mean(metric_values(bx.predict(dm, output_margin=True), y, d.group_ptr, "ndcg@5"))
    assert abs(unweighted - native["t"]["ndcg@5"][-1]) > 1e-4  # the weights matter here
    with pytest.raises(ValueError, match="weights for"):
        xgboost_metric("ndcg@5")(bx.predict(dm), xgb.DMatrix(d.X, d.y, group=d.group, weight=np.ones(d.n_queries + 1)))


@pytest.fixture(scope="module")
def stopping_frames():
    d, df = _ranking_frame(seed=2)
    v, dv = _ranking_frame(seed=3, n_q=30)
    dv["qid"] += 1000
    return d, df, v, dv


def test_xgb_ranker_best_iteration_is_xgboosts_0_based_index(stopping_frames):
    """Issue #48: best_iteration_ counted trees from 1 where XGBRanker.best_iteration and
    Booster.best_iteration are 0-based. On the same data, both estimators' best iteration is the
    0-based argmax of their own eval history; predict uses rounds 0..best_iteration_."""
    d, df, v, dv = stopping_frames
    r = XGBLambdaRanker(n_estimators=40, nthread=1, eta=0.5, early_stopping_rounds=3).fit(df, d.y, eval_set=[(dv, v.y)])
    ours = r.evals_result_["validation_0"]["ndcg@10"]
    native = xgb.XGBRanker(n_estimators=40, eta=0.5, early_stopping_rounds=3, eval_metric="ndcg@10", nthread=1)
    native.fit(d.X, d.y, qid=d.qid, eval_set=[(v.X, v.y)], eval_qid=[v.qid])
    theirs = native.evals_result()["validation_0"]["ndcg@10"]
    assert native.best_iteration == int(np.argmax(theirs)) == len(theirs) - 4  # XGBoost's own convention
    assert r.best_iteration_ == r.best_iteration == r.get_booster().best_iteration == int(np.argmax(ours)) \
        == len(ours) - 4
    assert r.best_score_["validation_0"]["ndcg@10"] == max(ours)
    np.testing.assert_array_equal(r.predict(dv), r.get_booster().predict(
        xgb.DMatrix(v.X), output_margin=True, iteration_range=(0, r.best_iteration_ + 1)))
    assert r.get_booster() is r.booster_
    # without early stopping: the last round, every tree used; XGBoost's own attribute is undefined there
    full = XGBLambdaRanker(n_estimators=6, nthread=1).fit(df, d.y)
    assert full.best_iteration_ == 5
    with pytest.raises(AttributeError, match="early stopping"):
        full.best_iteration
    with pytest.raises(AttributeError, match="early stopping"):
        xgb.XGBRanker(n_estimators=6, nthread=1).fit(d.X, d.y, qid=d.qid).best_iteration
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        XGBLambdaRanker().get_booster()


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
@pytest.mark.parametrize("stopping", [None, 3])
def test_xgb_ranker_save_model_load_model_round_trip(tmp_path, stopping_frames, suffix, stopping):
    d, df, v, dv = stopping_frames
    r = XGBLambdaRanker(n_estimators=20, nthread=1, eta=0.5, early_stopping_rounds=stopping)
    r.fit(df, d.y, eval_set=[(dv, v.y)] if stopping else None)
    path = tmp_path / f"m{suffix}"
    r.save_model(path)
    assert r.get_booster().attr("lambda_objectives") is None  # the metadata lives in the file only
    back = XGBLambdaRanker(nthread=1).load_model(path)
    np.testing.assert_array_equal(back.predict(dv), r.predict(dv))  # the same bits, at the best iteration
    assert (back.best_iteration_, back.best_score_, back.n_features_in_) == \
        (r.best_iteration_, r.best_score_, r.n_features_in_)
    assert list(back.feature_names_in_) == [f"f{i}" for i in range(5)]
    assert back.score(dv, v.y) == r.score(dv, v.y) and back.score(df, d.y) == r.score(df, d.y)
    with pytest.raises(ValueError, match="cut between fit and score"):
        back.score(df.iloc[3:], d.y[3:])  # the training queries came back
    with pytest.raises(ValueError, match="same order"):
        back.predict(dv[["f4", "f3", "f2", "f1", "f0", "qid"]])
    # a bare Booster file (Booster.save_model): trees and XGBoost's best_iteration, no names
    r.get_booster().save_model(tmp_path / f"bare{suffix}")
    bare = XGBLambdaRanker().load_model(tmp_path / f"bare{suffix}")
    assert bare.best_iteration_ == r.best_iteration_ and not hasattr(bare, "feature_names_in_")
    np.testing.assert_array_equal(bare.predict(v.X), r.predict(dv))


def test_xgb_ranker_load_model_refuses_another_estimator_or_damaged_metadata(tmp_path, stopping_frames):
    import json

    d, df, _, _ = stopping_frames
    r = XGBLambdaRanker(n_estimators=3, nthread=1).fit(df, d.y)
    b = r.get_booster()
    meta = {"estimator": "XGBLambdaRanker", "version": 1, "best_iteration_": 2, "best_score_": {},
            "n_features_in_": 5, "feature_names_in_": None, "train_queries_": None}
    for change, exc, pattern in [({"estimator": "Other"}, TypeError, "saved by 'Other'"),
                                 ({"version": 9}, ValueError, "version 9 is not supported"),
                                 ({"best_iteration_": 3}, ValueError, "damaged.*best_iteration_ 3 of 3 rounds"),
                                 ({"n_features_in_": 4}, ValueError, "damaged.*4 features"),
                                 ({"feature_names_in_": ["a"]}, ValueError, "damaged"),
                                 ({"train_queries_": {"qid": [1]}}, ValueError, "damaged.*KeyError")]:
        b.set_attr(lambda_objectives=json.dumps({**meta, **change}))
        b.save_model(tmp_path / "bad.json")
        with pytest.raises(exc, match=pattern):
            XGBLambdaRanker().load_model(tmp_path / "bad.json")
    b.set_attr(lambda_objectives="{")
    b.save_model(tmp_path / "bad.json")
    b.set_attr(lambda_objectives=None)
    with pytest.raises(ValueError, match="damaged"):
        XGBLambdaRanker().load_model(tmp_path / "bad.json")


def test_lgbm_ranker_attributes_follow_lgbm_ranker(stopping_frames):
    """Issue #48: the attributes of lgb.LGBMRanker, in its conventions, on the same data:
    best_iteration_ 0 without early stopping (1-based with it), n_iter_, feature_name_."""
    from lambda_objectives import LGBMLambdaRanker

    d, df, v, dv = stopping_frames
    params = dict(num_leaves=7, min_data_in_leaf=5, learning_rate=0.3, verbose=-1)
    r = LGBMLambdaRanker(n_estimators=6, num_threads=1, **params).fit(df, d.y)
    native = lgb.LGBMRanker(n_estimators=6, n_jobs=1, **params).fit(df.drop(columns="qid"), d.y, group=d.group)
    assert r.best_iteration_ == native.best_iteration_ == 0
    assert r.n_iter_ == r.n_estimators_ == native.n_iter_ == 6
    assert r.feature_name_ == native.feature_name_ == [f"f{i}" for i in range(5)]
    assert r.n_features_ == native.n_features_ == 5
    assert list(r.best_score_) == list(native.best_score_) == []
    np.testing.assert_array_equal(r.predict(dv), r.booster_.predict(v.X))  # every round
    plain = LGBMLambdaRanker(n_estimators=2, num_threads=1, **params).fit(d.X, d.y, qid=d.qid)
    nplain = lgb.LGBMRanker(n_estimators=2, n_jobs=1, **params).fit(d.X, d.y, group=d.group)
    assert plain.feature_name_ == nplain.feature_name_ == [f"Column_{i}" for i in range(5)]
    # early stopping: the 1-based best round, as LGBMRanker's
    es = LGBMLambdaRanker(n_estimators=40, num_threads=1, early_stopping_rounds=3, **params)
    es.fit(df, d.y, eval_set=[(dv, v.y)])
    hist = es.evals_result_["valid_0"]["lo_ndcg@10"]
    nes = lgb.LGBMRanker(n_estimators=40, n_jobs=1, metric="ndcg", **params)
    nes.fit(df.drop(columns="qid"), d.y, group=d.group, eval_set=[(dv.drop(columns="qid"), v.y)],
            eval_group=[v.group], eval_at=[10], callbacks=[lgb.early_stopping(3, verbose=False)])
    nhist = nes.evals_result_["valid_0"]["ndcg@10"]
    # lgb.train keeps the trees up to the best round only (keep_training_booster=False), in both
    assert nes.best_iteration_ == int(np.argmax(nhist)) + 1 == nes.n_iter_ < len(nhist)
    assert es.best_iteration_ == int(np.argmax(hist)) + 1 == es.n_iter_ < len(hist)
    np.testing.assert_array_equal(es.predict(dv), es.booster_.predict(v.X, num_iteration=es.best_iteration_))


@pytest.mark.parametrize("engine", ["xgb", "lgbm"])
def test_engine_rankers_refuse_what_the_engine_would_store_as_inf(stopping_frames, engine):
    """Issue #48: XGBLambdaRanker with sample_weight=1e39 (float32 inf) or a NaN eval label ended in
    XGBoost's C++ stack trace; LightGBM's ranker trained an eval weight of 1e39 silently."""
    from lambda_objectives import LGBMLambdaRanker

    d, df, v, dv = stopping_frames
    make = (lambda: XGBLambdaRanker(n_estimators=2, nthread=1)) if engine == "xgb" else \
        (lambda: LGBMLambdaRanker(n_estimators=2, num_threads=1, verbose=-1))
    n_w = d.group.shape[0] if engine == "xgb" else d.y.shape[0]
    unit = "query" if engine == "xgb" else "row"
    with pytest.raises(ValueError, match=rf"^\w+.fit: sample_weight of {unit} 0.* is 1e\+39"):
        make().fit(df, d.y, sample_weight=np.r_[1e39, np.ones(n_w - 1)])
    with pytest.raises(ValueError, match=r"^\w+.fit: y of row 0 is 1e\+39"):
        make().fit(df, np.r_[1e39, d.y[1:]])
    with pytest.raises(ValueError, match=r"fit eval_set\[0\] y contain non-finite .* row 0"):
        make().fit(df, d.y, eval_set=[(dv, np.r_[np.nan, v.y[1:]])])
    with pytest.raises(ValueError, match=r"fit eval_set\[0\]: y of row 0 is 1e\+39"):
        make().fit(df, d.y, eval_set=[(dv, np.r_[1e39, v.y[1:]])])
    if engine == "lgbm":
        with pytest.raises(ValueError, match=r"eval_set\[0\]: eval_sample_weight of row 0 .* is 1e\+39"):
            make().fit(df, d.y, eval_set=[(dv, v.y)], eval_sample_weight=[np.r_[1e39, np.ones(len(v.y) - 1)]])


def test_lgbm_lambda_ranker_stops_on_the_objectives_own_metric():
    from lambda_objectives import LGBMLambdaRanker, make_ranking

    d = make_ranking(200, docs_per_query=(5, 30), n_features=8, seed=1)
    tr, va = d.subset(np.arange(150)), d.subset(np.arange(150, 200))
    r = LGBMLambdaRanker("err", n_estimators=60, early_stopping_rounds=10, num_leaves=7, learning_rate=0.05,
                         num_threads=1)
    r.fit(tr.X, tr.y, group=tr.group, eval_set=[(va.X, va.y)], eval_group=[va.group])
    hist = r.evals_result_["valid_0"]
    assert list(hist) == ["lo_err@10"]  # LightGBM's own metrics are off
    assert r.best_iteration_ == int(np.argmax(hist["lo_err@10"])) + 1
    assert r.best_score_["valid_0"]["lo_err@10"] == max(hist["lo_err@10"])
    np.testing.assert_array_equal(r.predict(va.X), r.booster_.predict(va.X, num_iteration=r.best_iteration_))
    assert r.score(va.X, va.y, group=va.group) == pytest.approx(
        np.mean(metric_values(r.predict(va.X), va.y, va.group_ptr, "ndcg@10")))
    # the same objective in LGBMRanker early-stops on LightGBM's ndcg@k, another metric
    n = lgb.LGBMRanker(objective=LightGBMObjective("err"), n_estimators=60, num_leaves=7, learning_rate=0.05,
                       verbose=-1, n_jobs=1)
    n.fit(tr.X, tr.y, group=tr.group, eval_set=[(va.X, va.y)], eval_group=[va.group],
          eval_metric=lightgbm_metric("err@10"), callbacks=[lgb.early_stopping(10, verbose=False)])
    assert list(n.evals_result_["valid_0"])[0].startswith("ndcg@")
    from sklearn.base import clone

    c = clone(r)
    assert c.get_params()["num_leaves"] == 7 and c.get_params()["objective"] == "err"
    for call, match in [
        (lambda: LGBMLambdaRanker(n_estimators=2).fit(tr.X, tr.y), "LGBMLambdaRanker.fit: no queries"),
        (lambda: r.score(va.X, va.y), "LGBMLambdaRanker.score: no queries"),
        (lambda: LGBMLambdaRanker(n_estimators=2, metric="ndcg").fit(tr.X, tr.y, group=tr.group), "eval_metric"),
        (lambda: LGBMLambdaRanker(n_estimators=2, early_stopping_rounds=2).fit(tr.X, tr.y, group=tr.group),
         "needs an eval_set"),
        (lambda: LGBMLambdaRanker(n_estimators=0).fit(tr.X, tr.y, group=tr.group), "n_estimators"),
        (lambda: LGBMLambdaRanker(n_estimators=2).fit(tr.X, tr.y, group=tr.group, eval_set=[(va.X, va.y)]),
         r"eval_set\[0\]: no queries"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()



@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_engine_rankers_refuse_bad_sample_weights(bad):
    # LightGBM trained a NaN weight as 0, and an inf or negative one gave an all-zero model
    from lambda_objectives import LGBMLambdaRanker, make_ranking

    d = make_ranking(30, docs_per_query=(5, 15), n_features=5, seed=4)
    r = int(d.group_ptr[3]) + 2  # a row of query 3
    w = np.ones(len(d.y))
    w[r] = bad
    lgbm = LGBMLambdaRanker(n_estimators=2, num_leaves=7, min_data_in_leaf=5, num_threads=1)
    with pytest.raises(ValueError, match=rf"LGBMLambdaRanker.fit: sample_weight must be finite and non-negative, "
                                         rf"row {r} \(query 3\) has"):
        lgbm.fit(d.X, d.y, qid=d.qid, sample_weight=w)
    with pytest.raises(ValueError, match=rf"eval_set\[0\]: eval_sample_weight .* row {r} \(query 3\)"):
        lgbm.fit(d.X, d.y, qid=d.qid, eval_set=[(d.X, d.y)], eval_qid=[d.qid], eval_sample_weight=[w])
    wq = np.ones(d.n_queries)
    wq[3] = bad
    with pytest.raises(ValueError, match="XGBLambdaRanker.fit: sample_weight must be finite and non-negative, query 3"):
        XGBLambdaRanker(n_estimators=2, nthread=1).fit(d.X, d.y, qid=d.qid, sample_weight=wq)


def test_engine_rankers_refuse_all_zero_and_misshapen_sample_weights():
    from lambda_objectives import LGBMLambdaRanker, make_ranking

    d = make_ranking(30, docs_per_query=(5, 15), n_features=5, seed=4)
    lgbm = LGBMLambdaRanker(n_estimators=2, num_leaves=7, min_data_in_leaf=5, num_threads=1)
    xgbr = XGBLambdaRanker(n_estimators=2, nthread=1)
    for call, match in [
        (lambda: lgbm.fit(d.X, d.y, qid=d.qid, sample_weight=np.zeros(len(d.y))), "sample_weight is all zero"),
        (lambda: lgbm.fit(d.X, d.y, qid=d.qid, sample_weight=np.ones(len(d.y) - 1)),
         f"sample_weight has {len(d.y) - 1} values, expected one per row: {len(d.y)} documents"),
        (lambda: lgbm.fit(d.X, d.y, qid=d.qid, sample_weight=np.ones(d.n_queries)), "one per row"),
        (lambda: xgbr.fit(d.X, d.y, qid=d.qid, sample_weight=np.zeros(d.n_queries)), "sample_weight is all zero"),
        (lambda: xgbr.fit(d.X, d.y, qid=d.qid, sample_weight=np.ones(len(d.y))), "per query"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
    # zero weights for some rows or queries are valid (those rows or queries are left out)
    w = np.ones(len(d.y))
    w[: d.group_ptr[2]] = 0
    lgbm.fit(d.X, d.y, qid=d.qid, sample_weight=w)
    wq = np.ones(d.n_queries)
    wq[:2] = 0
    xgbr.fit(d.X, d.y, qid=d.qid, sample_weight=wq)
    assert np.all(np.isfinite(lgbm.predict(d.X))) and np.all(np.isfinite(xgbr.predict(d.X)))

def test_lgb_cv_with_random_row_folds_raises_and_query_folds_work():
    # lgb.cv builds query-aware folds only for objectives it knows by name; for ours it cut queries
    from sklearn.model_selection import GroupKFold

    from lambda_objectives import make_ranking

    d = make_ranking(90, docs_per_query=(5, 20), n_features=5, seed=4)
    params = {"objective": LightGBMObjective("ndcg"), "metric": "None", "verbose": -1, "num_leaves": 7,
              "num_threads": 1}
    with pytest.raises(ValueError, match=r"cuts \d+ queries.*folds=GroupKFold"):
        lgb.cv(params, lgb.Dataset(d.X, d.y, group=d.group), 3, nfold=3, feval=lightgbm_metric("ndcg@10"))
    res = lgb.cv(params, lgb.Dataset(d.X, d.y, group=d.group), 5, folds=GroupKFold(3), feval=lightgbm_metric("ndcg@10"))
    native = lgb.cv({"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "verbose": -1, "num_leaves": 7,
                     "num_threads": 1}, lgb.Dataset(d.X, d.y, group=d.group), 5, nfold=3)
    assert len(res["valid lo_ndcg@10-mean"]) == 5
    # whole queries: the same scale as LightGBM's own query-aware cv (fragments scored ~0.1 higher)
    assert abs(res["valid lo_ndcg@10-mean"][-1] - native["valid ndcg@10-mean"][-1]) < 0.08


def test_catboost_metric_weights_queries_as_catboost_does(tmp_path):
    cb = _catboost()
    from lambda_objectives.catboost import catboost_metric
    from lambda_objectives import make_ranking

    d = make_ranking(40, docs_per_query=(5, 15), n_features=5, seed=3)
    gw = np.random.default_rng(0).uniform(0.2, 3, d.n_queries)
    pool = cb.Pool(d.X, d.y, group_id=d.qid, group_weight=np.repeat(gw, d.group))
    # eval_metrics writes its log to train_dir even with allow_writing_files=False: not the repository
    m = cb.CatBoost({"loss_function": "YetiRank", "iterations": 5, "verbose": False, "thread_count": 1,
                     "allow_writing_files": False, "train_dir": str(tmp_path)})
    m.fit(pool)
    native = m.eval_metrics(pool, ["NDCG:top=5;type=Exp"])["NDCG:top=5;type=Exp"][-1]
    ours = catboost_metric("ndcg@5", [pool], ties="pessimistic")
    value, w = ours.evaluate([m.predict(d.X)], d.y, np.repeat(gw, d.group))
    assert ours.get_final_error(value, w) == pytest.approx(native, rel=1e-6)
    unweighted = ours.evaluate([m.predict(d.X)], d.y, None)[0]
    assert abs(unweighted - native) > 1e-4  # the weights matter here


# --- issue #31: early stopping keeps the best iteration; weighted eval metrics are weighted means ---
_EVAL_SPECS = ["ndcg", "ndcg@10", "err", "err@10", "map", "map@10", "mrr", "mrr@10"]


@pytest.fixture(scope="module")
def stopping_data():
    from lambda_objectives import make_ranking

    d = make_ranking(200, docs_per_query=(5, 30), n_features=8, seed=1)
    return d.subset(np.arange(150)), d.subset(np.arange(150, 200))


def _xgb_stopping_run(stopping_data, spec, **train_kw):
    tr, va = stopping_data
    obj = XGBoostObjective("ndcg")
    dtr, dva = xgb.DMatrix(tr.X, tr.y, group=tr.group), xgb.DMatrix(va.X, va.y, group=va.group)
    log = {}
    b = xgb.train(obj.params(max_depth=3, eta=0.3, nthread=1), dtr, 60, obj=obj, evals=[(dtr, "tr"), (dva, "va")],
                  custom_metric=xgboost_metric(spec), evals_result=log, verbose_eval=False, **train_kw)
    return b, log["va"][spec], dva


@pytest.mark.parametrize("spec", _EVAL_SPECS)
def test_xgboost_early_stopping_rounds_keeps_the_best_iteration(stopping_data, spec):
    # XGBoost guesses the direction from the name and minimised err/mrr: best_iteration was the worst one
    b, hist, dva = _xgb_stopping_run(stopping_data, spec, early_stopping_rounds=5)
    assert max(hist) > min(hist)  # the direction matters on this history
    assert b.best_iteration == int(np.argmax(hist)) and float(b.best_score) == pytest.approx(max(hist), abs=1e-6)
    # Booster.predict uses every tree unless told (the user guide says so): iteration_range picks the best
    best = b.predict(dva, output_margin=True, iteration_range=(0, b.best_iteration + 1))
    assert xgboost_metric(spec)(best, dva)[1] == pytest.approx(max(hist), abs=1e-6)


def test_xgboost_early_stopping_direction_in_every_idiom(stopping_data):
    # a user's EarlyStopping without maximize is told to maximise ours, as xgb.train's own is
    es = xgb.callback.EarlyStopping(rounds=5)
    b, hist, _ = _xgb_stopping_run(stopping_data, "err@10", callbacks=[es])
    assert es.maximize is True and b.best_iteration == int(np.argmax(hist))
    # told to minimise a gain: refused before a model is returned, with the fix in the message
    for kw in ({"early_stopping_rounds": 5, "maximize": False},
               {"callbacks": [xgb.callback.EarlyStopping(rounds=5, metric_name="mrr@10", maximize=False)]}):
        with pytest.raises(ValueError, match=r"maximize=True.*xgboost_early_stopping"):
            _xgb_stopping_run(stopping_data, "mrr@10", **kw)
    # a callback watching another metric is not ours to change
    es = xgb.callback.EarlyStopping(rounds=5, metric_name="other", maximize=False)
    with pytest.raises(ValueError, match="No metric named: other"):
        _xgb_stopping_run(stopping_data, "err@10", callbacks=[es])
    assert es.maximize is False
    # xgb.cv keeps the results up to the best iteration: the last row is the maximum
    tr, _ = stopping_data
    obj = XGBoostObjective("ndcg")
    res = xgb.cv(obj.params(max_depth=3, eta=0.3, nthread=1), xgb.DMatrix(tr.X, tr.y, group=tr.group), 60, nfold=3,
                 obj=obj, custom_metric=xgboost_metric("err@10"), early_stopping_rounds=5, seed=0)
    col = res["test-err@10-mean"]
    assert col.iloc[-1] == col.max() and len(col) > 1
    # the explicit helper still works, and refuses another engine's metric object
    from lambda_objectives import xgboost_early_stopping

    b, hist, _ = _xgb_stopping_run(stopping_data, "mrr", callbacks=[xgboost_early_stopping(5, "mrr")])
    assert b.best_iteration == int(np.argmax(hist))
    with pytest.raises(ValueError, match=r"another engine's.*xgboost_metric\('err@10'\)"):
        xgboost_early_stopping(5, lightgbm_metric("err@10"))


@pytest.mark.parametrize("spec, opts", [("err@10", {}), ("mrr@10", {"threshold": 2}), ("map@10", {}), ("ndcg", {})])
def test_lightgbm_early_stopping_maximises_our_metrics(stopping_data, spec, opts):
    # our feval says is_higher_better=True, which lgb.early_stopping reads; predict uses the best iteration
    tr, va = stopping_data
    log = {}
    b = lgb.train({**LGB_PARAMS, "objective": LightGBMObjective("ndcg"), "metric": "None"},
                  lgb.Dataset(tr.X, tr.y, group=tr.group), 80,
                  valid_sets=[lgb.Dataset(va.X, va.y, group=va.group)], valid_names=["va"],
                  feval=lightgbm_metric(spec, **opts),
                  callbacks=[lgb.record_evaluation(log), lgb.early_stopping(5, verbose=False)])
    hist = log["va"]["lo_" + spec]
    assert max(hist) > min(hist)
    assert b.best_iteration == int(np.argmax(hist)) + 1
    np.testing.assert_array_equal(b.predict(va.X), b.predict(va.X, num_iteration=b.best_iteration))


@pytest.mark.parametrize("spec", ["map@5", "err@5"])
def test_sklearn_rankers_early_stopping_maximises_our_metrics(stopping_data, spec):
    from lambda_objectives import LGBMLambdaRanker

    tr, va = stopping_data
    fit = dict(group=tr.group, eval_set=[(va.X, va.y)], eval_group=[va.group])
    x = XGBLambdaRanker("ndcg", n_estimators=60, eval_metric=spec, early_stopping_rounds=5, max_depth=3, eta=0.3,
                        nthread=1).fit(tr.X, tr.y, **fit)
    hist = x.evals_result_["validation_0"][spec]
    assert max(hist) > min(hist) and x.booster_.best_iteration == int(np.argmax(hist))
    np.testing.assert_array_equal(x.predict(va.X), x.booster_.predict(
        xgb.DMatrix(va.X), output_margin=True, iteration_range=(0, x.booster_.best_iteration + 1)))
    r = LGBMLambdaRanker("ndcg", n_estimators=60, eval_metric=spec, early_stopping_rounds=5, num_leaves=7,
                         num_threads=1).fit(tr.X, tr.y, **fit)
    hist = r.evals_result_["valid_0"]["lo_" + spec]
    assert max(hist) > min(hist) and r.best_iteration_ == int(np.argmax(hist)) + 1


def _weighted_case(seed, n_q=8):
    """Queries with graded labels, one of them without a relevant document, and positive query weights."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, n_q)
    ptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    y = rng.integers(0, 4, ptr[-1]).astype(float)
    y[ptr[0]:ptr[1]] = 0.0
    s = rng.normal(size=ptr[-1]).astype(np.float32).astype(float)
    w = rng.uniform(0.05, 5, n_q).astype(np.float32).astype(float)  # the engines keep float32 weights
    return y, s, ptr, w


def _engine_values(spec, y, s, ptr, w):
    """Our value through each engine's metric, with query weights w (None: unweighted)."""
    from lambda_objectives.catboost import catboost_metric

    X = np.zeros((y.size, 1))
    sizes = np.diff(ptr)
    doc_w = None if w is None else np.repeat(w, sizes)
    ds = lgb.Dataset(X, y, group=sizes, weight=doc_w).construct()
    dm = xgb.DMatrix(X, y, group=sizes, weight=w)
    cbm = catboost_metric(spec, [(y, ptr)])
    cb_value, cb_weight = cbm.evaluate([s], y, doc_w)
    return (lightgbm_metric(spec)(s, ds)[1], lightgbm_metric(spec)(y, s, doc_w, sizes)[1],
            xgboost_metric(spec)(s.astype(np.float32), dm)[1], cbm.get_final_error(cb_value, cb_weight))


@pytest.mark.parametrize("spec", ["ndcg@3", "ndcg", "err@5", "map@4", "mrr"])
def test_weighted_eval_metrics_are_weighted_means(spec):
    # a query without relevant documents entered the numerator unweighted (the engines' own NDCG):
    # the value moved with the scale of the weights (0.598 at 0.5, 0.573 at 2, 2.23 at 0.01 in the user guide)
    for seed in range(6):
        y, s, ptr, w = _weighted_case(seed)
        per_query = metric_values(s, y, ptr, spec)
        want = np.sum(w * per_query) / np.sum(w)
        unweighted = _engine_values(spec, y, s, ptr, None)
        np.testing.assert_allclose(unweighted, np.mean(per_query), rtol=1e-6)
        for c in (0.001, 0.5, 1.0, 7.0):  # scale invariance, the weighted mean, never outside [0, 1]
            got = _engine_values(spec, y, s, ptr, c * w)
            np.testing.assert_allclose(got, want, rtol=1e-5)
            assert all(0.0 <= v <= 1.0 for v in got)
            np.testing.assert_allclose(_engine_values(spec, y, s, ptr, np.full_like(w, c)), np.mean(per_query),
                                       rtol=1e-5)  # equal weights: the unweighted mean


def test_weighted_ndcg_differs_from_the_engines_only_on_queries_without_relevant_documents():
    # LightGBM's and XGBoost's own weighted NDCG add a query without relevant documents as 1, unweighted,
    # and divide by every weight; ours weighs it. Equal where no query is empty, or where weights are 1.
    y, s, ptr, w = _weighted_case(3)
    sizes = np.diff(ptr)
    X = np.zeros((y.size, 1))

    def native(yy, ww):
        ds = lgb.Dataset(X, yy, group=sizes, weight=np.repeat(ww, sizes), init_score=s)
        bl = lgb.Booster({"objective": "lambdarank", "metric": "ndcg", "eval_at": [3], "verbose": -1}, train_set=ds)
        dm = xgb.DMatrix(X, yy, group=sizes, weight=ww, base_margin=s.astype(np.float32))
        bx = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@3"}, dm, 0)
        ours = (lightgbm_metric("ndcg@3")(s, ds.construct())[1], xgboost_metric("ndcg@3")(s.astype(np.float32), dm)[1])
        return ours, bl.eval_train()[0][2], float(bx.eval(dm).split(":")[1])

    full = y.copy()
    full[ptr[0]] = 1.0  # no query without a relevant document
    for yy, ww in ((full, w), (y, np.ones_like(w))):
        ours, lgb_own, xgb_own = native(yy, ww)
        np.testing.assert_allclose(ours, [lgb_own, xgb_own], rtol=1e-6)
    ours, lgb_own, xgb_own = native(y, w)
    per_query = metric_values(s, y, ptr, "ndcg@3")
    empty = np.maximum.reduceat(y, ptr[:-1]) <= 0
    quirk = (np.sum((w * per_query)[~empty]) + np.sum(per_query[empty])) / np.sum(w)
    np.testing.assert_allclose([lgb_own, xgb_own], quirk, rtol=1e-6)
    np.testing.assert_allclose(ours, np.sum(w * per_query) / np.sum(w), rtol=1e-6)
    assert abs(ours[0] - lgb_own) > 1e-3
    with pytest.raises(xgb.core.XGBoostError, match="Invalid output score"):  # XGBoost's own, above 1
        native(y, w * 0.01)


@pytest.mark.parametrize("kwargs, match", [
    ({"spec": "auc@3"}, "unknown metric"), ({"spec": "dcg@3"}, "eval metric must be"),
    ({"spec": "ndcg@0"}, "k"), ({"spec": "err@5", "max_label": -1}, "max_label"),
    ({"spec": "err@5", "max_label": float("nan")}, "max_label"), ({"spec": "err@5", "max_label": 1024}, "max_label"),
    ({"spec": "err@5", "max_label": "4"}, "max_label must be a number"),
    ({"spec": "ndcg@5", "max_label": 4}, "no effect on 'ndcg@5'"),
    ({"spec": "map@5", "threshold": float("inf")}, "threshold"), ({"spec": "mrr", "threshold": None}, "threshold"),
    ({"spec": "err@5", "threshold": 1.0}, "no effect on 'err@5'"),
    ({"spec": "ndcg@5", "convention": "nope"}, "convention"),
])
def test_eval_metric_options_fail_at_construction(kwargs, match):
    from lambda_objectives.catboost import catboost_metric

    for make in (lightgbm_metric, xgboost_metric, lambda **kw: catboost_metric(datasets=[(np.zeros(3), [0, 3])], **kw)):
        with pytest.raises(ValueError, match=match):
            make(**kwargs)


# -- one boundary: what the user gave the engine is checked before we train on it (issue #31) --------
def _toy(seed=0):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(40, 3)), rng.integers(0, 3, 40).astype(float)
    y[::10] = 2.0
    return X, y, [10] * 4


def _lgb_train(metric="ndcg", **dataset):
    X, y, g = _toy()
    d = lgb.Dataset(X, dataset.pop("label", y), group=g, **dataset)
    lgb.train(dict(verbose=-1, num_leaves=4, min_data_in_leaf=1, objective=LightGBMObjective(metric)), d, 2)


def _with(values, i, v):
    out = np.array(values, dtype=float)
    out[i] = v
    return out


@pytest.mark.parametrize("metric", ["ndcg", "map"])
@pytest.mark.parametrize("dataset, match", [
    # lgb.Dataset stores an inf label / weight as float32 1e38 and an inf init_score as 1e300
    ({"label": _with(_toy()[1], 3, np.inf)}, r"label at row 3 is 1e\+38: LightGBM stores an inf label"),
    ({"label": _with(_toy()[1], 3, -1.0)}, r"label must be non-negative, row 3 .*repair or drop"),
    ({"weight": _with(np.ones(40), 5, np.inf)}, r"weight of row 5 is 1e\+38, where the engine stores inf"),
    ({"weight": _with(np.ones(40), 5, -1.0)}, r"weight must be finite and non-negative, row 5 has -1.0 .*the weight passed to LightGBM"),
    ({"weight": np.zeros(40)}, "weight is all zero"),
    ({"init_score": _with(np.zeros(40), 7, np.inf)}, r"row 7 .*init_score is not finite .*stored by LightGBM as 1e\+300"),
])
def test_lightgbm_inputs_the_dataset_would_sanitise_raise(metric, dataset, match):
    with pytest.raises(ValueError, match=match):
        _lgb_train(metric, **dataset)


def test_lightgbm_sklearn_path_checks_the_weights_too():
    X, y, g = _toy()
    with pytest.raises(ValueError, match="weight must be finite and non-negative, row 5"):
        lgb.LGBMRanker(objective=LightGBMObjective(), n_estimators=2, verbose=-1, min_child_samples=1).fit(
            X, y, group=g, sample_weight=_with(np.ones(40), 5, -2.0))


@pytest.mark.parametrize("dmatrix, match", [
    # XGBoost itself refuses NaN/inf labels and NaN/inf/negative weights, not these
    ({"label": _with(_toy()[1], 3, -1.0)}, r"label must be non-negative, row 3 .*passed to XGBoost"),
    ({"weight": np.zeros(4)}, "weight is all zero"),
    ({"base_margin": _with(np.zeros(40), 7, np.nan)}, r"not finite at row 7 .*base_margin is not finite"),
    ({"base_margin": _with(np.zeros(40), 7, np.inf)}, r"not finite at row 7 .*base_margin is not finite"),
])
@pytest.mark.parametrize("preset", [None, "xgboost"])
def test_xgboost_inputs_the_dmatrix_lets_through_raise(dmatrix, match, preset):
    X, y, g = _toy()
    dmatrix = dict(dmatrix)  # the parameter is shared by both presets
    d = xgb.DMatrix(X, label=dmatrix.pop("label", y), group=g, **dmatrix)
    obj = XGBoostObjective(preset=preset)
    with pytest.raises(ValueError, match=match):
        xgb.train(obj.params(), d, 2, obj=obj)


def test_scores_a_diverging_training_overflowed_are_named_as_divergence_not_bad_initial_scores():
    # ΔERR@10 with min_child_weight = 0, reg_lambda = 0 and eta = 1 on this set: Newton leaf values from
    # vanishing Hessians overflow the scores within ~25 rounds. The message blamed the base_margin
    # (finite here) and sent the user after the wrong cause
    from lambda_objectives import make_ranking

    tr = make_ranking(60, docs_per_query=(5, 40), n_features=5, seed=1)
    obj = XGBoostObjective("err@10")
    p = obj.params(max_leaves=31, grow_policy="lossguide", tree_method="hist", eta=1.0, min_child_weight=0.0,
                   reg_lambda=0.0, nthread=1)
    with pytest.raises(ValueError, match=r"not finite at row \d+ .*training diverged .*raise min_child_weight or "
                                         "reg_lambda") as info:
        xgb.train(p, xgb.DMatrix(tr.X, tr.y, group=tr.group), 300, obj=obj)
    assert "base_margin" not in str(info.value)
    # LightGBM's sklearn call gives the objective no data set: both causes are named
    lobj = LightGBMObjective("ndcg")
    with pytest.raises(ValueError, match=r"init_score is not finite .*, or the model's scores overflowed"):
        lobj.sklearn(tr.y, _with(np.zeros(len(tr.y)), 2, np.nan), None, tr.group)


def test_params_keeps_the_objectives_hessian_check_in_step_with_xgboosts_min_child_weight():
    # the check warned "a split needs min_child_weight >= 1" in trainings run with obj.params(min_child_weight=0)
    from lambda_objectives.adapters import HessianWarning
    from lambda_objectives import make_ranking

    tr = make_ranking(60, docs_per_query=(5, 40), n_features=5, seed=1)
    d = xgb.DMatrix(tr.X, tr.y, group=tr.group)
    obj = XGBoostObjective("ndcg", sigma=0.01)  # Hessians scale with sigma²: they sum to ~0.008 here
    with warnings.catch_warnings():
        warnings.simplefilter("error", HessianWarning)
        xgb.train(obj.params(min_child_weight=0.0, nthread=1), d, 3, obj=obj)
    assert obj.min_child_weight == 0.0
    other = XGBoostObjective("ndcg", sigma=0.01)  # the engine's parameter set behind the objective's back
    with pytest.warns(HessianWarning, match=r"min_child_weight >= 1 in each child \(the objective's "
                                            r"min_child_weight: XGBoost does not tell"):
        xgb.train(dict(other.params(), min_child_weight=0.0, nthread=1), d, 3, obj=other)
    for bad in (-1.0, np.nan, True):
        with pytest.raises(ValueError, match="min_child_weight must be a finite number >= 0"):
            obj.params(min_child_weight=bad)
    assert obj.min_child_weight == 0.0


def test_a_changed_dataset_is_checked_again():
    X, y, g = _toy()
    d = xgb.DMatrix(X, label=y, group=g)
    obj = XGBoostObjective()
    booster = xgb.train(obj.params(), d, 1, obj=obj)
    d.set_weight(np.zeros(4))  # the cached state is rebuilt, and checked, when the engine's arrays change
    with pytest.raises(ValueError, match="weight is all zero"):
        xgb.train(obj.params(), d, 1, obj=obj, xgb_model=booster)


@pytest.mark.parametrize("cls, kwargs, match", [
    (LightGBMObjective, {"weight": [1.0, np.nan, 1.0, 1.0]}, r"weight must be finite and non-negative, row 1"),
    (LightGBMObjective, {"weight": [1.0, 1.0]}, r"weight has 2 values, expected one per row: 4"),
    (XGBoostObjective, {"weight": [1.0, 1.0, 1.0, 1.0]}, r"4 values, expected one per query: 1"),
    (XGBoostObjective, {"weight": [0.0]}, "weight is all zero"),
    (LightGBMObjective, {"labels": [0.0, np.nan, 1.0, 2.0]}, r"label contain non-finite .* row 1"),
    (XGBoostObjective, {"scores": [0.0, np.inf, 0.0, 1.0]}, r"scores is not finite at row 1"),
])
@pytest.mark.parametrize("preset", [None, "lightgbm", "xgboost"])
def test_gradients_checks_its_arguments_through_the_same_layer(cls, kwargs, match, preset):
    args = {"scores": [0.1, 0.4, -0.2, 0.3], "labels": [0.0, 1.0, 1.0, 2.0], **kwargs}
    weight = args.pop("weight", None)
    with pytest.raises(ValueError, match=match):
        cls(preset=preset).gradients(args["scores"], args["labels"], [0, 4], weight=weight)


def _pair_weight():
    import numba

    @numba.njit
    def w(a, b, la, lb, ga, gb, k):
        return abs(ga - gb)

    return w


@pytest.mark.parametrize("cls", [LightGBMObjective, XGBoostObjective])
@pytest.mark.parametrize("args, kwargs, bad", [
    (("xendcg",), {"k": 5}, "k"),                       # XE-NDCG@5 would train as plain XE-NDCG
    (("xendcg",), {"sigma": 3.0}, "sigma"),
    (("xendcg@5",), {}, "k"),
    (("ndcg",), {"bogus": 1}, "bogus"),                 # once a TypeError from the kernel at round 1
    (("ndcg",), {"threshold": 1.0}, "threshold"),       # MAP's option, ignored by NDCG
    (("map",), {"gain": "linear"}, "gain"),
    (("err",), {"mu": 2.0}, "mu"),
    (("ndcg",), {"n_threads_": 2}, "n_threads_"),
    (("ndcg",), {"preset": "lightgbm", "seed": 1}, "seed"),  # preset=None: the sampled pairs' seed (issue #34)
    (("xendcg",), {"preset": "lightgbm", "seed": 1}, "seed"),
    (("err@5",), {"preset": "catboost"}, "k"),          # CatBoost's top is NDCG's only
    (("map",), {"preset": "xgboost", "exp_gain": False}, "exp_gain"),
    (("ndcg",), {"preset": "lightgbm", "normalize": "lambdarank"}, "normalize"),
    (("yetirank",), {"mode": "ndcg", "decay": 0.5}, "decay"),
])
def test_options_the_objective_would_ignore_raise_at_construction(cls, args, kwargs, bad):
    with pytest.raises(ValueError, match=rf"{bad}"):
        cls(*args, **kwargs)
    if bad != "decay":
        with pytest.raises(ValueError, match=rf"unknown options .*\['{bad}'\].*it takes \["):
            cls(*args, **kwargs)


def test_a_pair_weight_function_takes_only_its_options():
    with pytest.raises(ValueError, match=r"unknown options .*\['max_label'\]"):
        LightGBMObjective(_pair_weight(), max_label=3)
    LightGBMObjective(_pair_weight(), k=3, sigma=2.0, gain="linear", normalize="lambdarank")


# -- long queries: sampled pairs and the cost warning (issue #34) ------------------------------------------
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_sampled_pairs_advance_their_round_counter_once_per_engine_call(engine):
    """Call ``r`` on one data set draws the pairs of round ``r`` (``lambda_gradients(iteration=r)``)."""
    from lambda_objectives import lambda_gradients, make_ranking

    d = make_ranking(12, docs_per_query=(3, 30), n_features=3, seed=2)
    s = np.random.default_rng(0).normal(size=d.y.shape[0])
    opts = dict(pair_method="mean", num_pair_per_sample=2, seed=3)
    if engine == "lightgbm":
        obj = LightGBMObjective("ndcg@10", **opts)
        data = lgb.Dataset(d.X, d.y, group=d.group).construct()
        call = lambda: obj(s, data)  # noqa: E731
    else:
        obj = XGBoostObjective("ndcg@10", **opts)
        data = xgb.DMatrix(d.X, d.y, group=d.group)
        call = lambda: obj(s.astype(np.float32), data)  # noqa: E731
    s_engine = s if engine == "lightgbm" else s.astype(np.float32).astype(np.float64)
    rounds = []
    for r in range(3):
        g, h = call()
        want_g, want_h = lambda_gradients(s_engine, d.y, d.group_ptr, "ndcg", 10, iteration=r, **opts)
        np.testing.assert_array_equal(g, want_g.astype(np.float32))
        np.testing.assert_array_equal(h, want_h.astype(np.float32))
        rounds.append(g.copy())
    assert not np.array_equal(rounds[0], rounds[1])
    with pytest.raises(ValueError, match=r"\['seed'\] only apply to sampled pairs"):
        LightGBMObjective("ndcg", seed=3)  # refused at construction, not in the first round


def _long_query(n_long=2001, n_short=30, seed=0):
    rng = np.random.default_rng(seed)
    n = n_long + n_short
    y = rng.integers(0, 3, n).astype(float)
    X = (y[:, None] + rng.normal(size=(n, 3))).astype(np.float32)
    return X, y, [n_long, n_short]


def test_a_long_query_with_every_pair_warns_once():
    from lambda_objectives.adapters import CostWarning

    X, y, group = _long_query()
    obj = LightGBMObjective("ndcg")
    with pytest.warns(CostWarning, match=r"longest query has 2,001 documents; with k=None and pair_method='all' "
                                         r"every round forms every pair.*2,001,435 pairs.*k=10.*pair_method='mean'"):
        lgb.train({**LGB_PARAMS, "objective": obj}, lgb.Dataset(X, y, group=group), 2)
    ptr = np.r_[0, np.cumsum(group)]
    s = np.zeros(len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CostWarning)
        lgb.train({**LGB_PARAMS, "objective": obj}, lgb.Dataset(X, y, group=group), 1)  # once per objective
        for quiet in (LightGBMObjective("ndcg", k=10), LightGBMObjective("ndcg", pair_method="mean"),
                      LightGBMObjective("ndcg", preset="lightgbm"), LightGBMObjective("xendcg")):
            quiet.gradients(s, y, ptr)
        LightGBMObjective("ndcg").gradients(np.zeros(2030), y[:2030], [0, 2000, 2030])  # 2,000: not above
    with pytest.warns(CostWarning, match=r"metric='ndcg_loss2' \(which forms every pair at any k\)"):
        XGBoostObjective("ndcg_loss2", k=10).gradients(s, y, ptr)


# -- position bias (issue #45): the engines' own debiasing reproduced bit for bit --------------------------
def _pbm_clicks(X, y, ptr, seed, eta=1.0, eps=0.1):
    """A small seeded position-based click model for these tests: each query shown in the order of its
    first feature (descending, stable), examination (1/(rank+1))^eta, click-given-examined
    eps + (1 - eps)(2^y - 1)/(2^ymax - 1); every query its own stream. Returns rows in display order."""
    ymax = max(float(y.max()), 1.0)
    order, clicks, pos = [], [], []
    for q, (a, b) in enumerate(zip(ptr[:-1], ptr[1:])):
        rng = np.random.default_rng([seed, q])
        o = a + np.argsort(-X[a:b, 0], kind="stable")
        r = np.arange(b - a)
        examined = rng.random(b - a) < (1.0 / (r + 1)) ** eta
        attractive = rng.random(b - a) < eps + (1 - eps) * (2.0 ** y[o] - 1) / (2.0 ** ymax - 1)
        order.append(o)
        clicks.append((examined & attractive).astype(float))
        pos.append(r)
    order = np.concatenate(order)
    return X[order], np.concatenate(clicks), np.concatenate(pos)


@pytest.fixture(scope="module")
def click_sets(mq2008, ohsumed):
    (X, y, ptr), _ = mq2008
    Xo, yo, ptro = ohsumed
    return {"mq2008": (*_pbm_clicks(X, y, ptr, 1), ptr), "ohsumed": (*_pbm_clicks(Xo, yo, ptro, 2), ptro)}


@pytest.mark.parametrize("options", [{}, {"lambdarank_bias_norm": 2.0}, {"lambdarank_bias_norm": 0.5},
                                     {"lambdarank_num_pair_per_sample": 5},
                                     {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 2}])
@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
@pytest.mark.parametrize("dataset", ["mq2008", "ohsumed"])
def test_xgboost_unbiased_preset_equals_native_bit_for_bit(dataset, metric, options, click_sets):
    """preset='xgboost', bias='pairwise' is XGBoost 3.2's lambdarank_unbiased=True: the same margins and the
    same saved ti+/tj- (float32 in save_config) after 6 rounds on PBM clicks, topk and mean pair methods."""
    import json

    X, c, _, ptr = click_sets[dataset]
    dtrain = xgb.DMatrix(X, c, group=np.diff(ptr))
    params = dict(nthread=1, max_depth=4, eta=0.1, base_score=0.0, tree_method="hist")
    native = xgb.train({**params, "objective": f"rank:{metric}", "lambdarank_unbiased": True, **options}, dtrain, 6)
    kw = {"bias_norm": options["lambdarank_bias_norm"]} if "lambdarank_bias_norm" in options else {}
    if "lambdarank_pair_method" in options:
        kw.update(pair_method="mean", num_pair_per_sample=options["lambdarank_num_pair_per_sample"])
    elif "lambdarank_num_pair_per_sample" in options:
        kw["k"] = options["lambdarank_num_pair_per_sample"]
    obj = XGBoostObjective(metric, preset="xgboost", bias="pairwise", **kw)
    ours = xgb.train(params, dtrain, 6, obj=obj)
    np.testing.assert_array_equal(ours.predict(dtrain, output_margin=True), native.predict(dtrain, output_margin=True))
    saved = json.loads(native.save_config())["learner"]["objective"]
    t_plus, t_minus = obj.bias_factors_
    assert len(saved["ti+"]) == t_plus.shape[0] == (5 if "lambdarank_num_pair_per_sample" in options
                                                    and "lambdarank_pair_method" not in options else 32)
    np.testing.assert_array_equal(np.float32(t_plus), np.array(saved["ti+"], dtype=np.float32))
    np.testing.assert_array_equal(np.float32(t_minus), np.array(saved["tj-"], dtype=np.float32))
    assert not np.all(t_plus == 1.0)  # the factors moved: the test can fail


@pytest.mark.parametrize("pair_method", ["topk", "mean"])
@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
def test_xgboost_unbiased_preset_same_bits_at_one_and_two_threads(click_sets, metric, pair_method):
    X, c, _, ptr = click_sets["mq2008"]
    dtrain = xgb.DMatrix(X, c, group=np.diff(ptr))
    params = dict(nthread=1, max_depth=4, eta=0.1, base_score=0.0, tree_method="hist")
    kw = {"pair_method": "mean", "num_pair_per_sample": 2} if pair_method == "mean" else {}
    out = []
    for t in (1, 2):
        obj = XGBoostObjective(metric, preset="xgboost", bias="pairwise", n_threads=t, **kw)
        out.append((xgb.train(params, dtrain, 3, obj=obj).predict(dtrain, output_margin=True), obj.bias_factors_))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1][0], out[1][1][0])
    np.testing.assert_array_equal(out[0][1][1], out[1][1][1])


@pytest.mark.parametrize("regularization", [0.0, 0.1, 2.0])
@pytest.mark.parametrize("dataset", ["mq2008", "ohsumed"])
def test_lightgbm_additive_preset_equals_native_bit_for_bit(dataset, regularization, click_sets):
    """preset='lightgbm', bias='additive' on a Dataset with position= is native lambdarank with those positions
    (LightGBM 4.7): the same predictions to the bit, rows shuffled inside their queries (positions are read
    from the Dataset, not from the row order) and weighted rows included."""
    X, c, pos, ptr = click_sets[dataset]
    rng = np.random.default_rng(5)
    shuffle = np.concatenate([a + rng.permutation(b - a) for a, b in zip(ptr[:-1], ptr[1:])])
    X, c, pos = X[shuffle], c[shuffle], pos[shuffle]
    w = rng.uniform(0.5, 2.0, len(c))
    params = {**LGB_PARAMS, "learning_rate": 0.15, "lambdarank_position_bias_regularization": regularization}
    native = lgb.train({**params, "objective": "lambdarank"},
                       lgb.Dataset(X, c, group=np.diff(ptr), position=pos, weight=w), 15)
    obj = LightGBMObjective("ndcg", preset="lightgbm", bias="additive", position_bias_regularization=regularization)
    params.pop("lambdarank_position_bias_regularization")
    ours = lgb.train({**params, "objective": obj}, lgb.Dataset(X, c, group=np.diff(ptr), position=pos, weight=w), 15)
    np.testing.assert_array_equal(ours.predict(X), native.predict(X))
    b = obj.position_bias_
    assert b.shape[0] == pos.max() + 1 and np.any(b != 0.0)


def _click_data(n_queries=25, seed=7):
    from lambda_objectives import make_ranking

    d = make_ranking(n_queries, docs_per_query=(2, 15), n_features=4, seed=seed)
    rng = np.random.default_rng(seed)
    pos = np.concatenate([rng.permutation(m) for m in d.group])
    clicks = ((rng.random(len(d.y)) < 1.0 / (1.0 + pos)) & (d.y > 0)).astype(float)
    return d.X, clicks, d.group_ptr, pos


_BIAS_KW = {"ips": dict(propensities=1.0 / (1.0 + np.arange(15))), "pairwise": dict(bias_norm=0.5),
            "additive": dict(position_bias_regularization=0.1)}


@pytest.mark.parametrize("pair_method", ["all", "mean"])
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", ["ndcg", "err", "map", "mrr", "ranknet", "ndcg_loss2", "ndcg_loss2pp"])
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_exact_bias_in_both_engines_is_lambda_gradients_round_by_round(engine, metric, bias, pair_method):
    """preset=None with every bias=: each round's gradients are lambda_gradients' with the bias state carried
    from the previous round (replayed from the engine's own scores; sampled pairs drawn with the round as
    iteration), and the fitted state is the replay's; the same bits at 1 and 2 threads."""
    from lambda_objectives import lambda_gradients

    X, c, ptr, pos = _click_data()
    sampled = {"pair_method": "mean", "num_pair_per_sample": 2, "seed": 3} if pair_method == "mean" else {}
    runs = []
    for threads in (1, 2):
        cls = LightGBMObjective if engine == "lightgbm" else XGBoostObjective
        extra = {"learning_rate": 0.2} if engine == "xgboost" and bias == "additive" else {}
        obj = cls(metric, bias=bias, n_threads=threads, positions=pos, **_BIAS_KW[bias], **extra, **sampled)
        seen = []

        def f(preds, data, obj=obj, seen=seen):
            seen.append(np.array(preds, dtype=np.float64))
            g, h = obj(preds, data)
            seen.append((g.copy(), h.copy()))
            return g, h

        if engine == "lightgbm":
            ds = lgb.Dataset(X, c, group=np.diff(ptr), position=pos)
            model = lgb.train({"objective": f, "learning_rate": 0.2, "num_threads": threads, "verbose": -1,
                               "min_data_in_leaf": 2, "num_leaves": 7}, ds, 3)
            pred = model.predict(X)
        else:
            dm = xgb.DMatrix(X, c, group=np.diff(ptr))
            model = xgb.train({"base_score": 0.0, "eta": 0.2, "nthread": threads, "max_depth": 3}, dm, 3, obj=f)
            pred = model.predict(dm, output_margin=True)
        runs.append((pred, seen, obj))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    _, seen, obj = runs[0]
    state = None
    for r in range(3):
        scores, (g, h) = seen[2 * r], seen[2 * r + 1]
        kw = dict(_BIAS_KW[bias])
        if bias == "additive":
            kw["learning_rate"] = 0.2
        kw.update(sampled, **({"iteration": r} if sampled else {}))
        res = lambda_gradients(scores, c, ptr, metric, bias=bias, positions=pos, bias_state=state, **kw)
        if bias == "additive":  # the engine's step reads its float32 gradients
            np.testing.assert_allclose(g, res[0], rtol=1e-6, atol=1e-7)
            state = res[-1]
            continue
        np.testing.assert_array_equal(g, np.float32(res[0]))
        np.testing.assert_array_equal(h, np.float32(res[1]))
        state = res[-1] if bias == "pairwise" else None
    if bias == "pairwise":
        np.testing.assert_array_equal(obj.bias_factors_[0], state[0])
        np.testing.assert_array_equal(obj.bias_factors_[1], state[1])
        assert np.any(state[0] != 1.0)
    elif bias == "additive":
        np.testing.assert_allclose(obj.position_bias_, state, rtol=1e-5, atol=1e-7)
        assert np.any(obj.position_bias_ != 0.0)


@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_yetirank_bias_in_both_engines_is_deterministic_and_fitted(engine, bias):
    X, c, ptr, pos = _click_data()

    def train(obj, threads):
        if engine == "lightgbm":
            ds = lgb.Dataset(X, c, group=np.diff(ptr), position=pos if obj.bias is not None else None)
            return lgb.train({"objective": obj, "learning_rate": 0.2, "num_threads": threads, "verbose": -1,
                              "min_data_in_leaf": 2, "num_leaves": 7}, ds, 3).predict(X)
        dm = xgb.DMatrix(X, c, group=np.diff(ptr))
        # YetiRank's Hessians are small on 25 queries: XGBoost's min_child_weight and the objective's agree
        return xgb.train(obj.params(base_score=0.0, eta=0.2, nthread=threads, max_depth=3), dm, 3,
                         obj=obj).predict(dm, output_margin=True)

    cls = LightGBMObjective if engine == "lightgbm" else XGBoostObjective
    extra = {"learning_rate": 0.2} if engine == "xgboost" and bias == "additive" else {}
    small = {"min_child_weight": 1e-3} if engine == "xgboost" else {}
    preds = []
    for threads in (1, 2):
        obj = cls("yetirank", bias=bias, n_threads=threads, positions=pos, **_BIAS_KW[bias], **extra, **small)
        preds.append(train(obj, threads))
    np.testing.assert_array_equal(preds[0], preds[1])
    assert not np.array_equal(train(cls("yetirank", **small), 1), preds[0])
    if bias == "pairwise":
        assert obj.bias_factors_[0][0] == 1.0 and np.any(obj.bias_factors_[0] != 1.0)
