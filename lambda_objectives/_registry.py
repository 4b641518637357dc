"""The metric registry: one row per metric / lambda objective, read by every layer.

A row holds the metric's single integer ``code`` (shared by the metric, pair-loop and
engine-parity kernels), its label rule, which families it has (metric value, lambdas, engine
presets), the engines' names for it, and how its per-document kernel inputs are prepared from
validated labels. ``metrics``, ``lambdas``, ``combine``, the adapters, the ``comparisons`` CLI
choices and the tests' parametrisation all read this table, so a metric is added here once.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from ._core.config import FLOAT
from ._kernels.ranking import document_gains
from .checks import check_k

# One code per metric for every kernel family, defined beside the kernels (the lowest layer)
from ._kernels.codes import (DCG, ERR, GAIN_DIFF, LABEL_DIFF, LISTMLE, MAP, MRR, NDCG, NDCG_LOSS2,  # noqa: F401
                             NDCG_LOSS2_TOP, NDCG_LOSS2PP, NDCG_LOSS2PP_TOP, PLRANK, RANKNET, SOFTMAX, XENDCG,
                             YETIRANK)

#: the LambdaLoss codes whose pair loop forms every pair (the published LambdaLoss@K), not only
#: pairs with a document in the top k
ALL_PAIRS = (NDCG_LOSS2, NDCG_LOSS2PP)
#: the pair-loop codes whose |ΔZ| is scaled by ``1/IDCG@k`` (the pair loop's ``_query_tables``)
NDCG_FAMILY = (NDCG, NDCG_LOSS2, NDCG_LOSS2PP, NDCG_LOSS2_TOP, NDCG_LOSS2PP_TOP)

#: ``integer_labels`` value of the gain-based rows: whole grades unless ``gain='linear'``
UNLESS_LINEAR = "unless linear gain"


def _gain_inputs(labels, gain="exp", label_gain=None, **_):
    gains = document_gains(labels, gain, label_gain)
    # the sum over all documents bounds every query's IDCG: finite here means finite metrics
    if not np.isfinite(gains.sum()):
        i = int(np.argmax(~np.isfinite(gains))) if not np.all(np.isfinite(gains)) else int(np.argmax(gains))
        raise ValueError(
            f"gains overflow float64 (label {labels[i]:g} at row {i}: 2**label - 1 is too large for "
            "exponential gain); use gain='linear' or a label_gain table for labels this large")
    return gains


def _err_inputs(labels, max_label=None, **_):
    if max_label is None:
        max_label = float(labels.max()) if labels.size else 0.0
    elif not np.isfinite(max_label) or max_label < 0:
        raise ValueError(f"max_label must be finite and non-negative, got {max_label!r}")
    if labels.size and labels.max() > max_label:
        i = int(np.argmax(labels > max_label))
        raise ValueError(f"label {labels[i]:g} at row {i} exceeds max_label={max_label:g}")
    if max_label >= 1024:  # 2**1024 overflows float64
        raise ValueError(f"ERR's grade scale 2**max_label overflows float64 (max_label={max_label:g}); "
                         "ERR needs grades below 1024")
    return (np.exp2(labels) - 1.0) / np.exp2(max_label)


def _binary_inputs(labels, threshold=0.0, **_):
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return (labels > threshold).astype(FLOAT)


def _no_inputs(labels, **_):
    return np.zeros(labels.shape[0], dtype=FLOAT)


@dataclass(frozen=True)
class Entry:
    """One metric or objective. See the module docstring; ``docs/development.md`` has the recipe."""

    name: str
    code: int
    integer_labels: object      # True: whole grades (ERR's 2**l scale); UNLESS_LINEAR; False: any label
    metric: bool                # has a value: metric_values, eval metrics, combine
    lambdas: bool               # has a lambda gradient: lambda_gradients, the exact adapters
    inputs: object              # validated labels + options -> per-document kernel values
    options: tuple = ()         # the keyword options ``inputs`` reads
    presets: dict = field(default_factory=dict)   # engine -> its native objective reproduced
    engine_eval: dict = field(default_factory=dict)  # engine -> its native eval-metric name
    aliases: tuple = ()
    summary: str = ""
    listwise: bool = False      # a listwise objective (its own kernel, not the pair loop)
    sampled: bool = False       # pairs drawn afresh every round (YetiRank: its own kernel, not the pair loop)
    objective_options: tuple = ()  # what the exact objective takes beyond PAIR_OPTIONS + ``options``
    value_options: tuple = ()   # what the metric's value reads beyond ``options`` (NDCG's ideal_zero)
    preset_options: dict = field(default_factory=dict)  # engine -> every option its preset reads (k, sigma too)

    def __post_init__(self):
        # a preset without its option list would accept anything: refuse the row instead
        if set(self.presets) != set(self.preset_options):
            raise ValueError(f"registry row {self.name!r}: presets {sorted(self.presets)} and preset_options "
                             f"{sorted(self.preset_options)} must name the same engines")


#: what every pair-loop objective of the exact back end takes besides its metric's ``options``: the
#: cut-off, sigma, LightGBM-style per-query normalisation and the sampled pairs (``pair_method="mean"``
#: with ``num_pair_per_sample`` partners per document and the draws' ``seed``)
PAIR_OPTIONS = ("k", "sigma", "normalize", "pair_method", "num_pair_per_sample", "seed")
#: what a user's @njit pair weight takes (its gains come from ``gain`` / ``label_gain``; every pair, no sampling)
WEIGHT_FUNCTION_OPTIONS = ("k", "sigma", "normalize", "gain", "label_gain")
# XGBoost's rank:* options of every metric; sigma is fixed at 1 there
_XGB_OPTIONS = ("normalization", "score_normalization", "pair_method", "num_pair_per_sample")
# CatBoost's LambdaMart reads top (and type, denominator) for NDCG only
_CATBOOST_NO_TOP = ("sigma", "norm")
_YETIRANK_OPTIONS = ("permutations", "decay", "mode", "num_neighbors", "top", "noise", "noise_power", "seed")
# PL-Rank-3 (its own kernel): the cut-off K of E[DCG@K], rankings per query, seed, the Hessian's handling
_PLRANK_OPTIONS = ("k", "n_samples", "seed", "hessian")

_ROWS = (
    Entry("ndcg", NDCG, UNLESS_LINEAR, True, True, _gain_inputs, ("gain", "label_gain"),
          presets={"lightgbm": "lambdarank", "xgboost": "rank:ndcg", "catboost": "LambdaMart:metric=NDCG"},
          preset_options={"lightgbm": ("k", "sigma", "label_gain", "norm"),
                          "xgboost": ("k",) + _XGB_OPTIONS + ("exp_gain",),
                          "catboost": ("k", "sigma", "norm", "gain", "denominator")},
          engine_eval={"lightgbm": "ndcg", "xgboost": "ndcg"}, value_options=("ideal_zero",),
          summary="normalised discounted cumulative gain"),
    Entry("dcg", DCG, UNLESS_LINEAR, True, False, _gain_inputs, ("gain", "label_gain"),
          summary="discounted cumulative gain"),
    Entry("err", ERR, True, True, True, _err_inputs, ("max_label",), presets={"catboost": "LambdaMart:metric=ERR"},
          preset_options={"catboost": _CATBOOST_NO_TOP}, summary="expected reciprocal rank"),
    Entry("map", MAP, False, True, True, _binary_inputs, ("threshold",),
          presets={"xgboost": "rank:map", "catboost": "LambdaMart:metric=MAP"},
          preset_options={"xgboost": ("k",) + _XGB_OPTIONS, "catboost": _CATBOOST_NO_TOP},
          engine_eval={"lightgbm": "map", "xgboost": "map"},
          summary="mean average precision (binary relevance: label > threshold)"),
    Entry("mrr", MRR, False, True, True, _binary_inputs, ("threshold",), presets={"catboost": "LambdaMart:metric=MRR"},
          preset_options={"catboost": _CATBOOST_NO_TOP},
          summary="mean reciprocal rank (binary relevance: label > threshold)"),
    Entry("ranknet", RANKNET, False, False, True, _no_inputs,
          presets={"xgboost": "rank:pairwise"}, preset_options={"xgboost": ("k",) + _XGB_OPTIONS},
          aliases=("pairwise",),
          summary="RankNet: every differently labelled pair weighted 1"),
    Entry("ndcg_loss2", NDCG_LOSS2, UNLESS_LINEAR, False, True, _gain_inputs, ("gain", "label_gain"),
          summary="LambdaLoss NDCG-Loss2 (Wang et al. 2018); with k, LambdaLoss@K as published (Jagerman et "
                  "al. 2022): every pair, the @K multiplier beyond k"),
    Entry("ndcg_loss2pp", NDCG_LOSS2PP, UNLESS_LINEAR, False, True, _gain_inputs, ("gain", "label_gain"),
          objective_options=("mu",),
          summary="LambdaLoss NDCG-Loss2++: the LambdaRank weight plus mu times NDCG-Loss2's; every pair"),
    Entry("ndcg_loss2_top", NDCG_LOSS2_TOP, UNLESS_LINEAR, False, True, _gain_inputs, ("gain", "label_gain"),
          summary="ours, not the paper's: NDCG-Loss2@k on pairs with a document in the top k only"),
    Entry("ndcg_loss2pp_top", NDCG_LOSS2PP_TOP, UNLESS_LINEAR, False, True, _gain_inputs, ("gain", "label_gain"),
          objective_options=("mu",),
          summary="ours, not the paper's: NDCG-Loss2++@k on pairs with a document in the top k only"),
    Entry("label_diff", LABEL_DIFF, False, False, True, _no_inputs,
          summary="pair weight |y_i - y_j|"),
    Entry("gain_diff", GAIN_DIFF, UNLESS_LINEAR, False, True, _gain_inputs, ("gain", "label_gain"),
          summary="pair weight |G_i - G_j|"),
    Entry("xendcg", XENDCG, False, False, False, _no_inputs, presets={"lightgbm": "rank_xendcg"},
          objective_options=("seed",), preset_options={"lightgbm": ("objective_seed",)},
          summary="XE-NDCG, listwise softmax cross-entropy (Bruch et al. 2021)", listwise=True),
    Entry("yetirank", YETIRANK, False, False, False, _no_inputs, presets={"catboost": "YetiRank"},
          objective_options=_YETIRANK_OPTIONS, preset_options={"catboost": _YETIRANK_OPTIONS},
          summary="YetiRank (Gulin et al. 2011; CatBoost's YetiRank): neighbour pairs of noisy rankings", sampled=True),
    Entry("softmax", SOFTMAX, False, False, False, _no_inputs, presets={"catboost": "QuerySoftMax"},
          objective_options=("beta", "lambda_"), preset_options={"catboost": ("beta", "lambda_")},
          summary="softmax cross-entropy per query (CatBoost's QuerySoftMax; Qin et al. 2021)", listwise=True),
    Entry("listmle", LISTMLE, False, False, False, _no_inputs, objective_options=("ties",),
          summary="ListMLE (Xia et al. 2008): Plackett-Luce likelihood of the label order", listwise=True),
    Entry("plrank", PLRANK, False, False, False, _no_inputs, objective_options=_PLRANK_OPTIONS,
          summary="PL-Rank-3 with its Hessian (Kang et al. 2024): sampled derivatives of a Plackett-Luce "
                  "policy's expected DCG@k", sampled=True),
)

#: name (and alias) -> row
REGISTRY = {}
for _row in _ROWS:
    for _name in (_row.name,) + _row.aliases:
        REGISTRY[_name] = _row


def names(kind=None, preset=None):
    """Canonical names of the rows with a ``kind`` or engine ``preset``.

    ``kind``: ``"metric"`` (has a value), ``"lambdas"`` (a pair objective of the pair loop),
    ``"objective"`` (anything an adapter can train with: pair, listwise or sampled pairs).
    """
    out = []
    for row in _ROWS:
        if kind == "objective":
            if not (row.lambdas or row.listwise or row.sampled):
                continue
        elif kind is not None and not getattr(row, kind):
            continue
        if preset is not None and preset not in row.presets:
            continue
        out.append(row.name)
    return tuple(out)


_NAME = re.compile(r"^\s*([a-z_0-9]+?)\s*(?:@\s*(\d+))?\s*$")


def parse_metric(name, k=None, kind=None, preset=None):
    """Split ``"ndcg@10"`` into ``("ndcg", 10)`` (case-insensitive; aliases give the canonical name).

    ``k`` given as well must agree with the ``@k`` suffix. ``kind`` / ``preset`` restrict the
    accepted names as in :func:`names`. Raises ``ValueError`` for an unknown or malformed name.
    """
    if isinstance(name, Entry):
        name = name.name
    m = _NAME.match(str(name).lower())
    allowed = names(kind, preset)
    row = REGISTRY.get(m.group(1)) if m else None
    if row is None or row.name not in allowed:
        what = {"lambdas": " for a lambda objective", "objective": " for an objective"}.get(kind, "")
        where = f" with preset={preset!r}" if preset is not None else ""
        raise ValueError(f"unknown metric {name!r}{what}{where}; choose one of {allowed}, optionally with @k")
    k = check_k(k)
    if m.group(2) is not None:
        ks = check_k(int(m.group(2)))
        if k is not None and k != ks:
            raise ValueError(f"metric {name!r} says k={ks} but k={k} was passed")
        k = ks
    return row.name, k


def objective_options(name, preset=None):
    """Every keyword option objective ``name`` reads under ``preset`` (``k`` and ``sigma`` included).

    ``preset=None`` (the exact back end): a pair objective takes :data:`PAIR_OPTIONS`, its metric's
    ``options`` and its ``objective_options`` (``mu``); a listwise or sampled one only its
    ``objective_options``. An engine preset takes its row's ``preset_options[preset]``. ``name`` may be
    a user's pair-weight function (:data:`WEIGHT_FUNCTION_OPTIONS`). This is the one table the
    adapters and ``lambda_gradients`` check what a caller passed against.
    """
    if not isinstance(name, str):
        return frozenset(WEIGHT_FUNCTION_OPTIONS)
    row = REGISTRY[name]
    if preset is not None:
        return frozenset(row.preset_options[preset])
    if row.listwise or row.sampled:
        return frozenset(row.objective_options)
    return frozenset(PAIR_OPTIONS + row.options + row.objective_options)


#: what every metric value takes: a named convention speaks for all of them (ERR, MAP and MRR are the same
#: in every convention)
METRIC_OPTIONS = ("convention",)


def metric_options(names):
    """Every keyword option of :func:`lambda_objectives.metric_values` that at least one of the metrics
    ``names`` (canonical names) reads: each row's ``options`` and ``value_options``, and
    :data:`METRIC_OPTIONS`. The table the metric functions check what a caller passed against."""
    out = set(METRIC_OPTIONS)
    for name in names:
        out.update(REGISTRY[name].options + REGISTRY[name].value_options)
    return frozenset(out)


def metric_option_error(names, bad):
    """The ``ValueError`` message for options ``bad`` that none of the metrics ``names`` reads."""
    allowed = sorted(metric_options(names))
    if len(names) == 1:
        return (f"unknown options for metric={names[0]!r}: {sorted(bad)} (this metric does not read them); "
                f"it takes {allowed}")
    return (f"unknown options for metrics={list(names)}: {sorted(bad)} (none of these metrics reads them); "
            f"they take {allowed}")


#: why an option is refused, for the error message: (preset, option) or (preset, option, kind of row)
OPTION_NOTES = {
    ("xgboost", "sigma"): "XGBoost's native objectives fix sigma at 1; preset='xgboost' needs sigma=1.0",
    (None, "mu"): "mu is NDCG-Loss2++'s parameter: this metric takes no mu",
    (None, "seed"): "seed is XE-NDCG's, YetiRank's, PL-Rank's and the sampled pairs' (pair_method='mean')",
    (None, "objective_seed"): "objective_seed is preset='lightgbm''s (LightGBM's rank_xendcg); the exact "
                              "XE-NDCG takes seed",
    ("lightgbm", "seed"): "preset='lightgbm' draws as LightGBM's rank_xendcg does: pass objective_seed",
    ("listwise",): "this objective is listwise: no cut-off, no sigma and none of the pair options",
    (None, "beta"): "beta is the softmax objective's (CatBoost's QuerySoftMax)",
    (None, "lambda_"): "lambda_ is the softmax objective's (CatBoost's QuerySoftMax lambda)",
    (None, "ties"): "ties is ListMLE's",
    ("sampled",): "YetiRank samples its pairs: no cutoff and no sigma (CatBoost's PairLogit has none)",
    ("plrank",): "PL-Rank samples rankings from a Plackett-Luce policy: k is its cut-off, there is no sigma",
}


def option_error(name, bad, preset=None):
    """The ``ValueError`` message for options ``bad`` that objective ``name`` under ``preset`` does not read."""
    allowed = sorted(objective_options(name, preset))
    label = name if isinstance(name, str) else getattr(name, "__name__", "a pair-weight function")
    notes = [OPTION_NOTES[(preset, o)] for o in bad if (preset, o) in OPTION_NOTES]
    row = REGISTRY.get(label) if isinstance(name, str) else None
    if row is not None and (row.listwise or row.sampled) and ({"k", "sigma"} & set(bad) or preset is None):
        notes.insert(0, OPTION_NOTES.get((row.name,)) or OPTION_NOTES[("listwise",) if row.listwise else ("sampled",)])
    return (f"unknown options for metric={label!r}, preset={preset!r}: {sorted(bad)} (this objective does not "
            f"read them); it takes {allowed}" + "".join(f". {n}" for n in notes))


def needs_integer_labels(name, gain="exp", label_gain=None):
    """Whether metric ``name`` needs whole-number grades with these gain options.

    ERR's ``2**l / 2**max_label`` scale needs grades; a ``label_gain`` table is indexed by grade;
    exponential gain is defined for grades; linear gain takes real-valued labels.
    """
    rule = REGISTRY[name].integer_labels
    if rule == UNLESS_LINEAR:
        return label_gain is not None or gain != "linear"
    return bool(rule)


def is_weight_function(obj):
    """Whether ``obj`` is a user's pair-weight function (an ``@njit``-compiled numba dispatcher).

    Raises ``ValueError`` for a plain Python callable: the pair loop runs in numba and can only
    call compiled functions.
    """
    if isinstance(obj, str):
        return False
    import numba
    from numba.core.dispatcher import Dispatcher

    if isinstance(obj, Dispatcher) or (numba.config.DISABLE_JIT and callable(obj)):  # njit is a no-op then
        return True
    if callable(obj):
        raise ValueError(f"a pair-weight function must be compiled with numba's @njit (got {obj!r}); decorate it "
                         "with @numba.njit and give it the signature (a, b, label_a, label_b, gain_a, gain_b, k)")
    return False


def kernel_inputs(name, labels, **options):
    """Per-document values the kernels of metric ``name`` read, from validated float64 labels."""
    row = REGISTRY[name]
    return row.inputs(labels, **{key: v for key, v in options.items() if key in row.options})


def check_options(metric, given, preset=None, *, value=False):
    """Raise ``ValueError`` when ``given`` (names of the options a caller passed) holds one that objective
    ``metric`` under ``preset`` does not read (the registry's ``objective_options`` table), naming it and
    the accepted ones: an option an objective would ignore is an error, never a silent no-op.

    ``value=True``: the same check for metric values (``metric_values`` and the functions sharing its
    path): ``metric`` is one canonical metric name or a sequence of them, and an option is refused when
    none of them reads it (the registry's ``metric_options``)."""
    if value:
        names = [metric] if isinstance(metric, str) else list(dict.fromkeys(metric))
        bad = set(given) - metric_options(names)
        if bad:
            raise ValueError(metric_option_error(names, sorted(bad)))
        return
    bad = set(given) - objective_options(metric, preset)
    if bad:
        raise ValueError(option_error(metric, sorted(bad), preset))
