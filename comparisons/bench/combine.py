"""Benchmark: the exact breakpoint sweep for the best linear combination of two rankers vs grid search.

The peer is a grid search over α with as many points as the sweep has intervals (the same number
of distinct rankings looked at), timed in the same run; we also report how far a 101-point grid
falls short of the exact optimum. Run: ``python -m comparisons.bench.combine [--quick]``.
"""

import argparse
import json
import time

import numpy as np

from lambda_objectives import mean_metric
from lambda_objectives.diagnostics.combine import best_linear_combination, combination_breakpoints
from lambda_objectives.data.datasets import make_ranking

from .._machine import machine_record


def run(quick=False):
    d = make_ranking(60 if quick else 300, docs_per_query=(10, 60), n_features=10, seed=0)
    rng = np.random.default_rng(1)
    w1, w2 = rng.normal(size=10), rng.normal(size=10)
    s1, s2 = d.X @ w1 + 0.3 * d.y, d.X @ w2 + 0.3 * d.y
    best_linear_combination(s1, s2, d.y, d.group_ptr)  # compile
    t = time.perf_counter()
    alpha, value = best_linear_combination(s1, s2, d.y, d.group_ptr)
    t_exact = time.perf_counter() - t
    n_int = np.unique(combination_breakpoints(s1, s2, d.y, d.group_ptr)[0]).size + 1
    grid = np.linspace(0, 1, n_int)
    t = time.perf_counter()
    gbest = max(mean_metric(a * s1 + (1 - a) * s2, d.y, d.group_ptr, "ndcg@10") for a in grid)
    t_grid = time.perf_counter() - t
    coarse = max(mean_metric(a * s1 + (1 - a) * s2, d.y, d.group_ptr, "ndcg@10") for a in np.linspace(0, 1, 101))
    return {"machine": machine_record(), "queries": d.n_queries, "rows": int(d.y.shape[0]), "intervals": int(n_int),
            "exact_alpha": alpha, "exact_ndcg@10": value, "exact_s": t_exact,
            "grid_same_evaluations_s": t_grid, "grid_over_exact_time": t_grid / t_exact,
            "grid_same_evaluations_best": gbest, "grid_101_best": coarse,
            "grid_101_shortfall": value - coarse}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    print(json.dumps(run(p.parse_args(argv).quick), indent=2, default=float))


if __name__ == "__main__":
    main()
