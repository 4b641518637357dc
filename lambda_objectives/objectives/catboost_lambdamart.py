"""CatBoost's native ``LambdaMart`` gradients as formulas, without CatBoost: an objective family any engine
can train with (``preset="catboost"`` of the adapters).

:func:`catboost_lambdamart_gradients` computes what CatBoost's ``LambdaMart`` loss (catboost >= 1.2.1,
``TLambdaMartError``) feeds its trees, per document; the formulas are in
``lambda_objectives._kernels.catboost``. Their validation against the engine (the probe) is
:mod:`lambda_objectives.catboost`, one layer up.
"""

import numpy as np

from .._core.config import FLOAT
from .._core.threads import numba_threads
from .._kernels import catboost as _cb
from ..checks import check_labels, check_scores
from ..data.groups import check_group_ptr

__all__ = ["catboost_lambdamart_gradients", "catboost_loss_function", "check_catboost_options"]

_METRICS = {"ndcg": _cb.NDCG, "dcg": _cb.NDCG, "mrr": _cb.MRR, "err": _cb.ERR, "map": _cb.MAP}


def catboost_loss_function(metric="ndcg", top=None, sigma=1.0, norm=True, gain="linear", denominator="log"):
    """The CatBoost ``loss_function`` string matching :func:`catboost_lambdamart_gradients`'s arguments.

    >>> catboost_loss_function("ndcg", top=10, norm=False)
    'LambdaMart:metric=NDCG;top=10;sigma=1.0;norm=false;type=Base;denominator=LogPosition'
    """
    check_catboost_options(metric, top, sigma, gain, denominator)
    parts = [f"metric={metric.upper()}"]
    if top is not None:
        parts.append(f"top={int(top)}")
    parts += [f"sigma={float(sigma)!r}", f"norm={'true' if norm else 'false'}"]
    if metric in ("ndcg", "dcg"):
        parts += [f"type={'Exp' if gain == 'exp' else 'Base'}",
                  f"denominator={'LogPosition' if denominator == 'log' else 'Position'}"]
    return "LambdaMart:" + ";".join(parts)


def check_catboost_options(metric, top, sigma, gain, denominator):
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}, got {metric!r}")
    if top is not None and (isinstance(top, bool) or int(top) != top or top < 1):
        raise ValueError(f"top must be a positive integer or None, got {top!r}")
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite (CatBoost refuses others), got {sigma!r}")
    if gain not in ("linear", "exp"):
        raise ValueError(f"gain must be 'linear' (CatBoost type=Base) or 'exp' (type=Exp), got {gain!r}")
    if denominator not in ("log", "position"):
        raise ValueError(f"denominator must be 'log' (LogPosition) or 'position' (Position), got {denominator!r}")


def catboost_lambdamart_gradients(scores, labels, group_ptr, metric="ndcg", top=None, sigma=1.0, norm=True,
                                  *, gain="linear", denominator="log", n_threads=None):
    r"""Per-document first and second derivatives of CatBoost's ``LambdaMart`` loss, without CatBoost.

    Reproduces ``LambdaMart:metric=M;top=k;sigma=σ;norm=...`` (``type``/``denominator`` for NDCG/DCG)
    of catboost >= 1.2.1. Every pair ``(hi, lo)`` with different targets that the metric's rule forms
    adds, with :math:`\rho = 1/(1 + e^{\sigma (s_{hi} - s_{lo})})` and the pair's weight
    :math:`\delta \ge 0`,

    .. math::

        g_{hi} \mathrel{-}= \sigma \delta \rho, \quad g_{lo} \mathrel{+}= \sigma \delta \rho, \quad
        h_{hi}, h_{lo} \mathrel{+}= \sigma^2 \delta \rho (1 - \rho).

    The weights per metric, the ``norm`` rule (``δ /= 0.01 + |Δs|``, then ``log2(1+S)/S`` per query)
    and the ranking (scores descending, ties in input order) are stated in
    ``lambda_objectives._kernels.catboost``. Only for NDCG and DCG is ``δ`` the ``|ΔZ|`` of a swap
    (linear gain by default: CatBoost's ``type=Base``; DCG is divided by the ideal DCG too); for MRR,
    ERR and MAP it is not, see docs/reproducing/validate.md.

    Parameters
    ----------
    scores : array-like (n,)
        Current approxes (finite).
    labels : array-like (n,)
        Targets as CatBoost receives them (finite, non-negative). They are rounded to float32 first,
        as CatBoost stores targets. ERR uses them as stop probabilities (CatBoost's ERR expects
        targets in [0, 1]); MRR and MAP call ``target > 0`` relevant.
    group_ptr : array-like (n_queries + 1,)
        Query boundaries.
    metric : {"ndcg", "dcg", "mrr", "err", "map"}
    top : int, optional
        CatBoost's ``top``; used by NDCG/DCG only (pairs with at least one document in the top
        ``top``, ideal DCG over ``top``). CatBoost ignores it for MRR, ERR and MAP, and so does this.
    sigma : float > 0
    norm : bool
        CatBoost's ``norm`` (default true in CatBoost too).
    gain : {"linear", "exp"}
        NDCG/DCG numerator: ``t`` (``type=Base``) or ``2**t - 1`` (``type=Exp``).
    denominator : {"log", "position"}
        NDCG/DCG position denominator: ``log2(2 + p)`` or ``1 + p`` (``p`` 0-based).
    n_threads : int, optional
        numba threads (one query per task; results do not depend on it).

    Returns
    -------
    grad, hess : float64 arrays (n,)
        ``grad`` = CatBoost's ``der1`` and ``hess`` = its ``der2`` for this loss, which the probe shows
        are ``+∂C/∂s`` and ``+∂²C/∂s²`` of the weighted pairwise logistic cost (the gradient
        convention of :func:`lambda_objectives.lambda_gradients`), not CatBoost's usual ``−∂L/∂s``.

    Notes
    -----
    Matches :func:`lambda_objectives.validation.probe_catboost` to about 1e-12 relative when ``scores`` are
    float32 values (CatBoost stores a ``Pool``'s ``baseline`` in float32, so the probe evaluates at
    ``float32(scores)``; with ``norm=True`` the ``1/(0.01 + |Δs|)`` factor turns that rounding into
    about 1e-6 relative otherwise). Tested in tests/test_kernels_catboost.py. Reference: Burges, MSR-TR-2010-82;
    CatBoost documentation, "Ranking: objectives and metrics".
    """
    check_catboost_options(metric, top, sigma, gain, denominator)
    s = check_scores(scores)
    y = check_labels(labels, s.shape[0]).astype(np.float32).astype(FLOAT)
    ptr = check_group_ptr(group_ptr, s.shape[0])
    grad = np.zeros(s.shape[0], dtype=FLOAT)
    hess = np.zeros(s.shape[0], dtype=FLOAT)
    with numba_threads(n_threads):
        _cb.catboost_lambdamart(s, y, ptr, _METRICS[metric], -1 if top is None else int(top), float(sigma),
                                bool(norm), gain == "exp", denominator == "log", grad, hess)
    return grad, hess
