"""Benchmark of the lambda kernels: pairs/s per metric, ΔERR prefix vs naive, ΔNDCG vs LightGBM native.

Every figure is a ratio against a peer timed in the same run; absolute times are context only.
Run: ``python -m comparisons.bench.kernels [--quick]``.
"""

import argparse
import json
import time

import numpy as np
from numba import njit

from lambda_objectives.objectives import LAMBDA_METRICS
from lambda_objectives import lambda_gradients, qid_to_ptr, xendcg_gradients, yetirank_gradients

from .._machine import best_time, machine_record
from . import SHARED, THREADS, interleaved, ratio, timings

METRICS = LAMBDA_METRICS


def _web_like(n_queries, docs, seed=0):
    """Graded 0..4 labels with a web-search skew (50/30/15/4/1 %), fixed list length."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    y = rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(np.float64)
    s = rng.normal(size=n) + 0.3 * y
    return s, y, np.arange(0, n + 1, docs, dtype=np.int64)


def _n_pairs(y, ptr, k=None):
    """Pairs with different labels and the upper member within k (k=None: all)."""
    total = 0
    for a, b in zip(ptr[:-1], ptr[1:]):
        n = b - a
        c = np.bincount(y[a:b].astype(np.int64))
        diff = n * (n - 1) // 2 - int((c * (c - 1) // 2).sum())
        if k is not None and k < n:
            # expected share of unequal pairs among those touching the top k
            diff = int(round(diff * (k * n - k * (k + 1) / 2) / (n * (n - 1) / 2)))
        total += diff
    return total


@njit(cache=True)
def _err_of_order(R, k):
    total = 0.0
    p = 1.0
    for r in range(min(k, R.shape[0])):
        total += p * R[r] / (r + 1.0)
        p *= 1.0 - R[r]
    return total


@njit(cache=True)
def _add_pair(s, y, u, v, dz, sigma, grad, hess):
    """The textbook per-pair update of the peers: one ``exp``, straight into the output rows."""
    hi, lo = (u, v) if y[u] > y[v] else (v, u)
    rho = 1.0 / (1.0 + np.exp(sigma * (s[hi] - s[lo])))
    grad[hi] -= sigma * dz * rho
    grad[lo] += sigma * dz * rho
    h = sigma * sigma * dz * rho * (1.0 - rho)
    hess[hi] += h
    hess[lo] += h


@njit(cache=True)
def naive_err_lambdas(s, y, group_ptr, max_label, k, sigma, grad, hess):
    """The O(n³) peer: for every pair, swap the two documents and recompute ERR@k."""
    for q in range(group_ptr.shape[0] - 1):
        a0 = group_ptr[q]
        n = group_ptr[q + 1] - a0
        order = np.argsort(-s[a0:a0 + n], kind="mergesort")  # the peers rank as the kernels do
        R = np.empty(n)
        for r in range(n):
            R[r] = (2.0 ** y[a0 + order[r]] - 1.0) / 2.0 ** max_label
        base = _err_of_order(R, k)
        for r in range(n):
            grad[a0 + r] = 0.0
            hess[a0 + r] = 0.0
        for i in range(min(k, n)):
            for j in range(i + 1, n):
                di = order[i]
                dj = order[j]
                if y[a0 + di] == y[a0 + dj]:
                    continue
                R[i], R[j] = R[j], R[i]
                dz = abs(_err_of_order(R, k) - base)
                R[i], R[j] = R[j], R[i]
                _add_pair(s, y, a0 + di, a0 + dj, dz, sigma, grad, hess)


@njit(cache=True)
def straightforward_ndcg_lambdas(s, y, group_ptr, sigma, grad, hess):
    """The peer of the pairs/s figure: the textbook ΔNDCG loop (full list), one ``exp`` and
    one gain/discount lookup per pair, accumulating straight into the output rows."""
    for q in range(group_ptr.shape[0] - 1):
        a0 = group_ptr[q]
        n = group_ptr[q + 1] - a0
        order = np.argsort(-s[a0:a0 + n], kind="mergesort")  # the peers rank as the kernels do
        gains = np.empty(n)
        for r in range(n):
            gains[r] = 2.0 ** y[a0 + r] - 1.0
        ideal = np.sort(gains)[::-1]
        idcg = 0.0
        for r in range(n):
            idcg += ideal[r] / np.log2(r + 2.0)
        for r in range(n):
            grad[a0 + r] = 0.0
            hess[a0 + r] = 0.0
        if idcg == 0.0:
            continue
        for i in range(n):
            for j in range(i + 1, n):
                di = order[i]
                dj = order[j]
                if y[a0 + di] == y[a0 + dj]:
                    continue
                dz = abs(gains[di] - gains[dj]) * abs(1.0 / np.log2(i + 2.0) - 1.0 / np.log2(j + 2.0)) / idcg
                _add_pair(s, y, a0 + di, a0 + dj, dz, sigma, grad, hess)


def bench_pairs_per_second(quick, repeats=None):
    """Per metric: seconds per call at 1 and 2 threads (min and median over repeats), pairs/s per
    core, and the 2-thread speed-up (the 1-thread time ÷ the 2-thread time, of the minima and of the
    medians); the threads are timed in turn so a slow phase of the machine falls on both."""
    n_queries, docs = (300, 120) if quick else (3000, 120)
    repeats = repeats or (3 if quick else 7)
    s, y, ptr = _web_like(n_queries, docs)
    pairs = _n_pairs(y, ptr)
    rows = []
    for metric in METRICS:
        row = {"metric": metric, "pairs": pairs}
        calls = {nt: (lambda nt=nt: lambda_gradients(s, y, ptr, metric, n_threads=nt)) for nt in THREADS}
        for fn in calls.values():
            fn()  # compilation and first-touch
        t = interleaved(calls, repeats)
        for nt in THREADS:
            row[f"seconds_{nt}t_min"] = t[nt]["min"]
            row[f"seconds_{nt}t_median"] = t[nt]["median"]
            row[f"Mpairs_per_s_per_core_{nt}t"] = pairs / t[nt]["min"] / nt / 1e6
        if len(THREADS) > 1:
            sp = ratio(t[1], t[THREADS[-1]])
            row[f"speedup_{THREADS[-1]}t_min"] = sp["min"]
            row[f"speedup_{THREADS[-1]}t_median"] = sp["median"]
        row["seconds_1t"] = t[1]["min"]
        rows.append(row)
    gam = np.random.default_rng(1).random(s.shape[0])
    xendcg_gradients(s, y, ptr, gammas=gam, n_threads=1)
    rows.append({"metric": "xendcg (listwise, O(n))", "pairs": pairs,
                 "seconds_1t": best_time(lambda: xendcg_gradients(s, y, ptr, gammas=gam, n_threads=1),
                                         2 if quick else 3)})
    # one boosting round of YetiRank with CatBoost's defaults (10 noisy rankings per query)
    yetirank_gradients(s, y, ptr, n_threads=1)
    rows.append({"metric": "yetirank (10 permutations, per round)", "pairs": pairs,
                 "seconds_1t": best_time(lambda: yetirank_gradients(s, y, ptr, n_threads=1), 2 if quick else 3)})
    for row in rows:  # each objective's cost against the ΔNDCG kernel timed in the same run
        row["seconds_over_ndcg_1t"] = row["seconds_1t"] / rows[0]["seconds_1t"]
    g = np.empty_like(s)
    h = np.empty_like(s)
    straightforward_ndcg_lambdas(s, y, ptr, 1.0, g, h)  # compile
    t_peer = best_time(lambda: straightforward_ndcg_lambdas(s, y, ptr, 1.0, g, h), 2 if quick else 3)
    ours = lambda_gradients(s, y, ptr, "ndcg")[0]
    peer = {"Mpairs_per_s_1t": pairs / t_peer / 1e6,
            "ndcg_speedup_over_peer_1t": t_peer / rows[0]["seconds_1t"],
            "max_abs_diff": float(np.abs(ours - g).max())}
    return {"data": f"synthetic web-like, {n_queries} queries x {docs} docs, grades 0..4", "rows": rows,
            "straightforward_ndcg_peer": peer}


def bench_err_prefix_vs_naive(quick):
    sizes = (50, 200) if quick else (50, 200, 1000)
    rows = []
    for n in sizes:
        n_queries = max(1, (4000 if quick else 20000) // n)
        naive_queries = max(1, n_queries // (n // 25))  # the naive peer is O(n³): time fewer queries
        s, y, ptr = _web_like(n_queries, n, seed=n)
        t_err = best_time(lambda: lambda_gradients(s, y, ptr, "err", n_threads=1), 3) / n_queries
        t_ndcg = best_time(lambda: lambda_gradients(s, y, ptr, "ndcg", n_threads=1), 3) / n_queries
        ns, ny, nptr = s[: naive_queries * n], y[: naive_queries * n], ptr[: naive_queries + 1]
        g, h = np.empty(len(ns)), np.empty(len(ns))
        t_naive = best_time(lambda: naive_err_lambdas(ns, ny, nptr, float(y.max()), n, 1.0, g, h), 1) / naive_queries
        ref = lambda_gradients(ns, ny, nptr, "err", max_label=float(y.max()))[0]
        rows.append({
            "docs_per_query": n,
            "err_prefix_s_per_query": t_err,
            "err_naive_s_per_query": t_naive,
            "ndcg_s_per_query": t_ndcg,
            "naive_over_prefix": t_naive / t_err,
            "err_over_ndcg": t_err / t_ndcg,
            "max_abs_diff_vs_naive": float(np.max(np.abs(g - ref))),
        })
    return {"rows": rows}


def bench_vs_lightgbm(quick):
    """ΔNDCG kernel call vs the time LightGBM's native lambdarank spends on gradients per round.

    LightGBM's gradient time is estimated as (native lambdarank − the same training with a
    free custom objective returning fixed arrays) / rounds: both runs build identical-cost trees
    (same data, leaves and bins), so the difference is the objective's own time.
    """
    try:
        import lightgbm as lgb
    except ImportError:
        return {"skipped": "lightgbm not installed"}
    n_queries, docs, rounds = (300, 120, 10) if quick else (3000, 120, 20)
    repeats = 2 if quick else 5
    s, y, ptr = _web_like(n_queries, docs, seed=1)
    rng = np.random.default_rng(2)
    X = (y[:, None] * 0.2 + rng.normal(size=(len(y), 20))).astype(np.float32)
    out = {}
    for nt in THREADS:
        params = {"objective": "lambdarank", "num_leaves": 31, "verbose": -1, "num_threads": nt,
                  "lambdarank_truncation_level": docs, "deterministic": True, "force_row_wise": True}
        ds = lgb.Dataset(X, y, group=np.diff(ptr), free_raw_data=False)
        ds.construct()
        g0, h0 = lambda_gradients(s, y, ptr, "ndcg", normalize="lambdarank")
        g32, h32 = g0.astype(np.float32), h0.astype(np.float32)

        def fixed(preds, data):
            return g32, h32

        lgb.train(params, ds, 1)
        t = interleaved({"native": lambda: lgb.train(params, ds, rounds),
                         "fixed": lambda: lgb.train(dict(params, objective=fixed), ds, rounds)}, repeats)
        lgb_grad = {m: (t["native"][m] - t["fixed"][m]) / rounds for m in ("min", "median")}
        ours = timings(lambda: lambda_gradients(s, y, ptr, "ndcg", normalize="lambdarank", n_threads=nt), 2 * repeats + 1)
        out[f"{nt}t"] = {"lightgbm_gradient_s_per_round_min": lgb_grad["min"],
                         "ours_s_per_call_min": ours["min"], "ours_s_per_call_median": ours["median"],
                         # a non-positive difference means timing noise swamped the objective's cost
                         "ours_over_lightgbm_min": ours["min"] / lgb_grad["min"] if lgb_grad["min"] > 0 else None,
                         "ours_over_lightgbm_median": (ours["median"] / lgb_grad["median"]
                                                       if lgb_grad["median"] > 0 else None),
                         "repeats": repeats,
                         "note": "LightGBM full-list pairs (truncation = list length), same data"}
    return out


def bench_mq2008(quick):
    path = SHARED / "MQ2008" / "Fold1" / "train.txt"
    if not path.exists():
        return {"skipped": f"{path} absent"}
    from sklearn.datasets import load_svmlight_file

    _, y, qid = load_svmlight_file(str(path), query_id=True)
    ptr = qid_to_ptr(qid)
    s = np.random.default_rng(0).normal(size=len(y))
    pairs = _n_pairs(y, ptr)
    rows = []
    for metric in METRICS:
        t = best_time(lambda: lambda_gradients(s, y, ptr, metric, n_threads=1), 5)
        rows.append({"metric": metric, "seconds_1t": t, "Mpairs_per_s": pairs / t / 1e6})
    return {"data": f"MQ2008 Fold1 train ({len(y)} rows, {len(ptr) - 1} queries, {pairs} pairs)", "rows": rows}


def run(quick=False):
    """All kernel benchmarks; returns a JSON-serialisable dict."""
    return {
        "machine": machine_record(),
        "pairs_per_second": bench_pairs_per_second(quick),
        "err_prefix_vs_naive": bench_err_prefix_vs_naive(quick),
        "ndcg_vs_lightgbm_native": bench_vs_lightgbm(quick),
        "mq2008": bench_mq2008(quick),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    res = run(args.quick)
    print(json.dumps(res, indent=2, default=float))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2, default=float)


if __name__ == "__main__":
    main()
