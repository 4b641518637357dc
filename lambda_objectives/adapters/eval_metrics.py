"""Ranking eval metrics (NDCG@k, ERR@k, MAP@k, MRR@k) as LightGBM and XGBoost eval callables and
CatBoost ``eval_metric`` objects.

Values come from :func:`lambda_objectives.metric_values`; nothing here computes a metric.
"""

import numbers
import sys

import numpy as np

from .. import _registry as reg
from .._core.config import FLOAT, PTR
from .._core.openmp import share_with_xgboost
from ..data.groups import check_group_ptr, sizes_to_ptr
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


def _mean_metric(name, k, scores, labels, ptr, max_label, threshold=0.0, convention=None, query_weights=None):
    """Mean over queries, or with query weights the weighted mean ``Σ_q w_q m_q / Σ_q w_q``.

    Every query, one without relevant documents included, enters numerator and denominator with its
    weight: the value is unchanged when every weight is multiplied by the same constant and stays in
    the range of the per-query values (``[0, 1]``). LightGBM's and XGBoost's own weighted NDCG
    differ (see :func:`lightgbm_metric`).
    """
    scores = np.asarray(scores, dtype=FLOAT)
    labels = np.asarray(labels, dtype=FLOAT)
    kw = {"max_label": max_label} if name == "err" else {}
    if name in ("map", "mrr"):
        kw["threshold"] = threshold
    values = metric_values(scores, labels, ptr, name, k, convention=convention, **kw)
    if query_weights is None:
        return float(np.mean(values))
    return float(np.sum(values * query_weights) / np.sum(query_weights))


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
    Options are checked here, so a bad one fails before training, not at the first evaluation.
    """

    #: every metric of this package is a gain: early stopping must maximise it
    maximize = True

    def __init__(self, spec, max_label=None, threshold=0.0, convention=None):
        resolve_convention(convention)  # fail now, not in the middle of training
        self.convention = convention
        self.metric, self.k = _parse(spec)
        self.name = self.metric if self.k is None else f"{self.metric}@{self.k}"
        self.max_label = _check_max_label(max_label, self.metric, spec)
        self.threshold = _check_threshold(threshold, self.metric, spec)

    def _value(self, scores, labels, ptr, query_weights=None):
        ml = self.max_label if self.max_label is not None else float(np.max(labels, initial=0.0))
        return _mean_metric(self.metric, self.k, scores, labels, ptr, ml, self.threshold, self.convention,
                            query_weights)

    def _no_groups(self, engine, how):
        return ValueError(f"{self.name}: the {engine} evaluation data has no query groups, so a ranking metric "
                          f"cannot be computed per query; {how}")

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


def _number(value, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return float(value)


def _check_max_label(max_label, metric, spec):
    """ERR's grade scale ``2**max_label``: finite, >= 0 and < 1024 (``2**1024`` overflows float64)."""
    if max_label is None:
        return None
    if metric != "err":
        raise ValueError(f"max_label is ERR's grade scale and has no effect on {spec!r}; drop it")
    v = _number(max_label, "max_label")
    if not (np.isfinite(v) and 0 <= v < 1024):
        raise ValueError(f"max_label must be finite, >= 0 and < 1024 (ERR's scale 2**max_label), got {max_label!r}")
    return v


def _check_threshold(threshold, metric, spec):
    """MAP/MRR relevance ``label > threshold``: finite; other metrics take no threshold."""
    v = _number(threshold, "threshold")
    if not np.isfinite(v):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    if v != 0.0 and metric not in ("map", "mrr"):
        raise ValueError(f"threshold is MAP's and MRR's relevance cut (label > threshold) and has no effect on "
                         f"{spec!r}; drop it")
    return v


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
        _stop_on_the_best(self)
        ptr = np.asarray(dmat.get_uint_info("group_ptr"), dtype=PTR)
        if ptr.size == 0:
            raise self._no_groups("XGBoost", "pass qid= or group= to the xgb.DMatrix in evals")
        qw = _query_weights(dmat.get_weight(), ptr, "query", f"{self.name} (XGBoost)")
        return self.name, self._value(predt, dmat.get_label(), ptr, qw)


#: how far up the stack the training's ``CallbackContainer`` may be: ``xgb.train`` calls the metric
#: from ``Booster.eval_set`` (1 frame between), ``xgb.cv`` through its folds as well (4 between)
_CALLER_FRAMES = 8


def _stop_on_the_best(metric):
    """Make XGBoost's early stopping maximise ``metric``, or refuse a callback told to minimise it.

    ``EarlyStopping(maximize=None)``, what ``early_stopping_rounds=`` builds unless ``maximize=`` is
    passed, settles its direction at its first update from the metric's name alone
    (``xgboost/callback.py``, ``EarlyStopping._update_rounds``): only names starting with ``auc``,
    ``aucpr``, ``pre``, ``map`` or ``ndcg`` are maximised, so ``err@10`` and ``mrr@10`` were minimised
    and the worst iteration kept. The metric is evaluated before that update by the training's
    ``CallbackContainer``, found here on the call stack; each ``EarlyStopping`` in it watching this
    metric (by ``metric_name``, or as the last metric logged, which a ``custom_metric`` returning
    one value is) gets the direction its name cannot tell: ``maximize=None`` becomes ``True`` (on the
    callback itself, where XGBoost would store its guess), and ``maximize=False`` raises ``ValueError``. Outside a training (a direct call, ``Booster.eval_set``)
    nothing is looked at. ``tests/test_adapters.py`` pins this against the installed XGBoost.
    """
    callback = getattr(sys.modules.get("xgboost"), "callback", None)
    container = getattr(callback, "CallbackContainer", None)
    if container is None:
        return
    frame = sys._getframe(2)
    for _ in range(_CALLER_FRAMES):
        if frame is None:
            return
        owner = frame.f_locals.get("self")
        if isinstance(owner, container):
            break
        frame = frame.f_back
    else:
        return
    for cb in owner.callbacks:
        if not isinstance(cb, callback.EarlyStopping) or cb.maximize is True:
            continue
        watched = cb.metric_name or (metric.name if owner.metric is metric else None)
        if watched != metric.name:
            continue
        if cb.maximize is None:
            cb.maximize = True
        else:
            raise ValueError(
                f"{metric.name} is a gain (higher is better) but the XGBoost EarlyStopping watching it has "
                f"maximize={cb.maximize!r} and would keep the worst iteration; pass maximize=True to xgb.train "
                f"(or to EarlyStopping), or use callbacks=[lo.xgboost_early_stopping(rounds, {metric.name!r})]")


def lightgbm_metric(spec, max_label=None, threshold=0.0, convention=None):
    """A LightGBM eval callable for ``"ndcg@10"``, ``"err@5"``, ``"map@10"``, ``"mrr@10"``.

    Usable as ``lgb.train(..., feval=...)`` (``(preds, eval_data)``) and as
    ``LGBMRanker.fit(..., eval_metric=...)`` (4-argument form with group sizes). Returns
    ``("lo_" + spec, mean over queries, True)``: higher is better, which ``lgb.early_stopping``
    reads from the third value; the prefix keeps it apart from LightGBM's own metric of the same
    name in one history. ERR's ``max_label`` defaults to the data set's largest label; MAP/MRR count
    ``label > threshold`` as relevant (``max_label`` and a non-zero ``threshold`` are refused for
    metrics they do not apply to). ``convention``: as in :func:`lambda_objectives.metric_values`
    (``"lightgbm"`` by default, ``"trec"``...). Options are checked here (``ValueError``).

    Weights: a query counts with the mean of its documents' weights (LightGBM's query weight) and
    the value is the weighted mean ``Σ_q w_q m_q / Σ_q w_q``: unchanged when every weight is
    multiplied by one constant, never outside ``[0, 1]``. LightGBM's own weighted ``ndcg@k`` adds a
    query without relevant documents to the numerator with weight 1 (its NDCG of 1, unweighted)
    while its weight stays in the denominator, so it moves with the scale of the weights and can
    exceed 1 (all weights 0.01: 2.23 where ours is 0.581; see the user guide). Without weights, or
    without such queries, the two agree; LightGBM's weighted ``map@k`` is a weighted mean as ours.
    """
    return LightGBMEval(spec, max_label, threshold, convention)


def xgboost_metric(spec, max_label=None, threshold=0.0, convention=None):
    """An XGBoost ``custom_metric`` callable ``(predt, dmatrix) -> (name, value)``; higher is better.

    Options as in :func:`lightgbm_metric`. Weights (per query in XGBoost ranking) give the weighted
    mean ``Σ_q w_q m_q / Σ_q w_q`` over queries (scale-invariant, within ``[0, 1]``). XGBoost's own
    ``ndcg@k`` counts a query without relevant documents as 1 unweighted in the numerator, as
    LightGBM's does, and raises ``Invalid output score`` once that pushes the value above 1; its
    ``map@k`` is a weighted mean as ours.

    Early stopping: XGBoost's ``EarlyStopping`` guesses the direction from a metric's name when
    ``maximize`` is not given and maximises only names starting with ``auc``, ``pre``, ``map`` or
    ``ndcg``: it would *minimise* ``err@k`` and ``mrr@k`` and keep the worst iteration. So when
    ``xgb.train`` / ``xgb.cv`` evaluate this metric, the ``EarlyStopping`` watching it (from
    ``early_stopping_rounds=`` or ``callbacks=``) is set to maximise if its ``maximize`` is ``None``,
    and one with ``maximize=False`` raises ``ValueError``. ``maximize=True`` or
    :func:`xgboost_early_stopping` say it explicitly. ``Booster.predict`` still uses every tree:
    pass ``iteration_range=(0, booster.best_iteration + 1)`` (or ``save_best=True``).
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
    (our metrics' rule). With group weights, the value is the weighted mean ``Σ_q w_q m_q / Σ_q w_q``,
    as in CatBoost's own metrics.
    """
    return CatBoostEval(spec, datasets, max_label, threshold, convention, ties)
