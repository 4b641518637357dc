"""``MARTRanker``: the sklearn-style reference MART / LambdaMART trainer."""

import json
import math
import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from lambda_objectives import numba_threads
from lambda_objectives._kernels.compile import announces_compilation
from lambda_objectives.adapters._sklearn import TrainingQueries, check_scored_queries, check_X, require_queries
from lambda_objectives.data.groups import split_qid_column

from .binning import BinMapper, pack_bins
from .grower import GROWTH, NODE_DTYPE, TreeGrower, predict_binned, root_histograms
from .losses import OBJECTIVES, XENDCG, Lambda, LeastSquares, Listwise, Logistic, McRank, YetiRank
from .splitting import CRITERIA

#: 2: best_iteration_, feature names and training queries saved (version 1 lost them)
FORMAT_VERSION = 2
HISTORY_METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err@10")


class MARTRanker(BaseEstimator):
    """Gradient-boosted regression trees (Friedman's MART) on the package's ranking gradients.

    A research instrument: every choice the SE-vs-OLE paper (Xia, Zhai & Wang) varies is a
    parameter, defaults match LightGBM where LightGBM has the same knob, and the gradients of
    ``objective="lambda"`` come from :func:`lambda_objectives.lambda_gradients`, so split
    criteria and engines can be compared on identical gradients.

    Parameters
    ----------
    objective : {"lambda", "ls", "logistic", "mcrank"}
        ``"mcrank"`` takes integer grades 0..99 (``reference.losses.MCRANK_MAX_GRADE``; one tree per grade per round).
    metric, k, sigma : the lambda objective (any of ``lambda_objectives.objectives.OBJECTIVES``: "ndcg", "err", "map",
        "mrr", "ranknet", the LambdaLoss weights, the listwise "xendcg", "softmax" and "listmle" or the
        sampled "yetirank", whose options go in ``kernel_options`` (``beta``/``lambda_``, ``ties``...) and
        whose seed is ``random_state``), cutoff, σ
    criterion : {"se", "ole", "ole_exact"}
        Split criterion; see ``reference.splitting``.
    growth : {"best_first", "breadth_first", "depth_first"}
    num_leaves, learning_rate, n_estimators, max_bin, min_data_in_leaf, min_sum_hessian_in_leaf,
    lambda_l2, max_depth : as LightGBM's (``max_depth`` None, -1 or any value <= 0: no limit)
    leaf_value : {"newton", "mean"}; leaf_hessian : {"diagonal", "exact"}
    subsample : float
        Fraction of queries each tree is fitted on (stochastic boosting, by query).
    colsample : float
        Fraction of features each tree may split on.
    random_state : int
    n_threads : int or None
    threshold, balanced : the logistic loss's relevance threshold and class balancing
    kernel_options : dict, optional
        Extra keywords for ``lambda_gradients`` (``gain``, ``label_gain``, ``normalize``, ...).
    score_metric : str
        What :meth:`score` returns: the mean over queries of this metric (``"ndcg@10"``, ``"err@5"``...).
    importance_type : {"split", "gain"}
        What ``feature_importances_`` holds (LightGBM's ``importance_type``).

    Attributes
    ----------
    trees_, n_features_in_, feature_names_in_ (DataFrame input), feature_importances_,
    best_iteration_, best_score_ (``{set: {metric: value}}`` at the best iteration),
    evals_result_ (``{set: {metric: [values per iteration]}}``, the same as ``history_``),
    train_queries_ (the training queries' qid values, row counts and row fingerprints, which
    :meth:`score` compares with; ``None`` when ``fit`` got ``group``/``group_ptr``, which carry no ids).
    :meth:`save` keeps them all (format 2). ``feature_names_in_`` (the qid column excluded) and
    ``n_features_in_`` follow scikit-learn's rules: :meth:`predict`/:meth:`score` raise its
    ``ValueError`` for other columns or another order, and warn for an array after a DataFrame fit
    or the reverse.

    Notes
    -----
    A scikit-learn estimator: ``clone``, ``GridSearchCV`` and ``cross_val_score`` work with
    ``GroupKFold``. Queries come from ``group``/``qid``/``group_ptr`` in :meth:`fit`, or from a ``qid``
    column of a pandas DataFrame ``X`` (as ``xgboost.XGBRanker`` reads it; the column is not a
    feature), which also lets :meth:`score` see the queries of a cross-validation split. Rows
    without queries raise ``ValueError`` (in :meth:`fit`, :meth:`score` and for each eval set): a
    ranker never treats them as one query. With numpy ``X`` inside ``GridSearchCV`` use
    scikit-learn's metadata routing (``set_fit_request(qid=True).set_score_request(qid=True)``).
    :meth:`score` refuses a query cut between fit and score (a row splitter such as ``KFold``
    inflates the score: MQ2008, 20 trees, NDCG@10 0.94 against 0.77 with ``GroupKFold``); split
    with ``GroupKFold`` / ``GroupShuffleSplit`` and ``groups=qid``.

    After early stopping, :meth:`predict` uses the first ``best_iteration_`` rounds (as LightGBM
    and XGBoost do); ``n_iterations`` picks another number.
    """

    def __init__(self, objective="lambda", metric="ndcg", k=None, sigma=1.0, criterion="ole", growth="best_first",
                 num_leaves=31, learning_rate=0.1, n_estimators=100, max_bin=255, min_data_in_leaf=20,
                 min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0, max_depth=None, leaf_value="newton",
                 leaf_hessian="diagonal", subsample=1.0, colsample=1.0, random_state=0, n_threads=None,
                 threshold=0.0, balanced=False, kernel_options=None, score_metric="ndcg@10",
                 importance_type="split"):
        self.objective, self.metric, self.k, self.sigma = objective, metric, k, sigma
        self.criterion, self.growth, self.num_leaves = criterion, growth, num_leaves
        self.learning_rate, self.n_estimators, self.max_bin = learning_rate, n_estimators, max_bin
        self.min_data_in_leaf, self.min_sum_hessian_in_leaf = min_data_in_leaf, min_sum_hessian_in_leaf
        self.lambda_l2, self.max_depth = lambda_l2, max_depth
        self.leaf_value, self.leaf_hessian = leaf_value, leaf_hessian
        self.subsample, self.colsample, self.random_state = subsample, colsample, random_state
        self.n_threads, self.threshold, self.balanced = n_threads, threshold, balanced
        self.kernel_options = kernel_options
        self.score_metric, self.importance_type = score_metric, importance_type

    # ------------------------------------------------------------------ parameters
    def _check_params(self):
        """Validate every hyper-parameter up front; each error names the parameter."""
        from lambda_objectives.objectives import OBJECTIVES as LAMBDA_OBJECTIVES

        def choice(name, options):
            if getattr(self, name) not in options:
                raise ValueError(f"{name} must be one of {tuple(options)}, got {getattr(self, name)!r}")

        def integer(name, low, allow_none=False):
            v = getattr(self, name)
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")

        def real(name, low, inclusive=True, high=None):
            v = getattr(self, name)
            ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) \
                and (v >= low if inclusive else v > low) and (high is None or v <= high)
            if not ok:
                bound = f"{'>=' if inclusive else '>'} {low}" + ("" if high is None else f" and <= {high}")
                raise ValueError(f"{name} must be a finite number {bound}, got {v!r}")

        choice("objective", OBJECTIVES)
        choice("criterion", CRITERIA)
        choice("growth", GROWTH)
        choice("leaf_value", ("newton", "mean"))
        choice("leaf_hessian", ("diagonal", "exact"))
        choice("importance_type", ("split", "gain"))
        from lambda_objectives import parse_metric

        parse_metric(self.score_metric)
        if self.objective == "lambda":
            choice("metric", LAMBDA_OBJECTIVES)
        # YetiRank's pairs are drawn inside its kernel: the exact OLE criterion has no pair list to use
        pairwise = self.objective == "lambda" and self.metric not in ("xendcg", "yetirank", "softmax", "listmle")
        if self.criterion == "ole_exact" and not pairwise:
            raise ValueError("criterion='ole_exact' is defined for pairwise (lambda) objectives only")
        if self.leaf_hessian == "exact" and not pairwise:
            raise ValueError("leaf_hessian='exact' is defined for pairwise (lambda) objectives only")
        integer("num_leaves", 2)
        integer("n_estimators", 0)
        integer("max_bin", 2)
        integer("min_data_in_leaf", 0)
        integer("k", 1, allow_none=True)
        if self.max_depth is not None and (isinstance(self.max_depth, bool)
                                           or not isinstance(self.max_depth, numbers.Integral)):
            raise ValueError(f"max_depth must be an integer (<= 0 or None: no limit), got {self.max_depth!r}")
        if self.n_threads is not None and self.n_threads != -1:
            integer("n_threads", 1)
        real("learning_rate", 0.0, inclusive=False)
        real("sigma", 0.0, inclusive=False)
        real("lambda_l2", 0.0)
        real("min_sum_hessian_in_leaf", 0.0)
        real("subsample", 0.0, inclusive=False, high=1.0)
        real("colsample", 0.0, inclusive=False, high=1.0)
        real("threshold", -math.inf)
        if self.kernel_options is not None and not isinstance(self.kernel_options, dict):
            raise ValueError(f"kernel_options must be a dict of lambda_gradients keywords, got {self.kernel_options!r}")

    def _depth_limit(self):
        """``max_depth`` as the grower takes it: LightGBM's ``<= 0`` (and ``None``) mean no limit."""
        return None if self.max_depth is None or self.max_depth <= 0 else int(self.max_depth)

    def get_equivalent_params(self, lib="lightgbm"):
        """Parameters of LightGBM or XGBoost that build the same trees from the same gradients
        (OLE criterion, best-first growth; for parity runs, as sklearn's ``get_equivalent_estimator``)."""
        if lib == "lightgbm":
            p = {"num_leaves": self.num_leaves, "learning_rate": self.learning_rate, "max_bin": self.max_bin,
                 "min_data_in_leaf": self.min_data_in_leaf, "min_sum_hessian_in_leaf": self.min_sum_hessian_in_leaf,
                 "lambda_l2": self.lambda_l2, "max_depth": -1 if self._depth_limit() is None else self._depth_limit(),
                 "bagging_fraction": 1.0, "feature_fraction": self.colsample, "min_gain_to_split": 0.0,
                 "lambda_l1": 0.0, "boost_from_average": self.objective == "ls", "verbose": -1,
                 # our quantile bins have no minimum count per bin
                 "min_data_in_bin": 1}
            return p
        if lib == "xgboost":
            return {"max_leaves": self.num_leaves, "grow_policy": "lossguide", "tree_method": "hist",
                    "eta": self.learning_rate, "max_bin": self.max_bin, "min_child_weight": self.min_sum_hessian_in_leaf,
                    "reg_lambda": self.lambda_l2, "reg_alpha": 0.0, "gamma": 0.0,
                    "max_depth": 0 if self._depth_limit() is None else self._depth_limit(), "colsample_bytree": self.colsample,
                    "base_score": 0.0}
        raise ValueError(f"lib must be 'lightgbm' or 'xgboost', got {lib!r}")

    # ------------------------------------------------------------------ fitting
    def _loss(self, y, position=None):
        if self.objective == "ls":
            return LeastSquares()
        if self.objective == "logistic":
            return Logistic(self.threshold, self.balanced)
        if self.objective == "mcrank":
            return McRank.from_labels(y)
        if self.metric == "xendcg":
            return XENDCG(self.random_state, self.n_threads, **(self.kernel_options or {}))
        if isinstance(self.metric, str) and self.metric.split("@")[0].strip().lower() == "plrank":
            # its draws need a round counter, which Lambda does not keep
            raise ValueError("metric='plrank' is not available in the reference trainer; train it with "
                             "LightGBMObjective / XGBoostObjective (or plrank_gradients)")
        if self.metric == "yetirank":
            if self.k is not None or self.sigma != 1.0:
                raise ValueError("metric='yetirank' has no cutoff and no sigma (CatBoost's PairLogit): "
                                 f"k must be None and sigma 1.0, got k={self.k!r}, sigma={self.sigma!r}")
            return YetiRank(self.random_state, self.n_threads, positions=position, learning_rate=self.learning_rate,
                            **(self.kernel_options or {}))
        if self.metric in ("softmax", "listmle"):
            return Listwise(self.metric, self.k, self.sigma, self.n_threads, **(self.kernel_options or {}))
        return Lambda(self.metric, self.k, self.sigma, self.n_threads,
                      pairs=self.criterion == "ole_exact" or self.leaf_hessian == "exact", positions=position,
                      learning_rate=self.learning_rate, **(self.kernel_options or {}))

    @announces_compilation("MARTRanker")  # a line on stderr while numba compiles (first run only)
    def fit(self, X, y, group=None, qid=None, *, group_ptr=None, eval_set=None, eval_group=None,
            init_score=None, eval_init_score=None, early_stopping_rounds=None, eval_metric="ndcg@10",
            history_loss=True, history_metrics=HISTORY_METRICS, history_options=None, verbose=False, bin_mapper=None,
            position=None):
        """Fit on ``X`` (dense or scipy sparse), ``y`` and the queries (``group`` sizes, ``qid`` or ``group_ptr``).

        ``eval_set``: list of ``(X, y, group)`` (or ``(X, y)`` with ``eval_group``, a list with one
        entry per eval set; a 3-tuple whose ``eval_group`` entry is not ``None`` raises, since one of
        the two would be ignored); history
        (NDCG@1/3/10, ERR@10 — NaN when labels are not integer grades — and the loss) is recorded
        on the training data and on each of them; ``history_metrics`` names other metrics to record
        (``"err"`` for full-list ERR...) and ``history_options`` passes metric options to
        :func:`lambda_objectives.metric_values` (e.g. ``{"max_label": 4, "convention": "trec"}``:
        ERR's grade scale fixed for every set). ``init_score``: a base model's scores
        to start from (model adaptation, Burges §8; :meth:`predict` then returns the boosted
        correction, to add to the base model's scores); otherwise the loss's optimal constant. Early stopping
        watches ``eval_metric`` on the last eval set: one of ``history_metrics`` (maximised) or
        ``"loss"`` (minimised); a name that is not recorded, or that the eval labels cannot score,
        raises ``ValueError`` before training. ``init_score`` (one finite score per row) and
        ``eval_init_score`` (a list with one such array, or ``None``, per eval set) are copied, never
        modified; a scalar, a short list or a wrong length raises naming the argument.

        ``history_loss``: ``True`` records the loss on every set, ``"train"`` on the training data only
        (the eval sets' ``"loss"`` then holds NaN, as with ``False`` for every set). The training loss
        comes nearly free from the round's gradient call; an eval set's pairwise loss costs a
        gradient call of its own each round (a third of a LambdaMART round with two eval sets the
        size of half the training data), so ``"train"`` is the setting when only the metrics of the
        eval sets are wanted. Early stopping on ``"loss"`` needs ``True``. The metrics of a set are
        computed in one :func:`lambda_objectives.metric_values_table` call a round.

        ``bin_mapper``: a :class:`reference.binning.BinMapper` with this ranker's ``max_bin`` to bin
        with, instead of a new one. Unfitted, it is fitted on ``X`` here; fitted, it is used as is (its
        bins must have been learned on this ``X``, e.g. by an earlier fit: several fits on one training
        set, a grid of configurations, then learn their bins once, and a mapper that keeps what it
        transformed bins each array once). The model is the one a ranker learning its own bins on
        ``X`` fits, to the bit; the mapper becomes ``bin_mapper_`` (not copied).

        ``position``: each training row's 0-based display position, read by a position-debiased objective
        (``kernel_options={"bias": "ips" | "pairwise" | "additive", ...}``, :func:`lambda_objectives.lambda_gradients`'
        ``bias=`` keywords, with any pair objective and with ``metric="yetirank"``, whose drawn pairs take the
        same factors; default positions: each row's index in its query). The bias state (``t⁺``/``t⁻``
        or ``b``, ``additive`` stepping with this ranker's ``learning_rate``) is carried from round to round
        and readable as ``bias_state_`` after fitting; eval sets' losses are of their own labels, unweighted.
        """
        # every numba kernel of the fit (histograms, splits, gradients) runs on n_threads
        with numba_threads(self.n_threads):
            return self._fit(X, y, group, qid, group_ptr, eval_set, eval_group, init_score, eval_init_score,
                             early_stopping_rounds, eval_metric, history_loss, verbose,
                             tuple(history_metrics), dict(history_options or {}), bin_mapper, position)

    def _fit(self, X, y, group, qid, group_ptr, eval_set, eval_group, init_score, eval_init_score,
             early_stopping_rounds, eval_metric, history_loss, verbose, history_metrics, history_options,
             bin_mapper=None, position=None):
        from lambda_objectives.checks import check_labels

        self._check_params()
        if isinstance(history_loss, (bool, np.bool_)):
            history_loss = bool(history_loss)
        elif not (isinstance(history_loss, str) and history_loss == "train"):
            raise ValueError(f"history_loss must be True, False or 'train' (the training data only), got {history_loss!r}")
        if y is None:
            raise ValueError("MARTRanker requires y to be passed, but the target y is None")
        X, qid = split_qid_column(X, qid)
        X = _as_matrix(X, self, reset=True)  # n_features_in_, feature_names_in_ (scikit-learn's rules)
        y = check_labels(y, X.shape[0], name="y")
        ptr = require_queries("MARTRanker.fit", X.shape[0], group=group, group_ptr=group_ptr, qid=qid)
        if early_stopping_rounds is not None:
            if isinstance(early_stopping_rounds, bool) or not isinstance(early_stopping_rounds, numbers.Integral) \
                    or early_stopping_rounds < 1:
                raise ValueError(f"early_stopping_rounds must be a positive integer or None, got {early_stopping_rounds!r}")
            if not eval_set:
                raise ValueError("early_stopping_rounds needs an eval_set to watch (fit(..., eval_set=[(X_val, y_val, "
                                 "group_val)]))")
            if eval_metric == "loss" and history_loss is not True:
                raise ValueError(f"eval_metric 'loss' watches the eval set's loss, which history_loss={history_loss!r} "
                                 "does not record: pass history_loss=True or watch a metric")
            if eval_metric != "loss" and eval_metric not in history_metrics:
                raise ValueError(f"eval_metric {eval_metric!r} is not recorded, so early stopping could not watch it: "
                                 f"use one of history_metrics {list(history_metrics)} or 'loss', or add it to "
                                 "history_metrics")
        eval_set, eval_group, eval_init_score = _eval_arguments(eval_set, eval_group, eval_init_score)
        self.n_features_ = self.n_features_in_
        self.train_queries_ = TrainingQueries.record(X, qid, ptr)
        if bin_mapper is None:
            bin_mapper = BinMapper(self.max_bin)
        elif not isinstance(bin_mapper, BinMapper) or bin_mapper.max_bin != self.max_bin:
            raise ValueError(f"bin_mapper must be a reference.binning.BinMapper with max_bin={self.max_bin} (this "
                             f"ranker's), got {bin_mapper!r}" + (f" with max_bin={bin_mapper.max_bin}"
                                                                 if isinstance(bin_mapper, BinMapper) else ""))
        elif bin_mapper.thresholds_ is not None and len(bin_mapper.thresholds_) != X.shape[1]:
            raise ValueError(f"bin_mapper was fitted on {len(bin_mapper.thresholds_)} features, X has {X.shape[1]}: "
                             "pass a mapper fitted on this X, or an unfitted one")
        if bin_mapper.thresholds_ is None:
            bin_mapper.fit(X)
        self.bin_mapper_ = bin_mapper
        binned = self.bin_mapper_.transform(X)
        n_bins = self.bin_mapper_.n_bins_
        if position is not None:
            from lambda_objectives.checks import check_positions

            position = check_positions(position, ptr, name="position")
        loss = self._loss(y, position)
        if position is not None and not isinstance(loss, (Lambda, YetiRank)):
            raise ValueError(f"position= is read by the pair objectives' bias= (objective='lambda' with a pair "
                             f"metric), not by objective={self.objective!r}, metric={self.metric!r}")
        self.n_columns_ = loss.n_columns
        sets = [("train", binned, y, ptr, None)]
        for i, es in enumerate(eval_set or []):
            Xe, qe = split_qid_column(es[0], None)
            Xe, ye = _as_matrix(Xe, self, where=f"eval set {i}"), es[1]
            ye = check_labels(ye, Xe.shape[0], name=f"eval set {i} y")
            pe = require_queries(f"MARTRanker.fit eval_set[{i}]", Xe.shape[0], group=es[2] if len(es) > 2 else eval_group[i],
                                 qid=qe)
            sets.append((f"valid_{i}", self.bin_mapper_.transform(Xe), ye, pe,
                         _init_scores(eval_init_score[i], Xe.shape[0], f"eval_init_score[{i}]")))
        from lambda_objectives import parse_metric

        for m in history_metrics:
            parse_metric(m)  # an unknown name fails before training, not after the first tree
        if len(set(history_metrics)) != len(history_metrics):
            raise ValueError(f"history_metrics names a metric twice: {list(history_metrics)}")
        from lambda_objectives.metrics import check_value_options

        check_value_options(history_metrics, history_options)  # an option no history metric reads
        # the metrics each set's labels can score, found once: labels do not change between rounds
        scorable, refused = {}, {}
        for name, _, yy, pp, _ in sets:
            scorable[name], refused[name] = _scorable(history_metrics, yy, pp, history_options, name)
        if early_stopping_rounds is not None and eval_metric in refused[sets[-1][0]]:
            # a metric the last eval set's labels cannot score (ERR on real-valued labels...) fails now,
            # not as a history of NaN that stops training at the patience limit
            raise ValueError(f"eval_metric {eval_metric!r} cannot score the eval set: "
                             f"{refused[sets[-1][0]][eval_metric]}")
        F = loss.init_score(y, ptr).astype(np.float64)
        if init_score is not None:
            # a copy: the boosting loop adds to F in place, and the caller's array is theirs
            base = _init_scores(init_score, X.shape[0], "init_score")
            F = base.reshape(F.shape) if F.ndim == 1 else np.repeat(base[:, None], F.shape[1], axis=1)
            self.base_score_ = None
        else:
            self.base_score_ = F[0].tolist() if F.ndim == 2 else (float(F[0]) if F.size else 0.0)
        scores = [F] + [self._initial(s[1].shape[0], s[4]) for s in sets[1:]]
        rng = np.random.default_rng(self.random_state)
        self.trees_ = []
        self._history_metrics, self._history_options = history_metrics, history_options
        self.history_ = {name: {m: [] for m in history_metrics + ("loss",)} for name, *_ in sets}
        self.fit_seconds_ = []
        buffers = {}  # histogram buffers each tree hands on to the next (TreeGrower's ``buffers``)
        words = pack_bins(binned)  # the bins as the row histograms read them, packed once for every tree
        ncol = self.n_columns_
        g = np.empty(X.shape[0]) if ncol == 1 else np.empty((X.shape[0], ncol))
        h = np.empty_like(g)
        best, best_iter, waited = -np.inf, 0, 0
        # the training loss at F after round t is the cost of round t + 1's gradient call at the same F:
        # recorded from that call (one lambda-kernel call a round instead of two), the last one after the loop
        deferred = bool(history_loss) and getattr(loss, "loss_with_gradients", False)
        for it in range(self.n_estimators):
            t0 = time.perf_counter()
            if deferred:
                at_f = loss.gradients(F, y, ptr, g, h, want_loss=True)
                if it > 0:
                    self.history_["train"]["loss"][-1] = at_f
            else:
                loss.gradients(F, y, ptr, g, h)
            rows = self._sample_rows(ptr, rng)
            mask = self._feature_mask(rng)
            round_trees, round_leaves = [], []
            # the grades' trees share their rows: their root histograms come from one pass
            roots = root_histograms(binned, rows, g, h) if ncol > 1 else None
            for c in range(ncol):
                gc = g if ncol == 1 else np.ascontiguousarray(g[:, c])
                hc = h if ncol == 1 else np.ascontiguousarray(h[:, c])
                pairs = None
                if ncol == 1 and getattr(loss, "last_pairs", None) is not None:
                    lp = loss.last_pairs
                    # 32-bit document ids when they fit: the grower reads and partitions the pairs many
                    # times a tree, and a third less memory traffic per pair is its speed
                    ids = np.int32 if binned.shape[0] < 2 ** 31 else np.int64
                    pairs = (lp.i.astype(ids), lp.j.astype(ids), lp.h)
                grower = TreeGrower(binned, n_bins, gc, hc, rows, num_leaves=self.num_leaves, criterion=self.criterion,
                                    growth=self.growth, min_data_in_leaf=self.min_data_in_leaf,
                                    min_sum_hessian_in_leaf=self.min_sum_hessian_in_leaf, lambda_l2=self.lambda_l2,
                                    max_depth=self._depth_limit(), leaf_value=self.leaf_value,
                                    leaf_hessian=self.leaf_hessian, pairs=pairs, feature_mask=mask,
                                    root_hist=None if roots is None else roots[c], buffers=buffers, words=words)
                tree = grower.grow()
                round_leaves.append(grower.leaf_rows_)
                leaf = tree["feature"] < 0
                tree["value"][leaf] *= self.learning_rate
                for i in np.flatnonzero(~leaf):
                    tree["threshold"][i] = self.bin_mapper_.bin_upper_value(int(tree["feature"][i]), int(tree["bin"][i]))
                round_trees.append(tree)
            self.trees_.append(round_trees)
            for k, ((name, b, yy, pp, _), S) in enumerate(zip(sets, scores)):
                # the training rows the trees were grown on are already sorted into their leaves
                _add_round(round_trees, b, S, round_leaves if k == 0 and rows.shape[0] == b.shape[0] else None)
            self.fit_seconds_.append(time.perf_counter() - t0)
            for (name, b, yy, pp, _), S in zip(sets, scores):
                with_loss = (history_loss is True or (history_loss == "train" and name == "train")) \
                    and not (deferred and name == "train")
                self._record(name, loss, S, yy, pp, scorable[name], with_loss)
            if early_stopping_rounds and len(sets) > 1:
                value = self.history_[sets[-1][0]][eval_metric][-1] if eval_metric != "loss" else \
                    -self.history_[sets[-1][0]]["loss"][-1]
                if value > best:
                    best, best_iter, waited = value, it + 1, 0
                else:
                    waited += 1
                    if waited >= early_stopping_rounds:
                        break
            if verbose:
                print(f"[{it + 1}] " + " ".join(f"{n}:{m}={v[m][-1]:.4f}" for n, v in self.history_.items()
                                               for m in ("ndcg@10",)))
        if deferred and self.trees_:
            self.history_["train"]["loss"][-1] = loss.loss(F, y, ptr)
        self.best_iteration_ = best_iter if early_stopping_rounds and len(sets) > 1 else len(self.trees_)
        self.evals_result_ = self.history_
        self.best_score_ = {name: {m: v[self.best_iteration_ - 1] for m, v in hist.items() if len(v) >= self.best_iteration_}
                            for name, hist in self.history_.items()} if self.best_iteration_ else {}
        bias = loss.bias if isinstance(loss, YetiRank) else loss.bias_options.get("bias") if isinstance(loss, Lambda) \
            else None
        if bias in ("pairwise", "additive"):
            self.bias_state_ = loss.bias_state  # (t_plus, t_minus) or b, after the last round
        self._loss_obj = loss
        return self

    def _initial(self, n, init):
        if init is not None:
            base = np.array(init, dtype=np.float64)  # a copy: scores are updated in place
            return base if self.n_columns_ == 1 else np.repeat(base[:, None], self.n_columns_, axis=1)
        if self.n_columns_ == 1:
            return np.full(n, self.base_score_ if self.base_score_ is not None else 0.0)
        return np.tile(np.asarray(self.base_score_), (n, 1))

    def _sample_rows(self, ptr, rng):
        nq = ptr.shape[0] - 1
        if self.subsample >= 1.0:
            return np.arange(ptr[-1], dtype=np.int64)
        take = np.sort(rng.choice(nq, max(1, int(round(self.subsample * nq))), replace=False))
        return np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in take]).astype(np.int64)

    def _feature_mask(self, rng):
        mask = np.ones(self.n_features_, dtype=np.bool_)
        if self.colsample < 1.0:
            mask[:] = False
            mask[rng.choice(self.n_features_, max(1, int(round(self.colsample * self.n_features_))),
                            replace=False)] = True
        return mask

    def _record(self, name, loss, S, y, ptr, scorable, with_loss):
        from lambda_objectives import metric_values_table
        from lambda_objectives.metrics import options_read_by

        hist = self.history_[name]
        values = {}
        if scorable:
            try:
                table = metric_values_table(loss.ranking_scores(S), y, ptr, scorable, n_threads=self.n_threads,
                                            **options_read_by(scorable, self._history_options))
                values = {m: float(np.mean(v)) for m, v in table.items()}
            except ValueError:
                pass  # scores that are no longer finite: NaN for every metric, as for one it cannot score
        for m in self._history_metrics:
            # a metric these labels cannot define (ERR or exponential gain on real-valued labels): NaN
            # for this metric only; early stopping on it was refused before training
            hist[m].append(values.get(m, float("nan")))
        hist["loss"].append(loss.loss(S, y, ptr) if with_loss else float("nan"))

    # ------------------------------------------------------------------ prediction
    def raw_predict(self, X, n_iterations=None):
        """Scores per column (``(n, n_classes)`` for McRank)."""
        return self._raw_predict(self._input(X), n_iterations)

    def _raw_predict(self, X, n_iterations):
        binned = self.bin_mapper_.transform(X)
        if n_iterations is None:
            n_it = getattr(self, "best_iteration_", None) or len(self.trees_)
        elif isinstance(n_iterations, bool) or not isinstance(n_iterations, numbers.Integral) \
                or not 0 <= n_iterations <= len(self.trees_):
            raise ValueError(f"n_iterations must be an integer from 0 to {len(self.trees_)} (the rounds fitted), "
                             f"got {n_iterations!r}")
        else:
            n_it = int(n_iterations)
        out = self._initial(X.shape[0], None)
        out = out.copy()
        for c in range(self.n_columns_):
            trees = [r[c] for r in self.trees_[:n_it]]
            col = np.zeros(X.shape[0])
            if trees:
                cat = np.concatenate(trees)
                offsets = np.concatenate(([0], np.cumsum([t.shape[0] for t in trees]))).astype(np.int64)
                predict_binned(cat["feature"], cat["bin"], cat["left"], cat["right"], cat["value"], offsets, binned, col)
            if self.n_columns_ == 1:
                out = out + col
            else:
                out[:, c] += col
        return out

    def predict(self, X, n_iterations=None):
        """Ranking scores (McRank: the expected grade Σ k p_k)."""
        return self._predict(self._input(X), n_iterations)

    def _predict(self, X, n_iterations=None):
        """:meth:`predict` of checked features ``X``."""
        with numba_threads(self.n_threads):
            raw = self._raw_predict(X, n_iterations)
        if self.objective == "mcrank":
            return McRank(self.n_columns_).ranking_scores(raw)
        return raw

    def score(self, X, y, qid=None, group=None, *, new_queries=False):
        """Mean over queries of ``score_metric`` (default NDCG@10, LightGBM convention).

        Queries: ``qid``/``group``, or the ``qid`` column of a DataFrame ``X``; without them,
        ``ValueError`` (never one query of all rows). A scored query whose qid was a training
        query must be exactly its training rows, else ``ValueError``: a row splitter (``KFold``)
        cut it between fit and score (see ``train_queries_``); split with ``GroupKFold``.
        ``new_queries=True``: the scored qid values name other queries even where they repeat
        training qids (a test file numbered like the training file); renumbering is safer.
        """
        from lambda_objectives import mean_metric

        X, qid = split_qid_column(X, qid)
        X = self._input(X)
        ptr = require_queries("MARTRanker.score", X.shape[0], group=group, qid=qid)
        check_scored_queries(self, "MARTRanker.score", X, qid, ptr, new_queries)
        s = self._predict(X)
        return mean_metric(s, y, ptr, self.score_metric)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True  # NaN features go to the missing-value bin
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ inspection, persistence
    @property
    def feature_importances_(self):
        """Per-feature importance of kind ``importance_type`` (split counts or total gain)."""
        return self.feature_importance(self.importance_type)

    def feature_importance(self, importance_type="split"):
        """Split counts (``"split"``) or total split gain (``"gain"``) per feature, as LightGBM's Booster."""
        self._check_fitted()
        kind = importance_type
        if kind not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {kind!r}")
        imp = np.zeros(self.n_features_)
        for rnd in self.trees_:
            for t in rnd:
                inner = t[t["feature"] >= 0]
                np.add.at(imp, inner["feature"], 1.0 if kind == "split" else inner["gain"])
        return imp

    def dump_text(self, feature_names=None):
        """A readable dump of every tree."""
        self._check_fitted()
        name = (lambda f: feature_names[f]) if feature_names is not None else (lambda f: f"f{f}")
        lines = []
        for it, rnd in enumerate(self.trees_):
            for c, t in enumerate(rnd):
                lines.append(f"tree {it}" + (f" class {c}" if self.n_columns_ > 1 else ""))

                def walk(i, indent):
                    node = t[i]
                    if node["feature"] < 0:
                        lines.append(f"{indent}leaf value={node['value']:.6g} count={node['count']}")
                        return
                    lines.append(f"{indent}{name(node['feature'])} <= {node['threshold']:.6g} "
                                 f"(gain={node['gain']:.6g}, count={node['count']})")
                    walk(node["left"], indent + "  ")
                    walk(node["right"], indent + "  ")

                walk(0, "  ")
        return "\n".join(lines)

    def save(self, path):
        """Write the model as JSON: format version, parameters, bins, trees and every fitted attribute
        :meth:`predict` and :meth:`score` read (``best_iteration_``, ``n_features_in_``,
        ``feature_names_in_``, ``train_queries_``), with ``best_score_`` and ``history_``, so that
        :meth:`load` returns a model predicting the same bits."""
        self._check_fitted()
        names = self.feature_names_in_.tolist() if hasattr(self, "feature_names_in_") else None
        doc = {"format": "lambda_objectives.reference.MARTRanker", "version": FORMAT_VERSION,
               "params": self.get_params(), "n_features": self.n_features_, "n_columns": self.n_columns_,
               "base_score": self.base_score_, "bins": self.bin_mapper_.to_dict(),
               "best_iteration": self.best_iteration_, "feature_names": names,
               "train_queries": TrainingQueries.to_json(getattr(self, "train_queries_", None)),
               "best_score": getattr(self, "best_score_", {}), "history": getattr(self, "history_", {}),
               "trees": [[{f: t[f].tolist() for f in NODE_DTYPE.names} for t in rnd] for rnd in self.trees_]}
        with open(path, "w") as fh:
            json.dump(doc, fh)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`. Another format, another version (a file from before
        version 2 lacks ``best_iteration_``, so it would predict with every tree after early
        stopping: re-fit and save it again) or a damaged file raises ``ValueError``."""
        with open(path) as fh:
            try:
                doc = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not a MARTRanker model file ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != "lambda_objectives.reference.MARTRanker":
            raise ValueError(f"{path}: not a MARTRanker model file")
        if doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: model format version {doc.get('version')} is not supported "
                             f"(this version reads {FORMAT_VERSION})"
                             + ("; files of version 1 did not keep best_iteration_ (a model fitted with early "
                                "stopping would predict with every tree): fit and save the model again"
                                if doc.get("version") == 1 else ""))
        try:
            model = cls._from_doc(doc)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            what = f"no {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
            raise ValueError(f"{path}: a damaged MARTRanker model file ({what})") from None
        return model

    @classmethod
    def _from_doc(cls, doc):
        model = cls(**doc["params"])
        model.n_features_ = model.n_features_in_ = int(doc["n_features"])
        model.n_columns_ = int(doc["n_columns"])
        model.base_score_ = doc["base_score"]
        model.bin_mapper_ = BinMapper.from_dict(doc["bins"])
        model.trees_ = []
        for rnd in doc["trees"]:
            if len(rnd) != model.n_columns_:
                raise ValueError(f"a round of {len(rnd)} trees for {model.n_columns_} score columns")
            trees = []
            for t in rnd:
                arr = np.zeros(len(t["feature"]), dtype=NODE_DTYPE)
                for f in NODE_DTYPE.names:
                    arr[f] = t[f]
                inner = arr["feature"] >= 0
                if arr.size == 0 or arr["feature"].max() >= model.n_features_ or \
                        (inner & ((arr["left"] >= arr.size) | (arr["right"] >= arr.size) | (arr["left"] < 0)
                                   | (arr["right"] < 0))).any():
                    raise ValueError("a tree whose nodes point outside it or to a feature the model does not have")
                trees.append(arr)
            model.trees_.append(trees)
        best = doc["best_iteration"]
        if isinstance(best, bool) or not isinstance(best, int) or not 0 <= best <= len(model.trees_):
            raise ValueError(f"best_iteration {best!r} for {len(model.trees_)} rounds")
        model.best_iteration_ = best
        names = doc["feature_names"]
        if names is not None:
            if len(names) != model.n_features_:
                raise ValueError(f"{len(names)} feature names for {model.n_features_} features")
            model.feature_names_in_ = np.asarray(names, dtype=object)
        if len(model.bin_mapper_.thresholds_) != model.n_features_:
            raise ValueError(f"bins for {len(model.bin_mapper_.thresholds_)} features, not {model.n_features_}")
        model.train_queries_ = TrainingQueries.from_json(doc["train_queries"])
        model.best_score_ = doc["best_score"]
        model.history_ = model.evals_result_ = doc["history"]
        return model

    def _check_fitted(self):
        if not hasattr(self, "trees_"):
            raise NotFittedError("this MARTRanker is not fitted yet; call fit first")

    def _input(self, X):
        """``X`` for prediction and scoring: its qid column dropped, checked, with the fitted width and
        feature names (scikit-learn's rules: ``ValueError`` for other columns or another order)."""
        self._check_fitted()
        return _as_matrix(split_qid_column(X, None)[0], self)


def _scorable(metrics, y, ptr, options, name):
    """``(names, refused)``: the names of ``metrics`` that labels ``y`` can score with ``options``, each
    tried once on zero scores, and ``{name: why}`` for the others. A metric that needs whole-number
    grades (ERR, exponential gain) and gets real-valued labels is refused (its history is NaN); any
    other refusal (an unknown option, ``max_label`` below a label...) is the caller's mistake and
    raises, naming the metric and the set."""
    from lambda_objectives import metric_values
    from lambda_objectives.metrics import options_read_by

    zeros = np.zeros(y.shape[0])
    keep, refused = [], {}
    for m in metrics:
        own = options_read_by([m], options)  # the set's options are shared: each metric takes the ones it reads
        try:
            metric_values(zeros, y, ptr, m, **own)
        except ValueError as exc:
            try:
                metric_values(zeros, np.floor(y), ptr, m, **own)  # whole grades: scorable?
            except ValueError:
                raise ValueError(f"history metric {m!r} cannot score {name}: {exc}") from None
            refused[m] = str(exc)
            continue
        keep.append(m)
    return tuple(keep), refused


def _add_round(trees, binned, S, leaf_rows=None):
    """Add a round's trees to the scores ``S`` of ``binned``'s rows: by traversal, or from ``leaf_rows``
    (each tree's leaf id -> rows, covering every row) when the trees were grown on all of them."""
    for c, t in enumerate(trees):
        col = np.zeros(binned.shape[0])
        if leaf_rows is None:
            predict_binned(t["feature"], t["bin"], t["left"], t["right"], t["value"],
                           np.array([0, t.shape[0]], dtype=np.int64), binned, col)
        else:
            for i, r in leaf_rows[c].items():
                col[r] = 0.0 + t["value"][i]  # the traversal's 0.0 + value: the same bits (-0.0 becomes 0.0)
        if S.ndim == 1:
            S += col
        else:
            S[:, c] += col


def _as_matrix(X, est=None, reset=False, where=None):
    """X as a numeric 2-D array or CSR matrix: NaN allowed (the missing-value bin), inf rejected;
    with ``est``, its width and feature names recorded (``reset``) or compared as scikit-learn
    does (see :func:`lambda_objectives.adapters._sklearn.check_X`)."""
    return check_X(X, est, reset, where)


def _eval_arguments(eval_set, eval_group, eval_init_score):
    """``eval_set`` as a list of 2- or 3-tuples with ``eval_group``/``eval_init_score`` as lists of
    its length (``None`` entries where not given). Raises before training, naming the argument: a
    set carrying its queries (a 3-tuple) with an ``eval_group`` entry too (one of the two would be
    ignored), lists of another length than ``eval_set``, a scalar where a list belongs."""
    sets = [] if eval_set is None else eval_set
    if isinstance(sets, tuple) and len(sets) in (2, 3) and not isinstance(sets[0], (tuple, list)):
        raise TypeError("eval_set must be a list of (X, y) or (X, y, group) tuples, got one tuple: "
                        "wrap it in a list, eval_set=[(X_val, y_val, group_val)]")
    sets = list(sets)
    for i, es in enumerate(sets):
        if not isinstance(es, (tuple, list)) or len(es) not in (2, 3):
            raise TypeError(f"eval_set[{i}] must be an (X, y) or (X, y, group) tuple, got "
                            f"{type(es).__name__}" + (f" of length {len(es)}" if isinstance(es, (tuple, list)) else ""))

    def per_set(value, name):
        if value is None:
            return [None] * len(sets)
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or np.ndim(value) == 0:
            raise TypeError(f"{name} must be a list with one entry per eval set ({len(sets)}), got {value!r}")
        value = list(value)
        if len(value) != len(sets):
            raise ValueError(f"{name} has {len(value)} entries for {len(sets)} eval sets: give one per eval set "
                             "(None where not needed)")
        return value

    groups, inits = per_set(eval_group, "eval_group"), per_set(eval_init_score, "eval_init_score")
    for i, es in enumerate(sets):
        if len(es) == 3 and groups[i] is not None:
            raise ValueError(f"eval_set[{i}] carries its queries (a 3-tuple) and eval_group[{i}] gives them again: "
                             "pass them once, in the tuple or in eval_group")
    return sets, groups, inits


def _init_scores(init, n, name):
    """A float64 copy of ``init`` (one finite score per row of ``n``; ``None`` kept), else ``ValueError``
    naming ``name``: the boosting loop adds to it in place, and the caller's array is theirs."""
    if init is None:
        return None
    base = np.array(init, dtype=np.float64)
    if base.ndim == 0 or base.shape[0] != n or base.size != n:
        raise ValueError(f"{name} must hold one score per row ({n} rows), got "
                         + (f"the scalar {init!r}" if base.ndim == 0 else f"shape {base.shape}"))
    base = base.reshape(n)
    bad = ~np.isfinite(base)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite, row {i} is {base[i]!r}")
    return base
