"""How engines are validated: each engine's own gradients read off by a probe (one leaf per document) and
compared with ours.

:func:`probe_lightgbm`, :func:`probe_xgboost`, :func:`probe_catboost` (:mod:`.probe`) return an engine's
per-document derivatives for its native objective; :func:`compare_gradients` measures two pairs of them.
The rows that use them per engine are ``python -m comparisons validate`` and :mod:`lambda_objectives.catboost`.
"""

from .probe import compare_gradients, probe_catboost, probe_lightgbm, probe_xgboost

__all__ = ["compare_gradients", "probe_catboost", "probe_lightgbm", "probe_xgboost"]
