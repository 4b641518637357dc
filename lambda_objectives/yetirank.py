"""YetiRank gradients (CatBoost's ``YetiRank``) for any engine: the stochastic objective, one round at a time.

Formulas, CatBoost's constants and the generator: ``_kernels/yetirank.py`` and docs/math.md.
"""

import numbers

import numpy as np

from ._config import FLOAT
from ._kernels import yetirank as yk
from ._threads import numba_threads
from .checks import SEED_MAX, check_integer, check_outputs, check_query_inputs

__all__ = ["YETIRANK_DEFAULTS", "YETIRANK_MODES", "YETIRANK_NOISES", "check_yetirank_options",
           "yetirank_catboost_loss", "yetirank_catboost_row", "yetirank_gradients"]

#: CatBoost's ``YetiRank`` defaults (catboost 1.2.10: ``permutations=10``; ``decay=0.85``, read off
#: by the probe, docs/reproducing/validate.md; ``mode=Classic``, ``num_neighbors=1``, no ``top``,
#: ``noise=Gumbel``, ``noise_power=1``: ``yetirank_helpers.cpp``)
YETIRANK_DEFAULTS = {"permutations": 10, "decay": 0.85, "mode": "classic", "num_neighbors": 1, "top": None,
                     "noise": "gumbel", "noise_power": 1.0}

#: pair weights: CatBoost's ``mode=Classic`` (YetiRank) and the YetiLoss modes
YETIRANK_MODES = {"classic": yk.CLASSIC, "dcg": yk.DCG, "ndcg": yk.NDCG, "mrr": yk.MRR, "err": yk.ERR,
                  "map": yk.MAP}

#: noises: CatBoost's ``Gumbel`` (its default), ``Gauss`` (``noise_power`` its standard deviation), ``No``
YETIRANK_NOISES = {"gumbel": yk.GUMBEL, "gauss": yk.GAUSS, "no": yk.NO_NOISE, "none": yk.NO_NOISE}



def _choice(value, name, table):
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        raise ValueError(f"{name} must be one of {tuple(table)} (case-insensitive), got {value!r}")
    return "no" if key == "none" else key


def _unread(name, value, reader):
    """``ValueError`` for an option given a non-default value that the chosen mode or noise ignores."""
    return ValueError(f"{name}={value!r}: {reader} does not read it; drop it (default "
                      f"{YETIRANK_DEFAULTS[name]!r}) or choose the mode/noise that reads it")


def check_yetirank_options(permutations=10, decay=0.85, mode="classic", seed=0, *, num_neighbors=1, top=None,
                           noise="gumbel", noise_power=1.0):
    """Validated YetiRank options as a dict (``seed`` included); ``ValueError`` naming the bad option.

    ``permutations``: integer >= 1; ``decay``: in (0, 1]; ``mode``: one of :data:`YETIRANK_MODES`;
    ``num_neighbors``: integer >= 1 or -1 (every later position); ``top``: ``None`` (every position)
    or an integer >= 1; ``noise``: ``"gumbel"``, ``"gauss"`` or ``"no"`` (alias ``"none"``);
    ``noise_power``: finite, > 0; ``seed``: integer in [0, 2**64). Names are case-insensitive.
    An option the chosen mode or noise does not read is refused when it differs from its default
    (rather than ignored): ``decay`` is ``mode="classic"``'s only, ``num_neighbors`` and ``top`` every
    other mode's, ``noise_power`` ``noise="gauss"``'s, ``permutations`` not ``noise="no"``'s.
    """
    permutations = check_integer(permutations, "permutations", 1)
    if isinstance(decay, bool) or not isinstance(decay, numbers.Real) or not (0.0 < decay <= 1.0):
        raise ValueError(f"decay must be a number in (0, 1], got {decay!r}")
    mode = _choice(mode, "mode", YETIRANK_MODES)
    if isinstance(num_neighbors, bool) or not isinstance(num_neighbors, numbers.Integral) \
            or not (num_neighbors >= 1 or num_neighbors == -1):
        raise ValueError(f"num_neighbors must be an integer >= 1, or -1 for every later position, got "
                         f"{num_neighbors!r}")
    if top is not None:
        top = check_integer(top, "top", 1)
    noise = _choice(noise, "noise", YETIRANK_NOISES)
    if isinstance(noise_power, bool) or not isinstance(noise_power, numbers.Real) \
            or not (np.isfinite(noise_power) and noise_power > 0):
        raise ValueError(f"noise_power must be a finite number > 0 (the Gauss noise's standard deviation), got "
                         f"{noise_power!r}")
    seed = check_integer(seed, "seed", 0, SEED_MAX)
    if mode != "classic" and decay != YETIRANK_DEFAULTS["decay"]:
        raise _unread("decay", decay, f"mode={mode!r} weighs a pair by its metric's swap change and")
    if mode == "classic":
        for name, value in (("num_neighbors", num_neighbors), ("top", top)):
            if value != YETIRANK_DEFAULTS[name]:
                raise _unread(name, value, "mode='classic' pairs the neighbours of the whole list and")
    if noise != "gauss" and noise_power != YETIRANK_DEFAULTS["noise_power"]:
        raise _unread("noise_power", noise_power, f"noise={noise!r} has no deviation to set and")
    if noise == "no" and permutations != YETIRANK_DEFAULTS["permutations"]:
        raise _unread("permutations", permutations, "noise='no' ranks once (every ranking is the noise-free one) and")
    return {"permutations": permutations, "decay": float(decay), "mode": mode, "num_neighbors": int(num_neighbors),
            "top": top, "noise": noise, "noise_power": float(noise_power), "seed": seed}


def yetirank_gradients(scores, labels, group_ptr, *, permutations=10, decay=0.85, mode="classic", num_neighbors=1,
                       top=None, noise="gumbel", noise_power=1.0, seed=0, iteration=0, query_weights=None, out=None,
                       n_threads=None, _bias=None):
    r"""One boosting round of YetiRank / YetiLoss: gradient and Newton Hessian of the sampled pairwise loss.

    Per query, ``permutations`` rankings by noisy scores (``noise="gumbel"``, CatBoost's default:
    :math:`s_i + \log u_i - \log(1.000001 - u_i)`, :math:`u_i` uniform on the float32 grid, logistic
    noise as CatBoost draws it; ``"gauss"``: :math:`s_i + \mathcal N(0, \sigma^2)`,
    :math:`\sigma` = ``noise_power``; ``"no"``: the scores themselves, one ranking). In each ranking
    pairs of positions :math:`d < e` (1-based) get a weight by ``mode`` (docs/math.md, "YetiRank"):

    * ``"classic"`` (YetiRank, CatBoost's default): neighbours :math:`e = d + 1` of the whole list,
      :math:`0.15\,\gamma^{d-1}|y_a - y_b|`, :math:`\gamma` = ``decay``;
    * YetiLoss (Lyzhin et al., ICML 2023): :math:`d \le` ``top``, :math:`e \le d +` ``num_neighbors``,
      the change of the mode's metric when the two swap: ``"dcg"`` / ``"ndcg"`` :math:`|\Delta\mathrm{DCG}|`
      (linear gain, :math:`1/\log_2(1 + d)` discount, 0 beyond ``top``; ``"ndcg"`` over the IDCG of the
      first ``top`` positions), ``"err"`` :math:`|\Delta\mathrm{ERR}|` (labels are stop probabilities
      in [0, 1]), ``"mrr"`` :math:`1/d - 1/e` for pairs up to the first relevant document, ``"map"``
      :math:`1/d + \sum_{d<p<e,\ p \text{ relevant}} 1/p` (relevant: label > 0; the last two are
      CatBoost's weights, the exact :math:`|\Delta|` only for ``num_neighbors=1`` (MRR)).

    With :math:`W_{ab}` the weight averaged over the rankings and
    :math:`p = 1/(1 + e^{s_{hi} - s_{lo}})` at the noise-free scores,

    .. math::

        L = \sum W_{ab} \log(1 + e^{-(s_{hi} - s_{lo})}), \quad
        g_{hi} \mathrel{-}= W p, \; g_{lo} \mathrel{+}= W p, \quad h_{hi}, h_{lo} \mathrel{+}= W p (1 - p).

    Gulin, Kuralenok & Pavlov, "Winning the transfer learning track of Yahoo!'s learning to rank
    challenge with YetiRank", JMLR W&CP 14 (2011); Lyzhin, Ustimenko, Gulin & Prokhorenkova, "Which
    tricks are important for learning to rank?", ICML 2023; the constants and option names are
    CatBoost 1.2.10's (``yetirank_helpers.cpp``). ``grad``/``hess`` are ``−der1``/``−der2`` of
    CatBoost's ``YetiRank`` with the same options, in expectation over the draws.

    The draws depend on ``(seed, iteration, query index)`` only (a counter-based generator,
    splitmix64), so a call is reproducible bit for bit at any thread count. An engine adapter
    passes ``iteration`` = its round counter. There is no closed form of the expectation over the
    draws; :func:`lambda_objectives.catboost_yetirank_expected_gradients` estimates it by Monte Carlo
    (classic mode) and :func:`yetirank_catboost_row` compares any mode with CatBoost's own.

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
        Finite; labels non-negative (real values allowed).
    group_ptr : array-like of shape (n_queries + 1,)
    permutations : int >= 1
        Noisy rankings per query and round (CatBoost's default 10).
    decay : float in (0, 1]
        ``mode="classic"``: the weight's factor per position (CatBoost 1.2.10's default 0.85).
    mode : {"classic", "dcg", "ndcg", "mrr", "err", "map"}
        CatBoost's ``mode=`` (case-insensitive).
    num_neighbors : int >= 1, or -1
        Every mode but ``"classic"``: partners per position (-1: every later one; CatBoost's default 1).
    top : int >= 1, optional
        Every mode but ``"classic"``: the first positions that start a pair (default every one).
    noise : {"gumbel", "gauss", "no"}
        CatBoost's ``noise=`` (``"none"`` is an alias of ``"no"``).
    noise_power : float > 0
        ``noise="gauss"``: the standard deviation (CatBoost's default 1).
    seed : int in [0, 2**64)
    iteration : int >= 0
        The boosting round: a fresh, reproducible draw per round.
    query_weights : array-like of shape (n_queries,), optional
        Multiplies each query's gradient and Hessian (CatBoost's group weight).
    out : (ndarray, ndarray), optional
        Contiguous float64 arrays of length n, filled in place and returned.
    n_threads : int, optional
        numba threads; the result does not depend on it.

    An option the chosen mode or noise does not read raises ``ValueError`` unless it is left at its
    default (:func:`check_yetirank_options`); so does a label outside [0, 1] with ``mode="err"``.

    Position debiasing (``bias="ips"`` / ``"pairwise"``) goes through
    :func:`~lambda_objectives.lambda_gradients` or the adapters, which pass ``_bias``: each drawn pair's weight
    times its factors (:func:`lambda_objectives._kernels.position_bias.debias`).

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    o = check_yetirank_options(permutations, decay, mode, seed, num_neighbors=num_neighbors, top=top,
                               noise=noise, noise_power=noise_power)
    iteration = check_integer(iteration, "iteration", 0, SEED_MAX)
    s, y, ptr, w = check_query_inputs(scores, labels, group_ptr, query_weights)
    n = s.shape[0]
    if o["mode"] == "err" and n and y.max() > 1.0:
        i = int(np.argmax(y > 1.0))
        raise ValueError(f"mode='err' reads labels as stop probabilities in [0, 1] (CatBoost's), row {i} is "
                         f"{y[i]:g}; pass (2**grade - 1)/2**max_grade")
    grad, hess = check_outputs(out, n, scores=scores, labels=labels, group_ptr=group_ptr, query_weights=query_weights)
    # the generator's uint64 arithmetic wraps by design; numpy warns about it when numba is off
    with numba_threads(n_threads), np.errstate(over="ignore", divide="ignore"):
        args = (s, y, ptr, w, np.uint64(o["seed"]), np.uint64(iteration), o["permutations"], o["decay"],
                YETIRANK_MODES[o["mode"]], YETIRANK_NOISES[o["noise"]], o["noise_power"],
                -1 if o["top"] is None else o["top"], o["num_neighbors"], grad, hess)
        if _bias is None:
            yk.yetirank_driver(*args)
        else:
            yk.yetirank_driver_biased(*args, *_bias)
    return grad, hess


#: CatBoost's spelling of our option values in a ``loss_function`` string
_CATBOOST_NAMES = {"classic": "Classic", "dcg": "DCG", "ndcg": "NDCG", "mrr": "MRR", "err": "ERR", "map": "MAP",
                   "gumbel": "Gumbel", "gauss": "Gauss", "no": "No"}


def yetirank_catboost_loss(permutations=10, **options):
    """CatBoost's ``loss_function`` string for :func:`yetirank_gradients`' options (validated; the
    defaults left out, ``permutations`` and ``decay`` always written)."""
    o = check_yetirank_options(permutations, **options)
    parts = [f"permutations={o['permutations']}", f"decay={o['decay']!r}"]
    for name in ("mode", "num_neighbors", "top", "noise", "noise_power"):
        if o[name] != YETIRANK_DEFAULTS[name]:
            parts.append(f"{name}={_CATBOOST_NAMES.get(o[name], o[name])}")
    return "YetiRank:" + ";".join(parts)


def yetirank_catboost_row(scores, labels, group_ptr, n_seeds=20, permutations=1000, decay=0.85, seed=0,
                          max_z=5.0, **options):
    """Our YetiRank against CatBoost's own, both averaged over seeds, as one ``validate`` row.

    CatBoost's ``YetiRank:permutations=P;decay=γ`` (plus ``options``: ``mode``, ``num_neighbors``,
    ``top``, ``noise``, ``noise_power`` in CatBoost's spelling) is probed
    (:func:`lambda_objectives.probe_catboost`) with ``random_seed`` 0 … ``n_seeds − 1`` at ``scores``
    rounded to float32 (its baseline precision); ours is :func:`yetirank_gradients` with the same
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

    from .probe import probe_catboost

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
