"""Gradient back ends of the adapters, chosen by ``preset``: the exact lambdas or an engine's own.

* ``None``: the package's exact lambdas (:func:`lambda_objectives.lambda_gradients`);
* ``"lightgbm"``: LightGBM's ``lambdarank`` bit for bit (``k`` = ``lambdarank_truncation_level``,
  default 30; options ``label_gain``, ``norm``); kernels in ``_kernels/lightgbm.py``;
* ``"xgboost"``: XGBoost ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` (``pair_method="topk"``, ``k``
  default 32, or ``pair_method="mean"`` with ``num_pair_per_sample`` sampled partners, default 1; options
  ``normalization``, ``score_normalization``, ``exp_gain``); kernels in ``_kernels/xgboost.py``;
* ``"catboost"``: CatBoost's ``LambdaMart`` (NDCG, MRR, ERR, MAP; ``k`` = ``top``; options ``norm``,
  ``gain`` = ``type``, ``denominator``), reproduced to 1e-13; kernels in ``_kernels/catboost.py``;
  and its ``YetiRank`` with CatBoost's defaults (the same computation as ``preset=None``, whose
  defaults are CatBoost's; reproduced in expectation, not draw for draw: ``_kernels/yetirank.py``);
  and its ``QuerySoftMax`` (``"softmax"``, again the exact back end's computation: equal to CatBoost's
  probed derivatives, ``_kernels/listwise.py``).

``"yetirank"`` and the sampled pairs (``pair_method="mean"``) draw afresh every call (``"plrank"`` fresh
rankings): the state keeps a round counter that each call advances (the engines call the objective once
per boosting round), so round ``r`` of a run uses the draws of ``(seed, r, query)`` whatever the thread
count (for the sampled pairs the query is known by its labels, so also whatever the partitioning:
``lambda_gradients``).

``pair_method="mean"`` under ``"xgboost"`` draws what XGBoost 3.0-3.3 draws in boosting round
``objective.iteration`` (advanced by every engine call; see
:func:`xgboost_mean_seed_offset` for the versions).

Each back end has ``prepare(objective, state, weights)``, run once per data set, and
``compute(objective, state, scores) -> (grad, hess)`` into the state's float32 buffers.
"""

from typing import Callable, NamedTuple

import numpy as np

from .._core.config import ENGINE_FLOAT, FLOAT, kernel_array
from .._kernels import lightgbm as lgb_kernels
from .._kernels import xgboost as xgb_kernels
from .._kernels.handback import hand_back
from .._kernels.position_bias import update_bias_factors
from .._kernels.ranking import discount_table, document_gains, gain_table
from .._registry import REGISTRY
from .._kernels import xendcg as xendcg_kernels
from ..objectives.catboost_lambdamart import catboost_lambdamart_gradients, check_catboost_options
from ..objectives.lambdas import bias_arrays, bias_update, check_overflow, lambda_gradients, pair_run, pair_setup
from ..objectives.listwise import listmle_gradients, softmax_gradients
from ..objectives.xendcg import xendcg_gradients
from ..objectives.plrank import plrank_gradients
from ..objectives.yetirank import yetirank_gradients

_TABLES = {}
_NO_WEIGHTS = np.zeros(0, FLOAT)


def _discount(ptr):
    """The discount table for every position of the longest query."""
    return discount_table(max(int(np.max(np.diff(ptr), initial=1)), 1))


def _sigmoid_table(sigma):
    if sigma not in _TABLES:
        _TABLES[sigma] = lgb_kernels.lgb_sigmoid_table(float(sigma))
    return _TABLES[sigma]


# -- exact ---------------------------------------------------------------------------------------
def _prepare_exact(obj, st, weights):
    n = st["n"]
    if obj.metric == "xendcg":
        # one generator per objective: fresh γ every round, the same run for the same seed
        st["rng"] = np.random.default_rng(obj.kernel_options.get("seed", 0))
    if obj.metric == "yetirank":
        st["yetirank"] = {"seed": 0, **obj.kernel_options}  # yetirank_gradients' defaults are CatBoost's
        st["round"] = 0
    if obj.metric == "plrank" or obj.kernel_options.get("pair_method") == "mean":
        st["round"] = 0  # fresh draws every call: round r of the run draws with iteration=r
    st["doc_w"] = None if weights is None else np.ascontiguousarray(weights, dtype=FLOAT)
    st["g64"] = np.zeros(n, FLOAT)
    st["h64"] = np.zeros(n, FLOAT)


def _exact_options(obj, st):
    opts = obj.kernel_options
    if isinstance(obj.metric, str) and obj.metric == "err" and opts.get("max_label") is None \
            and opts.get("label_gain") is None:
        # one satisfaction scale for the whole data set, not each query's own top grade
        opts = dict(opts, max_label=float(st["labels"].max(initial=0.0)))
    return opts


def _compute_exact(obj, st, scores):
    s = np.asarray(scores, dtype=FLOAT)
    overflow = False
    g64, h64 = st["g64"], st["h64"]
    if obj.metric == "xendcg":
        g64[:], h64[:] = xendcg_gradients(s, st["labels"], st["ptr"], gammas=st["rng"].random(st["n"]),
                                          n_threads=obj.n_threads)
    elif obj.metric == "yetirank":
        arrays = None
        if obj.bias in ("ips", "pairwise"):  # each drawn pair's weight times its position-bias factors
            arrays, factors = bias_arrays(obj.bias, {"propensities": obj.propensities}, st["pos"], st.get("factors"))
        yetirank_gradients(s, st["labels"], st["ptr"], iteration=st["round"], out=(g64, h64), n_threads=obj.n_threads,
                           _bias=arrays, **st["yetirank"])
        st["round"] += 1
        if obj.bias == "pairwise":
            st["factors"] = bias_update(arrays, factors, st["pos"], obj.bias_norm)
            st["ti"], st["tj"] = st["factors"]
    elif obj.metric == "plrank":
        plrank_gradients(s, st["labels"], st["ptr"], k=obj.k, iteration=st["round"], out=(g64, h64),
                         n_threads=obj.n_threads, **obj.kernel_options)
    elif obj.metric in ("softmax", "listmle"):
        opts = {key: v for key, v in obj.kernel_options.items() if v is not None}  # None: the function's default
        (softmax_gradients if obj.metric == "softmax" else listmle_gradients)(
            s, st["labels"], st["ptr"], out=(g64, h64), n_threads=obj.n_threads, **opts)
    else:
        opts = _exact_options(obj, st)
        if "round" in st:  # sampled pairs: fresh draws every round
            opts = dict(opts, iteration=st["round"])
            st["round"] += 1
        if obj.bias in ("ips", "pairwise"):  # the pair loop's factors; "additive" wraps every back end (_base)
            res = lambda_gradients(s, st["labels"], st["ptr"], obj.metric, obj.k, obj.sigma, out=(g64, h64),
                                   n_threads=obj.n_threads, bias=obj.bias, positions=st["pos"],
                                   propensities=obj.propensities, bias_norm=obj.bias_norm,
                                   bias_state=st.get("factors"), **opts)
            if obj.bias == "pairwise":
                st["factors"] = res[-1]  # this round's pass re-estimated t+/t- for the next one
                st["ti"], st["tj"] = st["factors"]
        else:
            if "pairs" not in st:  # the data set's checks and tables once, not every round (None: no pair loop)
                base = {key: v for key, v in opts.items() if key != "iteration"}
                st["pairs"] = pair_setup(st["labels"], st["ptr"], st["n"], obj.metric, obj.k, obj.sigma, **base)
            if st["pairs"] is None:
                lambda_gradients(s, st["labels"], st["ptr"], obj.metric, obj.k, obj.sigma,
                                 out=(g64, h64), n_threads=obj.n_threads, **opts)
            else:
                plan, normalize, mu, sampling = st["pairs"]
                if sampling is not None:
                    sampling = (sampling[0], sampling[1], opts["iteration"])
                # the scores were checked finite by the caller (_compute)
                pair_run(plan, kernel_array(s), g64, h64, obj.sigma, normalize, mu, sampling, obj.n_threads)
                overflow = True
    sg, sh, sg32, sh32, low = hand_back(g64, h64, _NO_WEIGHTS if st["doc_w"] is None else st["doc_w"], st["grad"],
                                        st["hess"])
    if overflow:  # lambda_gradients checks its own; pair_run leaves it to its caller
        check_overflow(g64, h64, obj.sigma, totals=(sg, sh))
    st["totals"] = (sg32, sh32, low)  # read by LambdaObjective._check_hessian
    return st["grad"], st["hess"]


# -- LightGBM lambdarank ---------------------------------------------------------------------------
def _prepare_lightgbm(obj, st, weights):
    if obj.metric == "xendcg":
        return _prepare_lgb_xendcg(obj, st, weights)
    lab = st["labels"]
    if np.any(lab != np.floor(lab)):
        i = int(np.flatnonzero(lab != np.floor(lab))[0])
        raise ValueError(f"preset='lightgbm' needs integer labels, row {i} is {lab[i]!r}")
    lg = obj.kernel_options.get("label_gain")
    # LightGBM's default label_gain: 2**l - 1 for grades 0..30
    lg = gain_table("exp", max_label=30) if lg is None else gain_table(label_gain=lg)
    if lab.size and lab.max() >= lg.shape[0]:
        i = int(np.argmax(lab >= lg.shape[0]))
        raise ValueError(f"label {lab[i]:g} at row {i} exceeds label_gain (size {lg.shape[0]})")
    k = 30 if obj.k is None else obj.k
    disc = _discount(st["ptr"])
    inv = np.empty(st["ptr"].shape[0] - 1, FLOAT)
    lgb_kernels.lgb_inverse_max_dcg(lab, st["ptr"], lg, k, disc, inv)
    st.update(label_gain=lg, kk=k, inv=inv, discount=disc, table=_sigmoid_table(obj.sigma),
              norm=bool(obj.kernel_options.get("norm", True)))
    st["doc_w"] = (np.zeros(1, ENGINE_FLOAT) if weights is None
                   else kernel_array(weights, ENGINE_FLOAT))
    st["use_w"] = weights is not None


def _compute_lightgbm(obj, st, scores):
    if obj.metric == "xendcg":
        xendcg_kernels.lgb_xendcg_driver(kernel_array(scores), st["labels"], st["ptr"],
                                         st["states"], st["grad"], st["hess"])
        return st["grad"], st["hess"]
    table, tmin, tmax, factor = st["table"]
    s = kernel_array(scores)
    lgb_kernels.lgb_lambdarank(s, st["labels"], st["ptr"], st["label_gain"], st["discount"], st["inv"], st["kk"],
                               obj.sigma, st["norm"], table, tmin, tmax, factor, st["doc_w"], st["use_w"],
                               st["grad"], st["hess"])
    return st["grad"], st["hess"]


#: LightGBM's rank_xendcg computes 2**label exactly for labels below this (see _prepare_lgb_xendcg)
LGB_XENDCG_LABELS = 32


def _prepare_lgb_xendcg(obj, st, weights):
    """LightGBM's ``rank_xendcg``: one generator per query, ``Random(objective_seed + q)``, that
    advances across rounds (so the objective must see every round once, as the engine does)."""
    if weights is not None:
        raise ValueError("LightGBM's rank_xendcg ignores weights, so preset='lightgbm' with 'xendcg' takes none; "
                         "use preset=None for weighted XE-NDCG")
    lab = st["labels"]
    if lab.size and lab.max() >= LGB_XENDCG_LABELS:
        # Common::Pow(2, int(label)) squares a 32-bit int: from 32 on it overflows in C++ (undefined
        # behaviour), so LightGBM's gradients there are not 2**label's and there is nothing to reproduce
        i = int(np.argmax(lab >= LGB_XENDCG_LABELS))
        raise ValueError(f"label {lab[i]:g} at row {i}: LightGBM's rank_xendcg computes 2**label in 32-bit "
                         f"integers, which overflow for labels >= {LGB_XENDCG_LABELS}, so preset='lightgbm' takes "
                         "labels below 32; use preset=None (the exact XE-NDCG) for larger labels")
    seed = obj.kernel_options.get("objective_seed", 5)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"objective_seed must be an integer, got {seed!r}")
    nq = st["ptr"].shape[0] - 1
    st["states"] = ((int(seed) + np.arange(nq, dtype=np.int64)) & 0xFFFFFFFF).astype(np.uint32)


# -- XGBoost rank:* ----------------------------------------------------------------------------------
def xgboost_mean_seed_offset(version=None):
    """How XGBoost ``version`` (default: the installed one) seeds the ``mean`` pair sampler of query ``g``
    in boosting round ``iteration``: ``std::minstd_rand((iteration + offset) * n_groups + g)``; returns
    ``offset`` (0 for 3.0.x, 1 for 3.1-3.3, read in ``lambdarank_obj.h`` ``MakePairs`` of each release).

    Raises ``ValueError`` for a version whose draws cannot be reproduced from a custom objective: from
    3.4 (dmlc/xgboost PR #12332) the seed is a draw of the learner's own ``std::mt19937``, which
    ``obj=`` never sees; before 3.0 it is ``minstd_rand(iteration)`` advanced by ``g`` and this package
    supports XGBoost 3.x only. Without XGBoost installed, the 3.1-3.3 rule is used.
    """
    if version is None:
        try:
            import xgboost
        except ImportError:
            return 1
        version = xgboost.__version__
    parts = str(version).split(".")
    try:
        major, minor = int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or "0")
    except (IndexError, ValueError):
        raise ValueError(f"cannot read the XGBoost version {version!r}") from None
    if major == 3 and minor == 0:
        return 0
    if major == 3 and 1 <= minor <= 3:
        return 1
    why = ("from 3.4 XGBoost seeds the mean pair sampler from the learner's own random generator (PR #12332), "
           "which a custom objective cannot see" if (major, minor) >= (3, 4) else
           "this package reproduces XGBoost 3.x")
    raise ValueError(f"preset='xgboost' with pair_method='mean' reproduces XGBoost 3.0-3.3's pair draws, not those "
                     f"of XGBoost {version}: {why}. Use pair_method='topk', or preset=None for the package's "
                     "own sampled pairs")


def _xgb_pairs(obj):
    """``(pair_method, pairs)``: ``pairs`` is topk's ``k`` (default 32) or mean's ``num_pair_per_sample``
    (default 1), XGBoost's ``lambdarank_num_pair_per_sample`` either way."""
    o = obj.kernel_options
    method = o.get("pair_method", "topk")
    if method not in ("topk", "mean"):
        raise ValueError(f"pair_method must be 'topk' or 'mean' (XGBoost's lambdarank_pair_method), got {method!r}")
    m = o.get("num_pair_per_sample")
    if m is not None and (isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1):
        raise ValueError(f"num_pair_per_sample must be a positive integer (XGBoost's "
                         f"lambdarank_num_pair_per_sample), got {m!r}")
    if method == "mean":
        if obj.k is not None:
            raise ValueError(f"k={obj.k} is the topk cut-off; pair_method='mean' has none: pass "
                             "num_pair_per_sample (the sampled partners per document)")
        return method, 1 if m is None else int(m)
    if m is not None and obj.k is not None and int(m) != obj.k:
        raise ValueError(f"k={obj.k} and num_pair_per_sample={m} disagree: under pair_method='topk' both name "
                         "XGBoost's lambdarank_num_pair_per_sample; pass one")
    return method, (obj.k if obj.k is not None else 32 if m is None else int(m))


def _prepare_xgboost(obj, st, weights):
    lab = st["labels"]
    n_q = st["ptr"].shape[0] - 1
    method, pairs = _xgb_pairs(obj)
    if method == "mean":
        st["seed_offset"] = xgboost_mean_seed_offset()
    exp_gain = bool(obj.kernel_options.get("exp_gain", True))
    if obj.metric == "map" and np.any((lab != 0) & (lab != 1)):
        i = int(np.flatnonzero((lab != 0) & (lab != 1))[0])
        raise ValueError(f"preset='xgboost' metric='map' needs binary labels, row {i} is {lab[i]!r}")
    if obj.metric == "ndcg" and exp_gain and (np.any(lab != np.floor(lab)) or lab.max(initial=0) > 31):
        raise ValueError("rank:ndcg with exp_gain needs integer labels <= 31")
    k = pairs if method == "topk" else 0  # mean: IDCG over the whole list (0 means no cut-off)
    y32 = lab.astype(np.float32)
    # the engine's gains are of its float32 labels
    gains = document_gains(y32.astype(FLOAT), "exp" if exp_gain else "linear")
    disc = _discount(st["ptr"])
    inv = np.empty(n_q, FLOAT)
    if obj.metric == "ndcg":
        xgb_kernels.xgb_inverse_idcg(gains, st["ptr"], k, disc, inv)
    # validated per query (checks.check_training_data)
    gw = np.ones(n_q, np.float32) if weights is None else kernel_array(weights, np.float32)
    if obj.bias == "pairwise":
        # the engine tracks MaxPositionSize() positions: k for topk, else min(largest query, 32)
        n_track = pairs if method == "topk" else min(int(np.max(np.diff(st["ptr"]), initial=0)), 32)
        st.update(ti=np.ones(n_track), tj=np.ones(n_track), li=np.zeros(st["n"]), lj=np.zeros(st["n"]),
                  bias_reg=1.0 / (1.0 + obj.bias_norm))
    st.update(pair_method=method, pairs=pairs, labels32=y32, gains=gains, discount=disc, kk=k, inv=inv, exp_gain=exp_gain, group_w=gw,
              w_norm=np.float32(float(n_q) / float(np.sum(gw.astype(np.float64)))),
              n_rel=np.zeros(st["n"], FLOAT), acc=np.zeros(st["n"], FLOAT),
              metric_code=REGISTRY[obj.metric].code, preds32=np.zeros(st["n"], np.float32))


_NO_BIAS = (np.zeros(0, np.int64), np.ones(0), np.ones(0), np.zeros(0), np.zeros(0))


def _compute_xgboost(obj, st, scores):
    p = st["preds32"]
    p[:] = scores  # the engine ranks by float32 margins
    o = obj.kernel_options
    unbiased = "ti" in st
    if unbiased:  # lambdarank_unbiased: this round's cost sums start from 0
        st["li"][:] = 0.0
        st["lj"][:] = 0.0
        bias = (st["pos"], st["ti"], st["tj"], st["li"], st["lj"])
    else:
        bias = _NO_BIAS
    if st["pair_method"] == "mean":
        n_q = st["ptr"].shape[0] - 1
        # the engine's uint32 arithmetic: (int32 iteration + offset) * n_groups, wrapped
        seed0 = ((int(obj.iteration) + st["seed_offset"]) * n_q) % (1 << 32)
        xgb_kernels.xgb_lambdarank_mean(p, st["labels32"], st["gains"], st["discount"], st["ptr"], st["metric_code"],
                                        st["inv"], st["pairs"], np.uint64(seed0),
                                        bool(o.get("score_normalization", True)), bool(o.get("normalization", True)),
                                        st["group_w"], st["w_norm"], st["n_rel"], st["acc"], unbiased, *bias,
                                        st["grad"], st["hess"])
    else:
        xgb_kernels.xgb_lambdarank(p, st["labels32"], st["gains"], st["discount"], st["ptr"], st["metric_code"],
                                   st["inv"], st["kk"], bool(o.get("score_normalization", True)),
                                   bool(o.get("normalization", True)), st["group_w"], st["w_norm"],
                                   st["n_rel"], st["acc"], unbiased, *bias, st["grad"], st["hess"])
    if unbiased:  # after the pass: t⁺/t⁻ re-estimated for the next round (the engine's UpdatePositionBias)
        update_bias_factors(st["li"], st["lj"], st["pos"], st["bias_reg"], st["ti"], st["tj"])
    return st["grad"], st["hess"]


# -- CatBoost LambdaMart -------------------------------------------------------------------------
def _prepare_catboost(obj, st, weights):
    """CatBoost's ``LambdaMart`` derivatives (``_kernels/catboost.py``, reproduced to 1e-13): the
    labels are CatBoost's targets (ERR: stop probabilities in [0, 1]); it ignores weights.
    ``YetiRank`` and ``QuerySoftMax`` (``"softmax"``) are the exact back end's computations (their
    defaults are CatBoost's); CatBoost's document weights enter QuerySoftMax's softmax, ours multiply
    the derivatives, so preset='catboost' takes no weights there."""
    if obj.metric == "softmax" and weights is not None:
        raise ValueError("CatBoost's QuerySoftMax puts document weights inside its softmax, so preset='catboost' "
                         "with 'softmax' takes none; use preset=None (weights multiply each row's derivatives)")
    if obj.metric in ("yetirank", "softmax"):
        return _prepare_exact(obj, st, weights)
    if weights is not None:
        raise ValueError("CatBoost's LambdaMart ignores weights, so preset='catboost' takes none")
    lab = st["labels"]
    if obj.metric == "err" and lab.size and lab.max() > 1.0:
        i = int(np.argmax(lab > 1.0))
        raise ValueError(f"preset='catboost' ERR takes stop probabilities in [0, 1] as labels (CatBoost's "
                         f"targets), row {i} is {lab[i]:g}; pass (2**grade - 1)/2**max_grade")
    o = obj.kernel_options
    st["catboost"] = dict(metric=obj.metric, top=obj.k, sigma=obj.sigma, norm=bool(o.get("norm", True)),
                          gain=o.get("gain", "linear"), denominator=o.get("denominator", "log"))
    c = st["catboost"]
    check_catboost_options(c["metric"], c["top"], c["sigma"], c["gain"], c["denominator"])  # fail now, not per round


def _compute_catboost(obj, st, scores):
    if obj.metric in ("yetirank", "softmax"):
        return _compute_exact(obj, st, scores)
    g, h = catboost_lambdamart_gradients(np.asarray(scores, dtype=FLOAT), st["labels"], st["ptr"],
                                         n_threads=obj.n_threads, **st["catboost"])
    st["grad"][:] = g
    st["hess"][:] = h
    return st["grad"], st["hess"]


class Backend(NamedTuple):
    """A gradient back end: its two steps (the options each reads, per metric, are the registry's
    ``preset_options`` column)."""

    prepare: Callable
    compute: Callable


#: preset name -> back end (the metrics each preset offers are the registry's ``presets`` column)
BACKENDS = {
    None: Backend(_prepare_exact, _compute_exact),
    "lightgbm": Backend(_prepare_lightgbm, _compute_lightgbm),
    "xgboost": Backend(_prepare_xgboost, _compute_xgboost),
    "catboost": Backend(_prepare_catboost, _compute_catboost),
}
