"""XGBoost: :class:`XGBoostObjective` for ``xgb.train(obj=...)``, :class:`XGBLambdaRanker` (a
scikit-learn estimator; ``xgb.XGBRanker`` rejects callables) and :func:`xgboost_early_stopping`."""

import copy
import ctypes
import json

import numpy as np

from .._kernels.compile import announces_compilation
from .._core.config import PTR
from .._core.openmp import share_with_xgboost
from .._core.optional import require
from ._sklearn import SCATTERED, EngineRanker, TrainingQueries, check_below, check_X, require_queries
from ..checks import check_labels, check_positions, check_sample_weight
from ..data.groups import split_qid_column
from ._base import LambdaObjective, eval_name as _eval_name
from .eval_metrics import EvalMetric, XGBoostEval, xgboost_metric

__all__ = ["XGBoostObjective", "XGBLambdaRanker", "xgboost_early_stopping"]


class XGBoostObjective(LambdaObjective):
    """A LambdaMART objective for ``xgb.train(params, dtrain, obj=obj)``.

    Same parameters as :class:`LightGBMObjective` (``bias=`` included: XGBoost has no position field, so
    positions are ``positions=`` or each row's index inside its query, as XGBoost's own
    ``lambdarank_unbiased``; ``bias="additive"`` needs ``learning_rate=``, XGBoost's ``eta``, which it does not
    tell a custom objective). ``XGBoostObjective(metric, preset="xgboost", bias="pairwise")`` is XGBoost 3.2's
    ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` with ``lambdarank_unbiased=True`` bit for bit: the engine's
    mirrored pair cost ``softplus(s_high − s_low)·Δ``, positions ``MaxPositionSize()`` (``k`` for topk, else
    ``min(largest query, 32)``) tracked, λ and h divided only when both factors are ``>= 1e-16``, and
    :attr:`bias_factors_` its saved ``ti+`` / ``tj-``. Group boundaries come from
    ``dtrain.get_uint_info('group_ptr')`` (cached per DMatrix); XGBoost's ranking weights are per
    query (``dtrain.get_weight()``) and multiply grad and hess (times ``n_groups/Σw`` under
    ``preset="xgboost"``). XGBoost passes float32 margins. With ``obj=`` XGBoost keeps
    ``base_score=0.5`` and ``eval_metric=rmse`` unless told: use :meth:`params` or
    :class:`XGBLambdaRanker`, which pin ``base_score=0`` and the ranking metric.

    Under ``preset="xgboost"``, ``pair_method="mean"`` with ``num_pair_per_sample=m`` (XGBoost's
    ``lambdarank_pair_method`` / ``lambdarank_num_pair_per_sample``) draws the pairs XGBoost 3.0-3.3 draw
    on CPU (GCC/libstdc++ builds: the Linux wheels), which depend on the boosting round. XGBoost does not
    tell a custom objective the round, so ``iteration`` counts it: 0 at construction, one more after
    every engine call (not after :meth:`gradients`, which uses it as it stands). ``xgb.train`` numbers
    its rounds from 0 in *every* call, ``xgb_model=`` continuation included, and ``xgb.cv`` calls the
    objective once per fold: set ``obj.iteration = 0`` before each ``xgb.train``, or pass
    ``callbacks=[obj.iteration_callback()]``, which takes the engine's own round number.
    """

    _engine = "XGBoost"
    _hess_param = ("min_child_weight", 1.0)
    _threshold_from = (" (the objective's min_child_weight: XGBoost does not tell a custom objective its own; "
                       "set both with xgb.train(obj.params(min_child_weight=...), ...))")
    _weights_per = "query"
    _margin_name = "base_margin"

    def __init__(self, *args, min_child_weight=1.0, **kwargs):
        share_with_xgboost()  # before the base class's dry run starts numba's threads
        super().__init__(*args, **kwargs)
        self.min_child_weight = _check_min_child_weight(min_child_weight)
        share_with_xgboost()

    def __call__(self, predt, dtrain):
        share_with_xgboost()  # again here: an unpickled copy (Dask worker) skipped __init__
        views = _info_views(dtrain)
        st = None if views is None else self._cached(dtrain, *views)
        if st is None:  # a new or changed data set: the public getters' copies, checked and kept
            ptr = np.asarray(dtrain.get_uint_info("group_ptr"), dtype=PTR)
            if ptr.size == 0:
                raise ValueError("the DMatrix has no query groups: pass qid= or group= to xgb.DMatrix")
            st = self._state(dtrain, dtrain.get_label(), ptr, dtrain.get_weight(), self.min_child_weight)
        st["threshold"] = self.min_child_weight  # params() may have changed it since the state was built
        return self._compute(st, predt, initial=dtrain.get_base_margin)

    def iteration_callback(self):
        """An ``xgb.callback.TrainingCallback`` that sets ``iteration`` to the engine's own round
        number before each round (``callbacks=[obj.iteration_callback()]`` in ``xgb.train`` / ``xgb.cv``).

        ``pair_method="mean"`` then draws exactly what the native objective draws in every round: also
        when ``xgb.train`` continues a model (``xgb_model=``; XGBoost 3.0-3.3 number those rounds from 0
        again) and in ``xgb.cv``, which calls the one objective once per fold and round.
        """
        xgb = require("xgboost")
        return _iteration_sync(xgb)(self)

    def _prepare(self, labels, group_ptr, weights, hess_threshold, from_engine=True, positions=None,
                 learning_rate=None):
        st = super()._prepare(labels, group_ptr, weights, hess_threshold, from_engine, positions, learning_rate)
        # the exact back end (and YetiRank under preset="catboost", the same computation) takes row weights
        if (self.preset is None or self.metric == "yetirank") and st["doc_w"] is not None:
            # validated per query (checks.check_training_data)
            st["doc_w"] = np.repeat(st["doc_w"], np.diff(st["ptr"]))  # per query -> per row
        return st

    def params(self, **extra):
        """``xgb.train`` params for a custom objective: ``base_score=0``, this objective's
        ``min_child_weight`` and no native eval metric (``disable_default_eval_metric``).

        XGBoost would otherwise add ``rmse`` (or a native ranking metric with its own conventions)
        to every evaluation; with early stopping, whichever metric comes last drives it. Evaluate
        with :meth:`eval_metric` through ``custom_metric=`` and stop with
        :func:`xgboost_early_stopping` (or ``maximize=True``).

        A ``min_child_weight`` in ``extra`` becomes this objective's too: XGBoost does not tell a
        custom objective its parameters, and the objective's Hessian check (``check_hessian``) warns
        when no split can reach the engine's ``min_child_weight``.
        """
        if "min_child_weight" in extra:
            self.min_child_weight = _check_min_child_weight(extra["min_child_weight"])
        p = {"base_score": 0.0, "disable_default_eval_metric": 1, "min_child_weight": self.min_child_weight}
        p.update(extra)
        return p

    def eval_metric(self, k=10):
        """The package's eval metric matching this objective at ``k`` (NDCG for RankNet/pairwise)."""
        return xgboost_metric(f"{_eval_name(self.metric)}@{k}")


#: the DMatrix fields the objective reads every round, in :meth:`LambdaObjective._cached`'s order
_INFO_FIELDS = ("label", "group_ptr", "weight")


def _info_views(dmatrix):
    """``(label, group_ptr, weight)`` of ``dmatrix`` as read-only views of XGBoost's own arrays (``weight``
    ``None`` when it has none), or ``None`` when they cannot be had so: an XGBoost without
    ``XGDMatrixGetInfoRef`` (its C API since 2.1), an array in device memory or not contiguous.

    The public getters (``get_label``, ``get_uint_info``, ``get_weight``) copy: ≈ 30 µs each at 20,000 rows,
    most of it their Python wrapper (a class defined per call, then ``np.array(copy=True)``), ≈ 0.1 ms a
    round in all, for arrays the objective only compares with its cached copies. The views are for that
    comparison alone and must not outlive the call: XGBoost frees or replaces them with the DMatrix.
    """
    try:
        from xgboost.core import _LIB, c_str

        get = _LIB.XGDMatrixGetInfoRef
        out = []
        for field in _INFO_FIELDS:
            ref = ctypes.c_char_p()
            if get(dmatrix.handle, c_str(field), ctypes.byref(ref)) != 0:
                return None
            inf = json.loads(ref.value)
            dtype = np.dtype(inf["typestr"])
            n = int(inf["shape"][0])
            if "stream" in inf or len(inf["shape"]) != 1 or inf.get("strides") not in (None, [dtype.itemsize]):
                return None
            if n == 0:
                out.append(np.empty(0, dtype))
                continue
            buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(int(inf["data"][0]))
            view = np.frombuffer(buf, dtype=dtype)
            view.flags.writeable = False
            out.append(view)
    except Exception:  # any other XGBoost: the public getters, the same arrays
        return None
    label, ptr, weight = out
    return label, ptr, None if weight.size == 0 else weight


def _check_min_child_weight(value):
    if isinstance(value, bool) or not (np.isfinite(value) and value >= 0):
        raise ValueError(f"min_child_weight must be a finite number >= 0 (XGBoost's parameter), got {value!r}")
    return float(value)


_SYNC = []


def _iteration_sync(xgb):
    """The callback class of :meth:`XGBoostObjective.iteration_callback` (built once: it subclasses
    XGBoost's, an optional dependency)."""
    if not _SYNC:
        class IterationSync(xgb.callback.TrainingCallback):
            """Sets ``objective.iteration`` to the round ``xgb.train`` / ``xgb.cv`` is about to run."""

            def __init__(self, objective):
                super().__init__()
                self.objective = objective

            def before_training(self, model):
                self.objective._follow_engine = True
                return model

            def before_iteration(self, model, epoch, evals_log):
                self.objective.iteration = int(epoch)
                return False

            def after_iteration(self, model, epoch, evals_log):
                self.objective.iteration = int(epoch) + 1  # the round a further call would run
                return False

            def after_training(self, model):
                self.objective._follow_engine = False
                return model

        _SYNC.append(IterationSync)
    return _SYNC[0]


def xgboost_early_stopping(rounds, metric, data_name=None, save_best=False):
    """An ``xgb.callback.EarlyStopping`` that maximises one of the package's metrics.

    Says explicitly what :func:`xgboost_metric` otherwise sets for ``early_stopping_rounds=``
    (XGBoost alone would minimise ``err@k`` and ``mrr@k``), and picks the metric and data set that
    drive stopping. ``Booster.predict`` uses every tree unless told: pass
    ``iteration_range=(0, booster.best_iteration + 1)``, or ``save_best=True`` here.

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

    if isinstance(metric, EvalMetric) and not isinstance(metric, XGBoostEval):
        spec = metric.metric if metric.k is None else f"{metric.metric}@{metric.k}"
        raise ValueError(f"metric: {metric!r} is another engine's eval metric; "
                         f"pass xgboost_metric({spec!r}) or the string {spec!r}")
    name = metric.name if isinstance(metric, XGBoostEval) else XGBoostEval(metric).name
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    return xgb.callback.EarlyStopping(rounds=int(rounds), metric_name=name, data_name=data_name,
                                      maximize=True, save_best=save_best)


#: XGBoost's float32 DMatrix holds inf from float32's largest value on
_F32_INF = float(np.finfo(np.float32).max)
_F32_FIX = "; XGBoost keeps labels and weights as float32, which is inf from 3.4e38 on: rescale them"
#: the version of the attribute save_model writes beside the trees
_SAVE_VERSION = 1


def _sorted_ptr(n, group, qid, what):
    """group_ptr from sizes or a qid that must already be non-decreasing (XGBoost never sorts)."""
    if qid is not None:
        q = np.asarray(qid)
        if q.shape[0] != n:
            raise ValueError(f"{what}: qid has {q.shape[0]} rows, X has {n}")
        bad = np.flatnonzero(q[1:] < q[:-1])
        if bad.size:
            r = int(bad[0]) + 1
            raise ValueError(
                f"{what}: qid must be sorted in non-decreasing order (XGBoost requirement); row {r} has "
                f"qid {q[r]!r} after {q[r - 1]!r}. Sort rows by qid (stably) first; rows are never reordered here"
                f"{SCATTERED}")
    return require_queries(what, n, group=group, qid=qid)


class XGBLambdaRanker(EngineRanker):
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
        many rounds; :meth:`predict` then uses the rounds up to ``best_iteration_`` (0-based).
    score_metric : str
        What :meth:`score` returns: the mean over queries of this metric (default NDCG@10,
        LightGBM convention).
    **xgb_params
        Passed to ``xgb.train`` (``max_depth``, ``learning_rate``/``eta``, ``nthread``...).
        ``base_score`` defaults to 0 (XGBoost would use 0.5 under a custom objective).

    Attributes
    ----------
    booster_ (also :meth:`get_booster`), objective_, n_features_in_, feature_names_in_ (DataFrame
    input, its qid column excluded; :meth:`predict`/:meth:`score` then refuse other columns or
    another order with scikit-learn's ``ValueError``), feature_importances_ (total gain per
    feature, normalised to sum 1, as ``xgb.XGBRanker``'s default), best_iteration_, best_score_,
    evals_result_, train_queries_ (the training queries' qid values, row counts and row
    fingerprints, which :meth:`score` compares with; ``None`` when ``fit`` got ``group`` sizes,
    which carry no ids).

    ``best_iteration_`` is XGBoost's 0-based round index (``xgb.XGBRanker.best_iteration``,
    ``Booster.best_iteration``): the best round under early stopping, the last round
    (``n_estimators - 1``) without it; :meth:`predict` uses rounds ``0 .. best_iteration_``. Until
    issue #48 it counted rounds from 1 (the number of trees used): subtract 1 from an old value.
    ``best_score_`` holds each recorded metric at that round. The properties ``best_iteration`` and
    ``best_score`` are the booster's own (``AttributeError`` without early stopping, as in XGBoost).
    :meth:`save_model` / :meth:`load_model` write and read the booster with what :meth:`predict`
    and :meth:`score` need beside it.

    Notes
    -----
    Queries come from ``group``/``qid`` in :meth:`fit` and :meth:`score`, or, like
    ``xgb.XGBRanker``, from a ``qid`` column of a pandas DataFrame ``X`` (never a feature). Rows
    without queries raise ``ValueError`` in :meth:`fit`, :meth:`score` and for each ``eval_set``:
    a ranker never treats them as one query. In ``GridSearchCV`` / ``cross_val_score`` with
    ``GroupKFold`` use the DataFrame column, or numpy ``X`` with scikit-learn's metadata routing
    (``sklearn.set_config(enable_metadata_routing=True)``,
    ``set_fit_request(qid=True).set_score_request(qid=True)``, then ``fit(X, y, groups=qid, qid=qid)``
    on the search). Rows must be sorted by qid (XGBoost's rule); they are checked, never reordered.

    :meth:`score` refuses (``ValueError``) a query cut between fit and score: a scored qid that was
    a training qid must bring exactly the fitted rows of that query. A row splitter (``KFold``,
    ``ShuffleSplit``) puts part of each query in training and the rest in the scored fold, which
    inflates the score (MQ2008, 20 trees: NDCG@10 0.94 with ``KFold(5, shuffle=True)`` against 0.77
    with ``GroupKFold(5)``); split with ``GroupKFold`` / ``GroupShuffleSplit`` and ``groups=qid``.
    The training set itself, disjoint queries and group splits score as before. A test set whose
    qid values repeat the training file's for other queries: renumber it, or
    ``score(..., new_queries=True)``. Only qid values are compared: with ``group=`` sizes (in
    ``fit`` or ``score``) there are no ids and nothing is checked.
    """

    def __init__(self, objective="ndcg", n_estimators=100, eval_metric=None, early_stopping_rounds=None,
                 score_metric="ndcg@10", **xgb_params):
        super().__init__(objective, n_estimators, eval_metric, early_stopping_rounds, score_metric, **xgb_params)

    @announces_compilation("XGBLambdaRanker")  # a line on stderr while numba compiles (first run only)
    def fit(self, X, y, group=None, qid=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None, verbose=False, position=None):
        """Train on rows already grouped by query (``group`` sizes, a sorted ``qid``, or a ``qid`` column of X).

        ``sample_weight`` is per query (XGBoost ranking convention): finite, non-negative, not all
        zero (else ``ValueError`` naming the query). ``eval_set`` is a list of ``(X, y)`` with
        matching ``eval_group`` / ``eval_qid`` lists (or qid columns). With qid values (not
        ``group`` sizes) the training queries are recorded in ``train_queries_`` for :meth:`score`.
        Labels and weights are checked before XGBoost sees them (finite, non-negative, below
        float32's largest value, where XGBoost's float32 copy becomes inf): ``ValueError`` naming the
        argument, the eval set and the row or query. An eval set given as a DataFrame must have the
        training frame's columns in its order.
        ``position``: each training row's 0-based display position, read by an objective with ``bias=``
        (default there: the row's index inside its query, XGBoost's convention); the objective is copied with
        these positions, never modified.
        """
        xgb = require("xgboost")

        self._check_params()
        if y is None:
            raise ValueError("XGBLambdaRanker requires y to be passed, but the target y is None")
        obj = self.objective if isinstance(self.objective, XGBoostObjective) else XGBoostObjective(self.objective)
        X, qid = split_qid_column(X, qid)
        X = check_X(X, self, reset=True)
        y = check_below(check_labels(y, X.shape[0], name="y"), _F32_INF, "y", "XGBLambdaRanker.fit", _F32_FIX)
        n = X.shape[0]
        ptr = _sorted_ptr(n, group, qid, "XGBLambdaRanker.fit")
        if sample_weight is not None:
            try:
                sample_weight = check_sample_weight(sample_weight, ptr.shape[0] - 1, per="query", limit=_F32_INF,
                                                    fix=_F32_FIX)
            except ValueError as exc:
                raise ValueError(f"XGBLambdaRanker.fit: {exc}") from None
        if self.early_stopping_rounds is not None and not eval_set:
            raise ValueError("early_stopping_rounds needs an eval_set to watch (fit(..., eval_set=[(X_val, y_val)], "
                             "eval_qid=[qid_val]))")
        if position is not None:
            if obj.bias is None:
                raise ValueError("XGBLambdaRanker.fit: position= is read by an objective with bias= (pass "
                                 "objective=XGBoostObjective(metric, bias='ips'|'pairwise'|'additive', ...))")
            position = check_positions(position, ptr, name="position")
            obj = copy.copy(obj)  # the caller's objective keeps its own positions
            obj.positions = position
        evals = []
        for i, (Xe, ye) in enumerate(eval_set or []):
            where = f"XGBLambdaRanker.fit eval_set[{i}]"
            ge = None if eval_group is None else eval_group[i]
            Xe, qe = split_qid_column(Xe, None if eval_qid is None else eval_qid[i])
            Xe = check_X(Xe, self, where=where)
            pe = _sorted_ptr(Xe.shape[0], ge, qe, where)
            # checked here: a NaN label reached XGBoost's C++ check (a stack trace), a huge one became inf
            ye = check_below(check_labels(ye, Xe.shape[0], name=f"{where} y"), _F32_INF, "y", where, _F32_FIX)
            evals.append((Xe, ye, pe))
        dtrain = xgb.DMatrix(X, y, group=np.diff(ptr), weight=sample_weight)
        spec = self.eval_metric or f"{_eval_name(obj.metric)}@10"
        feval = xgboost_metric(spec)
        evals = [(dtrain, "train")] + [(xgb.DMatrix(Xe, ye, group=np.diff(pe)), f"validation_{i}")
                                       for i, (Xe, ye, pe) in enumerate(evals)]
        params = {"base_score": 0.0, "disable_default_eval_metric": 1, "min_child_weight": obj.min_child_weight}
        params.update(self._engine_params())
        if obj.bias == "additive" and obj.learning_rate is None:
            # the position biases' Newton step is scaled by the engine's learning rate (XGBoost's default 0.3)
            obj = copy.copy(obj)
            obj.learning_rate = float(params.get("learning_rate", params.get("eta", 0.3)))
        self.evals_result_ = {}
        obj.iteration = 0  # a new model: XGBoost numbers its rounds from 0 (pair_method="mean" draws by them)
        self.booster_ = xgb.train(params, dtrain, num_boost_round=self.n_estimators, obj=obj, evals=evals,
                                  custom_metric=feval, maximize=True, evals_result=self.evals_result_,
                                  early_stopping_rounds=self.early_stopping_rounds if len(evals) > 1 else None,
                                  verbose_eval=verbose)
        self.objective_ = obj
        stopped = self.early_stopping_rounds is not None and len(evals) > 1
        # XGBoost's convention: the 0-based index of the best round (the last one without early stopping)
        best = self.booster_.best_iteration if stopped else self.booster_.num_boosted_rounds() - 1
        self._fitted(X, best, best + 1, qid, ptr)
        return self

    def get_booster(self):
        """The fitted ``xgboost.Booster`` (as ``xgb.XGBRanker.get_booster``); ``booster_`` is the same object."""
        self._check_fitted()
        return self.booster_

    @property
    def best_iteration(self):
        """XGBoost's own ``Booster.best_iteration`` (0-based; ``AttributeError`` without early
        stopping, as ``xgb.XGBRanker.best_iteration``); ``best_iteration_`` is always defined."""
        return self.get_booster().best_iteration

    @property
    def best_score(self):
        """XGBoost's own ``Booster.best_score`` (``AttributeError`` without early stopping)."""
        return self.get_booster().best_score

    def save_model(self, fname):
        """Write the booster with ``Booster.save_model`` (format by extension: ``.json``, ``.ubj``),
        carrying what :meth:`predict` and :meth:`score` read beyond the trees in a booster attribute:
        ``best_iteration_``, ``best_score_``, ``n_features_in_``, ``feature_names_in_`` and
        ``train_queries_``. Hyper-parameters (``score_metric``...) are not saved: as with
        ``xgb.XGBRanker.load_model``, the estimator that loads the model supplies them.
        """
        self._check_fitted()
        meta = {"estimator": type(self).__name__, "version": _SAVE_VERSION,
                "best_iteration_": self.best_iteration_, "best_score_": self.best_score_,
                "n_features_in_": self.n_features_in_,
                "feature_names_in_": (self.feature_names_in_.tolist() if hasattr(self, "feature_names_in_") else None),
                "train_queries_": TrainingQueries.to_json(self.train_queries_)}
        booster = self.get_booster()
        booster.set_attr(lambda_objectives=json.dumps(meta))
        try:
            booster.save_model(fname)
        finally:
            booster.set_attr(lambda_objectives=None)

    def load_model(self, fname):
        """Read a model written by :meth:`save_model` (or a bare ``Booster.save_model`` file, whose
        ``best_iteration_`` is then XGBoost's ``best_iteration`` if it has one, else the last round,
        and which has no feature names and no training queries); returns ``self``. Predictions are
        the saved model's to the bit. ``objective_`` and ``evals_result_`` are not restored (as in
        ``xgb.XGBRanker``). A model saved by another estimator raises ``TypeError``, a damaged
        attribute ``ValueError``.
        """
        xgb = require("xgboost")

        booster = xgb.Booster()
        booster.load_model(fname)
        raw = booster.attr("lambda_objectives")
        booster.set_attr(lambda_objectives=None)
        meta = None
        if raw is not None:
            try:
                meta = json.loads(raw)
                if not isinstance(meta, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                raise ValueError(f"{fname}: the lambda_objectives attribute of this model is damaged ({exc})") from None
            if meta.get("estimator") != type(self).__name__:
                raise TypeError(f"{fname}: a model saved by {meta.get('estimator')!r}, not {type(self).__name__}")
            if meta.get("version") != _SAVE_VERSION:
                raise ValueError(f"{fname}: model attribute version {meta.get('version')!r} is not supported (this "
                                 f"version reads {_SAVE_VERSION})")
        n_rounds = booster.num_boosted_rounds()
        try:
            if meta is None:
                best = int(booster.attr("best_iteration")) if booster.attr("best_iteration") is not None else n_rounds - 1
                n_features, names, queries, best_score = booster.num_features(), None, None, {}
            else:
                best, n_features, names = meta["best_iteration_"], meta["n_features_in_"], meta["feature_names_in_"]
                queries, best_score = TrainingQueries.from_json(meta["train_queries_"]), meta["best_score_"]
            if isinstance(best, bool) or not isinstance(best, int) or not 0 <= best < max(n_rounds, 1) \
                    or n_features != booster.num_features() or (names is not None and len(names) != n_features):
                raise ValueError(f"best_iteration_ {best!r} of {n_rounds} rounds, {n_features!r} features for a "
                                 f"booster of {booster.num_features()}")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{fname}: the lambda_objectives attribute of this model is damaged or does not match "
                             f"its trees ({type(exc).__name__}: {exc})") from None
        self.booster_ = booster
        self.best_iteration_, self.best_score_, self.n_features_in_ = best, best_score, n_features
        self.train_queries_ = queries
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        for attr in ("objective_", "evals_result_"):
            if hasattr(self, attr):
                delattr(self, attr)
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

    def predict(self, X):
        """Raw ranking scores (margins; only their order within a query matters), from the first
        ``best_iteration_ + 1`` rounds."""
        return self._predict(self._input(X))

    def _predict(self, X):
        """Margins of checked features ``X`` from the first ``best_iteration_ + 1`` rounds."""
        xgb = require("xgboost")

        return self.booster_.predict(xgb.DMatrix(X), output_margin=True,
                                     iteration_range=(0, self.best_iteration_ + 1))

