"""CatBoost's native ``LambdaMart`` gradients as formulas, and their validation against the engine.

:func:`catboost_lambdamart_gradients` computes what CatBoost's ``LambdaMart`` loss (catboost >= 1.2.1,
``TLambdaMartError``) feeds its trees, per document, without CatBoost; the formulas are in
``lambda_objectives._kernels.catboost``. :func:`catboost_validation_rows` measures them, and our
exact lambdas (:func:`lambda_objectives.lambda_gradients`), against the engine's own derivatives
read off by :func:`lambda_objectives.probe_catboost` (the probe lives in :mod:`lambda_objectives.probe`).
``PairLogit`` is our RankNet with CatBoost's sign (:func:`catboost_pairlogit_row`); ``YetiRank`` is
stochastic, so :func:`catboost_yetirank_expected_gradients` estimates the expectation of its derivatives
and :func:`catboost_yetirank_row` compares CatBoost's, averaged over seeds, with it.
"""

import numpy as np

from ._config import FLOAT
from ._kernels import catboost as _cb
from ._threads import numba_threads
from .checks import check_labels, check_scores
from .groups import check_group_ptr

__all__ = ["catboost_comparison_rows", "catboost_lambdamart_gradients", "catboost_loss_function",
           "catboost_pairlogit_row", "catboost_querysoftmax_row", "catboost_validation_rows", "catboost_yetirank_expected_gradients",
           "catboost_yetirank_row"]

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

    For each setting of ``VALIDATION_SETTINGS`` (or ``settings``), probes CatBoost
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


def catboost_validation_rows(data_dir, n_queries=10, seed=0, rtol=1e-6, yetirank_queries=3):
    """:func:`catboost_comparison_rows` on the first ``n_queries`` training queries of a LETOR fold.

    ``data_dir`` is a fold folder holding ``train.txt`` (e.g. ``../shared/data/MQ2008/Fold1``) or the
    file itself; scores are drawn ``N(0, 1)`` with ``seed``. Returns the rows of
    :func:`catboost_comparison_rows`, then :func:`catboost_pairlogit_row` and
    :func:`catboost_querysoftmax_row` (CatBoost's defaults) on the same queries and
    :func:`catboost_yetirank_row` (defaults, Monte-Carlo seed ``seed``) on the first
    ``yetirank_queries`` of them (40 CatBoost fits per query).
    """
    from pathlib import Path

    from .io import load_letor

    path = Path(data_dir)
    d = load_letor(path / "train.txt" if path.is_dir() else path)
    ptr = np.asarray(d.group_ptr[: n_queries + 1], dtype=np.int64)
    y = np.asarray(d.y[: ptr[-1]], dtype=FLOAT)
    s = np.random.default_rng(seed).normal(size=y.size)
    rows = catboost_comparison_rows(s, y, ptr, rtol=rtol)
    rows.append(catboost_pairlogit_row(s, y, ptr, rtol=rtol))
    rows.append(catboost_querysoftmax_row(s, y, ptr, rtol=rtol))
    q = ptr[: yetirank_queries + 1]
    rows.append(catboost_yetirank_row(s[: q[-1]], y[: q[-1]], q, seed=seed))
    return rows


#: CatBoost's YetiRank constants (``yetirank_helpers.cpp``): the weight of a neighbouring pair is
#: ``0.15 · decay^position · |Δtarget|`` ("like in GPU"), and the noise multiplier of ``exp(score)``
#: is ``u / (1.000001f − u)``, ``u`` uniform on [0, 1) in float32
_YETI_PAIR_SCALE = 0.15
_YETI_NOISE_SHIFT = np.float32(1.000001)


def catboost_yetirank_expected_gradients(scores, labels, group_ptr, n_samples=100_000, seed=0, *, decay=0.85,
                                         chunk=8192):
    r"""Monte-Carlo expectation of CatBoost's ``YetiRank`` derivatives (``mode=Classic``, its default).

    CatBoost's YetiRank (``UpdatePairsForYetiRank`` and the ``PairLogit`` derivatives it feeds,
    catboost >= 1.2) draws, per query and iteration, ``permutations`` noisy rankings: every document's
    ``exp(s)`` is multiplied by :math:`u/(1.000001 - u)`, :math:`u \sim U[0, 1)` (so
    :math:`s + \log u - \log(1.000001 - u)`: logistic noise, up to the 1e-6 shift), sorted descending
    (ties in input order). In each ranking, the documents at positions :math:`t-1` and :math:`t`
    (0-based :math:`t \ge 1`) with different targets gain the pair weight
    :math:`0.15\, \gamma^{t-1} |y_a - y_b|` (:math:`\gamma` = ``decay``); weights are averaged over the
    permutations. With :math:`W_{ab}` that weight, :math:`hi` the better-labelled document and
    :math:`p = 1/(1 + e^{s_{hi} - s_{lo}})` (the noise-free scores),

    .. math::

        d_{1,hi} \mathrel{+}= W p, \quad d_{1,lo} \mathrel{-}= W p, \quad
        d_{2,hi}, d_{2,lo} \mathrel{+}= -W p (1 - p),

    CatBoost's ``der1 = −∂L/∂s`` and ``der2 = −∂²L/∂s²`` of :math:`L = \sum W \log(1 + e^{-(s_{hi} - s_{lo})})`.
    Both are linear in :math:`W`, so their expectation is this formula with :math:`E[W_{ab}]`, which
    this function estimates from ``n_samples`` rankings drawn the same way (numpy's generator, not
    CatBoost's: the samples differ, the expectation is the same). Reference: Gulin, Kuralenok and
    Pavlov, "Winning the transfer learning track of Yahoo!'s learning to rank challenge with
    YetiRank", JMLR W&CP 14 (2011).

    Parameters
    ----------
    scores, labels : array-like (n,)
        Current approxes and targets (finite; targets non-negative).
    group_ptr : array-like (n_queries + 1,)
    n_samples : int
        Noisy rankings drawn per query.
    seed : int
        Seed of numpy's generator.
    decay : float in [0, 1]
        CatBoost's ``YetiRank:decay`` (default 0.85 in catboost 1.2.10: the probe shows it).
    chunk : int
        Rankings drawn at a time (memory ``chunk × query length``).

    Returns
    -------
    der1, der2 : float64 arrays (n,)
        The expected derivatives (Monte-Carlo estimates).
    der1_se : float64 array (n,)
        The standard error of ``der1`` (the standard deviation of one ranking's ``der1`` over
        ``sqrt(n_samples)``); a CatBoost run with ``permutations=P`` has standard deviation
        ``der1_se · sqrt(n_samples / P)`` around the expectation.
    """
    s = check_scores(scores)
    y = check_labels(labels, s.shape[0])
    ptr = check_group_ptr(group_ptr, s.shape[0])
    if isinstance(n_samples, bool) or int(n_samples) != n_samples or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"decay must lie in [0, 1] (CatBoost refuses others), got {decay!r}")
    if isinstance(chunk, bool) or int(chunk) != chunk or chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    n_samples, chunk = int(n_samples), int(chunk)
    rng = np.random.default_rng(seed)
    der1 = np.zeros(s.shape[0], dtype=FLOAT)
    der2 = np.zeros(s.shape[0], dtype=FLOAT)
    se = np.zeros(s.shape[0], dtype=FLOAT)
    for a, b in zip(ptr[:-1], ptr[1:]):
        if b - a < 2 or np.all(y[a:b] == y[a]):
            continue
        der1[a:b], der2[a:b], se[a:b] = _yetirank_query(s[a:b], y[a:b], n_samples, rng, float(decay), chunk)
    return der1, der2, se


def _yetirank_query(s, y, n_samples, rng, decay, chunk):
    m = s.shape[0]
    step = decay ** np.arange(m - 1) * _YETI_PAIR_SCALE
    # p_ab of the pair (a, b) with a the better-labelled one, signed for a's der1 (b gets the opposite)
    hi = y[:, None] > y[None, :]
    p = 1.0 / (1.0 + np.exp(s[:, None] - s[None, :]))
    force = np.where(hi, p, np.where(hi.T, -p.T, 0.0))       # der1 of row doc per unit weight
    curve = np.where(hi | hi.T, -p * (1.0 - p), 0.0)         # p_ab(1 − p_ab) is symmetric in a, b
    sum1 = np.zeros(m)
    sum2 = np.zeros(m)
    sq1 = np.zeros(m)
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        u = rng.random((k, m), dtype=np.float32)
        with np.errstate(divide="ignore"):
            key = s + np.log((u / (_YETI_NOISE_SHIFT - u)).astype(FLOAT))
        order = np.argsort(-key, axis=1, kind="stable")
        first, second = order[:, :-1], order[:, 1:]
        w = step * np.abs(y[first] - y[second])               # (k, m − 1) pair weights of this ranking
        rows = np.arange(k)[:, None] * m
        d1 = (np.bincount((rows + first).ravel(), (w * force[first, second]).ravel(), k * m)
              + np.bincount((rows + second).ravel(), (w * force[second, first]).ravel(), k * m)).reshape(k, m)
        c = (w * curve[first, second]).ravel()
        d2 = (np.bincount((rows + first).ravel(), c, k * m) + np.bincount((rows + second).ravel(), c, k * m)).reshape(k, m)
        sum1 += d1.sum(axis=0)
        sq1 += (d1 * d1).sum(axis=0)
        sum2 += d2.sum(axis=0)
        done += k
    mean1 = sum1 / n_samples
    var1 = np.maximum(sq1 / n_samples - mean1 * mean1, 0.0) * n_samples / (n_samples - 1)
    return mean1, sum2 / n_samples, np.sqrt(var1 / n_samples)


def catboost_pairlogit_row(scores, labels, group_ptr, rtol=1e-6):
    """CatBoost's probed ``PairLogit`` derivatives against our RankNet lambdas, as one row.

    With no pairs given, CatBoost 1.2.10 forms every pair of a query's documents with different
    targets, weight 1 (its group weight; ``max_pairs`` unset), and its ``der1``/``der2`` are
    ``−∂L/∂s``/``−∂²L/∂s²`` of :math:`L = \\sum_{y_i > y_j} \\log(1 + e^{-(s_i - s_j)})`: minus
    :func:`lambda_objectives.lambda_gradients` with ``metric="ranknet"`` (σ = 1). The probe runs at
    ``scores`` rounded to float32 (CatBoost's baseline precision).

    Returns
    -------
    dict
        ``setting``, ``loss_function``, ``reproduced`` ("pass" when ``der1 = −g`` and ``der2 = −h``
        within ``rtol`` relative + 1e-9 absolute, else "differs"), ``repro_max_rel``, ``exact`` (the
        same verdict: RankNet is both our reproduction and our exact objective), ``exact_der1_max_rel``,
        ``exact_der1_median_rel``, ``exact_der2_max_rel``, ``exact_der2_median_rel``, ``n_docs``,
        ``n_queries``, ``catboost_version``.
    """
    import catboost

    from .lambdas import lambda_gradients
    from .probe import probe_catboost

    s = check_scores(scores).astype(np.float32).astype(FLOAT)
    y = check_labels(labels, s.shape[0])
    ptr = check_group_ptr(group_ptr, s.shape[0])
    d1, d2 = probe_catboost(s, y, ptr, "PairLogit")
    g, h = lambda_gradients(s, y, ptr, "ranknet")
    both_p, both_o = np.r_[d1, d2], -np.r_[g, h]
    ok = np.isfinite(both_p)
    agree = bool(ok.any() and np.all(np.abs(both_p[ok] - both_o[ok]) <= 1e-9 + rtol * np.abs(both_o[ok])))
    row = {"setting": "PairLogit vs -RankNet", "loss_function": "PairLogit", "reproduced": "pass" if agree else "differs",
           "repro_max_rel": _rel(both_p, both_o)[0], "exact": "agrees" if agree else "differs",
           "n_docs": int(y.size), "n_queries": int(ptr.size - 1), "catboost_version": catboost.__version__}
    row["exact_der1_max_rel"], row["exact_der1_median_rel"] = _rel(d1, -g)
    row["exact_der2_max_rel"], row["exact_der2_median_rel"] = _rel(d2, -h)
    return row


def catboost_querysoftmax_row(scores, labels, group_ptr, beta=1.0, lambda_=0.01, rtol=1e-6):
    """CatBoost's probed ``QuerySoftMax:beta=β;lambda=λ`` derivatives against our ``"softmax"``, as one row.

    CatBoost's ``der1``/``der2`` are ``−∂L/∂s`` and minus the Hessian diagonal with its ``λ β T`` term:
    minus :func:`lambda_objectives.softmax_gradients` with the same ``beta`` and ``lambda_``. The probe runs
    at ``scores`` rounded to float32 (CatBoost's baseline precision); labels are CatBoost's targets.

    Returns
    -------
    dict
        The keys of :func:`catboost_pairlogit_row` (``reproduced`` "pass" when ``der1 = −g`` and
        ``der2 = −h`` within ``rtol`` relative + 1e-9 absolute; ``exact`` the same verdict: our softmax is
        both the reproduction and the exact objective).
    """
    import catboost

    from .listwise import softmax_gradients
    from .probe import probe_catboost

    s = check_scores(scores).astype(np.float32).astype(FLOAT)
    y = check_labels(labels, s.shape[0])
    ptr = check_group_ptr(group_ptr, s.shape[0])
    loss = f"QuerySoftMax:beta={float(beta)!r};lambda={float(lambda_)!r}"
    d1, d2 = probe_catboost(s, y, ptr, loss)
    g, h = softmax_gradients(s, y, ptr, beta=beta, lambda_=lambda_)
    both_p, both_o = np.r_[d1, d2], -np.r_[g, h]
    ok = np.isfinite(both_p)
    agree = bool(ok.any() and np.all(np.abs(both_p[ok] - both_o[ok]) <= 1e-9 + rtol * np.abs(both_o[ok])))
    row = {"setting": "QuerySoftMax vs -softmax", "loss_function": loss, "reproduced": "pass" if agree else "differs",
           "repro_max_rel": _rel(both_p, both_o)[0], "exact": "agrees" if agree else "differs",
           "n_docs": int(y.size), "n_queries": int(ptr.size - 1), "catboost_version": catboost.__version__}
    row["exact_der1_max_rel"], row["exact_der1_median_rel"] = _rel(d1, -g)
    row["exact_der2_max_rel"], row["exact_der2_median_rel"] = _rel(d2, -h)
    return row


def catboost_yetirank_row(scores, labels, group_ptr, n_seeds=20, permutations=1000, n_samples=200_000, seed=0,
                          decay=None, max_z=5.0):
    """CatBoost's ``YetiRank`` ``der1``, averaged over seeds, against its expectation, as one row.

    Probes ``YetiRank:permutations=P`` (and ``decay`` when given) with ``random_seed`` 0 … ``n_seeds − 1``
    at ``scores`` rounded to float32, averages ``der1`` and ``der2`` over the seeds, and compares them
    with :func:`catboost_yetirank_expected_gradients` (``n_samples`` rankings, numpy seed ``seed``).
    The seed average has standard error ``der1_se · sqrt(n_samples / (n_seeds · P))`` under the
    stated algorithm (each CatBoost run averages ``P`` independent rankings); ``z`` is the difference
    over the standard error of the difference (this and the Monte-Carlo one combined).

    Returns
    -------
    dict
        ``setting``, ``loss_function``, ``reproduced`` ("pass" when every document's ``|z| <= max_z``),
        ``max_abs_z``, ``share_within_2se`` (documents with ``|z| <= 2``; about 0.95 expected),
        ``repro_max_rel`` and ``der1_median_rel`` (``|mean − expectation| / |expectation|``),
        ``der2_max_rel``, ``der2_median_rel``, ``seed_se_ratio_median`` (the standard error seen over
        the seeds over the one predicted: about 1 if CatBoost draws as stated), ``single_run_median_rel``
        (one run's typical relative distance from the expectation), ``exact`` ("n/a": YetiRank is not
        a metric's lambda), ``n_seeds``, ``permutations``, ``n_samples``, ``n_docs``, ``n_queries``,
        ``catboost_version``.
    """
    import catboost

    from .probe import probe_catboost

    s = check_scores(scores).astype(np.float32).astype(FLOAT)
    y = check_labels(labels, s.shape[0])
    ptr = check_group_ptr(group_ptr, s.shape[0])
    if isinstance(n_seeds, bool) or int(n_seeds) != n_seeds or n_seeds < 2:
        raise ValueError(f"n_seeds must be an integer >= 2 (the spread over seeds is reported), got {n_seeds!r}")
    loss = f"YetiRank:permutations={int(permutations)}" + ("" if decay is None else f";decay={float(decay)!r}")
    runs = [probe_catboost(s, y, ptr, loss, params={"random_seed": k}) for k in range(int(n_seeds))]
    d1 = np.array([r[0] for r in runs])
    d2 = np.array([r[1] for r in runs])
    e1, e2, e_se = catboost_yetirank_expected_gradients(s, y, ptr, n_samples, seed, decay=0.85 if decay is None else decay)
    m1, m2 = d1.mean(axis=0), d2.mean(axis=0)
    sd_run = e_se * np.sqrt(n_samples / permutations)          # one run's predicted standard deviation
    se = np.sqrt(sd_run ** 2 / n_seeds + e_se ** 2)
    keep = np.isfinite(m1) & (se > 0)
    z = np.abs(m1[keep] - e1[keep]) / se[keep]
    seen = d1.std(axis=0, ddof=1)[keep] / np.sqrt(n_seeds)
    row = {"setting": "YetiRank expected der1", "loss_function": loss,
           "reproduced": "pass" if keep.any() and z.max() <= max_z else "differs",
           "max_abs_z": float(z.max(initial=0.0)), "share_within_2se": float(np.mean(z <= 2.0)) if z.size else 0.0,
           "seed_se_ratio_median": float(np.median(seen / (sd_run[keep] / np.sqrt(n_seeds)))) if z.size else 0.0,
           "single_run_median_rel": float(np.median([_rel(r, e1)[1] for r in d1])), "exact": "n/a",
           "n_seeds": int(n_seeds), "permutations": int(permutations), "n_samples": int(n_samples),
           "n_docs": int(y.size), "n_queries": int(ptr.size - 1), "catboost_version": catboost.__version__}
    row["repro_max_rel"], row["der1_median_rel"] = _rel(m1, e1)
    row["der2_max_rel"], row["der2_median_rel"] = _rel(m2, e2)
    return row
