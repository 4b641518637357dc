"""Engine adapters: LambdaMART objectives and ranking eval metrics as LightGBM / XGBoost callables
(and CatBoost eval metric objects).

* :class:`LightGBMObjective` (``lgb.train`` and ``lgb.LGBMRanker``), :mod:`.lightgbm`;
* :class:`XGBoostObjective`, :class:`XGBLambdaRanker`, :func:`xgboost_early_stopping`, :mod:`.xgboost`;
* :func:`lightgbm_metric` / :func:`xgboost_metric` / :func:`catboost_metric`, :mod:`.eval_metrics`;
* gradient back ends by ``preset`` (exact lambdas, LightGBM, XGBoost), :mod:`.presets`;
* the shared data-set cache and Hessian check, :mod:`._base`; what the scikit-learn rankers share, :mod:`._sklearn`;
* :func:`openmp_sharing`: whether numba shares XGBoost's OpenMP runtime (``lambda_objectives._core.openmp``).

Gradients are written into buffers allocated once per data set and returned as float32 views.
"""

from .._core.openmp import openmp_sharing
from ._base import CostWarning, HessianWarning
from .eval_metrics import catboost_metric, lightgbm_metric, xgboost_metric
from .lightgbm import LGBMLambdaRanker, LightGBMObjective
from .xgboost import XGBLambdaRanker, XGBoostObjective, xgboost_early_stopping

__all__ = [
    "CostWarning",
    "HessianWarning",
    "LGBMLambdaRanker",
    "LightGBMObjective",
    "XGBoostObjective",
    "XGBLambdaRanker",
    "catboost_metric",
    "lightgbm_metric",
    "openmp_sharing",
    "xgboost_early_stopping",
    "xgboost_metric",
]
