"""Benchmark of the reference trainer: time per tree vs LightGBM on the same gradients, exact OLE
vs SE, and peak memory.

Each measurement runs in its own process (peak RSS is per process, and LightGBM's OpenMP pool
must not share a process with numba's threads being timed). Run:
``python -m comparisons.bench_reference [--quick]``.
"""

import argparse
import json

from ._machine import machine_record
from ._runner import run_isolated


def _measure(cfg):
    """One measurement in a fresh process (run through ``run_isolated``): peak RSS is per process."""
    import resource
    import time

    import numpy as np

    from lambda_objectives import lambda_gradients
    from lambda_objectives.datasets import make_mslr_like

    d = make_mslr_like(cfg["queries"], seed=0)
    rounds, threads = cfg["rounds"], cfg["threads"]
    s = np.zeros(d.y.shape[0])
    if cfg["engine"] == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives import LightGBMObjective

        obj = LightGBMObjective("ndcg", k=10, n_threads=threads)
        params = dict(objective=obj, num_leaves=31, max_bin=255, learning_rate=0.1, min_data_in_leaf=20,
                      min_sum_hessian_in_leaf=1e-3, num_threads=threads, verbose=-1, min_data_in_bin=1,
                      force_row_wise=True)
        ds = lgb.Dataset(d.X, d.y, group=d.group)
        lgb.train(params, ds, 1)  # warm-up: Dataset binning and the objective's compilation
        t = time.perf_counter()
        lgb.train(params, ds, rounds)
        total = time.perf_counter() - t
        t = time.perf_counter()
        lambda_gradients(s, d.y, d.group_ptr, "ndcg", 10, n_threads=threads)
        grad_t = time.perf_counter() - t
        # per tree: a round's time minus our gradient call inside it
        per_tree = total / rounds - grad_t
    else:
        from reference import MARTRanker

        kw = dict(objective="lambda", metric="ndcg", k=10, criterion=cfg["criterion"], num_leaves=31, max_bin=255,
                  learning_rate=0.1, n_threads=threads)
        MARTRanker(n_estimators=1, **kw).fit(d.X[:2000], d.y[:2000], group=[2000])  # compile
        m = MARTRanker(n_estimators=rounds, **kw)
        m.fit(d.X, d.y, group=d.group, history_loss=False)
        t = time.perf_counter()
        lambda_gradients(s, d.y, d.group_ptr, "ndcg", 10, n_threads=threads,
                         return_pairs=cfg["criterion"] == "ole_exact")
        grad_t = time.perf_counter() - t
        # per tree: fit seconds minus the gradient call and the history bookkeeping of the same round
        per_tree = float(np.median(m.fit_seconds_)) - grad_t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"per_tree_s": per_tree, "gradient_s": grad_t, "peak_rss_mb": rss / 1024, "rows": int(d.y.shape[0])}


def _child(cfg):
    return run_isolated(_measure, cfg)


def run(quick=False):
    import numba

    queries, rounds = (300, 6) if quick else (3000, 20)
    out = {"machine": machine_record(), "data": f"make_mslr_like({queries}) (~{queries * 110} rows x 136), "
                                                f"ΔNDCG@10 gradients, 31 leaves, 255 bins, {rounds} rounds"}
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        lgb_r = _child(dict(engine="lightgbm", queries=queries, rounds=rounds, threads=threads))
        ole = _child(dict(engine="reference", criterion="ole", queries=queries, rounds=rounds, threads=threads))
        se = _child(dict(engine="reference", criterion="se", queries=queries, rounds=rounds, threads=threads))
        exact = _child(dict(engine="reference", criterion="ole_exact", queries=queries, rounds=rounds, threads=threads))
        out[f"{threads}t"] = {
            "lightgbm": lgb_r, "reference_ole": ole, "reference_se": se, "reference_ole_exact": exact,
            "ole_per_tree_over_lightgbm": ole["per_tree_s"] / lgb_r["per_tree_s"],
            "ole_exact_over_se_per_tree": exact["per_tree_s"] / se["per_tree_s"],
            "peak_rss_ole_over_lightgbm": ole["peak_rss_mb"] / lgb_r["peak_rss_mb"],
        }
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    print(json.dumps(run(a.quick), indent=2, default=float))


if __name__ == "__main__":
    main()
