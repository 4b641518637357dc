"""The README's main job: the whole pipeline on the built-in synthetic data set.

Trains, on the same seeded web-like synthetic data (:func:`lambda_objectives.make_ranking`):
LightGBM native ``lambdarank``; LightGBM with our exact ΔNDCG@10 objective; LightGBM with our
``preset="lightgbm"`` (which must reproduce native bit for bit); LightGBM with our ΔERR@10
objective; XGBoost native ``rank:ndcg`` and with our objective; and the reference MART trainer with
the SE and OLE split criteria when it is installed. Prints a table of held-out NDCG@1/3/10, ERR@10
and wall time, and writes it to ``results/demo/``.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from lambda_objectives import LightGBMObjective, XGBoostObjective, metric_table
from lambda_objectives.datasets import make_ranking, train_test_split_queries
from reference import MARTRanker

from ._machine import machine_record

METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err@10")


def _row(name, scores, test, seconds, note=""):
    row = {"system": name, **metric_table(scores, test.y, test.group_ptr, METRICS), "seconds": seconds}
    if note:
        row["note"] = note
    return row


def run(n_queries=600, rounds=50, seed=0, threads=2, out="results/demo"):
    """Train every system once and return the result rows."""
    import lightgbm as lgb

    data = make_ranking(n_queries, docs_per_query=(10, 120), n_features=30, seed=seed)
    train, test = train_test_split_queries(data, 0.25, seed=seed)
    rows = []
    base = {"num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20, "verbose": -1,
            "num_threads": threads, "deterministic": True, "force_row_wise": True, "seed": seed}
    lgb_systems = [
        ("LightGBM native lambdarank", dict(base, objective="lambdarank"), ""),
        ("LightGBM + ours, preset=lightgbm", dict(base, objective=LightGBMObjective(preset="lightgbm")), ""),
        ("LightGBM + ours, exact ΔNDCG@10", dict(base, objective=LightGBMObjective("ndcg", k=10)), ""),
        ("LightGBM + ours, exact ΔNDCG@10, normalize=lambdarank",
         dict(base, objective=LightGBMObjective("ndcg", k=10, normalize="lambdarank")), ""),
        ("LightGBM + ours, exact ΔERR@10", dict(base, objective=LightGBMObjective("err", k=10)), ""),
    ]
    native_pred = None
    for name, params, note in lgb_systems:
        ds = lgb.Dataset(train.X, train.y, group=train.group)
        t = time.perf_counter()
        booster = lgb.train(params, ds, rounds)
        secs = time.perf_counter() - t
        pred = booster.predict(test.X)
        if native_pred is None:
            native_pred = pred
        elif "preset=lightgbm" in name:
            note = f"max abs prediction difference to native: {np.max(np.abs(pred - native_pred)):.3g}"
        rows.append(_row(name, pred, test, secs, note))
    import xgboost as xgb

    dtr = xgb.DMatrix(train.X, train.y, group=train.group)
    dte = xgb.DMatrix(test.X)
    xparams = {"max_leaves": 31, "grow_policy": "lossguide", "tree_method": "hist", "eta": 0.1,
               "nthread": threads, "seed": seed}
    t = time.perf_counter()
    booster = xgb.train(dict(xparams, objective="rank:ndcg"), dtr, rounds)
    rows.append(_row("XGBoost native rank:ndcg", booster.predict(dte), test, time.perf_counter() - t))
    obj = XGBoostObjective("ndcg", k=10)
    t = time.perf_counter()
    booster = xgb.train(dict(xparams, **obj.params()), dtr, rounds, obj=obj)
    rows.append(_row("XGBoost + ours, exact ΔNDCG@10", booster.predict(dte, output_margin=True), test,
                     time.perf_counter() - t))
    for criterion in ("se", "ole"):
        model = MARTRanker(objective="lambda", metric="ndcg", k=10, criterion=criterion, num_leaves=31,
                           learning_rate=0.1, n_estimators=rounds, n_threads=threads, random_state=seed)
        t = time.perf_counter()
        model.fit(train.X, train.y, group=train.group)
        rows.append(_row(f"reference MART ΔNDCG@10, {criterion.upper()}", model.predict(test.X), test,
                         time.perf_counter() - t))
    rows.append(_row("random scores (floor)", np.random.default_rng(seed).normal(size=test.y.shape[0]), test, 0.0))
    result = {"data": f"synthetic web-like: {n_queries} queries ({train.n_queries} train / {test.n_queries} test), "
                      f"{data.X.shape[0]} documents, 30 features, grades 0..4",
              "rounds": rounds, "machine": machine_record(), "rows": rows}
    if out:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "demo.json").write_text(json.dumps(result, indent=2, default=float))
        (out / "demo.md").write_text(to_markdown(result))
    return result


def to_markdown(result):
    head = "| system | " + " | ".join(METRICS) + " | seconds | note |\n|---|" + "---:|" * (len(METRICS) + 1) + "---|\n"
    body = "".join(
        f"| {r['system']} | " + " | ".join(f"{r[m]:.4f}" for m in METRICS) + f" | {r['seconds']:.2f} | {r.get('note', '')} |\n"
        for r in result["rows"])
    return f"Held-out metrics, {result['data']}, {result['rounds']} rounds.\n\n" + head + body


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m comparisons demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=600)
    p.add_argument("--rounds", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default="results/demo")
    a = p.parse_args(argv)
    result = run(a.queries, a.rounds, a.seed, a.threads, a.out)
    print(to_markdown(result))
    print(f"written to {a.out}/demo.md and demo.json")
    return 0
