"""The hand-back of a gradient pass to an engine, in one pass over the rows (the adapters' exact back end).

Every boosting round the adapters turn the float64 gradients and Hessians of a pass into the engine's
float32 buffers, times the rows' weights, and check them: their sums finite (an overflow of σ² or of
many pairs, :func:`~lambda_objectives.objectives.lambdas.check_overflow`), the float32 sums and the
smallest Hessian (``LambdaObjective._check_hessian``). Done by numpy that is six passes (≈ 0.1 ms a
round at 20,000 rows: each float32 sum converts in buffered chunks); here it is one.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def hand_back(g, h, w, grad, hess):
    """``grad = float32(g·w)``, ``hess = float32(h·w)`` (``w`` per row, or empty: no weights) and the sums
    the checks read, each in row order: ``(Σ g, Σ h, Σ grad, Σ hess, min hess)``, the first two of the
    float64 inputs before the weights, the next two of the float32 outputs accumulated in float64,
    ``min hess`` ``inf`` for no rows (a NaN Hessian leaves it but makes ``Σ hess`` NaN).

    The outputs are those of ``grad[:] = g * w`` (one rounding of the float64 product to float32).
    """
    weighted = w.shape[0] > 0
    sg = 0.0
    sh = 0.0
    sg32 = 0.0
    sh32 = 0.0
    low = np.inf
    for i in range(g.shape[0]):
        a = g[i]
        b = h[i]
        sg += a
        sh += b
        if weighted:
            a *= w[i]
            b *= w[i]
        ga = np.float32(a)
        hb = np.float32(b)
        grad[i] = ga
        hess[i] = hb
        sg32 += np.float64(ga)
        sh32 += np.float64(hb)
        if hb < low:
            low = np.float64(hb)
    return sg, sh, sg32, sh32, low
