"""CatBoost, the third engine: its ``LambdaMart`` gradients as formulas, its eval metric, and the rows that
validate both (and our YetiRank) against the engine's own derivatives.

:func:`catboost_lambdamart_gradients` computes what CatBoost's ``LambdaMart`` loss (catboost >= 1.2.1,
``TLambdaMartError``) feeds its trees, per document, without CatBoost (it lives with the objectives, in
:mod:`lambda_objectives.objectives.catboost_lambdamart`, so the adapters' ``preset="catboost"`` reads it
from below; the formulas are in ``lambda_objectives._kernels.catboost``). :func:`catboost_validation_rows`
measures them, and our exact lambdas (:func:`lambda_objectives.lambda_gradients`), against the engine's own
derivatives read off by :func:`lambda_objectives.validation.probe_catboost`. ``PairLogit`` is our RankNet with
CatBoost's sign (:func:`catboost_pairlogit_row`); ``YetiRank`` is stochastic, so
:func:`catboost_yetirank_expected_gradients` estimates the expectation of its derivatives,
:func:`catboost_yetirank_row` compares CatBoost's, averaged over seeds, with it, and
:func:`yetirank_catboost_row` compares ours with CatBoost's. :func:`catboost_metric` is the adapters' eval
metric object for CatBoost.
"""

import numbers

import numpy as np

from ._core.config import FLOAT
from .adapters.eval_metrics import catboost_metric
from .checks import check_labels, check_query_inputs, check_scores
from .data.groups import check_group_ptr
from .objectives.catboost_lambdamart import catboost_lambdamart_gradients, catboost_loss_function
from .objectives.yetirank import YETIRANK_DEFAULTS, check_yetirank_options, yetirank_catboost_loss, yetirank_gradients
from .validation.probe import probe_catboost

__all__ = ["catboost_comparison_rows", "catboost_lambdamart_gradients", "catboost_loss_function", "catboost_metric",
           "catboost_pairlogit_row", "catboost_querysoftmax_row", "catboost_validation_rows",
           "catboost_yetirank_expected_gradients", "catboost_yetirank_row", "yetirank_catboost_row"]


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
    (:func:`lambda_objectives.validation.probe_catboost`, in this process: run it isolated from other engines)
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

    from .objectives.lambdas import lambda_gradients

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

    from .data.io import load_letor

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
    with np.errstate(over="ignore"):  # exp(+large) = inf gives p = 0.0, the exact limit
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

    from .objectives.lambdas import lambda_gradients

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

    from .objectives.listwise import softmax_gradients

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


def yetirank_catboost_row(scores, labels, group_ptr, n_seeds=20, permutations=1000, decay=0.85, seed=0,
                          max_z=5.0, **options):
    """Our YetiRank against CatBoost's own, both averaged over seeds, as one ``validate`` row.

    CatBoost's ``YetiRank:permutations=P;decay=γ`` (plus ``options``: ``mode``, ``num_neighbors``,
    ``top``, ``noise``, ``noise_power`` in CatBoost's spelling) is probed
    (:func:`lambda_objectives.validation.probe_catboost`) with ``random_seed`` 0 … ``n_seeds − 1`` at ``scores``
    rounded to float32 (its baseline precision); ours is :func:`lambda_objectives.yetirank_gradients` with the same
    options at ``iteration`` 0 … ``n_seeds − 1`` (seed ``seed``) on the same scores. The generators
    differ, so single runs differ; their means estimate the same expectation. Per document, ``z`` is
    the difference of CatBoost's mean ``der1`` (``der2``) and our mean ``−grad`` (``−hess``) over the
    standard error of that difference (each side's spread over its seeds); a document without spread
    on either side (no pair), and every document with ``noise="no"``, must agree to CatBoost's float32
    pair weights (relative 1e-5), else its ``z`` is infinite. Run it isolated from LightGBM/XGBoost (``comparisons``
    does). With ``noise="no"`` both sides rank once (``permutations`` is not used).

    Returns
    -------
    dict
        ``setting``, ``loss_function``, ``reproduced`` ("pass" when every document's ``|z| <= max_z``
        for both derivatives), ``max_abs_z`` (der1), ``max_abs_z_der2``, ``share_within_2se`` (der1,
        about 0.95 expected), ``der1_median_rel``, ``der2_median_rel`` (seed means, relative to
        CatBoost's), ``exact`` ("n/a"), ``n_seeds``, ``permutations``, ``decay``, ``mode``, ``n_docs``,
        ``n_queries``, ``catboost_version``.
    """
    import catboost


    if isinstance(options.get("noise"), str) and options["noise"].lower() in ("no", "none"):
        permutations = YETIRANK_DEFAULTS["permutations"]  # one ranking repeated: nothing to average
    o = check_yetirank_options(permutations, decay, seed=seed, **options)
    s, y, ptr, _ = check_query_inputs(scores, labels, group_ptr)
    s = s.astype(np.float32).astype(FLOAT)
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral) or n_seeds < 2:
        raise ValueError(f"n_seeds must be an integer >= 2 (the spread over seeds is used), got {n_seeds!r}")
    loss = yetirank_catboost_loss(**{k: v for k, v in o.items() if k != "seed"})
    cb = [probe_catboost(s, y, ptr, loss, params={"random_seed": k}) for k in range(int(n_seeds))]
    ours = [yetirank_gradients(s, y, ptr, iteration=k, **o) for k in range(int(n_seeds))]

    def z_scores(c, u):
        m_c, m_u = c.mean(0), u.mean(0)
        se = np.sqrt((c.var(0, ddof=1) + u.var(0, ddof=1)) / n_seeds)
        ok = np.isfinite(m_c)
        close = np.abs(m_c - m_u) <= 1e-5 * np.abs(m_c) + 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            # no noise: CatBoost's seeds differ by the probe's 1e-8 only, so its float32 pair weights decide
            z = np.where(close, 0.0, np.inf) if o["noise"] == "no" else \
                np.where(se > 0, np.abs(m_c - m_u) / se, np.where(close, 0.0, np.inf))
        return z[ok], m_c, m_u

    z, m_cb, m_o = z_scores(np.array([r[0] for r in cb]), -np.array([r[0] for r in ours]))
    z2, m_cb2, m_o2 = z_scores(np.array([r[1] for r in cb]), -np.array([r[1] for r in ours]))

    def median_rel(a, b):
        ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
        return float(np.median(np.abs(a[ok] - b[ok]) / np.abs(b[ok]))) if ok.any() else 0.0

    return {"setting": "YetiRank ours vs CatBoost (seed means)", "loss_function": loss,
            "reproduced": "pass" if z.size and max(z.max(), z2.max(initial=0.0)) <= max_z else "differs",
            "max_abs_z": float(z.max(initial=0.0)), "max_abs_z_der2": float(z2.max(initial=0.0)),
            "share_within_2se": float(np.mean(z <= 2.0)) if z.size else 0.0,
            "der1_median_rel": median_rel(m_o, m_cb), "der2_median_rel": median_rel(m_o2, m_cb2),
            "exact": "n/a", "n_seeds": int(n_seeds), "permutations": o["permutations"], "decay": o["decay"],
            "mode": o["mode"], "n_docs": int(y.size), "n_queries": int(ptr.size - 1),
            "catboost_version": catboost.__version__}
