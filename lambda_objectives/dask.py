"""The LambdaMART objectives on a Dask cluster (``lightgbm.dask`` and ``xgboost.dask``).

Both engines train data-parallel: every worker computes the objective on its own partitions and
only histograms are exchanged. A pairwise objective therefore needs **every query's documents in
one partition**, and neither engine moves rows for a custom objective (``lightgbm.dask`` never
does; ``xgboost.dask.DaskXGBRanker`` regroups by qid only for its own string objectives).

* :func:`repartition_by_query` moves the rows of a Dask DataFrame so that every query lies in one
  partition, sorted by qid (the one function here that moves rows);
* :func:`partition_group_sizes` gives the group sizes chunked like the frame's partitions
  (``DaskLGBMRanker.fit(group=)``), raising if a query is split;
* :func:`check_query_partitions` checks dask arrays (group sizes or a qid column);
* :func:`dask_metric` evaluates a ranking metric on the workers, per partition, as the mean over
  queries — the custom evaluation (and early stopping) ``lightgbm.dask`` does not offer.

The objective object is pickled to each worker; its per-data-set cache is rebuilt there.
"""

import numbers

import numpy as np

from ._core.optional import require
from .data.groups import qid_runs

__all__ = ["check_query_partitions", "dask_lightgbm_ranker", "dask_metric", "partition_group_sizes",
           "repartition_by_query", "xgboost_dask_train"]


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
            first = q[0].item() if hasattr(q[0], "item") else q[0]  # 2, not np.int64(2)
            raise ValueError(f"qid {first!r} continues from partition {p - 1} into partition {p} "
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
    require("xgboost.dask")  # a submodule: ``import xgboost`` alone does not load it

    check_query_partitions(X, qid=qid)
    dtrain = xgb.dask.DaskDMatrix(client, X, y, qid=qid)
    p = {"base_score": 0.0}
    p.update(params)
    return xgb.dask.train(client, p, dtrain, num_boost_round=num_boost_round, obj=objective, **kwargs)


# --- queries made whole -------------------------------------------------------------------------

def _check_frame(ddf, qid, fn):
    """Validate ``ddf``: a dask DataFrame holding an integer column ``qid`` without missing ids.

    Reads only the metadata, except for float or nullable-integer qids: those are scanned for
    missing values (a compute) so that the error can say how many and where.
    """
    dd = require("dask.dataframe")
    if not isinstance(ddf, dd.DataFrame):
        hint = ""
        if hasattr(ddf, "iloc") and not hasattr(ddf, "npartitions"):
            hint = " (for a pandas DataFrame, sort it by qid with sort_values(qid, kind='stable') instead)"
        elif hasattr(ddf, "chunks"):
            hint = " (wrap a dask array with dask.dataframe.from_dask_array(X, columns=[...]) first)"
        raise TypeError(f"{fn} takes a dask.dataframe.DataFrame, got {type(ddf).__name__}{hint}")
    if qid not in ddf.columns:
        raise ValueError(f"{fn}: the DataFrame has no {qid!r} column (columns: {list(ddf.columns)[:10]}); "
                         "pass the name of its query-id column as qid")
    pd = require("pandas")
    dtype = ddf.dtypes[qid]
    if pd.api.types.is_integer_dtype(dtype):
        if isinstance(dtype, pd.api.extensions.ExtensionDtype):  # nullable Int64 & co. may hold <NA>
            _raise_missing(ddf, qid, fn)
        return
    if pd.api.types.is_float_dtype(dtype):
        _raise_missing(ddf, qid, fn)
    # XGBoost's DaskDMatrix(qid=) takes integers, and a float id invites NaN (one query per NaN row)
    raise ValueError(f"{fn}: qid column {qid!r} has dtype {dtype}; query ids must be integers "
                     f"(cast whole-number ids with ddf.astype({{{qid!r}: 'int64'}}), or map other ids to "
                     "integers first)")


def _raise_missing(ddf, qid, fn):
    dask = require("dask")
    missing = ddf[qid].isna()
    n_missing, first = dask.compute(missing.sum(), ddf[missing].head(1, npartitions=-1, compute=False))
    if int(n_missing):
        raise ValueError(f"{fn}: qid column {qid!r} holds {int(n_missing)} missing (NaN) ids, the first at index "
                         f"label {first.index.tolist()[0]!r}; every row needs its query id (drop or fill those rows)")


def _qid_array(series):
    """A qid column as a numpy integer array (nullable integer dtypes via their numpy dtype)."""
    dtype = series.dtype
    return series.to_numpy(dtype=getattr(dtype, "numpy_dtype", dtype))


def _part_starts(ids, counts, n):
    """First qid of each of ``n`` partitions over the sorted ``ids`` (rows per qid ``counts``).

    Query ``j`` goes to partition ``floor(rows before it * n / total)`` — contiguous qid ranges
    of about ``total / n`` rows each — adjusted so that no partition is empty: the partition
    number rises by 0 or 1 per query (``min`` over the earlier queries of ``part_i + j - i``) and
    reaches ``n - 1`` (``j >= n - Q + part``).
    """
    before = np.cumsum(counts) - counts
    j = np.arange(ids.shape[0], dtype=np.int64)
    part = before * n // int(counts.sum())
    part = np.minimum.accumulate(part - j) + j
    part = np.maximum(part, n - ids.shape[0] + j)
    return ids[np.flatnonzero(np.diff(part, prepend=-1))]


def _tag_rows(df, starts, qid, cols, partition_info=None):
    """Add the target partition, the source partition, the row's position and the index as columns."""
    part_col, src_col, pos_col, index_col = cols
    q = _qid_array(df[qid])
    number = partition_info["number"] if partition_info else 0
    return df.assign(**{part_col: np.searchsorted(starts, q, side="right").astype(np.int64) - 1,
                        src_col: np.full(len(df), number, dtype=np.int64),
                        pos_col: np.arange(len(df), dtype=np.int64),
                        index_col: df.index})


def _sort_rows(df, qid, cols, index_name, columns):
    """Sort one moved partition by (qid, original partition, original row) and restore the index."""
    _, src_col, pos_col, index_col = cols
    order = np.lexsort((df[pos_col].to_numpy(), df[src_col].to_numpy(), _qid_array(df[qid])))
    out = df.iloc[order].set_index(index_col)
    out.index.name = index_name
    return out[columns]


def repartition_by_query(ddf, qid="qid", npartitions=None):
    """Move the rows of a Dask DataFrame so that every query lies whole in one partition.

    ``lightgbm.dask`` and ``xgboost.dask`` (with a custom objective) train on each worker's own
    partitions and need every query whole in one of them; a shuffled or appended frame splits
    queries across partitions. This returns a new frame holding exactly the same rows (the input
    is not changed), where

    * every query lies in exactly one partition, and partitions hold contiguous, increasing qid
      ranges (partition ``p``'s qids are all below partition ``p + 1``'s);
    * rows are sorted by qid inside each partition, stably: rows of one query keep their input
      order (partition by partition, row by row);
    * partitions are balanced by rows (about ``n_rows / npartitions`` each; a query is never cut,
      so a long query can make its partition larger) and none is empty;
    * every row keeps its index label, columns and dtypes; ``divisions`` are unknown (the index is
      the input's, not sorted).

    The result passes :func:`check_query_partitions` (as ``qid=``) and :func:`partition_group_sizes`.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Holds the query ids in column ``qid``.
    qid : str
        The query-id column: integers (numpy or nullable integer dtype), no missing values.
        Float, string or other ids raise ``ValueError`` (XGBoost's ``DaskDMatrix(qid=)`` takes
        integers; a NaN id would silently make a query per row): cast or map them to integers.
    npartitions : int, optional
        Partitions of the result; default ``ddf.npartitions``. Capped at the number of queries
        (a partition holds at least one whole query).

    Returns
    -------
    dask.dataframe.DataFrame

    Notes
    -----
    Computes ``ddf`` twice: once to count the rows of each qid (on the workers; only the counts,
    one per query, come back), once to move the rows (a Dask shuffle, ``set_index`` on the target
    partition number). ``persist`` an expensive input first.
    """
    dask = require("dask")
    _check_frame(ddf, qid, "repartition_by_query")
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(npartitions, numbers.Integral)
                                    or npartitions < 1):
        raise ValueError(f"npartitions must be an integer >= 1 or None, got {npartitions!r}")
    counts = dask.compute(ddf[qid].value_counts(sort=False))[0]
    if counts.shape[0] == 0:
        raise ValueError("repartition_by_query: the DataFrame has no rows")
    ids = _qid_array(counts.index.to_series())
    order = np.argsort(ids, kind="stable")
    ids, sizes = ids[order], counts.to_numpy().astype(np.int64)[order]
    n = min(int(npartitions or ddf.npartitions), ids.shape[0])
    starts = _part_starts(ids, sizes, n)
    taken = set(map(str, ddf.columns))
    cols = []
    for name in ("part", "src", "pos", "index"):
        col = f"__lo_{name}__"
        while col in taken:
            col = "_" + col
        cols.append(col)
        taken.add(col)
    cols = tuple(cols)
    meta = _tag_rows(ddf._meta, starts, qid, cols)
    tagged = ddf.map_partitions(_tag_rows, starts, qid, cols, meta=meta)
    moved = tagged.set_index(cols[0], divisions=list(range(n)) + [n - 1])
    return moved.map_partitions(_sort_rows, qid, cols, ddf.index.name, list(ddf.columns), meta=ddf._meta,
                                clear_divisions=True)


def _py(v):
    """A numpy scalar as the Python number it holds (for messages)."""
    return v.item() if isinstance(v, np.generic) else v


def _partition_runs(q, p):
    """``(group sizes, qid of each group)`` of partition ``p``; raises if a query is not contiguous."""
    q = _qid_array(q) if hasattr(q, "dtype") and hasattr(q, "to_numpy") else np.asarray(q)
    ptr, r = qid_runs(q)
    if r >= 0:
        raise ValueError(f"partition {p}: qid {_py(q[r])!r} reappears at row {r} of the partition after other queries; "
                         "a query's rows must be contiguous (use repartition_by_query(ddf, qid))")
    return np.diff(ptr), q[ptr[:-1]]


def _check_whole(run_ids):
    """Raise if a qid occurs in two partitions (``run_ids``: the qids of each partition's groups)."""
    ids = np.concatenate(run_ids)
    owner = np.repeat(np.arange(len(run_ids)), [len(r) for r in run_ids])
    order = np.argsort(ids, kind="stable")
    dup = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if dup.size:
        a, b = order[dup[0]], order[dup[0] + 1]
        raise ValueError(f"qid {_py(ids[a])!r} lies in partitions {int(owner[a])} and {int(owner[b])}; "
                         "every query must lie whole in one partition (use repartition_by_query(ddf, qid))")


def partition_group_sizes(ddf, qid="qid"):
    """Group sizes chunked like ``ddf``'s partitions: what ``DaskLGBMRanker.fit(group=)`` needs.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Every query whole in one partition, its rows contiguous there (as
        :func:`repartition_by_query` leaves them); qids as :func:`repartition_by_query` takes them.
    qid : str
        The query-id column.

    Returns
    -------
    dask.array.Array of int64
        One chunk per partition of ``ddf``: chunk ``p`` holds the sizes of partition ``p``'s queries
        in row order, so it sums to that partition's rows (``ddf.to_delayed()[p]``). The sizes,
        one number per query, are computed on the workers and collected here.

    Raises
    ------
    ValueError
        Naming the qid and the partitions, when a query is split across partitions or its rows are
        not contiguous inside one.
    """
    dask = require("dask")
    da = require("dask.array")
    _check_frame(ddf, qid, "partition_group_sizes")
    delayed = dask.delayed(_partition_runs, pure=True)
    runs = dask.compute(*[delayed(part, p) for p, part in enumerate(ddf[qid].to_delayed())])
    _check_whole([ids for _, ids in runs])
    sizes = [s.astype(np.int64) for s, _ in runs]
    return da.from_array(np.concatenate(sizes), chunks=(tuple(len(s) for s in sizes),))


def _partition_metric(frame, scores, p, qid, label, metric, k, opts):
    """(sum of the kept per-query values, kept queries, qid of each query) of partition ``p``."""
    from .metrics import metric_values

    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if s.shape[0] != len(frame):
        raise ValueError(f"partition {p}: scores hold {s.shape[0]} rows but the partition holds {len(frame)}; "
                         "compute the scores from the same frame, partitions unchanged (e.g. model.predict(X))")
    sizes, ids = _partition_runs(frame[qid], p)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    v = metric_values(s, frame[label].to_numpy(dtype=np.float64), ptr, metric, k, **opts)
    keep = ~np.isnan(v)
    return float(v[keep].sum()), int(keep.sum()), ids


def dask_metric(ddf, scores, metric, k=None, *, qid="qid", label="label", **opts):
    """A ranking metric of a Dask DataFrame's scores, computed on the workers, as the mean over queries.

    Each partition's queries (whole, as :func:`repartition_by_query` leaves them) are evaluated
    where the partition lives with :func:`~lambda_objectives.metric_values`; only a sum, a count
    and the partition's qids come back. The result is the **query-weighted mean**: every query
    counts once, ``sum_q m_q / n_queries`` over the whole frame — the number
    :func:`~lambda_objectives.mean_metric` gives on the gathered data (up to float64 summation
    order), not a mean of per-partition means. Queries whose value is NaN (``ideal_zero="drop"``)
    are left out of both sums; NaN when every query is.

    Use it for evaluation or early stopping where the engine has none: ``lightgbm.dask`` has no
    custom eval metric and no early stopping (see the user guide, "Dask", for a round loop).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Holds the columns ``qid`` and ``label``; every query whole in one partition, its rows
        contiguous (a query split across partitions raises ``ValueError`` rather than being
        evaluated as two queries).
    scores : dask.array.Array, dask Series or str
        One score per row, chunked like ``ddf``'s partitions (one chunk per partition, as
        ``DaskLGBMRanker.predict(X)`` or ``xgboost.dask.predict`` return for ``X = ddf[features]``),
        or the name of a column of ``ddf``.
    metric, k, **opts
        As in :func:`~lambda_objectives.metric_values` (``"ndcg@10"``, ``convention=``, ...).
        For ERR without ``max_label``, the largest label of the whole frame is computed first and
        used on every partition (per-partition maxima would change the metric).

    Returns
    -------
    float
    """
    dask = require("dask")
    from ._registry import parse_metric

    _check_frame(ddf, qid, "dask_metric")
    if label not in ddf.columns:
        raise ValueError(f"dask_metric: the DataFrame has no {label!r} column; pass its label column as label=")
    name, k = parse_metric(metric, k)
    if isinstance(scores, str):
        if scores not in ddf.columns:
            raise ValueError(f"dask_metric: scores={scores!r} is not a column of the DataFrame")
        score_parts = ddf[scores].to_delayed()
    else:
        if getattr(scores, "ndim", 1) != 1:
            raise ValueError(f"scores must be one score per row (1-D), got shape {scores.shape}")
        if not hasattr(scores, "to_delayed"):
            raise TypeError(f"scores must be a dask array, a dask Series or a column name, got {type(scores).__name__}")
        score_parts = list(np.ravel(scores.to_delayed()))
    frames = ddf[[qid, label]].to_delayed()
    if len(score_parts) != len(frames):
        raise ValueError(f"scores have {len(score_parts)} chunks but the DataFrame has {len(frames)} partitions; "
                         "predict on the same frame (one chunk per partition)")
    if name == "err" and opts.get("max_label") is None:
        opts = {**opts, "max_label": float(dask.compute(ddf[label].max())[0])}
    task = dask.delayed(_partition_metric, pure=True)
    out = dask.compute(*[task(f, s, p, qid, label, metric, k, opts)
                         for p, (f, s) in enumerate(zip(frames, score_parts))])
    _check_whole([ids for _, _, ids in out])
    total, count = sum(o[0] for o in out), sum(o[1] for o in out)
    return total / count if count else float("nan")
