"""Benchmark of long queries (issues #34, #47): the gradient cost per round against list length.

At 100 / 1,000 / 5,000 / 20,000 documents a query (the same number of rows at every size), per
round and per 20,000 rows, at 1 and 2 threads, min and median over repeats, **timed side by side**:
in the XGBoost process every repeat runs each of the callables below once, in turn (issue #47: before,
ours ran for every size first and each engine later in a process of its own, so under background
load a ratio compared different time windows):

* ours: ``lambda_gradients`` ΔNDCG over the full list (O(n²) a query), ΔNDCG@10 (O(n·10)) and the
  sampled pairs ``pair_method="mean"`` with m = 1 and m = 4 partners a document (O(n·m)); each repeat
  times up to ``--rounds`` calls in a row (at least 0.1 s of them), like the engines' trainings of that
  many rounds;
* XGBoost's ``rank:ndcg`` with ``lambdarank_pair_method="topk"`` (its default) and ``"mean"`` with
  ``lambdarank_num_pair_per_sample`` = 1 and 4. An engine's objective time per round is (its native
  training − the same training with a custom objective handing back fixed gradients) ÷ rounds: both
  grow the same trees on the same data, so the difference is the objective;
* ours *inside* XGBoost: ``XGBoostObjective("ndcg", pair_method="mean", num_pair_per_sample=m)``, its
  ``n_threads`` the engine's ``nthread``, timed the same way as the native objective (its training −
  the fixed-gradient training), so the adapter's own work (the engine's hand-over, the data-set cache
  check, the float32 hand-back) counts and the engine's custom-objective plumbing, which the
  subtraction removes from the native's figure too, does not; and the whole training with ours ÷ the
  native ``mean`` training of the same m, what a user pays (other gradients: the same depth, not the
  same trees);
* LightGBM's ``lambdarank`` (its defaults: 30 pairs deep), in a process of its own (LightGBM and
  XGBoost in one process slow each other down), its native and fixed-gradient trainings in turn.

And one query of 20,000 documents (``--one-query N``), in turn at 1 and 2 threads: ΔNDCG over the full
list, its split pair loop (``_kernels/pairs.py``: a long query's rows cut into blocks over the threads)
beside the same query with the split turned off (``pairs.SPLIT_PAIRS`` out of reach), and its sampled
pairs (m = 1 and 4) at 1 and 2 threads.

Run: ``python -m comparisons.bench.long_lists [--quick] [--rows N] [--sizes 100 1000 ...] [--one-query N]``.
"""

import argparse
import json
import time
from contextlib import contextmanager

import numpy as np

from lambda_objectives import lambda_gradients
from lambda_objectives._kernels import pairs

from .._machine import machine_record
from .._runner import run_isolated
from . import THREADS, interleaved

SIZES = (100, 1000, 5000, 20000)
PER = 20000  # every time is reported per this many rows

#: ours: name -> lambda_gradients options
OURS = {"ours_full": {}, "ours_at10": {"k": 10}, "ours_mean": {"pair_method": "mean", "num_pair_per_sample": 1},
        "ours_mean4": {"pair_method": "mean", "num_pair_per_sample": 4}}
#: sampled partners a document (m) -> the names of ours and XGBoost's ``mean`` with that m
SAMPLED = {1: ("ours_mean", "xgboost_mean"), 4: ("ours_mean4", "xgboost_mean4")}


def _data(rows, docs, seed=0):
    """Web-like grades 0..4 (50/30/15/4/1 %), ``rows // docs`` queries of ``docs`` documents, 5 features."""
    rng = np.random.default_rng(seed)
    n = (rows // docs) * docs
    y = rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(np.float64)
    X = (0.3 * y[:, None] + rng.normal(size=(n, 5))).astype(np.float32)
    s = rng.normal(size=n) + 0.3 * y
    return X, y, s, np.arange(0, n + 1, docs, dtype=np.int64)


#: each repeat of ours lasts at least this many seconds (up to ``rounds`` calls in a row)
WINDOW = 0.1


def ours_calls(y, s, ptr, nt, rounds):
    """``{name: (call, calls a repeat)}`` of each of :data:`OURS` at ``nt`` threads: a repeat makes
    calls in a row (the sampled pairs drawing afresh with ``iteration=`` 0, 1, ...), as many as last
    :data:`WINDOW` seconds, at most ``rounds``, as an engine's figure is a training of ``rounds`` rounds:
    one call of a few milliseconds alone is too short a window on a shared machine."""
    out = {}
    for name, opts in OURS.items():
        def calls_of(times, opts=opts):
            def call():
                for i in range(times):
                    lambda_gradients(s, y, ptr, "ndcg", n_threads=nt, **opts,
                                     **({"iteration": i} if "pair_method" in opts else {}))
            return call

        t0 = time.perf_counter()
        calls_of(1)()  # compilation, first touch
        per_repeat = max(1, min(rounds, int(WINDOW / max(time.perf_counter() - t0, 1e-9))))
        out[name] = (calls_of(per_repeat), per_repeat)
    return out


@contextmanager
def _unsplit():
    """Within the block, no query's pair loop is split (``SPLIT_PAIRS``, the loop before issue #34
    item 3): the threshold out of reach."""
    split = pairs.SPLIT_PAIRS
    pairs.SPLIT_PAIRS = np.iinfo(np.int64).max
    try:
        yield
    finally:
        pairs.SPLIT_PAIRS = split


def one_query(docs, repeats):
    """One query of ``docs`` documents, ΔNDCG over the full list, split and unsplit at 1 and 2 threads:
    ``{"docs", "pairs_split_into", "ms": {(split|unsplit)_(threads)t: {"min", "median"}}, "speedup": ...}``."""
    _, y, s, ptr = _data(docs, docs)

    def call(nt, split):
        if split:
            return lambda_gradients(s, y, ptr, "ndcg", n_threads=nt)
        with _unsplit():
            return lambda_gradients(s, y, ptr, "ndcg", n_threads=nt)

    calls = {f"{'split' if sp else 'unsplit'}_{nt}t": (lambda nt=nt, sp=sp: call(nt, sp))
             for sp in (True, False) for nt in THREADS}
    first = {name: fn() for name, fn in calls.items()}  # compilation, first touch
    same = all(np.array_equal(a, b) for a, b in zip(first[f"split_{THREADS[0]}t"], first[f"split_{THREADS[-1]}t"]))
    t = interleaved(calls, repeats)
    ms = {name: {m: 1e3 * t[name][m] for m in ("min", "median")} for name in calls}
    lo, hi = THREADS[0], THREADS[-1]
    return {"docs": docs,
            "blocks": int(pairs.split_blocks(pairs.NDCG, docs, 0, pairs.SPLIT_PAIRS, pairs.BLOCK_SPAN)),
            "same_bits_at_1_and_2_threads": bool(same),
            "ms": ms,
            f"speedup_{hi}t_over_{lo}t": {m: ms[f"split_{lo}t"][m] / ms[f"split_{hi}t"][m] for m in ("min", "median")},
            f"unsplit_speedup_{hi}t_over_{lo}t": {m: ms[f"unsplit_{lo}t"][m] / ms[f"unsplit_{hi}t"][m]
                                                  for m in ("min", "median")},
            f"split_over_unsplit_{lo}t": {m: ms[f"split_{lo}t"][m] / ms[f"unsplit_{lo}t"][m] for m in ("min", "median")},
            "sampled": {str(m): one_query_sampled(y, s, ptr, m, repeats) for m in SAMPLED}}


def one_query_sampled(y, s, ptr, m, repeats):
    """The one long query's sampled pairs (``m`` a document) at 1 and 2 threads in turn, each repeat up
    to :data:`WINDOW` seconds of calls (a call takes about a millisecond): ``{"same_bits_at_1_and_2_threads",
    "ms": {"(threads)t": {"min", "median"}}, "speedup_2t_over_1t"}``."""
    def calls_of(nt, times):
        def call():
            for i in range(times):
                out = lambda_gradients(s, y, ptr, "ndcg", n_threads=nt, pair_method="mean", num_pair_per_sample=m,
                                       iteration=i)
            return out
        return call

    per, first = {}, {}
    for nt in THREADS:
        name = f"{nt}t"
        first[name] = calls_of(nt, 1)()  # compilation, first touch
        t0 = time.perf_counter()
        calls_of(nt, 1)()  # the window from a warm call: a cold one left one call a repeat
        per[name] = max(1, int(WINDOW / max(time.perf_counter() - t0, 1e-9)))
    lo, hi = THREADS[0], THREADS[-1]
    same = all(np.array_equal(a, b) for a, b in zip(first[f"{lo}t"], first[f"{hi}t"]))
    calls = {name: calls_of(int(name[:-1]), per[name]) for name in per}
    t = interleaved(calls, repeats)
    ms = {name: {q: 1e3 * t[name][q] / per[name] for q in ("min", "median")} for name in calls}
    return {"same_bits_at_1_and_2_threads": bool(same), "ms": ms,
            f"speedup_{hi}t_over_{lo}t": {q: ms[f"{lo}t"][q] / ms[f"{hi}t"][q] for q in ("min", "median")}}


def engine_times(engine, sizes, rows, repeats, rounds):
    """An engine's objective seconds per round per :data:`PER` rows (run in a fresh process):
    ``{(size, name, threads): {"min", "median"} or {"refused": message}}``. In XGBoost's process ours
    (:data:`OURS`, seconds per call) run in the same repeats, each callable once a repeat in turn."""
    out = {}
    for docs in sizes:
        X, y, s, ptr = _data(rows, docs)
        scale = PER / y.shape[0]
        g = np.asarray(np.random.default_rng(1).normal(size=y.shape[0]), dtype=np.float32)
        h = np.ones(y.shape[0], dtype=np.float32)
        runs = _engine_runs(engine, X, y, ptr, g, h, rounds)
        for nt in THREADS:
            calls, per = {}, {}
            for name, native, fixed, ours_in in runs:
                try:
                    native(nt)  # warm-up (and LightGBM's refusal of a query over 10,000 rows)
                except Exception as exc:  # noqa: BLE001: the engine's own error, reported as such
                    out[(docs, name, nt)] = {"refused": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"}
                    continue
                calls[name] = lambda native=native: native(nt)
                calls["fixed"] = lambda fixed=fixed: fixed(nt)
                if ours_in is not None:
                    ours_in(nt)  # compilation, the adapter's data-set cache
                    calls[f"ours_in_{name}"] = lambda ours_in=ours_in: ours_in(nt)
            if engine == "xgboost":
                for name, (call, times) in ours_calls(y, s, ptr, nt, rounds).items():
                    calls[name] = call
                    per[name] = times
            if "fixed" not in calls:
                continue
            t = interleaved(calls, repeats)
            for name in calls:
                if name in per:  # ours alone: seconds per call
                    out[(docs, name, nt)] = {m: t[name][m] / per[name] * scale for m in ("min", "median")}
                elif name != "fixed":  # the objective's time: the training less the same training with fixed gradients
                    out[(docs, name, nt)] = {m: max(0.0, t[name][m] - t["fixed"][m]) / rounds * scale
                                             for m in ("min", "median")}
            for name, _, _, ours_in in runs:
                if ours_in is not None and name in calls:  # what a user pays: whole trainings, ours ÷ native
                    out[(docs, f"training_ours_over_{name}", nt)] = {m: t[f"ours_in_{name}"][m] / t[name][m]
                                                                     for m in ("min", "median")}
    return out


def _engine_runs(engine, X, y, ptr, g, h, rounds):
    """``[(name, native(threads), fixed(threads), ours inside(threads) or None)]``: one training each."""
    if engine == "lightgbm":
        import lightgbm as lgb

        def train(objective, nt):
            params = {"objective": objective, "num_leaves": 7, "verbose": -1, "num_threads": nt,
                      "deterministic": True, "force_row_wise": True, "min_data_in_leaf": 20}
            return lgb.train(params, lgb.Dataset(X, y, group=np.diff(ptr)), rounds)

        return [("lightgbm_lambdarank", lambda nt: train("lambdarank", nt),
                 lambda nt: train(lambda preds, data: (g, h), nt), None)]
    import xgboost as xgb

    qid = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
    dm = xgb.DMatrix(X, y, qid=qid)

    def train(params, nt, obj=None):
        base = {"max_depth": 3, "tree_method": "hist", "nthread": nt}
        return xgb.train({**base, **params}, dm, rounds, obj=obj)

    from lambda_objectives.adapters import XGBoostObjective

    # ours inside XGBoost, sampled pairs against its ``mean`` of the same m: made before numba starts
    # its threads, so numba joins XGBoost's OpenMP runtime as in a user's script
    inside = {m: XGBoostObjective("ndcg", **OURS[name]) for m, (name, _) in SAMPLED.items()}
    runs = [("xgboost_topk", lambda nt: train({"objective": "rank:ndcg", "lambdarank_pair_method": "topk"}, nt),
             None, None)]
    for m, (_, name) in SAMPLED.items():
        params = {"objective": "rank:ndcg", "lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": m}
        runs.append((name, lambda nt, p=params: train(p, nt), None,
                     lambda nt, m=m: train({"disable_default_eval_metric": 1}, nt, obj=_threads(inside[m], nt))))
    fixed = lambda nt: train({"disable_default_eval_metric": 1}, nt, obj=lambda preds, d: (g, h))  # noqa: E731
    return [(name, native, fixed, ours_in) for name, native, _, ours_in in runs]


def _threads(objective, nt):
    """``objective`` set to ``nt`` numba threads, the engine's own ``nthread`` (its default is every
    thread numba started, whatever the engine was given)."""
    objective.n_threads = nt
    return objective


def run(quick=False, rows=None, sizes=None, repeats=None, rounds=None, one=None):
    """The cost table and the one long query (``one`` documents, default 20,000; 0 leaves it out);
    returns a JSON-serialisable dict."""
    rows = rows or (4000 if quick else PER)
    sizes = tuple(sizes or ((100, 1000, 4000) if quick else SIZES))
    repeats = max(3, repeats or 3)
    rounds = rounds or (3 if quick else 5)
    one = PER if one is None else one
    long_query = one_query(one, repeats) if one else None
    times = {}
    for engine in ("lightgbm", "xgboost"):
        times.update(run_isolated(engine_times, engine, sizes, rows, repeats, rounds))
    names = list(OURS) + ["lightgbm_lambdarank", "xgboost_topk"] + [x for _, x in SAMPLED.values()]
    table = []
    for docs in sizes:
        for nt in THREADS:
            row = {"docs_per_query": docs, "threads": nt}
            for name in names:
                t = times[(docs, name, nt)]
                if "refused" in t:
                    row[f"{name}_ms"] = "refused"
                    continue
                row[f"{name}_ms_min"] = 1e3 * t["min"]
                row[f"{name}_ms_median"] = 1e3 * t["median"]
            for ours_name, xgb_name in SAMPLED.values():
                xm = times[(docs, xgb_name, nt)]
                om = times[(docs, ours_name, nt)]
                if "refused" not in xm and xm["min"] > 0 and xm["median"] > 0:
                    row[f"{ours_name}_over_{xgb_name}_min"] = om["min"] / xm["min"]
                    row[f"{ours_name}_over_{xgb_name}_median"] = om["median"] / xm["median"]
                inside = times.get((docs, f"ours_in_{xgb_name}", nt))
                if inside is not None:
                    row[f"{ours_name}_in_xgboost_ms_min"] = 1e3 * inside["min"]
                    row[f"{ours_name}_in_xgboost_ms_median"] = 1e3 * inside["median"]
                    whole = times[(docs, f"training_ours_over_{xgb_name}", nt)]
                    row[f"training_{ours_name}_over_{xgb_name}_min"] = whole["min"]
                    row[f"training_{ours_name}_over_{xgb_name}_median"] = whole["median"]
            table.append(row)
    return {"machine": machine_record(),
            "data": f"web-like grades 0..4, {rows} rows a size ({rows // min(sizes)}-{max(1, rows // max(sizes))} "
                    f"queries), 5 features; engine trees: 7 leaves / depth 3, {rounds} rounds",
            "unit": f"ms per round per {PER} rows (min and median over {repeats} repeats; ours and XGBoost in "
                    "one process, each callable once a repeat in turn)",
            "rows": table,
            "one_query": long_query}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rows", type=int, help=f"rows at each size (default {PER}; --quick 4000)")
    p.add_argument("--sizes", type=int, nargs="+", help=f"documents a query (default {SIZES})")
    p.add_argument("--repeats", type=int, help="repeats of every timing, at least 3 (default 3)")
    p.add_argument("--rounds", type=int)
    p.add_argument("--one-query", type=int, help=f"documents of the one long query (default {PER}; 0: none)")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    if args.one_query is not None and args.one_query < 0:
        p.error(f"--one-query takes a number of documents >= 0, got {args.one_query}")
    res = run(args.quick, args.rows, args.sizes, args.repeats, args.rounds, args.one_query)
    print(json.dumps(res, indent=2, default=float))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2, default=float)


if __name__ == "__main__":
    main()
