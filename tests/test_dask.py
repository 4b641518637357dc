"""Dask: the objectives on a 2-worker LocalCluster, and the partition check."""

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from lambda_objectives.adapters import LightGBMObjective, XGBoostObjective  # noqa: E402
from lambda_objectives.dask import (  # noqa: E402
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


# --- queries made whole (issue #34, item 5) ------------------------------------------------------

def _frame(n_q=120, seed=0, n_features=6):
    import pandas as pd

    import lambda_objectives as lo

    d = lo.make_ranking(n_q, docs_per_query=(5, 30), n_features=n_features, seed=seed)
    cols = [f"f{i}" for i in range(n_features)]
    return d, cols, pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=d.qid)


def _shuffled(df, npartitions, seed=1):
    """A Dask frame of ``df``'s rows in random order: nearly every query split across partitions."""
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(df.sample(frac=1, random_state=seed), npartitions=npartitions, sort=False)


def _parts(ddf):
    import dask

    return list(dask.compute(*ddf.to_delayed()))


@pytest.mark.parametrize("npartitions, expected", [(None, 5), (3, 3), (1, 1)])
def test_repartition_by_query_makes_every_query_whole(client, npartitions, expected):
    import pandas as pd

    import lambda_objectives as lo

    _, _, df = _frame()
    ddf = _shuffled(df, 5)
    before = ddf.compute()
    split = sum(len({p for p, part in enumerate(_parts(ddf)) if q in set(part.qid)}) > 1 for q in df.qid.unique())
    assert split > 100  # the input splits nearly every one of the 120 queries
    out = lo.dask.repartition_by_query(ddf, "qid", npartitions=npartitions)
    parts = _parts(out)
    assert out.npartitions == len(parts) == expected and all(len(p) for p in parts)
    owners = {}
    for p, part in enumerate(parts):
        assert list(part.columns) == list(df.columns) and (part.dtypes == df.dtypes).all()
        assert part.qid.is_monotonic_increasing
        for q in part.qid.unique():
            owners.setdefault(q, set()).add(p)
    assert all(len(s) == 1 for s in owners.values()) and len(owners) == 120
    # qid ranges rise with the partition number, so the dask-array check passes too
    assert lo.dask.check_query_partitions(out["f0"].to_dask_array(lengths=True),
                                          qid=out["qid"].to_dask_array(lengths=True)) == expected
    # every row kept once, with its index label; inside a query the input order (stable sort)
    got = pd.concat(parts)
    pd.testing.assert_frame_equal(got, before.sort_values("qid", kind="stable"))
    key = list(df.columns)
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  df.sort_values(key).reset_index(drop=True))
    if expected == 5:  # balanced by rows: no partition exceeds its share by more than a query
        assert max(map(len, parts)) <= len(df) / 5 + df.groupby("qid").size().max()
    pd.testing.assert_frame_equal(ddf.compute(), before)  # the input is untouched


def test_partition_starts_fill_every_partition():
    """The qid ranges: n non-empty partitions in qid order, balanced, whatever the query sizes."""
    from lambda_objectives.dask import _part_starts

    rng = np.random.default_rng(0)
    for _ in range(300):
        n_q = int(rng.integers(1, 40))
        counts = rng.integers(1, 50, n_q) ** int(rng.integers(1, 3))  # sometimes a few huge queries
        ids = np.sort(rng.choice(1000, n_q, replace=False))
        n = int(rng.integers(1, n_q + 1))
        starts = _part_starts(ids, counts, n)
        assert starts.shape[0] == n and starts[0] == ids[0] and np.all(np.diff(starts) > 0)
        part = np.searchsorted(starts, ids, side="right") - 1
        rows = np.bincount(part, weights=counts, minlength=n)
        assert rows.min() > 0
        assert rows.max() <= counts.sum() / n + counts.max()  # at most a share plus a query


def test_repartition_by_query_validates():
    import pandas as pd

    import lambda_objectives as lo

    _, _, df = _frame(n_q=10)
    ddf = _shuffled(df, 3)
    with pytest.raises(TypeError, match="dask.dataframe.DataFrame.*sort_values"):
        lo.dask.repartition_by_query(df, "qid")
    with pytest.raises(TypeError, match="from_dask_array"):
        lo.dask.repartition_by_query(da.from_array(df.to_numpy()), "qid")
    with pytest.raises(ValueError, match="no 'query' column"):
        lo.dask.repartition_by_query(ddf, "query")
    with pytest.raises(ValueError, match="npartitions"):
        lo.dask.repartition_by_query(ddf, "qid", npartitions=0)
    floats = df.assign(qid=df.qid.astype(float))
    with pytest.raises(ValueError, match="dtype float64; query ids must be integers"):
        lo.dask.repartition_by_query(_shuffled(floats, 3), "qid")
    floats.loc[floats.index[7], "qid"] = np.nan
    with pytest.raises(ValueError, match=f"1 missing \\(NaN\\) ids, the first at index label {floats.index[7]}"):
        lo.dask.repartition_by_query(_shuffled(floats, 3), "qid")
    nullable = df.assign(qid=pd.array(df.qid, dtype="Int64"))
    nullable.loc[nullable.index[3], "qid"] = pd.NA
    with pytest.raises(ValueError, match="1 missing"):
        lo.dask.repartition_by_query(_shuffled(nullable, 3), "qid")
    with pytest.raises(ValueError, match="must be integers"):
        lo.dask.repartition_by_query(_shuffled(df.assign(qid=df.qid.map("q{}".format)), 3), "qid")
    # more partitions than queries: one query each
    capped = _parts(lo.dask.repartition_by_query(ddf, "qid", npartitions=50))
    assert [sorted(set(p.qid)) for p in capped] == [[q] for q in range(10)]
    # nullable integers without missing ids are integers: accepted
    out = lo.dask.repartition_by_query(_shuffled(df.assign(qid=pd.array(df.qid, dtype="Int64")), 3), "qid")
    assert str(out.compute().qid.dtype) == "Int64"


def test_partition_group_sizes_align_with_partitions(client):
    import lambda_objectives as lo

    _, _, df = _frame(n_q=40)
    with pytest.raises(ValueError, match="lies in partitions|reappears"):
        lo.dask.partition_group_sizes(_shuffled(df, 4), "qid")
    dd = pytest.importorskip("dask.dataframe")
    # a query cut at a partition boundary (rows in order): named with both partitions
    cut = dd.from_pandas(df, npartitions=4, sort=False)
    with pytest.raises(ValueError, match=r"qid \d+ lies in partitions 0 and 1"):
        lo.dask.partition_group_sizes(cut, "qid")
    out = lo.dask.repartition_by_query(_shuffled(df, 4), "qid")
    g = lo.dask.partition_group_sizes(out, "qid")
    parts = _parts(out)
    assert len(g.chunks[0]) == len(parts) == 4
    for sizes, part in zip(g.to_delayed(), parts):
        sizes = sizes.compute()
        assert sizes.sum() == len(part)
        np.testing.assert_array_equal(sizes, part.groupby("qid", sort=True).size().to_numpy())
    assert lo.dask.check_query_partitions(out[["f0"]].to_dask_array(lengths=True), group=g) == 4


def test_dask_metric_is_the_mean_over_queries(client):
    import lambda_objectives as lo

    _, _, df = _frame(n_q=60, seed=3)
    rng = np.random.default_rng(0)
    df = df.assign(score=rng.normal(size=len(df)))
    # labels 0..1 in the first half of the queries: per-partition maxima would change ERR
    df.loc[df.qid < 30, "label"] = np.minimum(df.label[df.qid < 30], 1)
    out = client.persist(lo.dask.repartition_by_query(_shuffled(df, 3), "qid"))
    whole = out.compute()
    ptr = lo.qid_to_ptr(whole.qid.to_numpy())
    s, y = whole.score.to_numpy(), whole.label.to_numpy()
    for metric, opts in [("ndcg@10", {}), ("err@5", {}), ("map", {}), ("ndcg@5", {"ideal_zero": "drop"}),
                         ("ndcg@10", {"convention": "trec"})]:
        expected = lo.mean_metric(s, y, ptr, metric, **opts)
        assert lo.dask.dask_metric(out, "score", metric, **opts) == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert lo.dask.dask_metric(out, out["score"].to_dask_array(), metric, **opts) == pytest.approx(expected, rel=1e-12)
    # the per-partition maxima would give another ERR: the global one is used
    local = [lo.mean_metric(p.score.to_numpy(), p.label.to_numpy(), lo.qid_to_ptr(p.qid.to_numpy()), "err@5")
             for p in _parts(out)]
    assert not np.isclose(np.mean(local), lo.mean_metric(s, y, ptr, "err@5"))
    with pytest.raises(ValueError, match="lies in partitions|reappears"):
        lo.dask.dask_metric(_shuffled(df, 3), "score", "ndcg@10")
    with pytest.raises(ValueError, match="2 chunks but the DataFrame has 3 partitions"):
        lo.dask.dask_metric(out, da.from_array(np.zeros(len(df)), chunks=len(df) // 2 + 1), "ndcg@10")
    with pytest.raises(ValueError, match="no 'grade' column"):
        lo.dask.dask_metric(out, "score", "ndcg@10", label="grade")


def test_lightgbm_on_a_shuffled_frame_matches_single_machine(client):
    """From a shuffled frame: repartition, group sizes, DaskLGBMRanker with our objective.

    Measured (120/52 train/test queries, 20 rounds, 15 leaves; three runs): NDCG@10 on the test
    queries 0.8845, 0.8921, 0.8955 on the cluster, 0.8899 on one machine, 0.6056 for constant
    scores. Distributed LightGBM is not bit-identical to one machine (its trees depend on which
    worker gets rank 0), so the quality is compared.
    """
    import pandas as pd

    import lambda_objectives as lo

    d = lo.make_ranking(172, docs_per_query=(5, 30), n_features=8, seed=0)
    tr, te = lo.train_test_split_queries(d, test_size=0.3, seed=0)
    cols = [f"f{i}" for i in range(8)]
    df = pd.DataFrame(tr.X, columns=cols).assign(label=tr.y, qid=tr.qid)
    ddf = client.persist(lo.dask.repartition_by_query(_shuffled(df, 4), "qid"))
    group = lo.dask.partition_group_sizes(ddf, "qid")
    kw = dict(n_estimators=20, num_leaves=15, learning_rate=0.1, min_child_samples=5, verbose=-1,
              deterministic=True, force_row_wise=True)
    m = lgb.dask.DaskLGBMRanker(objective=LightGBMObjective("ndcg"), client=client, **kw)
    m.fit(ddf[cols], ddf["label"], group=group)
    single = lgb.LGBMRanker(objective=LightGBMObjective("ndcg"), **kw).fit(tr.X, tr.y, group=np.diff(tr.group_ptr))
    dask_ndcg = lo.mean_metric(m.to_local().predict(te.X), te.y, te.group_ptr, "ndcg@10")
    single_ndcg = lo.mean_metric(single.predict(te.X), te.y, te.group_ptr, "ndcg@10")
    base = lo.mean_metric(np.zeros(te.y.shape[0]), te.y, te.group_ptr, "ndcg@10")
    assert dask_ndcg > base + 0.2 and single_ndcg > base + 0.2
    assert abs(dask_ndcg - single_ndcg) < 0.03, (dask_ndcg, single_ndcg)
    # the distributed eval of the cluster model on the (repartitioned) training frame = mean_metric
    whole = ddf.compute()
    expected = lo.mean_metric(m.to_local().predict(whole[cols]), whole.label.to_numpy(),
                              lo.qid_to_ptr(whole.qid.to_numpy()), "ndcg@10")
    assert lo.dask.dask_metric(ddf, m.predict(ddf[cols]), "ndcg@10") == pytest.approx(expected, rel=1e-12)


def test_xgboost_on_a_shuffled_frame_equals_single_machine(client):
    """From a shuffled frame, XGBoost with our objective on 2 workers = one machine on the same rows."""
    pytest.importorskip("xgboost.dask", reason="xgboost.dask needs dask.dataframe (pyarrow)")
    import xgboost as xgb

    import lambda_objectives as lo

    _, cols, df = _frame(n_q=80, seed=4)
    ddf = client.persist(lo.dask.repartition_by_query(_shuffled(df, 4), "qid"))
    X, y, q = (ddf[c].to_dask_array(lengths=True) for c in (cols, "label", "qid"))
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1, "tree_method": "hist"}
    out = lo.dask.xgboost_dask_train(client, params, X, y, q, XGBoostObjective("ndcg"), num_boost_round=10)
    whole = ddf.compute()
    single = xgb.train({**params, "base_score": 0.0},
                       xgb.DMatrix(whole[cols].to_numpy(), whole.label.to_numpy(), qid=whole.qid.to_numpy()), 10,
                       obj=XGBoostObjective("ndcg"))
    d = xgb.DMatrix(whole[cols].to_numpy())
    np.testing.assert_allclose(out["booster"].predict(d, output_margin=True),
                               single.predict(d, output_margin=True), atol=1e-5)
