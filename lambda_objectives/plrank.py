"""PL-Rank-3 with its Hessian (Kang, de Rijke & Oosterhuis, SIGIR 2024): sampled gradients of the
expected DCG@K of a Plackett–Luce policy, one boosting round at a time.

Formulas, sampling and the generator: ``_kernels/plrank.py`` and docs/math.md.
"""


import numpy as np

from ._kernels import plrank as pk
from ._kernels.ranking import discount_table, document_gains
from ._threads import numba_threads
from .checks import SEED_MAX, check_integer, check_k, check_outputs, check_query_inputs

__all__ = ["PLRANK_DEFAULTS", "PLRANK_HESSIANS", "check_plrank_options", "plrank_gradients"]

#: the defaults: the whole list (``k=None``), 200 sampled rankings per query and round (Kang et al.'s
#: setting), the sampled Hessian's absolute value handed on (``hessian="abs"``, see :func:`plrank_gradients`)
PLRANK_DEFAULTS = {"k": None, "n_samples": 200, "seed": 0, "hessian": "abs"}

#: what becomes of the sampled Hessian ``h`` (an unbiased estimate, negative where E[DCG@K] curves up)
PLRANK_HESSIANS = ("raw", "abs")



def check_plrank_options(k=None, n_samples=200, seed=0, hessian="abs"):
    """Validated ``(k, n_samples, seed, hessian)``; ``ValueError`` naming the bad option.

    ``k``: None (the whole list) or an integer >= 1; ``n_samples``: integer >= 1; ``seed``: integer in
    [0, 2**64); ``hessian``: ``"abs"`` or ``"raw"``.
    """
    k = check_k(k)
    n_samples = check_integer(n_samples, "n_samples", 1)
    seed = check_integer(seed, "seed", 0, SEED_MAX)
    if hessian not in PLRANK_HESSIANS:
        raise ValueError(f"hessian must be one of {PLRANK_HESSIANS}, got {hessian!r}")
    return k, n_samples, seed, hessian


def plrank_gradients(scores, labels, group_ptr, *, k=None, n_samples=200, seed=0, iteration=0, hessian="abs",
                     query_weights=None, out=None, n_threads=None):
    r"""One boosting round of PL-Rank-3: sampled gradient and Hessian diagonal of :math:`-E[\mathrm{DCG@K}]`.

    Per query the Plackett–Luce policy :math:`\pi(d \mid \text{remaining}) \propto e^{s_d}` ranks the
    documents; :math:`E_\pi[\mathrm{DCG@K}] = E_y[\sum_{i<K} \rho_{y_i}/\log_2(i+2)]` with gain
    :math:`\rho = 2^y - 1` and no IDCG. ``n_samples`` rankings are drawn per query (Gumbel trick) and
    PL-Rank-3's estimators are averaged over them (docs/math.md has the formulas):

    .. math::

        g_d \approx -\frac{\partial E[\mathrm{DCG@K}]}{\partial s_d}, \quad
        h_d \approx -\frac{\partial^2 E[\mathrm{DCG@K}]}{\partial s_d^2}

    Oosterhuis, "Learning-to-Rank at the Speed of Sampling", SIGIR 2022 (PL-Rank-3, the gradient);
    Kang, de Rijke & Oosterhuis, "Estimating the Hessian Matrix of Ranking Objectives for Stochastic
    Learning to Rank with Gradient Boosted Trees", SIGIR 2024 (the Hessian). Both estimates are unbiased
    (``hessian="raw"``; tests/test_plrank.py checks them against an enumeration of every ranking).
    Unlike the published code, one set of rankings serves both (the authors draw two).

    The exact Hessian is negative wherever :math:`E[\mathrm{DCG@K}]` is locally convex in
    :math:`s_d` (a document pushed up from the bottom), and a sampled one can be negative anywhere. A
    Newton leaf :math:`-\sum g / (\sum h + \lambda)` with a negative or near-zero :math:`\sum h` steps the
    wrong way or explodes. The published code hands the raw values to XGBoost and relies on
    ``min_child_weight=5`` to refuse such leaves; ``hessian="abs"`` (the default) hands on :math:`|h|`
    instead, the usual curvature correction of Newton's method (a positive-definite step in the
    gradient's direction) and what keeps LightGBM (``min_sum_hessian_in_leaf``) and XGBoost splitting.
    The adapters' Hessian check warns (``HessianWarning``) on negative values, so ``hessian="raw"``
    through an adapter warns once per data set.

    **Which Hessian is the published one.** ``hessian="raw"`` is Kang, de Rijke & Oosterhuis's estimator
    (SIGIR 2024), unbiased for :math:`-\partial^2 E[\mathrm{DCG@K}]/\partial s_d^2`. The default
    ``"abs"`` is not theirs: :math:`E|h| \ge |E h|`, so it is a biased, always non-negative variant (larger
    than the exact curvature's magnitude wherever the samples disagree in sign), chosen for engines that
    need positive Hessians. Use ``"raw"`` to reproduce the paper.

    Scores may lie any finite distance apart: a query whose scores span more than 300 is sampled and
    summed on per-position scales (``_kernels/plrank.py``), so no document is tied with another by
    under- or overflow.

    Draws depend on ``(seed, iteration, query index)`` only (counter-based, as YetiRank's), so a call is
    bit-identical at any thread count; an engine adapter passes ``iteration`` = its round counter.

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
        Finite; labels non-negative (real values allowed; gain ``2**label - 1``).
    group_ptr : array-like of shape (n_queries + 1,)
    k : int or None
        The cut-off K of DCG@K (and the length of each sampled ranking); ``None`` = the whole list.
    n_samples : int >= 1
        Rankings drawn per query and round (200: Kang et al.'s experiments).
    seed : int in [0, 2**64)
    iteration : int >= 0
        The boosting round: a fresh, reproducible draw per round.
    hessian : {"abs", "raw"}
        ``"raw"``: the published, unbiased estimate (Kang et al. 2024; may be negative); ``"abs"`` (default):
        its absolute value, a biased positive variant.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian.
    out : (ndarray, ndarray), optional
        Contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads; the result does not depend on it.

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    k, n_samples, seed, hessian = check_plrank_options(k, n_samples, seed, hessian)
    iteration = check_integer(iteration, "iteration", 0, SEED_MAX)
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    gains = document_gains(y, "exp")
    if not np.all(np.isfinite(gains)):
        i = int(np.flatnonzero(~np.isfinite(gains))[0])
        raise ValueError(f"gain 2**label - 1 overflows float64 at row {i} (label {y[i]:g}); labels must be below 1024")
    n = s.shape[0]
    grad, hess = check_outputs(out, n, scores=scores, labels=labels, group_ptr=group_ptr, query_weights=query_weights)
    longest = int(np.max(np.diff(ptr), initial=1))
    disc = discount_table(max(1, longest if k is None else min(k, longest)))
    # the generator's uint64 arithmetic wraps by design; numpy warns about it when numba is off
    with numba_threads(n_threads), np.errstate(over="ignore"):
        pk.plrank_driver(s, gains, ptr, w, np.uint64(seed), np.uint64(iteration), n_samples,
                         0 if k is None else k, disc, grad, hess)
    if not (np.isfinite(np.sum(grad)) and np.isfinite(np.sum(hess))):
        raise ValueError("PL-Rank gradients overflowed to inf/NaN: the gains 2**label - 1 times the sample "
                         "sums are too large; use smaller labels")
    if hessian == "abs":
        np.abs(hess, out=hess)
    return grad, hess
