"""Seeded click simulation on a logging ranker's result lists: position-based, cascade and DBN users.

:func:`simulate_clicks` shows each query's rows in the order of a logging ranker's scores, cuts the list
at ``top_k`` and draws clicks from one of three user models, each query from a random stream of its own
(so a query's clicks depend only on the seed, its key and its own rows). :data:`CLICK_PRESETS` holds the
parameter sets used in the literature and in the engines' own tests and demos.
"""

import numbers
from typing import NamedTuple

import numpy as np

from ..checks import check_integer, check_labels, check_scores
from ..groups import check_group_ptr

#: the user models :func:`simulate_clicks` knows
CLICK_MODELS = ("pbm", "cascade", "dbn")

#: Named parameter sets (``preset=``); options passed explicitly override a preset's.
#:
#: ``"ultra-pbm"``: the position-based model of Joachims, Swaminathan & Schnabel (WSDM 2017) and Ai et
#: al. (SIGIR 2018) as the ULTRA toolbox runs it: top 10 shown, examination (1/rank)^η with η = 1,
#: click-given-examined ε + (1 − ε)(2^y − 1)/(2^ymax − 1), ε = 0.1.
#: ``"xgboost-demo"``: XGBoost's position-bias demo (``xgboost/testing/data.py``, ``PBM``): top 10,
#: examination [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]^η with η = 1, click given
#: examined [0.1, 0.16, 0.28, 0.52, 1.0] for grades 0–4.
#: ``"lightgbm-test"``: LightGBM's own test of its position bias (``test_engine.py``,
#: ``simulate_position_bias``): every row shown, a cascade in which the user clicks a grade 0..4 document
#: with probability 0.4/0.6/0.7/0.8/0.9 and leaves with probability 0.2 after each examined document,
#: clicked or not.
CLICK_PRESETS = {
    "ultra-pbm": {"model": "pbm", "top_k": 10, "eta": 1.0, "epsilon": 0.1},
    "xgboost-demo": {"model": "pbm", "top_k": 10, "eta": 1.0,
                     "examination": (0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06),
                     "click_prob": (0.1, 0.16, 0.28, 0.52, 1.0)},
    "lightgbm-test": {"model": "cascade", "top_k": None, "click_prob": (0.4, 0.6, 0.7, 0.8, 0.9),
                      "stop_prob": 0.2, "stop_after_click": 0.0},
}

#: the options each model reads (any other model option given is an error, not silently ignored)
_READS = {
    "pbm": {"eta", "examination", "click_prob", "epsilon", "max_label"},
    "cascade": {"click_prob", "epsilon", "max_label", "stop_prob", "stop_after_click"},
    "dbn": {"click_prob", "epsilon", "max_label", "satisfaction", "gamma"},
}
_DEFAULTS = {"eta": 1.0, "epsilon": 0.1, "stop_prob": 0.0, "stop_after_click": 1.0, "gamma": 1.0}
_UNSET = object()


class ClickLog(NamedTuple):
    """What :func:`simulate_clicks` returns: one simulated impression of every query.

    Per row, in the input order: ``positions`` (int64, the 0-based rank at which the row was shown,
    ``-1`` when it fell below ``top_k`` and was not shown), ``clicks`` (int64, 0/1; 0 for a row not shown),
    ``examined`` (int64, 0/1: whether the simulated user looked at it), ``examination_prob`` (float64,
    the exact probability that the row was examined under the model given the rows above it; 0 when not
    shown) and ``click_prob`` (float64, the probability of a click once examined, from its grade).

    Display order: ``order`` (int64, every row index, each query's rows by display rank, the rows not
    shown last in the logging ranker's order: ``positions[order]`` reads 0, 1, ..., -1, -1 within each
    query), ``shown`` (int64, the indices of the shown rows in display order) and ``shown_ptr`` (int64,
    the query boundaries of ``shown``: query ``q`` showed rows ``shown[shown_ptr[q]:shown_ptr[q+1]]``).
    ``X[shown]``, ``clicks[shown]``, ``positions[shown]`` with ``shown_ptr`` is the click log a trainer
    reads (rows in display order, as XGBoost's ``lambdarank_unbiased`` needs them).

    ``propensities``: the position-based model's examination probability per position (length
    ``top_k``, the ``propensities=`` of inverse-propensity weighting); ``None`` for the cascade models,
    whose examination depends on the documents above. ``model`` and ``params``: the resolved model
    and its parameters.
    """

    positions: np.ndarray
    clicks: np.ndarray
    examined: np.ndarray
    examination_prob: np.ndarray
    click_prob: np.ndarray
    order: np.ndarray
    shown: np.ndarray
    shown_ptr: np.ndarray
    propensities: object
    model: str
    params: dict


def simulate_clicks(labels, scores, group_ptr, *, model=None, top_k=_UNSET, eta=None, examination=None,
                    click_prob=None, epsilon=None, max_label=None, stop_prob=None, stop_after_click=None,
                    satisfaction=None, gamma=None, preset=None, query_ids=None, seed=0):
    r"""Simulate one impression per query: the logging ranker's top ``top_k`` shown, clicks drawn from a user model.

    Display: each query's rows are ranked by ``scores`` descending, ties in input order (a stable
    sort); the row at 0-based rank ``r < top_k`` is shown at position ``r``, the rest are not shown
    (position ``-1``, never clicked). Below, ``c(y)`` is the probability of a click on an examined
    document of grade ``y``: ``click_prob[y]`` when a table is given, else

    .. math:: c(y) = \varepsilon + (1 - \varepsilon)\,\frac{2^y - 1}{2^{y_{\max}} - 1}

    (Chapelle & Zhang 2009's attractiveness as Ai et al., SIGIR 2018, and the ULTRA toolbox use it;
    :math:`y_{\max}` = ``max_label``, by default the largest label passed; with :math:`y_{\max} = 0`
    every document gets :math:`\varepsilon`).

    Models (``model=``):

    * ``"pbm"``, the position-based model (Richardson et al. 2007; Joachims et al., WSDM 2017): the
      document at position ``r`` is examined with probability :math:`\theta_r`, independently of the
      others, and clicked with probability :math:`\theta_r\,c(y)`;
      :math:`\theta_r = (1/(r+1))^{\eta}` or, with an ``examination`` curve, :math:`\theta_r = e_r^{\eta}`.
    * ``"cascade"`` (Craswell, Zoeter, Taylor & Ramsey, WSDM 2008, generalised): the user examines the
      positions from the top; an examined document is clicked with probability :math:`c(y)`; after a
      click the user stops with probability ``stop_after_click`` (default 1: the original cascade, at
      most one click); a user still there leaves with probability ``stop_prob`` (default 0) before the
      next position. LightGBM's own test is ``stop_after_click=0, stop_prob=0.2`` (``preset="lightgbm-test"``).
    * ``"dbn"``, the dynamic Bayesian network of Chapelle & Zhang (WWW 2009): :math:`E_0 = 1`;
      :math:`C_r = 1` iff :math:`E_r = 1` and the document attracts (probability :math:`a_y = c(y)`);
      a clicked document satisfies with probability :math:`s_y` (``satisfaction[y]``, by default
      :math:`(2^y - 1)/2^{y_{\max}}`, ERR's stopping probability); :math:`E_{r+1} = 1` iff
      :math:`E_r = 1`, the user was not satisfied at ``r`` and perseveres (probability
      :math:`\gamma`, default 1: the simplified DBN that ERR models).

    Exact marginals (``examination_prob``): for the position-based model :math:`\theta_r`; for the
    cascade models :math:`P(E_0) = 1`, :math:`P(E_{r+1}) = P(E_r)\,(1 - c(y_r)\,s_r)\,g`, with
    :math:`(s_r, g)` = (``stop_after_click``, 1 − ``stop_prob``) or :math:`(s_{y_r}, \gamma)`.

    Randomness: query ``q`` draws from its own stream, ``numpy.random.SeedSequence(seed,
    spawn_key=(key,))`` with ``key = query_ids[q]`` (default ``q``, its index), three uniforms per
    shown position in a fixed order; so a query's clicks depend on the seed, its key and its own rows
    only, never on the other queries (pass ``query_ids`` to make them independent of the query order too),
    and the clicks at the top positions do not change with ``top_k``.

    Parameters
    ----------
    labels : array-like of int, shape (n_rows,)
        True relevance grades (non-negative integers; below ``len(click_prob)`` with a table).
    scores : array-like of float, shape (n_rows,)
        The logging ranker's scores (finite).
    group_ptr : array-like of int, shape (n_queries + 1,)
        Query boundaries (contiguous rows; empty queries show nothing).
    model : {"pbm", "cascade", "dbn"}, optional
        The user model (default ``"pbm"``, or the preset's).
    top_k : int or None, default 10
        Positions shown per query (``None``: every row).
    eta : float, default 1.0
        Severity of the position bias (``"pbm"`` only), >= 0.
    examination : array-like of float, optional
        Examination curve per position (``"pbm"``), each in (0, 1], at least ``top_k`` long.
    click_prob : array-like of float, optional
        Click-given-examined probability per grade 0, 1, ..., each in [0, 1] (the attractiveness
        :math:`a_y` for ``"dbn"``); replaces the ``epsilon`` formula.
    epsilon : float, default 0.1
        Click noise of the formula, in [0, 1].
    max_label : int, optional
        :math:`y_{\max}` of the formulas (>= every label); default the largest label passed.
    stop_prob : float, default 0.0
        ``"cascade"``: probability of leaving after each examined document, in [0, 1].
    stop_after_click : float, default 1.0
        ``"cascade"``: probability of stopping after a click, in [0, 1].
    satisfaction : array-like of float, optional
        ``"dbn"``: :math:`s_y` per grade, each in [0, 1].
    gamma : float, default 1.0
        ``"dbn"``: perseverance :math:`\gamma`, in [0, 1].
    preset : str, optional
        A name of :data:`CLICK_PRESETS`; the options given explicitly override its values.
    query_ids : array-like of int, optional
        One distinct non-negative integer per query keying its random stream (default: its index).
    seed : int, default 0
        Non-negative integer.

    Returns
    -------
    ClickLog

    Raises
    ------
    ValueError
        Naming the argument and the row or query: non-integer, negative or out-of-table grades,
        non-finite scores, bad query boundaries, probabilities outside their range, an examination
        curve shorter than ``top_k``, an option the model does not read, an unknown model or preset,
        a negative or non-integer seed, repeated or negative ``query_ids``.

    References
    ----------
    Craswell, Zoeter, Taylor, Ramsey. An experimental comparison of click position-bias models. WSDM 2008.
    Chapelle, Zhang. A dynamic Bayesian network click model for web search ranking. WWW 2009.
    Joachims, Swaminathan, Schnabel. Unbiased learning-to-rank with biased feedback. WSDM 2017.
    Ai, Bi, Luo, Guo, Croft. Unbiased learning to rank with unbiased propensity estimation. SIGIR 2018.

    Examples
    --------
    >>> import numpy as np
    >>> import lambda_objectives as lo
    >>> log = lo.simulate_clicks([0, 2, 1, 0], [0.1, 0.9, 0.5, 0.3], [0, 4], top_k=3, seed=1)
    >>> log.positions.tolist()
    [-1, 0, 1, 2]
    >>> log.shown.tolist()
    [1, 2, 3]
    """
    given = {k: v for k, v in dict(eta=eta, examination=examination, click_prob=click_prob, epsilon=epsilon,
                                    max_label=max_label, stop_prob=stop_prob, stop_after_click=stop_after_click,
                                    satisfaction=satisfaction, gamma=gamma).items() if v is not None}
    opts = {}
    if preset is not None:
        if not isinstance(preset, str) or preset not in CLICK_PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(CLICK_PRESETS)}")
        opts.update(CLICK_PRESETS[preset])
        if model is not None and model != opts["model"]:
            raise ValueError(f"model={model!r} contradicts preset {preset!r} (model {opts['model']!r}); "
                             "drop one of them")
    if model is not None:
        opts["model"] = model
    model = opts.pop("model", "pbm")
    if not isinstance(model, str) or model not in CLICK_MODELS:
        raise ValueError(f"unknown model {model!r}; choose from {', '.join(CLICK_MODELS)}")
    k_opt = opts.pop("top_k", 10)
    if top_k is not _UNSET:
        k_opt = top_k
    if given.get("click_prob") is not None and "epsilon" in opts and "epsilon" not in given:
        del opts["epsilon"]  # an explicit table replaces a preset's formula
    opts.update(given)
    unread = sorted(set(opts) - _READS[model])
    if unread:
        raise ValueError(f"{', '.join(unread)} {'is' if len(unread) == 1 else 'are'} not read by model {model!r}"
                         f"{f' (preset {preset!r})' if preset else ''}; it reads {', '.join(sorted(_READS[model]))}")
    if "click_prob" in opts and "epsilon" in opts:
        raise ValueError("epsilon is not read when click_prob is given (the table replaces the formula)")
    if "max_label" in opts and "click_prob" in opts and (model != "dbn" or "satisfaction" in opts):
        raise ValueError("max_label is not read when the tables (click_prob, and satisfaction for 'dbn') are given")

    scores = check_scores(scores)
    n = scores.shape[0]
    y = check_labels(labels, n, integer=True)
    ptr = check_group_ptr(group_ptr, n, allow_empty_groups=True)
    n_queries = ptr.shape[0] - 1
    sizes = np.diff(ptr)
    k = _check_top_k(k_opt)
    longest = int(sizes.max()) if n_queries else 0
    shown_len = longest if k is None else min(k, longest)
    seed = check_integer(seed, "seed", 0)
    keys = _check_query_ids(query_ids, n_queries)

    ymax = _max_label(opts.get("max_label"), y)
    if "click_prob" in opts:
        table = _prob_table(opts["click_prob"], "click_prob", low_open=False)
        c_row = table[_grades_in(y, table.shape[0], "click_prob")]
    else:
        eps = _prob(opts.get("epsilon", _DEFAULTS["epsilon"]), "epsilon")
        c_row = eps + (1.0 - eps) * _gain_ratio(y, ymax, minus_one=True)
        opts.update(epsilon=eps, max_label=int(ymax))
    if model == "dbn" and "satisfaction" not in opts:
        opts["max_label"] = int(ymax)

    theta = None
    if model == "pbm":
        eta_v = _nonneg(opts.get("eta", _DEFAULTS["eta"]), "eta")
        opts["eta"] = eta_v
        if "examination" in opts:
            curve = _prob_table(opts["examination"], "examination", low_open=True)
            if curve.shape[0] < shown_len:
                raise ValueError(f"examination has {curve.shape[0]} positions, but {shown_len} are shown "
                                 f"(top_k={k}, longest query {longest} rows); give one probability per position")
            theta = curve[:shown_len] ** eta_v
        else:
            theta = (1.0 / np.arange(1, shown_len + 1, dtype=np.float64)) ** eta_v
        s_row = g_const = None
    elif model == "cascade":
        s_const = _prob(opts.get("stop_after_click", _DEFAULTS["stop_after_click"]), "stop_after_click")
        g_const = 1.0 - _prob(opts.get("stop_prob", _DEFAULTS["stop_prob"]), "stop_prob")
        s_row = np.full(n, s_const)
    else:
        if "satisfaction" in opts:
            sat = _prob_table(opts["satisfaction"], "satisfaction", low_open=False)
            s_row = sat[_grades_in(y, sat.shape[0], "satisfaction")]
        else:
            s_row = _gain_ratio(y, ymax, minus_one=False)
        g_const = _prob(opts.get("gamma", _DEFAULTS["gamma"]), "gamma")

    # every option validated above: the record of what ran
    params = {"top_k": k, **{o: (np.asarray(v, dtype=np.float64).tolist() if np.ndim(v) else v)
                              for o, v in opts.items()}}
    positions = np.full(n, -1, dtype=np.int64)
    clicks = np.zeros(n, dtype=np.int64)
    examined = np.zeros(n, dtype=np.int64)
    exam_prob = np.zeros(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    shown_ptr = np.zeros(n_queries + 1, dtype=np.int64)
    shown_parts = []
    for q in range(n_queries):
        a, b = int(ptr[q]), int(ptr[q + 1])
        rank = a + np.argsort(-scores[a:b], kind="stable")
        order[a:b] = rank
        m = (b - a) if k is None else min(k, b - a)
        top = rank[:m]
        shown_parts.append(top)
        shown_ptr[q + 1] = shown_ptr[q] + m
        if m == 0:
            continue
        positions[top] = np.arange(m)
        u = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(int(keys[q]),)))).random((m, 3))
        c = c_row[top]
        if model == "pbm":
            e = (u[:, 0] < theta[:m]).astype(np.int64)
            exam_prob[top] = theta[:m]
            examined[top] = e
            clicks[top] = e * (u[:, 1] < c)
            continue
        s = s_row[top]
        p_exam, still = 1.0, True
        for r in range(m):
            exam_prob[top[r]] = p_exam
            p_exam *= (1.0 - c[r] * s[r]) * g_const
            if not still:
                continue
            examined[top[r]] = 1
            hit = u[r, 0] < c[r]
            clicks[top[r]] = hit
            # satisfied after a click, else (or not clicked) leaving before the next position
            still = not (hit and u[r, 1] < s[r]) and u[r, 2] < g_const
    shown = np.concatenate(shown_parts) if shown_parts else np.zeros(0, dtype=np.int64)
    return ClickLog(positions, clicks, examined, exam_prob, np.asarray(c_row, dtype=np.float64), order,
                    shown.astype(np.int64), shown_ptr, theta, model, params)


def _check_top_k(k):
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"top_k must be a positive integer or None (every row shown), got {k!r}")
    return int(k)


def _check_query_ids(query_ids, n_queries):
    if query_ids is None:
        return np.arange(n_queries, dtype=np.int64)
    arr = np.asarray(query_ids)
    if arr.ndim != 1 or arr.shape[0] != n_queries:
        raise ValueError(f"query_ids must hold one id per query ({n_queries}), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"query_ids must be integers, got dtype {arr.dtype}")
    if n_queries and arr.min() < 0:
        q = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"query_ids must be non-negative, query {q} has {arr[q]}")
    uniq, first, counts = np.unique(arr, return_index=True, return_counts=True)
    if np.any(counts > 1):
        dup = int(uniq[np.flatnonzero(counts > 1)[0]])
        qs = np.flatnonzero(arr == dup)[:2].tolist()
        raise ValueError(f"query_ids must be distinct (each keys a random stream): queries {qs[0]} and {qs[1]} "
                         f"both have {dup}")
    return arr.astype(np.int64)


def _max_label(max_label, y):
    top = float(y.max()) if y.size else 0.0
    if max_label is None:
        return top
    if isinstance(max_label, bool) or not isinstance(max_label, numbers.Integral) or max_label < 0:
        raise ValueError(f"max_label must be a non-negative integer, got {max_label!r}")
    if top > max_label:
        i = int(np.argmax(y))
        raise ValueError(f"labels must not exceed max_label={max_label}, row {i} is {y[i]:g}")
    return float(max_label)


def _gain_ratio(y, ymax, minus_one):
    """(2^y − 1)/(2^ymax − 1) (``minus_one``) or (2^y − 1)/2^ymax, without overflow for large grades."""
    if ymax == 0:
        return np.zeros_like(y)
    ln2 = np.log(2.0)
    num = np.exp2(y - ymax) * -np.expm1(-y * ln2)
    return num / -np.expm1(-ymax * ln2) if minus_one else num


def _grades_in(y, size, name):
    bad = y >= size
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"labels must be grades 0..{size - 1} for {name} (one probability per grade), "
                         f"row {i} is {y[i]:g}")
    return y.astype(np.int64)


def _prob_table(values, name, low_open):
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of probabilities, got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    bad = ~((arr > 0) if low_open else (arr >= 0)) | ~(arr <= 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must lie in {'(0, 1]' if low_open else '[0, 1]'}, entry {i} is {arr[i]!r}")
    return arr


def _prob(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _nonneg(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0.0 <= value < np.inf):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
