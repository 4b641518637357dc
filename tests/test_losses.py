"""reference.losses: each loss's gradient and Hessian against finite differences of its loss."""

import numpy as np
import pytest

from reference.losses import XENDCG, Lambda, LeastSquares, Logistic, McRank


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 12).astype(float)
    return y, np.array([0, 5, 12]), rng


@pytest.mark.parametrize("loss", [LeastSquares(), Logistic(0.5), Logistic(0.5, balanced=True)],
                         ids=["ls", "logistic", "logistic-balanced"])
def test_pointwise_gradients_are_derivatives_of_the_mean_loss(loss):
    y, ptr, rng = _data()
    F = rng.normal(size=y.size)
    g, h = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, y, ptr, g, h)
    eps = 1e-6
    for i in range(y.size):
        e = np.zeros_like(F)
        e[i] = eps
        # the losses report a mean over rows; the gradients are per row (the sum's derivative)
        fd = (loss.loss(F + e, y, ptr) - loss.loss(F - e, y, ptr)) / (2 * eps) * y.size
        assert fd == pytest.approx(g[i], abs=1e-6)
        gp, gm, hh = np.empty_like(F), np.empty_like(F), np.empty_like(F)
        loss.gradients(F + e, y, ptr, gp, hh)
        loss.gradients(F - e, y, ptr, gm, hh)
        assert (gp[i] - gm[i]) / (2 * eps) == pytest.approx(h[i], abs=1e-6)


def test_mcrank_gradient_is_the_softmax_cross_entropy_derivative():
    y, ptr, rng = _data(1)
    loss = McRank(3)
    F = rng.normal(size=(y.size, 3))
    g, h = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, y, ptr, g, h)
    eps = 1e-6
    for i, c in [(0, 0), (3, 2), (7, 1)]:
        e = np.zeros_like(F)
        e[i, c] = eps
        fd = (loss.loss(F + e, y, ptr) - loss.loss(F - e, y, ptr)) / (2 * eps) * y.size
        assert fd == pytest.approx(g[i, c], abs=1e-6)
    np.testing.assert_allclose(loss.ranking_scores(F).shape, (y.size,))


@pytest.mark.parametrize("loss", [Lambda("ndcg", 3, 1.0), XENDCG(random_state=0)], ids=["lambda", "xendcg"])
def test_listwise_and_pairwise_losses_fall_as_a_gradient_step_is_taken(loss):
    y, ptr, rng = _data(2)
    F = rng.normal(size=y.size)
    g, h = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, y, ptr, g, h)
    assert np.all(h >= 0) and np.any(g != 0)
    assert loss.loss(F - 0.01 * g, y, ptr) < loss.loss(F, y, ptr)


def test_yetirank_loss_advances_its_round_and_records_the_noise_free_pair_loss():
    from lambda_objectives import yetirank_gradients
    from reference.losses import YetiRank

    F, y, ptr = np.array([0.2, 1.0, -0.5, 0.4, 0.0]), np.array([2.0, 0.0, 1.0, 1.0, 0.0]), np.array([0, 3, 5])
    loss = YetiRank(random_state=4, decay=0.5)
    g, h = np.empty(5), np.empty(5)
    for r in range(2):
        loss.gradients(F, y, ptr, g, h)
        want = yetirank_gradients(F, y, ptr, seed=4, decay=0.5, iteration=r)
        np.testing.assert_array_equal(g, want[0])
        np.testing.assert_array_equal(h, want[1])
    # noise-free rankings: (1, 0, 2) and (3, 4); neighbours weighted 0.15 · 0.5^(t−1) · |Δy|
    q0 = 0.15 * 2 * np.log1p(np.exp(-(0.2 - 1.0))) + 0.15 * 0.5 * 1 * np.log1p(np.exp(-(0.2 + 0.5)))
    q1 = 0.15 * 1 * np.log1p(np.exp(-(0.4 - 0.0)))
    assert loss.loss(F, y, ptr) == pytest.approx((q0 + q1) / 2, rel=1e-12)


@pytest.mark.parametrize("label, what", [(1e6, "asks for 1,000,001 grade columns"), (2.5, "is not an integer grade"),
                                         (100.0, "asks for 101 grade columns")])
def test_mcrank_grades_are_bounded_before_any_rows_by_grades_array(label, what):
    # a label of 1e6 allocated (rows × 1,000,001) float64 arrays: 22 GB and an OOM kill, no exception
    from reference import MARTRanker
    from reference.losses import MCRANK_MAX_GRADE

    assert MCRANK_MAX_GRADE == 99
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(3000, 3)), rng.integers(0, 3, 3000).astype(float)
    y[1234] = label
    with pytest.raises(ValueError, match=rf"objective='mcrank' needs integer relevance grades 0..99 .*y\[1234\] = "
                                         rf"{label!r} {what}"):
        MARTRanker(objective="mcrank", n_estimators=1).fit(X, y, group=[1000, 2000])
    with pytest.raises(ValueError, match=r"McRank takes 1..100 grades, got n_classes=1000001"):
        McRank(1_000_001)
    y[1234] = -1.0  # MARTRanker's label check says it first; the loss on its own too
    with pytest.raises(ValueError, match=r"y\[1234\] = -1.0 is negative"):
        McRank.from_labels(y)
    y[1234] = MCRANK_MAX_GRADE  # the largest grade still trains
    assert McRank.from_labels(y).n_columns == 100


@pytest.mark.parametrize("metric, opts", [("softmax", {}), ("softmax", {"beta": 2.0, "lambda_": 0.0}),
                                          ("listmle", {}), ("listmle", {"ties": "stable"})])
def test_listwise_loss_is_the_objectives_own(metric, opts):
    """The recorded loss of softmax / ListMLE is the function whose gradient the kernel returns."""
    from reference.losses import Listwise

    y, ptr, rng = _data(3)
    F = rng.normal(size=y.size)
    loss = Listwise(metric, **opts)
    g, h = np.empty_like(F), np.empty_like(F)
    loss.gradients(F, y, ptr, g, h)
    eps = 1e-6
    for i in range(0, y.size, 3):
        e = np.zeros_like(F)
        e[i] = eps
        fd = (loss.loss(F + e, y, ptr) - loss.loss(F - e, y, ptr)) / (2 * eps) * (ptr.shape[0] - 1)
        assert fd == pytest.approx(g[i], abs=1e-6)
    assert np.all(h >= 0) and loss.loss(F - 0.01 * g, y, ptr) < loss.loss(F, y, ptr)
    with pytest.raises(ValueError, match="beta must be"):
        Listwise("softmax", beta=0.0)
    with pytest.raises(ValueError, match="ties must be"):
        Listwise("listmle", ties="random")
