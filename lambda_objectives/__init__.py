"""lambda_objectives: exact, fast LambdaMART objectives and ranking metrics as numba kernels.

The public API is flat: everything a user needs is importable from ``lambda_objectives``.
"""

from ._openmp import openmp_sharing
from ._threads import numba_threads
from .checks import (
    check_k,
    check_labels,
    check_n_threads,
    check_query_weights,
    check_sample_weight,
    check_scores,
    check_training_data,
)
from .groups import (
    check_group_ptr,
    frame_group_ptr,
    ptr_to_qid,
    ptr_to_sizes,
    qid_to_ptr,
    resolve_group_ptr,
    sizes_to_ptr,
    split_qid_column,
)

__version__ = "0.1.0"

__all__ = [
    "check_group_ptr",
    "check_k",
    "check_labels",
    "check_n_threads",
    "check_query_weights",
    "check_sample_weight",
    "check_scores",
    "check_training_data",
    "numba_threads",
    "openmp_sharing",
    "frame_group_ptr",
    "ptr_to_qid",
    "ptr_to_sizes",
    "qid_to_ptr",
    "resolve_group_ptr",
    "sizes_to_ptr",
    "split_qid_column",
]

# Each module below adds its names in its own block (kept in this order).
# --- io / datasets ---
from . import datasets  # noqa: E402
from .datasets import (  # noqa: E402
    RankingData,
    make_mslr_like,
    make_ranking,
    train_test_split_queries,
)
from .io import Fold, LetorData, load_letor, load_letor_folds, save_letor  # noqa: E402

__all__ += ["datasets", "RankingData", "make_mslr_like", "make_ranking", "train_test_split_queries",
            "Fold", "LetorData", "load_letor", "load_letor_folds", "save_letor"]
# --- metrics ---
from .metrics import (  # noqa: E402
    CONVENTIONS,
    METRICS,
    convention_label,
    mean_metric,
    metric_table,
    metric_values,
    metric_values_table,
    parse_metric,
)

__all__ += ["CONVENTIONS", "METRICS", "convention_label", "mean_metric", "metric_table", "metric_values",
            "metric_values_table", "parse_metric"]
# --- lambdas ---
from .lambdas import LAMBDA_METRICS, OBJECTIVES, LambdaPairs, lambda_gradients  # noqa: E402
from .xendcg import xendcg_gradients  # noqa: E402
from .yetirank import YETIRANK_DEFAULTS, yetirank_catboost_row, yetirank_gradients  # noqa: E402

__all__ += ["LAMBDA_METRICS", "OBJECTIVES", "LambdaPairs", "lambda_gradients", "xendcg_gradients",
            "YETIRANK_DEFAULTS", "yetirank_catboost_row", "yetirank_gradients"]
from .listwise import LISTMLE_TIES, SOFTMAX_DEFAULTS, listmle_gradients, softmax_gradients  # noqa: E402

__all__ += ["LISTMLE_TIES", "SOFTMAX_DEFAULTS", "listmle_gradients", "softmax_gradients"]

from .plrank import PLRANK_DEFAULTS, plrank_gradients  # noqa: E402

__all__ += ["PLRANK_DEFAULTS", "plrank_gradients"]
# --- adapters ---
from .adapters import (  # noqa: E402
    CostWarning,
    HessianWarning,
    LGBMLambdaRanker,
    LightGBMObjective,
    XGBLambdaRanker,
    XGBoostObjective,
    catboost_metric,
    lightgbm_metric,
    xgboost_early_stopping,
    xgboost_metric,
)
from .probe import compare_gradients, probe_catboost, probe_lightgbm, probe_xgboost  # noqa: E402

__all__ += [
    "CostWarning",
    "HessianWarning",
    "LGBMLambdaRanker",
    "LightGBMObjective",
    "XGBLambdaRanker",
    "XGBoostObjective",
    "catboost_metric",
    "compare_gradients",
    "lightgbm_metric",
    "probe_catboost",
    "probe_lightgbm",
    "probe_xgboost",
    "xgboost_early_stopping",
    "xgboost_metric",
]

# --- catboost_gradients (CatBoost's LambdaMart formulas; its probe is probe_catboost, above) ---
from .catboost_gradients import (  # noqa: E402
    catboost_comparison_rows,
    catboost_lambdamart_gradients,
    catboost_loss_function,
    catboost_pairlogit_row,
    catboost_querysoftmax_row,
    catboost_validation_rows,
    catboost_yetirank_expected_gradients,
    catboost_yetirank_row,
)

__all__ += ["catboost_comparison_rows", "catboost_lambdamart_gradients", "catboost_loss_function",
            "catboost_pairlogit_row", "catboost_querysoftmax_row", "catboost_validation_rows",
            "catboost_yetirank_expected_gradients", "catboost_yetirank_row"]

# --- beyond ---
from .combine import best_linear_combination  # noqa: E402
from .heatmap import (  # noqa: E402
    HeatmapTree,
    decision_paths,
    heatmap_counts,
    render_html,
    render_png,
)
from .linear import (  # noqa: E402
    LinearLambdaRank,
    MLPLambdaRank,
    directions_needed,
    local_optimality_test,
)

__all__ += ["HeatmapTree", "decision_paths", "heatmap_counts", "render_html", "render_png",
            "best_linear_combination", "LinearLambdaRank", "MLPLambdaRank", "directions_needed",
            "local_optimality_test"]

# --- dask (no dask import here: dask_support imports it on use) ---
from .dask_support import (  # noqa: E402
    check_query_partitions,
    dask_lightgbm_ranker,
    dask_metric,
    partition_group_sizes,
    repartition_by_query,
    xgboost_dask_train,
)

__all__ += ["check_query_partitions", "dask_lightgbm_ranker", "dask_metric", "partition_group_sizes",
            "repartition_by_query", "xgboost_dask_train"]

# --- clicks (issue #45): the click simulator; the sub-namespace lambda_objectives.clicks holds the rest ---
from . import clicks  # noqa: E402
from .clicks import simulate_clicks  # noqa: E402

__all__ += ["clicks", "simulate_clicks"]
