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

import numpy as np

from . import _registry as reg
from ._config import FLOAT
from ._kernels.metric import metrics_driver
from ._kernels.ranking import discount_table
from ._threads import numba_threads
from .checks import check_labels, check_options, check_query_weights, check_scores, given_options
from .groups import check_group_ptr

__all__ = ["metric_values", "metric_values_table", "mean_metric", "metric_table", "parse_metric", "METRICS", "CONVENTIONS",
           "convention_label"]

#: Metric names accepted by :func:`metric_values` (``"map"`` is AP per query, ``"mrr"`` RR).
METRICS = reg.names("metric")
#: NDCG of a query whose ideal DCG@k is 0, by ``ideal_zero`` name.
IDEAL_ZERO = {"one": 1.0, "zero": 0.0, "drop": np.nan}
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


def parse_metric(name, k=None):
    """Split ``"ndcg@10"`` into ``("ndcg", 10)``; case-insensitive.

    ``k`` given as well must agree with the ``@k`` suffix. Raises ``ValueError`` for an unknown
    metric or a malformed name. Every public function that takes a metric name reads it this way.
    """
    return reg.parse_metric(name, k, kind="metric")


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
    return _values([parse_metric(metric, k)], scores, labels, group_ptr, convention, gain, label_gain, max_label,
                   threshold, ideal_zero, n_threads)[0]


def metric_values_table(scores, labels, group_ptr, metrics, k=None, *, convention=None, gain=None, label_gain=None,
                        max_label=None, threshold=0.0, ideal_zero=None, n_threads=None):
    """One value per query for each of several metrics: ``{name: ndarray (n_queries,)}``.

    The same values as :func:`metric_values` called once per name (the same code path), to the
    bit, for a fraction of the time: the inputs are checked once and each query is ranked once
    (scores descending, ties in input order) for all the metrics. The options are :func:`metric_values`', shared by every
    metric; labels must be whole numbers if any of the metrics needs them (ERR, exponential gain).

    Parameters
    ----------
    metrics : sequence of str
        Names as :func:`metric_values` takes them, each with its own cutoff (``"ndcg@10"``,
        ``"err"``...); at least one, no name twice.
    k : int or None
        The cutoff of the names without one, as :func:`metric_values`' ``k`` (a name's own ``@k``
        must agree with it).

    Returns
    -------
    dict of str to ndarray of float64
        Keyed by the names as passed, in their order.
    """
    if isinstance(metrics, str) or not hasattr(metrics, "__iter__"):
        raise ValueError(f"metrics must be a sequence of metric names, got {metrics!r}")
    names = list(metrics)
    if not names:
        raise ValueError("metrics is empty: name at least one metric")
    if len(set(names)) != len(names):
        raise ValueError(f"metrics names a metric twice: {names}")
    parsed = [parse_metric(m, k) for m in names]
    out = _values(parsed, scores, labels, group_ptr, convention, gain, label_gain, max_label, threshold, ideal_zero,
                  n_threads)
    return {name: out[i] for i, name in enumerate(names)}


#: ``metric_values``' defaults of the options a metric may not read (``convention`` speaks for every metric)
_VALUE_DEFAULTS = {"gain": None, "label_gain": None, "max_label": None, "threshold": 0.0, "ideal_zero": None}


def check_value_options(metrics, options):
    """Raise ``ValueError`` for an entry of ``options`` (``metric_values``' keyword options by name) given a
    value other than its default that none of ``metrics`` (names, ``"ndcg@10"`` or canonical) reads:
    ``threshold`` for NDCG, ``gain`` for MAP..., as the objectives refuse theirs (``checks.check_options``)."""
    names = list(dict.fromkeys(parse_metric(m)[0] for m in metrics))
    values = {key: v for key, v in options.items() if key in _VALUE_DEFAULTS}
    check_options(names, given_options(values, _VALUE_DEFAULTS), value=True)


def options_read_by(metrics, options):
    """The entries of ``options`` that at least one of ``metrics`` reads (keys ``metric_values`` does not
    know pass through, for it to refuse): what a caller holding one option set for several metrics hands
    each subset (``reference.MARTRanker``'s history)."""
    read = reg.metric_options([parse_metric(m)[0] for m in metrics])
    return {key: v for key, v in options.items() if key not in _VALUE_DEFAULTS or key in read}


def _values(parsed, scores, labels, group_ptr, convention, gain, label_gain, max_label, threshold, ideal_zero,
            n_threads):
    """``out[m, q]``: metric ``parsed[m]`` (a ``(name, k)`` of :func:`parse_metric`) of query ``q``,
    the inputs checked once and each query ranked once: the one path of :func:`metric_values` and
    :func:`metric_values_table`."""
    check_value_options([m for m, _ in parsed], {"gain": gain, "label_gain": label_gain, "max_label": max_label,
                                                 "threshold": threshold, "ideal_zero": ideal_zero})
    gain, ideal_zero = resolve_convention(convention, gain, ideal_zero)
    if ideal_zero not in IDEAL_ZERO:
        raise ValueError(f"ideal_zero must be one of {tuple(IDEAL_ZERO)}, got {ideal_zero!r}")
    s = check_scores(scores)
    integer = any(reg.needs_integer_labels(m, gain, label_gain) for m, _ in parsed)
    y = check_labels(labels, s.shape[0], integer=integer)
    ptr = check_group_ptr(group_ptr, s.shape[0])
    values = np.empty((len(parsed), s.shape[0]), dtype=FLOAT)
    for i, (m, _) in enumerate(parsed):
        values[i] = reg.kernel_inputs(m, y, gain=gain, label_gain=label_gain, max_label=max_label,
                                      threshold=threshold)
    codes = np.array([reg.REGISTRY[m].code for m, _ in parsed], dtype=np.int64)
    ks = np.array([0 if cut is None else cut for _, cut in parsed], dtype=np.int64)
    sizes = np.diff(ptr)
    disc = discount_table(int(sizes.max()) if sizes.size else 1)
    out = np.empty((len(parsed), ptr.shape[0] - 1), dtype=FLOAT)
    with numba_threads(n_threads):
        metrics_driver(s, values, ptr, codes, ks, disc, IDEAL_ZERO[ideal_zero], out)
    return out


def mean_metric(scores, labels, group_ptr, metric, k=None, *, query_weights=None, **opts):
    """Mean of :func:`metric_values` over queries (weighted by ``query_weights``), NaNs dropped.

    Returns NaN when every query was dropped.
    """
    return _mean(metric_values(scores, labels, group_ptr, metric, k, **opts), query_weights)


def _mean(v, query_weights):
    """The mean of per-query values ``v`` (weighted by ``query_weights``), NaNs dropped; NaN if all are."""
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
                 *, query_weights=None, **opts):
    """``{name: mean value}`` for several metrics at once: :func:`mean_metric` of each, from one
    :func:`metric_values_table` call (inputs checked once, each query ranked once)."""
    table = metric_values_table(scores, labels, group_ptr, metrics, **opts)
    return {name: _mean(v, query_weights) for name, v in table.items()}
