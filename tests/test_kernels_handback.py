"""The adapters' one-pass hand-back (``_kernels/handback.py``) against its definition in numpy."""

import numpy as np
import pytest

from lambda_objectives._kernels.handback import hand_back

pytestmark = pytest.mark.kernel


def _definition(g, h, w):
    gw, hw = (g, h) if w.size == 0 else (g * w, h * w)
    grad, hess = gw.astype(np.float32), hw.astype(np.float32)
    return grad, hess, (g.sum(), h.sum(), grad.sum(dtype=np.float64), hess.sum(dtype=np.float64),
                        hess.min(initial=np.inf))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [0, 1, 7, 20_000])
def test_hand_back_is_the_cast_times_the_weights_and_its_sums(n, weighted):
    rng = np.random.default_rng(n)
    g, h = rng.normal(size=n) * 1e3, rng.random(n)
    w = rng.random(n) * 3 if weighted else np.zeros(0)
    g0, h0, w0 = g.copy(), h.copy(), w.copy()
    grad, hess = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
    sums = hand_back(g, h, w, grad, hess)
    want_g, want_h, want_sums = _definition(g, h, w)
    np.testing.assert_array_equal(grad, want_g)  # the same rounding: bit for bit
    np.testing.assert_array_equal(hess, want_h)
    np.testing.assert_allclose(sums, want_sums, rtol=1e-12, atol=1e-9)  # row order against numpy's pairwise sums
    assert sums[4] == want_sums[4]
    for a, b in ((g, g0), (h, h0), (w, w0)):
        np.testing.assert_array_equal(a, b)  # inputs untouched


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_a_bad_value_shows_in_the_sums(bad):
    """A NaN or infinity, or a float64 value beyond float32's range (it casts to inf), makes the sums
    the checks read non-finite: it is never handed to an engine unseen."""
    g, h = np.ones(5), np.ones(5)
    g[3] = bad
    grad, hess = np.zeros(5, np.float32), np.zeros(5, np.float32)
    sg, sh, sg32, sh32, low = hand_back(g, h, np.zeros(0), grad, hess)
    assert not np.isfinite(sg32)
    assert np.isfinite(sg) == (bad == 1e300)
    assert low == 1.0 and np.isfinite(sh32)


def test_weights_beyond_float32_overflow_in_the_float32_sums_only():
    g, h = np.ones(3), np.ones(3)
    grad, hess = np.zeros(3, np.float32), np.zeros(3, np.float32)
    sg, sh, sg32, sh32, _ = hand_back(g, h, np.array([1.0, 1e39, 1.0]), grad, hess)
    assert (sg, sh) == (3.0, 3.0) and np.isinf(sg32) and np.isinf(sh32) and np.isinf(hess[1])


def test_negative_and_nan_hessians_give_the_minimum_and_a_nan_sum():
    g = np.zeros(4)
    grad, hess = np.zeros(4, np.float32), np.zeros(4, np.float32)
    assert hand_back(g, np.array([0.5, -2.0, 1.0, 0.0]), np.zeros(0), grad, hess)[4] == -2.0
    sums = hand_back(g, np.array([0.5, np.nan, 1.0, 0.25]), np.zeros(0), grad, hess)
    assert sums[4] == 0.25 and np.isnan(sums[3])
