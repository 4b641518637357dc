"""Benchmark of the reference trainer against LightGBM, interleaved: per tree on the same gradients,
exact OLE against SE, McRank against LightGBM ``multiclass``, on an MSLR-shaped set and on MQ2008.

Two worker processes live for the whole run, one training LightGBM and one the reference trainer
(LightGBM's OpenMP pool never shares a process with the numba threads being timed), and every
repeat trains each configuration once, in turn: LightGBM, then each reference criterion, then
LightGBM again at the next repeat. A slow phase of a loaded machine so falls on every
configuration alike, and each ratio compares neighbouring time windows. A training's figure is the
median over its rounds (the first, which compiles, left out) of a tree's time: the round's wall time
minus our gradient call of that round (timed apart in the same worker, its minimum over repeated
calls) for the ΔNDCG@10 configurations, the whole round (five trees and the softmax gradient) for
McRank against ``multiclass``. Reported: min and median over the repeats, at 1 and 2 threads, and
the four ratios (min / median): reference Newton OLE ÷ LightGBM (same ΔNDCG@10 objective, 31
leaves, 255 bins), reference exact OLE ÷ reference SE, reference McRank (Newton OLE) ÷ LightGBM
``multiclass`` (5 classes, 31 leaves), reference SE ÷ LightGBM on MQ2008 Fold1's training file.
Run: ``python -m comparisons.bench.reference [--quick] [--repeats R]``.
"""

import argparse
import json
import multiprocessing
import statistics
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache

from .._machine import machine_record

#: (name, engine, what it trains); each data set's configurations run in this order every repeat
CONFIGS = {
    "mslr": (("lightgbm", "lightgbm", "ndcg"), ("reference_ole", "reference", "ole"),
             ("reference_se", "reference", "se"), ("reference_ole_exact", "reference", "ole_exact"),
             ("lightgbm_multiclass", "lightgbm", "multiclass"), ("reference_mcrank", "reference", "mcrank")),
    "mq2008": (("lightgbm", "lightgbm", "ndcg"), ("reference_se", "reference", "se")),
}
#: (figure, numerator, denominator, data set)
RATIOS = (("reference Newton OLE ÷ LightGBM per tree (same ΔNDCG@10 gradients)", "reference_ole", "lightgbm", "mslr"),
          ("reference exact OLE ÷ reference SE per tree", "reference_ole_exact", "reference_se", "mslr"),
          ("reference McRank ÷ LightGBM multiclass per round (5 trees)", "reference_mcrank", "lightgbm_multiclass",
           "mslr"),
          ("reference SE ÷ LightGBM per tree on MQ2008", "reference_se", "lightgbm", "mq2008"))
LEAVES, BINS = 31, 255


@lru_cache(maxsize=2)
def _data(dataset, queries):
    if dataset == "mq2008":
        from lambda_objectives import load_letor

        from . import SHARED

        return load_letor(SHARED / "MQ2008" / "Fold1" / "train.txt")
    from lambda_objectives.data.datasets import make_mslr_like

    return make_mslr_like(queries, seed=0)


@lru_cache(maxsize=None)
def _gradient_s(dataset, queries, threads, pairs):
    """Our ΔNDCG@10 gradient call's minimum time on the data set (subtracted from a round)."""
    import numpy as np

    from lambda_objectives import lambda_gradients

    from . import timings

    d = _data(dataset, queries)
    s = np.zeros(d.y.shape[0])
    return timings(lambda: lambda_gradients(s, d.y, d.group_ptr, "ndcg", 10, n_threads=threads,
                                            return_pairs=pairs), 5)["min"]


def _train(cfg):
    """One timed training in this worker: ``{"per_tree_s": median over rounds, "peak_rss_mb"}``."""
    import resource
    import time

    import numpy as np

    d = _data(cfg["dataset"], cfg["queries"])
    rounds, threads, what = cfg["rounds"], cfg["threads"], cfg["what"]
    if cfg["engine"] == "lightgbm":
        import lightgbm as lgb

        params = dict(num_leaves=LEAVES, max_bin=BINS, learning_rate=0.1, min_data_in_leaf=20,
                      min_sum_hessian_in_leaf=1e-3, num_threads=threads, verbose=-1, min_data_in_bin=1,
                      force_row_wise=True)
        if what == "multiclass":
            params.update(objective="multiclass", num_class=5)
            ds = lgb.Dataset(d.X, d.y.astype(np.int64), free_raw_data=False)
        else:
            from lambda_objectives import LightGBMObjective

            params["objective"] = LightGBMObjective("ndcg", k=10, n_threads=threads)
            ds = lgb.Dataset(d.X, d.y, group=d.group, free_raw_data=False)
        stamps = []
        t0 = time.perf_counter()
        lgb.train(params, ds, rounds + 1, callbacks=[lambda env: stamps.append(time.perf_counter())])
        round_s = np.diff([t0] + stamps)[1:]  # the first round bins the Dataset and compiles the objective
    else:
        from reference import MARTRanker

        objective, criterion = ("mcrank", "ole") if what == "mcrank" else ("lambda", what)
        kw = dict(objective=objective, metric="ndcg", k=10, criterion=criterion, num_leaves=LEAVES, max_bin=BINS,
                  learning_rate=0.1, n_threads=threads)
        m = MARTRanker(n_estimators=rounds + 1, **kw)
        m.fit(d.X, d.y, group=d.group, history_loss=False, history_metrics=())
        round_s = np.asarray(m.fit_seconds_[1:])
    if what != "multiclass" and what != "mcrank":
        round_s = round_s - _gradient_s(cfg["dataset"], cfg["queries"], threads, what == "ole_exact")
    return {"per_tree_s": float(np.median(round_s)),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _warm(cfg):
    """An untimed training (compilation, the data set, the gradient timing) before the repeats."""
    _train(dict(cfg, rounds=2))
    return True


def run(quick=False, repeats=None):
    from . import THREADS

    queries, rounds = (300, 6) if quick else (3000, 20)
    repeats = repeats or (3 if quick else 5)
    sizes = {"mslr": (queries, rounds), "mq2008": (None, 3 * rounds)}
    out = {"machine": machine_record(), "repeats": repeats,
           "data": {"mslr": f"make_mslr_like({queries}), {rounds} timed rounds",
                    "mq2008": f"MQ2008 Fold1 train.txt, {3 * rounds} timed rounds"},
           "setup": f"{LEAVES} leaves, {BINS} bins, learning rate 0.1, LightGBM force_row_wise; a training's figure "
                    "is the median over its rounds, then min / median over the repeats"}
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as lgb_pool, ProcessPoolExecutor(1, mp_context=ctx) as ref_pool:
        pools = {"lightgbm": lgb_pool, "reference": ref_pool}
        for threads in THREADS:
            row = {}
            for dataset, configs in CONFIGS.items():
                q, r = sizes[dataset]
                cfgs = {name: dict(engine=engine, what=what, dataset=dataset, queries=q, rounds=r, threads=threads)
                        for name, engine, what in configs}
                for name, cfg in cfgs.items():
                    pools[cfg["engine"]].submit(_warm, cfg).result()
                runs = {name: [] for name in cfgs}
                for _ in range(repeats):  # interleaved: every configuration once per repeat, in turn
                    for name, cfg in cfgs.items():
                        runs[name].append(pools[cfg["engine"]].submit(_train, cfg).result())
                for name, rs in runs.items():
                    t = [x["per_tree_s"] for x in rs]
                    row[f"{dataset} {name}"] = {"per_tree_s_min": min(t), "per_tree_s_median": statistics.median(t),
                                                "peak_rss_mb": max(x["peak_rss_mb"] for x in rs)}
            for figure, a, b, dataset in RATIOS:
                num, den = row[f"{dataset} {a}"], row[f"{dataset} {b}"]
                row[figure] = {"min": num["per_tree_s_min"] / den["per_tree_s_min"],
                               "median": num["per_tree_s_median"] / den["per_tree_s_median"]}
            out[f"{threads}t"] = row
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeats", type=int, default=None, help="repeats per configuration (>= 3; default 3 quick, 5)")
    a = p.parse_args(argv)
    if a.repeats is not None and a.repeats < 3:
        p.error("--repeats must be at least 3 (min and median over the repeats)")
    print(json.dumps(run(a.quick, a.repeats), indent=2, default=float))


if __name__ == "__main__":
    main()
