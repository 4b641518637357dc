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
