"""The adversarial suite's tables (tests/test_adversarial.py): every public name's signature family,
the bad inputs of each family, and the no-mutation harness. Never imports an engine at module level."""

import copy

import numpy as np

#: every public name of ``lambda_objectives.__all__`` and ``reference.__all__`` -> its family.
#: A name missing here fails ``test_every_public_name_has_a_family``: add it to the family whose
#: inputs it takes (and to that family's call table in test_adversarial.py).
FAMILIES = {
    # (scores, labels, group_ptr) kernels and metrics, run on every bad-input case
    "kernel": ["metric_values", "metric_values_table", "mean_metric", "metric_table", "lambda_gradients", "xendcg_gradients",
               "yetirank_gradients", "catboost_lambdamart_gradients", "catboost_yetirank_expected_gradients",
               "best_linear_combination", "softmax_gradients", "listmle_gradients", "plrank_gradients"],
    # (scores, labels, group_ptr) that train CatBoost: run on the cases that must raise before it
    "kernel_engine": ["probe_catboost", "catboost_pairlogit_row", "catboost_comparison_rows",
                      "catboost_yetirank_row", "yetirank_catboost_row", "catboost_querysoftmax_row"],
    # (labels, group_ptr, margins, weights) that train LightGBM / XGBoost once
    "probe": ["probe_lightgbm", "probe_xgboost"],
    "check": ["check_group_ptr", "check_k", "check_labels", "check_n_threads", "check_query_weights",
              "check_sample_weight", "check_scores", "check_training_data"],
    "groups": ["frame_group_ptr", "ptr_to_qid", "ptr_to_sizes", "qid_to_ptr", "resolve_group_ptr",
               "sizes_to_ptr", "split_qid_column"],
    "data": ["RankingData", "LetorData", "Fold", "make_mslr_like", "make_ranking", "train_test_split_queries",
             "load_letor", "load_letor_folds", "save_letor", "catboost_validation_rows"],
    # adapters' constructors (the engine runs are in the "engine" tests)
    "adapter": ["LightGBMObjective", "XGBoostObjective", "catboost_loss_function"],
    "eval_metric": ["lightgbm_metric", "xgboost_metric", "catboost_metric", "xgboost_early_stopping"],
    "estimator": ["LGBMLambdaRanker", "XGBLambdaRanker", "LinearLambdaRank", "MLPLambdaRank", "MARTRanker"],
    "utility": ["numba_threads", "openmp_sharing", "parse_metric", "convention_label", "directions_needed",
                "local_optimality_test", "heatmap_counts", "decision_paths", "render_html", "render_png",
                "compare_gradients", "BinMapper", "TreeGrower"],
    # Dask frames and arrays (run on the local scheduler: the checks happen before any training)
    "dask": ["check_query_partitions", "dask_lightgbm_ranker", "dask_metric", "partition_group_sizes",
             "repartition_by_query", "xgboost_dask_train"],
    # constants, modules, exception classes and result records: nothing a user passes in
    # (labels, scores, group_ptr) click simulation (issue #45): KERNEL_CASES with its argument order, and its options
    "clicks": ["simulate_clicks"],
    "record": ["clicks", "CONVENTIONS", "METRICS", "LAMBDA_METRICS", "OBJECTIVES", "YETIRANK_DEFAULTS", "PLRANK_DEFAULTS", "datasets",
               "HessianWarning", "CostWarning", "LambdaPairs", "HeatmapTree", "CRITERIA", "FORMAT_VERSION", "GROWTH",
               "HISTORY_METRICS", "NODE_DTYPE", "SOFTMAX_DEFAULTS", "LISTMLE_TIES"],
}

FAMILY_OF = {name: fam for fam, names in FAMILIES.items() for name in names}

# Two queries of three documents: the base every bad case perturbs.
S = np.array([0.5, 0.1, -0.2, 0.3, 0.0, 1.0])
Y = np.array([2.0, 0.0, 1.0, 0.0, 1.0, 0.0])
P = np.array([0, 3, 6])


def _with(a, i, v):
    a = np.array(a, dtype=float)
    a[i] = v
    return a


#: (case, scores, labels, group_ptr, outcome): outcome is a regex the ValueError/TypeError message must
#: match (it names the argument), or "ok" (a finite answer checked by the test), or "ok|raise" (either
#: a clear ValueError or the right answer).
KERNEL_CASES = [
    ("nan_score", _with(S, 0, np.nan), Y, P, r"scores|s1"),
    ("inf_score", _with(S, 2, np.inf), Y, P, r"scores|s1"),
    ("neginf_score", _with(S, 4, -np.inf), Y, P, r"scores|s1"),
    ("str_scores", S.astype(str), Y, P, r"scores|s1"),
    ("object_scores", np.array([0.5, None, 1, 2, 3, 4], dtype=object), Y, P, r"scores|s1"),
    ("2d_scores", np.c_[S, S], Y, P, r"scores|s1"),
    ("nan_label", S, _with(Y, 0, np.nan), P, r"label"),
    ("inf_label", S, _with(Y, 1, np.inf), P, r"label"),
    ("negative_label", S, _with(Y, 0, -1), P, r"label"),
    ("labels_too_short", S, Y[:5], P, r"label|length"),
    ("groups_sum_short", S, Y, np.array([0, 3, 5]), r"group_ptr"),
    ("groups_sum_long", S, Y, np.array([0, 3, 7]), r"group_ptr"),
    ("groups_decrease", S, Y, np.array([0, 4, 3, 6]), r"group_ptr"),
    ("groups_start_1", S, Y, np.array([1, 3, 6]), r"group_ptr"),
    ("groups_fraction", S, Y, np.array([0.0, 2.5, 6.0]), r"group_ptr"),
    ("groups_empty_array", S, Y, np.array([], dtype=np.int64), r"group_ptr"),
    ("empty_query", S, Y, np.array([0, 3, 3, 6]), r"group_ptr.*empty"),
    ("zero_rows", np.zeros(0), np.zeros(0), np.array([0]), "ok|raise"),
    ("huge_scores", S * 1e300, Y, P, "ok"),
    ("float_group_ptr", S, Y, P.astype(float), "ok"),
    ("huge_grade", S, _with(Y, 0, 1e6), P, "ok|raise"),
]

#: cases that must raise before any engine trains (used for the "kernel_engine" family)
RAISING = [c for c in KERNEL_CASES if c[4] not in ("ok", "ok|raise")]


def arrays_in(obj, depth=0):
    """The mutable array-likes inside the arguments of a call (a list/tuple/dict level deep)."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if depth < 2 and isinstance(obj, (list, tuple)):
        return [a for o in obj for a in arrays_in(o, depth + 1)] + ([obj] if isinstance(obj, list) else [])
    if depth < 2 and isinstance(obj, dict):
        return [a for o in obj.values() for a in arrays_in(o, depth + 1)] + [obj]
    if hasattr(obj, "to_numpy") and hasattr(obj, "copy"):  # pandas objects
        return [obj]
    return []


def call_unmutated(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; asserts that no array, list, dict or frame passed in was changed, also
    when the call raises (which is re-raised)."""
    inputs = arrays_in(list(args) + list(kwargs.values()))
    before = [copy.deepcopy(a) for a in inputs]
    try:
        return fn(*args, **kwargs)
    finally:
        for a, b in zip(inputs, before):
            assert _same(a, b), f"{getattr(fn, '__name__', fn)} mutated an input: {b!r} became {a!r}"


def _same(a, b):
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if hasattr(a, "equals"):
        return a.equals(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(x is y or _same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys()
    try:
        return bool(a == b) or (a != a and b != b)  # scalars (NaN equals NaN here)
    except (TypeError, ValueError):
        return True
