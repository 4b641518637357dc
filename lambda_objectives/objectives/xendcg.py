"""XE-NDCG gradients (Bruch, Zoghi, Bendersky & Najork, WWW 2021, arXiv:1911.09798).

A listwise objective: per query ``ρ = softmax(s)``, targets ``φ_i = 2^{y_i} − γ_i`` with a fresh
``γ_i ~ U[0, 1)`` per document per round, loss ``L = −Σ_i (φ_i/Σ_j φ_j) log ρ_i``. O(n) per query.
Formulas and LightGBM's variant: ``_kernels/xendcg.py`` and docs/math.md.
"""

import numpy as np

from .._core.config import FLOAT
from .._kernels import xendcg as xk
from .._core.threads import numba_threads
from ..checks import check_query_inputs, check_scores

__all__ = ["xendcg_gradients", "xendcg_targets"]


def xendcg_targets(labels, gammas):
    """``φ = 2^y − γ`` (finite, > 0 for labels >= 0 and ``γ`` in [0, 1))."""
    with np.errstate(over="ignore"):
        phi = np.exp2(labels) - gammas
    if not np.all(np.isfinite(phi)):
        i = int(np.flatnonzero(~np.isfinite(phi))[0])
        raise ValueError(f"XE-NDCG target 2**label overflows float64 at row {i} (label {labels[i]:g}); "
                         "labels must be below 1024")
    return phi


def xendcg_gradients(scores, labels, group_ptr, *, gammas=None, seed=None, query_weights=None, n_threads=None):
    r"""XE-NDCG gradient and diagonal Hessian of the loss engines minimise.

    .. math::

        \rho = \mathrm{softmax}(s), \quad \phi_i = 2^{y_i} - \gamma_i, \quad
        L = -\sum_i \frac{\phi_i}{\sum_j \phi_j} \log \rho_i, \quad
        g_i = \rho_i - \frac{\phi_i}{\sum_j \phi_j}, \quad h_i = \rho_i (1 - \rho_i)

    per query (Bruch et al., WWW 2021, Eq. 5-6; the exact derivatives of ``L`` for the given ``γ``).
    Queries of one document get zeros. Labels are finite and non-negative (real values allowed:
    ``2^y − γ > 0``). Ties in the scores do not matter (no ranking is formed).

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
    group_ptr : array-like of shape (n_queries + 1,)
    gammas : array-like of shape (n,), optional
        The ``γ`` of this round, each in [0, 1). Default: drawn from ``numpy.random.default_rng(seed)``;
        an engine adapter draws fresh ones every round from one generator, so a run is reproducible.
    seed : int, optional
        Seed of the draw when ``gammas`` is not given.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian.
    n_threads : int, optional

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    n = s.shape[0]
    if gammas is None:
        gammas = np.random.default_rng(seed).random(n)
    elif seed is not None:
        raise ValueError("give gammas or seed, not both")
    gam = check_scores(gammas, "gammas")
    if gam.shape[0] != n:
        raise ValueError(f"gammas has {gam.shape[0]} entries for {n} rows")
    if np.any((gam < 0) | (gam >= 1)):
        i = int(np.flatnonzero((gam < 0) | (gam >= 1))[0])
        raise ValueError(f"gammas must lie in [0, 1); row {i} is {gam[i]!r}")
    phi = xendcg_targets(y, gam)
    grad, hess = np.empty(n, dtype=FLOAT), np.empty(n, dtype=FLOAT)
    with numba_threads(n_threads):
        xk.xendcg_driver(s, phi, ptr, w, grad, hess)
    return grad, hess
