"""lambda_objectives: exact, fast LambdaMART objectives and ranking metrics as numba kernels.

The top level holds what the quick start and the everyday user need: one gradient function per objective
family, the metrics, the LightGBM / XGBoost adapters with their eval metrics and scikit-learn rankers, the
LETOR loader, synthetic data and the query-boundary helpers. Everything else is one namespace away:

* :mod:`lambda_objectives.objectives`, :mod:`lambda_objectives.metrics`: every objective and metric name;
* :mod:`lambda_objectives.adapters`: the engine adapters (warnings, ``catboost_metric``, ``openmp_sharing``);
* :mod:`lambda_objectives.data`: loaders, synthetic data, query boundaries;
* :mod:`lambda_objectives.checks`: the input checks;
* :mod:`lambda_objectives.validation`: engine gradient probes and ``compare_gradients``;
* :mod:`lambda_objectives.clicks`: the click simulator and its presets (``simulate_clicks`` is here too);
* :mod:`lambda_objectives.catboost`, :mod:`lambda_objectives.dask`, :mod:`lambda_objectives.diagnostics`
  (Heatmap Tree, linear combination, linear rankers).

A name that used to live here still works for one release, with a ``FutureWarning`` naming its new home
(``lambda_objectives._core.deprecation``); so do the old module paths (``lambda_objectives.lambdas``, ...).
"""

from ._core import deprecation as _deprecation
from ._core.threads import numba_threads
from .adapters import (LGBMLambdaRanker, LightGBMObjective, XGBLambdaRanker, XGBoostObjective, lightgbm_metric,
                       xgboost_early_stopping, xgboost_metric)
from .data import (RankingData, load_letor, load_letor_folds, make_mslr_like, make_ranking, ptr_to_qid, qid_to_ptr,
                   save_letor, sizes_to_ptr, train_test_split_queries)
from .metrics import mean_metric, metric_values, metric_values_table, parse_metric
from .objectives import (lambda_gradients, listmle_gradients, plrank_gradients, softmax_gradients, xendcg_gradients,
                         yetirank_gradients)

__version__ = "0.1.0"

__all__ = [
    # objectives: one gradient function per family
    "lambda_gradients", "listmle_gradients", "plrank_gradients", "softmax_gradients", "xendcg_gradients",
    "yetirank_gradients",
    # metrics
    "mean_metric", "metric_values", "metric_values_table", "parse_metric",
    # engines: objectives, eval metrics, scikit-learn rankers
    "LightGBMObjective", "XGBoostObjective", "lightgbm_metric", "xgboost_metric", "xgboost_early_stopping",
    "LGBMLambdaRanker", "XGBLambdaRanker",
    # data: the loader, synthetic data, query boundaries
    "RankingData", "load_letor", "load_letor_folds", "save_letor", "make_mslr_like", "make_ranking",
    "train_test_split_queries", "ptr_to_qid", "qid_to_ptr", "sizes_to_ptr",
    # threads
    "numba_threads",
    # learning from clicks: the simulator (its presets and records in lambda_objectives.clicks)
    "simulate_clicks",
]

# the public sub-namespaces, importable as attributes too
from . import adapters, catboost, checks, clicks, dask, data, diagnostics, metrics, objectives, validation  # noqa: E402,F401
from .clicks import simulate_clicks  # noqa: E402

_deprecation.install()


def __getattr__(name):  # an old top-level name: one release with a FutureWarning naming its new home
    return _deprecation.moved(__name__, name)
