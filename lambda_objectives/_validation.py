"""Input validation shared by the public functions: every check raises ``ValueError`` naming the problem."""

import numbers

import numpy as np

from ._config import FLOAT, PTR


def check_scores(scores, name="scores"):
    """Return ``scores`` as a contiguous 1-D float64 array (a copy only when needed).

    Raises ``ValueError`` for a non-1-D input, or NaN/inf values (naming the first bad row).
    """
    arr = np.asarray(scores)
    if arr.ndim != 1:
        arr = np.squeeze(arr)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(scores)}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} contains non-finite values (NaN or inf), first at row {i}: {arr[i]!r}")
    return arr


def check_labels(labels, n_rows, integer=False, name="labels"):
    """Return ``labels`` as a contiguous 1-D float64 array of length ``n_rows``.

    Labels must be finite and non-negative; with ``integer=True`` they must also be whole
    numbers (graded relevance for gain tables). Errors name the first offending row.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        arr = np.squeeze(arr)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(labels)}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"length mismatch: {name} has {arr.shape[0]} rows, scores have {n_rows}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} contain non-finite values (NaN or inf), first at row {i}: {arr[i]!r}")
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{name} must be non-negative, row {i} is {arr[i]!r}")
    if integer:
        frac = arr != np.floor(arr)
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise ValueError(
                f"{name} must be integer relevance grades for a gain table, row {i} is {arr[i]!r}"
            )
    return arr


def check_group_ptr(group_ptr, n_rows, allow_empty_groups=False):
    """Return ``group_ptr`` as a contiguous int64 array of query boundaries.

    ``group_ptr`` must be 1-D, start at 0, end at ``n_rows`` and be non-decreasing (strictly
    increasing unless ``allow_empty_groups``). The first violating query is named.
    A pandas DataFrame with a ``qid`` column, or a Series named ``qid``, is accepted in its
    place and converted (rows of a query must be contiguous).
    """
    qid = _qid_column(group_ptr)
    if qid is not None:
        from .groups import qid_to_ptr

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
    arr = np.ascontiguousarray(arr, dtype=PTR)
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


def check_k(k, name="k"):
    """Return ``k`` as a positive int, or ``None`` for the whole list."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer or None, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1 (or None for the whole list), got {k}")
    return int(k)


def check_query_weights(weights, n_queries, name="query_weights"):
    """Return per-query weights as float64 (``None`` stays ``None``): finite and non-negative."""
    if weights is None:
        return None
    arr = np.ascontiguousarray(np.asarray(weights, dtype=FLOAT).ravel())
    if arr.shape[0] != n_queries:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected one per query ({n_queries})")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        q = int(np.flatnonzero(~np.isfinite(arr) | (arr < 0))[0])
        raise ValueError(f"{name} must be finite and non-negative, query {q} has {arr[q]!r}")
    return arr


def check_n_threads(n_threads):
    """Resolve ``n_threads``: ``None`` or ``-1`` = all numba threads; otherwise 1..available."""
    import numba

    avail = numba.config.NUMBA_NUM_THREADS
    if n_threads is None or n_threads == -1:
        return avail
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer, -1 or None, got {n_threads!r}")
    return int(min(n_threads, avail))
