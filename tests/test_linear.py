"""Tests of model-agnostic LambdaRank: training, chain-rule gradients, the local-optimality test."""

import math

import numpy as np
import pytest

from lambda_objectives import lambda_gradients, mean_metric
from lambda_objectives.diagnostics.linear import (
    LinearLambdaRank,
    MLPLambdaRank,
    directions_needed,
    local_optimality_test,
)


@pytest.fixture(scope="module")
def linear_data():
    rng = np.random.default_rng(0)
    sizes = rng.integers(5, 30, 80)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    X = rng.normal(size=(ptr[-1], 6))
    latent = X @ np.array([1.0, -2.0, 0.5, 0.0, 0.0, 1.5]) + rng.normal(0, 0.3, ptr[-1])
    y = np.digitize(latent, np.quantile(latent, [0.5, 0.8, 0.95])).astype(float)
    return X, y, ptr


@pytest.mark.parametrize("cls", [LinearLambdaRank, MLPLambdaRank])
def test_training_improves_ndcg(linear_data, cls):
    X, y, ptr = linear_data
    model = cls(learning_rate=0.5, n_iter=60).fit(X, y, group_ptr=ptr)
    rand = mean_metric(np.random.default_rng(1).normal(size=len(y)), y, ptr, "ndcg", 10)
    assert model.history_["train"][-1] > rand + 0.25
    assert model.history_["train"][-1] > model.history_["train"][0] - 1e-9


@pytest.mark.parametrize("cls", [LinearLambdaRank, MLPLambdaRank])
def test_chain_rule_gradient_matches_finite_differences(linear_data, cls):
    X, y, ptr = linear_data
    X, y, ptr = X[: ptr[4]], y[: ptr[4]], ptr[:5]
    model = cls(n_iter=0).fit(X, y, group_ptr=ptr)
    w = model.get_weights() + np.random.default_rng(2).normal(0, 0.3, model.get_weights().size)
    model.set_weights(w)
    s = model.predict(X)
    g, _ = lambda_gradients(s, y, ptr, "ndcg", 10)
    analytic = model.gradient(X, g)

    def cost(wv):
        # the pairwise cost the lambdas differentiate; steps this small keep the ranking fixed
        model.set_weights(wv)
        return lambda_gradients(model.predict(X), y, ptr, "ndcg", 10, return_cost=True)[2].sum()

    eps = 1e-6
    for idx in np.random.default_rng(3).choice(w.size, 5, replace=False):
        e = np.zeros_like(w)
        e[idx] = eps
        fd = (cost(w + e) - cost(w - e)) / (2 * eps)
        assert fd == pytest.approx(analytic[idx], rel=1e-4, abs=1e-6)
    model.set_weights(w)


def test_direction_count_formula():
    assert directions_needed(0.01, 0.01) == 459
    assert directions_needed(0.05, 0.1) == math.ceil(math.log(0.05) / math.log(0.9))
    with pytest.raises(ValueError):
        directions_needed(0.0, 0.1)


def test_local_optimality_detects_non_optimum_and_restores_weights(linear_data):
    X, y, ptr = linear_data
    model = LinearLambdaRank(n_iter=0).fit(X, y, group_ptr=ptr)
    model.set_weights(np.r_[np.array([-1.0, 2.0, 0.0, 0.0, 0.0, -1.0]), 0.0])  # a bad ranker
    w = model.get_weights().copy()
    res = local_optimality_test(model, X, y, ptr, n_directions=40, step=0.5)
    assert not res["local_max"] and res["improving"] > 0 and res["best"] > res["base"]
    np.testing.assert_array_equal(model.get_weights(), w)
    trained = LinearLambdaRank(learning_rate=0.5, n_iter=80).fit(X, y, group_ptr=ptr)
    res2 = local_optimality_test(trained, X, y, ptr, n_directions=40, step=1e-3)
    assert res2["n_directions"] == 40 and res2["base"] > res["base"]
