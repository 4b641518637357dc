"""Ranking eval metrics (NDCG@k, ERR@k, MAP@k, MRR@k) as LightGBM and XGBoost eval callables.

Values come from :func:`lambda_objectives.metric_values`; nothing here computes a metric.
"""

import numpy as np

from .. import _registry as reg
from .._config import FLOAT, PTR
from ..groups import sizes_to_ptr
from ..metrics import metric_values, parse_metric, resolve_convention
from ._base import MISSING

__all__ = ["lightgbm_metric", "xgboost_metric"]


#: the metrics an engine can evaluate with: every registry metric but DCG (not comparable across queries)
_EVAL_NAMES = tuple(m for m in reg.names("metric") if m != "dcg")


def _parse(spec):
    name, k = parse_metric(spec)
    if name not in _EVAL_NAMES:
        raise ValueError(f"eval metric must be one of {_EVAL_NAMES} (optionally '@k'), got {spec!r}")
    return name, k


def _mean_metric(name, k, scores, labels, ptr, max_label, threshold=0.0, convention=None):
    scores = np.asarray(scores, dtype=FLOAT)
    labels = np.asarray(labels, dtype=FLOAT)
    kw = {"max_label": max_label} if name == "err" else {}
    if name in ("map", "mrr"):
        kw["threshold"] = threshold
    return float(np.mean(metric_values(scores, labels, ptr, name, k, convention=convention, **kw)))


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

    def _value(self, scores, labels, ptr):
        ml = self.max_label if self.max_label is not None else float(np.max(labels, initial=0.0))
        return _mean_metric(self.metric, self.k, scores, labels, ptr, ml, self.threshold, self.convention)

    def _no_groups(self, engine, how):
        return ValueError(f"{self.name}: the {engine} evaluation data has no query groups, so a ranking metric "
                          f"cannot be computed per query; {how}")

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class LightGBMEval(EvalMetric):
    def __call__(self, preds, eval_data, weight=MISSING, group=MISSING):
        if group is MISSING:
            bounds = eval_data.get_field("group")
            if bounds is None:
                raise self._no_groups("LightGBM", "pass group=sizes to the lgb.Dataset used in valid_sets")
            ptr = np.asarray(bounds, dtype=PTR)
            labels = eval_data.get_label()
        else:
            if group is None:
                raise self._no_groups("LGBMRanker", "pass eval_group= to fit")
            labels, preds = preds, eval_data
            ptr = sizes_to_ptr(group, len(labels))
        return self.name, self._value(preds, labels, ptr), True


class XGBoostEval(EvalMetric):
    def __call__(self, predt, dmat):
        ptr = np.asarray(dmat.get_uint_info("group_ptr"), dtype=PTR)
        if ptr.size == 0:
            raise self._no_groups("XGBoost", "pass qid= or group= to the xgb.DMatrix in evals")
        return self.name, self._value(predt, dmat.get_label(), ptr)


def lightgbm_metric(spec, max_label=None, threshold=0.0, convention=None):
    """A LightGBM eval callable for ``"ndcg@10"``, ``"err@5"``, ``"map@10"``, ``"mrr@10"``.

    Usable as ``lgb.train(..., feval=...)`` (``(preds, eval_data)``) and as
    ``LGBMRanker.fit(..., eval_metric=...)`` (4-argument form with group sizes). Returns
    ``(name, mean over queries, True)`` (higher is better). ERR's ``max_label`` defaults to the
    data set's largest label; MAP/MRR count ``label > threshold`` as relevant. ``convention``:
    as in :func:`lambda_objectives.metric_values` (``"lightgbm"`` by default, ``"trec"``...).
    """
    return LightGBMEval(spec, max_label, threshold, convention)


def xgboost_metric(spec, max_label=None, threshold=0.0, convention=None):
    """An XGBoost ``custom_metric`` callable ``(predt, dmatrix) -> (name, value)``; higher is better.

    XGBoost's early stopping guesses the direction from the metric's name and maximises only
    names starting with ``ndcg`` or ``map``: it would *minimise* ``err@k`` and ``mrr@k``. Pass
    ``maximize=True`` to ``xgb.train``, or use :func:`xgboost_early_stopping`.
    """
    return XGBoostEval(spec, max_label, threshold, convention)
