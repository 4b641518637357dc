"""What the package's scikit-learn rankers share: every call that sees rows must see their queries.

A ranking estimator that silently treats rows without query ids as one query scores a whole
cross-validation fold as a single list (NDCG@10 0.47 where the per-query value is 0.78 on MQ2008),
and ``GridSearchCV`` then picks another model. The rankers therefore refuse rows without queries,
and the message names every way to pass them.
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
    return resolve_group_ptr(n_rows, group=group, group_ptr=group_ptr, qid=qid)


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
        """``X`` for :meth:`predict`: its qid column dropped, checked, with the fitted width."""
        self._check_fitted()
        X = check_X(split_qid_column(X, None)[0])
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def _fitted(self, X, names, best_iteration):
        """The fitted attributes both engines' rankers set the same way."""
        self.n_features_in_ = X.shape[1]
        if names is not None and all(isinstance(c, str) for c in names):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.best_iteration_ = int(best_iteration)
        self.best_score_ = {name: {m: v[self.best_iteration_ - 1] for m, v in hist.items()}
                            for name, hist in self.evals_result_.items()}

    def score(self, X, y, qid=None, group=None):
        """Mean over queries of ``score_metric``; queries from ``qid``/``group`` or X's qid column."""
        X, qid = split_qid_column(X, qid)
        ptr = require_queries(f"{type(self).__name__}.score", X.shape[0], group=group, qid=qid)
        s = self.predict(X)
        return float(np.mean(metric_values(s, y, ptr, self.score_metric)))


def check_X(X):
    """Features as a numeric 2-D array or CSR matrix; NaN allowed (the engines' missing values)."""
    from sklearn.utils.validation import check_array

    return check_array(X, accept_sparse="csr", dtype="numeric", ensure_all_finite="allow-nan")
