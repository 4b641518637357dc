"""LightGBM and XGBoost adapters: LambdaMART objectives and ranking eval metrics as engine callables.

* :class:`LightGBMObjective` — ``lgb.train({"objective": obj}, ds)`` (called as ``obj(preds,
  train_data)``) **and** ``lgb.LGBMRanker(objective=obj)`` (LightGBM's sklearn wrapper counts
  parameters and passes ``group`` only to a 4-parameter callable; ``__call__`` has four, the
  engine path uses the first two).
* :class:`XGBoostObjective` — ``xgb.train(params, dtrain, obj=obj)``; :class:`XGBLambdaRanker`,
  a small sklearn-style estimator over ``xgb.train`` (``xgb.XGBRanker`` rejects callables).
* :func:`lightgbm_metric` / :func:`xgboost_metric` — NDCG@k, ERR@k, MAP@k, MRR@k eval callables.

Gradient back ends (``preset``):

* ``None`` — the package's exact lambdas (:func:`lambda_objectives.lambda_gradients`): ΔNDCG,
  ΔERR, ΔMAP, ΔMRR, RankNet, with the package's truncation convention;
* ``"lightgbm"`` — LightGBM's built-in ``lambdarank`` reproduced bit for bit
  (``k`` = ``lambdarank_truncation_level``, default 30; options ``label_gain``, ``norm``);
* ``"xgboost"`` — XGBoost ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` (topk, ``k`` default 32;
  options ``normalization``, ``score_normalization``, ``exp_gain``), to float32 precision.

Gradients are written into buffers allocated once per data set and returned as float32 views.
"""

import threading
import warnings
import weakref

import numpy as np
from sklearn.base import BaseEstimator

from . import _preset_kernels as pk
from ._config import ENGINE_FLOAT, FLOAT, PTR
from ._optional import require
from ._threads import numba_threads
from ._validation import check_group_ptr, check_k, check_labels, check_n_threads
from .groups import split_qid_column
from .lambdas import lambda_gradients
from .metrics import metric_values, parse_metric

__all__ = [
    "HessianWarning",
    "LightGBMObjective",
    "XGBoostObjective",
    "XGBLambdaRanker",
    "lightgbm_metric",
    "xgboost_early_stopping",
    "xgboost_metric",
]

_PRESET_METRICS = {
    None: ("ndcg", "err", "map", "mrr", "ranknet"),
    "lightgbm": ("ndcg",),
    "xgboost": ("ndcg", "map", "pairwise"),
}
_PRESET_OPTIONS = {
    "lightgbm": {"label_gain", "norm"},
    "xgboost": {"normalization", "score_normalization", "exp_gain"},
}
_TABLES = {}


class HessianWarning(RuntimeWarning):
    """The Hessians are too small for the engine to split on (LightGBM issue #2239)."""


def _discount(ptr):
    """``1/log2(2 + r)`` for every position of the longest query (both engines' table)."""
    longest = int(np.max(np.diff(ptr), initial=1))
    return pk.engine_discount(max(longest, 1))


def _sigmoid_table(sigma):
    if sigma not in _TABLES:
        _TABLES[sigma] = pk.lgb_sigmoid_table(float(sigma))
    return _TABLES[sigma]


class _LambdaObjective:
    """Shared state: options, per-data-set cache (labels, group_ptr, weights, buffers)."""

    _engine = ""
    _hess_param = ("min_sum_hessian_in_leaf", 1e-3)

    def __init__(self, metric="ndcg", k=None, sigma=1.0, preset=None, n_threads=None,
                 check_hessian=True, **kernel_options):
        if preset not in _PRESET_METRICS:
            raise ValueError(f"preset must be None, 'lightgbm' or 'xgboost', got {preset!r}")
        metric = str(metric).lower()
        if metric not in _PRESET_METRICS[preset]:
            raise ValueError(
                f"metric {metric!r} is not available with preset={preset!r}; "
                f"choose one of {_PRESET_METRICS[preset]}"
            )
        self.metric = metric
        self.k = check_k(k)
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
        if preset == "xgboost" and sigma != 1.0:
            raise ValueError("XGBoost's native objectives fix sigma at 1; preset='xgboost' needs sigma=1.0")
        self.sigma = float(sigma)
        self.preset = preset
        self.n_threads = check_n_threads(n_threads) if n_threads is not None else None
        if check_hessian not in (True, False, "raise", "warn"):
            raise ValueError(f"check_hessian must be True/False/'warn'/'raise', got {check_hessian!r}")
        self.check_hessian = check_hessian
        if preset is not None:
            unknown = set(kernel_options) - _PRESET_OPTIONS[preset]
            if unknown:
                raise ValueError(f"unknown options for preset={preset!r}: {sorted(unknown)}")
        self.kernel_options = dict(kernel_options)
        self._slots = {}
        self.n_calls = 0

    # -- data-set cache -------------------------------------------------------------------------
    # One slot per calling thread: Dask's in-process workers (and LightGBM's sklearn wrapper on
    # several threads) call one shared objective object with different data at the same time.
    def _slot(self):
        return self._slots.setdefault(threading.get_ident(), [None, None])

    def _state(self, data, labels, group_ptr, weights, hess_threshold):
        """The prepared state for ``data``, rebuilt whenever its labels, groups or weights change.

        Engines let users call ``set_label`` / ``set_weight`` / ``set_group`` between rounds, and
        LightGBM's sklearn path passes new weights with the same labels: a cache keyed on the data
        object alone would silently keep the old inputs. The engine hands over its current arrays
        on every call; comparing them with the cached copies is O(n), far below the O(n·k) kernel.
        """
        labels = np.asarray(labels)
        ptr = np.asarray(group_ptr)
        w = None if weights is None or len(weights) == 0 else np.asarray(weights)
        ref, st = self._slot()
        if st is not None and ref is not None and ref() is data:
            old_y, old_ptr, old_w = st["key"]
            if (np.array_equal(old_y, labels) and np.array_equal(old_ptr, ptr)
                    and (old_w is None) == (w is None) and (w is None or np.array_equal(old_w, w))):
                return st
        st = self._prepare(labels, ptr, w, hess_threshold)
        st["key"] = (labels.copy(), ptr.copy(), None if w is None else w.copy())
        self._remember(data, st)
        return st

    def _remember(self, data, state):
        slot = self._slot()
        try:
            slot[0] = weakref.ref(data)
        except TypeError:  # not weak-referenceable: keep it alive instead
            slot[0] = (lambda d: (lambda: d))(data)
        slot[1] = state

    def __getstate__(self):
        # caches hold weak references and buffers: rebuilt after a copy or on a Dask worker
        state = self.__dict__.copy()
        state["_slots"] = {}
        return state

    def _prepare(self, labels, group_ptr, weights, hess_threshold):
        """Validate labels/group once per data set and allocate every buffer."""
        n = labels.shape[0]
        ptr = check_group_ptr(np.asarray(group_ptr, dtype=PTR), n)
        lab = np.ascontiguousarray(labels, dtype=FLOAT)
        if not np.all(np.isfinite(lab)) or np.any(lab < 0):
            i = int(np.flatnonzero(~np.isfinite(lab) | (lab < 0))[0])
            raise ValueError(f"labels must be finite and non-negative, row {i} is {lab[i]!r}")
        st = {"n": n, "ptr": ptr, "labels": lab,
              "grad": np.zeros(n, ENGINE_FLOAT), "hess": np.zeros(n, ENGINE_FLOAT),
              "threshold": hess_threshold, "warned": False}
        if self.preset == "lightgbm":
            self._prepare_lightgbm(st, weights)
        elif self.preset == "xgboost":
            self._prepare_xgboost(st, weights)
        else:
            st["doc_w"] = None if weights is None else np.ascontiguousarray(weights, dtype=FLOAT)
            st["g64"] = np.zeros(n, FLOAT)
            st["h64"] = np.zeros(n, FLOAT)
        return st

    def _prepare_lightgbm(self, st, weights):
        lab = st["labels"]
        if np.any(lab != np.floor(lab)):
            i = int(np.flatnonzero(lab != np.floor(lab))[0])
            raise ValueError(f"preset='lightgbm' needs integer labels, row {i} is {lab[i]!r}")
        lg = self.kernel_options.get("label_gain")
        if lg is None:
            lg = np.array([0.0] + [float((1 << i) - 1) for i in range(1, 31)])
        lg = np.ascontiguousarray(lg, dtype=FLOAT)
        if lab.size and lab.max() >= lg.shape[0]:
            i = int(np.argmax(lab >= lg.shape[0]))
            raise ValueError(f"label {lab[i]:g} at row {i} exceeds label_gain (size {lg.shape[0]})")
        k = 30 if self.k is None else self.k
        inv = np.empty(st["ptr"].shape[0] - 1, FLOAT)
        pk.lgb_inverse_max_dcg(lab, st["ptr"], lg, k, inv)
        st.update(label_gain=lg, kk=k, inv=inv, discount=_discount(st["ptr"]), table=_sigmoid_table(self.sigma),
                  norm=bool(self.kernel_options.get("norm", True)))
        st["doc_w"] = (np.zeros(1, ENGINE_FLOAT) if weights is None
                       else np.ascontiguousarray(weights, dtype=ENGINE_FLOAT))
        st["use_w"] = weights is not None

    def _prepare_xgboost(self, st, weights):
        lab = st["labels"]
        n_q = st["ptr"].shape[0] - 1
        exp_gain = bool(self.kernel_options.get("exp_gain", True))
        if self.metric == "map" and np.any((lab != 0) & (lab != 1)):
            i = int(np.flatnonzero((lab != 0) & (lab != 1))[0])
            raise ValueError(f"preset='xgboost' metric='map' needs binary labels, row {i} is {lab[i]!r}")
        if self.metric == "ndcg" and exp_gain and (np.any(lab != np.floor(lab)) or lab.max(initial=0) > 31):
            raise ValueError("rank:ndcg with exp_gain needs integer labels <= 31")
        k = 32 if self.k is None else self.k
        inv = np.empty(n_q, FLOAT)
        if self.metric == "ndcg":
            pk.xgb_inverse_idcg(lab.astype(np.float32), st["ptr"], k, exp_gain, inv)
        if weights is None or len(weights) == 0:
            gw = np.ones(n_q, np.float32)
        else:
            gw = np.ascontiguousarray(weights, dtype=np.float32)
            if gw.shape[0] != n_q:
                raise ValueError(f"XGBoost ranking weights are per query: got {gw.shape[0]}, expected {n_q}")
        y32 = lab.astype(np.float32)
        gains = (np.exp2(y32.astype(FLOAT)) - 1.0) if exp_gain else y32.astype(FLOAT)
        st.update(labels32=y32, gains=gains, discount=_discount(st["ptr"]), kk=k, inv=inv, exp_gain=exp_gain, group_w=gw,
                  w_norm=np.float32(float(n_q) / float(np.sum(gw.astype(np.float64)))),
                  n_rel=np.zeros(st["n"], FLOAT), acc=np.zeros(st["n"], FLOAT),
                  metric_code=pk.METRIC_CODES[self.metric],
                  preds32=np.zeros(st["n"], np.float32))

    # -- gradients ------------------------------------------------------------------------------
    def _compute(self, st, scores):
        g, h = st["grad"], st["hess"]
        with numba_threads(self.n_threads):
            if self.preset == "lightgbm":
                table, tmin, tmax, factor = st["table"]
                s = np.ascontiguousarray(scores, dtype=FLOAT)
                pk.lgb_lambdarank(s, st["labels"], st["ptr"], st["label_gain"], st["discount"], st["inv"], st["kk"],
                                  self.sigma, st["norm"], table, tmin, tmax, factor, st["doc_w"],
                                  st["use_w"], g, h)
            elif self.preset == "xgboost":
                p = st["preds32"]
                p[:] = scores  # the engine ranks by float32 margins
                o = self.kernel_options
                pk.xgb_lambdarank(p, st["labels32"], st["gains"], st["discount"], st["ptr"], st["metric_code"],
                                  st["inv"], st["kk"], bool(o.get("score_normalization", True)),
                                  bool(o.get("normalization", True)), st["group_w"], st["w_norm"],
                                  st["n_rel"], st["acc"], g, h)
            else:
                s = np.asarray(scores, dtype=FLOAT)
                g64, h64 = st["g64"], st["h64"]
                lambda_gradients(s, st["labels"], st["ptr"], self.metric, self.k, self.sigma,
                                 out=(g64, h64), n_threads=self.n_threads, **self._extra_options(st))
                if st["doc_w"] is not None:
                    np.multiply(g64, st["doc_w"], out=g64)
                    np.multiply(h64, st["doc_w"], out=h64)
                g[:] = g64
                h[:] = h64
        self.n_calls += 1
        self._check_hessian(st)
        return g, h

    def _extra_options(self, st):
        opts = self.kernel_options
        if self.metric == "err" and opts.get("max_label") is None and opts.get("label_gain") is None:
            # one satisfaction scale for the whole data set, not each query's own top grade
            opts = dict(opts, max_label=float(st["labels"].max(initial=0.0)))
        return opts

    def _check_hessian(self, st):
        """Raise on non-finite gradients; warn (or raise) when no split can satisfy the engine's
        minimum child Hessian (the latter only with ``check_hessian``)."""
        h = st["hess"]
        total = float(np.sum(h, dtype=np.float64))
        if not (np.isfinite(total) and np.isfinite(np.sum(st["grad"], dtype=np.float64))):
            # a NaN/inf gradient must never reach the engine: it trains one broken tree and stops
            bad = ~(np.isfinite(st["grad"]) & np.isfinite(h))
            i = int(np.flatnonzero(bad)[0]) if bad.any() else 0
            raise ValueError(
                f"{self._engine}: the objective produced non-finite gradients or Hessians (first at row {i}: "
                f"grad {st['grad'][i]!r}, hess {h[i]!r}); check the labels (2**label overflows for labels "
                ">= 1024 with exponential gain) and sigma")
        if st["warned"] or not self.check_hessian:
            return
        if h.size and float(h.min()) < 0:
            msg = f"negative Hessians (min {float(h.min()):.3g})"
        elif total < 2.0 * st["threshold"]:
            msg = f"sum of Hessians over the data is {total:.3g}"
        else:
            return
        name, _ = self._hess_param
        text = (
            f"{self._engine}: {msg}, but a split needs {name} >= {st['threshold']:g} in each child, "
            f"so the engine will stop growing trees silently (LightGBM issue #2239). Scale the "
            f"objective (e.g. larger sigma, normalize=None), lower {name} (e.g. 1e-12), or check "
            "that queries have at least two distinct labels."
        )
        st["warned"] = True
        if self.check_hessian == "raise":
            raise ValueError(text)
        warnings.warn(text, HessianWarning, stacklevel=4)

    def gradients(self, scores, labels, group_ptr, weights=None):
        """Gradients and Hessians (float32 arrays) for ``scores`` outside any engine."""
        st = self._prepare(np.asarray(labels), group_ptr, weights, 0.0)
        g, h = self._compute(st, scores)
        return g.copy(), h.copy()

    def __repr__(self):
        opts = "".join(f", {k}={v!r}" for k, v in self.kernel_options.items())
        return (f"{type(self).__name__}(metric={self.metric!r}, k={self.k!r}, sigma={self.sigma!r}, "
                f"preset={self.preset!r}{opts})")


_MISSING = object()


class _SklearnCall:
    """Stands for "the data of LGBMRanker's 4-argument call" in the per-thread cache."""


_SKLEARN_CALL = _SklearnCall()


def _lgb_hess_threshold(params):
    for key in ("min_sum_hessian_in_leaf", "min_sum_hessian_per_leaf", "min_sum_hessian",
                "min_hessian", "min_child_weight"):
        if params and key in params:
            return float(params[key])
    return 1e-3


class LightGBMObjective(_LambdaObjective):
    """A LambdaMART objective for LightGBM (``lgb.train`` and ``lgb.LGBMRanker``).

    Parameters
    ----------
    metric : {"ndcg", "err", "map", "mrr", "ranknet"}
        The metric whose swap change weights each pair, ``|Δmetric|``.
    k : int or None
        Truncation (``None``: the package default; with ``preset="lightgbm"`` it is
        ``lambdarank_truncation_level``, default 30).
    sigma : float
        Sigmoid steepness, ``rho = 1/(1 + exp(sigma (s_i - s_j)))``.
    preset : None or "lightgbm" or "xgboost"
        ``"lightgbm"`` reproduces the native ``lambdarank`` bit for bit.
    n_threads : int or None
        numba threads for the kernel (LightGBM's pool idles during the callback).
    check_hessian : bool or "raise"
        Warn (``True``) or raise when the Hessians cannot pass ``min_sum_hessian_in_leaf``.
    **kernel_options
        Passed to the kernel (``lambda_gradients`` keywords, or the preset options).

    Notes
    -----
    Called as ``obj(preds, train_data)`` by ``lgb.train`` (group boundaries from
    ``train_data.get_field('group')``, cached per Dataset) and as ``obj(y_true, y_pred, weight,
    group)`` by ``LGBMRanker`` (``group`` = sizes). Per-document weights multiply grad and hess.
    Returned arrays are float32 views of buffers reused every iteration.
    """

    _engine = "LightGBM"

    def __call__(self, preds, train_data, weight=_MISSING, group=_MISSING):
        if group is _MISSING:  # lgb.train path: (preds, Dataset)
            bounds = train_data.get_field("group")
            if bounds is None:
                raise ValueError("the LightGBM Dataset has no group: pass group=sizes to lgb.Dataset")
            st = self._state(train_data, train_data.get_label(), bounds, train_data.get_weight(),
                             _lgb_hess_threshold(getattr(train_data, "params", None)))
            return self._compute(st, preds)
        y_true, y_pred = preds, train_data  # LGBMRanker path
        if group is None:
            raise ValueError("LGBMRanker passed no group to the objective: fit(..., group=sizes)")
        from .groups import sizes_to_ptr

        st = self._state(_SKLEARN_CALL, y_true, sizes_to_ptr(group, len(y_true)), weight, 1e-3)
        return self._compute(st, y_pred)

    #: explicit 4-argument form for ``LGBMRanker(objective=obj.sklearn)``
    def sklearn(self, y_true, y_pred, weight, group):
        """``LGBMRanker`` objective form ``(y_true, y_pred, weight, group_sizes)``."""
        return self(y_true, y_pred, weight, group)


class XGBoostObjective(_LambdaObjective):
    """A LambdaMART objective for ``xgb.train(params, dtrain, obj=obj)``.

    Same parameters as :class:`LightGBMObjective`. Group boundaries come from
    ``dtrain.get_uint_info('group_ptr')`` (cached per DMatrix); XGBoost's ranking weights are per
    query (``dtrain.get_weight()``) and multiply grad and hess (times ``n_groups/Σw`` under
    ``preset="xgboost"``). XGBoost passes float32 margins. With ``obj=`` XGBoost keeps
    ``base_score=0.5`` and ``eval_metric=rmse`` unless told: use :meth:`params` or
    :class:`XGBLambdaRanker`, which pin ``base_score=0`` and the ranking metric.
    """

    _engine = "XGBoost"
    _hess_param = ("min_child_weight", 1.0)

    def __init__(self, *args, min_child_weight=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.min_child_weight = float(min_child_weight)

    def __call__(self, predt, dtrain):
        ptr = np.asarray(dtrain.get_uint_info("group_ptr"), dtype=PTR)
        if ptr.size == 0:
            raise ValueError("the DMatrix has no query groups: pass qid= or group= to xgb.DMatrix")
        st = self._state(dtrain, dtrain.get_label(), ptr, dtrain.get_weight(), self.min_child_weight)
        return self._compute(st, predt)

    def _prepare(self, labels, group_ptr, weights, hess_threshold):
        st = super()._prepare(labels, group_ptr, weights, hess_threshold)
        if self.preset is None and st["doc_w"] is not None:
            if st["doc_w"].shape[0] != st["ptr"].shape[0] - 1:
                raise ValueError(f"XGBoost ranking weights are per query: got {st['doc_w'].shape[0]}, "
                                 f"expected {st['ptr'].shape[0] - 1}")
            st["doc_w"] = np.repeat(st["doc_w"], np.diff(st["ptr"]))  # per query -> per row
        return st

    def params(self, **extra):
        """``xgb.train`` params for a custom objective: ``base_score=0``, this objective's
        ``min_child_weight`` and no native eval metric (``disable_default_eval_metric``).

        XGBoost would otherwise add ``rmse`` (or a native ranking metric with its own conventions)
        to every evaluation; with early stopping, whichever metric comes last drives it. Evaluate
        with :meth:`eval_metric` through ``custom_metric=`` and stop with
        :func:`xgboost_early_stopping` (or ``maximize=True``).
        """
        p = {"base_score": 0.0, "disable_default_eval_metric": 1, "min_child_weight": self.min_child_weight}
        p.update(extra)
        return p

    def eval_metric(self, k=10):
        """The package's eval metric matching this objective at ``k`` (NDCG for RankNet/pairwise)."""
        name = "ndcg" if self.metric in ("ranknet", "pairwise") else self.metric
        return xgboost_metric(f"{name}@{k}")


# ---------------------------------------------------------------------------------------------
# eval metrics
# ---------------------------------------------------------------------------------------------
_EVAL_NAMES = ("ndcg", "err", "map", "mrr")


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


class _EvalMetric:
    """Shared state of the eval callables: name and k. Higher is better (``maximize = True``).

    Query boundaries are read from the evaluation data on every call (a cheap copy next to the
    metric's sort), never cached, so ``set_group`` / ``set_label`` between rounds are seen.
    """

    #: every metric of this package is a gain: early stopping must maximise it
    maximize = True

    def __init__(self, spec, max_label=None, threshold=0.0, convention=None):
        from .metrics import resolve_convention

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


class _LightGBMEval(_EvalMetric):
    def __call__(self, preds, eval_data, weight=_MISSING, group=_MISSING):
        if group is _MISSING:
            bounds = eval_data.get_field("group")
            if bounds is None:
                raise self._no_groups("LightGBM", "pass group=sizes to the lgb.Dataset used in valid_sets")
            ptr = np.asarray(bounds, dtype=PTR)
            labels = eval_data.get_label()
        else:
            from .groups import sizes_to_ptr

            if group is None:
                raise self._no_groups("LGBMRanker", "pass eval_group= to fit")
            labels, preds = preds, eval_data
            ptr = sizes_to_ptr(group, len(labels))
        return self.name, self._value(preds, labels, ptr), True


class _XGBoostEval(_EvalMetric):
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
    return _LightGBMEval(spec, max_label, threshold, convention)


def xgboost_metric(spec, max_label=None, threshold=0.0, convention=None):
    """An XGBoost ``custom_metric`` callable ``(predt, dmatrix) -> (name, value)``; higher is better.

    XGBoost's early stopping guesses the direction from the metric's name and maximises only
    names starting with ``ndcg`` or ``map``: it would *minimise* ``err@k`` and ``mrr@k``. Pass
    ``maximize=True`` to ``xgb.train``, or use :func:`xgboost_early_stopping`.
    """
    return _XGBoostEval(spec, max_label, threshold, convention)


def xgboost_early_stopping(rounds, metric, data_name=None, save_best=False):
    """An ``xgb.callback.EarlyStopping`` that maximises one of the package's metrics.

    Parameters
    ----------
    rounds : int
        Stop after this many rounds without improvement.
    metric : str or the object of :func:`xgboost_metric`
        The metric that drives stopping (e.g. ``"err@10"``); it must also be evaluated through
        ``custom_metric=``.
    data_name : str, optional
        Which ``evals`` entry drives stopping (XGBoost's default: the last one).
    save_best : bool
        Keep only the best iteration's trees (XGBoost's ``save_best``).
    """
    xgb = require("xgboost")

    name = metric.name if isinstance(metric, _EvalMetric) else _XGBoostEval(metric).name
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    return xgb.callback.EarlyStopping(rounds=int(rounds), metric_name=name, data_name=data_name,
                                      maximize=True, save_best=save_best)


# ---------------------------------------------------------------------------------------------
# sklearn-style XGBoost ranker
# ---------------------------------------------------------------------------------------------
def _sorted_ptr(n, group, qid, what):
    """group_ptr from sizes or a qid that must already be non-decreasing (XGBoost never sorts)."""
    from .groups import resolve_group_ptr

    if qid is not None:
        q = np.asarray(qid)
        if q.shape[0] != n:
            raise ValueError(f"{what}: qid has {q.shape[0]} rows, X has {n}")
        bad = np.flatnonzero(q[1:] < q[:-1])
        if bad.size:
            r = int(bad[0]) + 1
            raise ValueError(
                f"{what}: qid must be sorted in non-decreasing order (XGBoost requirement); row {r} has "
                f"qid {q[r]!r} after {q[r - 1]!r}. Sort rows by qid (stably) first; rows are never reordered here."
            )
    if group is None and qid is None:
        raise ValueError(f"{what}: give group= (sizes) or qid=")
    return resolve_group_ptr(n, group=group, qid=qid)


class XGBLambdaRanker(BaseEstimator):
    """A scikit-learn ranker over ``xgb.train`` with a :class:`XGBoostObjective`.

    Parameters
    ----------
    objective : XGBoostObjective or str
        An objective instance, or a metric name (``"ndcg"``, ``"err"``, ...) for
        ``XGBoostObjective(metric)``.
    n_estimators : int
        Boosting rounds.
    eval_metric : str or None
        E.g. ``"ndcg@10"`` (our implementation, maximised); default ``f"{metric}@10"``.
    early_stopping_rounds : int or None
        Stop when ``eval_metric`` on the last ``eval_set`` has not improved (maximised) for this
        many rounds; :meth:`predict` then uses the best iteration.
    score_metric : str
        What :meth:`score` returns: the mean over queries of this metric (default NDCG@10,
        LightGBM convention).
    **xgb_params
        Passed to ``xgb.train`` (``max_depth``, ``learning_rate``/``eta``, ``nthread``...).
        ``base_score`` defaults to 0 (XGBoost would use 0.5 under a custom objective).

    Attributes
    ----------
    booster_, objective_, n_features_in_, feature_names_in_ (DataFrame input), feature_importances_
    (total gain per feature, normalised to sum 1, as ``xgb.XGBRanker``'s default),
    best_iteration_, best_score_, evals_result_.

    Notes
    -----
    Queries come from ``group``/``qid`` in :meth:`fit` or, like ``xgb.XGBRanker``, from a ``qid``
    column of a pandas DataFrame ``X`` (never a feature), so ``GridSearchCV`` /
    ``cross_val_score`` with ``GroupKFold`` work. Rows must be sorted by qid (XGBoost's rule); they
    are checked, never reordered. Without queries every row is one query.
    """

    def __init__(self, objective="ndcg", n_estimators=100, eval_metric=None, early_stopping_rounds=None,
                 score_metric="ndcg@10", **xgb_params):
        self.objective = objective
        self.n_estimators = n_estimators
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.score_metric = score_metric
        # each XGBoost parameter is an attribute of its own, as scikit-learn requires of parameters
        for key, v in xgb_params.items():
            setattr(self, key, v)

    def _xgb_params(self):
        """The ``**xgb_params`` given to the constructor or :meth:`set_params`."""
        own = set(self._get_param_names())
        return {k: v for k, v in vars(self).items() if k not in own and not k.endswith("_") and not k.startswith("_")}

    def get_params(self, deep=True):
        params = super().get_params(deep)
        params.update(self._xgb_params())
        return params

    def set_params(self, **params):
        for key, v in params.items():
            setattr(self, key, v)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # XGBoost learns a default direction for missing values
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def _check_params(self):
        if isinstance(self.n_estimators, bool) or not isinstance(self.n_estimators, (int, np.integer)) \
                or self.n_estimators < 1:
            raise ValueError(f"n_estimators must be a positive integer, got {self.n_estimators!r}")
        if self.early_stopping_rounds is not None and (
                isinstance(self.early_stopping_rounds, bool) or not isinstance(self.early_stopping_rounds, (int, np.integer))
                or self.early_stopping_rounds < 1):
            raise ValueError(f"early_stopping_rounds must be a positive integer or None, got {self.early_stopping_rounds!r}")
        parse_metric(self.score_metric)

    def fit(self, X, y, group=None, qid=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None, verbose=False):
        """Train on rows already grouped by query (``group`` sizes, a sorted ``qid``, or a ``qid`` column of X).

        ``sample_weight`` is per query (XGBoost ranking convention). ``eval_set`` is a list of
        ``(X, y)`` with matching ``eval_group`` / ``eval_qid`` lists (or qid columns).
        """
        xgb = require("xgboost")

        self._check_params()
        if y is None:
            raise ValueError("XGBLambdaRanker requires y to be passed, but the target y is None")
        obj = self.objective if isinstance(self.objective, XGBoostObjective) else XGBoostObjective(self.objective)
        X, qid = split_qid_column(X, qid)
        names = getattr(X, "columns", None)
        X = _check_X(X)
        y = check_labels(y, X.shape[0], name="y")
        n = X.shape[0]
        ptr = _sorted_ptr(n, group, qid, "fit") if (group is not None or qid is not None) \
            else np.array([0, n], dtype=PTR)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=FLOAT)
        if sample_weight is not None and sample_weight.shape[0] != ptr.shape[0] - 1:
            raise ValueError(f"sample_weight is per query in XGBoost ranking: got {sample_weight.shape[0]} "
                             f"values for {ptr.shape[0] - 1} queries")
        dtrain = xgb.DMatrix(X, y, group=np.diff(ptr), weight=sample_weight)
        spec = self.eval_metric or f"{'ndcg' if obj.metric in ('ranknet', 'pairwise') else obj.metric}@10"
        feval = xgboost_metric(spec)
        evals = [(dtrain, "train")]
        for i, (Xe, ye) in enumerate(eval_set or []):
            ge = None if eval_group is None else eval_group[i]
            Xe, qe = split_qid_column(Xe, None if eval_qid is None else eval_qid[i])
            Xe = _check_X(Xe)
            pe = _sorted_ptr(Xe.shape[0], ge, qe, f"eval_set[{i}]")
            evals.append((xgb.DMatrix(Xe, np.asarray(ye), group=np.diff(pe)), f"validation_{i}"))
        params = {"base_score": 0.0, "disable_default_eval_metric": 1, "min_child_weight": obj.min_child_weight}
        params.update(self._xgb_params())
        self.evals_result_ = {}
        self.booster_ = xgb.train(params, dtrain, num_boost_round=self.n_estimators, obj=obj, evals=evals,
                                  custom_metric=feval, maximize=True, evals_result=self.evals_result_,
                                  early_stopping_rounds=self.early_stopping_rounds if len(evals) > 1 else None,
                                  verbose_eval=verbose)
        self.objective_ = obj
        self.n_features_in_ = X.shape[1]
        if names is not None and all(isinstance(c, str) for c in names):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        stopped = self.early_stopping_rounds is not None and len(evals) > 1
        self.best_iteration_ = int(self.booster_.best_iteration) + 1 if stopped else self.n_estimators
        self.best_score_ = {name: {m: v[self.best_iteration_ - 1] for m, v in hist.items()}
                            for name, hist in self.evals_result_.items()}
        return self

    @property
    def feature_importances_(self):
        """Total split gain per feature, normalised to sum 1 (zeros for an unsplit model)."""
        self._check_fitted()
        gain = self.booster_.get_score(importance_type="total_gain")
        imp = np.zeros(self.n_features_in_)
        for key, v in gain.items():
            imp[int(key[1:])] = v
        total = imp.sum()
        return imp / total if total > 0 else imp

    def _check_fitted(self):
        if not hasattr(self, "booster_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("XGBLambdaRanker is not fitted; call fit first")

    def predict(self, X):
        """Raw ranking scores (margins; only their order within a query matters)."""
        xgb = require("xgboost")

        self._check_fitted()
        X = _check_X(split_qid_column(X, None)[0])
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but XGBLambdaRanker is expecting "
                             f"{self.n_features_in_} features as input")
        return self.booster_.predict(xgb.DMatrix(X), output_margin=True,
                                     iteration_range=(0, self.best_iteration_))

    def score(self, X, y, qid=None, group=None):
        """Mean over queries of ``score_metric``; queries from ``qid``/``group`` or X's qid column."""
        from .groups import resolve_group_ptr

        X, qid = split_qid_column(X, qid)
        s = self.predict(X)
        return float(np.mean(metric_values(s, y, resolve_group_ptr(s.shape[0], group=group, qid=qid),
                                           self.score_metric)))


def _check_X(X):
    from sklearn.utils.validation import check_array

    return check_array(X, accept_sparse="csr", dtype="numeric", ensure_all_finite="allow-nan")
