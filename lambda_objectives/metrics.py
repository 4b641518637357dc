"""Ranking metrics per query: NDCG@k, DCG@k, ERR@k, MAP@k (AP@k) and MRR@k (RR@k).

Conventions shared by every metric and by the lambda kernels:

* ranking: scores descending, ties broken by position in the input (stable sort);
* ``k=None`` means the whole list; ``k`` larger than a list means the whole list;
* NDCG@k (Järvelin & Kekäläinen 2002): ``DCG@k / IDCG@k`` with
  ``DCG@k = sum_{r=1..k} G(l_r) / log2(r + 1)``, gain ``G(l) = 2**l - 1`` (``gain="exp"``),
  ``G(l) = l`` (``"linear"``) or a ``label_gain`` table; ``IDCG@k`` is the DCG@k of the labels
  sorted by gain. A query whose ideal DCG is 0 scores ``ideal_zero``: ``"one"`` (1.0, the
  LightGBM/XGBoost convention), ``"zero"`` or ``"drop"`` (NaN, skipped by the means);
* ERR@k (Chapelle et al. 2009): ``sum_{r=1..k} R_r/r * prod_{t<r}(1 - R_t)`` with
  ``R = (2**l - 1) / 2**max_label``; ``max_label`` defaults to the largest label passed;
* AP@k (trec_eval ``map_cut``): ``(1/R) sum_{r<=k, rel_r} precision@r``, relevant meaning
  ``label > threshold``, ``R`` the number of relevant documents of the query (0 when R = 0);
* RR@k: ``1/r`` for the first relevant document at rank ``r <= k``, else 0.
"""

import re

import numpy as np

from . import _metric_kernels as mk
from ._config import FLOAT
from ._ranking import discount_table, document_gains
from ._threads import numba_threads
from ._validation import (
    check_group_ptr,
    check_k,
    check_labels,
    check_query_weights,
    check_scores,
)

__all__ = ["metric_values", "mean_metric", "metric_table", "parse_metric", "METRICS", "CONVENTIONS",
           "convention_label"]

#: Metric names accepted by :func:`metric_values` (``"map"`` is AP per query, ``"mrr"`` RR).
METRICS = ("ndcg", "dcg", "err", "map", "mrr")
_CODES = {"dcg": mk.DCG, "ndcg": mk.NDCG, "err": mk.ERR, "map": mk.AP, "mrr": mk.RR}
_IDEAL_ZERO = {"one": 1.0, "zero": 0.0, "drop": np.nan}
#: Named evaluation conventions: NDCG/DCG gain and the NDCG of a query with no relevant document
#: (ideal DCG 0). docs/math.md has the table with each source. ERR, MAP and MRR are the same in all.
CONVENTIONS = {
    "lightgbm": {"gain": "exp", "ideal_zero": "one"},   # LightGBM's ndcg metric (and lambdarank)
    "xgboost": {"gain": "exp", "ideal_zero": "one"},    # XGBoost's ndcg (``ndcg-`` would give 0)
    "trec": {"gain": "linear", "ideal_zero": "zero"},   # trec_eval ndcg_cut / ir-measures nDCG@k
}
_LABELS = {
    "lightgbm": "LightGBM convention: NDCG gain 2^rel−1, a query with no relevant document scores 1",
    "xgboost": "XGBoost convention: NDCG gain 2^rel−1, a query with no relevant document scores 1",
    "trec": "trec_eval convention: NDCG gain = rel (linear), a query with no relevant document scores 0",
}
_NAME = re.compile(r"^\s*([a-z]+)\s*(?:@\s*(\d+))?\s*$")


def parse_metric(name, k=None):
    """Split ``"ndcg@10"`` into ``("ndcg", 10)``; case-insensitive.

    ``k`` given as well must agree with the ``@k`` suffix. Raises ``ValueError`` for an unknown
    metric or a malformed name.
    """
    m = _NAME.match(str(name).lower())
    if not m or m.group(1) not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose one of {METRICS}, optionally with @k")
    metric, suffix = m.group(1), m.group(2)
    k = check_k(k)
    if suffix is not None:
        ks = check_k(int(suffix))
        if k is not None and k != ks:
            raise ValueError(f"metric {name!r} says k={ks} but k={k} was passed")
        k = ks
    return metric, k


def metric_inputs(labels, metric, gain="exp", label_gain=None, max_label=None, threshold=0.0):
    """Per-document values the kernels rank: gains (DCG/NDCG), ``R`` (ERR), relevance (MAP/MRR).

    ``labels`` must already be validated float64. Shared with the lambda kernels so both use
    identical gains.
    """
    if metric in ("ndcg", "dcg"):
        gains = document_gains(labels, gain, label_gain)
        # the sum over all documents bounds every query's IDCG: finite here means finite metrics
        if not np.isfinite(gains.sum()):
            i = int(np.argmax(~np.isfinite(gains))) if not np.all(np.isfinite(gains)) else int(np.argmax(gains))
            raise ValueError(
                f"gains overflow float64 (label {labels[i]:g} at row {i}: 2**label - 1 is too large for "
                "exponential gain); use gain='linear' or a label_gain table for labels this large")
        return gains
    if metric == "err":
        if max_label is None:
            max_label = float(labels.max()) if labels.size else 0.0
        elif not np.isfinite(max_label) or max_label < 0:
            raise ValueError(f"max_label must be finite and non-negative, got {max_label!r}")
        if labels.size and labels.max() > max_label:
            i = int(np.argmax(labels > max_label))
            raise ValueError(f"label {labels[i]:g} at row {i} exceeds max_label={max_label:g}")
        if max_label >= 1024:  # 2**1024 overflows float64
            raise ValueError(f"ERR's grade scale 2**max_label overflows float64 (max_label={max_label:g}); "
                             "ERR needs grades below 1024")
        return (np.exp2(labels) - 1.0) / np.exp2(max_label)
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return (labels > threshold).astype(FLOAT)


def resolve_convention(convention=None, gain=None, ideal_zero=None):
    """``(gain, ideal_zero)`` from a named ``convention`` and/or explicit options.

    ``convention=None`` with no options is ``"lightgbm"`` (the package's default). An explicit
    ``gain`` / ``ideal_zero`` that contradicts a named convention raises ``ValueError``.
    """
    if convention is None:
        base = CONVENTIONS["lightgbm"]
    elif convention in CONVENTIONS:
        base = CONVENTIONS[convention]
        for name, v in (("gain", gain), ("ideal_zero", ideal_zero)):
            if v is not None and v != base[name]:
                raise ValueError(f"convention={convention!r} means {name}={base[name]!r}, but {name}={v!r} "
                                 "was passed; drop one of them")
    else:
        raise ValueError(f"convention must be one of {tuple(CONVENTIONS)} or None, got {convention!r}")
    return (base["gain"] if gain is None else gain), (base["ideal_zero"] if ideal_zero is None else ideal_zero)


def convention_label(convention=None, gain=None, ideal_zero=None):
    """A short human-readable statement of the metric convention, for table headers."""
    if convention is not None and gain is None and ideal_zero is None:
        resolve_convention(convention)
        return _LABELS[convention]
    g, z = resolve_convention(convention, gain, ideal_zero)
    named = next((n for n, c in CONVENTIONS.items() if c == {"gain": g, "ideal_zero": z}), None)
    if convention is None and named is not None:
        return _LABELS[named]
    scored = {"one": "scores 1", "zero": "scores 0", "drop": "is dropped"}.get(z, z)
    return f"NDCG gain {'2^rel−1' if g == 'exp' else g}, a query with no relevant document {scored}"


def metric_values(scores, labels, group_ptr, metric, k=None, *, convention=None, gain=None, label_gain=None,
                  max_label=None, threshold=0.0, ideal_zero=None, n_threads=None):
    """One metric value per query.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Model scores; finite.
    labels : array-like of shape (n,)
        Relevance grades, finite and non-negative; whole numbers for ``ndcg``/``dcg``/``err``.
    group_ptr : array-like of shape (n_queries + 1,)
        Query boundaries (``group_ptr[0] = 0``, ``group_ptr[-1] = n``, no empty query).
    metric : {"ndcg", "dcg", "err", "map", "mrr"} or ``"name@k"``
        See the module docstring for the exact definitions and conventions.
    k : int or None
        Cutoff; ``None`` = whole list.
    convention : {"lightgbm", "xgboost", "trec"} or None
        A named evaluation convention (see :data:`CONVENTIONS` and docs/math.md): ``"lightgbm"`` /
        ``"xgboost"``: exponential gain, a query with no relevant document scores 1; ``"trec"``:
        trec_eval's linear gain, such a query scores 0. ``None``: ``"lightgbm"`` unless ``gain`` /
        ``ideal_zero`` say otherwise; explicit options that contradict a named convention raise.
    gain, label_gain : gain of NDCG/DCG: ``"exp"`` (``2**l - 1``), ``"linear"`` or a table.
    max_label : float, optional
        ERR's normaliser, ``R = (2**l - 1) / 2**max_label``; default the largest label passed.
    threshold : float
        MAP/MRR relevance: ``label > threshold``.
    ideal_zero : {"one", "zero", "drop"}
        NDCG of a query whose ideal DCG@k is 0 (``"drop"`` gives NaN).
    n_threads : int, optional
        numba threads (default all).

    Returns
    -------
    ndarray of float64, shape (n_queries,)
    """
    metric, k = parse_metric(metric, k)
    gain, ideal_zero = resolve_convention(convention, gain, ideal_zero)
    if ideal_zero not in _IDEAL_ZERO:
        raise ValueError(f"ideal_zero must be one of {tuple(_IDEAL_ZERO)}, got {ideal_zero!r}")
    s = check_scores(scores)
    y = check_labels(labels, s.shape[0], integer=metric in ("ndcg", "dcg", "err"))
    ptr = check_group_ptr(group_ptr, s.shape[0])
    values = metric_inputs(y, metric, gain, label_gain, max_label, threshold)
    sizes = np.diff(ptr)
    disc = discount_table(int(sizes.max()) if sizes.size else 1)
    out = np.empty(ptr.shape[0] - 1, dtype=FLOAT)
    with numba_threads(n_threads):
        mk.metric_driver(s, values, ptr, _CODES[metric], 0 if k is None else k, disc,
                         _IDEAL_ZERO[ideal_zero], out)
    return out


def mean_metric(scores, labels, group_ptr, metric, k=None, *, query_weights=None, **opts):
    """Mean of :func:`metric_values` over queries (weighted by ``query_weights``), NaNs dropped.

    Returns NaN when every query was dropped.
    """
    v = metric_values(scores, labels, group_ptr, metric, k, **opts)
    w = check_query_weights(query_weights, v.shape[0])
    keep = ~np.isnan(v)
    if not keep.any():
        return float("nan")
    if w is None:
        return float(np.mean(v[keep]))
    if w[keep].sum() == 0:
        raise ValueError("query_weights of the kept queries sum to 0")
    return float(np.average(v[keep], weights=w[keep]))


def metric_table(scores, labels, group_ptr, metrics=("ndcg@1", "ndcg@3", "ndcg@10", "err@10", "map", "mrr"),
                 **opts):
    """``{name: mean value}`` for several metrics at once (validation repeated per metric)."""
    return {name: mean_metric(scores, labels, group_ptr, name, **opts) for name in metrics}
