"""LambdaMART gradients and diagonal Hessians for ΔNDCG, ΔERR, ΔMAP, ΔMRR and RankNet."""

import math
import warnings
from typing import NamedTuple

import numpy as np

from .. import _registry as reg
from .._core.config import FLOAT, PTR
from .._kernels import pairs
from .._kernels.ranking import discount_prefix
from .._core.threads import numba_threads
from .._kernels.position_bias import additive_newton, shifted_scores, update_bias_factors
from ..checks import (SEED_MAX, check_bias, check_integer, check_k, check_labels, check_outputs, check_positions,
                      check_query_weights, check_scores, given_options, positions_in_query)
from ..data.groups import check_group_ptr
from .xendcg import xendcg_gradients

__all__ = ["lambda_gradients", "LambdaPairs", "LAMBDA_METRICS", "OBJECTIVES"]

#: Metrics :func:`lambda_gradients` accepts.
LAMBDA_METRICS = reg.names("lambdas")
#: Everything an engine adapter or ``reference.MARTRanker`` trains with: the pair objectives,
#: the listwise ones (XE-NDCG, :func:`lambda_objectives.xendcg_gradients`) and the sampled ones
#: (YetiRank, :func:`lambda_objectives.yetirank_gradients`).
OBJECTIVES = reg.names("objective")
_NORMALIZE = {None: pairs.NORM_NONE, False: pairs.NORM_NONE, "lambdarank": pairs.NORM_LAMBDARANK}
#: the objectives :func:`lambda_gradients` still reaches for one release (a ``FutureWarning``), each with
#: the one function that takes its options
OTHER_DOORS = {"xendcg": "xendcg_gradients", "yetirank": "yetirank_gradients", "softmax": "softmax_gradients",
               "listmle": "listmle_gradients", "plrank": "plrank_gradients"}


class LambdaPairs(NamedTuple):
    """The pairs behind a gradient: query ``q`` owns ``i[ptr[q]:ptr[q+1]]`` etc.

    ``i`` is the row with the higher label, ``j`` the other (global row indices); ``h`` the
    pair's Hessian term ``σ² |ΔZ| ρ (1 − ρ)`` after query weights and normalisation, so that
    ``hess[r] = sum of h over the pairs touching r``. Only pairs with ``ΔZ != 0`` are listed.
    """

    ptr: np.ndarray
    i: np.ndarray
    j: np.ndarray
    h: np.ndarray


def lambda_gradients(scores, labels, group_ptr, metric="ndcg", k=None, sigma=1.0, *, gain="exp",
                     label_gain=None, max_label=None, threshold=0.0, query_weights=None,
                     normalize=None, mu=None, pair_method="all", num_pair_per_sample=None, seed=None,
                     iteration=0, out=None, n_threads=None, return_pairs=False, return_cost=False, bias=None,
                     positions=None, propensities=None, bias_norm=None, position_bias_regularization=None,
                     learning_rate=None, bias_state=None, **other_door):
    r"""LambdaMART gradient and diagonal Hessian of a pairwise metric-weighted logistic loss.

    Definition (Burges, MSR-TR-2010-82, §4 and §7). Each query is ranked by ``scores``
    (descending, ties in input order). For every pair with ``labels[i] > labels[j]``, with
    :math:`\Delta Z_{ij}` the change of the metric@k when ``i`` and ``j`` swap rank positions
    (all other documents stay put) and :math:`\rho_{ij} = 1/(1 + e^{\sigma (s_i - s_j)})`:

    .. math::

        g_i \mathrel{-}= \sigma |\Delta Z_{ij}| \rho_{ij}, \quad
        g_j \mathrel{+}= \sigma |\Delta Z_{ij}| \rho_{ij}, \quad
        h_i, h_j \mathrel{+}= \sigma^2 |\Delta Z_{ij}| \rho_{ij} (1 - \rho_{ij}).

    ``g`` is the gradient of the loss an engine minimises (the negative of Burges' λ) and
    ``h`` its diagonal Hessian, both of the fixed-ranking cost
    :math:`C = \sum |\Delta Z_{ij}| \log(1 + e^{-\sigma (s_i - s_j)})`.

    Truncation: with ``k`` set, ΔZ is the change of the *truncated* metric (true NDCG@k, ERR@k,
    AP@k, RR@k), so a pair with both documents below position k contributes nothing and is never
    formed. (LightGBM's and XGBoost's built-in objectives instead keep the untruncated discount
    and only restrict which pairs are formed: see the adapters' presets.) For ``"ranknet"``
    :math:`|\Delta Z| = 1` and ``k`` keeps the pairs with at least one document in the top k.

    Metric conventions are those of :func:`lambda_objectives.metric_values`: NDCG gains
    ``2**l - 1`` / linear / ``label_gain``; ERR's ``R = (2**l - 1)/2**max_label`` with
    ``max_label`` defaulting to the largest label passed; MAP/MRR relevance ``label > threshold``
    and AP normalised by all relevant documents of the query. Queries of one document, and
    queries whose ideal metric is 0 (no gain, no relevant document), get zeros.

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
        Current model scores (finite) and relevance labels (finite, non-negative; whole numbers
        for ``ndcg``/``err``).
    group_ptr : array-like of shape (n_queries + 1,)
        Query boundaries.
    metric : str or ``"name@k"``
        ``"ndcg"``, ``"err"``, ``"map"``, ``"mrr"`` (``|Δmetric|`` of a swap), ``"ranknet"`` (weight 1),
        ``"ndcg_loss2"`` / ``"ndcg_loss2pp"`` (LambdaLoss, Wang et al. 2018; with ``k`` the
        LambdaLoss@K of Jagerman et al. 2022 as published: every pair, the @K multiplier below ``k``),
        ``"ndcg_loss2_top"`` / ``"ndcg_loss2pp_top"`` (ours: the same weights on pairs with a document
        in the top ``k`` only), ``"label_diff"`` (``|y_i − y_j|``), ``"gain_diff"``
        (``|G_i − G_j|``); docs/math.md has each weight. For the LambdaLoss weights ``|ΔZ_ij|`` below
        stands for the pair weight ``w_ij``. Or a user's pair weight: an ``@numba.njit`` function
        ``w(a, b, label_a, label_b, gain_a, gain_b, k) -> float >= 0`` of the two 0-based rank
        positions ``a < b`` (by the current scores), their labels and gains (``gain=``), and the
        cut-off (``n`` when ``k`` is None); called for the pairs with different labels and ``a < k``.
    k : int or None
        Truncation; ``None`` = whole list.
    sigma : float
        Sigmoid steepness σ > 0.
    gain, label_gain, max_label, threshold
        Metric options, as in :func:`~lambda_objectives.metric_values`. ``gain="linear"`` takes
        real-valued labels (e.g. graded scores in finance or recommendation) for every gain-based
        objective; exponential gain, ``label_gain`` tables and ERR need whole grades.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian.
    mu : float, optional
        NDCG-Loss2++ only: the weight of its rank-gap term (default 10, allRank's default).
    pair_method : {"all", "mean"}
        ``"all"`` (default): every pair, O(n · min(n, k)) per query. ``"mean"``: sampled pairs, O(n · m)
        (the counterpart of XGBoost's ``lambdarank_pair_method="mean"``): each document draws
        ``num_pair_per_sample`` = m partners uniformly, with replacement, among the documents with
        another label (below the cut-off of a top-k objective: among those in the top k), and each
        drawn pair adds its force with its exact ``|ΔZ|`` times ``|pool|/(2m)`` to both members. Then
        ``E[grad]`` and ``E[hess]`` are the full-list ``grad`` and ``hess`` for every metric (unbiased;
        with ``normalize="lambdarank"`` the factor is of the sampled sum, so only the unnormalised
        lambdas are unbiased; ``return_cost`` is estimated alike). A pool of at most m documents is
        taken whole (weight 1/2 each), so queries of at most m + 1 documents get the full-list result.
        ``return_pairs`` lists every draw (a pair drawn twice appears twice). Not for a user's pair
        weight.
    num_pair_per_sample : int >= 1, optional
        ``pair_method="mean"`` only: m, partners drawn per document (default 1, as XGBoost's).
    seed : int, optional
        ``pair_method="mean"``: the seed of the draws (default 0), an integer in [0, 2**64). The draws
        depend on ``(seed, iteration, the query's labels)`` only: a query is known by its content
        (its length and its labels' float64 bits in row order), not by its position, so the same
        query gets the same gradients wherever it sits in the data and however the data is split
        into chunks, partitions, workers or threads (queries with identical label lists share a
        stream, which leaves every expectation unchanged).
    iteration : int >= 0
        ``pair_method="mean"`` only: the boosting round (fresh draws each round; the adapters pass
        their round counter).
    **other_door
        Deprecated, for one release: ``metric`` ``"xendcg"``, ``"yetirank"``, ``"softmax"``, ``"listmle"`` or
        ``"plrank"`` still reaches that objective's own function (``OTHER_DOORS``: the same numbers as
        before, ``seed`` / ``k`` passed on, ``beta`` / ``lambda_`` for softmax and ``ties`` for ListMLE taken
        here), with a ``FutureWarning`` naming it. Any other keyword is a ``TypeError``.
    normalize : {None, "lambdarank"}
        ``"lambdarank"``: LightGBM's ``lambdarank_norm``: each query's ``g`` and ``h`` are
        multiplied by :math:`\log_2(1+S)/S` with :math:`S = \sum_{pairs} 2\sigma|\Delta Z|\rho`
        (when S > 0), so queries with many strong pairs do not dominate.
    out : (ndarray, ndarray), optional
        Preallocated contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads (default all); the result does not depend on it. Queries run in parallel, and a
        long query's pairs too (over about 2 million pairs, e.g. a full list of 2,100 documents: its rows
        are cut into blocks fixed by the query, added in block order).
    return_pairs : bool
        Also return a :class:`LambdaPairs` with every pair's Hessian term.
    return_cost : bool
        Also return each query's cost ``C_q = w_q Σ |ΔZ| log(1 + e^{−σ(s_i − s_j)})`` at the
        current ranking (before normalisation), the loss whose gradient ``grad`` is.
    bias : {None, "ips", "pairwise", "additive"}
        Position debiasing of click labels (``labels`` are then clicks, or any labels observed under a
        position bias), by the display position of each row (``positions``):

        * ``"ips"``: each pair's weight ``|ΔZ|`` is multiplied by ``1/θ[p_high]``, the inverse examination
          probability (``propensities``) of the position of its higher-labelled (clicked) row (Joachims,
          Swaminathan, Schnabel, WSDM 2017). Under the position-based model ``E[c/θ] = r``, so this is an
          unbiased estimate of the same objective on the true relevance **only for objectives linear in the
          labels** — DCG with ``gain="linear"`` (and RankNet / ``label_diff`` pairs of a clicked document,
          precision-like counts; Agarwal et al., SIGIR 2019). It is *not* unbiased for NDCG (its normaliser
          is a function of all labels), ERR, AP or RR (not linear in the labels; cascade metrics need
          cascade-model propensities, Vardasbi et al., SIGIR 2020), nor for exponential gain: there it is a
          re-weighting heuristic.
        * ``"pairwise"``: Unbiased LambdaMART (Hu, Wang, Peng, Li, WWW 2019, arXiv 1809.05818): each pair's
          weight is divided by ``t⁺[p_high]·t⁻[p_low]`` (``bias_state = (t_plus, t_minus)``, default all
          1), and the next round's factors are re-estimated from this pass's pair costs with the paper's
          RankNet cost ``c = |ΔZ|·log(1 + exp(−σ(s_high − s_low)))`` (eq. 30/31):
          ``t⁺_p = (Σ_{high at p} c/t⁻[p_low] / (the same at p = 0))^(1/(1 + bias_norm))`` and likewise
          ``t⁻``; a factor below 1e-16 divides nothing, positions beyond ``len(t_plus)`` get factor 1 and no
          cost sums, and a position without pairs keeps its factor when position 0 has none. (XGBoost's own
          version, with its mirrored cost ``softplus(s_high − s_low)·Δ``, is ``preset="xgboost"`` of the
          XGBoost adapter.)
        * ``"additive"``: LightGBM's model ``score + b[p]``: the gradients are taken at ``scores +
          b[positions]`` (``bias_state = b``, default 0), then one regularised Newton step per position,
          ``b_p += learning_rate·G_p/(|H_p| + 0.001)`` with ``G_p = −Σ_{rows at p} g − μ n_p b_p``,
          ``H_p = −Σ h − μ n_p`` (``μ`` = ``position_bias_regularization``). Works for every objective.

        With ``"pairwise"`` or ``"additive"`` the updated state (a new ``(t_plus, t_minus)`` or ``b``; the
        input is never modified) is returned last: feed it to the next round's call. Not for a user's pair
        weight function, nor (``"ips"``/``"pairwise"``) for the listwise and sampled objectives.
    positions : array-like of int, shape (n,), optional
        With ``bias``: each row's 0-based display position (default: its index inside its query, XGBoost's
        convention); integers >= 0, each at most once per query.
    propensities : array-like, optional
        ``bias="ips"``: the examination probability of each display position, in (0, 1].
    bias_norm : float >= 0, optional
        ``bias="pairwise"``: the exponent's ``p`` (XGBoost's ``lambdarank_bias_norm``, default 1.0).
    position_bias_regularization : float >= 0, optional
        ``bias="additive"``: ``μ`` (LightGBM's ``lambdarank_position_bias_regularization``, default 0).
    learning_rate : float > 0
        ``bias="additive"`` (required): the step of ``b``'s update (LightGBM uses its ``learning_rate``).
    bias_state : optional
        ``bias="pairwise"``: ``(t_plus, t_minus)``; ``bias="additive"``: ``b`` (one value per position).

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    pairs : LambdaPairs
        Only with ``return_pairs=True``.
    cost : ndarray of float64, shape (n_queries,)
        Only with ``return_cost=True`` (after ``pairs`` when both are asked for).
    bias_state : tuple of ndarray or ndarray
        Only with ``bias="pairwise"`` (``(t_plus, t_minus)``, float64) or ``"additive"`` (``b``), last.
    """
    beta, lambda_, ties = _other_door(metric, k, other_door)
    bias, bias_opts = check_bias(bias, propensities, bias_norm, position_bias_regularization)
    if bias is None:
        given = [name for name, v in (("positions", positions), ("learning_rate", learning_rate),
                                      ("bias_state", bias_state)) if v is not None]
        if given:
            raise ValueError(f"{given} are read only with bias= ('ips', 'pairwise' or 'additive'); pass bias or "
                             "drop them")
    else:
        if reg.is_weight_function(metric):
            raise ValueError("bias= is not available with a user's pair-weight function")
        return _biased(bias, bias_opts, scores, labels, group_ptr, metric, k, sigma, positions, learning_rate,
                       bias_state, n_threads=n_threads, out=out, return_pairs=return_pairs, return_cost=return_cost,
                       options=dict(gain=gain, label_gain=label_gain, max_label=max_label, threshold=threshold,
                                    query_weights=query_weights, normalize=normalize, mu=mu, pair_method=pair_method,
                                    num_pair_per_sample=num_pair_per_sample, seed=seed, iteration=iteration,
                                    beta=beta, lambda_=lambda_, ties=ties))
    return _lambda_gradients(scores, labels, group_ptr, metric, k, sigma, gain=gain, label_gain=label_gain,
                             max_label=max_label, threshold=threshold, query_weights=query_weights,
                             normalize=normalize, mu=mu, pair_method=pair_method,
                             num_pair_per_sample=num_pair_per_sample, seed=seed, iteration=iteration, beta=beta,
                             lambda_=lambda_, ties=ties, out=out, n_threads=n_threads, return_pairs=return_pairs,
                             return_cost=return_cost)


def _other_door(metric, k, other_door):
    """``(beta, lambda_, ties)`` of the deprecated second door (``lambda_gradients(..., "softmax")`` and the
    other families of ``OTHER_DOORS``), with its FutureWarning; a TypeError for an option no door reads."""
    custom = reg.is_weight_function(metric)
    if not custom:
        metric = reg.parse_metric(metric, k, kind="objective")[0]
    door = None if custom else OTHER_DOORS.get(metric)
    if door is None and other_door:
        name = sorted(other_door)[0]
        reader = sorted(m for m, f in OTHER_DOORS.items() if name in reg.objective_options(m, None))
        raise TypeError(f"lambda_gradients() got an unexpected keyword argument {name!r}: the pairwise lambdas do "
                        "not read it" + (f" (it is an option of {OTHER_DOORS[reader[0]]})" if reader else ""))
    if door is not None:
        warnings.warn(f"lambda_gradients(..., {metric!r}) is deprecated: call lambda_objectives.{door} (the same "
                      f"numbers; lambda_gradients takes the pairwise lambdas only from the next release)",
                      FutureWarning, stacklevel=3)
    beta, lambda_, ties = (other_door.get(name) for name in ("beta", "lambda_", "ties"))
    unknown = set(other_door) - {"beta", "lambda_", "ties"}
    if unknown:
        raise TypeError(f"lambda_gradients() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return beta, lambda_, ties


_NO_BIAS = (pairs.BIAS_NONE, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))


def _biased(bias, opts, scores, labels, group_ptr, metric, k, sigma, positions, learning_rate, state, *, n_threads,
            out, return_pairs, return_cost, options):
    """:func:`lambda_gradients` with ``bias=`` (its docstring): positions and state checked here, then the
    pair loop with its factors (``"ips"``, ``"pairwise"``) or the gradients at the shifted scores (``"additive"``)."""
    s = check_scores(scores)
    ptr = check_group_ptr(group_ptr, s.shape[0])
    n_pos = opts["propensities"].shape[0] if bias == "ips" else None
    if positions is None:
        pos = check_positions(positions_in_query(ptr), ptr, "positions (each row's index in its query)", n_pos)
    else:
        pos = check_positions(positions, ptr, n_positions=n_pos)
    n_ids = int(pos.max(initial=0)) + 1
    if bias == "additive":
        if learning_rate is None:
            raise ValueError("bias='additive' needs learning_rate= (the step of the position biases' Newton update; "
                             "LightGBM uses its learning_rate)")
        if isinstance(learning_rate, bool) or not np.isfinite(learning_rate) or learning_rate <= 0:
            raise ValueError(f"learning_rate must be a finite number > 0, got {learning_rate!r}")
        b = np.zeros(n_ids)
        if state is not None:
            given = check_scores(state, "bias_state (b, one per position)")
            b[:min(n_ids, given.shape[0])] = given[:n_ids]
            if given.shape[0] > n_ids:
                b = np.concatenate([b, given[n_ids:]])
        shifted = np.empty(s.shape[0])
        shifted_scores(s, pos, b, shifted)
        res = _lambda_gradients(shifted, labels, ptr, metric, k, sigma, out=out, n_threads=n_threads,
                                return_pairs=return_pairs, return_cost=return_cost, **options)
        res = res if isinstance(res, tuple) else tuple(res)
        additive_newton(res[0], res[1], pos, float(learning_rate), opts["position_bias_regularization"], b)
        return res + (b,)
    if learning_rate is not None or (bias == "ips" and state is not None):
        raise ValueError(f"bias={bias!r} takes no {'learning_rate' if learning_rate is not None else 'bias_state'}")
    row = reg.REGISTRY[reg.parse_metric(metric, k, kind="objective")[0]]
    if not (row.lambdas or row.name == "yetirank"):
        raise ValueError(f"bias={bias!r} weights the pairs of a pair loop, so it needs one of "
                         f"{LAMBDA_METRICS + ('yetirank',)}, not {row.name!r}; bias='additive' works with any objective")
    arrays, factors = bias_arrays(bias, opts, pos, state)
    res = _lambda_gradients(s, labels, ptr, metric, k, sigma, out=out, n_threads=n_threads, return_pairs=return_pairs,
                            return_cost=return_cost, _bias=arrays, **options)
    res = res if isinstance(res, tuple) else tuple(res)
    if bias == "ips":
        return res
    return res + (bias_update(arrays, factors, pos, opts["bias_norm"]),)


def bias_arrays(bias, opts, pos, state):
    """The pair loops' ``(code, fa, fb, ca, cb)`` for ``bias`` "ips" or "pairwise" (options checked by
    :func:`~lambda_objectives.checks.check_bias`, positions by ``check_positions``), and the factors in use
    (``"pairwise"``: ``(t_plus, t_minus)`` from ``state``, all ones over the positions seen by default)."""
    n = pos.shape[0]
    if bias == "ips":
        return (pairs.BIAS_FACTORS, 1.0 / opts["propensities"][pos], np.ones(n), np.zeros(0), np.zeros(0)), None
    tp, tm = _check_factors(state, int(pos.max(initial=0)) + 1)
    tracked = pos < tp.shape[0]
    p_in = np.where(tracked, pos, 0)
    # a factor below 1e-16 (or a position beyond the tables) divides nothing, as XGBoost's rule
    fa = np.ones(n)
    fb = np.ones(n)
    ok = tracked & (tp[p_in] >= 1e-16)
    fa[ok] = 1.0 / tp[p_in][ok]
    ok = tracked & (tm[p_in] >= 1e-16)
    fb[ok] = 1.0 / tm[p_in][ok]
    return (pairs.BIAS_ESTIMATE, fa, fb, np.zeros(n), np.zeros(n)), (tp, tm)


def bias_update(arrays, factors, pos, bias_norm):
    """The next round's ``(t_plus, t_minus)`` from a pass's cost sums (new arrays; eq. 30/31)."""
    tp, tm = factors[0].copy(), factors[1].copy()
    update_bias_factors(arrays[3], arrays[4], pos, 1.0 / (1.0 + bias_norm), tp, tm)
    return tp, tm


def _check_factors(state, n_ids):
    """``bias="pairwise"``'s ``(t_plus, t_minus)``: all ones over the positions seen when ``None``."""
    if state is None:
        return np.ones(n_ids), np.ones(n_ids)
    try:
        tp, tm = state
    except (TypeError, ValueError):
        raise ValueError("bias_state for bias='pairwise' must be a pair (t_plus, t_minus) of arrays") from None
    tp = check_scores(tp, "bias_state t_plus")
    tm = check_scores(tm, "bias_state t_minus")
    if tp.shape != tm.shape:
        raise ValueError(f"bias_state t_plus has {tp.shape[0]} positions, t_minus {tm.shape[0]}: one each per position")
    for name, t in (("t_plus", tp), ("t_minus", tm)):
        if np.any(t < 0):
            p = int(np.flatnonzero(t < 0)[0])
            raise ValueError(f"bias_state {name} must be >= 0, position {p} is {t[p]!r}")
    return tp, tm


def _lambda_gradients(scores, labels, group_ptr, metric="ndcg", k=None, sigma=1.0, *, gain="exp",
                      label_gain=None, max_label=None, threshold=0.0, query_weights=None,
                      normalize=None, mu=None, pair_method="all", num_pair_per_sample=None, seed=None,
                      iteration=0, beta=None, lambda_=None, ties=None, out=None, n_threads=None, return_pairs=False,
                      return_cost=False, _bias=_NO_BIAS):
    """:func:`lambda_gradients` without ``bias=``; ``_bias`` the pair loop's ``(code, fa, fb, ca, cb)``."""
    custom = reg.is_weight_function(metric)
    metric, k = (metric, check_k(k)) if custom else reg.parse_metric(metric, k, kind="objective")
    # an option the objective would not read is an error (the registry's objective_options table)
    reg.check_options(metric, _given_options(k=k, sigma=sigma, gain=gain, label_gain=label_gain, max_label=max_label,
                                         threshold=threshold, normalize=normalize, mu=mu, seed=seed, beta=beta,
                                         lambda_=lambda_, ties=ties, pair_method=pair_method,
                                         num_pair_per_sample=num_pair_per_sample))
    if custom:
        return _custom_gradients(scores, labels, group_ptr, metric, k, sigma, gain=gain, label_gain=label_gain,
                                 query_weights=query_weights, normalize=normalize, mu=mu, out=out, n_threads=n_threads,
                                 return_pairs=return_pairs, return_cost=return_cost)
    row = reg.REGISTRY[metric]
    if (row.listwise or row.sampled) and _bias[0] != pairs.BIAS_NONE and metric != "yetirank":
        raise ValueError(f"bias='ips'/'pairwise' weight pairs of a pair loop; {metric!r} has none "
                         "(bias='additive' works with it)")
    if metric in ("softmax", "listmle"):
        return _softmax_listmle(metric, scores, labels, group_ptr, beta=beta, lambda_=lambda_, ties=ties,
                                query_weights=query_weights, out=out, n_threads=n_threads,
                                return_pairs=return_pairs, return_cost=return_cost)
    if row.listwise or row.sampled:
        return _listwise(metric, scores, labels, group_ptr, out=out, return_pairs=return_pairs,
                         return_cost=return_cost, seed=seed, query_weights=query_weights, n_threads=n_threads, k=k,
                         _bias=None if _bias[0] == pairs.BIAS_NONE else _bias)
    mu = check_mu(metric, mu)
    _check_sigma_normalize(sigma, normalize)
    sampling = check_pair_method(pair_method, num_pair_per_sample, seed, iteration)
    s = check_scores(scores)
    plan = pair_plan(metric, labels, group_ptr, s.shape[0], k, gain=gain, label_gain=label_gain, max_label=max_label,
                     threshold=threshold, query_weights=query_weights)
    grad, hess = check_outputs(out, s.shape[0], scores=scores, labels=labels, group_ptr=group_ptr,
                               query_weights=query_weights)
    res = pair_run(plan, s, grad, hess, sigma, normalize, mu, sampling, n_threads, return_pairs, return_cost, _bias)
    check_overflow(grad, hess, sigma)
    return res


def check_overflow(grad, hess, sigma, totals=None):
    """Finite inputs can still overflow (σ² in the Hessian, or sums over many pairs): a ValueError
    naming sigma when a gradient or Hessian is inf or NaN. ``totals``: ``(Σ grad, Σ hess)`` when the
    caller has them (the adapters' :func:`~lambda_objectives._kernels.handback.hand_back`)."""
    sg, sh = (np.sum(grad), np.sum(hess)) if totals is None else totals
    if not (np.isfinite(sg) and np.isfinite(sh)):
        raise ValueError(f"gradients or Hessians overflowed to inf/NaN with sigma={sigma!r}: use a smaller sigma "
                         "(the Hessian scales with sigma**2)")


def pair_setup(labels, group_ptr, n, metric="ndcg", k=None, sigma=1.0, *, gain="exp", label_gain=None,
               max_label=None, threshold=0.0, query_weights=None, normalize=None, mu=None, pair_method="all",
               num_pair_per_sample=None, seed=None):
    """``(plan, normalize, mu, sampling)`` for :func:`pair_run` on a data set of ``n`` rows: the options
    checked as :func:`lambda_gradients` checks them, or ``None`` when ``metric`` is no registry pair
    objective (a pair-weight function, a listwise or sampled family: the caller calls
    :func:`lambda_gradients`). ``sampling`` is that of round 0: the caller sets each round's ``iteration``."""
    if reg.is_weight_function(metric):
        return None
    metric, k = reg.parse_metric(metric, k, kind="objective")
    row = reg.REGISTRY[metric]
    if row.listwise or row.sampled or metric in ("softmax", "listmle"):
        return None
    reg.check_options(metric, _given_options(k=k, sigma=sigma, gain=gain, label_gain=label_gain, max_label=max_label,
                                         threshold=threshold, normalize=normalize, mu=mu, seed=seed,
                                         pair_method=pair_method, num_pair_per_sample=num_pair_per_sample))
    mu = check_mu(metric, mu)
    _check_sigma_normalize(sigma, normalize)
    sampling = check_pair_method(pair_method, num_pair_per_sample, seed, 0)
    plan = pair_plan(metric, labels, group_ptr, n, k, gain=gain, label_gain=label_gain, max_label=max_label,
                     threshold=threshold, query_weights=query_weights, constants=sampling is not None)
    return plan, normalize, mu, sampling


class PairPlan(NamedTuple):
    """What the pair drivers read of a data set, validated and derived once (:func:`pair_plan`): the
    adapters keep one per data set, so a boosting round pays the kernel, not the checks."""

    code: int
    all_pairs: bool
    y: np.ndarray
    ptr: np.ndarray
    values: np.ndarray
    k: object
    disc: np.ndarray
    w: np.ndarray
    sizes: np.ndarray
    schedule: np.ndarray
    sampled_schedule: np.ndarray
    bits: np.ndarray
    keys: np.ndarray
    invs: np.ndarray


def pair_plan(metric, labels, group_ptr, n, k=None, *, gain="exp", label_gain=None, max_label=None, threshold=0.0,
              query_weights=None, constants=False):
    """The :class:`PairPlan` of pair objective ``metric`` (a canonical registry name; ``k`` parsed) on
    ``n`` rows: the labels, groups and query weights checked, the metric's per-document values, the
    discount table and the queries' schedules; with ``constants`` also what the sampled pairs compute
    per query from the data set alone (:func:`pairs.sampled_constants`: worth it for a plan run every
    boosting round, not for one call)."""
    row = reg.REGISTRY[metric]
    y = check_labels(labels, n, integer=reg.needs_integer_labels(metric, gain, label_gain))
    ptr = check_group_ptr(group_ptr, n)
    n_queries = ptr.shape[0] - 1
    w = check_query_weights(query_weights, n_queries)
    if w is None:
        w = np.ones(n_queries, dtype=FLOAT)
    values = reg.kernel_inputs(metric, y, gain=gain, label_gain=label_gain, max_label=max_label, threshold=threshold)
    sizes = np.diff(ptr)
    all_pairs = row.code in reg.ALL_PAIRS
    kk = np.minimum(sizes, k) if k is not None else sizes
    disc = discount_prefix(int(sizes.max()) if n_queries else 1)
    # Largest queries first, dealt round-robin: balances threads despite uneven list lengths.
    schedule = np.argsort(-(sizes * (sizes if all_pairs else kk)), kind="stable").astype(PTR)
    bits = (y + 0.0).view(np.uint64)  # + 0.0: a label -0.0 has the bits of 0.0 (the sampled streams' key)
    if constants:
        keys, invs = pairs.sampled_constants(values, bits, ptr, 0 if k is None else k, disc,
                                             row.code in reg.NDCG_FAMILY)
    else:
        keys, invs = np.empty(0, dtype=np.uint64), np.empty(0, dtype=FLOAT)
    return PairPlan(row.code, all_pairs, y, ptr, values, k, disc, w, sizes, schedule,
                    np.argsort(-sizes, kind="stable").astype(PTR), bits, keys, invs)


def pair_run(plan, s, grad, hess, sigma=1.0, normalize=None, mu=None, sampling=None, n_threads=None,
             return_pairs=False, return_cost=False, _bias=_NO_BIAS):
    """Fill ``grad``/``hess`` (checked by the caller) with the pair objective of ``plan`` at finite
    float64 scores ``s``; ``sampling`` is :func:`check_pair_method`'s ``(m, seed, iteration)`` or
    ``None``. Returns what :func:`lambda_gradients` returns (its overflow check is the caller's)."""
    y, ptr, k = plan.y, plan.ptr, plan.k
    n_queries = ptr.shape[0] - 1
    counts = np.zeros(n_queries, dtype=PTR)
    cost = np.zeros(n_queries, dtype=FLOAT)
    if return_pairs:
        cap = pairs.pair_capacity(y, ptr, 0 if k is None or plan.all_pairs else k)
        if sampling is not None:  # every document draws at most m partners
            cap = np.minimum(cap * 2, plan.sizes * sampling[0])
        pair_ptr = np.zeros(n_queries + 1, dtype=PTR)
        np.cumsum(cap, out=pair_ptr[1:])
        total = int(pair_ptr[-1])
        pi, pj, ph = np.empty(total, PTR), np.empty(total, PTR), np.empty(total, FLOAT)
    else:
        pair_ptr = np.zeros(n_queries + 1, dtype=PTR)
        pi, pj, ph = np.empty(0, PTR), np.empty(0, PTR), np.empty(0, FLOAT)
    args = (s, y, plan.values, ptr, 0 if k is None else k, float(sigma), plan.disc, plan.w, _NORMALIZE[normalize],
            grad, hess, bool(return_pairs), pair_ptr, pi, pj, ph, counts)
    with numba_threads(n_threads) as nt:
        chunks = max(1, min(nt * 4, n_queries))
        if sampling is None:
            # the cost sums of bias="pairwise" are per row: its queries are never split into blocks
            split = pairs.SPLIT_PAIRS if _bias[0] != pairs.BIAS_ESTIMATE else 2 ** 62
            pairs.DRIVERS[plan.code](*args, plan.schedule, chunks, bool(return_cost), cost, mu, split,
                                     pairs.BLOCK_SPAN, *_bias)
        else:
            m, seed, iteration = sampling
            # 64-bit hashing wraps on purpose (a warning only under NUMBA_DISABLE_JIT=1). A chunk is the
            # sampled driver's unit of work: threads beyond the chunks would only join the parallel
            # region and be waited for (one long query at 2 threads took 3.4x its 1-thread time on a
            # loaded machine, a scheduler slice per call); each query's bits do not depend on the threads
            with np.errstate(over="ignore"), numba_threads(min(nt, chunks)):
                pairs.SAMPLED_DRIVERS[plan.code](*args, plan.sampled_schedule, chunks, bool(return_cost), cost, mu, m,
                                                 plan.bits, np.uint64(seed), np.uint64(iteration), plan.keys, plan.invs,
                                                 *_bias)
    extra = (cost,) if return_cost else ()
    if not return_pairs:
        return (grad, hess) + extra
    new_ptr = np.zeros(n_queries + 1, dtype=PTR)
    np.cumsum(counts, out=new_ptr[1:])
    if new_ptr[-1] == pi.shape[0]:
        # every query filled its capacity (the full list: the capacity is its count of pairs), so the
        # buffers hold the pairs as they are: no copy (4.7 M pairs, 110 MB, at 112 K rows)
        return (grad, hess, LambdaPairs(new_ptr, pi, pj, ph)) + extra
    # each query's pairs are the first counts[q] of its capacity: drop the unused tail of each
    keep = np.arange(pi.shape[0]) - np.repeat(pair_ptr[:-1], cap) < np.repeat(counts, cap)
    return (grad, hess, LambdaPairs(new_ptr, pi[keep], pj[keep], ph[keep])) + extra


#: ``lambda_gradients``' defaults of the options the registry's ``objective_options`` table covers
_OPTION_DEFAULTS = {"k": None, "sigma": 1.0, "gain": "exp", "label_gain": None, "max_label": None, "threshold": 0.0,
                    "normalize": None, "mu": None, "seed": None, "pair_method": "all", "num_pair_per_sample": None,
                    "beta": None, "lambda_": None, "ties": None}
#: ``pair_method`` values; what each pair loop costs per query of n documents
PAIR_METHODS = ("all", "mean")


def check_pair_method(pair_method="all", num_pair_per_sample=None, seed=None, iteration=0):
    """``None`` for ``pair_method="all"``, else the validated ``(m, seed, iteration)`` of the sampled pairs.

    The sampling options given with ``"all"`` are refused rather than ignored.
    """

    if not isinstance(pair_method, str) or pair_method not in PAIR_METHODS:
        raise ValueError(f"pair_method must be one of {PAIR_METHODS}, got {pair_method!r}")
    if pair_method == "all":
        given = [name for name, v, d in (("num_pair_per_sample", num_pair_per_sample, None), ("seed", seed, None),
                                         ("iteration", iteration, 0)) if not (v is d or (d == 0 and v == 0))]
        if given:
            raise ValueError(f"{given} only apply to sampled pairs: pass pair_method='mean' (or drop them)")
        return None
    m = check_integer(1 if num_pair_per_sample is None else num_pair_per_sample, "num_pair_per_sample", 1)
    return m, check_integer(0 if seed is None else seed, "seed", 0, SEED_MAX), check_integer(iteration, "iteration", 0,
                                                                                           SEED_MAX)


def _given_options(**values):
    """Names of the options given a value other than their default (what a caller asked for)."""
    return given_options(values, _OPTION_DEFAULTS)


def _listwise(metric, scores, labels, group_ptr, *, seed, query_weights, n_threads, out, return_pairs, return_cost,
              k=None, _bias=None):
    """``lambda_gradients`` of a listwise or sampled row (XE-NDCG, YetiRank): its own kernel, none of the
    pair outputs (its options were checked against the registry)."""
    given = [name for name, v in (("out", out), ("return_pairs", return_pairs), ("return_cost", return_cost)) if v]
    if given:
        if metric == "yetirank":
            raise ValueError(f"'yetirank' samples its pairs and takes none of {given} (see yetirank_gradients)")
        raise ValueError(f"{metric!r} is listwise and takes none of {given} (see xendcg_gradients)")
    if metric == "plrank":  # k: the cut-off of E[DCG@k] (options checked against the registry above)
        from .plrank import plrank_gradients

        return plrank_gradients(scores, labels, group_ptr, k=k, seed=0 if seed is None else seed,
                                query_weights=query_weights, n_threads=n_threads)
    if metric == "yetirank":
        from .yetirank import yetirank_gradients

        return yetirank_gradients(scores, labels, group_ptr, seed=0 if seed is None else seed,
                                  query_weights=query_weights, n_threads=n_threads, _bias=_bias)
    return xendcg_gradients(scores, labels, group_ptr, seed=seed, query_weights=query_weights, n_threads=n_threads)


def _softmax_listmle(metric, scores, labels, group_ptr, *, beta, lambda_, ties, query_weights, out, n_threads,
                     return_pairs, return_cost):
    """``lambda_gradients`` of the deterministic listwise rows (softmax, ListMLE): their own kernels
    (``listwise.py``), their own options (checked against the registry), none of the pair outputs."""
    given = [name for name, v in (("return_pairs", return_pairs), ("return_cost", return_cost)) if v]
    if given:
        raise ValueError(f"{metric!r} is listwise and takes none of {given} (see {metric}_gradients)")
    from . import listwise

    if metric == "softmax":
        opts = {k: v for k, v in (("beta", beta), ("lambda_", lambda_)) if v is not None}
        return listwise.softmax_gradients(scores, labels, group_ptr, query_weights=query_weights, out=out,
                                          n_threads=n_threads, **opts)
    return listwise.listmle_gradients(scores, labels, group_ptr, ties="breslow" if ties is None else ties,
                                      query_weights=query_weights, out=out, n_threads=n_threads)


def _check_sigma_normalize(sigma, normalize):
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.floating, np.integer)) \
            or not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    if normalize not in _NORMALIZE:
        raise ValueError(f"normalize must be None or 'lambdarank', got {normalize!r}")


def _custom_gradients(scores, labels, group_ptr, weight_fn, k, sigma, *, gain, label_gain, query_weights, normalize,
                      mu, out, n_threads, return_pairs, return_cost):
    """:func:`lambda_gradients` with a user's njit pair weight (see its ``metric`` parameter)."""
    if return_pairs or return_cost:
        raise ValueError("a user pair-weight function takes no return_pairs or return_cost")
    _check_sigma_normalize(sigma, normalize)
    s = check_scores(scores)
    n = s.shape[0]
    integer = label_gain is not None
    y = check_labels(labels, n, integer=integer)
    ptr = check_group_ptr(group_ptr, n)
    n_queries = ptr.shape[0] - 1
    w = check_query_weights(query_weights, n_queries)
    w = np.ones(n_queries, dtype=FLOAT) if w is None else w
    values = reg.kernel_inputs("gain_diff", y, gain=gain, label_gain=label_gain)
    grad, hess = check_outputs(out, n, scores=scores, labels=labels, group_ptr=group_ptr, query_weights=query_weights)
    bad = np.zeros(n_queries, dtype=PTR)
    with numba_threads(n_threads):
        try:
            pairs.custom_lambda_driver(s, y, values, ptr, 0 if k is None else k, float(sigma), w,
                                       _NORMALIZE[normalize], grad, hess, bad, weight_fn)
        except SystemError as exc:
            # an exception raised inside the user's njit function surfaces from numba's parallel
            # region as a bare SystemError ("returned a result with an exception set")
            cause = exc.__cause__ or exc.__context__
            raise ValueError(f"the pair-weight function {getattr(weight_fn, '__name__', weight_fn)!r} raised "
                             f"{type(cause).__name__ if cause else 'an exception'}"
                             f"{': ' + str(cause) if cause else ''}; it must return a finite weight >= 0 for "
                             "every pair") from cause
    if bad.any():
        q = int(np.flatnonzero(bad)[0])
        raise ValueError(f"the pair-weight function {getattr(weight_fn, '__name__', weight_fn)!r} returned a "
                         f"negative or non-finite weight ({int(bad[q])} pairs of query {q}, {int(bad.sum())} in "
                         "all); weights must be finite and >= 0")
    if not (np.isfinite(np.sum(grad)) and np.isfinite(np.sum(hess))):
        raise ValueError(f"gradients or Hessians overflowed to inf/NaN with sigma={sigma!r}")
    return grad, hess


#: NDCG-Loss2++'s default weight of the rank-gap term: allRank's default (``lambdaLoss(mu=10.)``);
#: Wang et al. (2018) tune it per data set and report no single value.
DEFAULT_MU = 10.0


def check_mu(metric, mu):
    """``mu`` of NDCG-Loss2++ (default :data:`DEFAULT_MU`); an error for any other objective."""
    plus_plus = metric in ("ndcg_loss2pp", "ndcg_loss2pp_top")
    if mu is None:
        return DEFAULT_MU if plus_plus else 0.0
    if not plus_plus:
        raise ValueError(f"mu is NDCG-Loss2++'s parameter; metric {metric!r} takes no mu")
    if isinstance(mu, bool) or not isinstance(mu, (int, float, np.integer, np.floating)) or not math.isfinite(mu) \
            or mu < 0:
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    return float(mu)
