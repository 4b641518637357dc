"""LightGBM: :class:`LightGBMObjective` for ``lgb.train`` and ``lgb.LGBMRanker``, and
:class:`LGBMLambdaRanker` (a scikit-learn ranker that early-stops on the objective's own metric).

LightGBM's sklearn wrapper counts parameters and passes ``group`` only to a 4-parameter
callable; ``__call__`` has four, the ``lgb.train`` path uses the first two.
"""

import copy

import numpy as np

from .._kernels.compile import announces_compilation
from .._core.optional import require
from ._sklearn import EngineRanker, check_below, check_X, require_queries
from ..checks import check_labels, check_positions, check_sample_weight
from ..data.groups import sizes_to_ptr, split_qid_column
from ._base import MISSING, LambdaObjective, eval_name
from .eval_metrics import lightgbm_metric

__all__ = ["LightGBMObjective", "LGBMLambdaRanker"]


class _SklearnCall:
    """Stands for "the data of LGBMRanker's 4-argument call" in the per-thread cache."""


_SKLEARN_CALL = _SklearnCall()


def _lgb_hess_threshold(params):
    for key in ("min_sum_hessian_in_leaf", "min_sum_hessian_per_leaf", "min_sum_hessian",
                "min_hessian", "min_child_weight"):
        if params and key in params:
            return float(params[key])
    return 1e-3


_LEARNING_RATE = ("learning_rate", "shrinkage_rate", "eta")


def _lgb_learning_rate(params):
    """LightGBM's ``learning_rate`` (or an alias) from the training parameters ``lgb.train`` copies onto the
    Dataset; 0.1 (LightGBM's default) when none is given."""
    for key in _LEARNING_RATE:
        if params and key in params:
            return float(params[key])
    return 0.1


def _lgb_positions(dataset):
    """The Dataset's position ids, or ``None``. LightGBM keeps no display positions: it renumbers the values
    given as ``position=`` 0, 1, 2, ... in order of first appearance (``Metadata::SetPosition``), and
    ``get_position()`` returns those ids once the Dataset is constructed."""
    get = getattr(dataset, "get_position", None)
    pos = get() if get is not None else None
    return None if pos is None or len(pos) == 0 else np.asarray(pos)


def _first_appearance_ids(positions):
    """``positions`` renumbered as LightGBM does: ids 0, 1, 2, ... in order of first appearance."""
    values, first, inverse = np.unique(np.asarray(positions), return_index=True, return_inverse=True)
    ids = np.empty(values.shape[0], dtype=np.int64)
    ids[np.argsort(first, kind="stable")] = np.arange(values.shape[0])
    return ids[inverse]


def _engine_positions(obj, dataset):
    """The positions an objective with ``bias=`` reads from a LightGBM Dataset (``None``: its own ``positions=``
    or each row's index in its query). LightGBM's ids serve ``"additive"`` (one ``b`` per id, as the engine);
    ``"ips"`` and ``"pairwise"`` index propensities / factors by the display rank, which the ids have lost."""
    ids = _lgb_positions(dataset)
    if ids is None:
        return None
    if obj.positions is not None:
        if np.shape(obj.positions) != ids.shape or not np.array_equal(_first_appearance_ids(obj.positions), ids):
            raise ValueError("the objective's positions= and the Dataset's position= disagree (LightGBM numbers "
                             "positions in order of first appearance; the two are not the same positions): pass "
                             "them once")
        return None
    if obj.bias != "additive":
        raise ValueError(f"bias={obj.bias!r} needs each row's display rank, but LightGBM renumbers a Dataset's "
                         "position= in order of first appearance (the values are lost once it is constructed): pass "
                         f"positions= to {type(obj).__name__} (the same array), or use bias='additive', which "
                         "needs the ids only")
    return ids


def check_whole_queries(dataset):
    """Raise ``ValueError`` when ``dataset`` is a row subset that cuts queries of its parent.

    ``lgb.cv`` builds query-aware folds only for the objectives it knows by name; with a callable
    objective it splits rows at random, so every query is spread over the folds and each fold's
    validation metric is computed on fragments of queries (NDCG@10 0.89–0.91 on MQ2008 where whole
    queries give 0.75–0.78). A subset made by ``Dataset.subset`` keeps its row indices and parent,
    which is how the cut is seen here.
    """
    used = getattr(dataset, "used_indices", None)
    parent = getattr(dataset, "reference", None)
    if used is not None and parent is not None:
        sizes = parent.get_group() if parent.get_field("group") is not None else None
        if sizes is not None:
            ptr = sizes_to_ptr(np.asarray(sizes), int(np.sum(sizes)))
            used = np.asarray(used, dtype=np.int64)
            query = np.searchsorted(ptr, used, side="right") - 1
            kept = np.bincount(query, minlength=ptr.shape[0] - 1)
            cut = np.flatnonzero((kept > 0) & (kept < np.diff(ptr)))
            if cut.size:
                q = int(cut[0])
                raise ValueError(
                    f"the training data is a row subset that cuts {cut.size} queries of its parent Dataset "
                    f"(query {q} keeps {int(kept[q])} of its {int(ptr[q + 1] - ptr[q])} rows): lgb.cv splits rows "
                    "at random for a callable objective. Pass query-aware folds: lgb.cv(..., folds=GroupKFold(n)) "
                    "(LightGBM hands the splitter each row's query as groups), or folds=GroupKFold(n).split(X, "
                    "groups=qid)")
    try:
        dataset._lo_whole_queries = True  # checked once per Dataset
    except AttributeError:
        pass


class LightGBMObjective(LambdaObjective):
    """A LambdaMART objective for LightGBM (``lgb.train`` and ``lgb.LGBMRanker``).

    Parameters
    ----------
    metric : {"ndcg", "err", "map", "mrr", "ranknet"} or ``"name@k"``
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
    bias : None or "ips" or "pairwise" or "additive"
        Debias click labels by each row's display position (0-based): ``"ips"`` weights each pair by
        ``1/propensities[position of its clicked row]`` (unbiased only for objectives linear in the labels:
        DCG with linear gain; not NDCG's normaliser, ERR, AP or RR); ``"pairwise"`` is Unbiased LambdaMART
        (Hu et al. 2019) with the paper's RankNet cost, its factors ``t⁺``/``t⁻`` re-estimated every round
        (``bias_norm``, XGBoost's ``lambdarank_bias_norm``, default 1) and readable as :attr:`bias_factors_`;
        ``"additive"`` is LightGBM's model ``score + b[position]`` (one Newton step on ``b`` a round, scaled by
        the training ``learning_rate``, regularised by ``position_bias_regularization``, LightGBM's
        ``lambdarank_position_bias_regularization``), ``b`` readable as :attr:`position_bias_`. Full definitions:
        :func:`lambda_objectives.lambda_gradients`. ``preset=None`` has all three for every pair objective
        (``"additive"`` for every objective); ``preset="lightgbm"`` has ``"additive"`` (native ``lambdarank``
        with ``Dataset(position=)``, bit for bit), ``preset="xgboost"`` ``"pairwise"`` (its
        ``lambdarank_unbiased``, bit for bit) and ``"additive"``.
    propensities, bias_norm, position_bias_regularization, learning_rate
        The options of the ``bias=`` way that reads each (an option without its way is an error).
        ``learning_rate``: ``"additive"``'s step where the engine does not tell the objective its own
        (``LGBMRanker``'s 4-argument call, XGBoost); ``lgb.train``'s is read from its params.
    positions : array-like of int, optional
        Each training row's display position (0-based rank); without it, ``Dataset(position=)``, else a row's
        index inside its query (XGBoost's convention). LightGBM renumbers a Dataset's positions in order of
        first appearance, so ``Dataset(position=)`` alone serves ``"additive"`` (``position_bias_`` then per
        LightGBM id), while ``"ips"``/``"pairwise"`` need ``positions=`` (with both, they must agree). Checked
        per data set: integers >= 0, one per row, each at most once per query.
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
    # LightGBM's Dataset turns an inf label or weight into its float32 1e38 and an inf init_score
    # into 1e300 (a NaN into 0): what reaches the objective at those magnitudes was not finite
    _stored_inf = (float(np.float32(1e38)), 1e300)

    def __call__(self, preds, train_data, weight=MISSING, group=MISSING):
        if group is MISSING:  # lgb.train path: (preds, Dataset)
            bounds = train_data.get_field("group")
            if bounds is None:
                raise ValueError("the LightGBM Dataset has no group: pass group=sizes to lgb.Dataset")
            if getattr(train_data, "_lo_whole_queries", None) is not True:
                check_whole_queries(train_data)
            params = getattr(train_data, "params", None)
            self._check_engine_bias_params(params)
            positions = _engine_positions(self, train_data) if self.bias is not None else None
            st = self._state(train_data, train_data.get_label(), bounds, train_data.get_weight(),
                             _lgb_hess_threshold(params), positions=positions,
                             learning_rate=_lgb_learning_rate(params) if self.bias == "additive" else None)
            return self._compute(st, preds, initial=train_data.get_init_score)
        y_true, y_pred = preds, train_data  # LGBMRanker path
        if group is None:
            raise ValueError("LGBMRanker passed no group to the objective: fit(..., group=sizes)")
        # LGBMRanker does not tell the objective its learning_rate: bias='additive' needs learning_rate= here
        st = self._state(_SKLEARN_CALL, y_true, sizes_to_ptr(group, len(y_true)), weight, 1e-3)
        return self._compute(st, y_pred)

    def _check_engine_bias_params(self, params):
        """LightGBM hands a custom objective its parameters but applies none of lambdarank's: a
        ``lambdarank_position_bias_regularization`` there that this objective does not use would be ignored."""
        if not params:
            return
        for key in ("lambdarank_position_bias_regularization",):
            if key in params and (self.bias != "additive" or float(params[key]) != self.position_bias_regularization):
                raise ValueError(f"{key}={params[key]!r} in LightGBM's params is not applied to a custom objective: "
                                 f"pass position_bias_regularization={params[key]!r} (with bias='additive') to "
                                 f"{type(self).__name__} instead")

    #: explicit 4-argument form for ``LGBMRanker(objective=obj.sklearn)``
    def sklearn(self, y_true, y_pred, weight, group):
        """``LGBMRanker`` objective form ``(y_true, y_pred, weight, group_sizes)``."""
        return self(y_true, y_pred, weight, group)


#: why the ranker refuses labels and weights from LightGBM's stored inf on
_STORED_FIX = "; LightGBM stores inf, and anything from 1e38 on, as 1e38: rescale them"


class LGBMLambdaRanker(EngineRanker):
    """A scikit-learn ranker over ``lgb.train`` with a :class:`LightGBMObjective` that evaluates,
    and early-stops, on the objective's own metric.

    ``lgb.LGBMRanker(objective=obj)`` adds LightGBM's default ranking metrics (``ndcg@1..5``) and
    early-stops on whichever of them stops improving first, which is not the metric the objective
    optimises (``best_iteration_`` 3 where ERR@10 peaks at 10, in the case that prompted this class).
    Here LightGBM's metrics are switched off (``metric="None"``) and ``eval_metric`` (ours) is the
    only one recorded and watched.

    Parameters
    ----------
    objective : LightGBMObjective or str
        An objective instance, or a metric name (``"ndcg"``, ``"err@10"``, ``"yetirank"``...) for
        ``LightGBMObjective(objective)``.
    n_estimators : int
        Boosting rounds (LightGBM's ``num_boost_round``).
    eval_metric : str or None
        Our metric on each ``eval_set`` (``"ndcg@10"``, ``"err@5"``...; :func:`lightgbm_metric`), maximised;
        default the objective's metric at 10 (NDCG@10 for objectives without one).
    early_stopping_rounds : int or None
        Stop when ``eval_metric`` on the last ``eval_set`` has not improved for this many rounds;
        :meth:`predict` then uses the best iteration.
    score_metric : str
        What :meth:`score` returns: the mean over queries of this metric (default NDCG@10,
        LightGBM convention).
    **lgb_params
        LightGBM parameters (``num_leaves``, ``learning_rate``, ``min_data_in_leaf``, ``num_threads``...)
        under LightGBM's names; ``metric`` is refused (it would add LightGBM's metrics back).

    Attributes
    ----------
    booster_, objective_, n_features_in_ (``n_features_``), feature_names_in_ (DataFrame input, its
    qid column excluded; :meth:`predict`/:meth:`score` then refuse other columns or another order
    with scikit-learn's ``ValueError``), feature_name_ (``Column_0``... without a DataFrame, as
    ``lgb.LGBMRanker``), feature_importances_ (split counts, LightGBM's default),
    best_iteration_, best_score_, evals_result_ (``{"valid_0": {"lo_ndcg@10": [...]}}``), n_iter_
    (``n_estimators_``: the rounds the booster keeps), train_queries_ (the training queries,
    which :meth:`score` compares with; ``None`` when ``fit`` got ``group`` sizes).

    ``best_iteration_`` follows ``lgb.LGBMRanker``: the 1-based best round under
    ``early_stopping_rounds`` (``lgb.train`` then keeps the trees up to it), 0 without it
    (:meth:`predict` then uses every round). Until issue #48 it was the number of rounds
    without early stopping. ``best_score_`` holds each metric at that round (the last one
    without early stopping).

    Notes
    -----
    Queries come from ``group`` (sizes) or ``qid`` in :meth:`fit` and :meth:`score`, or from a
    ``qid`` column of a pandas DataFrame ``X`` (never a feature); rows without queries raise
    ``ValueError`` (see ``XGBLambdaRanker`` for ``GridSearchCV``). Per-document ``sample_weight``
    as in LightGBM: finite, non-negative, not all zero (LightGBM trains a NaN weight as 0, an inf one
    gives an all-zero model, a negative one a wrong model), else ``ValueError`` naming the row and its query.

    :meth:`score` refuses a query cut between fit and score (a row splitter such as ``KFold``:
    MQ2008, 20 trees, NDCG@10 0.94 against 0.78 with ``GroupKFold``), as ``XGBLambdaRanker``
    describes; ``score(..., new_queries=True)`` when a test set's qids repeat the training
    file's for other queries (renumbering them is safer). With ``group=`` sizes nothing is checked.
    """

    def __init__(self, objective="ndcg", n_estimators=100, eval_metric=None, early_stopping_rounds=None,
                 score_metric="ndcg@10", **lgb_params):
        super().__init__(objective, n_estimators, eval_metric, early_stopping_rounds, score_metric, **lgb_params)

    def _dataset(self, lgb, X, y, ptr, weight, what, reference=None):
        if weight is not None:
            name = "sample_weight" if reference is None else "eval_sample_weight"
            try:
                weight = check_sample_weight(weight, X.shape[0], ptr, per="row", name=name,
                                             limit=LightGBMObjective._stored_inf[0], fix="; rescale them")
            except ValueError as exc:
                raise ValueError(f"{what}: {exc}") from None
        y = check_below(y, LightGBMObjective._stored_inf[0], "y", what, _STORED_FIX)
        return lgb.Dataset(X, y, group=np.diff(ptr), weight=weight, reference=reference,
                           params={"verbose": -1}, free_raw_data=False)

    @announces_compilation("LGBMLambdaRanker")  # a line on stderr while numba compiles (first run only)
    def fit(self, X, y, group=None, qid=None, sample_weight=None, eval_set=None, eval_group=None, eval_qid=None,
            eval_sample_weight=None, callbacks=None, position=None):
        """Train on ``X``, ``y`` and their queries (``group`` sizes, ``qid``, or a qid column of X).

        ``eval_set`` is a list of ``(X, y)`` with matching ``eval_group`` / ``eval_qid`` lists (or
        qid columns), ``eval_sample_weight`` a list of per-document weights (checked as
        ``sample_weight``); ``callbacks`` are passed to ``lgb.train`` after ours. With qid values
        (not ``group`` sizes) the training queries are recorded in ``train_queries_`` for :meth:`score`.
        ``position``: each training row's 0-based display position, read by an objective with ``bias=``
        (``LightGBMObjective(..., bias="additive")`` etc.), which is copied with these positions (not put in
        the Dataset, where LightGBM would renumber them), never modified.
        """
        lgb = require("lightgbm")

        self._check_params()
        params = self._engine_params()
        if "metric" in params or "metrics" in params:
            raise ValueError("LGBMLambdaRanker evaluates with eval_metric (ours) only; a LightGBM 'metric' would "
                             "be recorded beside it and could drive early stopping: set eval_metric instead")
        if y is None:
            raise ValueError("LGBMLambdaRanker requires y to be passed, but the target y is None")
        obj = self.objective if isinstance(self.objective, LightGBMObjective) else LightGBMObjective(self.objective)
        X, qid = split_qid_column(X, qid)
        X = check_X(X, self, reset=True)
        y = check_labels(y, X.shape[0], name="y")
        ptr = require_queries("LGBMLambdaRanker.fit", X.shape[0], group=group, qid=qid)
        if self.early_stopping_rounds is not None and not eval_set:
            raise ValueError("early_stopping_rounds needs an eval_set to watch (fit(..., eval_set=[(X_val, y_val)], "
                             "eval_qid=[qid_val]))")
        if position is not None:
            if obj.bias is None:
                raise ValueError("LGBMLambdaRanker.fit: position= is read by an objective with bias= (pass "
                                 "objective=LightGBMObjective(metric, bias='ips'|'pairwise'|'additive', ...))")
            # on a copy of the objective, not the Dataset: LightGBM would renumber the positions
            obj = copy.copy(obj)
            obj.positions = check_positions(position, ptr, name="position")
        dtrain = self._dataset(lgb, X, y, ptr, sample_weight, "LGBMLambdaRanker.fit")
        valid, valid_names = [], []
        for i, (Xe, ye) in enumerate(eval_set or []):
            ge = None if eval_group is None else eval_group[i]
            Xe, qe = split_qid_column(Xe, None if eval_qid is None else eval_qid[i])
            where = f"LGBMLambdaRanker.fit eval_set[{i}]"
            Xe = check_X(Xe, self, where=where)
            pe = require_queries(where, Xe.shape[0], group=ge, qid=qe)
            we = None if eval_sample_weight is None else eval_sample_weight[i]
            valid.append(self._dataset(lgb, Xe, check_labels(ye, Xe.shape[0], name=f"{where} y"), pe, we, where,
                                       reference=dtrain))
            valid_names.append(f"valid_{i}")
        feval = lightgbm_metric(self.eval_metric or f"{eval_name(obj.metric)}@10")
        self.evals_result_ = {}
        cbs = [lgb.record_evaluation(self.evals_result_)]
        if self.early_stopping_rounds is not None:
            cbs.append(lgb.early_stopping(self.early_stopping_rounds, first_metric_only=True, verbose=False))
        cbs += list(callbacks or [])
        train_params = {"verbose": -1, **params, "objective": obj, "metric": "None"}
        self.booster_ = lgb.train(train_params, dtrain, num_boost_round=self.n_estimators, valid_sets=valid,
                                  valid_names=valid_names, feval=feval if valid else None, callbacks=cbs)
        self.objective_ = obj
        # LightGBM's convention (lgb.LGBMRanker.best_iteration_): the 1-based best round under early
        # stopping, 0 without it (predict then uses every round)
        best = self.booster_.best_iteration if self.early_stopping_rounds is not None else 0
        self._fitted(X, best, best or self.booster_.current_iteration(), qid, ptr)
        return self

    @property
    def n_iter_(self):
        """Rounds trained (``lgb.LGBMRanker.n_iter_``): below ``n_estimators`` after early stopping."""
        self._check_fitted()
        return self.booster_.current_iteration()

    n_estimators_ = n_iter_

    @property
    def n_features_(self):
        """``n_features_in_`` under ``lgb.LGBMRanker``'s other name."""
        self._check_fitted()
        return self.n_features_in_

    @property
    def feature_name_(self):
        """Feature names as ``lgb.LGBMRanker.feature_name_``: the DataFrame's columns (without the qid
        column), ``Column_0``, ``Column_1``... otherwise."""
        self._check_fitted()
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"Column_{i}" for i in range(self.n_features_in_)]

    @property
    def feature_importances_(self):
        """Split counts per feature (``LGBMRanker``'s default ``importance_type="split"``)."""
        self._check_fitted()
        return self.booster_.feature_importance("split").astype(float)

    def predict(self, X):
        """Raw ranking scores (only their order within a query matters), at ``best_iteration_``."""
        return self._predict(self._input(X))

    def _predict(self, X):
        """Scores of checked features ``X``: the first ``best_iteration_`` rounds, every round when it is 0."""
        return self.booster_.predict(X, num_iteration=self.best_iteration_ or None)

