"""Input checks shared by every public function (and by ``reference`` and ``comparisons``).

Each returns the validated array in the package's dtype or raises ``ValueError`` naming the problem
and the first offending row; query boundaries are checked in :mod:`lambda_objectives.groups`.
"""

import numbers

import numpy as np

from ._config import FLOAT


def check_scores(scores, name="scores"):
    """Return ``scores`` as a contiguous 1-D float64 array (a copy only when needed).

    Raises ``ValueError`` for a non-1-D input, or NaN/inf values (naming the first bad row).
    """
    return _finite_1d(scores, name, None, "contains")


def _finite_1d(values, name, n_rows, verb):
    """``values`` as contiguous 1-D finite float64 (a copy only when needed), of ``n_rows`` if given."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = np.squeeze(arr)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(values)}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"length mismatch: {name} has {arr.shape[0]} rows, scores have {n_rows}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} {verb} non-finite values (NaN or inf), first at row {i}: {arr[i]!r}")
    return arr


def check_labels(labels, n_rows, integer=False, name="labels"):
    """Return ``labels`` as a contiguous 1-D float64 array of length ``n_rows``.

    Labels must be finite and non-negative, and either 0 or at least float64's smallest normal
    number (``np.finfo(float).tiny``, about 2.2e-308): with ``gain="linear"`` a query whose best
    label is subnormal has ``1/IDCG = inf``, so its lambdas would be inf/NaN. With ``integer=True``
    they must also be whole numbers (graded relevance for gain tables). Errors name the first
    offending row.
    """
    arr = _finite_1d(labels, name, n_rows, "contain")
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{name} must be non-negative, row {i} is {arr[i]!r}")
    sub = (arr > 0) & (arr < np.finfo(FLOAT).tiny)
    if sub.any():
        i = int(np.flatnonzero(sub)[0])
        raise ValueError(
            f"{name} must be 0 or at least {np.finfo(FLOAT).tiny!r} (float64's smallest normal number), "
            f"row {i} is {arr[i]!r}: a subnormal label makes 1/IDCG overflow; rescale the labels"
        )
    if integer:
        frac = arr != np.floor(arr)
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise ValueError(
                f"{name} must be integer relevance grades for this metric and gain, row {i} is {arr[i]!r}; "
                "real-valued labels need gain='linear' (ERR and label_gain tables need grades)"
            )
    return arr


#: a cut-off at or beyond this is the whole list of any query (and fits the kernels' int64)
K_WHOLE_LIST = 2 ** 62


def check_k(k, name="k"):
    """Return ``k`` as a positive int, or ``None`` for the whole list.

    A ``k`` at least the length of a query's list means the whole list (the truncation
    convention of every metric here); one beyond int64 (``10**20``) is clamped to
    :data:`K_WHOLE_LIST`, which means the same for any list, instead of overflowing in a kernel.
    """
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer or None, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1 (or None for the whole list), got {k}")
    return min(int(k), K_WHOLE_LIST)


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


def check_query_inputs(scores, labels, group_ptr, query_weights=None):
    """``(scores, labels, group_ptr, query_weights)`` checked together, as every listwise or sampled
    objective takes them: float64 scores and labels, int64 query boundaries, per-query weights (ones
    when ``None``). Each check raises ``ValueError`` naming the problem."""
    from .groups import check_group_ptr  # groups does not import checks: no cycle

    s = check_scores(scores)
    n = s.shape[0]
    y = check_labels(labels, n)
    ptr = check_group_ptr(group_ptr, n)
    nq = ptr.shape[0] - 1
    w = check_query_weights(query_weights, nq)
    return s, y, ptr, (np.ones(nq, dtype=FLOAT) if w is None else w)


def check_sample_weight(weight, n, group_ptr=None, per="row", name="sample_weight"):
    """Return engine sample weights as contiguous 1-D float64, checked.

    ``per="row"``: one weight per document (``n`` rows; LightGBM); ``per="query"``: one per
    query (``n`` queries; XGBoost ranking). Weights must be finite and non-negative and not all
    zero: LightGBM trains a NaN weight as 0, and an inf or all-zero weight gives an all-zero
    model, silently (a negative one, a HessianWarning at most). ``group_ptr`` (optional, with ``per="row"``) lets an error name the query
    of the offending row. Raises ``ValueError`` naming ``name``, the row or query, and the value.
    """
    if per not in ("row", "query"):
        raise ValueError(f"per must be 'row' or 'query', got {per!r}")
    arr = np.asarray(weight)
    if arr.ndim != 1:
        arr = np.squeeze(arr) if arr.ndim > 1 else arr
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D (one weight per {per}), got shape {np.shape(weight)}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.shape[0] != n:
        what = "documents (rows)" if per == "row" else "queries (XGBoost ranking weights are per query)"
        raise ValueError(f"{name} has {arr.shape[0]} values, expected one per {per}: {n} {what}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"{per} {i}"
        if per == "row" and group_ptr is not None:
            where += f" (query {int(np.searchsorted(np.asarray(group_ptr), i, side='right')) - 1})"
        raise ValueError(f"{name} must be finite and non-negative, {where} has {float(arr[i])!r} "
                         f"({int(bad.sum())} bad values in all)")
    if n and not arr.any():
        raise ValueError(f"{name} is all zero: nothing would be learned (the engine would return an all-zero model)")
    return arr
