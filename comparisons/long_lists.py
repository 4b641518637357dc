"""What each pair option reaches on long lists: full list, truncated, sampled (issue #34, item 4).

A synthetic set of long queries (``make_ranking``: web-like grades 0..4, list lengths log-normal between
half and twice ``--docs``), split by whole queries into train / validation / test (60 / 20 / 20 %). The
same LightGBM trees (31 leaves, learning rate 0.1, 255 bins, 20 documents a leaf) are trained with:

* ours, ΔNDCG over the **full list** (O(n²) a query: the adapters' default);
* ours, ΔNDCG **truncated** at ``k = 10`` (O(n·k));
* ours, **sampled** pairs ``pair_method="mean"`` with ``num_pair_per_sample`` m = 1 and m = 4 (O(n·m));
* LightGBM's native ``lambdarank`` (its default: pairs with a document in the top 30) and, in a
  process of its own, XGBoost's ``rank:ndcg`` with ``lambdarank_pair_method`` ``topk`` (its default)
  and ``mean`` (m = 1), as references.

Every system stops early on validation NDCG@10 (our metric, LightGBM's convention: exponential gain, ties in
input order, a query without a relevant document scores 1; the table counts such test queries) with a patience of 50
rounds, and is scored on the test queries at its best iteration. The table gives test NDCG@10 and
ERR@10, and for each system its paired difference to the full list over the test queries: the mean,
its 95 % t interval and a two-sided sign-flip p-value (one data set, one seed: a within-set comparison,
not a claim about other data). Seconds are whole trainings (numba's compilation excluded).

Run: ``python -m comparisons long-lists [--queries N] [--docs N] [--rounds N] [--seed N] [--threads N]
[--out DIR]``.
"""

import json
import time
import warnings
from pathlib import Path

import numpy as np

from ._cli import positive_int
from ._machine import log, machine_record
from ._runner import run_isolated

#: the reference every paired difference is taken against
BASELINE = "ours ΔNDCG, full list"
PATIENCE = 50


def _data(n_queries, docs, seed):
    """Train / validation / test :class:`~lambda_objectives.data.datasets.RankingData` of long queries."""
    from lambda_objectives.data.datasets import make_ranking, train_test_split_queries

    data = make_ranking(n_queries, docs_per_query=(max(2, docs // 2), 2 * docs), n_features=30, seed=seed)
    rest, test = train_test_split_queries(data, 0.2, seed=seed)
    train, vali = train_test_split_queries(rest, 0.25, seed=seed + 1)
    return train, vali, test


def _describe(n_queries, docs, seed, train, vali, test):
    """The data set's line of the report: sizes, test list lengths, test queries without a relevant document."""
    sizes = np.diff(test.group_ptr)
    return {"queries": [train.n_queries, vali.n_queries, test.n_queries],
            "test_queries_without_relevant": int(np.sum(np.maximum.reduceat(test.y, test.group_ptr[:-1]) == 0)),
            "rows": [int(train.y.shape[0]), int(vali.y.shape[0]), int(test.y.shape[0])],
            "docs_per_query": [int(sizes.min()), float(sizes.mean()), int(sizes.max())],
            "generator": f"make_ranking({n_queries}, docs_per_query=({max(2, docs // 2)}, {2 * docs}), "
                         f"n_features=30, seed={seed})"}


def _per_query(scores, d):
    from lambda_objectives import metric_values_table

    return {m: v.tolist() for m, v in metric_values_table(scores, d.y, d.group_ptr, ("ndcg@10", "err@10")).items()}


def lightgbm_systems(n_queries, docs, rounds, seed, threads):
    """Ours (full, @10, sampled m = 1 and 4) and native ``lambdarank`` in LightGBM, in this process:
    ``(the data set's description, one record per system)``."""
    import lightgbm as lgb

    from lambda_objectives import LightGBMObjective, lightgbm_metric

    train, vali, test = _data(n_queries, docs, seed)
    sampled = {"pair_method": "mean", "seed": seed}
    systems = [
        (BASELINE, lambda: LightGBMObjective("ndcg", n_threads=threads)),
        ("ours ΔNDCG@10", lambda: LightGBMObjective("ndcg", k=10, n_threads=threads)),
        ("ours ΔNDCG, sampled m = 1", lambda: LightGBMObjective("ndcg", num_pair_per_sample=1, n_threads=threads,
                                                                 **sampled)),
        ("ours ΔNDCG, sampled m = 4", lambda: LightGBMObjective("ndcg", num_pair_per_sample=4, n_threads=threads,
                                                                 **sampled)),
        ("LightGBM native lambdarank", lambda: "lambdarank"),
    ]
    # binned once, shared by every system (the objective is not a data-set parameter)
    dtrain = lgb.Dataset(train.X, train.y, group=np.diff(train.group_ptr), params={"max_bin": 255, "verbose": -1},
                         free_raw_data=False)
    dvali = lgb.Dataset(vali.X, vali.y, group=np.diff(vali.group_ptr), reference=dtrain, free_raw_data=False)
    out = []
    for name, make in systems:
        params = {"objective": make(), "num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20,
                  "max_bin": 255, "metric": "None", "verbose": -1, "num_threads": threads, "seed": seed,
                  "deterministic": True, "force_row_wise": True}

        def fit(n_rounds, params=params):
            return lgb.train(params, dtrain, n_rounds, valid_sets=[dvali], feval=lightgbm_metric("ndcg@10"),
                             callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])

        with warnings.catch_warnings():  # the full list's CostWarning is what this command measures
            warnings.simplefilter("ignore")
            fit(1)  # numba's compilation, outside the timing
            t = time.perf_counter()
            booster = fit(rounds)
            seconds = time.perf_counter() - t
        best = booster.best_iteration or rounds
        scores = booster.predict(test.X, num_iteration=best)
        log(f"long-lists: {name}: best iteration {best}, {seconds:.0f} s")
        out.append({"system": name, "engine": "lightgbm", "best_iteration": int(best), "seconds": seconds,
                    "per_query": _per_query(scores, test)})
    return _describe(n_queries, docs, seed, train, vali, test), out


def xgboost_systems(n_queries, docs, rounds, seed, threads):
    """XGBoost's ``rank:ndcg`` with ``topk`` and ``mean`` pairs, in this process."""
    import xgboost as xgb

    from lambda_objectives import xgboost_metric

    train, vali, test = _data(n_queries, docs, seed)

    def dmatrix(d):
        return xgb.DMatrix(d.X, d.y, qid=d.qid)

    dtrain, dvali, dtest = dmatrix(train), dmatrix(vali), dmatrix(test)
    out = []
    for name, method in (("XGBoost native rank:ndcg, topk", "topk"), ("XGBoost native rank:ndcg, mean m = 1", "mean")):
        params = {"objective": "rank:ndcg", "lambdarank_pair_method": method, "lambdarank_num_pair_per_sample": 1,
                  "tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
                  "learning_rate": 0.1, "max_bin": 255, "nthread": threads, "seed": seed,
                  "disable_default_eval_metric": 1}
        if method == "topk":
            params.pop("lambdarank_num_pair_per_sample")  # its default (32 pairs deep)

        def fit(n_rounds, params=params):
            return xgb.train(params, dtrain, n_rounds, evals=[(dvali, "vali")], custom_metric=xgboost_metric("ndcg@10"),
                             early_stopping_rounds=PATIENCE, verbose_eval=False)

        t = time.perf_counter()
        booster = fit(rounds)
        seconds = time.perf_counter() - t
        best = booster.best_iteration
        scores = booster.predict(dtest, iteration_range=(0, best + 1))
        log(f"long-lists: {name}: best iteration {best + 1}, {seconds:.0f} s")
        out.append({"system": name, "engine": "xgboost", "best_iteration": int(best + 1), "seconds": seconds,
                    "per_query": _per_query(scores, test)})
    return out


def compare(systems):
    """Rows of the table: each system's test means and its paired difference to :data:`BASELINE`."""
    from ._stats import paired_ci, sign_flip_pvalue

    base = next(s for s in systems if s["system"] == BASELINE)["per_query"]
    rows = []
    for s in systems:
        row = {k: s[k] for k in ("system", "engine", "best_iteration", "seconds")}
        for m, v in s["per_query"].items():
            row[m] = float(np.mean(v))
        if s["system"] != BASELINE:
            d = np.asarray(s["per_query"]["ndcg@10"]) - np.asarray(base["ndcg@10"])
            mean, lo, hi = paired_ci(d)
            row.update(diff_ndcg10=mean, diff_lo=lo, diff_hi=hi, p=sign_flip_pvalue(d))
        rows.append(row)
    return rows


def run_long_lists(n_queries=200, docs=1000, rounds=300, seed=0, threads=2):
    """Both engines' systems (each engine in a fresh process) and the comparison table."""
    log(f"long-lists: {n_queries} queries of {max(2, docs // 2)}-{2 * docs} documents, up to {rounds} rounds, "
        f"{threads} threads: LightGBM systems")
    data, systems = run_isolated(lightgbm_systems, n_queries, docs, rounds, seed, threads)
    log("long-lists: XGBoost systems")
    systems += run_isolated(xgboost_systems, n_queries, docs, rounds, seed, threads)
    return {"data": data, "rounds": rounds, "seed": seed, "threads": threads, "patience": PATIENCE,
            "rows": compare(systems), "machine": machine_record()}


def to_markdown(result):
    d = result["data"]
    lines = [f"Long lists: {d['generator']}; train / validation / test {d['queries'][0]} / {d['queries'][1]} / "
             f"{d['queries'][2]} queries ({d['rows'][0]:,} / {d['rows'][1]:,} / {d['rows'][2]:,} rows; test lists "
             f"{d['docs_per_query'][0]}-{d['docs_per_query'][2]} documents, mean {d['docs_per_query'][1]:.0f}). "
             f"Up to {result['rounds']} rounds, early stopping on validation NDCG@10 (patience {result['patience']}), "
             f"{result['threads']} thread(s). NDCG@10 and ERR@10 (LightGBM's convention): exponential gain 2^y − 1, ties in "
             f"input order, mean over all test queries ({d['test_queries_without_relevant']} without a relevant document, "
             f"NDCG 1 and ERR 0 for those). Paired differences to {BASELINE!r} over the "
             f"{d['queries'][2]} test queries, 95 % t interval, two-sided sign-flip p.", "",
             "| system | best iteration | seconds | test NDCG@10 | test ERR@10 | Δ NDCG@10 vs full list [95 % CI] | p |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for r in result["rows"]:
        diff = (f"{r['diff_ndcg10']:+.4f} [{r['diff_lo']:+.4f}, {r['diff_hi']:+.4f}]" if "diff_ndcg10" in r
                else "(the reference)")
        p = f"{r['p']:.3f}" if "p" in r else ""
        lines.append(f"| {r['system']} | {r['best_iteration']} | {r['seconds']:.1f} | {r['ndcg@10']:.4f} | "
                     f"{r['err@10']:.4f} | {diff} | {p} |")
    return "\n".join(lines)


def add_arguments(p):
    p.add_argument("--queries", type=positive_int, default=200, help="synthetic queries (60/20/20 %% split)")
    p.add_argument("--docs", type=positive_int, default=1000,
                   help="typical documents a query: lengths log-normal between half and twice this (default 1000)")
    p.add_argument("--rounds", type=positive_int, default=300, help="most boosting rounds (early stopping after 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and of every system")
    p.add_argument("--threads", type=positive_int, default=2, help="threads of every system")
    p.add_argument("--out", default="results/long-lists", help="output folder (long_lists.md and .json)")
    return p


def check_args(parser, args, argv):
    if args.queries < 5:
        parser.error(f"--queries must be at least 5 (a 60/20/20 split by whole queries), got {args.queries}")
    return args


def run(a):
    result = run_long_lists(a.queries, a.docs, a.rounds, a.seed, a.threads)
    text = to_markdown(result)
    print(text)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "long_lists.md").write_text(text + "\n")
    (out / "long_lists.json").write_text(json.dumps(result, indent=2, default=float))
    print(f"written to {out}/long_lists.md and long_lists.json")
    return 0


def main(argv=None):
    from .__main__ import main as cli

    return cli(["long-lists", *([] if argv is None else argv)])
