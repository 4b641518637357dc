"""Gradient back ends of the adapters, chosen by ``preset``: the exact lambdas or an engine's own.

* ``None``: the package's exact lambdas (:func:`lambda_objectives.lambda_gradients`);
* ``"lightgbm"``: LightGBM's ``lambdarank`` bit for bit (``k`` = ``lambdarank_truncation_level``,
  default 30; options ``label_gain``, ``norm``); kernels in ``_kernels/lightgbm.py``;
* ``"xgboost"``: XGBoost ``rank:ndcg`` / ``rank:map`` / ``rank:pairwise`` (topk, ``k`` default 32;
  options ``normalization``, ``score_normalization``, ``exp_gain``); kernels in ``_kernels/xgboost.py``;
* ``"catboost"``: CatBoost's ``LambdaMart`` (NDCG, MRR, ERR, MAP; ``k`` = ``top``; options ``norm``,
  ``gain`` = ``type``, ``denominator``), reproduced to 1e-13; kernels in ``_kernels/catboost.py``;
  and its ``YetiRank`` with CatBoost's defaults (the same computation as ``preset=None``, whose
  defaults are CatBoost's; reproduced in expectation, not draw for draw: ``_kernels/yetirank.py``).

``"yetirank"`` and the sampled pairs (``pair_method="mean"``) draw afresh every call: the state keeps a
round counter that each call advances (the engines call the objective once per boosting round), so
round ``r`` of a run uses the draws of ``(seed, r, query)`` whatever the thread count (for the sampled
pairs the query is known by its labels, so also whatever the partitioning: ``lambda_gradients``).

Each back end has ``prepare(objective, state, weights)``, run once per data set, and
``compute(objective, state, scores) -> (grad, hess)`` into the state's float32 buffers.
"""

from typing import Callable, NamedTuple

import numpy as np

from .._config import ENGINE_FLOAT, FLOAT
from .._kernels import lightgbm as lgb_kernels
from .._kernels import xgboost as xgb_kernels
from .._kernels.ranking import discount_table, document_gains, gain_table
from .._registry import REGISTRY
from .._kernels import xendcg as xendcg_kernels
from ..catboost_gradients import _check_options as check_catboost_options
from ..catboost_gradients import catboost_lambdamart_gradients
from ..lambdas import lambda_gradients
from ..xendcg import xendcg_gradients
from ..yetirank import yetirank_gradients

_TABLES = {}


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
    if obj.kernel_options.get("pair_method") == "mean":
        st["round"] = 0  # round r of the run draws with iteration=r
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
    g64, h64 = st["g64"], st["h64"]
    if obj.metric == "xendcg":
        g64[:], h64[:] = xendcg_gradients(s, st["labels"], st["ptr"], gammas=st["rng"].random(st["n"]),
                                          n_threads=obj.n_threads)
    elif obj.metric == "yetirank":
        yetirank_gradients(s, st["labels"], st["ptr"], iteration=st["round"], out=(g64, h64), n_threads=obj.n_threads,
                           **st["yetirank"])
        st["round"] += 1
    elif "round" in st:  # sampled pairs: fresh draws every round
        lambda_gradients(s, st["labels"], st["ptr"], obj.metric, obj.k, obj.sigma, iteration=st["round"],
                         out=(g64, h64), n_threads=obj.n_threads, **_exact_options(obj, st))
        st["round"] += 1
    else:
        lambda_gradients(s, st["labels"], st["ptr"], obj.metric, obj.k, obj.sigma,
                         out=(g64, h64), n_threads=obj.n_threads, **_exact_options(obj, st))
    if st["doc_w"] is not None:
        np.multiply(g64, st["doc_w"], out=g64)
        np.multiply(h64, st["doc_w"], out=h64)
    st["grad"][:] = g64
    st["hess"][:] = h64
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
                   else np.ascontiguousarray(weights, dtype=ENGINE_FLOAT))
    st["use_w"] = weights is not None


def _compute_lightgbm(obj, st, scores):
    if obj.metric == "xendcg":
        xendcg_kernels.lgb_xendcg_driver(np.ascontiguousarray(scores, dtype=FLOAT), st["labels"], st["ptr"],
                                         st["states"], st["grad"], st["hess"])
        return st["grad"], st["hess"]
    table, tmin, tmax, factor = st["table"]
    s = np.ascontiguousarray(scores, dtype=FLOAT)
    lgb_kernels.lgb_lambdarank(s, st["labels"], st["ptr"], st["label_gain"], st["discount"], st["inv"], st["kk"],
                               obj.sigma, st["norm"], table, tmin, tmax, factor, st["doc_w"], st["use_w"],
                               st["grad"], st["hess"])
    return st["grad"], st["hess"]


def _prepare_lgb_xendcg(obj, st, weights):
    """LightGBM's ``rank_xendcg``: one generator per query, ``Random(objective_seed + q)``, that
    advances across rounds (so the objective must see every round once, as the engine does)."""
    if weights is not None:
        raise ValueError("LightGBM's rank_xendcg ignores weights, so preset='lightgbm' with 'xendcg' takes none; "
                         "use preset=None for weighted XE-NDCG")
    seed = obj.kernel_options.get("objective_seed", 5)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"objective_seed must be an integer, got {seed!r}")
    nq = st["ptr"].shape[0] - 1
    st["states"] = ((int(seed) + np.arange(nq, dtype=np.int64)) & 0xFFFFFFFF).astype(np.uint32)


# -- XGBoost rank:* ----------------------------------------------------------------------------------
def _prepare_xgboost(obj, st, weights):
    lab = st["labels"]
    n_q = st["ptr"].shape[0] - 1
    exp_gain = bool(obj.kernel_options.get("exp_gain", True))
    if obj.metric == "map" and np.any((lab != 0) & (lab != 1)):
        i = int(np.flatnonzero((lab != 0) & (lab != 1))[0])
        raise ValueError(f"preset='xgboost' metric='map' needs binary labels, row {i} is {lab[i]!r}")
    if obj.metric == "ndcg" and exp_gain and (np.any(lab != np.floor(lab)) or lab.max(initial=0) > 31):
        raise ValueError("rank:ndcg with exp_gain needs integer labels <= 31")
    k = 32 if obj.k is None else obj.k
    y32 = lab.astype(np.float32)
    # the engine's gains are of its float32 labels
    gains = document_gains(y32.astype(FLOAT), "exp" if exp_gain else "linear")
    disc = _discount(st["ptr"])
    inv = np.empty(n_q, FLOAT)
    if obj.metric == "ndcg":
        xgb_kernels.xgb_inverse_idcg(gains, st["ptr"], k, disc, inv)
    # validated per query (checks.check_training_data)
    gw = np.ones(n_q, np.float32) if weights is None else np.ascontiguousarray(weights, dtype=np.float32)
    st.update(labels32=y32, gains=gains, discount=disc, kk=k, inv=inv, exp_gain=exp_gain, group_w=gw,
              w_norm=np.float32(float(n_q) / float(np.sum(gw.astype(np.float64)))),
              n_rel=np.zeros(st["n"], FLOAT), acc=np.zeros(st["n"], FLOAT),
              metric_code=REGISTRY[obj.metric].code, preds32=np.zeros(st["n"], np.float32))


def _compute_xgboost(obj, st, scores):
    p = st["preds32"]
    p[:] = scores  # the engine ranks by float32 margins
    o = obj.kernel_options
    xgb_kernels.xgb_lambdarank(p, st["labels32"], st["gains"], st["discount"], st["ptr"], st["metric_code"],
                               st["inv"], st["kk"], bool(o.get("score_normalization", True)),
                               bool(o.get("normalization", True)), st["group_w"], st["w_norm"],
                               st["n_rel"], st["acc"], st["grad"], st["hess"])
    return st["grad"], st["hess"]


# -- CatBoost LambdaMart -------------------------------------------------------------------------
def _prepare_catboost(obj, st, weights):
    """CatBoost's ``LambdaMart`` derivatives (``_kernels/catboost.py``, reproduced to 1e-13): the
    labels are CatBoost's targets (ERR: stop probabilities in [0, 1]); it ignores weights.
    ``YetiRank`` is the exact back end's computation (its defaults are CatBoost's)."""
    if obj.metric == "yetirank":
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
    if obj.metric == "yetirank":
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
