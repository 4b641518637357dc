"""What the package's scikit-learn rankers share: every call that sees rows must see their queries.

A ranking estimator that silently treats rows without query ids as one query scores a whole
cross-validation fold as a single list (NDCG@10 0.47 where the per-query value is 0.78 on MQ2008),
and ``GridSearchCV`` then picks another model. The rankers therefore refuse rows without queries,
and the message names every way to pass them.

A row splitter (``KFold``, ``ShuffleSplit``) fails the other way: it puts part of each query in
training and the rest in the scored fold, and the scored fragments are ranked by a model that has
seen their siblings (NDCG@10 0.94 on MQ2008 where whole queries give 0.78). The rankers therefore
remember their training queries (:class:`TrainingQueries`) and :meth:`~TrainingQueries.check`
refuses a scored query that was cut.
"""

import numpy as np
from sklearn.base import BaseEstimator

from .groups import resolve_group_ptr, split_qid_column
from .metrics import metric_values, parse_metric

#: how to pass queries, quoted by every error about missing ones
HOW_TO_PASS_QUERIES = (
    "pass the queries as a 'qid' column of a pandas DataFrame X (never used as a feature), as qid= "
    "(or group= sizes), or inside GridSearchCV / cross_val_score with scikit-learn's metadata routing: "
    "sklearn.set_config(enable_metadata_routing=True); est.set_fit_request(qid=True).set_score_request(qid=True); "
    "GridSearchCV(...).fit(X, y, groups=qid, qid=qid) or cross_val_score(..., params={'qid': qid, 'groups': qid})")


def require_queries(where, n_rows, group=None, qid=None, group_ptr=None):
    """``group_ptr`` of ``n_rows`` rows from exactly one of ``group``/``qid``/``group_ptr``.

    Raises ``ValueError`` naming ``where`` (e.g. ``"XGBLambdaRanker.score"``) when none is given:
    a ranker never guesses that all rows form one query.
    """
    if group is None and qid is None and group_ptr is None:
        raise ValueError(f"{where}: no queries for these {n_rows} rows; a ranker never treats rows without "
                         f"query ids as one query: {HOW_TO_PASS_QUERIES}")
    try:
        return resolve_group_ptr(n_rows, group=group, group_ptr=group_ptr, qid=qid)
    except ValueError as exc:
        if "not contiguous" in str(exc):
            raise ValueError(f"{where}: {exc}{SCATTERED}") from None
        raise


#: what the cut-query error tells the user to do instead
SPLIT_BY_QUERY = ("split by query, never by row: cv=GroupKFold(n) or GroupShuffleSplit(...) with groups=qid "
                  "(GridSearchCV(...).fit(X, y, groups=qid), cross_val_score(..., groups=qid))")

#: what the rankers add to a query-order error: inside cross-validation it means a row splitter
SCATTERED = ("; inside GridSearchCV / cross_val_score this means a row splitter (ShuffleSplit, KFold(shuffle=True), "
             f"train_test_split on rows) scattered each query's rows: {SPLIT_BY_QUERY}")

_MIX1, _MIX2, _GOLDEN = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)


def _mix(z):
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic): a bijection that spreads
    every input bit over the output, so sums of mixed values behave as a multiset hash."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _cell_hashes(values, columns):
    """One uint64 per stored cell from its column and its value rounded to float32 (0 for a zero).

    float32 because the engines bin float32 features (so a float32 and a float64 copy of the same
    data are the same rows), NaN payloads made one NaN, and zeros (either sign, stored or implicit)
    hashed to 0 so that a dense array and its CSR form agree.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.asarray(values, dtype=np.float64).astype(np.float32)
    v[np.isnan(v)] = np.nan
    bits = v.view(np.uint32).astype(np.uint64)
    h = _mix((bits << np.uint64(32)) | np.asarray(columns, dtype=np.uint64))
    h[v == 0] = 0
    return h


def row_fingerprints(X, chunk=1 << 20):
    """One uint64 per row of ``X`` (a 2-D array or CSR matrix), the same for equal rows.

    The wrapping sum over the row's non-zero cells of a hash of (column, float32 value): equal
    rows always agree, whatever their dtype (float64/float32), layout (dense/CSR, explicit zeros)
    or position; different rows agree with probability about 2**-64. Dense rows are hashed
    ``chunk`` cells at a time, so memory stays bounded on wide data.
    """
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        h = _cell_hashes(X.data, X.indices)
        cs = np.concatenate(([np.uint64(0)], np.cumsum(h, dtype=np.uint64)))
        return cs[X.indptr[1:]] - cs[X.indptr[:-1]]  # wraps modulo 2**64, as the sum does
    X = np.asarray(X)
    n, d = X.shape
    out = np.empty(n, dtype=np.uint64)
    step = max(1, chunk // max(d, 1))
    cols = np.arange(d, dtype=np.uint64)
    for a in range(0, n, step):
        block = X[a:a + step]
        out[a:a + step] = _cell_hashes(block, np.broadcast_to(cols, block.shape)).sum(axis=1, dtype=np.uint64)
    return out


def query_fingerprints(X, group_ptr):
    """One uint64 per query: the wrapping sum of its mixed :func:`row_fingerprints` (an
    order-free hash of the multiset of its rows, duplicates included)."""
    h = _mix(row_fingerprints(X))
    cs = np.concatenate(([np.uint64(0)], np.cumsum(h, dtype=np.uint64)))
    ptr = np.asarray(group_ptr)
    return cs[ptr[1:]] - cs[ptr[:-1]]


class TrainingQueries:
    """The queries a ranker was fitted on, to refuse scoring a query cut between fit and score.

    Records, per training query, its qid value, its row count and a fingerprint of its rows
    (:func:`query_fingerprints`). A scored query whose qid is one of these must be exactly that
    query's rows (in any order): the same count and the same fingerprint. Otherwise its rows were
    split between the fitted and the scored data (a row splitter such as ``KFold``) and the
    score would be inflated, so :meth:`check` raises. Counts alone would miss a query split into
    two halves of equal size; the fingerprint catches it, and it cannot refuse the training rows
    themselves (equal rows hash equally, whatever their order, dtype or sparsity).

    Queries given as ``group`` sizes carry no ids: nothing is recorded (:meth:`record` returns
    ``None``) and nothing can be checked; neither can a scored set given by ``group`` sizes.
    """

    def __init__(self, qid, n_rows, fingerprint):
        self.qid, self.n_rows, self.fingerprint = qid, n_rows, fingerprint

    @classmethod
    def record(cls, X, qid, group_ptr):
        """The training queries of ``X`` (checked features) and its per-row ``qid`` (or ``None``
        when the queries came as ``group`` sizes, which have no ids)."""
        if qid is None:
            return None
        ptr = np.asarray(group_ptr)
        return cls(np.asarray(qid)[ptr[:-1]], np.diff(ptr), query_fingerprints(X, ptr))

    @staticmethod
    def to_json(queries):
        """``queries`` (a :class:`TrainingQueries` or ``None``) as JSON values, for the rankers'
        model files: qid values as Python values, fingerprints as integers."""
        if queries is None:
            return None
        return {"qid": queries.qid.tolist(), "n_rows": queries.n_rows.tolist(),
                "fingerprint": [int(v) for v in queries.fingerprint]}

    @classmethod
    def from_json(cls, doc):
        """The inverse of :meth:`to_json`; ``ValueError`` for lists of different lengths."""
        if doc is None:
            return None
        qid, n_rows, prints = doc["qid"], doc["n_rows"], doc["fingerprint"]
        if not len(qid) == len(n_rows) == len(prints):
            raise ValueError("train_queries_ holds lists of different lengths")
        return cls(np.asarray(qid), np.asarray(n_rows, dtype=np.int64), np.asarray(prints, dtype=np.uint64))

    def check(self, where, X, qid, group_ptr):
        """Raise ``ValueError`` when a scored query of ``X``/``qid`` is cut between fit and score.

        A scored qid never seen in fit is a new query (a disjoint test set); one seen in fit must
        bring exactly the fitted rows (the training set scored again). ``qid`` ``None`` (scored
        queries given as ``group`` sizes): nothing to compare, no check.
        """
        if qid is None:
            return
        ptr = np.asarray(group_ptr)
        ids = np.asarray(qid)[ptr[:-1]]
        # Python values: a qid 3 read as int in fit and as 3.0 in score is the same query
        seen = {v: i for i, v in enumerate(self.qid.tolist())}
        pos = np.array([seen.get(v, -1) for v in ids.tolist()], dtype=np.int64)
        hit = np.flatnonzero(pos >= 0)
        if hit.size == 0:
            return
        sizes = np.diff(ptr)
        cut = hit[sizes[hit] != self.n_rows[pos[hit]]]
        if cut.size == 0:
            prints = query_fingerprints(X, ptr)
            cut = hit[prints[hit] != self.fingerprint[pos[hit]]]
        if cut.size == 0:
            return
        q = int(cut[0])
        n_fit = int(self.n_rows[pos[q]])
        raise ValueError(
            f"{where}: query qid={ids[q].item() if hasattr(ids[q], 'item') else ids[q]!r} is cut between fit and "
            f"score: fit saw {n_fit} of its rows, and score is given {int(sizes[q])} rows of it that are not exactly "
            f"those {n_fit} ({cut.size} of the {ids.shape[0]} scored queries are cut so). A row splitter (KFold, "
            "ShuffleSplit, train_test_split on rows) puts part of each query in training and the rest in the scored "
            "fold, which inflates the score (MQ2008 NDCG@10: 0.94 against 0.77-0.78 with whole queries); "
            f"{SPLIT_BY_QUERY}. If these are other queries that only reuse the training qid values (a test file "
            "numbered like the training file), renumber them (e.g. add the training set's largest qid + 1) or "
            "pass score(..., new_queries=True)")


class EngineRanker(BaseEstimator):
    """The shared part of the engine rankers (``XGBLambdaRanker``, ``LGBMLambdaRanker``): our
    objective, rounds, our eval metric for early stopping, and the engine's own parameters, each
    stored as an attribute of its own so that ``get_params``/``clone``/``GridSearchCV`` see them."""

    def __init__(self, objective="ndcg", n_estimators=100, eval_metric=None, early_stopping_rounds=None,
                 score_metric="ndcg@10", **engine_params):
        self.objective = objective
        self.n_estimators = n_estimators
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.score_metric = score_metric
        for key, v in engine_params.items():
            setattr(self, key, v)

    def _engine_params(self):
        """The engine parameters given to the constructor or :meth:`set_params`."""
        own = set(self._get_param_names())
        return {k: v for k, v in vars(self).items() if k not in own and not k.endswith("_") and not k.startswith("_")}

    def get_params(self, deep=True):
        params = super().get_params(deep)
        params.update(self._engine_params())
        return params

    def set_params(self, **params):
        for key, v in params.items():
            setattr(self, key, v)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # both engines learn a default direction for missing values
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

    def _check_fitted(self):
        if not hasattr(self, "booster_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first")

    def _input(self, X):
        """``X`` for :meth:`predict`/:meth:`score`: its qid column dropped, checked, with the fitted
        width and feature names (:func:`check_X` with ``est``: scikit-learn's rules)."""
        self._check_fitted()
        return check_X(split_qid_column(X, None)[0], self)

    def _fitted(self, X, best_iteration, n_used, qid, group_ptr):
        """The fitted attributes both engines' rankers set the same way (``train_queries_``: the
        training queries that :meth:`score` compares with, ``None`` when they came as sizes;
        ``n_features_in_``/``feature_names_in_`` were set by ``check_X(X, self, reset=True)``).
        ``best_iteration_`` is in the engine's convention; ``best_score_`` holds each recorded
        metric after the ``n_used`` rounds :meth:`predict` uses."""
        self.train_queries_ = TrainingQueries.record(X, qid, group_ptr)
        self.best_iteration_ = int(best_iteration)
        self.best_score_ = {name: {m: v[n_used - 1] for m, v in hist.items()}
                            for name, hist in self.evals_result_.items()}

    def score(self, X, y, qid=None, group=None, *, new_queries=False):
        """Mean over queries of ``score_metric``; queries from ``qid``/``group`` or X's qid column.

        ``ValueError`` when a scored query is cut between fit and score (see
        ``check_scored_queries``); ``new_queries=True`` says the scored qids name other
        queries than the training ones even where their values repeat.
        """
        X, qid = split_qid_column(X, qid)
        X = self._input(X)
        ptr = require_queries(f"{type(self).__name__}.score", X.shape[0], group=group, qid=qid)
        check_scored_queries(self, f"{type(self).__name__}.score", X, qid, ptr, new_queries)
        s = self._predict(X)
        return float(np.mean(metric_values(s, y, ptr, self.score_metric)))


def check_scored_queries(est, where, X, qid, group_ptr, new_queries=False):
    """Refuse to score a query that ``est`` was fitted on part of: the one ``score`` check of the
    package's rankers (``XGBLambdaRanker``, ``LGBMLambdaRanker``, ``reference.MARTRanker``).

    ``est.train_queries_`` (a :class:`TrainingQueries`, set by ``fit`` when the queries came as
    qid values; ``None`` for ``group`` sizes) is compared with the scored queries; see
    :meth:`TrainingQueries.check`. ``new_queries=True`` skips the check: the scored qid values
    name other queries even where they repeat training qids (test files numbered independently of
    the training file). Renumbering such qids is safer: the check then stays on.
    """
    if not isinstance(new_queries, (bool, np.bool_)):
        raise ValueError(f"new_queries must be True or False, got {new_queries!r}")
    fitted = getattr(est, "train_queries_", None)
    if fitted is not None and not new_queries:
        fitted.check(where, X, qid, group_ptr)


def check_below(values, limit, name, where, fix):
    """``values`` (checked finite), refused (``ValueError`` naming ``where``, ``name``, the row and
    ``fix``) from ``limit`` on: where an engine's float32 copy holds inf (XGBoost) or stores inf
    (LightGBM's 1e38), so the number would not reach the engine as given."""
    big = np.abs(values) >= limit
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise ValueError(f"{where}: {name} of row {i} is {values[i]:g}{fix}")
    return values


def check_X(X, est=None, reset=False, where=None):
    """Features as a numeric 2-D array or CSR matrix; NaN allowed (the engines' missing values).

    With an estimator ``est``, scikit-learn's ``validate_data``: ``reset=True`` (``fit``) records
    ``n_features_in_`` and, for a DataFrame with string column names, ``feature_names_in_`` (the
    qid column was split off before: it is never a feature); ``reset=False`` (``predict``,
    ``score``) raises ``ValueError`` for another width or other column names or order, and warns
    (``UserWarning``) for a frame after fitting on an array or the reverse, as scikit-learn's own
    estimators do. With ``where`` instead (an eval set of ``fit``, checked against ``est``'s
    fitted names): a frame whose columns are not the training frame's, in its order, raises
    ``ValueError`` naming ``where``; an array there is not compared (the engines take eval sets
    by position).
    """
    from sklearn.utils.validation import check_array, validate_data

    options = {"accept_sparse": "csr", "dtype": "numeric", "ensure_all_finite": "allow-nan"}
    if est is None:
        return check_array(X, **options)
    if where is not None:
        fitted = getattr(est, "feature_names_in_", None)
        names = getattr(X, "columns", None)
        if fitted is not None and names is not None and list(names) != list(fitted):
            extra = [c for c in names if c not in set(fitted)]
            missing = [c for c in fitted if c not in set(names)]
            how = (f"unseen {extra[:5]}" if extra else "") + (", " if extra and missing else "") + \
                (f"missing {missing[:5]}" if missing else "")
            raise ValueError(f"{where}: its feature names should match those of the training data ("
                             f"{how or 'the same columns in another order'})")
        X = check_array(X, **options)
        if X.shape[1] != est.n_features_in_:
            raise ValueError(f"{where} has {X.shape[1]} features, the training data {est.n_features_in_}")
        return X
    return validate_data(est, X, reset=reset, **options)
