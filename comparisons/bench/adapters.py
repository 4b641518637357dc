"""Benchmark: our objectives inside LightGBM/XGBoost vs the engines' native ranking objectives.

MSLR-shaped synthetic data (about 170K rows x 136 features, graded 0..4, ~120 docs/query; the
size of issue #23's table), equal tree settings (63 leaves, 255 bins), 30 boosting rounds, whole
trainings timed for

* LightGBM + ``LightGBMObjective(preset="lightgbm")`` ÷ LightGBM native ``lambdarank``;
* XGBoost + ``XGBoostObjective(preset="xgboost")`` ÷ XGBoost native ``rank:ndcg``;

at 1 and 2 threads, native and ours trained in turn in the same process (min and median over
repeats, and their ratios). The parity presets compute the same gradients as the engines (the
predictions are compared in the same run), so the ratio measures only the cost of the Python
callback and our kernel. ``run(quick=True)`` uses 20K rows and 5 rounds.

Usage: ``python -m comparisons.bench.adapters [--quick] [--repeats N]``; ``--profile`` prints where
one round of ours goes (the engine's hand-over, the cache check, our kernel, the Hessian check)
beside the whole round of both objectives, at 1 and 2 threads.
"""

import sys
import time

import numpy as np


def _make_data(n_rows, n_features, docs_per_query, seed=0):
    """MSLR-WEB10K-shaped synthetic data (grades 0..4, web-like skew, ~docs_per_query per query)."""
    from lambda_objectives.datasets import make_ranking

    d = make_ranking(max(1, n_rows // docs_per_query), docs_per_query=(docs_per_query // 3, docs_per_query * 2),
                     n_features=n_features, n_informative=min(24, n_features), seed=seed)
    return d.X, d.y, d.group_ptr


def _time(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _engine_pair(engine, quick, nt, repeats):
    """Native and ours for one engine and thread count, in this (fresh) process, trained in turn."""
    import numba

    from . import interleaved, ratio

    n_rows, rounds = (20_000, 5) if quick else (170_000, 30)
    X, y, ptr = _make_data(n_rows, 136, 120)
    sizes = np.diff(ptr)
    sub = X[:5000]
    numba.set_num_threads(nt)
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives.adapters import LightGBMObjective

        ds = lgb.Dataset(X, y, group=sizes, params={"max_bin": 255, "verbose": -1}).construct()
        lp = dict(num_leaves=63, learning_rate=0.1, min_data_in_leaf=20, max_bin=255, num_threads=nt,
                  verbose=-1, force_row_wise=True)
        obj = LightGBMObjective(preset="lightgbm", n_threads=nt)
        fns = {"native": lambda: lgb.train({**lp, "objective": "lambdarank"}, ds, rounds),
               "ours": lambda: lgb.train({**lp, "objective": obj}, ds, rounds)}
        b_n, b_o = fns["native"](), fns["ours"]()  # warm-up (JIT, first-touch) and the parity check
        diff = float(np.abs(b_n.predict(sub) - b_o.predict(sub)).max())
        version = lgb.__version__
    else:
        import xgboost as xgb

        from lambda_objectives.adapters import XGBoostObjective

        dtrain = xgb.DMatrix(X, y, group=sizes)
        xp = dict(max_depth=0, max_leaves=63, grow_policy="lossguide", eta=0.1, tree_method="hist", max_bin=255,
                  nthread=nt, base_score=0.0)
        obj = XGBoostObjective(preset="xgboost", n_threads=nt)
        fns = {"native": lambda: xgb.train({**xp, "objective": "rank:ndcg"}, dtrain, rounds),
               "ours": lambda: xgb.train(xp, dtrain, rounds, obj=obj)}
        b_n, b_o = fns["native"](), fns["ours"]()
        ds = xgb.DMatrix(sub)
        diff = float(np.abs(b_n.predict(ds, output_margin=True) - b_o.predict(ds, output_margin=True)).max())
        version = xgb.__version__
    t = interleaved(fns, repeats)
    r = ratio(t["ours"], t["native"])
    return {"engine": engine, "threads": nt, "native_s_min": t["native"]["min"], "native_s_median": t["native"]["median"],
            "ours_s_min": t["ours"]["min"], "ours_s_median": t["ours"]["median"],
            "ratio_min": r["min"], "ratio_median": r["median"], "repeats": repeats,
            "max_pred_diff": diff, "rows": int(X.shape[0]), "queries": int(len(sizes)), "rounds": rounds,
            "version": version, "numba": numba.__version__}


def _profile_round(engine, n_rows, rounds, nt, repeats=5):
    """Where one custom-objective round goes, in this (fresh) process: the whole round of the native
    objective and of ours (min over ``repeats`` trainings of ``rounds`` rounds, per round), and within
    our callback the engine's hand-over (labels, groups, weights), the data-set cache check, our kernel
    (``compute``), the Hessian/finiteness check; each part timed alone on the same scores."""
    import numba

    from lambda_objectives.adapters.presets import BACKENDS

    X, y, ptr = _make_data(n_rows, 136, 120)
    sizes = np.diff(ptr)
    numba.set_num_threads(nt)
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives.adapters import LightGBMObjective

        ds = lgb.Dataset(X, y, group=sizes, params={"max_bin": 255, "verbose": -1}).construct()
        lp = dict(num_leaves=63, learning_rate=0.1, min_data_in_leaf=20, max_bin=255, num_threads=nt, verbose=-1,
                  force_row_wise=True)
        obj = LightGBMObjective(preset="lightgbm", n_threads=nt)
        native = min(_time(lambda: lgb.train({**lp, "objective": "lambdarank"}, ds, rounds))[0] for _ in range(repeats))
        ours = min(_time(lambda: lgb.train({**lp, "objective": obj}, ds, rounds))[0] for _ in range(repeats))

        def hand_over():
            return ds.get_label(), ds.get_field("group"), ds.get_weight()
    else:
        import xgboost as xgb

        from lambda_objectives.adapters import XGBoostObjective

        ds = xgb.DMatrix(X, y, group=sizes)
        xp = dict(max_depth=0, max_leaves=63, grow_policy="lossguide", eta=0.1, tree_method="hist", max_bin=255,
                  nthread=nt, base_score=0.0)
        obj = XGBoostObjective(preset="xgboost", n_threads=nt)
        native = min(_time(lambda: xgb.train({**xp, "objective": "rank:ndcg"}, ds, rounds))[0] for _ in range(repeats))
        ours = min(_time(lambda: xgb.train(xp, ds, rounds, obj=obj))[0] for _ in range(repeats))

        def hand_over():
            return ds.get_label(), ds.get_uint_info("group_ptr"), ds.get_weight()
    scores = np.random.default_rng(0).normal(size=y.shape[0]).astype(np.float32)
    labels, groups, weights = hand_over()
    st = obj._state(ds, labels, groups, weights, 1e-3)  # the prepared state the callback reuses

    def best(fn, n=20):
        return min(_time(fn)[0] for _ in range(n))

    parts = {
        "engine hand-over (labels, groups, weights)": best(hand_over),
        "cache check (labels/groups/weights unchanged)": best(lambda: obj._state(ds, labels, groups, weights, 1e-3)),
        "our kernel (compute, float32 out)": best(lambda: BACKENDS[obj.preset].compute(obj, st, scores), 10),
        "Hessian and finiteness check": best(lambda: obj._check_hessian(st)),
    }
    return {"engine": engine, "threads": nt, "rows": int(X.shape[0]), "rounds": rounds,
            "native_round_s": native / rounds, "ours_round_s": ours / rounds, "parts_s": parts}


def profile(n_rows=170_000, rounds=30, threads=(1, 2)):
    """The per-round breakdown of :func:`_profile_round` for both engines at each thread count, each
    engine in a fresh process (docs/development.md, "Where a custom-objective round goes")."""
    from .._runner import run_isolated

    return [run_isolated(_profile_round, engine, n_rows, rounds, nt) for nt in threads
            for engine in ("lightgbm", "xgboost")]


def run(quick: bool = False, repeats=None) -> dict:
    """Run the benchmark; returns timings, ratios, parity checks and a machine record.

    Each (engine, threads) runs in its own fresh process (LightGBM and XGBoost ship different
    OpenMP runtimes; loaded together, the first one's spinning threads slowed LightGBM's native
    lambdarank about 60x here); native and ours alternate in that process.
    """
    from .._machine import machine_record
    from .._runner import run_isolated
    from . import THREADS

    repeats = repeats or (2 if quick else 5)
    runs = [run_isolated(_engine_pair, engine, quick, nt, repeats) for nt in THREADS
            for engine in ("lightgbm", "xgboost")]
    first = runs[0]
    return {"rows": first["rows"], "features": 136, "queries": first["queries"], "rounds": first["rounds"],
            "runs": runs, "machine": machine_record()}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--profile" in argv:
        rows = profile(20_000 if "--quick" in argv else 170_000, 5 if "--quick" in argv else 30)
        for r in rows:
            extra = r["ours_round_s"] - r["native_round_s"]
            print(f"{r['engine']} {r['threads']} thread(s), {r['rows']} rows: round native {1e3 * r['native_round_s']:.1f} ms, "
                  f"ours {1e3 * r['ours_round_s']:.1f} ms (ours - native {1e3 * extra:+.1f} ms)")
            for name, sec in r["parts_s"].items():
                print(f"    {name:<48} {1e3 * sec:8.2f} ms")
        return rows
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else None
    res = run(quick="--quick" in argv, repeats=repeats)
    print(f"bench.adapters: {res['rows']} rows x {res['features']} features, {res['queries']} queries, "
          f"{res['rounds']} rounds, {res['runs'][0]['repeats']} repeats (ours and native in turn)")
    print(f"{'engine':>9} {'threads':>7} {'native s min/med':>17} {'ours s min/med':>15} {'ours/native min/med':>20} "
          f"{'max|dpred|':>10}")
    for r in res["runs"]:
        print(f"{r['engine']:>9} {r['threads']:>7} {r['native_s_min']:>8.2f}/{r['native_s_median']:<8.2f} "
              f"{r['ours_s_min']:>7.2f}/{r['ours_s_median']:<7.2f} {r['ratio_min']:>10.3f}/{r['ratio_median']:<9.3f} "
              f"{r['max_pred_diff']:>10.1e}")
    return res


if __name__ == "__main__":
    main()
