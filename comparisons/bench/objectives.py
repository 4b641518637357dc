"""Benchmark (issue #33): what each of our objectives costs inside LightGBM and XGBoost, against the
engine's default native ranking objective (LightGBM ``lambdarank``, XGBoost ``rank:ndcg``).

MSLR-shaped synthetic data (grades 0..4, ~120 documents a query, 136 features), equal tree settings
(31 leaves, 255 bins, learning rate 0.1), the same number of rounds for every objective. Per engine
(each in a fresh process: their OpenMP runtimes interfere) and thread count, every objective is
trained in turn with the native one (a, b, c, ..., a, b, c, ...), so a slow phase of the machine
falls on all alike. Two figures per objective, each a ratio against native in the same run:

* ``train ÷ native``: whole training time. Trees differ between objectives (other gradients give
  other splits), so this is what a user pays, not only the objective;
* ``gradient ÷ native round``: our objective callback alone (the engine's hand-over, our kernel and
  the checks), timed on the same training margins, ÷ one native round (training ÷ rounds). The
  natives' own gradient time is inside their round and cannot be timed apart without instrumenting
  the engine; ``comparisons.bench.long_lists`` estimates it by subtraction for ``lambdarank``/``rank:ndcg``.

The objectives are the ones issue #33 added or named: YetiRank/YetiLoss (classic, MRR, MAP modes),
PL-Rank-3 with Hessian (E[DCG@10], 200 rankings a query), softmax (CatBoost's QuerySoftMax), ListMLE,
and the exact ΔMRR@10 / ΔMAP@10 / ΔNDCG lambdas. Min and median over repeats.

Run: ``python -m comparisons.bench.objectives [--quick] [--repeats R]``.
"""

import argparse
import json

import numpy as np

from .._cli import csv_arg
from .._machine import machine_record
from .._runner import run_isolated
from . import THREADS, interleaved, ratio, timings
from .adapters import _make_data

#: name -> (objective, options): ours, as ``LightGBMObjective(objective, **options)`` / ``XGBoostObjective``
OBJECTIVES = {
    "ndcg (exact ΔNDCG, full list)": ("ndcg", {}),
    "mrr@10 (exact ΔMRR)": ("mrr@10", {}),
    "map@10 (exact ΔMAP)": ("map@10", {}),
    "yetirank (classic)": ("yetirank", {"seed": 0}),
    "yetirank mode=mrr": ("yetirank", {"mode": "mrr", "seed": 0}),
    "yetirank mode=map": ("yetirank", {"mode": "map", "seed": 0}),
    "plrank@10 (PL-Rank-3 + Hessian)": ("plrank@10", {"seed": 0}),
    "softmax": ("softmax", {}),
    "listmle": ("listmle", {}),
}
NATIVE = {"lightgbm": "lambdarank", "xgboost": "rank:ndcg"}


def _engine_side(engine, n_rows, rounds, nt, repeats, names):
    """Every objective of ``names`` and the native one in this (fresh) process, trained in turn."""
    import numba

    X, y, ptr = _make_data(n_rows, 136, 120)  # bench.adapters' MSLR-shaped set
    sizes = np.diff(ptr)
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        ds = lgb.Dataset(X, y, group=sizes, params={"max_bin": 255, "verbose": -1}).construct()
        p = dict(num_leaves=31, learning_rate=0.1, min_data_in_leaf=20, max_bin=255, num_threads=nt, verbose=-1,
                 force_row_wise=True)
        objs = {n: LightGBMObjective(OBJECTIVES[n][0], n_threads=nt, **OBJECTIVES[n][1]) for n in names}

        def train(obj):
            return lgb.train({**p, "objective": obj}, ds, rounds)
        version = lgb.__version__
    else:
        import xgboost as xgb

        from lambda_objectives import XGBoostObjective

        ds = xgb.DMatrix(X, y, group=sizes)
        p = dict(max_depth=0, max_leaves=31, grow_policy="lossguide", eta=0.1, tree_method="hist", max_bin=255,
                 nthread=nt, base_score=0.0)
        objs = {n: XGBoostObjective(OBJECTIVES[n][0], n_threads=nt, **OBJECTIVES[n][1]) for n in names}

        def train(obj):
            if isinstance(obj, str):
                return xgb.train({**p, "objective": obj}, ds, rounds)
            return xgb.train(p, ds, rounds, obj=obj)
        version = xgb.__version__
    numba.set_num_threads(nt)  # after the objectives, as in a user's script
    fns = {"native": lambda: train(NATIVE[engine])}
    fns.update({n: (lambda o=o: train(o)) for n, o in objs.items()})
    for fn in fns.values():
        fn()  # warm-up: compilation and first touch
    t = interleaved(fns, repeats)
    margins = np.random.default_rng(1).normal(size=X.shape[0])
    rows = []
    round_native = {k: v / rounds for k, v in t["native"].items() if k in ("min", "median")}
    for n, o in objs.items():
        g = timings(lambda o=o: o(margins, ds), max(3, repeats))  # the engine's call of our objective
        r = ratio(t[n], t["native"])
        rows.append({"engine": engine, "threads": nt, "objective": n, "train_ratio_min": r["min"],
                     "train_ratio_median": r["median"], "gradient_ms_min": 1e3 * g["min"],
                     "gradient_ms_median": 1e3 * g["median"],
                     "gradient_per_native_round_min": g["min"] / round_native["min"],
                     "gradient_per_native_round_median": g["median"] / round_native["median"]})
    return {"engine": engine, "threads": nt, "native": NATIVE[engine], "native_round_ms_min": 1e3 * round_native["min"],
            "native_round_ms_median": 1e3 * round_native["median"], "rows": int(X.shape[0]),
            "queries": int(sizes.size), "rounds": rounds, "repeats": repeats, "version": version,
            "objectives": rows}


def run(quick=False, repeats=None, names=None, engines=("lightgbm", "xgboost")):
    """Every engine of ``engines`` at every thread count of :data:`THREADS`, each in a fresh process."""
    n_rows, rounds = (12_000, 5) if quick else (40_000, 10)
    repeats = repeats or (2 if quick else 3)
    names = list(names or OBJECTIVES)
    sides = [run_isolated(_engine_side, e, n_rows, rounds, nt, repeats, names)
             for e in engines for nt in THREADS]
    table = [dict(r, native_round_ms_min=s["native_round_ms_min"]) for s in sides for r in s["objectives"]]
    return {"rows": n_rows, "rounds": rounds, "repeats": repeats, "machine": machine_record(),
            "engines": [{k: v for k, v in s.items() if k != "objectives"} for s in sides], "table": table}


def _print(res):
    print(f"per engine: {res['rows']} rows, {res['rounds']} rounds, {res['repeats']} repeats in turn; min / median")
    for s in res["engines"]:
        print(f"{s['engine']} {s['version']}, {s['threads']} thread(s): native {s['native']} "
              f"{s['native_round_ms_min']:.1f} / {s['native_round_ms_median']:.1f} ms a round")
    print("| engine | threads | objective | training ÷ native | our gradient call, ms | ÷ one native round |")
    print("|---|---:|---|---:|---:|---:|")
    for r in res["table"]:
        print(f"| {r['engine']} | {r['threads']} | {r['objective']} | {r['train_ratio_min']:.2f} / "
              f"{r['train_ratio_median']:.2f} | {r['gradient_ms_min']:.1f} / {r['gradient_ms_median']:.1f} | "
              f"{r['gradient_per_native_round_min']:.2f} / {r['gradient_per_native_round_median']:.2f} |")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m comparisons.bench.objectives", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="12,000 rows, 5 rounds, 2 repeats (about a minute)")
    p.add_argument("--repeats", type=int, default=None, help="trainings of each objective, in turn")
    p.add_argument("--engines", default="lightgbm,xgboost", type=csv_arg(tuple(NATIVE)),
                   help="comma list of engines")
    p.add_argument("--json", default=None, help="also write the results to this file")
    a = p.parse_args(argv)
    if a.repeats is not None and a.repeats < 1:
        p.error(f"--repeats must be >= 1, got {a.repeats}")
    res = run(a.quick, a.repeats, engines=a.engines)
    _print(res)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=2, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
