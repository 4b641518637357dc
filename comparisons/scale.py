"""``python -m comparisons scale``: the paper's grid at MSLR-WEB10K scale, measured then extrapolated.

Times a few boosting rounds of the reference trainer on a 1.2 M-row synthetic set shaped like
MSLR-WEB10K (``make_mslr_like(10000)``: 136 features, grades 0..4, ~120 documents per query) for
LambdaMART (ΔNDCG@10) and McRank, SE and OLE, 10 and 20 leaves, breadth-first; then extrapolates
one full configuration (1000 LambdaMART / 2500 McRank rounds) and the whole grid (3 learning
rates, 5 folds). The extrapolation is linear in rounds: per-round cost does not change with
the iteration for these trainers (same data, same leaf limit). Run-to-run noise is reported.
"""

import json
import time
from pathlib import Path

import numpy as np

from ._cli import positive_int
from ._machine import machine_record


def measure(queries=10000, rounds=5, threads=None):
    from lambda_objectives.datasets import make_mslr_like
    from reference import MARTRanker

    t = time.perf_counter()
    d = make_mslr_like(queries, seed=0)
    gen = time.perf_counter() - t
    rows = []
    for system, objective, full_rounds in (("LambdaMART", "lambda", 1000), ("McRank", "mcrank", 2500)):
        for leaves in (10, 20):
            for criterion in ("se", "ole"):
                m = MARTRanker(objective=objective, metric="ndcg", k=10, criterion=criterion, growth="breadth_first",
                               num_leaves=leaves, learning_rate=0.1, n_estimators=rounds, n_threads=threads)
                t = time.perf_counter()
                m.fit(d.X, d.y, group=d.group, history_loss=False)
                total = time.perf_counter() - t
                per_round = np.array(m.fit_seconds_[1:])  # the first round includes binning-independent warm-up
                est = float(np.median(per_round)) * full_rounds
                rows.append({"system": system, "leaves": leaves, "criterion": criterion, "rounds_timed": rounds,
                             "fit_seconds": total, "median_round_s": float(np.median(per_round)),
                             "round_spread_s": float(per_round.max() - per_round.min()),
                             "full_config_rounds": full_rounds, "full_config_estimate_h": est / 3600})
                print(f"{system} {leaves} leaves {criterion}: {np.median(per_round):.2f} s/round -> "
                      f"{est / 3600:.2f} h for {full_rounds} rounds", flush=True)
    one_fold = sum(r["full_config_estimate_h"] for r in rows) * 3  # three learning rates
    return {"machine": machine_record(), "rows_in_data": int(d.X.shape[0]), "generate_s": gen, "configs": rows,
            "grid_estimate_h_per_fold": one_fold, "grid_estimate_h_5_folds": 5 * one_fold}


def add_arguments(p):
    p.add_argument("--queries", type=positive_int, default=10000, help="queries of the MSLR-shaped synthetic set")
    p.add_argument("--rounds", type=positive_int, default=5, help="timed rounds per configuration")
    p.add_argument("--threads", type=positive_int, default=None, help="numba threads (default all)")
    p.add_argument("--out", default="results/scale", help="output folder")
    return p


def run(a):
    res = measure(a.queries, a.rounds, a.threads)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps(res, indent=2, default=float))
    print(f"{res['rows_in_data']} rows; whole grid: {res['grid_estimate_h_per_fold']:.1f} h per fold, "
          f"{res['grid_estimate_h_5_folds']:.1f} h for 5 folds (on {res['machine']['cpu_count']} cores)")
    return 0


def main(argv=None):
    from .__main__ import main as cli

    return cli(["scale", *([] if argv is None else argv)])
