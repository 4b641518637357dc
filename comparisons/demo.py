"""The README's main job: the whole pipeline on the built-in synthetic data set.

Trains, on the same seeded web-like synthetic data (:func:`lambda_objectives.make_ranking`):
LightGBM native ``lambdarank``; LightGBM with our exact ΔNDCG objective (the adapters' default:
the full list, no truncation, which trained the better rankers in docs/reproducing/quality.md), with and
without LightGBM's normalisation; LightGBM with our ``preset="lightgbm"`` (which must reproduce
native bit for bit); LightGBM with our exact ΔERR objective; XGBoost native ``rank:ndcg`` and with
our objective; and the reference MART trainer with the SE and OLE split criteria. Prints a table of held-out NDCG@1/3/10, ERR@10
and wall time, and writes it to ``results/demo/``.
"""

import json
import time
from pathlib import Path

import numpy as np

from ._cli import positive_int
from ._machine import log, machine_record, progress
from ._runner import run_isolated

METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err@10")


def _data(n_queries, seed):
    from lambda_objectives.datasets import make_ranking, train_test_split_queries

    data = make_ranking(n_queries, docs_per_query=(10, 120), n_features=30, seed=seed)
    return data, *train_test_split_queries(data, 0.25, seed=seed)


def _row(name, scores, test, seconds, note=""):
    from lambda_objectives import metric_table

    row = {"system": name, **metric_table(scores, test.y, test.group_ptr, METRICS), "seconds": seconds}
    if note:
        row["note"] = note
    return row


def _timed(train_fn, warm_fn):
    """Seconds of ``train_fn()`` after ``warm_fn()`` compiled every numba kernel it uses."""
    warm_fn()
    t = time.perf_counter()
    model = train_fn()
    return model, time.perf_counter() - t


def lightgbm_rows(n_queries, rounds, seed, threads):
    """The LightGBM systems, in a process of their own."""
    import lightgbm as lgb

    from lambda_objectives import LightGBMObjective

    _, train, test = _data(n_queries, seed)
    base = {"num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20, "verbose": -1,
            "num_threads": threads, "deterministic": True, "force_row_wise": True, "seed": seed}
    systems = [
        ("LightGBM native lambdarank", lambda: "lambdarank"),
        ("LightGBM + ours, preset=lightgbm", lambda: LightGBMObjective(preset="lightgbm", n_threads=threads)),
        ("LightGBM + ours, exact ΔNDCG", lambda: LightGBMObjective("ndcg", n_threads=threads)),
        ("LightGBM + ours, exact ΔNDCG, normalize=lambdarank",
         lambda: LightGBMObjective("ndcg", normalize="lambdarank", n_threads=threads)),
        ("LightGBM + ours, exact ΔERR", lambda: LightGBMObjective("err", n_threads=threads)),
    ]
    rows, native = [], None
    for name, make in systems:
        booster, secs = _timed(
            lambda: lgb.train(dict(base, objective=make()), lgb.Dataset(train.X, train.y, group=train.group), rounds),
            lambda: lgb.train(dict(base, objective=make()), lgb.Dataset(train.X, train.y, group=train.group), 1))
        pred = booster.predict(test.X)
        note = ""
        if native is None:
            native = pred
        elif "preset=lightgbm" in name:
            note = f"max abs prediction difference to native: {np.max(np.abs(pred - native)):.3g}"
        rows.append(_row(name, pred, test, secs, note))
        log(f"  {name}: {secs:.2f} s")
    return rows


def xgboost_rows(n_queries, rounds, seed, threads):
    """The XGBoost systems, in a process of their own."""
    import xgboost as xgb

    from lambda_objectives import XGBoostObjective

    _, train, test = _data(n_queries, seed)
    dtr = xgb.DMatrix(train.X, train.y, group=train.group)
    dte = xgb.DMatrix(test.X)
    xparams = {"max_leaves": 31, "grow_policy": "lossguide", "tree_method": "hist", "eta": 0.1,
               "nthread": threads, "seed": seed}
    rows = []
    booster, secs = _timed(lambda: xgb.train(dict(xparams, objective="rank:ndcg"), dtr, rounds),
                           lambda: xgb.train(dict(xparams, objective="rank:ndcg"), dtr, 1))
    rows.append(_row("XGBoost native rank:ndcg", booster.predict(dte), test, secs))
    obj = XGBoostObjective("ndcg", n_threads=threads)
    booster, secs = _timed(lambda: xgb.train(dict(xparams, **obj.params()), dtr, rounds, obj=obj),
                           lambda: xgb.train(dict(xparams, **obj.params()), dtr, 1, obj=obj))
    rows.append(_row("XGBoost + ours, exact ΔNDCG", booster.predict(dte, output_margin=True), test, secs))
    for r in rows:
        log(f"  {r['system']}: {r['seconds']:.2f} s")
    return rows


def reference_rows(n_queries, rounds, seed, threads):
    """The reference trainer with SE and OLE, in a process of its own."""
    from reference import MARTRanker

    _, train, test = _data(n_queries, seed)
    rows = []
    for criterion in ("se", "ole"):
        def make(n):
            return MARTRanker(objective="lambda", metric="ndcg", criterion=criterion, num_leaves=31,
                              learning_rate=0.1, n_estimators=n, n_threads=threads, random_state=seed)
        model, secs = _timed(lambda: make(rounds).fit(train.X, train.y, group=train.group, history_loss=False),
                             lambda: make(1).fit(train.X, train.y, group=train.group, history_loss=False))
        rows.append(_row(f"reference MART ΔNDCG, {criterion.upper()}", model.predict(test.X), test, secs))
        log(f"  {rows[-1]['system']}: {secs:.2f} s")
    return rows


def run_demo(n_queries=600, rounds=50, seed=0, threads=2, out="results/demo"):
    """Train every system once (each engine in a process of its own) and return the result rows."""
    rows = []
    for step in progress([lightgbm_rows, xgboost_rows, reference_rows], desc="demo", unit="engine"):
        rows += run_isolated(step, n_queries, rounds, seed, threads)
    data, train, test = _data(n_queries, seed)
    rows.append(_row("random scores (floor)", np.random.default_rng(seed).normal(size=test.y.shape[0]), test, 0.0))
    result = {"data": f"synthetic web-like: {n_queries} queries ({train.n_queries} train / {test.n_queries} test), "
                      f"{data.X.shape[0]} documents, 30 features, grades 0..4",
              "rounds": rounds, "threads": threads, "machine": machine_record(), "rows": rows}
    if out:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "demo.json").write_text(json.dumps(result, indent=2, default=float))
        (out / "demo.md").write_text(to_markdown(result))
    return result


def to_markdown(result):
    from lambda_objectives import convention_label

    head = "| system | " + " | ".join(METRICS) + " | seconds | note |\n|---|" + "---:|" * (len(METRICS) + 1) + "---|\n"
    body = "".join(
        f"| {r['system']} | " + " | ".join(f"{r[m]:.4f}" for m in METRICS) + f" | {r['seconds']:.2f} | {r.get('note', '')} |\n"
        for r in result["rows"])
    return (f"Held-out metrics, {result['data']}, {result['rounds']} rounds. NDCG: {convention_label('lightgbm')}; "
            "ERR@10 with R = (2^g − 1)/2^4. Seconds: training wall time after a warm-up that compiled every kernel "
            f"(JIT excluded), {result.get('threads', 2)} threads, each engine in a process of its own.\n\n" + head + body)


def add_arguments(p):
    p.add_argument("--queries", type=positive_int, default=600, help="synthetic queries (a quarter held out)")
    p.add_argument("--rounds", type=positive_int, default=50, help="boosting rounds of every system")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and of every system")
    p.add_argument("--threads", type=positive_int, default=2, help="threads of every system")
    p.add_argument("--out", default="results/demo", help="output folder")
    return p


def run(a):
    result = run_demo(a.queries, a.rounds, a.seed, a.threads, a.out)
    print(to_markdown(result))
    print(f"written to {a.out}/demo.md and demo.json")
    return 0


def main(argv=None):
    from .__main__ import main as cli

    return cli(["demo", *([] if argv is None else argv)])
