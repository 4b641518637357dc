"""Dask: the objectives on a 2-worker LocalCluster, and the partition check."""

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from lambda_objectives.adapters import LightGBMObjective, XGBoostObjective  # noqa: E402
from lambda_objectives.dask_support import (  # noqa: E402
    check_query_partitions,
    dask_lightgbm_ranker,
    xgboost_dask_train,
)


def _data(n_q=60, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 20, n_q)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 5))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=n) + 1), 0, 3)
    return X, y, sizes


def _split(X, y, sizes, q_cut):
    cut = int(sizes[:q_cut].sum())
    rows = ((cut, X.shape[0] - cut),)
    return (da.from_array(X, chunks=(rows[0], X.shape[1])), da.from_array(y, chunks=rows),
            da.from_array(sizes, chunks=((q_cut, len(sizes) - q_cut),)))


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def test_partition_check():
    X, y, sizes = _data()
    dX, _, dg = _split(X, y, sizes, 30)
    assert check_query_partitions(dX, group=dg) == 2
    bad = da.from_array(sizes, chunks=((29, len(sizes) - 29),))
    with pytest.raises(ValueError, match="straddles"):
        check_query_partitions(dX, group=bad)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    cut = int(sizes[:30].sum())
    dq = da.from_array(qid, chunks=((cut, len(qid) - cut),))
    assert check_query_partitions(dX, qid=dq) == 2
    dq_bad = da.from_array(qid, chunks=((cut + 1, len(qid) - cut - 1),))
    dX_bad = da.from_array(X, chunks=((cut + 1, len(qid) - cut - 1), X.shape[1]))
    with pytest.raises(ValueError, match="one partition"):
        check_query_partitions(dX_bad, qid=dq_bad)


def test_dask_lightgbm_ranker_matches_native_dask(client):
    X, y, sizes = _data()
    dX, dy, dg = client.persist(list(_split(X, y, sizes, 30)))
    distributed.wait([dX, dy, dg])
    kw = dict(n_estimators=10, num_leaves=7, verbose=-1, deterministic=True, force_row_wise=True,
              min_child_samples=5, client=client)
    # lightgbm.dask assigns machine ranks to workers non-deterministically, and the trees depend on
    # which partition is rank 0 (native runs differ from each other the same way): collect the outcomes
    # of both and require one bit-identical pair.
    natives, diffs = [], []
    for _ in range(6):
        natives.append(lgb.dask.DaskLGBMRanker(objective="lambdarank", **kw).fit(dX, dy, group=dg).to_local().predict(X))
        m = dask_lightgbm_ranker(LightGBMObjective(preset="lightgbm"), dX, dg, **kw).fit(dX, dy, group=dg)
        ours = m.to_local().predict(X)
        diffs.append(min(float(np.abs(ours - nat).max()) for nat in natives))
        if diffs[-1] == 0.0:
            break
    assert diffs[-1] == 0.0, diffs


def test_xgboost_dask_train_matches_single_machine(client):
    pytest.importorskip("xgboost.dask", reason="xgboost.dask needs dask.dataframe (pyarrow)")
    import xgboost as xgb

    X, y, sizes = _data()
    qid = np.repeat(np.arange(len(sizes)), sizes)
    cut = int(sizes[:30].sum())
    rows = ((cut, len(qid) - cut),)
    dX = da.from_array(X, chunks=(rows[0], X.shape[1]))
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1, "tree_method": "hist"}
    out = xgboost_dask_train(client, params, dX, da.from_array(y, chunks=rows), da.from_array(qid, chunks=rows),
                             XGBoostObjective(preset="xgboost"), num_boost_round=10)
    single = xgb.train({**params, "base_score": 0.0}, xgb.DMatrix(X, y, qid=qid), 10,
                       obj=XGBoostObjective(preset="xgboost"))
    d = xgb.DMatrix(X)
    np.testing.assert_allclose(out["booster"].predict(d, output_margin=True),
                               single.predict(d, output_margin=True), atol=1e-5)


@pytest.mark.parametrize("metric", ["ndcg_loss2pp@10", "ndcg_loss2pp_top@10", "label_diff"])
def test_new_objectives_train_on_the_cluster_as_on_one_machine(client, metric):
    """A LambdaLoss objective on two Dask workers equals the same objective on one machine."""
    pytest.importorskip("xgboost.dask", reason="xgboost.dask needs dask.dataframe (pyarrow)")
    import xgboost as xgb

    X, y, sizes = _data(seed=1)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    cut = int(sizes[:30].sum())
    rows = ((cut, len(qid) - cut),)
    dX = da.from_array(X, chunks=(rows[0], X.shape[1]))
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1, "tree_method": "hist"}
    obj = XGBoostObjective(metric)
    out = xgboost_dask_train(client, params, dX, da.from_array(y, chunks=rows), da.from_array(qid, chunks=rows),
                             obj, num_boost_round=10)
    single = xgb.train(obj.params(**params), xgb.DMatrix(X, y, qid=qid), 10, obj=XGBoostObjective(metric))
    d = xgb.DMatrix(X)
    np.testing.assert_allclose(out["booster"].predict(d, output_margin=True),
                               single.predict(d, output_margin=True), atol=1e-5)


def test_yetirank_trains_on_the_cluster(client):
    """YetiRank's draws are keyed by each worker's own query numbering, so a cluster run is not the
    single-machine run draw for draw; it trains (both engines) and improves NDCG@10 as well."""
    from lambda_objectives import mean_metric, sizes_to_ptr

    X, y, sizes = _data(seed=2)
    ptr = sizes_to_ptr(sizes, X.shape[0])
    base = mean_metric(np.zeros(X.shape[0]), y, ptr, "ndcg@10")
    dX, dy, dg = client.persist(list(_split(X, y, sizes, 30)))
    distributed.wait([dX, dy, dg])
    m = dask_lightgbm_ranker(LightGBMObjective("yetirank", seed=3), dX, dg, n_estimators=15, num_leaves=7,
                             verbose=-1, min_child_samples=5, client=client).fit(dX, dy, group=dg)
    assert mean_metric(m.to_local().predict(X), y, ptr, "ndcg@10") > base + 0.05
    pytest.importorskip("xgboost.dask", reason="xgboost.dask needs dask.dataframe (pyarrow)")
    import xgboost as xgb

    qid = np.repeat(np.arange(len(sizes)), sizes)
    rows = ((int(sizes[:30].sum()), X.shape[0] - int(sizes[:30].sum())),)
    out = xgboost_dask_train(client, {"max_depth": 3, "eta": 0.3, "nthread": 1, "tree_method": "hist"},
                             da.from_array(X, chunks=(rows[0], X.shape[1])), da.from_array(y, chunks=rows),
                             da.from_array(qid, chunks=rows), XGBoostObjective("yetirank", seed=3), num_boost_round=15)
    pred = out["booster"].predict(xgb.DMatrix(X), output_margin=True)
    assert mean_metric(pred, y, ptr, "ndcg@10") > base + 0.05
