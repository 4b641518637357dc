"""CatBoost's native ``LambdaMart`` gradients as formulas, and their validation against the engine.

:func:`catboost_lambdamart_gradients` computes what CatBoost's ``LambdaMart`` loss (catboost >= 1.2.1,
``TLambdaMartError``) feeds its trees, per document, without CatBoost; the formulas are in
:mod:`lambda_objectives._kernels.catboost`. :func:`catboost_validation_rows` measures them, and our
exact lambdas (:func:`lambda_objectives.lambda_gradients`), against the engine's own derivatives
read off by :func:`lambda_objectives.probe_catboost` (the probe lives in :mod:`lambda_objectives.probe`).
"""

import numpy as np

from ._config import FLOAT
from ._kernels import catboost as _cb
from ._threads import numba_threads
from .checks import check_labels, check_scores
from .groups import check_group_ptr

__all__ = ["catboost_comparison_rows", "catboost_lambdamart_gradients", "catboost_loss_function",
           "catboost_validation_rows"]

_METRICS = {"ndcg": _cb.NDCG, "dcg": _cb.NDCG, "mrr": _cb.MRR, "err": _cb.ERR, "map": _cb.MAP}


def catboost_loss_function(metric="ndcg", top=None, sigma=1.0, norm=True, gain="linear", denominator="log"):
    """The CatBoost ``loss_function`` string matching :func:`catboost_lambdamart_gradients`'s arguments.

    >>> catboost_loss_function("ndcg", top=10, norm=False)
    'LambdaMart:metric=NDCG;top=10;sigma=1.0;norm=false;type=Base;denominator=LogPosition'
    """
    _check_options(metric, top, sigma, gain, denominator)
    parts = [f"metric={metric.upper()}"]
    if top is not None:
        parts.append(f"top={int(top)}")
    parts += [f"sigma={float(sigma)!r}", f"norm={'true' if norm else 'false'}"]
    if metric in ("ndcg", "dcg"):
        parts += [f"type={'Exp' if gain == 'exp' else 'Base'}",
                  f"denominator={'LogPosition' if denominator == 'log' else 'Position'}"]
    return "LambdaMart:" + ";".join(parts)


def _check_options(metric, top, sigma, gain, denominator):
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
    :mod:`lambda_objectives._kernels.catboost`. Only for NDCG and DCG is ``δ`` the |ΔZ| of a swap
    (linear gain by default: CatBoost's ``type=Base``; DCG is divided by the ideal DCG too); for MRR,
    ERR and MAP it is not, see docs/reproducing.md, "CatBoost".

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
    Matches :func:`lambda_objectives.probe_catboost` to about 1e-12 relative when ``scores`` are
    float32 values (CatBoost stores a ``Pool``'s ``baseline`` in float32, so the probe evaluates at
    ``float32(scores)``; with ``norm=True`` the ``1/(0.01 + |Δs|)`` factor turns that rounding into
    about 1e-6 relative otherwise). Tested in tests/test_kernels_catboost.py. Reference: Burges, MSR-TR-2010-82;
    CatBoost documentation, "Ranking: objectives and metrics".
    """
    _check_options(metric, top, sigma, gain, denominator)
    s = check_scores(scores)
    y = check_labels(labels, s.shape[0]).astype(np.float32).astype(FLOAT)
    ptr = check_group_ptr(group_ptr, s.shape[0])
    grad = np.zeros(s.shape[0], dtype=FLOAT)
    hess = np.zeros(s.shape[0], dtype=FLOAT)
    with numba_threads(n_threads):
        _cb.catboost_lambdamart(s, y, ptr, _METRICS[metric], -1 if top is None else int(top), float(sigma),
                                bool(norm), gain == "exp", denominator == "log", grad, hess)
    return grad, hess


def _rel(a, b):
    """Max and median of ``|a − b| / |b|`` over entries where both are finite and not both 0."""
    keep = np.isfinite(a) & np.isfinite(b) & ((a != 0) | (b != 0))
    if not keep.any():
        return 0.0, 0.0
    r = np.abs(a[keep] - b[keep]) / np.maximum(np.abs(b[keep]), 1e-300)
    return float(r.max()), float(np.median(r))


#: (setting, CatBoost options, our exact lambda_gradients call; None where our lambdas have no such norm)
VALIDATION_SETTINGS = (
    ("NDCG norm=false", {"metric": "ndcg", "norm": False}, {"metric": "ndcg", "gain": "linear"}),
    ("NDCG", {"metric": "ndcg"}, None),
    ("NDCG top=5 norm=false", {"metric": "ndcg", "top": 5, "norm": False}, {"metric": "ndcg", "k": 5, "gain": "linear"}),
    ("NDCG type=Exp norm=false", {"metric": "ndcg", "gain": "exp", "norm": False}, {"metric": "ndcg", "gain": "exp"}),
    ("DCG norm=false", {"metric": "dcg", "norm": False}, {"metric": "ndcg", "gain": "linear"}),
    ("MRR norm=false", {"metric": "mrr", "norm": False}, {"metric": "mrr"}),
    ("MRR", {"metric": "mrr"}, None),
    ("ERR norm=false, targets (2^l-1)/2^max", {"metric": "err", "norm": False}, {"metric": "err"}),
    ("ERR", {"metric": "err"}, None),
    ("MAP norm=false", {"metric": "map", "norm": False}, {"metric": "map"}),
    ("MAP", {"metric": "map"}, None),
)


def catboost_comparison_rows(scores, labels, group_ptr, rtol=1e-6, settings=None):
    """CatBoost's probed ``LambdaMart`` derivatives vs our reproduction and vs our exact lambdas.

    For each setting of :data:`VALIDATION_SETTINGS` (or ``settings``), probes CatBoost
    (:func:`lambda_objectives.probe_catboost`, in this process: run it isolated from other engines)
    at ``scores`` rounded to float32 (CatBoost stores a ``Pool``'s baseline in float32, so both
    sides use the rounded scores). ERR targets given to CatBoost and to our reproduction are the
    stop probabilities ``R = (2**l − 1)/2**max_label`` of the integer grades ``labels`` (CatBoost's
    ERR domain is [0, 1]; raw grades would make its running products negative), the same ``R`` our
    ``"err"`` uses, so only the formula differs.

    Returns
    -------
    list of dict
        Per setting: ``setting``, ``loss_function``, ``reproduced`` ("pass" when
        :func:`catboost_lambdamart_gradients` matches the probe's ``der1`` and ``der2`` within ``rtol``
        relative + 1e-9 absolute, else "differs"), ``repro_max_rel`` (der1 and der2 together),
        ``exact`` ("agrees"/"differs" against :func:`lambda_objectives.lambda_gradients` within the same
        tolerance; "n/a" for ``norm=true``, a normalisation our exact lambdas do not have),
        ``exact_der1_max_rel``, ``exact_der1_median_rel``, ``exact_der2_max_rel``,
        ``exact_der2_median_rel`` (relative to ours, over documents where either is non-zero and the
        probe's value is finite), ``n_docs``, ``n_queries``, ``catboost_version``.
    """
    import catboost

    from .lambdas import lambda_gradients
    from .probe import probe_catboost

    s = check_scores(scores).astype(np.float32).astype(FLOAT)
    y = check_labels(labels, s.shape[0])
    ptr = check_group_ptr(group_ptr, s.shape[0])
    rows = []
    for name, cb_opts, exact in (VALIDATION_SETTINGS if settings is None else settings):
        t = (2.0 ** y - 1.0) / 2.0 ** y.max() if cb_opts["metric"] == "err" else y
        loss = catboost_loss_function(**cb_opts)
        d1, d2 = probe_catboost(s, t, ptr, loss)
        g, h = catboost_lambdamart_gradients(s, t, ptr, **cb_opts)
        both_p, both_o = np.r_[d1, d2], np.r_[g, h]
        ok = np.isfinite(both_p)
        repro = bool(np.all(np.abs(both_p[ok] - both_o[ok]) <= 1e-9 + rtol * np.abs(both_o[ok])))
        row = {"setting": name, "loss_function": loss, "reproduced": "pass" if repro else "differs",
               "repro_max_rel": _rel(both_p, both_o)[0], "n_docs": int(y.size), "n_queries": int(ptr.size - 1),
               "catboost_version": catboost.__version__, "exact": "n/a"}
        if exact is not None:
            ge, he = lambda_gradients(s, y, ptr, **exact)
            row["exact_der1_max_rel"], row["exact_der1_median_rel"] = _rel(d1, ge)
            row["exact_der2_max_rel"], row["exact_der2_median_rel"] = _rel(d2, he)
            keep = np.isfinite(d1) & np.isfinite(d2)
            agree = np.allclose(np.r_[d1[keep], d2[keep]], np.r_[ge[keep], he[keep]], rtol=rtol, atol=1e-9)
            row["exact"] = "agrees" if agree else "differs"
        rows.append(row)
    return rows


def catboost_validation_rows(data_dir, n_queries=10, seed=0, rtol=1e-6):
    """:func:`catboost_comparison_rows` on the first ``n_queries`` training queries of a LETOR fold.

    ``data_dir`` is a fold folder holding ``train.txt`` (e.g. ``../shared/data/MQ2008/Fold1``) or the
    file itself; scores are drawn ``N(0, 1)`` with ``seed``. Returns the rows of
    :func:`catboost_comparison_rows`.
    """
    from pathlib import Path

    from .io import load_letor

    path = Path(data_dir)
    d = load_letor(path / "train.txt" if path.is_dir() else path)
    ptr = np.asarray(d.group_ptr[: n_queries + 1], dtype=np.int64)
    y = np.asarray(d.y[: ptr[-1]], dtype=FLOAT)
    s = np.random.default_rng(seed).normal(size=y.size)
    return catboost_comparison_rows(s, y, ptr, rtol=rtol)
