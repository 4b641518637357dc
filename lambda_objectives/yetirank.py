"""YetiRank gradients (CatBoost's ``YetiRank``) for any engine: the stochastic objective, one round at a time.

Formulas, CatBoost's constants and the generator: ``_kernels/yetirank.py`` and docs/math.md.
"""

import numbers

import numpy as np

from ._config import FLOAT
from ._kernels import yetirank as yk
from ._threads import numba_threads
from .checks import check_query_inputs

__all__ = ["YETIRANK_DEFAULTS", "YETIRANK_MODES", "check_yetirank_options", "yetirank_catboost_row",
           "yetirank_gradients"]

#: CatBoost's ``YetiRank`` defaults (catboost 1.2.10: ``permutations=10``; ``decay=0.85``, read off
#: by the probe, docs/reproducing.md) and ``mode=Classic``
YETIRANK_DEFAULTS = {"permutations": 10, "decay": 0.85, "mode": "classic"}

#: pair weights implemented: CatBoost's ``mode=Classic`` and ``mode=NDCG``
YETIRANK_MODES = {"classic": yk.CLASSIC, "ndcg": yk.NDCG}

#: CatBoost modes we do not implement (refused by name rather than silently mapped)
_CATBOOST_ONLY = ("dcg", "mrr", "err", "map")

_SEED_MAX = 2 ** 64


def _integer(value, name, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value >= high):
        bound = f">= {low}" + ("" if high is None else " and < 2**64")
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
    return int(value)


def check_yetirank_options(permutations=10, decay=0.85, mode="classic", seed=0):
    """Validated ``(permutations, decay, mode, seed)``; ``ValueError`` naming the bad option.

    ``permutations``: integer >= 1; ``decay``: in (0, 1], read by ``mode="classic"`` only (another
    value with ``mode="ndcg"`` is refused rather than ignored); ``mode``: ``"classic"`` or ``"ndcg"``
    (case-insensitive; CatBoost's DCG, MRR, ERR and MAP modes are refused: not implemented here);
    ``seed``: integer in [0, 2**64).
    """
    permutations = _integer(permutations, "permutations", 1)
    if isinstance(decay, bool) or not isinstance(decay, numbers.Real) or not (0.0 < decay <= 1.0):
        raise ValueError(f"decay must be a number in (0, 1], got {decay!r}")
    key = mode.lower() if isinstance(mode, str) else mode
    if key in _CATBOOST_ONLY:
        raise ValueError(f"mode={mode!r}: CatBoost's YetiRank has it but this package implements only "
                         f"{tuple(YETIRANK_MODES)}")
    if key not in YETIRANK_MODES:
        raise ValueError(f"mode must be one of {tuple(YETIRANK_MODES)}, got {mode!r}")
    if key == "ndcg" and decay != YETIRANK_DEFAULTS["decay"]:
        raise ValueError(f"decay={decay!r} is mode='classic''s position factor; mode='ndcg' weighs pairs by "
                         "|ΔDCG|/IDCG and does not read it: drop decay or use mode='classic'")
    seed = _integer(seed, "seed", 0, _SEED_MAX)
    return permutations, float(decay), key, seed


def yetirank_gradients(scores, labels, group_ptr, *, permutations=10, decay=0.85, mode="classic", seed=0,
                       iteration=0, query_weights=None, out=None, n_threads=None):
    r"""One boosting round of YetiRank: gradient and Newton Hessian of the sampled pairwise loss.

    Per query, ``permutations`` rankings by the noisy scores :math:`s_i + \log u_i - \log(1.000001 - u_i)`
    (:math:`u_i` uniform on the float32 grid: logistic noise, as CatBoost draws it), and in each
    ranking the neighbours at positions :math:`t-1, t` with different labels get the weight
    (``mode="classic"``, CatBoost's default) :math:`0.15\,\gamma^{t-1}|y_a - y_b|` or
    (``mode="ndcg"``) the :math:`|\Delta\mathrm{DCG}|/\mathrm{IDCG}` of swapping them (linear gain,
    :math:`\log_2(2 + p)` discount). With :math:`W_{ab}` the weight averaged over the rankings and
    :math:`p = 1/(1 + e^{s_{hi} - s_{lo}})` at the noise-free scores,

    .. math::

        L = \sum W_{ab} \log(1 + e^{-(s_{hi} - s_{lo})}), \quad
        g_{hi} \mathrel{-}= W p, \; g_{lo} \mathrel{+}= W p, \quad h_{hi}, h_{lo} \mathrel{+}= W p (1 - p).

    Gulin, Kuralenok & Pavlov, "Winning the transfer learning track of Yahoo!'s learning to rank
    challenge with YetiRank", JMLR W&CP 14 (2011); the constants are CatBoost's
    (``yetirank_helpers.cpp``). ``grad``/``hess`` are ``−der1``/``−der2`` of CatBoost's YetiRank.

    The draws depend on ``(seed, iteration, query index)`` only (a counter-based generator,
    splitmix64), so a call is reproducible bit for bit at any thread count. An engine adapter
    passes ``iteration`` = its round counter. There is no closed form of the expectation over the
    draws; :func:`lambda_objectives.catboost_yetirank_expected_gradients` estimates it by Monte Carlo
    (classic mode; the expectation of this function's output for any ``permutations``).

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
        Finite; labels non-negative (real values allowed).
    group_ptr : array-like of shape (n_queries + 1,)
    permutations : int >= 1
        Noisy rankings per query and round (CatBoost's default 10).
    decay : float in (0, 1]
        ``mode="classic"``: the weight's factor per position (CatBoost 1.2.10's default 0.85);
        ``mode="ndcg"`` does not read it (another value raises ``ValueError``).
    mode : {"classic", "ndcg"}
        CatBoost's ``mode=Classic`` or ``mode=NDCG`` pair weights.
    seed : int in [0, 2**64)
    iteration : int >= 0
        The boosting round: a fresh, reproducible draw per round.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian (CatBoost's group weight).
    out : (ndarray, ndarray), optional
        Contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads; the result does not depend on it.

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    permutations, decay, mode, seed = check_yetirank_options(permutations, decay, mode, seed)
    iteration = _integer(iteration, "iteration", 0, _SEED_MAX)
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    n = s.shape[0]
    if out is None:
        grad, hess = np.empty(n, dtype=FLOAT), np.empty(n, dtype=FLOAT)
    else:
        grad, hess = out
        for a in (grad, hess):
            if not (isinstance(a, np.ndarray) and a.dtype == FLOAT and a.shape == (n,) and a.flags.c_contiguous):
                raise ValueError(f"out must be two contiguous float64 arrays of length {n}")
    # the generator's uint64 arithmetic wraps by design; numpy warns about it when numba is off
    with numba_threads(n_threads), np.errstate(over="ignore", divide="ignore"):
        yk.yetirank_driver(s, y, ptr, w, np.uint64(seed), np.uint64(iteration), permutations, decay,
                           YETIRANK_MODES[mode], grad, hess)
    return grad, hess


def yetirank_catboost_row(scores, labels, group_ptr, n_seeds=20, permutations=1000, decay=0.85, seed=0,
                          max_z=5.0):
    """Our YetiRank against CatBoost's own, both averaged over seeds, as one ``validate`` row.

    CatBoost's ``YetiRank:permutations=P;decay=γ`` is probed (:func:`lambda_objectives.probe_catboost`)
    with ``random_seed`` 0 … ``n_seeds − 1`` at ``scores`` rounded to float32 (its baseline precision);
    ours is :func:`yetirank_gradients` with the same ``P`` and ``γ`` at ``iteration`` 0 … ``n_seeds − 1``
    (seed ``seed``) on the same scores. The generators differ, so single runs differ; their means
    estimate the same expectation. Per document, ``z`` is the difference of CatBoost's mean ``der1``
    and our mean ``−grad`` over the standard error of that difference (each side's spread over its
    seeds). Run it isolated from LightGBM/XGBoost (``comparisons`` does).

    Returns
    -------
    dict
        ``setting``, ``loss_function``, ``reproduced`` ("pass" when every document's ``|z| <= max_z``),
        ``max_abs_z``, ``share_within_2se`` (about 0.95 expected), ``der1_median_rel``,
        ``der2_median_rel`` (seed means, relative to CatBoost's), ``exact`` ("n/a"), ``n_seeds``,
        ``permutations``, ``decay``, ``n_docs``, ``n_queries``, ``catboost_version``.
    """
    import catboost

    from .probe import probe_catboost

    permutations, decay, _, seed = check_yetirank_options(permutations, decay, "classic", seed)
    s, y, ptr, _ = check_query_inputs(scores, labels, group_ptr)
    s = s.astype(np.float32).astype(FLOAT)
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral) or n_seeds < 2:
        raise ValueError(f"n_seeds must be an integer >= 2 (the spread over seeds is used), got {n_seeds!r}")
    loss = f"YetiRank:permutations={permutations};decay={decay!r}"
    cb = [probe_catboost(s, y, ptr, loss, params={"random_seed": k}) for k in range(int(n_seeds))]
    cb1, cb2 = np.array([r[0] for r in cb]), np.array([r[1] for r in cb])
    ours = [yetirank_gradients(s, y, ptr, permutations=permutations, decay=decay, seed=seed, iteration=k)
            for k in range(int(n_seeds))]
    o1, o2 = -np.array([r[0] for r in ours]), -np.array([r[1] for r in ours])
    m_cb, m_o = cb1.mean(0), o1.mean(0)
    se = np.sqrt((cb1.var(0, ddof=1) + o1.var(0, ddof=1)) / n_seeds)
    keep = np.isfinite(m_cb) & (se > 0)
    z = np.abs(m_cb[keep] - m_o[keep]) / se[keep]

    def median_rel(a, b):
        ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
        return float(np.median(np.abs(a[ok] - b[ok]) / np.abs(b[ok]))) if ok.any() else 0.0

    return {"setting": "YetiRank ours vs CatBoost (seed means)", "loss_function": loss,
            "reproduced": "pass" if z.size and z.max() <= max_z else "differs",
            "max_abs_z": float(z.max(initial=0.0)), "share_within_2se": float(np.mean(z <= 2.0)) if z.size else 0.0,
            "der1_median_rel": median_rel(m_o, m_cb), "der2_median_rel": median_rel(o2.mean(0), cb2.mean(0)),
            "exact": "n/a", "n_seeds": int(n_seeds), "permutations": permutations, "decay": decay,
            "n_docs": int(y.size), "n_queries": int(ptr.size - 1), "catboost_version": catboost.__version__}
