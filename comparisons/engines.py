"""``python -m comparisons engines --data DIR``: one objective across trainers and engines.

Systems, on every fold present, each trained on the fold's train file and scored on its test
file: the reference trainer with SE and with OLE, LightGBM and XGBoost with our objective, and
LightGBM ``lambdarank`` / XGBoost ``rank:ndcg`` native. Equal tree settings (leaves, learning
rate, rounds, min data per leaf). Each system runs in its own process (LightGBM and XGBoost
loaded in one process slow each other down); finished runs are stored and skipped on re-runs.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from ._machine import machine_record, progress
from .paper import _versions
from .runstore import RunStore

SYSTEMS = ("reference-se", "reference-ole", "lightgbm-ours", "xgboost-ours", "lightgbm-native", "xgboost-native")
METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err@10", "map@10", "mrr@10")

_CHILD = r"""
import json, sys, time
import numpy as np
from lambda_objectives import load_letor_folds, metric_table
cfg = json.loads(sys.argv[1])
fold = load_letor_folds(cfg["data"], folds=[cfg["fold"]])[0]
tr, te = fold.train, fold.test
sysname, metric, k = cfg["system"], cfg["metric"], cfg["k"]
t = time.perf_counter()
if sysname.startswith("reference"):
    from reference import MARTRanker
    m = MARTRanker(objective="lambda", metric=metric, k=k, criterion=sysname.split("-")[1], num_leaves=cfg["leaves"],
                   learning_rate=cfg["lr"], n_estimators=cfg["rounds"], min_data_in_leaf=cfg["min_data"],
                   random_state=cfg["seed"])
    m.fit(tr.X, tr.y, group=tr.group, history_loss=False)
    pred = m.predict(te.X)
elif sysname.startswith("lightgbm"):
    import lightgbm as lgb
    from lambda_objectives import LightGBMObjective
    obj = LightGBMObjective(metric, k=k) if sysname.endswith("ours") else "lambdarank"
    p = dict(objective=obj, num_leaves=cfg["leaves"], learning_rate=cfg["lr"], min_data_in_leaf=cfg["min_data"],
             verbose=-1, seed=cfg["seed"], deterministic=True, force_row_wise=True)
    pred = lgb.train(p, lgb.Dataset(tr.X, tr.y, group=tr.group), cfg["rounds"]).predict(te.X)
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
res = {"seconds": seconds, **metric_table(pred, te.y, te.group_ptr, metrics=%s)}
print("@@" + json.dumps(res))
""" % (METRICS,)


def _run(cfg):
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cfg)], capture_output=True, text=True)
    i = proc.stdout.rfind("@@")
    if proc.returncode != 0 or i < 0:
        raise RuntimeError(f"{cfg['system']} on {cfg['fold']} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout[i + 2:])


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m comparisons engines", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--metric", default="ndcg", choices=("ndcg", "err", "map", "mrr", "ranknet"))
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--leaves", type=int, default=31)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--min-data", type=int, default=20)
    p.add_argument("--folds", default=None)
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/engines")
    a = p.parse_args(argv)
    from lambda_objectives import load_letor_folds

    systems = [s for s in a.systems.split(",") if s]
    if any(s not in SYSTEMS for s in systems):
        p.error(f"--systems takes {', '.join(SYSTEMS)}")
    try:
        folds = [f.name for f in load_letor_folds(a.data, folds=a.folds.split(",") if a.folds else None)]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(a.out)
    store = RunStore(out / "runs", "engines")
    meta = {**_versions(), "machine_record": machine_record()}
    rows = []
    grid = [(f, s) for f in folds for s in systems]
    for fold, system in progress(grid, desc="engines"):
        cfg = {"data": str(Path(a.data).resolve()), "fold": fold, "system": system, "metric": a.metric, "k": a.k,
               "rounds": a.rounds, "leaves": a.leaves, "lr": a.lr, "min_data": a.min_data, "seed": a.seed}
        res = store.load(cfg)
        if res is None:
            res = _run(cfg)
            store.save(cfg, res, meta)
            print(f"done {fold} {system}: NDCG@10 {res['ndcg@10']:.4f} ({res['seconds']:.1f} s)", flush=True)
        rows.append({"fold": fold, "system": system, **res})
    table = ["| system | " + " | ".join(METRICS) + " | seconds |", "|---|" + "---:|" * (len(METRICS) + 1)]
    means = {}
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        means[s] = {m: float(np.mean([r[m] for r in rs])) for m in METRICS + ("seconds",)}
        table.append(f"| {s} | " + " | ".join(f"{means[s][m]:.4f}" for m in METRICS) + f" | {means[s]['seconds']:.1f} |")
    title = (f"Δ{a.metric.upper()}@{a.k} objective on {a.data}: test metrics, mean of {len(folds)} fold(s); "
             f"{a.rounds} rounds, {a.leaves} leaves, learning rate {a.lr} (native systems use their own objective).")
    (out / "engines.md").write_text(title + "\n\n" + "\n".join(table) + "\n")
    with open(out / "engines.csv", "w") as fh:
        fh.write("fold,system," + ",".join(METRICS) + ",seconds\n")
        for r in rows:
            fh.write(f"{r['fold']},{r['system']}," + ",".join(f"{r[m]:.6f}" for m in METRICS) + f",{r['seconds']:.3f}\n")
    _plot(rows, systems, out / "engines.png")
    print(title + "\n\n" + "\n".join(table))
    print(f"written to {out}/engines.md, engines.csv, engines.png")
    return 0


def _plot(rows, systems, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.5))
    width = 0.8 / len(systems)
    x = np.arange(len(METRICS))
    for i, s in enumerate(systems):
        vals = np.array([[r[m] for m in METRICS] for r in rows if r["system"] == s])
        ax.bar(x + i * width, vals.mean(axis=0), width, yerr=vals.std(axis=0) if len(vals) > 1 else None, label=s)
    ax.set_xticks(x + width * (len(systems) - 1) / 2)
    ax.set_xticklabels(METRICS)
    lo = min(r[m] for r in rows for m in METRICS)
    ax.set_ylim(max(0.0, lo - 0.05), None)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
