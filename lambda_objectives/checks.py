"""Input checks shared by every public function (and by ``reference`` and ``comparisons``).

Each returns the validated array in the package's dtype or raises ``ValueError`` naming the problem
and the first offending row; query boundaries are checked in :mod:`lambda_objectives.data.groups` (``check_group_ptr``, re-exported here).
"""

import numbers

import numpy as np

from ._core import deprecation
from ._core.config import FLOAT, kernel_array
from ._core.threads import check_n_threads
from .data.groups import check_group_ptr

__all__ = ["K_WHOLE_LIST", "SEED_MAX", "check_finite", "check_group_ptr", "check_integer", "check_k",
           "check_labels", "check_n_threads", "check_outputs", "check_query_inputs", "check_query_weights",
           "check_sample_weight", "check_scores", "check_training_data", "check_weights"]


def check_scores(scores, name="scores"):
    """Return ``scores`` as a contiguous 1-D float64 array (a copy only when needed).

    Raises ``ValueError`` for a non-1-D input, or NaN/inf values (naming the first bad row).
    """
    return _finite_1d(scores, name, None, "contains")


def _finite_1d(values, name, n_rows, verb, unit="row", fix=""):
    """``values`` as contiguous 1-D finite float64 (a copy only when needed), of ``n_rows`` if given."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = np.squeeze(arr)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(values)}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"length mismatch: {name} has {arr.shape[0]} {unit}s, scores have {n_rows}")
    arr = kernel_array(arr)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} {verb} non-finite values (NaN or inf), first at {unit} {i}: {arr[i]!r}{fix}")
    return arr


def check_labels(labels, n_rows, integer=False, name="labels", fix=""):
    """Return ``labels`` as a contiguous 1-D float64 array of length ``n_rows``.

    Labels must be finite and non-negative, and either 0 or at least float64's smallest normal
    number (``np.finfo(float).tiny``, about 2.2e-308): with ``gain="linear"`` a query whose best
    label is subnormal has ``1/IDCG = inf``, so its lambdas would be inf/NaN. With ``integer=True``
    they must also be whole numbers (graded relevance for gain tables). Errors name the first
    offending row; ``fix`` (e.g. ``"; repair or drop those rows"``) is appended to the non-finite and
    negative ones.
    """
    arr = _finite_1d(labels, name, n_rows, "contain", fix=fix)
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{name} must be non-negative, row {i} is {arr[i]!r}{fix}")
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


#: seeds and iteration counters of the seeded kernels are uint64
SEED_MAX = 2 ** 64


def check_integer(value, name, low, high=None):
    """``value`` as an int with ``low <= value`` (and ``< high`` if given; the seeded kernels' seeds and
    iteration counters use ``high=SEED_MAX``); ``ValueError`` naming ``name`` otherwise (a bool is no integer)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value >= high):
        bound = f">= {low}" + ("" if high is None else f" and < {'2**64' if high == SEED_MAX else high}")
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
    return int(value)


#: a cut-off at or beyond this is the whole list of any query (and fits the kernels' int64)
K_WHOLE_LIST = 2 ** 62


def check_k(k, name="k"):
    """Return ``k`` as a positive int, or ``None`` for the whole list.

    A ``k`` at least the length of a query's list means the whole list (the truncation
    convention of every metric here); one beyond int64 (``10**20``) is clamped to
    ``K_WHOLE_LIST``, which means the same for any list, instead of overflowing in a kernel.
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
    arr = kernel_array(np.asarray(weights, dtype=FLOAT).ravel())
    if arr.shape[0] != n_queries:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected one per query ({n_queries})")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        q = int(np.flatnonzero(~np.isfinite(arr) | (arr < 0))[0])
        raise ValueError(f"{name} must be finite and non-negative, query {q} has {arr[q]!r}")
    return arr


def check_query_inputs(scores, labels, group_ptr, query_weights=None):
    """``(scores, labels, group_ptr, query_weights)`` checked together, as every listwise or sampled
    objective takes them: float64 scores and labels, int64 query boundaries, per-query weights (ones
    when ``None``). Each check raises ``ValueError`` naming the problem."""
    s = check_scores(scores)
    n = s.shape[0]
    y = check_labels(labels, n)
    ptr = check_group_ptr(group_ptr, n)
    nq = ptr.shape[0] - 1
    w = check_query_weights(query_weights, nq)
    return s, y, ptr, (np.ones(nq, dtype=FLOAT) if w is None else w)


def check_sample_weight(weight, n, group_ptr=None, per="row", name="sample_weight", *, limit=np.inf, fix=""):
    """Return engine sample weights as contiguous 1-D float64, checked: the one weight check of the package.

    ``per="row"``: one weight per document (``n`` rows; LightGBM); ``per="query"``: one per
    query (``n`` queries; XGBoost ranking). Weights must be finite, non-negative, below ``limit``
    (where an engine stores inf: LightGBM's float32 1e38) and not all zero: LightGBM trains a NaN
    weight as 0, and an inf or all-zero weight gives an all-zero model, silently (a negative one, a
    HessianWarning at most). ``group_ptr`` (optional, with ``per="row"``) lets an error name the
    query of the offending row. Raises ``ValueError`` naming ``name``, the row or query, and the
    value, ending with ``fix``.
    """
    if per not in ("row", "query"):
        raise ValueError(f"per must be 'row' or 'query', got {per!r}")
    arr = np.asarray(weight)
    if arr.ndim != 1:
        arr = np.squeeze(arr) if arr.ndim > 1 else arr
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D (one weight per {per}), got shape {np.shape(weight)}{fix}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}{fix}")
    if arr.shape[0] != n:
        what = "documents (rows)" if per == "row" else "queries (XGBoost ranking weights are per query)"
        raise ValueError(f"{name} has {arr.shape[0]} values, expected one per {per}: {n} {what}{fix}")
    arr = kernel_array(arr)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr >= limit)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"{per} {i}"
        if per == "row" and group_ptr is not None:
            where += f" (query {int(np.searchsorted(np.asarray(group_ptr), i, side='right')) - 1})"
        if np.isfinite(arr[i]) and arr[i] >= limit:
            raise ValueError(f"{name} of {where} is {arr[i]:g}, where the engine stores inf (and anything beyond "
                             f"{limit:g}){fix}")
        raise ValueError(f"{name} must be finite and non-negative, {where} has {float(arr[i])!r} "
                         f"({int(bad.sum())} bad values in all){fix}")
    if n and not arr.any():
        raise ValueError(f"{name} is all zero: nothing would be learned (the engine would return an all-zero "
                         f"model){fix}")
    return arr


def check_finite(values, name, limit=np.inf, fix="", minus_inf=False):
    """Raise ``ValueError`` unless every value is finite with ``|v| < limit`` (naming the first bad row).

    The check an engine adapter runs on the scores of every round: two reductions, no copy. ``limit``
    is where an engine stores infinities (LightGBM keeps an inf ``init_score`` as 1e300).
    ``minus_inf=True`` lets ``-inf`` through (LightGBM's lambdarank skips a document scored ``-inf``).
    """
    a = np.asarray(values)
    if a.size and not ((a.min() >= -np.inf if minus_inf else a.min() > -limit) and a.max() < limit):  # NaN fails
        bad = ~((np.abs(a) < limit) | (minus_inf & (a == -np.inf)))
        i = int(np.flatnonzero(bad)[0])
        what = "not finite" if not np.isfinite(a[i]) else f"at or beyond {limit:g} in magnitude"
        raise ValueError(f"{name} is {what} at row {i} ({a[i]!r}){fix}")
    return a


def check_weights(weights, n, name="weight", per="row", limit=np.inf, fix=""):
    """Engine weights as :func:`check_sample_weight` checks them, with ``None`` or an empty array (an engine
    data set without weights) returned as ``None``."""
    if weights is None or np.size(weights) == 0:
        return None
    return check_sample_weight(weights, n, per=per, name=name, limit=limit, fix=fix)


def check_training_data(labels, group_ptr, weights=None, *, weights_per="row", limit=np.inf, engine=""):
    """``(labels, group_ptr, weights)`` of an engine's data set, checked once per data set.

    The one check every adapter entry point runs on what the user gave the engine (``lgb.Dataset``,
    ``xgb.DMatrix``, or the arguments of ``gradients``): ``label`` finite and non-negative
    (:func:`check_labels`), query boundaries (:func:`~lambda_objectives.data.groups.check_group_ptr`), and
    ``weight`` per ``weights_per`` (``"row"``: LightGBM; ``"query"``: XGBoost ranking) as in
    :func:`~lambda_objectives.checks.check_weights`. ``limit``: the magnitude at which the engine stores an infinity (LightGBM
    turns an inf label or weight into its float32 1e38 and a NaN into 0, which no later check can
    see). Returns float64 labels, int64 boundaries and float64 weights (or ``None``).
    """
    src = f" passed to {engine}" if engine else ""
    y = check_labels(labels, np.shape(labels)[0], name="label",
                     fix=f"; the label{src} must be finite relevance grades >= 0: repair or drop those rows")
    big = np.abs(y) >= limit
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise ValueError(f"label at row {i} is {y[i]:g}: {engine} stores an inf label (and anything beyond "
                         f"{limit:g}) as {limit:g}, so the label{src} was not finite or out of range; repair it")
    ptr = check_group_ptr(group_ptr, y.shape[0])
    n = y.shape[0] if weights_per == "row" else ptr.shape[0] - 1
    w = check_weights(weights, n, per=weights_per, limit=limit,
                      fix=f"; the weight{src} must be finite and >= 0 (one per {weights_per}), not all zero")
    return y, ptr, w


def given_options(values, defaults):
    """Names of the options in ``values`` given a value other than their default in ``defaults`` (what a
    caller asked for): ``None`` defaults by identity, scalar ones by equality (an array is never a default)."""
    def is_default(v, d):
        return v is None if d is None else isinstance(v, (bool, int, float, str)) and v == d

    return {name for name, v in values.items() if not is_default(v, defaults[name])}


def check_outputs(out, n, **inputs):
    """``out`` (``None``: two new arrays) as the ``(grad, hess)`` a kernel fills: two writeable contiguous
    float64 arrays of length ``n`` that overlap neither each other nor any of ``inputs`` (the kernel reads
    its inputs while it writes its outputs). The one check of caller-provided output arrays."""
    if out is None:
        return np.empty(n, dtype=FLOAT), np.empty(n, dtype=FLOAT)
    try:
        g, h = out
    except (TypeError, ValueError):
        raise ValueError("out must be a pair (grad_out, hess_out) of float64 arrays") from None
    for name, a in (("grad_out", g), ("hess_out", h)):
        if not isinstance(a, np.ndarray) or a.dtype != FLOAT or a.ndim != 1 or a.shape[0] != n \
                or not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError(f"out must be two contiguous float64 arrays of length {n}: {name} is not "
                             "(or is read-only)")
    if np.shares_memory(g, h):
        raise ValueError("out grad and hess arrays must not overlap")
    # the kernel reads its inputs while it writes the outputs: an overlap gives wrong gradients
    for name, a in (("grad_out", g), ("hess_out", h)):
        for what, arr in inputs.items():
            if arr is None or isinstance(arr, (str, bytes)):
                continue
            try:  # any buffer (a memoryview, an array.array, a DataFrame column...) may alias the output
                view = np.asarray(arr)
            except Exception:  # noqa: BLE001 - not array-like: cannot alias, validated elsewhere
                continue
            if np.shares_memory(a, view):
                raise ValueError(f"out {name} overlaps the {what} input; pass separate output arrays")
    return g, h


#: the ways to debias clicks by display position (``bias=``), each in :mod:`lambda_objectives.adapters`
#: and :func:`~lambda_objectives.lambda_gradients`
BIASES = ("ips", "pairwise", "additive")
#: the option each way reads (given without its ``bias=``, an option is an error, not a no-op)
BIAS_OPTIONS = {"propensities": "ips", "bias_norm": "pairwise", "position_bias_regularization": "additive"}


def check_bias(bias, propensities=None, bias_norm=None, position_bias_regularization=None):
    """``(bias, options)`` with ``options`` the checked values of the one ``bias=`` way chosen:
    ``propensities`` (float64, each in (0, 1]; required by ``"ips"``), ``bias_norm`` (finite, >= 0; default
    1.0, XGBoost's code default of ``lambdarank_bias_norm``) or ``position_bias_regularization`` (finite,
    >= 0; default 0.0, LightGBM's ``lambdarank_position_bias_regularization``). ``ValueError`` for an unknown
    ``bias`` or an option given to another way (or without ``bias=``), naming the argument."""
    given = {"propensities": propensities, "bias_norm": bias_norm,
             "position_bias_regularization": position_bias_regularization}
    if bias is not None and (not isinstance(bias, str) or bias not in BIASES):
        raise ValueError(f"bias must be None or one of {BIASES}, got {bias!r}")
    for name, value in given.items():
        if value is not None and BIAS_OPTIONS[name] != bias:
            raise ValueError(f"{name}= is an option of bias={BIAS_OPTIONS[name]!r}, but bias={bias!r}: pass "
                             f"bias={BIAS_OPTIONS[name]!r} or drop {name}")
    if bias == "ips":
        if propensities is None:
            raise ValueError("bias='ips' needs propensities= (the examination probability of each display "
                             "position, 0-based, each in (0, 1])")
        return bias, {"propensities": check_propensities(propensities)}
    if bias == "pairwise":
        return bias, {"bias_norm": _non_negative(1.0 if bias_norm is None else bias_norm, "bias_norm")}
    if bias == "additive":
        reg = 0.0 if position_bias_regularization is None else position_bias_regularization
        return bias, {"position_bias_regularization": _non_negative(reg, "position_bias_regularization")}
    return None, {}


def _non_negative(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_propensities(propensities):
    """The examination probability of each display position (index = 0-based position) as float64; each
    must lie in (0, 1] (``ValueError`` naming the first position that does not)."""
    arr = np.asarray(propensities)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"propensities must be a non-empty 1-D array (one per display position), got shape "
                         f"{arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"propensities must be numeric, got dtype {arr.dtype}")
    arr = np.array(arr, dtype=FLOAT)  # a copy: the caller's array is never held
    bad = ~((arr > 0) & (arr <= 1))  # NaN fails both
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        raise ValueError(f"propensities must lie in (0, 1] (examination probabilities), position {p} is "
                         f"{arr[p].item()!r}")
    return arr


#: the largest display position :func:`check_positions` accepts: the position-bias factors are tables with
#: one entry per position 0..max (2**24 entries of float64 = 128 MiB each)
MAX_POSITION = 2 ** 24 - 1


def check_positions(positions, group_ptr, name="positions", n_positions=None):
    """Per-row display positions (0-based rank at which each row was shown) as int64.

    ``positions`` must hold one integer in [0, ``MAX_POSITION`` = 2**24 - 1] per row of ``group_ptr``'s
    queries (integral floats such as
    LightGBM's stored values are accepted), a display position at most once per query, and, with
    ``n_positions`` (the length of the ``propensities``), below it. ``ValueError`` naming the row (and
    query) otherwise.
    """
    arr = np.asarray(positions)
    n = int(group_ptr[-1])
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one display position per row), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} rows but the query groups cover {n}: one display position "
                         "per row")
    if arr.dtype.kind not in "fiub" or arr.dtype.kind == "b":
        raise ValueError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} must be integers (0-based display ranks), row {i} is {arr[i].item()!r}")
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{name} must be >= 0 (0-based display ranks), row {i} is {arr[i].item()!r}")
    if arr.size and arr.max() > MAX_POSITION:
        i = int(np.argmax(arr))
        raise ValueError(f"{name} at row {i} is {arr[i].item()!r}: display positions above {MAX_POSITION:,} are "
                         "refused (bias='pairwise'/'additive' keep one factor per position 0..max, so such a position "
                         "would allocate gigabytes); give the rank at which the row was shown")
    pos = np.array(arr, dtype=np.int64)
    if n_positions is not None and pos.size and pos.max() >= n_positions:
        i = int(np.flatnonzero(pos >= n_positions)[0])
        raise ValueError(f"{name} at row {i} is {pos[i]}, but propensities has {n_positions} entries (positions "
                         f"0..{n_positions - 1}): give the examination probability of every position shown")
    # a display position is shown once per query
    q = np.repeat(np.arange(len(group_ptr) - 1, dtype=np.int64), np.diff(group_ptr))
    key = np.lexsort((pos, q))
    dup = np.flatnonzero((q[key][1:] == q[key][:-1]) & (pos[key][1:] == pos[key][:-1]))
    if dup.size:
        a, b = sorted((int(key[dup[0]]), int(key[dup[0] + 1])))
        raise ValueError(f"{name}: rows {a} and {b} of query {int(q[a])} are both at position {pos[a]}; a display "
                         "position is shown once per query")
    return pos


def positions_in_query(group_ptr):
    """The default display positions: each row's index inside its query (XGBoost's convention, which
    takes the input order of a query as the order it was shown in)."""
    sizes = np.diff(group_ptr)
    return np.arange(int(group_ptr[-1]), dtype=np.int64) - np.repeat(np.asarray(group_ptr[:-1], np.int64), sizes)


def __getattr__(name):  # names that left this module: one release with a FutureWarning
    return deprecation.moved(__name__, name)
