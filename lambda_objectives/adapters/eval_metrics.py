"""Ranking eval metrics (NDCG@k, ERR@k, MAP@k, MRR@k) as LightGBM and XGBoost eval callables and
CatBoost ``eval_metric`` objects.

Values come from :func:`lambda_objectives.metric_values`; nothing here computes a metric.
"""

import numpy as np

from .. import _registry as reg
from .._config import FLOAT, PTR
from .._openmp import share_with_xgboost
from ..groups import check_group_ptr, sizes_to_ptr
from ..metrics import metric_values, parse_metric, resolve_convention
from ._base import MISSING

__all__ = ["catboost_metric", "lightgbm_metric", "xgboost_metric"]


#: the metrics an engine can evaluate with: every registry metric but DCG (not comparable across queries)
_EVAL_NAMES = tuple(m for m in reg.names("metric") if m != "dcg")


def _parse(spec):
    name, k = parse_metric(spec)
    if name not in _EVAL_NAMES:
        raise ValueError(f"eval metric must be one of {_EVAL_NAMES} (optionally '@k'), got {spec!r}")
    return name, k


def _mean_metric(name, k, scores, labels, ptr, max_label, threshold=0.0, convention=None, query_weights=None,
                 empty_unweighted=False):
    """Mean over queries, or ``Σ w_q m_q / Σ w_q`` with query weights (as the engines' own ranking metrics)."""
    scores = np.asarray(scores, dtype=FLOAT)
    labels = np.asarray(labels, dtype=FLOAT)
    kw = {"max_label": max_label} if name == "err" else {}
    if name in ("map", "mrr"):
        kw["threshold"] = threshold
    values = metric_values(scores, labels, ptr, name, k, convention=convention, **kw)
    if query_weights is None:
        return float(np.mean(values))
    numerator = values * query_weights
    if empty_unweighted and name == "ndcg" and ptr.shape[0] > 1:
        # LightGBM's and XGBoost's own weighted NDCG add a query without relevant documents with weight
        # 1 in the numerator (its weight stays in the denominator); reproduced so the values agree
        # (checked against both engines in tests/test_adapters.py; CatBoost weights it like the others)
        empty = np.maximum.reduceat(labels, ptr[:-1]) <= 0
        numerator[empty] = values[empty]
    return float(np.sum(numerator) / np.sum(query_weights))


def _query_weights(weights, ptr, per, engine):
    """Query weights from the engine's data weights: LightGBM's are per document and a query counts
    with their mean (its ``Metadata`` query weights); XGBoost's ranking weights are per query."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=FLOAT)
    if w.size == 0:
        return None
    nq = ptr.shape[0] - 1
    if per == "document":
        if w.shape[0] != ptr[-1]:
            raise ValueError(f"{engine}: {w.shape[0]} weights for {ptr[-1]} documents")
        w = np.add.reduceat(w, ptr[:-1]) / np.diff(ptr) if nq else w[:0]
    elif w.shape[0] != nq:
        raise ValueError(f"{engine}: {w.shape[0]} weights for {nq} queries (ranking weights are per query)")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and np.sum(w) > 0):
        raise ValueError(f"{engine}: evaluation weights must be finite, non-negative and not all zero")
    return w


class EvalMetric:
    """Shared state of the eval callables: name and k. Higher is better (``maximize = True``).

    Query boundaries are read from the evaluation data on every call (a cheap copy next to the
    metric's sort), never cached, so ``set_group`` / ``set_label`` between rounds are seen.
    """

    #: every metric of this package is a gain: early stopping must maximise it
    maximize = True

    def __init__(self, spec, max_label=None, threshold=0.0, convention=None):
        resolve_convention(convention)  # fail now, not in the middle of training
        self.convention = convention
        self.metric, self.k = _parse(spec)
        self.name = self.metric if self.k is None else f"{self.metric}@{self.k}"
        self.max_label = max_label
        self.threshold = float(threshold)

    #: the engine's own weighted NDCG adds a query without relevant documents unweighted
    _empty_unweighted = True

    def _value(self, scores, labels, ptr, query_weights=None):
        ml = self.max_label if self.max_label is not None else float(np.max(labels, initial=0.0))
        return _mean_metric(self.metric, self.k, scores, labels, ptr, ml, self.threshold, self.convention,
                            query_weights, self._empty_unweighted)

    def _no_groups(self, engine, how):
        return ValueError(f"{self.name}: the {engine} evaluation data has no query groups, so a ranking metric "
                          f"cannot be computed per query; {how}")

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class LightGBMEval(EvalMetric):
    """Named ``lo_<metric>@<k>``: LightGBM records metrics by name, and ``LGBMRanker`` adds its own
    ``ndcg@1..5`` by default, so a plain ``ndcg@5`` of ours would share one history list with LightGBM's."""

    def __init__(self, spec, max_label=None, threshold=0.0, convention=None):
        super().__init__(spec, max_label, threshold, convention)
        self.name = "lo_" + self.name

    def __call__(self, preds, eval_data, weight=MISSING, group=MISSING):
        if group is MISSING:
            bounds = eval_data.get_field("group")
            if bounds is None:
                raise self._no_groups("LightGBM", "pass group=sizes to the lgb.Dataset used in valid_sets")
            ptr = np.asarray(bounds, dtype=PTR)
            labels = eval_data.get_label()
            weight = eval_data.get_weight()
        else:
            if group is None:
                raise self._no_groups("LGBMRanker", "pass eval_group= to fit")
            labels, preds = preds, eval_data
            ptr = sizes_to_ptr(group, len(labels))
        qw = _query_weights(weight, ptr, "document", f"{self.name} (LightGBM)")
        return self.name, self._value(preds, labels, ptr, qw), True


class XGBoostEval(EvalMetric):
    def __call__(self, predt, dmat):
        share_with_xgboost()  # numba's first parallel call may be this metric's
        ptr = np.asarray(dmat.get_uint_info("group_ptr"), dtype=PTR)
        if ptr.size == 0:
            raise self._no_groups("XGBoost", "pass qid= or group= to the xgb.DMatrix in evals")
        qw = _query_weights(dmat.get_weight(), ptr, "query", f"{self.name} (XGBoost)")
        return self.name, self._value(predt, dmat.get_label(), ptr, qw)


def lightgbm_metric(spec, max_label=None, threshold=0.0, convention=None):
    """A LightGBM eval callable for ``"ndcg@10"``, ``"err@5"``, ``"map@10"``, ``"mrr@10"``.

    Usable as ``lgb.train(..., feval=...)`` (``(preds, eval_data)``) and as
    ``LGBMRanker.fit(..., eval_metric=...)`` (4-argument form with group sizes). Returns
    ``("lo_" + spec, mean over queries, True)`` (higher is better; the prefix keeps it apart from
    LightGBM's own metric of the same name in one history). With data weights, a query counts with
    the mean of its documents' weights, as in LightGBM's own ranking metrics (NDCG also reproduces
    their treatment of a query without relevant documents: its value enters unweighted). ERR's ``max_label`` defaults to the
    data set's largest label; MAP/MRR count ``label > threshold`` as relevant. ``convention``:
    as in :func:`lambda_objectives.metric_values` (``"lightgbm"`` by default, ``"trec"``...).
    """
    return LightGBMEval(spec, max_label, threshold, convention)


def xgboost_metric(spec, max_label=None, threshold=0.0, convention=None):
    """An XGBoost ``custom_metric`` callable ``(predt, dmatrix) -> (name, value)``; higher is better.

    With data weights (per query in XGBoost ranking), the mean over queries is weighted by them, as
    XGBoost's own ranking metrics are. XGBoost's early stopping guesses the direction from the metric's name and maximises only
    names starting with ``ndcg`` or ``map``: it would *minimise* ``err@k`` and ``mrr@k``. Pass
    ``maximize=True`` to ``xgb.train``, or use :func:`xgboost_early_stopping`.
    """
    return XGBoostEval(spec, max_label, threshold, convention)


#: how documents with equal scores are ordered before a metric is computed
_TIES = ("stable", "pessimistic")


class CatBoostEval(EvalMetric):
    """A CatBoost ``eval_metric`` object bound to the query structure of the data sets it will see.

    CatBoost calls ``evaluate(approxes, target, weight)`` once per data set and iteration with no
    group ids (catboost/catboost#1777: "not possible now and not planned"), so the groups are taken
    from the bound data sets, and a call is matched to the one whose labels equal ``target``
    (float32, CatBoost's label precision); a call matching none, or several with different groups,
    raises instead of guessing.
    """

    def __init__(self, spec, datasets, max_label=None, threshold=0.0, convention=None, ties="stable"):
        super().__init__(spec, max_label, threshold, convention)
        if ties not in _TIES:
            raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
        self.ties = ties
        if isinstance(datasets, tuple) and len(datasets) == 2 and not _is_pool(datasets[0]):
            datasets = [datasets]  # one (labels, group_ptr) pair
        self._sets = [_labels_and_ptr(d) for d in datasets]
        if not self._sets:
            raise ValueError(f"{self.name}: bind at least one data set (a catboost.Pool with group_id, or "
                             "(labels, group_ptr))")

    _empty_unweighted = False

    def is_max_optimal(self):
        return True

    def get_final_error(self, error, weight):
        return error / weight if weight > 0 else 0.0

    def evaluate(self, approxes, target, weight):
        if len(approxes) != 1:
            raise ValueError(f"{self.name}: a ranking metric takes one approx dimension, CatBoost passed {len(approxes)}")
        scores = np.asarray(approxes[0], dtype=FLOAT)
        labels = np.asarray(target, dtype=FLOAT)
        ptr = self._match(labels)
        # CatBoost passes each document its group's weight; its ranking metrics weight queries by it
        qw = None
        if weight is not None and np.any(np.asarray(weight) != 1):
            qw = _query_weights(weight, ptr, "document", f"{self.name} (CatBoost)")
        if self.ties == "pessimistic":
            # CatBoost's own NDCG/DCG rank equal scores lower label first (doc_comparator.h); a stable
            # sort by score after ordering each query by label ascending does the same
            order = np.lexsort((labels, np.repeat(np.arange(ptr.size - 1), np.diff(ptr))))
            scores, labels = scores[order], labels[order]
        return self._value(scores, labels, ptr, qw), 1.0

    def _match(self, labels):
        key = labels.astype(np.float32)
        found = [ptr for y, ptr in self._sets if y.shape == key.shape and np.array_equal(y, key)]
        if not found:
            raise ValueError(f"{self.name}: CatBoost evaluated {labels.size} documents whose labels match none of "
                             f"the {len(self._sets)} bound data sets; bind every set CatBoost evaluates (the "
                             "training pool too: CatBoost evaluates eval metrics on it as well)")
        if any(p.shape != found[0].shape or np.any(p != found[0]) for p in found[1:]):
            raise ValueError(f"{self.name}: {len(found)} bound data sets have these labels but different query "
                             "groups; the one being evaluated cannot be told apart")
        return found[0]


def _is_pool(obj):
    return type(obj).__name__ == "Pool" and hasattr(obj, "get_group_id_hash")


def _labels_and_ptr(data):
    if _is_pool(data):
        labels, groups = data.get_label(), data.get_group_id_hash()
        if groups is None:
            raise ValueError("the catboost.Pool has no group_id: a ranking metric needs query groups")
        groups = np.asarray(groups)
        ptr = np.r_[0, np.flatnonzero(groups[1:] != groups[:-1]) + 1, groups.size]
        if np.unique(groups).size != ptr.size - 1:
            raise ValueError("the catboost.Pool's groups are not contiguous (CatBoost needs each group's "
                             "documents together)")
    else:
        try:
            labels, ptr = data
        except (TypeError, ValueError):
            raise ValueError(f"a bound data set is a catboost.Pool or (labels, group_ptr), got {type(data).__name__}")
    labels = np.asarray(labels, dtype=FLOAT)
    return labels.astype(np.float32), np.asarray(check_group_ptr(ptr, labels.shape[0]), dtype=PTR)


def catboost_metric(spec, datasets, max_label=None, threshold=0.0, convention=None, ties="stable"):
    """A CatBoost ``eval_metric`` for ``"ndcg@10"``, ``"err@5"``, ``"map@10"``, ``"mrr@10"``.

    ``datasets``: every data set CatBoost will evaluate, each a ``catboost.Pool`` with ``group_id`` or
    ``(labels, group_ptr)``: the training pool and each ``eval_set`` (CatBoost evaluates an
    ``eval_metric`` on the training data too). CatBoost's Python metric API passes no group ids
    (catboost/catboost#1777), so each call is matched to the bound set with the same labels; a call
    that matches none raises ``ValueError``. Use as ``CatBoost({..., "eval_metric": m})`` or
    ``fit(..., eval_set=..., early_stopping_rounds=...)``: higher is better. The value is the mean
    over queries of :func:`lambda_objectives.metric_values` (``convention`` as there: by default
    exponential gain, a query with no relevant document scores 1). ``ties="pessimistic"`` ranks equal
    scores lower label first, as CatBoost's own ``NDCG``/``DCG`` do, so ``ties="pessimistic"`` with
    the default convention equals CatBoost's ``NDCG:top=k;type=Exp``; ``"stable"`` keeps input order
    (our metrics' rule). With group weights, queries are weighted by them, as in CatBoost's own metrics.
    """
    return CatBoostEval(spec, datasets, max_label, threshold, convention, ties)
