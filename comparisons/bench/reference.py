"""Benchmark of the reference trainer: time per tree vs LightGBM on the same gradients, exact OLE
vs SE, and peak memory.

A tree's time is a boosting round's wall time minus our gradient call of that round (timed apart,
its minimum over repeated calls): min and median over the rounds of one training, at 1 and 2
threads. Ratios: Newton (diagonal) OLE ÷ LightGBM, exact OLE ÷ SE, each of the minima and of the
medians. Each measurement runs in its own process (peak RSS is per process, and LightGBM's OpenMP
pool must not share a process with numba's threads being timed). Run:
``python -m comparisons.bench.reference [--quick]``.
"""

import argparse
import json

from .._machine import machine_record
from .._runner import run_isolated


def _measure(cfg):
    """One measurement in a fresh process (run through ``run_isolated``): peak RSS is per process."""
    import resource
    import time

    import numpy as np

    from lambda_objectives import lambda_gradients
    from lambda_objectives.datasets import make_mslr_like

    from . import timings

    d = make_mslr_like(cfg["queries"], seed=0)
    rounds, threads = cfg["rounds"], cfg["threads"]
    s = np.zeros(d.y.shape[0])
    pairs = cfg.get("criterion") == "ole_exact"
    grad = timings(lambda: lambda_gradients(s, d.y, d.group_ptr, "ndcg", 10, n_threads=threads, return_pairs=pairs), 5)
    if cfg["engine"] == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        obj = LightGBMObjective("ndcg", k=10, n_threads=threads)
        params = dict(objective=obj, num_leaves=31, max_bin=255, learning_rate=0.1, min_data_in_leaf=20,
                      min_sum_hessian_in_leaf=1e-3, num_threads=threads, verbose=-1, min_data_in_bin=1,
                      force_row_wise=True)
        ds = lgb.Dataset(d.X, d.y, group=d.group)
        lgb.train(params, ds, 1)  # warm-up: Dataset binning and the objective's compilation
        stamps = []
        t0 = time.perf_counter()
        lgb.train(params, ds, rounds, callbacks=[lambda env: stamps.append(time.perf_counter())])
        round_s = np.diff([t0] + stamps)
    else:
        from reference import MARTRanker

        kw = dict(objective="lambda", metric="ndcg", k=10, criterion=cfg["criterion"], num_leaves=31, max_bin=255,
                  learning_rate=0.1, n_threads=threads)
        MARTRanker(n_estimators=1, **kw).fit(d.X[:2000], d.y[:2000], group=[2000])  # compile
        m = MARTRanker(n_estimators=rounds, **kw)
        m.fit(d.X, d.y, group=d.group, history_loss=False)
        round_s = np.asarray(m.fit_seconds_)
    per_tree = round_s - grad["min"]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"per_tree_s_min": float(per_tree.min()), "per_tree_s_median": float(np.median(per_tree)),
            "trees": int(per_tree.size), "gradient_s_min": grad["min"], "peak_rss_mb": rss / 1024,
            "rows": int(d.y.shape[0])}


def _child(cfg):
    return run_isolated(_measure, cfg)


def run(quick=False):
    from . import THREADS

    queries, rounds = (300, 6) if quick else (3000, 20)
    out = {"machine": machine_record(), "data": f"make_mslr_like({queries}) (~{queries * 110} rows x 136), "
                                                f"ΔNDCG@10 gradients, 31 leaves, 255 bins, {rounds} rounds"}
    for threads in THREADS:
        lgb_r = _child(dict(engine="lightgbm", queries=queries, rounds=rounds, threads=threads))
        ole = _child(dict(engine="reference", criterion="ole", queries=queries, rounds=rounds, threads=threads))
        se = _child(dict(engine="reference", criterion="se", queries=queries, rounds=rounds, threads=threads))
        exact = _child(dict(engine="reference", criterion="ole_exact", queries=queries, rounds=rounds, threads=threads))
        row = {"lightgbm": lgb_r, "reference_ole": ole, "reference_se": se, "reference_ole_exact": exact}
        for name, (a, b) in {"ole_per_tree_over_lightgbm": (ole, lgb_r), "se_per_tree_over_lightgbm": (se, lgb_r),
                             "ole_exact_over_se_per_tree": (exact, se)}.items():
            row[f"{name}_min"] = a["per_tree_s_min"] / b["per_tree_s_min"]
            row[f"{name}_median"] = a["per_tree_s_median"] / b["per_tree_s_median"]
        row["peak_rss_ole_over_lightgbm"] = ole["peak_rss_mb"] / lgb_r["peak_rss_mb"]
        out[f"{threads}t"] = row
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    print(json.dumps(run(a.quick), indent=2, default=float))


if __name__ == "__main__":
    main()
