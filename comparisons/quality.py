"""``python -m comparisons quality --data DIR [DIR ...]``: which objective trains the best ranker, per engine.

For every data set (LETOR-layout folders, and ``--synthetic N`` for the built-in MSLR-shaped set split
into five LETOR folds), every fold, every engine (LightGBM, XGBoost; CatBoost's natives when it is
installed) and every objective (the engine's natives and ours), one task trains each configuration of
the same small grid (leaves × learning rate × minimum leaf size) with early stopping on the fold's
validation NDCG@10 (the same patience for all), keeps the configuration with the best validation
NDCG@10, and scores it on the fold's test file per query: NDCG@1/3/5/10, ERR@10 and MAP@10 in the
named convention.

Statistics (``summary.json``, ``quality.md``): the mean over folds of the per-query test means, a 95 %
t interval over the pooled test queries, and for each of our objectives a paired sign-flip
randomisation test against the engine's default native objective over the pooled test queries, with
Holm's correction across every comparison in the table; a cell is marked only when significant.
Each task runs in a process of its own; finished tasks are stored (keyed by their configuration and the
package and engine versions) and reused.
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._cli import convention_arg, csv_arg, dataset_name, folds_arg, grid_args, positive_int
from ._machine import log, machine_record
from ._runner import run_grid
from .runstore import RunStore

METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "err@10", "map@10")
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
    ("lightgbm", "ours ndcg_loss2@10"): ("ours", "ndcg_loss2@10", {}),
    ("lightgbm", "ours ndcg_loss2pp@10"): ("ours", "ndcg_loss2pp@10", {}),
    ("lightgbm", "ours xendcg"): ("ours", "xendcg", {}),
    ("xgboost", "native rank:ndcg"): ("native", {"objective": "rank:ndcg"}),
    ("xgboost", "native rank:pairwise"): ("native", {"objective": "rank:pairwise"}),
    ("xgboost", "ours ndcg"): ("ours", "ndcg", {}),
    ("xgboost", "ours ndcg (lambdarank norm)"): ("ours", "ndcg", {"normalize": "lambdarank"}),
    ("xgboost", "ours ndcg@10"): ("ours", "ndcg@10", {}),
    ("xgboost", "ours ndcg@10 (lambdarank norm)"): ("ours", "ndcg@10", {"normalize": "lambdarank"}),
    ("xgboost", "ours ndcg_loss2pp@10"): ("ours", "ndcg_loss2pp@10", {}),
    ("xgboost", "ours xendcg"): ("ours", "xendcg", {}),
    ("catboost", "native LambdaMart NDCG"): ("native", {"loss_function": "LambdaMart:metric=NDCG"}),
    ("catboost", "native YetiRank"): ("native", {"loss_function": "YetiRank"}),
}
#: the baseline of each engine's paired tests
BASELINE = {"lightgbm": "native lambdarank", "xgboost": "native rank:ndcg", "catboost": "native LambdaMart NDCG"}
OBJECTIVE_NAMES = sorted({name for _, name in SYSTEMS})
ENGINES = ("lightgbm", "xgboost", "catboost")
GRID = {"full": {"leaves": (15, 63), "lr": (0.1,), "min_data": (20,)},
        "quick": {"leaves": (31,), "lr": (0.1,), "min_data": (20,)}}
#: the systems run by default: each engine's natives and our main objectives (``--objectives`` adds the rest)
DEFAULT_SYSTEMS = ("native lambdarank", "native rank_xendcg", "ours ndcg@10", "ours ndcg@10 (lambdarank norm)",
                   "ours ndcg_loss2pp@10", "ours xendcg", "native rank:ndcg", "native rank:pairwise",
                   "native LambdaMart NDCG", "native YetiRank")


# ---------------------------------------------------------------------------------------------
# one task: one (data set, fold, engine, objective), every grid configuration
# ---------------------------------------------------------------------------------------------
def _train(engine, spec, tr, va, hp, rounds, patience, seed):
    """Train with early stopping on validation NDCG@10; return (model predict function, best iteration)."""
    kind = spec[0]
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        obj = LightGBMObjective(spec[1], **spec[2]) if kind == "ours" else spec[1]["objective"]
        extra = {} if kind == "ours" else {k: v for k, v in spec[1].items() if k != "objective"}
        p = dict(objective=obj, num_leaves=hp["leaves"], learning_rate=hp["lr"], min_data_in_leaf=hp["min_data"],
                 metric="ndcg", eval_at=[10], verbose=-1, seed=seed, deterministic=True, force_row_wise=True,
                 num_threads=1, **extra)
        dtr = lgb.Dataset(tr.X, tr.y, group=tr.group)
        dva = lgb.Dataset(va.X, va.y, group=va.group, reference=dtr)
        b = lgb.train(p, dtr, rounds, valid_sets=[dva], callbacks=[lgb.early_stopping(patience, verbose=False)])
        return (lambda X: b.predict(X, num_iteration=b.best_iteration)), b.best_iteration
    if engine == "xgboost":
        import xgboost as xgb

        from lambda_objectives import XGBoostObjective

        p = dict(max_leaves=hp["leaves"], grow_policy="lossguide", tree_method="hist", eta=hp["lr"],
                 min_child_weight=0.0, seed=seed, nthread=1, eval_metric="ndcg@10")
        dtr = xgb.DMatrix(tr.X, tr.y, group=tr.group)
        dva = xgb.DMatrix(va.X, va.y, group=va.group)
        stop = xgb.callback.EarlyStopping(rounds=patience, metric_name="ndcg@10", maximize=True, save_best=False)
        if kind == "ours":
            obj = XGBoostObjective(spec[1], **spec[2])
            p = dict(obj.params(**p), eval_metric="ndcg@10")
            p.pop("disable_default_eval_metric", None)
            b = xgb.train(p, dtr, rounds, obj=obj, evals=[(dva, "valid")], callbacks=[stop], verbose_eval=False)
        else:
            b = xgb.train(dict(p, **spec[1]), dtr, rounds, evals=[(dva, "valid")], callbacks=[stop],
                          verbose_eval=False)
        best = int(b.best_iteration) + 1
        return (lambda X: b.predict(xgb.DMatrix(X), output_margin=True, iteration_range=(0, best))), best
    import catboost as cb

    def pool(d):
        return cb.Pool(d.X, d.y, group_id=d.qid)  # qids are contiguous per query, as CatBoost needs

    m = cb.CatBoost(dict(spec[1], iterations=rounds, depth=max(2, int(np.log2(hp["leaves"] + 1))),
                         learning_rate=hp["lr"], min_data_in_leaf=hp["min_data"], random_seed=seed,
                         eval_metric="NDCG:top=10;type=Exp", od_type="Iter", od_wait=patience,
                         use_best_model=True, thread_count=1, verbose=False, allow_writing_files=False))
    m.fit(pool(tr), eval_set=pool(va))
    return (lambda X: m.predict(X)), int(m.get_best_iteration()) + 1


def one_task(cfg):
    """Every grid configuration of one (data set, fold, engine, objective); per-query test values of
    the configuration with the best validation NDCG@10 (LightGBM convention, the engines' own)."""
    from lambda_objectives import metric_values

    from .paper import load_fold

    tr, va, te = load_fold(cfg["data"], cfg["fold"])
    spec = SYSTEMS[(cfg["engine"], cfg["system"])]
    runs = []
    for hp in cfg["grid"]:
        t = time.perf_counter()
        predict, best = _train(cfg["engine"], spec, tr, va, hp, cfg["rounds"], cfg["patience"], cfg["seed"])
        seconds = time.perf_counter() - t
        vali = float(np.mean(metric_values(predict(va.X), va.y, va.group_ptr, "ndcg@10")))
        runs.append((vali, hp, best, seconds, predict))
    vali, hp, best, seconds, predict = max(runs, key=lambda r: r[0])
    s = predict(te.X)
    test = {m: metric_values(s, te.y, te.group_ptr, m, convention=cfg["convention"]).tolist() for m in METRICS}
    return {"vali_ndcg@10": vali, "hp": hp, "best_iteration": best, "seconds": float(sum(r[3] for r in runs)),
            "test": test, "n_test_queries": int(te.n_queries)}


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------
def sign_flip_pvalue(diffs, n_resamples=20000, seed=0):
    """Two-sided paired randomisation test of mean(diffs) = 0 (random signs; the observed counts)."""
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0 or not np.any(d):
        return 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = 1  # the observed assignment itself
    for start in range(0, n_resamples, 2000):
        m = min(2000, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(m, d.size))
        hits += int(np.sum(np.abs(signs @ d) / d.size >= observed - 1e-15))
    return hits / (n_resamples + 1)


def holm(pvalues):
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    adj = np.empty_like(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (p.size - rank) * p[i]))
        adj[i] = running
    return adj


def t_interval(values, level=0.95):
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean() - half), float(v.mean() + half)


def summarise(results, alpha=0.05):
    """Per (data, engine, system): fold-mean of per-query means, CI, and the paired tests with Holm."""
    cells = {}
    for cfg, res in results:
        cells.setdefault((cfg["data_label"], cfg["engine"], cfg["system"]), []).append((cfg["fold"], res))
    rows = []
    for (data, engine, system), per_fold in sorted(cells.items()):
        per_fold.sort(key=lambda fr: fr[0])
        row = {"data": data, "engine": engine, "system": system, "folds": len(per_fold),
               "seconds": float(sum(r["seconds"] for _, r in per_fold))}
        for m in METRICS:
            fold_means = [float(np.nanmean(r["test"][m])) for _, r in per_fold]
            pooled = np.concatenate([np.asarray(r["test"][m], dtype=float) for _, r in per_fold])
            row[m] = float(np.mean(fold_means))
            row[m + " ci"] = t_interval(pooled)
        base = cells.get((data, engine, BASELINE[engine]))
        if base is not None and system != BASELINE[engine]:
            base = dict(base)
            for m in METRICS:
                diffs = np.concatenate([np.asarray(r["test"][m], dtype=float) - np.asarray(base[f]["test"][m], dtype=float)
                                        for f, r in per_fold if f in base])
                row[m + " diff"] = float(np.nanmean(diffs))
                row[m + " p"] = sign_flip_pvalue(diffs)
        rows.append(row)
    tested = [(i, m) for i, r in enumerate(rows) for m in METRICS if m + " p" in r]
    adjusted = holm([rows[i][m + " p"] for i, m in tested]) if tested else []
    for (i, m), p in zip(tested, adjusted):
        rows[i][m + " p_holm"] = float(p)
        rows[i][m + " significant"] = bool(p < alpha)
    return rows


# ---------------------------------------------------------------------------------------------
# command
# ---------------------------------------------------------------------------------------------
def add_arguments(p):
    p.add_argument("--data", nargs="*", default=[], help="LETOR-layout folders (Fold1..5 with train/vali/test)")
    p.add_argument("--synthetic", type=positive_int, default=None, metavar="N_QUERIES",
                   help="also the built-in MSLR-WEB10K-shaped synthetic set of N queries, in five folds")
    p.add_argument("--engines", type=csv_arg(ENGINES), default=None,
                   help="comma list (default: every installed engine)")
    p.add_argument("--objectives", type=csv_arg(OBJECTIVE_NAMES), default=None,
                   help="comma list of system names (default: DEFAULT_SYSTEMS of the engines chosen)")
    p.add_argument("--folds", type=folds_arg, default=None,
                   help="comma list of folds 1..5, e.g. 1,2 (default: every fold present)")
    p.add_argument("--quick", action="store_true",
                   help="one grid configuration, 100 rounds, two folds, 300 synthetic queries")
    p.add_argument("--rounds", type=positive_int, default=None, help="maximum boosting rounds (default 300)")
    p.add_argument("--patience", type=positive_int, default=30, help="early-stopping patience (rounds)")
    p.add_argument("--seed", type=int, default=0, help="seed of every engine")
    convention_arg(p)
    grid_args(p, "results/quality")
    return p


def _validate(a):
    """Every error a user can make, before anything trains: folders, folds, engines, objectives."""
    from lambda_objectives import load_letor_folds

    if not a.data and not a.synthetic:
        raise ValueError("give --data DIR [DIR ...] and/or --synthetic N")
    engines = a.engines or [e for e in ENGINES if importlib.util.find_spec(e) is not None]
    for e in engines:
        if importlib.util.find_spec(e) is None:
            raise ValueError(f"engine {e!r} is not installed (pip install "
                             f"'lambda_objectives[{'catboost' if e == 'catboost' else 'engines'}]')")
    wanted_systems = a.objectives or DEFAULT_SYSTEMS
    systems = [(e, n) for (e, n) in SYSTEMS if e in engines and n in wanted_systems]
    if not systems:
        raise ValueError(f"no system left: objectives {a.objectives} do not exist for engines {engines}")
    datasets = []
    wanted = a.folds
    for d in a.data:
        # names a missing folder, fold or split file (vali.txt too: selection and early stopping need it)
        folds = load_letor_folds(d, folds=wanted)
        names = [f.name for f in folds]
        if a.quick:
            names = names[:2]
        datasets.append((str(Path(d).resolve()), str(d), names))
    if a.synthetic:
        n = 300 if a.quick else a.synthetic
        names = ["Fold1", "Fold2"] if a.quick else [f"Fold{i}" for i in range(1, 6)]
        names = [f for f in names if f in wanted] if wanted else names
        if not names:
            raise ValueError(f"--folds {','.join(wanted)}: --quick runs the synthetic set's Fold1 and Fold2 only")
        datasets.append((f"synthetic:mslr:{n}:{a.seed}", f"synthetic MSLR-shaped, {n} queries", names))
    return engines, systems, datasets


def run(a):
    from lambda_objectives import convention_label

    try:
        engines, systems, datasets = _validate(a)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    grid = [dict(zip(("leaves", "lr", "min_data"), v)) for v in _product(GRID["quick" if a.quick else "full"])]
    rounds = a.rounds or (100 if a.quick else 300)
    tasks = [{"data": key, "data_label": label, "fold": f, "engine": e, "system": s, "grid": grid, "rounds": rounds,
              "patience": a.patience, "seed": a.seed, "convention": a.convention}
             for key, label, folds in datasets for f in folds for e, s in systems]
    out = Path(a.out)
    store = RunStore(out / "runs", "quality")
    t0 = time.perf_counter()

    def done(cfg, res):
        log(f"done {cfg['data_label']} {cfg['fold']} {cfg['engine']} {cfg['system']}: test NDCG@10 "
            f"{np.mean(res['test']['ndcg@10']):.4f} (vali {res['vali_ndcg@10']:.4f}, {res['seconds']:.0f} s)")

    results = run_grid(tasks, one_task, store, jobs=a.jobs, scheduler=a.scheduler, force=a.force, desc="quality",
                       meta={"machine": machine_record()}, on_result=done, isolate=True,
                       batch_by=lambda c: (c["data"], c["fold"], c["engine"]))
    rows = summarise(results)
    wall = time.perf_counter() - t0
    head = (f"Test metrics ×100, mean over folds of the per-query means (95 % t intervals over the pooled test "
            f"queries: summary.json and quality.png). NDCG: {convention_label(a.convention)}; ERR@10: R = (2^g − 1)/2^max, max = the test file's "
            f"largest grade; MAP@10: relevant = label > 0, normalised by all relevant documents (trec_eval map_cut). Per (engine, objective), the grid "
            f"{GRID['quick' if a.quick else 'full']} is searched on validation NDCG@10 (LightGBM convention) with "
            f"early stopping (patience {a.patience}, at most {rounds} rounds). ▲/▼: better/worse than the engine's "
            f"default native objective ({', '.join(f'{e}: {b}' for e, b in BASELINE.items() if e in engines)}) in a "
            "paired sign-flip randomisation test over the pooled test queries, Holm-corrected across the table, "
            "p < 0.05.")
    md = [f"# Ranking quality ({'quick' if a.quick else 'full'} run)", "", head, ""]
    for key, label, folds in datasets:
        md += [f"## {label} ({len(folds)} folds)", "",
               "| engine | objective | " + " | ".join(METRICS) + " | vs native NDCG@10 (p Holm) | seconds |",
               "|---|---|" + "---:|" * (len(METRICS) + 2)]
        for r in (r for r in rows if r["data"] == label):
            cells = []
            for m in METRICS:
                mark = ""
                if r.get(m + " significant"):
                    mark = " ▲" if r[m + " diff"] > 0 else " ▼"
                cells.append(f"{100 * r[m]:.2f}{mark}")
            vs = "—" if "ndcg@10 diff" not in r else f"{100 * r['ndcg@10 diff']:+.2f} ({r['ndcg@10 p_holm']:.3g})"
            md.append(f"| {r['engine']} | {r['system']} | " + " | ".join(cells) + f" | {vs} | {r['seconds']:.0f} |")
        md.append("")
    md.append(f"Wall time of this run: {wall / 60:.1f} min for {len(tasks)} tasks, --jobs {a.jobs} (tasks reused from "
              f"the run store take no time); training time summed over tasks: "
              f"{sum(r['seconds'] for r in rows) / 60:.1f} min.")
    out.mkdir(parents=True, exist_ok=True)
    (out / "quality.md").write_text("\n".join(md) + "\n")
    with open(out / "quality.csv", "w") as fh:
        cols = ["data", "engine", "system", *METRICS, *(m + " diff" for m in METRICS), *(m + " p_holm" for m in METRICS)]
        fh.write(",".join(cols) + "\n")
        for r in rows:
            fh.write(",".join(str(r.get(c, "")) if not isinstance(r.get(c), float) else f"{r[c]:.6f}" for c in cols)
                     + "\n")
    (out / "summary.json").write_text(json.dumps({"header": head, "rows": rows, "wall_seconds": wall,
                                                  "machine": machine_record()}, indent=2, default=float))
    _plot(rows, datasets, out / "quality.png")
    print("\n".join(md))
    print(f"written to {out}/quality.md, quality.csv, summary.json, quality.png")
    return 0


def _product(grid):
    import itertools

    return itertools.product(grid["leaves"], grid["lr"], grid["min_data"])


def _plot(rows, datasets, path):
    """Per data set: test NDCG@10 of every (engine, objective) with its 95 % interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(6.5 * len(datasets), 0.35 * len(SYSTEMS) + 1.5),
                             squeeze=False)
    colors = {"lightgbm": "tab:green", "xgboost": "tab:blue", "catboost": "tab:orange"}
    for ax, (_, label, _) in zip(axes[0], datasets):
        rs = [r for r in rows if r["data"] == label]
        for i, r in enumerate(rs):
            lo, hi = r["ndcg@10 ci"]
            ax.errorbar(100 * r["ndcg@10"], i, xerr=[[100 * (r["ndcg@10"] - lo)], [100 * (hi - r["ndcg@10"])]],
                        fmt="o", color=colors[r["engine"]], capsize=3)
        ax.set_yticks(range(len(rs)))
        ax.set_yticklabels([f"{r['engine']}: {r['system']}" for r in rs], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("test NDCG@10 ×100 (95 % interval over test queries)")
        ax.set_title(dataset_name(label), fontsize=10)  # the data set's name, not the path given
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    from .__main__ import main as cli

    return cli(["quality", *([] if argv is None else argv)])
