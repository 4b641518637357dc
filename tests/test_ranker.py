"""Tests of reference.ranker.MARTRanker's parameters: LightGBM's max_depth convention and
up-front validation of every hyper-parameter."""

import numpy as np
import pytest

from lambda_objectives import make_ranking
from reference import MARTRanker


@pytest.fixture(scope="module")
def small():
    return make_ranking(80, docs_per_query=(5, 30), n_features=6, seed=7)


@pytest.mark.parametrize("no_limit", [-1, 0])
def test_max_depth_minus_one_and_zero_mean_no_limit_as_in_lightgbm(small, no_limit):
    # on 0.1 these trained one-leaf trees (NDCG@10 0.344 instead of 0.943)
    kw = dict(num_leaves=8, n_estimators=5, growth="depth_first")
    ref = MARTRanker(max_depth=None, **kw).fit(small.X, small.y, group=small.group)
    got = MARTRanker(max_depth=no_limit, **kw).fit(small.X, small.y, group=small.group)
    np.testing.assert_array_equal(ref.predict(small.X), got.predict(small.X))
    assert all(int(np.sum(t["feature"] < 0)) == 8 for r in got.trees_ for t in r)
    assert got.get_equivalent_params("lightgbm")["max_depth"] == -1
    assert got.get_equivalent_params("xgboost")["max_depth"] == 0
    limited = MARTRanker(max_depth=2, **kw).fit(small.X, small.y, group=small.group)
    assert all(int(np.sum(t["feature"] < 0)) <= 4 for r in limited.trees_ for t in r)


@pytest.mark.parametrize("name, value", [
    ("lambda_l2", -1.0), ("lambda_l2", float("nan")), ("min_data_in_leaf", -1), ("min_data_in_leaf", 2.5),
    ("min_sum_hessian_in_leaf", -1e-3), ("min_sum_hessian_in_leaf", float("inf")), ("num_leaves", 1),
    ("num_leaves", 10.5), ("n_estimators", 3.0), ("n_estimators", -1), ("learning_rate", float("inf")),
    ("learning_rate", 0.0), ("learning_rate", float("nan")), ("max_bin", 1), ("subsample", 0.0),
    ("subsample", 1.5), ("colsample", float("nan")), ("sigma", -1.0), ("k", 0), ("n_threads", 0),
    ("max_depth", 2.5), ("metric", "auc"), ("objective", "hinge"), ("growth", "random"),
    ("leaf_value", "median"), ("kernel_options", ["gain"]), ("num_leaves", True),
])
def test_every_bad_hyper_parameter_is_named(small, name, value):
    with pytest.raises(ValueError, match=name):
        MARTRanker(**{name: value, "n_estimators": 1} if name != "n_estimators" else {name: value}).fit(
            small.X, small.y, group=small.group)


# --- a scikit-learn estimator ------------------------------------------------------------------
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

#: checks a ranker cannot pass, and why
RANKER_EXPECTED_FAILURES = {
    "check_dtype_object": "relevance labels are numeric grades: a string y raises 'y must be numeric', "
                          "not a classifier's 'Unknown label type'",
}


@parametrize_with_checks([MARTRanker(n_estimators=3, num_leaves=4, min_data_in_leaf=1, n_threads=1)],
                         expected_failed_checks=lambda est: RANKER_EXPECTED_FAILURES)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _frame(data):
    import pandas as pd

    df = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(data.X.shape[1])])
    df.insert(0, "qid", data.qid)
    return df


def test_clone_params_repr_and_fitted_attributes(small):
    from sklearn.base import clone

    m = MARTRanker(num_leaves=5, n_estimators=4, learning_rate=0.2, kernel_options={"gain": "linear"})
    c = clone(m)
    assert c.get_params() == m.get_params() and c is not m
    assert "num_leaves=5" in repr(m) and "learning_rate=0.2" in repr(m)
    m.set_params(num_leaves=6)
    assert m.num_leaves == 6
    df = _frame(small)
    m.fit(df, small.y, eval_set=[(df, small.y)], early_stopping_rounds=2)
    assert m.n_features_in_ == small.X.shape[1] and list(m.feature_names_in_) == list(df.columns[1:])
    assert m.feature_importances_.shape == (small.X.shape[1],) and m.feature_importances_.sum() > 0
    assert set(m.evals_result_) == {"train", "valid_0"} and "ndcg@10" in m.evals_result_["valid_0"]
    assert m.best_score_["valid_0"]["ndcg@10"] == m.evals_result_["valid_0"]["ndcg@10"][m.best_iteration_ - 1]
    # the qid column groups the rows and is never a feature
    np.testing.assert_array_equal(m.predict(df), m.predict(small.X))
    assert m.score(df, small.y) == pytest.approx(
        MARTRanker(num_leaves=6, n_estimators=4, learning_rate=0.2, kernel_options={"gain": "linear"})
        .fit(small.X, small.y, qid=small.qid, eval_set=[(small.X, small.y, small.group)],
             early_stopping_rounds=2).score(small.X, small.y, qid=small.qid))
    with pytest.raises(ValueError, match="qid"):
        m.fit(df, small.y, qid=small.qid)


def test_grid_search_with_group_k_fold(small):
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

    df = _frame(small)
    search = GridSearchCV(MARTRanker(n_estimators=5, min_data_in_leaf=5, n_threads=1),
                          {"num_leaves": [3, 7], "learning_rate": [0.1, 0.3]}, cv=GroupKFold(3))
    search.fit(df, small.y, groups=small.qid)
    assert set(search.best_params_) == {"num_leaves", "learning_rate"}
    assert 0 < search.best_score_ <= 1 and len(search.cv_results_["mean_test_score"]) == 4
    # qid= is sample-aligned, so the splitter slices it with X and y
    scores = cross_val_score(MARTRanker(n_estimators=3, n_threads=1), small.X, small.y, groups=small.qid,
                             cv=GroupKFold(3), params={"qid": small.qid})
    assert scores.shape == (3,) and np.all((scores > 0) & (scores <= 1))
