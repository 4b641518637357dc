"""``python -m comparisons quality --data DIR [DIR ...]``: which objective trains the best ranker, per engine.

For every data set (LETOR-layout folders, and ``--synthetic N`` for the built-in MSLR-shaped set split
into five LETOR folds), every fold, every engine (LightGBM, XGBoost; CatBoost's natives when it is
installed), every objective (the engine's natives and ours) and every training seed, one task tunes the
engine's usual regularisers (:data:`SPACE`: leaves or depth, learning rate, minimum leaf size, L2, row
sampling by query where the engine has it, feature sampling) over the same ``--budget`` configurations
for every objective of that engine, with early stopping on the fold's validation NDCG@10, keeps the
configuration with the best validation NDCG@10, and scores it on the fold's test file per query:
NDCG@1/3/5/10, ERR@10 and MAP@10 in the named convention.

Statistics (``summary.json``, ``quality.md``): each test query's values are averaged over the seeds,
then the mean over folds of the per-query means, a 95 % t interval over the pooled test queries, and
for each of our objectives a paired sign-flip randomisation test against the engine's default native
objective over the pooled test queries. NDCG@10 is the pre-declared primary endpoint unless ``--primary``
names another metric (ERR@10, MAP@10, MRR@10, ...): Holm's correction runs over the primary's comparisons
of the table; the secondary metrics form a second Holm family. Model selection stays on validation
NDCG@10 whatever the primary, so the stored tasks of one run answer every primary. The header states,
per data set, the primary's difference detectable at 80 % power (from the measured sd of the paired
per-query differences) and the share of tasks whose chosen iteration stayed below the round
cap. Each task runs in a process of its own; finished tasks are stored and reused.
"""

import csv
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._cli import convention_arg, csv_arg, dataset_name, folds_arg, grid_args, positive_int
from ._machine import log, machine_record
from ._data import DATA_HELP, load_fold, resolve_data
from ._runner import run_grid
from ._stats import holm, holm_families, mde, power_by_data, sign_flip_pvalue, t_interval  # noqa: F401 (holm, mde: tests read them here)
from .runstore import RunStore

METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "err@10", "map@10", "mrr@10")
#: (engine, name) -> how to train it: ("native", params) or ("ours", objective, options)
SYSTEMS = {
    ("lightgbm", "native lambdarank"): ("native", {"objective": "lambdarank"}),
    ("lightgbm", "native lambdarank (truncation 10)"): ("native", {"objective": "lambdarank",
                                                                  "lambdarank_truncation_level": 10}),
    ("lightgbm", "native lambdarank (no norm)"): ("native", {"objective": "lambdarank", "lambdarank_norm": False}),
    ("lightgbm", "native rank_xendcg"): ("native", {"objective": "rank_xendcg"}),
    ("lightgbm", "ours ndcg"): ("ours", "ndcg", {}),
    ("lightgbm", "ours ndcg (lambdarank norm)"): ("ours", "ndcg", {"normalize": "lambdarank"}),
    ("lightgbm", "ours ndcg@10"): ("ours", "ndcg@10", {}),
    ("lightgbm", "ours ndcg@10 (lambdarank norm)"): ("ours", "ndcg@10", {"normalize": "lambdarank"}),
    ("lightgbm", "ours err@10"): ("ours", "err@10", {}),
    ("lightgbm", "ours map@10"): ("ours", "map@10", {}),
    ("lightgbm", "ours mrr@10"): ("ours", "mrr@10", {}),
    ("lightgbm", "ours ndcg_loss2@10"): ("ours", "ndcg_loss2@10", {}),
    ("lightgbm", "ours ndcg_loss2pp@10"): ("ours", "ndcg_loss2pp@10", {}),
    ("lightgbm", "ours ndcg_loss2pp_top@10"): ("ours", "ndcg_loss2pp_top@10", {}),
    ("lightgbm", "ours xendcg"): ("ours", "xendcg", {}),
    ("lightgbm", "ours yetirank"): ("ours", "yetirank", {}),
    ("lightgbm", "ours plrank"): ("ours", "plrank@10", {}),  # PL-Rank-3 + Hessian, E[DCG@10], 200 rankings
    ("lightgbm", "ours yetirank mrr"): ("ours", "yetirank", {"mode": "mrr"}),  # YetiLoss (issue #33)
    ("lightgbm", "ours yetirank map"): ("ours", "yetirank", {"mode": "map"}),
    ("xgboost", "native rank:ndcg"): ("native", {"objective": "rank:ndcg"}),
    ("xgboost", "native rank:pairwise"): ("native", {"objective": "rank:pairwise"}),
    ("xgboost", "ours ndcg"): ("ours", "ndcg", {}),
    ("xgboost", "ours ndcg (lambdarank norm)"): ("ours", "ndcg", {"normalize": "lambdarank"}),
    ("xgboost", "ours ndcg@10"): ("ours", "ndcg@10", {}),
    ("xgboost", "ours ndcg@10 (lambdarank norm)"): ("ours", "ndcg@10", {"normalize": "lambdarank"}),
    ("xgboost", "ours err@10"): ("ours", "err@10", {}),
    ("xgboost", "ours map@10"): ("ours", "map@10", {}),
    ("xgboost", "ours mrr@10"): ("ours", "mrr@10", {}),
    ("xgboost", "ours ndcg_loss2@10"): ("ours", "ndcg_loss2@10", {}),
    ("xgboost", "ours ndcg_loss2pp@10"): ("ours", "ndcg_loss2pp@10", {}),
    ("xgboost", "ours ndcg_loss2pp_top@10"): ("ours", "ndcg_loss2pp_top@10", {}),
    ("xgboost", "ours xendcg"): ("ours", "xendcg", {}),
    ("xgboost", "ours yetirank"): ("ours", "yetirank", {}),
    ("xgboost", "ours plrank"): ("ours", "plrank@10", {}),
    ("xgboost", "ours yetirank mrr"): ("ours", "yetirank", {"mode": "mrr"}),  # YetiLoss (issue #33)
    ("xgboost", "ours yetirank map"): ("ours", "yetirank", {"mode": "map"}),
    ("catboost", "native LambdaMart NDCG"): ("native", {"loss_function": "LambdaMart:metric=NDCG"}),
    ("catboost", "native YetiRank"): ("native", {"loss_function": "YetiRank"}),
    ("catboost", "native YetiRank MRR"): ("native", {"loss_function": "YetiRank:mode=MRR"}),
    ("catboost", "native YetiRank MAP"): ("native", {"loss_function": "YetiRank:mode=MAP"}),
    # the CatBoost attribution (docs/reproducing/quality.md): its gradient in the other engines, LightGBM trained
    # the way CatBoost trains, and CatBoost's own defaults switched on one at a time (TRAINING below)
    ("lightgbm", "ours catboost-lambdamart"): ("ours", "ndcg", {"preset": "catboost"}),
    ("lightgbm", "ours catboost-lambdamart (catboost-like training)"): ("ours", "ndcg", {"preset": "catboost"}),
    ("lightgbm", "native lambdarank (catboost-like training)"): ("native", {"objective": "lambdarank"}),
    ("xgboost", "ours catboost-lambdamart"): ("ours", "ndcg", {"preset": "catboost"}),
    ("catboost", "native LambdaMart NDCG (depthwise trees)"): ("native", {"loss_function": "LambdaMart:metric=NDCG",
                                                                      "grow_policy": "Depthwise"}),
    ("catboost", "native LambdaMart NDCG (random_strength 0)"): ("native", {"loss_function": "LambdaMart:metric=NDCG",
                                                                         "random_strength": 0.0}),
    ("catboost", "native LambdaMart NDCG (MVS sampling)"): ("native", {"loss_function": "LambdaMart:metric=NDCG"}),
}
# issue #33: the listwise softmax cross-entropy (ours, and CatBoost's own QuerySoftMax) and ListMLE
SYSTEMS.update({
    ("lightgbm", "ours softmax"): ("ours", "softmax", {}),
    ("lightgbm", "ours listmle"): ("ours", "listmle", {}),
    ("xgboost", "ours softmax"): ("ours", "softmax", {}),
    ("xgboost", "ours listmle"): ("ours", "listmle", {}),
    ("catboost", "native QuerySoftMax"): ("native", {"loss_function": "QuerySoftMax"}),
})
#: training settings that replace the searched configuration's (CatBoost-like training for LightGBM:
#: depth-6 trees, row sampling 0.8 by query, feature sampling 0.8, no L2; CatBoost's default MVS sampling)
TRAINING = {
    ("lightgbm", "ours catboost-lambdamart (catboost-like training)"): {
        "max_depth": 6, "num_leaves": 63, "bagging_fraction": 0.8, "feature_fraction": 0.8, "lambda_l2": 0.0},
    ("lightgbm", "native lambdarank (catboost-like training)"): {
        "max_depth": 6, "num_leaves": 63, "bagging_fraction": 0.8, "feature_fraction": 0.8, "lambda_l2": 0.0},
    ("catboost", "native LambdaMart NDCG (MVS sampling)"): {"subsample": "MVS"},
}
#: the systems of the attribution run (``--objectives`` with these names)
ATTRIBUTION = ("native lambdarank", "ours catboost-lambdamart", "ours catboost-lambdamart (catboost-like training)",
               "native lambdarank (catboost-like training)", "native rank:ndcg", "native LambdaMart NDCG",
               "native LambdaMart NDCG (depthwise trees)", "native LambdaMart NDCG (random_strength 0)",
               "native LambdaMart NDCG (MVS sampling)")
#: the baseline of each engine's paired tests
BASELINE = {"lightgbm": "native lambdarank", "xgboost": "native rank:ndcg", "catboost": "native LambdaMart NDCG"}
OBJECTIVE_NAMES = sorted({name for _, name in SYSTEMS})
ENGINES = ("lightgbm", "xgboost", "catboost")
#: What each engine's users tune, under the engine's own parameter names. The default run searches
#: ``--budget`` configurations drawn once (fixed seed) from the product of an engine's lists: every
#: objective of an engine gets the same configurations, so no objective gets a larger search.
#: Row sampling is by query where the engine has it (LightGBM ``bagging_by_query``, CatBoost
#: ``sampling_unit="Group"``); XGBoost samples rows only one by one, which splits queries, so it is
#: left out there. XGBoost's ``reg_lambda`` is searched like the other engines' L2 (its default 1 keeps
#: a different share of each objective's Newton step, because lambda scales differ).
SPACE = {
    "lightgbm": {"num_leaves": (15, 31, 63), "learning_rate": (0.05, 0.1), "min_data_in_leaf": (20, 50),
                 "lambda_l2": (0.0, 1.0, 10.0), "bagging_fraction": (1.0, 0.8), "feature_fraction": (1.0, 0.8)},
    "xgboost": {"max_leaves": (15, 31, 63), "eta": (0.05, 0.1), "min_child_weight": (0.0, 1.0),
                "reg_lambda": (0.0, 1.0, 10.0), "colsample_bytree": (1.0, 0.8)},
    "catboost": {"depth": (4, 5, 6), "learning_rate": (0.05, 0.1), "l2_leaf_reg": (0.0, 1.0, 10.0),
                 "subsample": (1.0, 0.8), "rsm": (1.0, 0.8)},
}
#: ``--quick``: one configuration per engine (L2 = 0 everywhere, feature sampling so seeds matter)
QUICK = {"lightgbm": {"num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20, "lambda_l2": 0.0,
                      "bagging_fraction": 1.0, "feature_fraction": 0.8},
         "xgboost": {"max_leaves": 31, "eta": 0.1, "min_child_weight": 0.0, "reg_lambda": 0.0,
                     "colsample_bytree": 0.8},
         "catboost": {"depth": 5, "learning_rate": 0.1, "l2_leaf_reg": 0.0, "subsample": 1.0, "rsm": 0.8}}
#: the default pre-declared primary endpoint (``--primary`` chooses another of :data:`METRICS`); the
#: other metrics are secondary. Model selection stays on validation NDCG@10 whatever the primary, so one
#: run's stored tasks answer every primary (the summary is recomputed, nothing retrains).
PRIMARY = "ndcg@10"
#: the share of tasks whose chosen iteration must lie below the round cap (else the cap decides)
CAP_TARGET = 0.95


def search_configs(engine, budget, quick=False):
    """The configurations every objective of ``engine`` is tuned over: the default point
    (:data:`QUICK`, the only one with ``quick``) and ``budget - 1`` other distinct points of
    :data:`SPACE` drawn with a fixed seed: the same list for every objective of the engine."""
    first = dict(QUICK[engine])
    if quick:
        return [first]
    import itertools

    space = SPACE[engine]
    points = [p for p in itertools.product(*space.values()) if dict(zip(space, p)) != first]
    order = np.random.default_rng(20261124).permutation(len(points))[:min(budget, len(points) + 1) - 1]
    return [first] + [dict(zip(space, points[i])) for i in sorted(order)]


#: the systems run by default: each engine's natives and our main objectives (``--objectives`` adds the rest)
DEFAULT_SYSTEMS = ("native lambdarank", "native rank_xendcg", "ours ndcg", "ours ndcg@10", "ours ndcg@10 (lambdarank norm)",
                   "ours ndcg_loss2@10", "ours ndcg_loss2pp@10", "ours xendcg", "ours yetirank", "native rank:ndcg", "native rank:pairwise",
                   "native LambdaMart NDCG", "native YetiRank")
# issue #33's objectives (softmax, ListMLE, PL-Rank-3, the YetiLoss modes) are opt-in (--objectives):
# the documented default protocol, and the tables in docs/reproducing/quality.md made by it, stay what they were

#: ``--objectives per-metric``: the per-metric evidence run (issue #33): each engine's default native, the
#: YetiLoss modes (CatBoost's own as the reference), PL-Rank-3, softmax, ListMLE and the exact ΔMAP/ΔMRR/ΔERR
PER_METRIC_SYSTEMS = ("native lambdarank", "native rank:ndcg", "native LambdaMart NDCG",
                      "native YetiRank", "native YetiRank MRR", "native YetiRank MAP", "native QuerySoftMax",
                      "ours yetirank", "ours yetirank mrr", "ours yetirank map", "ours plrank", "ours softmax",
                      "ours listmle", "ours mrr@10", "ours map@10", "ours err@10")
#: names ``--objectives`` accepts for a whole set of systems
SYSTEM_SETS = {"default": DEFAULT_SYSTEMS, "per-metric": PER_METRIC_SYSTEMS}


# ---------------------------------------------------------------------------------------------
# one task: one (data set, fold, engine, objective), every grid configuration
# ---------------------------------------------------------------------------------------------
def _ours_options(spec, seed):
    """Our objective's options; a stochastic objective (XE-NDCG, YetiRank, PL-Rank) gets the task's seed."""
    opts = dict(spec[2])
    if spec[1].split("@")[0] in STOCHASTIC and "seed" not in opts:
        opts["seed"] = seed
    return opts


#: our objectives that draw random numbers (their ``seed`` option follows the task's seed)
STOCHASTIC = ("xendcg", "yetirank", "plrank")


class _Seen:
    """What an XGBoost training has done so far: its booster, its rounds and its best validation
    NDCG@10 iteration (1-based, the first of equal scores, as its early stopping keeps it), so that a
    training which *diverges* stops there as early stopping would.

    Divergence: Newton leaf values ``−G/H`` from vanishing Hessians (XGBoost's grid allows
    ``min_child_weight = 0`` and ``reg_lambda = 0``) can grow until the scores overflow, and our
    objectives then refuse them with a ``ValueError``. (LightGBM's leaves keep its default
    ``min_sum_hessian_in_leaf = 1e-3``; a LightGBM training that failed would still raise.)
    :meth:`diverged` keeps the training's best iteration before that point when the training scores
    really are non-finite, and re-raises anything else.
    """

    def __init__(self):
        self.model, self.rounds, self.best, self.score = None, 0, 0, -np.inf

    def _after(self, model, rounds, score):
        self.model, self.rounds = model, rounds
        if score > self.score:
            self.best, self.score = rounds, score

    def xgboost(self):
        import xgboost as xgb

        seen = self

        class _Callback(xgb.callback.TrainingCallback):
            def after_iteration(self, model, epoch, evals_log):
                seen._after(model, epoch + 1, evals_log["valid"]["ndcg@10"][-1])
                return False

        return _Callback()

    def diverged(self, exc, train_margins):
        """The booster after ``exc`` if its training scores ``train_margins(booster)`` are
        non-finite and it has a best iteration; else ``exc`` again."""
        if self.model is None or self.best == 0 or np.all(np.isfinite(train_margins(self.model))):
            raise exc
        return self.model


def _train(engine, spec, tr, va, hp, rounds, patience, seed):
    """Train one configuration ``hp`` (the engine's own parameter names, see :data:`SPACE`) with
    early stopping on validation NDCG@10; return (predict function, best iteration, the round at
    which it diverged or ``None``: :class:`_Seen`)."""
    kind = spec[0]
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        obj = LightGBMObjective(spec[1], **_ours_options(spec, seed)) if kind == "ours" else spec[1]["objective"]
        extra = {} if kind == "ours" else {k: v for k, v in spec[1].items() if k != "objective"}
        sampling = {"bagging_by_query": True, "bagging_freq": 1} if hp["bagging_fraction"] < 1 else {}
        p = dict(objective=obj, metric="ndcg", eval_at=[10], verbose=-1, seed=seed, deterministic=True,
                 force_row_wise=True, num_threads=1)
        p.update(hp)
        p.update(sampling)
        p.update(extra)
        dtr = lgb.Dataset(tr.X, tr.y, group=tr.group)
        dva = lgb.Dataset(va.X, va.y, group=va.group, reference=dtr)
        b = lgb.train(p, dtr, rounds, valid_sets=[dva], callbacks=[lgb.early_stopping(patience, verbose=False)])
        best = b.best_iteration or rounds
        return (lambda X: b.predict(X, num_iteration=best)), best, None
    if engine == "xgboost":
        import xgboost as xgb

        from lambda_objectives import XGBoostObjective

        p = dict(grow_policy="lossguide", tree_method="hist", seed=seed, nthread=1, eval_metric="ndcg@10", **hp)
        dtr = xgb.DMatrix(tr.X, tr.y, group=tr.group)
        dva = xgb.DMatrix(va.X, va.y, group=va.group)
        stop = xgb.callback.EarlyStopping(rounds=patience, metric_name="ndcg@10", maximize=True, save_best=False)
        seen = _Seen()
        diverged = None
        try:
            if kind == "ours":
                obj = XGBoostObjective(spec[1], **_ours_options(spec, seed))
                p = dict(obj.params(**p), eval_metric="ndcg@10")  # the grid's min_child_weight wins
                p.pop("disable_default_eval_metric", None)
                b = xgb.train(p, dtr, rounds, obj=obj, evals=[(dva, "valid")], callbacks=[stop, seen.xgboost()],
                              verbose_eval=False)
            else:
                b = xgb.train(dict(p, **spec[1]), dtr, rounds, evals=[(dva, "valid")],
                              callbacks=[stop, seen.xgboost()], verbose_eval=False)
            best = int(b.best_iteration) + 1
        except ValueError as exc:
            b = seen.diverged(exc, lambda m: m.predict(dtr, output_margin=True))
            best, diverged = seen.best, seen.rounds + 1
        return (lambda X: b.predict(xgb.DMatrix(X), output_margin=True, iteration_range=(0, best))), best, diverged
    import catboost as cb

    def pool(d):
        return cb.Pool(d.X, d.y, group_id=d.qid)  # qids are contiguous per query, as CatBoost needs

    hp = dict(hp)
    rows = hp.pop("subsample")
    if rows == "MVS":  # CatBoost's own default for ranking on the CPU (subsample 0.8)
        sampling = {"bootstrap_type": "MVS", "subsample": 0.8}
    elif rows < 1:
        sampling = {"bootstrap_type": "Bernoulli", "subsample": rows, "sampling_unit": "Group"}
    else:
        sampling = {"bootstrap_type": "No"}
    p = dict(iterations=rounds, random_seed=seed, eval_metric="NDCG:top=10;type=Exp", od_type="Iter",
             od_wait=patience, use_best_model=True, thread_count=1, verbose=False, allow_writing_files=False)
    p.update(hp)
    p.update(sampling)
    p.update(spec[1])
    m = cb.CatBoost(p)
    m.fit(pool(tr), eval_set=pool(va))
    return (lambda X: m.predict(X)), int(m.get_best_iteration()) + 1, None


def one_task(cfg):
    """Every grid configuration of one (data set, fold, engine, objective); per-query test values of
    the configuration with the best validation NDCG@10 (LightGBM convention, the engines' own)."""
    from lambda_objectives import metric_values, metric_values_table

    tr, va, te = load_fold(cfg["data"], cfg["fold"])
    spec = SYSTEMS[(cfg["engine"], cfg["system"])]
    runs = []
    for hp in cfg["grid"]:
        hp = dict(hp, **TRAINING.get((cfg["engine"], cfg["system"]), {}))
        t = time.perf_counter()
        predict, best, diverged = _train(cfg["engine"], spec, tr, va, hp, cfg["rounds"], cfg["patience"], cfg["seed"])
        seconds = time.perf_counter() - t
        vali = float(np.mean(metric_values(predict(va.X), va.y, va.group_ptr, "ndcg@10")))
        runs.append((vali, hp, best, seconds, predict, diverged))
    vali, hp, best, seconds, predict, diverged = max(runs, key=lambda r: r[0])
    s = predict(te.X)
    test = {m: v.tolist() for m, v in
            metric_values_table(s, te.y, te.group_ptr, METRICS, convention=cfg["convention"]).items()}
    out = {"vali_ndcg@10": vali, "hp": hp, "best_iteration": best, "rounds": cfg["rounds"],
           "seconds": float(sum(r[3] for r in runs)), "test": test, "n_test_queries": int(te.n_queries)}
    if any(r[5] is not None for r in runs):  # only then: results stored before this rule stay as they were
        out["diverged_at"] = [r[5] for r in runs]  # per configuration: the round whose scores overflowed
        out["chosen_diverged"] = diverged is not None
    return out


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------
def seed_means(per_seed):
    """Per-query test values averaged over the seeds of one (data, fold, engine, system): the unit
    the tests compare. Every seed scores the same test queries in the same order."""
    out = {}
    for m in METRICS:
        stacked = np.array([np.asarray(r["test"][m], dtype=float) for r in per_seed])
        out[m] = stacked.mean(axis=0)
    return out


def summarise(results, alpha=0.05, rounds=None, primary=PRIMARY):
    """Per (data, engine, system): the fold mean of per-query means (each query's value averaged over
    seeds first), a 95 % t interval, and paired sign-flip tests against the engine's default native.

    Multiplicity: the pre-declared primary endpoint ``primary`` (one of :data:`METRICS`, default
    NDCG@10) is one family, Holm-corrected across the table; the other metrics are a second family
    with its own Holm correction. Also returns, per data set, the power statement (sd of the paired
    difference of ``primary`` per test query, pooled test queries, the difference detectable at 80 %
    power) and the share of tasks whose chosen iteration stayed below the round cap ``rounds``.
    """
    if primary not in METRICS:
        raise ValueError(f"primary endpoint {primary!r} is not one of the measured metrics {', '.join(METRICS)}")
    for cfg, res in results:
        missing = [m for m in METRICS if m not in res["test"]]
        if missing:  # a task stored by an older version of this command
            raise ValueError(f"the stored task {cfg['data_label']} {cfg['fold']} {cfg['engine']} {cfg['system']} "
                             f"seed {cfg['seed']} has no {', '.join(missing)}: re-run it (--force)")
    cells = {}
    for cfg, res in results:
        key = (cfg["data_label"], cfg["engine"], cfg["system"])
        cells.setdefault(key, {}).setdefault(cfg["fold"], []).append(res)
    per_query = {key: {fold: seed_means(rs) for fold, rs in folds.items()} for key, folds in cells.items()}
    rows = []
    for (data, engine, system), folds in sorted(cells.items()):
        pq = per_query[(data, engine, system)]
        names = sorted(folds)
        row = {"data": data, "engine": engine, "system": system, "folds": len(names),
               "seeds": min(len(folds[f]) for f in names),
               "seconds": float(sum(r["seconds"] for f in names for r in folds[f]))}
        for m in METRICS:
            row[m] = float(np.mean([np.nanmean(pq[f][m]) for f in names]))
            row[m + " ci"] = t_interval(np.concatenate([pq[f][m] for f in names]))
        base = per_query.get((data, engine, BASELINE[engine]))
        if base is not None and system != BASELINE[engine]:
            for m in METRICS:
                diffs = np.concatenate([pq[f][m] - base[f][m] for f in names if f in base])
                row[m + " diff"] = float(np.nanmean(diffs))
                row[m + " diff ci"] = t_interval(diffs)
                row[m + " sd"] = float(np.nanstd(diffs, ddof=1)) if diffs.size > 1 else float("nan")
                row[m + " n"] = int(np.isfinite(diffs).sum())
                row[m + " p"] = sign_flip_pvalue(diffs)
        rows.append(row)
    n_primary = holm_families(rows, primary, METRICS, alpha)
    power = power_by_data(rows, primary, n_primary, alpha)
    iters = [(r["best_iteration"], r.get("rounds", rounds)) for _, r in results]
    below = [b < cap for b, cap in iters if cap is not None]
    cap = {"tasks": len(below), "share_below_cap": float(np.mean(below)) if below else float("nan"),
           # trainings stopped because their scores overflowed (:class:`_Seen`), by (engine, system)
           "diverged": sorted({f"{c['engine']}: {c['system']}" for c, r in results if r.get("diverged_at")}),
           "diverged_tasks": sum(1 for _, r in results if r.get("diverged_at")),
           "diverged_chosen": sum(1 for _, r in results if r.get("chosen_diverged"))}
    return rows, power, cap


def verdicts(rows, engines, primary=PRIMARY):
    """Per (data set, engine): which of our objectives beat the engine's default native on the primary
    endpoint ``primary`` after Holm, or that none did (and which native leads on the point estimate)."""
    out = []
    for data in sorted({r["data"] for r in rows}):
        for e in engines:
            rs = [r for r in rows if r["data"] == data and r["engine"] == e]
            if not rs:
                continue
            natives = [r for r in rs if r["system"].startswith("native")]
            best_native = max(natives, key=lambda r: r[primary])["system"] if natives else None
            wins = [r["system"] for r in rs if r.get(primary + " significant") and r[primary + " diff"] > 0
                    and r["system"].startswith("ours")]
            losses = [r["system"] for r in rs if r.get(primary + " significant") and r[primary + " diff"] < 0]
            if not any(r["system"].startswith("ours") for r in rs):
                text = f"natives only (none of our objectives runs inside {e})"
            elif wins:
                text = f"{', '.join(wins)} significantly better than {BASELINE[e]} on {_name(primary)}"
            else:
                text = f"no objective of ours significantly better than {BASELINE[e]} on {_name(primary)}"
            if losses:
                text += f"; significantly worse: {', '.join(losses)}"
            if best_native and best_native != BASELINE[e]:
                text += f" (best native by {_name(primary)} point estimate: {best_native})"
            out.append({"data": data, "engine": e, "text": text})
    return out


# ---------------------------------------------------------------------------------------------
# command
# ---------------------------------------------------------------------------------------------
def cell_name(cfg):
    """A cell in progress lines: data set, fold, engine, system, seed."""
    return f"{cfg['data_label']} {cfg['fold']} {cfg['engine']} {cfg['system']} seed {cfg['seed']}"


def add_arguments(p):
    p.add_argument("--data", nargs="*", default=[], help="data folders, each " + DATA_HELP.replace("a data folder: ", ""))
    p.add_argument("--synthetic", type=positive_int, default=None, metavar="N_QUERIES",
                   help="also the built-in MSLR-WEB10K-shaped synthetic set of N queries, in five folds")
    p.add_argument("--engines", type=csv_arg(ENGINES), default=None,
                   help="comma list (default: every installed engine)")
    p.add_argument("--objectives", type=csv_arg(OBJECTIVE_NAMES + sorted(SYSTEM_SETS)), default=None,
                   help="comma list of system names, or a set of them: 'default' (DEFAULT_SYSTEMS, the default), "
                        "'per-metric' (PER_METRIC_SYSTEMS)")
    p.add_argument("--primary", default=PRIMARY, choices=METRICS,
                   help="the pre-declared primary endpoint of the Holm family (default ndcg@10); model selection "
                        "stays on validation NDCG@10, so a stored run is re-summarised without retraining")
    p.add_argument("--folds", type=folds_arg, default=None,
                   help="comma list of folds 1..5, e.g. 1,2 (default: every fold present)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke-sized run: one configuration per engine, at most 200 rounds, the first two folds "
                        "of each data set (Fold1, Fold2), 300 synthetic queries")
    p.add_argument("--budget", type=positive_int, default=6,
                   help="configurations searched per (engine, objective): the --quick one and BUDGET-1 drawn from the "
                        "engine's grid, the same for every objective of an engine")
    p.add_argument("--seeds", type=positive_int, default=3,
                   help="training seeds per task; per-query test values are averaged over them")
    p.add_argument("--rounds", type=positive_int, default=None, help="round cap (default 1000; 200 with --quick)")
    p.add_argument("--patience", type=positive_int, default=30, help="early-stopping patience (rounds)")
    p.add_argument("--seed", type=int, default=0, help="first seed (the seeds are SEED, SEED+1, ...)")
    convention_arg(p)
    grid_args(p, "results/quality")
    return p


def _validate(a):
    """Every error a user can make, before anything trains: folders, folds, engines, objectives."""
    if not a.data and not a.synthetic:
        raise ValueError("give --data DIR [DIR ...] and/or --synthetic N")
    engines = a.engines or [e for e in ENGINES if importlib.util.find_spec(e) is not None]
    for e in engines:
        if importlib.util.find_spec(e) is None:
            raise ValueError(f"engine {e!r} is not installed (pip install "
                             f"'lambda_objectives[{'catboost' if e == 'catboost' else 'engines'}]')")
    wanted_systems = set()
    for name in a.objectives or ["default"]:
        wanted_systems.update(SYSTEM_SETS.get(name, (name,)))
    systems = [(e, n) for (e, n) in SYSTEMS if e in engines and n in wanted_systems]
    if not systems:
        raise ValueError(f"no system left: objectives {a.objectives} do not exist for engines {engines}")
    datasets = []
    wanted = a.folds
    for d in a.data:
        # a LETOR layout, a folder without folds (pooled, five folds by query) or OHSUMED's variants
        ds = resolve_data(d, wanted, a.seed)
        if ds.note:
            log(ds.note)
        label = ds.label
        if any(label == other for _, other, _ in datasets):
            label = str(d)  # two folders of one name: the statistics group by label, so keep them apart
        datasets.append((ds.key, label, ds.folds[:2] if a.quick else ds.folds))
    if a.synthetic:
        n = 300 if a.quick else a.synthetic
        names = ["Fold1", "Fold2"] if a.quick else [f"Fold{i}" for i in range(1, 6)]
        names = [f for f in names if f in wanted] if wanted else names
        if not names:
            raise ValueError(f"--folds {','.join(wanted)}: --quick runs the synthetic set's Fold1 and Fold2 only")
        datasets.append((f"synthetic:mslr:{n}:{a.seed}", f"synthetic MSLR-shaped, {n} queries", names))
    return engines, systems, datasets


def _name(metric):
    """``NDCG@10`` for ``ndcg@10``: how tables and titles spell a metric."""
    return metric.upper()


def _header(a, engines, rounds, power, cap, n_primary):
    from lambda_objectives.metrics import convention_label

    grid = ("one configuration per engine: " + "; ".join(f"{e} {QUICK[e]}" for e in engines) if a.quick or a.budget == 1
            else f"{a.budget} configurations per engine, the default one ({'; '.join(f'{e} {QUICK[e]}' for e in engines)}) "
            f"and {a.budget - 1} drawn once from " + "; ".join(f"{e} {SPACE[e]}" for e in engines) +
            " (the same for every objective of an engine)")
    lines = [
        f"Test metrics ×100: per test query averaged over {a.seeds} training seed(s), then the mean over folds "
        f"of the per-query means (95 % t intervals over the pooled test queries: summary.json; quality.png draws each system's paired "
        f"{_name(a.primary)} difference to its engine's default native with its 95 % interval). "
        f"NDCG: {convention_label(a.convention)}; ERR@10: R = (2^g − 1)/2^max, max = the test file's largest grade; "
        "MAP@10: relevant = label > 0, normalised by all relevant documents (trec_eval map_cut); "
        "MRR@10: 1/rank of the first document with label > 0 in the top 10, else 0; a query without a relevant "
        "document scores 0 on MAP@10 and MRR@10 in every convention.",
        f"Tuning: {grid}, selected on validation NDCG@10 (LightGBM convention) with early stopping "
        f"(patience {a.patience}, round cap {rounds}); each seed repeats the search. Chosen iteration below "
        f"the cap in {100 * cap['share_below_cap']:.0f} % of {cap['tasks']} tasks (target ≥ {100 * CAP_TARGET:.0f} %"
        f"{'' if cap['share_below_cap'] >= CAP_TARGET else ': NOT MET, the cap decides some results'}).",
        (f"Divergence: in {cap['diverged_tasks']} task(s) ({', '.join(cap['diverged'])}) a configuration's scores "
         "overflowed (Newton leaf values from vanishing Hessians) and its training stopped there, keeping its best "
         f"validation iteration so far, as early stopping would; the chosen configuration in {cap['diverged_chosen']}."
         if cap.get("diverged_tasks") else "No training diverged (every score stayed finite)."),
        f"Tests: paired sign-flip randomisation test over the pooled test queries against the engine's default "
        f"native ({', '.join(f'{e}: {BASELINE[e]}' for e in engines)}). Primary endpoint {_name(a.primary)} "
        f"(pre-declared{', the default' if a.primary == PRIMARY else ' with --primary'}), Holm-corrected "
        f"over its {n_primary} comparisons; the other metrics are secondary, Holm-corrected as a family of their "
        "own. ▲/▼: better/worse, p_Holm < 0.05.",
        f"Power ({_name(a.primary)} points, paired difference vs the engine's default native; sd = median over systems of "
        "the per-query sd): " + "; ".join(
            f"{d}: sd {100 * v['sd']:.1f}, {v['n_queries']} test queries, detectable at 80 % power "
            f"{100 * v['mde']:.2f} (one test, α = 0.05) / {100 * v['mde_holm']:.2f} (α/{v['family']}, Holm's "
            "strictest step)" for d, v in power.items()) + ".",
    ]
    return lines


def run(a):
    try:
        engines, systems, datasets = _validate(a)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rounds = a.rounds or (200 if a.quick else 1000)
    grids = {e: search_configs(e, a.budget, a.quick) for e in engines}
    seeds = [a.seed + i for i in range(a.seeds)]
    tasks = [{"data": key, "data_label": label, "fold": f, "engine": e, "system": s, "grid": grids[e],
              "rounds": rounds, "patience": a.patience, "seed": seed, "convention": a.convention,
              "metrics": list(METRICS)}
             for key, label, folds in datasets for f in folds for e, s in systems for seed in seeds]
    out = Path(a.out)
    store = RunStore(out / "runs", "quality")
    t0 = time.perf_counter()

    def done(cfg, res):
        log(f"done {cell_name(cfg)}: test "
            f"NDCG@10 {np.mean(res['test']['ndcg@10']):.4f} (vali {res['vali_ndcg@10']:.4f}, "
            f"iteration {res['best_iteration']} of {cfg['rounds']}, {res['seconds']:.0f} s)")

    results = run_grid(tasks, one_task, store, jobs=a.jobs, scheduler=a.scheduler, force=a.force, desc="quality",
                       meta={"machine": machine_record()}, on_result=done, isolate=True,
                       batch_by=lambda c: (c["data"], c["fold"], c["engine"]), name=cell_name)
    rows, power, cap = summarise(results, rounds=rounds, primary=a.primary)
    n_primary = sum(a.primary + " p" in r for r in rows)
    wall = time.perf_counter() - t0
    head = _header(a, engines, rounds, power, cap, n_primary)
    verdict = verdicts(rows, engines, a.primary)
    md = [f"# Ranking quality ({'quick' if a.quick else 'full'} run)", "", *[h + "\n" for h in head]]
    for key, label, folds in datasets:
        md += [f"## {label} ({len(folds)} folds)", ""]
        if label in power:
            v = power[label]
            md += [f"Smallest {_name(a.primary)} difference detectable at 80 % power: {100 * v['mde']:.2f} points "
                   f"({v['n_queries']} test queries, per-query sd {100 * v['sd']:.1f}).", ""]
        md += ["| engine | objective | " + " | ".join(METRICS) + f" | vs native {_name(a.primary)} (p Holm) | seconds |",
               "|---|---|" + "---:|" * (len(METRICS) + 2)]
        for r in (r for r in rows if r["data"] == label):
            cells = []
            for m in METRICS:
                mark = ""
                if r.get(m + " significant"):
                    mark = " ▲" if r[m + " diff"] > 0 else " ▼"
                cells.append(f"{100 * r[m]:.2f}{mark}")
            pm = a.primary
            vs = "—" if pm + " diff" not in r else f"{100 * r[pm + ' diff']:+.2f} ({r[pm + ' p_holm']:.3g})"
            md.append(f"| {r['engine']} | {r['system']} | " + " | ".join(cells) + f" | {vs} | {r['seconds']:.0f} |")
        md.append("")
        md += [f"- {v['engine']}: {v['text']}" for v in verdict if v["data"] == label] + [""]
    md.append(f"Wall time of this run: {wall / 60:.1f} min for {len(tasks)} tasks, --jobs {a.jobs} (tasks reused from "
              f"the run store take no time); training time summed over tasks: "
              f"{sum(r['seconds'] for r in rows) / 60:.1f} min.")
    print("\n".join(md))  # before any file is written: a read-only --out still shows the table
    out.mkdir(parents=True, exist_ok=True)
    (out / "quality.md").write_text("\n".join(md) + "\n")
    with open(out / "quality.csv", "w", newline="") as fh:
        cols = ["data", "engine", "system", "seeds", *METRICS, *(m + " diff" for m in METRICS),
                *(m + " p_holm" for m in METRICS)]
        # csv quotes a field with a comma (data set labels have them: "yahoo-sample (rank.test + ...)")
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow([f"{r[c]:.6f}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols])
    (out / "summary.json").write_text(json.dumps({"header": head, "primary": a.primary, "rows": rows, "power": power,
                                                  "cap": cap,
                                                  "verdicts": verdict, "configurations": grids,
                                                  "wall_seconds": wall, "machine": machine_record()},
                                                 indent=2, default=float))
    _plot(rows, datasets, out / "quality.png", a.primary)
    print(f"written to {out}/quality.md, quality.csv, summary.json, quality.png")
    return 0


def plot_points(rows, label, metric=PRIMARY):
    """What ``quality.png`` draws for the data set ``label``: per (engine, system) other than the
    engine's default native, the paired test difference to that native (:data:`BASELINE`), ×100,
    with its 95 % t interval over the pooled test queries and whether the table marks it
    (``significant``: Holm-adjusted sign-flip test, ``+1`` better / ``-1`` worse / ``0``)."""
    points = []
    for r in rows:
        if r["data"] != label or metric + " diff" not in r:
            continue
        lo, hi = r[metric + " diff ci"]
        sign = int(np.sign(r[metric + " diff"])) if r.get(metric + " significant") else 0
        points.append({"name": f"{r['engine']}: {r['system']}", "engine": r["engine"],
                       "diff": 100 * r[metric + " diff"], "lo": 100 * lo, "hi": 100 * hi, "significant": sign})
    return points


def figure_title(engines, metric=PRIMARY):
    """The title of ``quality.png`` (each panel is titled with its data set's name)."""
    return (f"Test {_name(metric)} minus the engine's default native (" + "; ".join(f"{e}: {BASELINE[e]}" for e in engines)
            + "), paired over the pooled test queries ×100; bars: 95 % t interval (unadjusted); "
            "filled ▲/▼: significantly better/worse after Holm (the table's marks)")


def _plot(rows, datasets, path, metric=PRIMARY):
    """Per data set: each (engine, objective)'s paired ``metric`` (the primary) difference to its engine's
    default native (:func:`plot_points`), the comparison the table's ▲/▼ test, not each system's own interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(label, plot_points(rows, label, metric)) for _, label, _ in datasets]
    height = max([len(p) for _, p in panels] + [1])
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 0.35 * height + 2.6), squeeze=False,
                             layout="constrained")
    colors = {"lightgbm": "tab:green", "xgboost": "tab:blue", "catboost": "tab:orange"}
    for ax, (label, points) in zip(axes[0], panels):
        for i, pt in enumerate(points):
            c = colors[pt["engine"]]
            ax.errorbar(pt["diff"], i, xerr=[[pt["diff"] - pt["lo"]], [pt["hi"] - pt["diff"]]], fmt="none",
                        ecolor=c, capsize=3)
            marker = {1: "^", -1: "v", 0: "o"}[pt["significant"]]
            ax.plot(pt["diff"], i, marker, color=c, mfc=c if pt["significant"] else "white", ms=7)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(range(len(points)))
        ax.set_yticklabels([pt["name"] for pt in points], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"{_name(metric)} ×100 minus the engine's native")
        ax.set_title(dataset_name(label), fontsize=10)  # the data set's name, not the path given
        ax.grid(axis="x", alpha=0.3)
        if not points:
            ax.text(0.5, 0.5, "no paired comparison (only the natives ran)", transform=ax.transAxes, ha="center")
    import textwrap

    title = figure_title(sorted({r["engine"] for r in rows}, key=ENGINES.index), metric)
    fig.suptitle(textwrap.fill(title, 90 * len(panels)), fontsize=9)  # one panel is narrower than the title
    fig.savefig(path, dpi=110, bbox_inches="tight")  # long system names and the title are never cut off
    plt.close(fig)


def main(argv=None):
    from .__main__ import main as cli

    return cli(["quality", *([] if argv is None else argv)])
