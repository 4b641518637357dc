"""Old names and module paths that keep working for one release, with a ``FutureWarning`` naming the new home.

One table and one mechanism: :data:`MODULES` maps an old module path to its new one (a meta-path finder hands
back the new module itself, so ``import lambda_objectives.lambdas`` gives
``lambda_objectives.objectives.lambdas``), :data:`NAMES` maps a name that left a public module to the namespace
that holds it now (the module's ``__getattr__`` calls :func:`moved`). Targets are imported by name
(``importlib``), so this module imports nothing from the library and sits in the lowest layer. Drop both tables
(and the ``__getattr__`` hooks) in the release after 0.1.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

_P = "lambda_objectives"

#: old module path -> new module path (issue #46's regrouping by concern)
MODULES = {f"{_P}.{old}": f"{_P}.{new}" for old, new in {
    "lambdas": "objectives.lambdas", "xendcg": "objectives.xendcg", "yetirank": "objectives.yetirank",
    "listwise": "objectives.listwise", "plrank": "objectives.plrank",
    "io": "data.io", "datasets": "data.datasets", "groups": "data.groups", "_letor_parser": "data._letor_parser",
    "probe": "validation.probe", "catboost_gradients": "catboost", "dask_support": "dask",
    "heatmap": "diagnostics.heatmap", "combine": "diagnostics.combine", "linear": "diagnostics.linear",
    "_sklearn": "adapters._sklearn", "_config": "_core.config", "_threads": "_core.threads",
    "_openmp": "_core.openmp", "_optional": "_core.optional",
}.items()}

_OBJ, _MET, _ADA, _DATA = f"{_P}.objectives", f"{_P}.metrics", f"{_P}.adapters", f"{_P}.data"
_CHK, _VAL, _CB, _DASK, _DIAG = f"{_P}.checks", f"{_P}.validation", f"{_P}.catboost", f"{_P}.dask", f"{_P}.diagnostics"

#: module -> {name that left it: the public namespace that holds it now}
NAMES = {
    _P: {
        **dict.fromkeys(["LAMBDA_METRICS", "OBJECTIVES", "LambdaPairs", "YETIRANK_DEFAULTS", "LISTMLE_TIES",
                         "SOFTMAX_DEFAULTS", "PLRANK_DEFAULTS"], _OBJ),
        **dict.fromkeys(["CONVENTIONS", "METRICS", "convention_label", "metric_table"], _MET),
        **dict.fromkeys(["CostWarning", "HessianWarning", "openmp_sharing"], _ADA),
        **dict.fromkeys(["Fold", "LetorData", "frame_group_ptr", "ptr_to_sizes", "resolve_group_ptr",
                         "split_qid_column"], _DATA),
        **dict.fromkeys(["check_group_ptr", "check_k", "check_labels", "check_n_threads", "check_query_weights",
                         "check_sample_weight", "check_scores", "check_training_data"], _CHK),
        **dict.fromkeys(["compare_gradients", "probe_catboost", "probe_lightgbm", "probe_xgboost"], _VAL),
        **dict.fromkeys(["catboost_comparison_rows", "catboost_lambdamart_gradients", "catboost_loss_function",
                         "catboost_metric", "catboost_pairlogit_row", "catboost_querysoftmax_row",
                         "catboost_validation_rows", "catboost_yetirank_expected_gradients", "catboost_yetirank_row",
                         "yetirank_catboost_row"], _CB),
        **dict.fromkeys(["check_query_partitions", "dask_lightgbm_ranker", "dask_metric", "partition_group_sizes",
                         "repartition_by_query", "xgboost_dask_train"], _DASK),
        **dict.fromkeys(["HeatmapTree", "decision_paths", "heatmap_counts", "render_html", "render_png",
                         "best_linear_combination", "LinearLambdaRank", "MLPLambdaRank", "directions_needed",
                         "local_optimality_test"], _DIAG),
    },
    _CHK: {"check_options": f"{_P}._registry"},
    f"{_P}.objectives.yetirank": {"yetirank_catboost_row": _CB},
}


def _warn(old, new):
    # point at the user's line: skip this module, the import machinery and the modules' __getattr__ hooks
    # (warnings itself skips the import machinery's frames when it counts the level: so do not count them)
    frame, level = sys._getframe(1), 2
    while frame is not None and (frame.f_code.co_filename == __file__ or frame.f_code.co_name == "__getattr__"
                                 or frame.f_code.co_filename.startswith("<frozen importlib")):
        level += not frame.f_code.co_filename.startswith("<frozen importlib")
        frame = frame.f_back
    warnings.warn(f"{old} moved to {new}; import it from there ({old} goes away in the next release)",
                  FutureWarning, stacklevel=level)


def moved(module, name):
    """``module.name`` for a name that left ``module`` (a module's ``__getattr__``): the object from its new
    home, with a ``FutureWarning``; ``AttributeError`` for a name that never was there."""
    home = NAMES.get(module, {}).get(name)
    if home is None:
        old = f"{module}.{name}"
        if old in MODULES:  # an old module path reached as an attribute: import it through the finder
            return importlib.import_module(old)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    # ``from module import name`` asks twice (the import machinery's hasattr, then the name itself): warn once
    if sys._getframe(2).f_code.co_name != "_handle_fromlist":
        _warn(f"{module}.{name}", f"{home}.{name}")
    return getattr(importlib.import_module(home), name)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path of :data:`MODULES` and loads it as the new module object itself."""

    def __init__(self):
        self._specs = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        _warn(spec.name, MODULES[spec.name])
        module = importlib.import_module(MODULES[spec.name])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # the new module is already executed; the machinery set its __spec__ to the alias's: put it back
        module.__spec__ = self._specs.pop(module.__spec__.name)


def install():
    """Put the alias finder first on ``sys.meta_path``, once (called by ``lambda_objectives/__init__.py``).

    First, because it answers only the old paths of :data:`MODULES` and an editable install's finder would
    otherwise look for them as files of the source tree it was installed from."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
