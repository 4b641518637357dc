"""Listwise objectives without sampling: softmax cross-entropy (CatBoost's ``QuerySoftMax``) and ListMLE.

Both are deterministic and take no pair options; formulas, derivations and tie conventions:
``_kernels/listwise.py`` and docs/math.md.
"""

import numbers

import numpy as np

from .._kernels import listwise as lk
from .._core.threads import numba_threads
from ..checks import check_outputs, check_query_inputs

__all__ = ["LISTMLE_TIES", "SOFTMAX_DEFAULTS", "check_listmle_options", "check_softmax_options",
           "listmle_gradients", "softmax_gradients"]

#: CatBoost's ``QuerySoftMax`` defaults (``beta=1``, ``lambda=0.01``); ``lambda_`` is our name for
#: CatBoost's ``lambda`` (a Python keyword)
SOFTMAX_DEFAULTS = {"beta": 1.0, "lambda_": 0.01}

#: ListMLE's tie conventions (see :func:`listmle_gradients`); the first is the default
LISTMLE_TIES = ("breslow", "stable")


def _real(value, name, low, strict):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) \
            or (value <= low if strict else value < low):
        raise ValueError(f"{name} must be a finite number {'>' if strict else '>='} {low}, got {value!r}")
    return float(value)


def check_softmax_options(beta=1.0, lambda_=0.01):
    """Validated ``(beta, lambda_)``: ``beta`` finite > 0, ``lambda_`` finite >= 0 (``ValueError`` otherwise)."""
    return _real(beta, "beta", 0.0, True), _real(lambda_, "lambda_", 0.0, False)


def check_listmle_options(ties="breslow"):
    """Validated ``ties``: one of :data:`LISTMLE_TIES` (``ValueError`` otherwise)."""
    if ties not in LISTMLE_TIES:
        raise ValueError(f"ties must be one of {LISTMLE_TIES}, got {ties!r}")
    return ties


def softmax_gradients(scores, labels, group_ptr, *, beta=1.0, lambda_=0.01, query_weights=None, out=None,
                      n_threads=None):
    r"""Softmax cross-entropy per query (CatBoost's ``QuerySoftMax``): gradient and Hessian diagonal.

    .. math::

        p = \mathrm{softmax}(\beta s), \quad T = \sum_i y_i, \quad L = -\sum_i y_i \log p_i, \quad
        g_i = \beta (T p_i - y_i), \quad h_i = \beta T \left(\beta p_i (1 - p_i) + \lambda\right)

    per query (ListNet's top-one cross-entropy with unnormalised targets, Cao et al., ICML 2007;
    the best neural loss in Qin et al., ICLR 2021). ``g`` is the exact gradient of ``L``;
    :math:`\beta^2 T p_i (1 - p_i)` is the exact Hessian diagonal (non-negative), to which CatBoost's
    ``lambda`` adds :math:`\lambda \beta T` (a damping of the Newton step, zero in the gradient). These
    are minus CatBoost's ``der1`` and ``der2`` for ``QuerySoftMax:beta=β;lambda=λ`` (catboost 1.2.10;
    tests/test_catboost.py compares them with the probe). A query whose labels sum to 0 gets
    zeros; a one-document query gets ``g = 0`` and ``h = λ β T`` (CatBoost's too). Ties in scores do not
    matter (no ranking is formed). Labels are finite, non-negative and may be real-valued.

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
    group_ptr : array-like of shape (n_queries + 1,)
    beta : float > 0
        CatBoost's ``beta``, the softmax's inverse temperature (default 1).
    lambda_ : float >= 0
        CatBoost's ``lambda`` (default 0.01, CatBoost's); ``lambda_`` because ``lambda`` is a Python keyword.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian. (CatBoost's document weights enter its softmax
        instead; the engine adapters multiply by them, as for every objective of this package.)
    out : (ndarray, ndarray), optional
        Preallocated contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads; the result does not depend on it.

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    beta, lam = check_softmax_options(beta, lambda_)
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    grad, hess = check_outputs(out, s.shape[0], scores=scores, labels=labels, group_ptr=group_ptr,
                          query_weights=query_weights)
    with np.errstate(over="ignore"):
        if not np.isfinite(beta * np.sum(y)):
            raise ValueError(f"beta * sum(labels) overflows float64 (beta={beta!r}); use smaller labels or beta")
    with numba_threads(n_threads):
        lk.softmax_driver(s, y, ptr, beta, lam, w, grad, hess)
    if not (np.isfinite(np.sum(grad)) and np.isfinite(np.sum(hess))):
        raise ValueError(f"softmax gradients overflowed float64 (beta={beta!r}, lambda_={lam!r}); "
                         "use a smaller beta or smaller labels")
    return grad, hess


def listmle_gradients(scores, labels, group_ptr, *, ties="breslow", query_weights=None, out=None, n_threads=None):
    r"""ListMLE (Xia et al., ICML 2008): gradient and exact Hessian diagonal of the Plackett–Luce loss.

    Per query the documents are sorted by label, best first, into groups of equal labels
    :math:`G_1, \dots, G_m`; :math:`S_g = G_g \cup \dots \cup G_m`. The loss is

    .. math::

        L = \sum_{g < m} \Big( |G_g| \log \sum_{j \in S_g} e^{s_j} - \sum_{i \in G_g} s_i \Big), \quad
        g_i = \sum_{g \le \gamma(i),\, g < m} |G_g| p_{ig} - [\gamma(i) < m], \quad
        h_i = \sum_{g \le \gamma(i),\, g < m} |G_g| p_{ig} (1 - p_{ig})

    with :math:`p_{ig} = e^{s_i} / \sum_{S_g} e^{s}` and :math:`\gamma(i)` the group of document ``i``.
    Without tied labels this is minus the log Plackett–Luce probability of the label order (ListMLE
    exactly). ``h`` is the exact diagonal of the Hessian: every term is a log-sum-exp, whose Hessian
    :math:`\mathrm{diag}(p) - p p^\top` is positive semi-definite, so the loss is convex and ``h >= 0``.

    Ties in labels:

    * ``ties="breslow"`` (default): Breslow's (1974) approximation of the likelihood of the group order
      (every document of a group shares the denominator :math:`\sum_{S_g}`); the last group's term is
      left out, because its documents fill the remaining positions with probability 1 whatever their
      order. The result does not depend on the input order of the rows, and a query whose labels are all
      equal gets zeros.
    * ``ties="stable"``: every document is a group of its own, in input order among equal labels (a
      stable sort): the ListMLE of that one permutation, which asks the model to rank tied documents
      by their row order.

    Queries of one document get zeros. Ties in scores do not matter. Labels are finite and non-negative
    (real values allowed: only their order is used).

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
    group_ptr : array-like of shape (n_queries + 1,)
    ties : {"breslow", "stable"}
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian.
    out : (ndarray, ndarray), optional
        Preallocated contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads; the result does not depend on it.

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    ties = check_listmle_options(ties)
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    grad, hess = check_outputs(out, s.shape[0], scores=scores, labels=labels, group_ptr=group_ptr,
                          query_weights=query_weights)
    with numba_threads(n_threads):
        lk.listmle_driver(s, y, ptr, ties == "breslow", w, grad, hess)
    return grad, hess
