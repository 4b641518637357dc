"""The LambdaMART objectives on a Dask cluster (``lightgbm.dask`` and ``xgboost.dask``).

Both engines train data-parallel: every worker computes the objective on its own partitions and
only histograms are exchanged. A pairwise objective therefore needs **every query's documents in
one partition**; :func:`check_query_partitions` verifies it (and raises, naming the query and
partitions, otherwise — rows are never moved here). The objective object is pickled to each
worker; its per-data-set cache is rebuilt there.
"""

import numpy as np

from ._optional import require

__all__ = ["check_query_partitions", "dask_lightgbm_ranker", "xgboost_dask_train"]


def _chunk_rows(arr):
    """Rows per partition of a dask array (or a single chunk for numpy)."""
    chunks = getattr(arr, "chunks", None)
    if chunks is None:
        return [int(np.shape(arr)[0])]
    return [int(c) for c in chunks[0]]


def check_query_partitions(X, group=None, qid=None):
    """Check that each query lies inside one partition of ``X``.

    Parameters
    ----------
    X : dask.array.Array
    group : dask.array.Array, optional
        Group sizes chunked like LightGBM's Dask interface wants (one chunk of sizes per
        partition of ``X``): the sizes in chunk ``p`` must sum to the rows of partition ``p``.
    qid : dask.array.Array, optional
        Per-row query ids chunked like ``X``: non-decreasing, and no qid in two partitions.

    Returns
    -------
    int : the number of partitions. Raises ``ValueError`` on the first violation.
    """
    rows = _chunk_rows(X)
    if (group is None) == (qid is None):
        raise ValueError("give exactly one of group (sizes per partition) or qid")
    if group is not None:
        parts = [np.asarray(b) for b in _blocks(group)]
        if len(parts) != len(rows):
            raise ValueError(f"group has {len(parts)} chunks but X has {len(rows)} partitions; "
                             "chunk group sizes like X's partitions")
        for p, (sizes, n) in enumerate(zip(parts, rows)):
            if int(np.sum(sizes)) != n:
                raise ValueError(f"partition {p}: group sizes sum to {int(np.sum(sizes))} but it holds {n} rows; "
                                 "a query straddles a partition boundary")
        return len(rows)
    if _chunk_rows(qid) != rows:
        raise ValueError("qid must be chunked exactly like X's rows")
    seen_last = None
    for p, block in enumerate(_blocks(qid)):
        q = np.asarray(block)
        if q.size == 0:
            continue
        bad = np.flatnonzero(q[1:] < q[:-1])
        if bad.size:
            raise ValueError(f"partition {p}: qid decreases at row {int(bad[0]) + 1} of the partition")
        if seen_last is not None and q[0] <= seen_last:
            raise ValueError(f"qid {q[0]!r} continues from partition {p - 1} into partition {p} "
                             "(or qids are not sorted across partitions); keep each query in one partition")
        seen_last = q[-1]
    return len(rows)


def _blocks(arr):
    if hasattr(arr, "to_delayed"):
        dask = require("dask")

        return dask.compute(*arr.to_delayed().ravel())
    return [arr]


def dask_lightgbm_ranker(objective, X=None, group=None, **kwargs):
    """``lightgbm.dask.DaskLGBMRanker(objective=objective, **kwargs)``, checking partitions.

    ``objective`` is a :class:`~lambda_objectives.LightGBMObjective` (its 4-argument call form
    receives each worker's group sizes). When ``X`` and ``group`` are given they are checked
    with :func:`check_query_partitions` first.
    """
    DaskLGBMRanker = require("lightgbm.dask").DaskLGBMRanker

    if X is not None and group is not None:
        check_query_partitions(X, group=group)
    return DaskLGBMRanker(objective=objective, **kwargs)


def xgboost_dask_train(client, params, X, y, qid, objective, num_boost_round=100, **kwargs):
    """``xgb.dask.train`` with ``obj=objective`` on a ``DaskDMatrix(X, y, qid=qid)``.

    Checks that queries do not straddle partitions and that qid is sorted; pins
    ``base_score=0`` (XGBoost uses 0.5 under a custom objective). Returns xgboost's result dict
    (``booster``, ``history``).
    """
    xgb = require("xgboost")

    check_query_partitions(X, qid=qid)
    dtrain = xgb.dask.DaskDMatrix(client, X, y, qid=qid)
    p = {"base_score": 0.0}
    p.update(params)
    return xgb.dask.train(client, p, dtrain, num_boost_round=num_boost_round, obj=objective, **kwargs)

