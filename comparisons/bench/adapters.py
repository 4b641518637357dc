"""Benchmark: our objectives inside LightGBM/XGBoost vs the engines' native ranking objectives.

MSLR-shaped synthetic data (about 170K rows x 136 features, graded 0..4, ~120 docs/query; the
size of issue #23's table), equal tree settings (63 leaves, 255 bins), 30 boosting rounds, whole
trainings timed for

* LightGBM + ``LightGBMObjective(preset="lightgbm")`` ÷ LightGBM native ``lambdarank``;
* XGBoost + ``XGBoostObjective(preset="xgboost")`` ÷ XGBoost native ``rank:ndcg``;

at 1 and 2 threads, native and ours trained in turn in the same process (min and median over
repeats, and their ratios). The parity presets compute the same gradients as the engines (the
predictions are compared in the same run), so the ratio measures only the cost of the Python
callback and our kernel. XGBoost runs four times: alone with numba on XGBoost's OpenMP runtime (what
a user gets, ``lambda_objectives._core.openmp``), alone with ``LAMBDA_OBJECTIVES_SHARE_OPENMP=0`` (two
runtimes), and in a process that imported both engines, LightGBM first and XGBoost first (issue #34:
a script comparing the engines; LightGBM's system runtime is loaded before our first objective).
LightGBM runs twice: alone, and in a process with both engines where an XGBoost objective came first
(numba joined XGBoost's runtime: the price of that choice).
``run(quick=True)`` uses 20K rows and 5 rounds.

Usage: ``python -m comparisons.bench.adapters [--quick] [--repeats N] [--rows N] [--rounds N] [--runs NAME ...]
[--threads N ...]`` (``--rows``/``--rounds`` override the data size and rounds ``--quick`` or the default pick;
``--runs`` picks some of the configurations of :data:`RUN_NAMES`, e.g. ``--runs xgboost-lightgbm-first
xgboost-xgboost-first`` for issue #34's item 6 alone); ``--profile`` prints where
one round of ours goes (our callback timed inside training, the rest of the round, and the
callback's parts alone: the engine's hand-over, the cache check, our kernel, the Hessian check)
beside the whole round of both objectives, at 1 and 2 threads.
"""

import argparse
import time

import numpy as np


def _make_data(n_rows, n_features, docs_per_query, seed=0):
    """MSLR-WEB10K-shaped synthetic data (grades 0..4, web-like skew, ~docs_per_query per query)."""
    from lambda_objectives.data.datasets import make_ranking

    d = make_ranking(max(1, n_rows // docs_per_query), docs_per_query=(docs_per_query // 3, docs_per_query * 2),
                     n_features=n_features, n_informative=min(24, n_features), seed=seed)
    return d.X, d.y, d.group_ptr


def _time(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _engine(engine, X, y, sizes, rounds, nt, share_openmp, imports=(), xgboost_first=False):
    """One engine's side of both benchmarks, set up in this (fresh) process: ``train(objective)``
    (``native`` names the engine's own; ours is ``obj`` or any callback), ``predict(booster, X)``
    (margins), the data set and its ``hand_over()`` of labels, groups and weights to a callback, and
    the engine method that copies the training margins out for a callback (``margin_copy``).

    The objective is made before anything starts numba's threads, as in a user's script, so with
    XGBoost numba joins XGBoost's OpenMP runtime (``lambda_objectives._core.openmp``); ``share_openmp=False``
    keeps them apart (``LAMBDA_OBJECTIVES_SHARE_OPENMP=0``, this process only: a fresh one per run).
    ``imports`` are engine modules imported first, in that order, as a script comparing both engines
    does (``("lightgbm", "xgboost")``: LightGBM's system OpenMP runtime is loaded before XGBoost's);
    ``xgboost_first`` makes an ``XGBoostObjective`` before this engine's objective (numba then joins
    XGBoost's runtime: what a LightGBM objective trained after it costs).
    """
    import importlib
    import os
    from types import SimpleNamespace

    import numba

    if not share_openmp:
        os.environ["LAMBDA_OBJECTIVES_SHARE_OPENMP"] = "0"
    for name in imports:
        importlib.import_module(name)
    if xgboost_first:
        from lambda_objectives.adapters import XGBoostObjective

        XGBoostObjective(preset="xgboost", n_threads=nt)
    if engine == "lightgbm":
        import lightgbm as lgb

        from lambda_objectives.adapters import LightGBMObjective

        ds = lgb.Dataset(X, y, group=sizes, params={"max_bin": 255, "verbose": -1}).construct()
        lp = dict(num_leaves=63, learning_rate=0.1, min_data_in_leaf=20, max_bin=255, num_threads=nt,
                  verbose=-1, force_row_wise=True)
        obj = LightGBMObjective(preset="lightgbm", n_threads=nt)
        e = SimpleNamespace(
            native="lambdarank", version=lgb.__version__, margin_copy=(lgb.Booster, "_Booster__inner_predict"),
            train=lambda objective: lgb.train({**lp, "objective": objective}, ds, rounds),
            predict=lambda booster, data: booster.predict(data),
            hand_over=lambda: (ds.get_label(), ds.get_field("group"), ds.get_weight()))
    else:
        import xgboost as xgb

        from lambda_objectives.adapters import XGBoostObjective

        ds = xgb.DMatrix(X, y, group=sizes)
        xp = dict(max_depth=0, max_leaves=63, grow_policy="lossguide", eta=0.1, tree_method="hist", max_bin=255,
                  nthread=nt, base_score=0.0)
        obj = XGBoostObjective(preset="xgboost", n_threads=nt)

        def train(objective):
            if objective == "rank:ndcg":
                return xgb.train({**xp, "objective": objective}, ds, rounds)
            return xgb.train(xp, ds, rounds, obj=objective)
        e = SimpleNamespace(
            native="rank:ndcg", version=xgb.__version__, train=train,
            margin_copy=(xgb.Booster, "predict"),  # xgb.train(obj=...) predicts the training margins per round
            predict=lambda booster, data: booster.predict(xgb.DMatrix(data), output_margin=True),
            hand_over=lambda: (ds.get_label(), ds.get_uint_info("group_ptr"), ds.get_weight()))
    numba.set_num_threads(nt)  # after the objective
    e.obj, e.ds = obj, ds
    return e


def _openmp_status():
    from lambda_objectives._core.openmp import openmp_sharing

    return openmp_sharing() or "not asked (LightGBM)"


def _engine_pair(engine, quick, nt, repeats, share_openmp=True, imports=(), rows=None, rounds=None,
                 xgboost_first=False):
    """Native and ours for one engine and thread count, in this (fresh) process, trained in turn
    (:func:`_engine` sets them up; ``share_openmp``, ``imports`` and ``xgboost_first`` as there; ``rows`` and ``rounds``
    override the sizes ``quick`` picks)."""
    import numba

    from . import interleaved, ratio

    n_rows, n_rounds = (20_000, 5) if quick else (170_000, 30)
    n_rows, rounds = rows or n_rows, rounds or n_rounds
    X, y, ptr = _make_data(n_rows, 136, 120)
    sizes = np.diff(ptr)
    e = _engine(engine, X, y, sizes, rounds, nt, share_openmp, imports, xgboost_first)
    fns = {"native": lambda: e.train(e.native), "ours": lambda: e.train(e.obj)}
    b_n, b_o = fns["native"](), fns["ours"]()  # warm-up (JIT, first-touch) and the parity check
    sub = X[:5000]
    diff = float(np.abs(e.predict(b_n, sub) - e.predict(b_o, sub)).max())
    t = interleaved(fns, repeats)
    r = ratio(t["ours"], t["native"])
    return {"engine": engine, "threads": nt, "native_s_min": t["native"]["min"], "native_s_median": t["native"]["median"],
            "ours_s_min": t["ours"]["min"], "ours_s_median": t["ours"]["median"],
            "ratio_min": r["min"], "ratio_median": r["median"], "repeats": repeats,
            "max_pred_diff": diff, "rows": int(X.shape[0]), "queries": int(len(sizes)), "rounds": rounds,
            "version": e.version, "numba": numba.__version__, "openmp": _openmp_status(),
            "imports": (" then ".join(imports) if imports else f"{engine} only")
            + (", XGBoost objective first" if xgboost_first else ""),
            "threading_layer": numba.threading_layer()}


def _profile_round(engine, n_rows, rounds, nt, repeats=5, share_openmp=True):
    """Where one custom-objective round goes, in this (fresh) process: the whole round of the native
    objective and of ours (min over ``repeats`` trainings of ``rounds`` rounds, per round); our
    callback's time *inside* training, the engine's copy of the margins handed to it, and the rest of
    our round (the engine's tree and its intake of our gradients); and each part of the callback timed
    alone on the same scores: the engine's hand-over (labels, groups, weights), the data-set cache
    check, our kernel (``compute``), the Hessian check.

    Inside versus alone is what exposes two OpenMP runtimes: an engine's workers still spinning from
    its last parallel region slow the callback that follows (``share_openmp=False`` reproduces it).
    """
    import time

    from lambda_objectives.adapters.presets import BACKENDS

    X, y, ptr = _make_data(n_rows, 136, 120)
    e = _engine(engine, X, y, np.diff(ptr), rounds, nt, share_openmp)
    obj, ds = e.obj, e.ds
    inside = [0.0, 0.0]  # our callback, the engine's margin copy handed to it (per training)

    def timed_callback(preds, data):
        t = time.perf_counter()
        out = obj(preds, data)
        inside[0] += time.perf_counter() - t
        return out

    def timed_margins(cls, name):
        """Wrap the engine's method that copies the training margins out for a custom objective;
        returns the function that puts the original back."""
        fn = cls.__dict__.get(name)
        if fn is None:  # another engine version: the copy stays inside "rest of our round"
            return lambda: None

        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            out = fn(*args, **kwargs)
            inside[1] += time.perf_counter() - t
            return out
        setattr(cls, name, wrapper)
        return lambda: setattr(cls, name, fn)

    e.train(obj)  # warm-up (JIT, first touch)
    native = min(_time(lambda: e.train(e.native))[0] for _ in range(repeats))
    ours = min(_time(lambda: e.train(obj))[0] for _ in range(repeats))
    split = []
    restore = timed_margins(*e.margin_copy)
    try:
        for _ in range(repeats):
            inside[:] = [0.0, 0.0]
            total = _time(lambda: e.train(timed_callback))[0]
            split.append((total, inside[0], inside[1]))
    finally:
        restore()
    total, callback, margins = min(split)
    scores = np.random.default_rng(0).normal(size=y.shape[0]).astype(np.float32)
    labels, groups, weights = e.hand_over()
    st = obj._state(ds, labels, groups, weights, 1e-3)  # the prepared state the callback reuses

    def best(fn, n=20):
        return min(_time(fn)[0] for _ in range(n))

    parts = {
        "our callback inside training": callback / rounds,
        "engine's copy of the margins for the callback": margins / rounds,
        "rest of our round (engine: tree, gradient hand-in)": (total - callback - margins) / rounds,
        "engine hand-over (labels, groups, weights), alone": best(e.hand_over),
        "cache check (labels/groups/weights unchanged), alone": best(lambda: obj._state(ds, labels, groups, weights,
                                                                                     1e-3)),
        "our kernel (compute, float32 out), alone": best(lambda: BACKENDS[obj.preset].compute(obj, st, scores), 10),
        "Hessian and finiteness check, alone": best(lambda: obj._check_hessian(st)),
    }
    return {"engine": engine, "threads": nt, "rows": int(X.shape[0]), "rounds": rounds,
            "native_round_s": native / rounds, "ours_round_s": ours / rounds, "parts_s": parts,
            "openmp": _openmp_status()}


def profile(n_rows=170_000, rounds=30, threads=(1, 2)):
    """The per-round breakdown of :func:`_profile_round` for both engines at each thread count, each
    in a fresh process, XGBoost with and without numba on its OpenMP runtime (docs/development.md,
    "Where a custom-objective round goes")."""
    from .._runner import run_isolated

    return [run_isolated(_profile_round, engine, n_rows, rounds, nt, 5, share) for nt in threads
            for engine, share in (("lightgbm", True), ("xgboost", True), ("xgboost", False))]


#: (engine, numba on XGBoost's runtime allowed, engines imported first, an XGBoost objective made first)
#: of each run, per thread count
CONFIGS = (("lightgbm", True, (), False), ("xgboost", True, (), False), ("xgboost", False, (), False),
           ("xgboost", True, ("lightgbm", "xgboost"), False), ("xgboost", True, ("xgboost", "lightgbm"), False),
           ("lightgbm", True, ("lightgbm", "xgboost"), True))

#: the command line's name of each configuration of :data:`CONFIGS`, in that order
RUN_NAMES = ("lightgbm", "xgboost", "xgboost-two-runtimes", "xgboost-lightgbm-first", "xgboost-xgboost-first",
             "lightgbm-after-xgboost")


def run(quick: bool = False, repeats=None, rows=None, rounds=None, runs=None, threads=None) -> dict:
    """Run the benchmark; returns timings, ratios, parity checks and a machine record.

    Each (engine, threads, configuration of :data:`CONFIGS`) runs in its own fresh process (LightGBM
    and XGBoost ship different OpenMP runtimes; which one numba joins is decided once per process);
    native and ours alternate in that process. ``rows`` and ``rounds`` override the sizes ``quick`` picks;
    ``runs`` (names of :data:`RUN_NAMES`) and ``threads`` restrict the configurations and thread counts.
    """
    from .._machine import machine_record
    from .._runner import run_isolated
    from . import THREADS

    repeats = repeats or (2 if quick else 5)
    # XGBoost alone twice: numba on XGBoost's OpenMP runtime (what a user gets) and on its own (the
    # cause); then with both engines imported, in either order; and LightGBM after an XGBoost objective
    chosen = [cfg for name, cfg in zip(RUN_NAMES, CONFIGS) if runs is None or name in runs]
    runs = [run_isolated(_engine_pair, engine, quick, nt, repeats, share, imports, rows, rounds, first)
            for nt in (threads or THREADS) for engine, share, imports, first in chosen]
    first = runs[0]
    return {"rows": first["rows"], "features": 136, "queries": first["queries"], "rounds": first["rounds"],
            "runs": runs, "machine": machine_record()}


def main(argv=None):
    from .._cli import positive_int

    p = argparse.ArgumentParser(prog="python -m comparisons.bench.adapters", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="20K rows, 5 rounds, 2 repeats (a smoke run)")
    p.add_argument("--profile", action="store_true",
                   help="where one round of ours goes (callback inside training, its parts alone) instead")
    p.add_argument("--repeats", type=positive_int, help="trainings of each objective per run (default 5; --quick 2)")
    p.add_argument("--rows", type=positive_int, help="rows of the MSLR-shaped set (default 170,000; --quick 20,000)")
    p.add_argument("--rounds", type=positive_int, help="boosting rounds (default 30; --quick 5)")
    p.add_argument("--runs", nargs="+", choices=RUN_NAMES, metavar="NAME",
                   help="only these configurations: " + ", ".join(RUN_NAMES) + " (default all)")
    p.add_argument("--threads", nargs="+", type=positive_int, metavar="N", help="thread counts (default 1 and 2)")
    a = p.parse_args(argv)
    if a.profile:
        rows = profile(a.rows or (20_000 if a.quick else 170_000), a.rounds or (5 if a.quick else 30),
                       tuple(a.threads or (1, 2)))
        for r in rows:
            extra = r["ours_round_s"] - r["native_round_s"]
            print(f"{r['engine']} {r['threads']} thread(s), {r['rows']} rows: round native {1e3 * r['native_round_s']:.1f} ms, "
                  f"ours {1e3 * r['ours_round_s']:.1f} ms (ours - native {1e3 * extra:+.1f} ms); numba's OpenMP: "
                  f"{r['openmp']}")
            for name, sec in r["parts_s"].items():
                print(f"    {name:<54} {1e3 * sec:8.2f} ms")
        return rows
    res = run(quick=a.quick, repeats=a.repeats, rows=a.rows, rounds=a.rounds, runs=a.runs, threads=a.threads)
    print(f"bench.adapters: {res['rows']} rows x {res['features']} features, {res['queries']} queries, "
          f"{res['rounds']} rounds, {res['runs'][0]['repeats']} repeats (ours and native in turn)")
    print(f"{'engine':>9} {'threads':>7} {'native s min/med':>17} {'ours s min/med':>15} {'ours/native min/med':>20} "
          f"{'max|dpred|':>10}  {'imported':<47} numba's OpenMP runtime")
    for r in res["runs"]:
        print(f"{r['engine']:>9} {r['threads']:>7} {r['native_s_min']:>8.2f}/{r['native_s_median']:<8.2f} "
              f"{r['ours_s_min']:>7.2f}/{r['ours_s_median']:<7.2f} {r['ratio_min']:>10.3f}/{r['ratio_median']:<9.3f} "
              f"{r['max_pred_diff']:>10.1e}  {r['imports']:<47} {r['openmp']}")
    return res


if __name__ == "__main__":
    main()
