"""The engine gradient probe: recover an engine's own per-document gradients and Hessians.

One boosting round with learning rate 1, no regularisation, minimum data/Hessian per leaf 0/1
and one leaf per document (a unique-id feature with as many bins as rows) makes every leaf hold
one document ``d``, whose value is the Newton step ``-g_d / h_d`` and whose Hessian sum
(LightGBM ``leaf_weight``, XGBoost ``cover``) is ``h_d``; hence ``g_d = -value * h_d``.
Some documents end up sharing a leaf (a split with zero gain is not made, and LightGBM estimates
leaf row counts from the Hessians, so near-zero-Hessian rows cannot always be isolated): their
entries come back as NaN and are excluded from :func:`compare_gradients`.
No public API of either engine returns the native objective's gradients, so this is the route.
"""

import contextlib
import os
import sys
import tempfile
import warnings

import numpy as np

from .._core.config import FLOAT
from .._core.optional import require
from ..checks import _finite_1d, check_labels, check_scores
from ..data.groups import check_group_ptr

__all__ = ["probe_lightgbm", "probe_xgboost", "probe_catboost", "compare_gradients"]


def _flush_c_streams():
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library to reach (not a POSIX build)
        pass


@contextlib.contextmanager
def _native_stderr_captured():
    """Capture what native code writes to file descriptor 2 (Python's ``sys.stderr`` included) in a
    temporary file; yields a function returning the captured text."""
    _flush_c_streams()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        text = []

        def said():
            return "".join(text)

        try:
            yield said
        finally:
            _flush_c_streams()  # C's stderr may hold the text in its buffer: into the file, not after it
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text.append(tmp.read().decode(errors="replace"))


def _id_feature(n):
    return np.arange(n, dtype=np.float64).reshape(-1, 1)


def _probe_inputs(labels, group_ptr, margin, margin_name, weight, n_weights):
    """Validated ``(labels, group_ptr, margin, weight)`` for an engine probe: the engines accept NaN
    labels, weights and margins (LightGBM silently) and return NaN or raise with a C++ stack trace."""
    y = check_labels(labels, None)
    n = y.shape[0]
    ptr = check_group_ptr(group_ptr, n)
    if margin is not None:
        margin = _finite_1d(margin, margin_name, n, "contains")
    if weight is not None:
        weight = _finite_1d(weight, "weight", n_weights(ptr), "contains")
        if np.any(weight < 0):
            i = int(np.flatnonzero(weight < 0)[0])
            raise ValueError(f"weight must be non-negative, entry {i} is {weight[i]!r}")
    return y, ptr, margin, weight


def _per_doc(leaf_of, values, weights):
    """Per-document (grad, hess) from leaf ids; NaN for leaves holding several documents."""
    count = np.bincount(leaf_of, minlength=values.shape[0])
    single = count[leaf_of] == 1
    h = np.where(single, weights[leaf_of], np.nan)
    g = np.where(single, -values[leaf_of] * weights[leaf_of], np.nan)
    return g, h


def _scores(scores, old_name, old_value):
    """The probe's ``scores=``, or the engine-specific keyword it replaced (deprecated: one keyword
    for every probe, so that one call probes every engine at the same scores)."""
    if old_value is None:
        return scores
    if scores is not None:
        raise TypeError(f"pass the scores once: scores= (not {old_name}=, its deprecated alias)")
    warnings.warn(f"{old_name}= is deprecated: pass scores= (the same keyword for probe_lightgbm, "
                  "probe_xgboost and probe_catboost)", FutureWarning, stacklevel=3)
    return old_value


def _rounds(rounds):
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    return int(rounds)


def probe_lightgbm(labels, group_ptr, params=None, scores=None, weight=None, *, init_score=None, position=None,
                   rounds=1):
    """Native LightGBM gradients/Hessians at ``scores`` (default 0) for one round.

    Parameters
    ----------
    labels : array (n,)
    group_ptr : array (n_queries + 1,)
    params : dict
        Objective parameters (default ``{"objective": "lambdarank"}``), e.g. ``sigmoid``,
        ``lambdarank_truncation_level``, ``lambdarank_norm``, ``label_gain``.
    scores : array (n,), optional
        The current scores, passed to LightGBM as ``init_score``; the same keyword for every probe.
    weight : array (n,), optional
    init_score : array (n,), optional
        Deprecated alias of ``scores`` (a ``FutureWarning``).
    position : array (n,) of int, optional
        Each row's display position (``Dataset(position=)``): native ``lambdarank`` then fits its position
        biases (``lambdarank_position_bias_regularization`` in ``params``), an objective of ours with
        ``bias=`` reads them.
    rounds : int
        Probe the gradients of this round (default 1): the earlier rounds are trained by the same
        one-leaf-per-document trees (learning rate 1), so a round > 1 shows state the objective carries
        between rounds (the position biases, which are 0 in round 1). ``params["objective"]`` may be one of
        our objectives (a callable): the same probe then recovers our gradients through the engine, for
        :func:`compare_gradients`.

    Returns
    -------
    grad, hess : float64 arrays (n,), NaN where a document shares its leaf.
    """
    lgb = require("lightgbm")
    rounds = _rounds(rounds)

    init_score = _scores(scores, "init_score", init_score)
    y, ptr, init_score, weight = _probe_inputs(labels, group_ptr, init_score, "scores", weight,
                                               lambda ptr: int(ptr[-1]))
    n = y.shape[0]
    if n > 100_000:
        raise ValueError(f"the probe needs one leaf per row; {n} rows is too many (use a few queries)")
    p = {"objective": "lambdarank", "num_leaves": max(n, 2), "min_data_in_leaf": 1,
         "min_sum_hessian_in_leaf": 1e-300, "lambda_l1": 0.0, "lambda_l2": 0.0, "learning_rate": 1.0,
         "max_bin": n + 1, "min_data_in_bin": 1, "feature_pre_filter": False, "min_gain_to_split": 0.0,
         "verbose": -1, "num_threads": 1, "deterministic": True, "force_row_wise": True,
         "boost_from_average": False, "max_depth": -1}
    p.update(params or {})
    if position is not None:
        from ..checks import check_positions

        position = check_positions(position, ptr, name="position")
    ds = lgb.Dataset(_id_feature(n), y, group=np.diff(ptr), init_score=init_score, weight=weight,
                     position=position, params={"max_bin": n + 1, "min_data_in_bin": 1})
    # LightGBM estimates leaf row counts from Hessians; an isolated near-zero-Hessian row can
    # count as 0 rows and trip its ``left_count > 0`` check. Retry with larger leaves then (the
    # documents sharing a leaf come back as NaN). LightGBM prints a "[Fatal]" line to the process's
    # stderr before raising, whatever its verbosity: a handled retry must not look like a crash.
    for min_leaf in (p["min_data_in_leaf"], 2, 4, 8):
        try:
            with _native_stderr_captured() as said:
                bst = lgb.train({**p, "min_data_in_leaf": min_leaf}, ds, num_boost_round=rounds)
            sys.stderr.write(said())
            break
        except lgb.basic.LightGBMError as err:
            if "left_count" not in str(err) and "right_count" not in str(err):
                sys.stderr.write(said())  # not a case we handle: what LightGBM said stays visible
                raise
            ds = lgb.Dataset(_id_feature(n), y, group=np.diff(ptr), init_score=init_score, weight=weight,
                             position=position, params={"max_bin": n + 1, "min_data_in_bin": 1})
    else:
        raise ValueError("LightGBM could not grow a one-document-per-leaf tree on this data")
    tree = bst.dump_model()["tree_info"]
    if len(tree) < rounds:
        raise ValueError(f"LightGBM built {len(tree)} trees of the {rounds} rounds asked for (all gradients zero?)")
    values, weights = {}, {}

    def walk(node):
        if "leaf_index" in node:
            values[node["leaf_index"]] = node["leaf_value"]
            weights[node["leaf_index"]] = node.get("leaf_weight", np.nan)
        else:
            walk(node["left_child"])
            walk(node["right_child"])

    walk(tree[rounds - 1]["tree_structure"])
    m = max(values) + 1
    v = np.array([values.get(i, np.nan) for i in range(m)])
    w = np.array([weights.get(i, np.nan) for i in range(m)])
    leaf_of = bst.predict(_id_feature(n), pred_leaf=True).astype(np.int64).reshape(n, -1)[:, rounds - 1]
    return _per_doc(leaf_of, v, w)


def probe_xgboost(labels, group_ptr, params=None, scores=None, weight=None, *, base_margin=None, position=None,
                  rounds=1):
    """Native XGBoost gradients/Hessians at ``scores`` (default 0) for one round.

    ``params`` gives the objective (default ``{"objective": "rank:ndcg"}``) and its
    ``lambdarank_*`` options. ``scores`` (the same keyword for every probe) are passed to XGBoost as
    ``base_margin``, which it holds in float32; ``base_margin=`` is a deprecated alias of ``scores``
    (a ``FutureWarning``). ``weight`` is per query. Leaf values are float32 in XGBoost, so the
    result is exact to float32 precision. Returns float64 ``grad, hess`` with NaN where a
    document shares its leaf.

    ``position`` (optional): XGBoost's display position is a row's index inside its query
    (``lambdarank_unbiased=True`` in ``params`` debiases by it), so ``position`` must be exactly that (rows
    in display order), else ``ValueError``. ``rounds`` and an objective of ours as ``params["objective"]``
    (passed as ``obj=``) as in :func:`probe_lightgbm`; with ``rounds`` > 1 the factors ``ti+``/``tj-``
    estimated in the earlier rounds act on the probed one.
    """
    xgb = require("xgboost")
    rounds = _rounds(rounds)

    base_margin = _scores(scores, "base_margin", base_margin)
    y, ptr, base_margin, weight = _probe_inputs(labels, group_ptr, base_margin, "scores", weight,
                                                lambda ptr: ptr.shape[0] - 1)  # per query
    n = y.shape[0]
    if n > 100_000:
        raise ValueError(f"the probe needs one leaf per row; {n} rows is too many (use a few queries)")
    p = {"objective": "rank:ndcg", "tree_method": "hist", "grow_policy": "lossguide", "max_depth": 0,
         "max_leaves": max(n, 2), "max_bin": n + 1, "min_child_weight": 0.0, "reg_lambda": 0.0,
         "reg_alpha": 0.0, "gamma": 0.0, "eta": 1.0, "base_score": 0.0, "nthread": 1, "max_delta_step": 0.0}
    p.update(params or {})
    obj = p.pop("objective") if callable(p["objective"]) else None
    if position is not None:
        from ..checks import check_positions, positions_in_query

        position = check_positions(position, ptr, name="position")
        own = positions_in_query(ptr)
        if not np.array_equal(position, own):
            i = int(np.flatnonzero(position != own)[0])
            raise ValueError(f"XGBoost's display position is a row's index inside its query; position at row {i} "
                             f"is {position[i]}, its index is {own[i]}: give the rows of each query in display order")
    d = xgb.DMatrix(_id_feature(n), y, group=np.diff(ptr), base_margin=base_margin, weight=weight)
    bst = xgb.train(p, d, num_boost_round=rounds, obj=obj)
    df = bst.trees_to_dataframe()
    leaves = df[(df["Feature"] == "Leaf") & (df["Tree"] == rounds - 1)]
    m = int(leaves["Node"].max()) + 1
    v = np.full(m, np.nan)
    w = np.full(m, np.nan)
    v[leaves["Node"].to_numpy()] = leaves["Gain"].to_numpy()
    w[leaves["Node"].to_numpy()] = leaves["Cover"].to_numpy()
    leaf_of = bst.predict(xgb.DMatrix(_id_feature(n)), pred_leaf=True).astype(np.int64).reshape(n, -1)[:, rounds - 1]
    return _per_doc(leaf_of, v, w)


def compare_gradients(grad_a, hess_a, grad_b, hess_b, rtol=1e-6, atol=1e-9):
    """Compare two (grad, hess) pairs on the entries both define (non-NaN).

    Returns ``dict(max_abs, max_rel, n_compared, passed)`` (``n_compared``: documents whose grad
    and hess both compared); ``passed`` when every compared entry
    satisfies ``|a - b| <= atol + rtol |b|``.
    """
    a = np.concatenate([np.asarray(grad_a, FLOAT), np.asarray(hess_a, FLOAT)])
    b = np.concatenate([np.asarray(grad_b, FLOAT), np.asarray(hess_b, FLOAT)])
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch: {a.shape} vs {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    d = np.abs(a[ok] - b[ok])
    rel = d / np.maximum(np.abs(b[ok]), 1e-300)
    return {
        "max_abs": float(d.max(initial=0.0)),
        "max_rel": float(np.where(d == 0, 0.0, rel).max(initial=0.0)),
        "n_compared": int(np.sum(ok[: len(ok) // 2] & ok[len(ok) // 2:])),
        "passed": bool(ok.any() and np.all(d <= atol + rtol * np.abs(b[ok]))),
    }


#: CatBoost losses whose derivatives are sums over pairs (``EErrorType::PairwiseError``): their
#: leaves are centred and their ``Gradient`` steps divided by pair weights, see :func:`probe_catboost`
_CATBOOST_PAIRWISE = ("PairLogit", "YetiRank")


def _catboost_fit(cb, X, y, group_id, baseline, loss_function, depth, method, l2, params, check_leaves=False):
    p = {"loss_function": loss_function, "iterations": 1, "depth": depth, "learning_rate": 1.0,
         "l2_leaf_reg": l2, "leaf_estimation_method": method, "leaf_estimation_iterations": 1,
         "random_strength": 0.0, "bootstrap_type": "No", "boost_from_average": False,
         "verbose": False, "thread_count": 1, "allow_writing_files": False}
    if loss_function.split(":")[0] == "YetiRank":
        del p["leaf_estimation_method"]  # CatBoost refuses to be told; it uses Newton
    p.update(params or {})
    model = cb.CatBoost(p)
    model.fit(cb.Pool(X, y, group_id=group_id, baseline=baseline))
    # a split can lose score (l2 > 0, or documents with equal steps): then CatBoost grows fewer levels
    # and documents share a leaf, whose value is theirs no more
    if check_leaves and np.unique(model.calc_leaf_indexes(cb.Pool(X))).size < np.unique(X, axis=0).shape[0]:
        raise ValueError(f"CatBoost put several documents in one leaf ({loss_function}, l2_leaf_reg={l2}); "
                         "their derivatives cannot be read off")
    return np.asarray(model.predict(X, prediction_type="RawFormulaVal"), dtype=FLOAT)


def _centred_leaves(cb, X, y, group_id, baseline, loss_function, depth, method, l2, params, m):
    """The first ``m`` documents' leaf values minus the ballast's (the last rows): the centring undone."""
    v = _catboost_fit(cb, X, y, group_id, baseline, loss_function, depth, method, l2, params, check_leaves=True)
    return v[:m] - v[m]


def probe_catboost(scores, labels, group_ptr, loss_function="LambdaMart:metric=NDCG", params=None,
                   return_pair_weights=False):
    r"""CatBoost's own first and second derivatives of ``loss_function`` at ``scores``, per document.

    CatBoost cannot take a Python ranking objective and exposes no derivatives, so they are read off
    one-iteration models: per query, the documents' indices as ``ceil(log2 n)`` binary features, a
    symmetric tree of that depth (one document per leaf), ``learning_rate=1``, ``random_strength=0``,
    no bootstrap, ``scores`` as the ``baseline`` and one leaf-estimation step.

    * Pointwise and query-wise losses (``QueryRMSE``, ``LambdaMart``...), ``l2_leaf_reg=0``: a
      ``Gradient`` leaf holds ``der1`` and a ``Newton`` leaf ``der1 / (−der2)``.
    * Pairwise losses (``PairLogit``, ``YetiRank``): CatBoost subtracts from every leaf the
      document-weighted mean leaf value (the loss is blind to a shift of a query's scores), and
      divides a ``Gradient`` step by the document's summed pair weights, not by its weight; YetiRank
      allows only ``Newton``. So a two-document ballast query (targets 1 and 0) is added in a leaf
      of its own: its derivatives cancel, so its leaf holds minus the centring constant. Two
      ``Newton`` fits, with ``l2_leaf_reg`` 0 and :math:`\lambda` (CatBoost adds :math:`\lambda`
      times the mean document weight, 1 here, to ``−der2``), give leaves :math:`r_0 = d_1/(-d_2)`
      and :math:`r_\lambda = d_1/(-d_2 + \lambda)`, hence
      :math:`d_1 = \lambda r_0 r_\lambda / (r_0 - r_\lambda)` and :math:`d_2 = -d_1 / r_0`.

    CatBoost stores leaf values in double precision: both are recovered to about 1e-8 relative or
    better (the tests check ``QueryRMSE`` and ``PairLogit`` in closed form).

    Parameters
    ----------
    scores, labels : array-like (n,)
    group_ptr : array-like (n_queries + 1,)
    loss_function : str
        A CatBoost ``loss_function`` string.
    params : dict, optional
        Extra CatBoost parameters (e.g. ``random_seed`` for ``YetiRank``).
    return_pair_weights : bool
        ``PairLogit`` only: also return each document's summed pair weights (what CatBoost divides a
        ``Gradient`` step by), read off a third, ``Gradient``, fit: ``w = der1 / leaf``.

    Returns
    -------
    der1, der2 : float64 arrays (n,)
        CatBoost's convention: for ``QueryRMSE`` and ``PairLogit`` ``der1 = −∂L/∂s`` and
        ``der2 = −∂²L/∂s²``. NaN for ``der2`` where ``der1`` is 0 (a document with no force cannot be
        divided out), and for queries of one document or of one label (CatBoost refuses equal targets).
    pair_weights : float64 array (n,)
        Only with ``return_pair_weights=True``; NaN where ``der1`` is 0.
    """
    cb = require("catboost")

    s = check_scores(scores)
    y = check_labels(labels, s.shape[0])
    n = y.shape[0]
    ptr = check_group_ptr(group_ptr, n)
    name = loss_function.split(":")[0]
    pairwise = name in _CATBOOST_PAIRWISE
    if return_pair_weights and name != "PairLogit":
        raise ValueError(f"return_pair_weights needs loss_function PairLogit (Gradient leaves), got {name!r}")
    der1 = np.full(n, np.nan)
    der2 = np.full(n, np.nan)
    weights = np.full(n, np.nan)
    for a, b in zip(ptr[:-1], ptr[1:]):
        m = b - a
        if m < 2 or np.all(y[a:b] == y[a]):
            continue  # CatBoost refuses a data set whose targets are all equal
        if m > 4096:
            raise ValueError(f"a query of {m} documents is too long for the probe (one leaf per document)")
        depth = int(np.ceil(np.log2(m + 1 if pairwise else m)))
        if depth > 16:
            raise ValueError("CatBoost's symmetric trees are at most 16 deep")
        codes = np.r_[np.arange(m), m, m] if pairwise else np.arange(m)
        X = ((codes[:, None] >> np.arange(depth)) & 1).astype(FLOAT)
        if not pairwise:
            fit = [_catboost_fit(cb, X, y[a:b], np.zeros(m, dtype=np.int64), s[a:b], loss_function, depth,
                                 method, 0.0, params) for method in ("Gradient", "Newton")]
            d1, newton = fit
            der1[a:b] = d1
            with np.errstate(divide="ignore", invalid="ignore"):
                der2[a:b] = np.where(d1 != 0, -d1 / newton, np.nan)
            continue
        yb, sb, gid = np.r_[y[a:b], 1.0, 0.0], np.r_[s[a:b], 0.0, 0.0], np.r_[np.zeros(m), 1, 1].astype(np.int64)
        # small, so that the split scores (which CatBoost also regularises) still isolate every
        # document (r0 − rλ then loses log10(1 + |der2|/λ) of the leaves' 16 digits); a power of two,
        # because CatBoost holds l2_leaf_reg in float32 (1e-3 would be read as 1e-3·(1 + 4.7e-8))
        lam = 2.0 ** -10

        fit = (cb, X, yb, gid, sb, loss_function, depth)
        r0, r1 = _centred_leaves(*fit, "Newton", 0.0, params, m), _centred_leaves(*fit, "Newton", lam, params, m)
        with np.errstate(divide="ignore", invalid="ignore"):
            d1 = np.where(r0 != 0, lam * r0 * r1 / (r0 - r1), 0.0)
            der1[a:b] = d1
            der2[a:b] = np.where(d1 != 0, -d1 / r0, np.nan)
            if return_pair_weights:
                weights[a:b] = np.where(d1 != 0, d1 / _centred_leaves(*fit, "Gradient", 0.0, params, m), np.nan)
    return (der1, der2, weights) if return_pair_weights else (der1, der2)
