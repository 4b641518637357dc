"""``python -m comparisons engines --data DIR``: one objective across trainers and engines.

Systems, on every fold present, each trained on the fold's train file and scored on its test
file: the reference trainer with SE and with OLE, LightGBM and XGBoost with our objective, and
LightGBM ``lambdarank`` / XGBoost ``rank:ndcg`` / CatBoost ``LambdaMart:metric=NDCG`` (depth
``log2(leaves + 1)``, when CatBoost is installed) native. Equal tree settings (leaves, learning
rate, rounds, min data per leaf). Each system runs in its own process (LightGBM and XGBoost
loaded in one process slow each other down); finished runs are stored and skipped on re-runs.
"""

import csv
import sys
import time
from pathlib import Path

import numpy as np

from lambda_objectives import OBJECTIVES

from ._cli import convention_arg, csv_arg, folds_arg, grid_args, int_at_least, positive_float, positive_int
from ._machine import log, machine_record
from ._runner import run_grid
from .runstore import RunStore

SYSTEMS = ("reference-se", "reference-ole", "lightgbm-ours", "xgboost-ours", "lightgbm-native", "xgboost-native",
           "catboost-native")
#: the systems run by default (CatBoost only when it is installed)
DEFAULT_SYSTEMS = SYSTEMS[:-1]
METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err@10", "map@10", "mrr@10")


def one_run(cfg):
    """Train one system on one fold (run in a process of its own) and score it on the test file."""
    from lambda_objectives import metric_table

    from ._data import load_fold

    tr, _, te = load_fold(cfg["data"], cfg["fold"])
    sysname, metric, k = cfg["system"], cfg["metric"], cfg["k"]
    t = time.perf_counter()
    if sysname.startswith("reference"):
        from reference import MARTRanker

        m = MARTRanker(objective="lambda", metric=metric, k=k, criterion=sysname.split("-")[1],
                       num_leaves=cfg["leaves"], learning_rate=cfg["lr"], n_estimators=cfg["rounds"],
                       min_data_in_leaf=cfg["min_data"], random_state=cfg["seed"])
        m.fit(tr.X, tr.y, group=tr.group, history_loss=False)
        pred = m.predict(te.X)
    elif sysname.startswith("lightgbm"):
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        obj = LightGBMObjective(metric, k=k) if sysname.endswith("ours") else "lambdarank"
        p = dict(objective=obj, num_leaves=cfg["leaves"], learning_rate=cfg["lr"], min_data_in_leaf=cfg["min_data"],
                 verbose=-1, seed=cfg["seed"], deterministic=True, force_row_wise=True)
        pred = lgb.train(p, lgb.Dataset(tr.X, tr.y, group=tr.group), cfg["rounds"]).predict(te.X)
    elif sysname == "catboost-native":
        import catboost as cb

        def pool(d):
            return cb.Pool(d.X, d.y, group_id=d.qid)  # qids are contiguous per query, as CatBoost needs

        m = cb.CatBoost(dict(loss_function="LambdaMart:metric=NDCG", iterations=cfg["rounds"],
                             depth=max(2, int(np.log2(cfg["leaves"] + 1))), learning_rate=cfg["lr"],
                             min_data_in_leaf=cfg["min_data"], random_seed=cfg["seed"], verbose=False,
                             allow_writing_files=False))
        m.fit(pool(tr))
        pred = m.predict(te.X)
    else:
        import xgboost as xgb

        from lambda_objectives import XGBoostObjective

        p = dict(max_leaves=cfg["leaves"], grow_policy="lossguide", tree_method="hist", eta=cfg["lr"], seed=cfg["seed"])
        dtr = xgb.DMatrix(tr.X, tr.y, group=tr.group)
        if sysname.endswith("ours"):
            obj = XGBoostObjective(metric, k=k)
            b = xgb.train(dict(p, **obj.params()), dtr, cfg["rounds"], obj=obj)
        else:
            b = xgb.train(dict(p, objective="rank:ndcg"), dtr, cfg["rounds"])
        pred = b.predict(xgb.DMatrix(te.X), output_margin=True)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, **metric_table(pred, te.y, te.group_ptr, metrics=METRICS, convention=cfg["convention"])}


def add_arguments(p):
    from ._data import DATA_HELP

    p.add_argument("--data", required=True, help=DATA_HELP)
    p.add_argument("--metric", default="ndcg", choices=OBJECTIVES,
                   help="the metric of our lambda objective")
    p.add_argument("--k", type=positive_int, default=None,
                   help="truncate our objective's lambdas at rank k (default: the full list, the adapters' default, "
                        "which trained better rankers than truncation at 10 in docs/reproducing/quality.md)")
    p.add_argument("--rounds", type=positive_int, default=100, help="boosting rounds")
    p.add_argument("--leaves", type=int_at_least(2), default=31, help="leaves per tree (>= 2)")
    p.add_argument("--lr", type=positive_float, default=0.1, help="learning rate")
    p.add_argument("--min-data", type=positive_int, default=20, help="minimum documents per leaf")
    p.add_argument("--folds", type=folds_arg, default=None,
                   help="comma list of folds 1..5, e.g. 1,2 (default: every fold present)")
    p.add_argument("--systems", type=csv_arg(SYSTEMS), default=None,
                   help="comma list (default: all; catboost-native when CatBoost is installed)")
    p.add_argument("--seed", type=int, default=0, help="random seed of every system")
    convention_arg(p)
    grid_args(p, "results/engines")
    return p


def run(a):
    from lambda_objectives import convention_label

    from ._data import resolve_data

    from lambda_objectives._registry import objective_options

    if a.k is not None and "k" not in objective_options(a.metric):
        # refused here, not in every training child: the objective would raise there for each cell
        print(f"error: --k: the {a.metric} objective takes no cut-off (it has no k); drop --k", file=sys.stderr)
        return 2
    try:
        ds = resolve_data(a.data, a.folds, a.seed)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ds.note:
        log(ds.note)
    folds = ds.folds
    import importlib.util

    systems = a.systems or (list(SYSTEMS) if importlib.util.find_spec("catboost") else list(DEFAULT_SYSTEMS))
    if "catboost-native" in systems and importlib.util.find_spec("catboost") is None:
        print("error: catboost-native needs CatBoost: pip install 'lambda_objectives[catboost]'", file=sys.stderr)
        return 2
    out = Path(a.out)
    store = RunStore(out / "runs", "engines")
    grid = [{"data": ds.key, "fold": f, "system": s, "metric": a.metric, "k": a.k,
             "rounds": a.rounds, "leaves": a.leaves, "lr": a.lr, "min_data": a.min_data, "seed": a.seed,
             "convention": a.convention} for f in folds for s in systems]

    def done(cfg, res):
        log(f"done {cfg['fold']} {cfg['system']}: NDCG@10 {res['ndcg@10']:.4f} ({res['seconds']:.1f} s)")

    results = run_grid(grid, one_run, store, jobs=a.jobs, scheduler=a.scheduler, force=a.force, desc="engines",
                       meta={"machine": machine_record()}, on_result=done, isolate=True)
    rows = [{"fold": c["fold"], "system": c["system"], **r} for c, r in results]
    table = ["| system | " + " | ".join(METRICS) + " | seconds |", "|---|" + "---:|" * (len(METRICS) + 1)]
    means = {}
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        means[s] = {m: float(np.mean([r[m] for r in rs])) for m in METRICS + ("seconds",)}
        table.append(f"| {s} | " + " | ".join(f"{means[s][m]:.4f}" for m in METRICS) + f" | {means[s]['seconds']:.1f} |")
    objective = f"Δ{a.metric.upper()}" + ("" if a.k is None else f"@{a.k}") + (" (full list)" if a.k is None else "")
    title = (f"{objective} objective on {ds.label} ({a.data}): test metrics, mean of {len(folds)} fold(s); "
             f"{a.rounds} rounds, {a.leaves} leaves, learning rate {a.lr} (native systems use their own objective). "
             f"NDCG: {convention_label(a.convention)}; ERR@10 with each test file's largest grade; MAP/MRR: "
             "relevant = label > 0. Seconds: training wall time, each system in a process of its own.")
    print(title + "\n\n" + "\n".join(table))  # first: a read-only --out still shows the table
    (out / "engines.md").write_text(title + "\n\n" + "\n".join(table) + "\n")
    with open(out / "engines.csv", "w", newline="") as fh:
        w = csv.writer(fh)  # quotes any field with a comma
        w.writerow(["fold", "system", *METRICS, "seconds"])
        for r in rows:
            w.writerow([r["fold"], r["system"], *(f"{r[m]:.6f}" for m in METRICS), f"{r['seconds']:.3f}"])
    _plot(rows, systems, out / "engines.png", title=figure_title(ds.label, objective, len(folds)))
    print(f"written to {out}/engines.md, engines.csv, engines.png")
    return 0


def main(argv=None):
    from .__main__ import main as cli

    return cli(["engines", *([] if argv is None else argv)])


def figure_title(label, objective, n_folds):
    """The title of ``engines.png``: the data set's name (``label`` of :func:`comparisons._data.resolve_data`,
    never the path given), the objective, the folds and what the bars are."""
    return (f"{label}: {objective} objective, test metrics, {n_folds} fold(s)"
            + ("; bars: SD over folds" if n_folds > 1 else "; one fold, no bars") + " (axes zoomed, not from 0)")


def _plot(rows, systems, path, title=""):
    """One panel per metric: every system's mean over folds as a point with the folds' standard
    deviation (fold difficulty, shared by the systems, dominates it: a t interval over 2–5 folds
    would hide every difference), each panel's axis zoomed to its values, so differences of 0.01
    stay visible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(METRICS), figsize=(2.4 * len(METRICS) + 1, 0.32 * len(systems) + 1.6),
                             sharey=True, squeeze=False)
    y = np.arange(len(systems))
    for ax, m in zip(axes[0], METRICS):
        for i, s in enumerate(systems):
            vals = np.array([r[m] for r in rows if r["system"] == s], dtype=float)
            half = vals.std(ddof=1) if vals.size > 1 else 0.0
            ax.errorbar(vals.mean(), i, xerr=half if half else None, fmt="o", color=f"C{i}", capsize=3, ms=4)
        ax.set_title(m, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7)
        ax.margins(x=0.15)  # zoomed to the values: the axis does not start at 0
    axes[0][0].set_yticks(y)
    axes[0][0].set_yticklabels(systems, fontsize=8)
    axes[0][0].invert_yaxis()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
