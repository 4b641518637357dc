"""Conversions between the three ways to say which rows belong to which query.

* ``group`` (sizes): ``[3, 5, 2]``, as LightGBM's ``group=`` and ``.query`` files;
* ``group_ptr`` (boundaries): ``[0, 3, 8, 10]``, as XGBoost's ``group_ptr``; the package's
  internal form (int64, ``group_ptr[0] = 0``, ``group_ptr[-1] = n_rows``);
* ``qid`` (a column): one query id per row, rows of a query contiguous.
"""

import numpy as np

from .._core.config import PTR, kernel_array


def sizes_to_ptr(sizes, n_rows=None):
    """Group sizes -> ``group_ptr`` boundaries.

    Raises ``ValueError`` for negative, zero or non-integer sizes, or when ``n_rows`` is given
    and the sizes do not sum to it.
    """
    s = np.asarray(sizes)
    if s.ndim != 1:
        raise ValueError(f"group sizes must be 1-D, got shape {s.shape}")
    if s.dtype.kind == "f":
        if not np.all(np.isfinite(s)) or np.any(s != np.floor(s)):
            raise ValueError("group sizes must be whole numbers")
    elif s.dtype.kind not in "iu":
        raise ValueError(f"group sizes must be integers, got dtype {s.dtype}")
    s = s.astype(PTR)
    if np.any(s <= 0):
        q = int(np.flatnonzero(s <= 0)[0])
        raise ValueError(f"group sizes must be positive: query {q} has size {s[q]} (empty group)")
    ptr = np.zeros(s.shape[0] + 1, dtype=PTR)
    np.cumsum(s, out=ptr[1:])
    if n_rows is not None and ptr[-1] != n_rows:
        raise ValueError(f"group sizes sum to {ptr[-1]} but there are {n_rows} rows")
    return ptr


def ptr_to_sizes(group_ptr):
    """``group_ptr`` boundaries -> group sizes (int64)."""
    ptr = np.asarray(group_ptr)
    ptr = check_group_ptr(ptr, int(ptr[-1]) if ptr.size else 0)
    return np.diff(ptr)


def qid_to_ptr(qid):
    """A per-row query id column -> ``group_ptr``.

    Rows of one query must be contiguous; a qid that reappears after a different qid raises
    ``ValueError`` naming the qid and the row (the data is never reordered silently).
    """
    q = np.asarray(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be 1-D, got shape {q.shape}")
    n = q.shape[0]
    if n == 0:
        return np.zeros(1, dtype=PTR)
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        r = int(np.flatnonzero(~np.isfinite(q))[0])
        raise ValueError(f"qid contains NaN or inf (first at row {r}: {q[r]!r})")
    if q.dtype.kind == "O":
        # NaN != NaN: each missing id would silently become a query of its own
        missing = [r for r, v in enumerate(q) if v is None or (isinstance(v, (float, np.floating)) and not np.isfinite(v))]
        if missing:
            raise ValueError(f"qid holds a missing or non-finite id at row {missing[0]} ({q[missing[0]]!r}; "
                             f"{len(missing)} rows in all); every row needs its query id")
    if q.dtype.kind in "mM" and np.isnat(q).any():
        # NaT != NaT: each missing timestamp id would become a query of its own, as NaN did
        r = int(np.flatnonzero(np.isnat(q))[0])
        raise ValueError(f"qid holds a missing id (NaT) at row {r}; every row needs its query id")
    try:
        ptr, r = qid_runs(q)
    except TypeError as exc:  # an object column mixing ids that do not compare (int and str)
        raise ValueError(f"qid values must be of one comparable type ({exc})") from None
    if r >= 0:
        raise ValueError(
            f"qids are not contiguous: qid {q[r].item()!r} reappears at row {r} "
            "after rows of another query; sort rows by qid (stably) first"
        )
    return ptr


def qid_runs(qid):
    """``(group_ptr, row)`` of a per-row qid column: the boundaries of its runs of equal qids, and
    the first row where a qid reappears after another query (``-1`` when rows are contiguous).

    The one contiguity check of the package: :func:`qid_to_ptr` and the LETOR loader (which
    names the file line) both read it.
    """
    q = np.asarray(qid)
    n = q.shape[0]
    if n == 0:
        return np.zeros(1, dtype=PTR), -1
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], change))
    ptr = np.concatenate((starts, [n])).astype(PTR)
    run_ids = q[starts]
    order = np.argsort(run_ids, kind="stable")
    dup = np.flatnonzero(run_ids[order][1:] == run_ids[order][:-1])
    if dup.size == 0:
        return ptr, -1
    # the earliest reappearance in row order (not the first in sorted-qid order)
    return ptr, int(starts[order[dup + 1]].min())


def ptr_to_qid(group_ptr, qid_values=None):
    """``group_ptr`` -> a per-row qid column (``0..n_queries-1`` unless ``qid_values`` given).

    ``group_ptr`` is checked as everywhere (:func:`check_group_ptr`; empty queries allowed: they
    have no rows): a cast to int64 would truncate ``2.5`` and a start at 1 would drop rows silently.
    """
    ptr = np.asarray(group_ptr)
    ptr = check_group_ptr(ptr, int(ptr[-1]) if ptr.ndim == 1 and ptr.size else 0, allow_empty_groups=True)
    sizes = np.diff(ptr)
    if qid_values is None:
        qid_values = np.arange(sizes.shape[0], dtype=PTR)
    qid_values = np.asarray(qid_values)
    if qid_values.shape[0] != sizes.shape[0]:
        raise ValueError(f"{qid_values.shape[0]} qid values for {sizes.shape[0]} queries")
    return np.repeat(qid_values, sizes)


def resolve_group_ptr(n_rows, group=None, group_ptr=None, qid=None):
    """Return ``group_ptr`` from exactly one of ``group`` (sizes), ``group_ptr`` or ``qid``.

    ``None`` for all three means one query holding every row. Raises ``ValueError`` when more
    than one is given, or when they do not describe ``n_rows`` rows.
    """
    given = [name for name, v in (("group", group), ("group_ptr", group_ptr), ("qid", qid)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give only one of group, group_ptr, qid (got {', '.join(given)})")
    if group is not None:
        return sizes_to_ptr(group, n_rows)
    if qid is not None:
        qid = np.asarray(qid)
        if qid.shape[0] != n_rows:
            raise ValueError(f"qid has {qid.shape[0]} rows, data has {n_rows}")
        return qid_to_ptr(qid)
    if group_ptr is not None:
        return check_group_ptr(group_ptr, n_rows)
    return np.array([0, n_rows], dtype=PTR)


def frame_group_ptr(df, qid_column="qid"):
    """``group_ptr`` from a pandas DataFrame's qid column (rows of a query contiguous)."""
    if qid_column not in df.columns:
        raise ValueError(f"DataFrame has no {qid_column!r} column; columns are {list(df.columns)[:10]}")
    return qid_to_ptr(df[qid_column].to_numpy())


def split_qid_column(X, qid=None):
    """``(X without its qid column, qid)`` for a pandas DataFrame ``X`` with a ``qid`` column.

    The column holds the query ids, as ``xgboost.XGBRanker`` reads them, and is never a feature.
    Anything else is returned unchanged with ``qid``; giving the queries twice raises ``ValueError``.
    """
    columns = getattr(X, "columns", None)
    if columns is not None and "qid" in columns:
        if qid is not None:
            raise ValueError("X has a 'qid' column and qid= was passed too; give the queries once")
        return X.drop(columns="qid"), X["qid"].to_numpy()
    return X, qid


def check_group_ptr(group_ptr, n_rows, allow_empty_groups=False):
    """Return ``group_ptr`` as a contiguous int64 array of query boundaries.

    ``group_ptr`` must be 1-D, start at 0, end at ``n_rows`` and be non-decreasing (strictly
    increasing unless ``allow_empty_groups``). The first violating query is named.
    A pandas DataFrame with a ``qid`` column, or a Series named ``qid``, is accepted in its
    place and converted (rows of a query must be contiguous).
    """
    qid = _qid_column(group_ptr)
    if qid is not None:
        if qid.shape[0] != n_rows:
            raise ValueError(f"the qid column has {qid.shape[0]} rows, the data has {n_rows}")
        return qid_to_ptr(qid)
    arr = np.asarray(group_ptr)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"group_ptr must be a 1-D array of query boundaries, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.floor(arr)):
            arr = arr.astype(PTR)
        else:
            raise ValueError(f"group_ptr must hold integers, got dtype {arr.dtype}")
    arr = kernel_array(arr, PTR)
    if arr[0] != 0:
        raise ValueError(f"group_ptr must start at 0, got {arr[0]}")
    if arr[-1] != n_rows:
        raise ValueError(
            f"group_ptr must end at the number of rows ({n_rows}), got {arr[-1]}: "
            "group sizes do not sum to the row count"
        )
    d = np.diff(arr)
    bad = d < 0 if allow_empty_groups else d <= 0
    if bad.any():
        q = int(np.flatnonzero(bad)[0])
        what = "decreases" if d[q] < 0 else "is empty"
        raise ValueError(f"group_ptr is not monotone: query {q} {what} (rows {arr[q]}..{arr[q + 1]})")
    return arr


def _qid_column(obj):
    """The qid column of a pandas DataFrame / Series named ``qid``, else ``None``."""
    columns = getattr(obj, "columns", None)
    if columns is not None:
        if "qid" not in columns:
            raise ValueError(f"a DataFrame given for the queries needs a 'qid' column; it has {list(columns)[:10]}")
        return obj["qid"].to_numpy()
    if getattr(obj, "name", None) == "qid" and hasattr(obj, "to_numpy"):
        return obj.to_numpy()
    return None
