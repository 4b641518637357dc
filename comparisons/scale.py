"""``python -m comparisons scale``: the hours of the ``paper`` grid at MSLR-WEB10K scale, measured then extrapolated.

Builds the grid ``paper --synthetic QUERIES`` runs with its defaults (:func:`comparisons.paper.build_grid`:
McRank SE and OLE, LambdaMART SE, exact OLE and OLE-diag, full-list ΔNDCG, leaves {10, 20} ×
learning rates {0.06, 0.10, 0.12}, 2500 McRank and 1000 LambdaMART rounds, breadth-first, one numba
thread per cell), on ``make_mslr_like(QUERIES)`` (10,000 queries: MSLR-WEB10K's shape, 136
features, grades 0..4, ~115 documents per query) split into LETOR's folds. It loads and bins Fold1
once, as ``paper`` does per process (:func:`comparisons._data.prepared_fold`), then times
``--rounds`` rounds of every (system, leaves, criterion) with the call ``paper`` makes
(:func:`comparisons.paper.fit_cell`: the fold's training split, the history of every measure on the
validation and test splits each round); the first round (compilation) is not counted and a round
is the median of the others. A cell's hours are its rounds × that median; the learning rate does
not change a round's cost. The extrapolation is linear in rounds (same data, same leaf limit).

Printed per fold: **before** (the estimate this command gave before exact OLE was counted: SE and
OLE-diag trees only, without the history, on all of the set's rows: the training split's tree
times scaled by the row ratio) and **after** (every cell ``paper`` runs, rounds with their history,
plus loading and binning the fold once); then the wall hours of the grid with ``J`` cells at a
time (``--jobs J`` on one machine, or ``J`` single-threaded Dask workers with ``--scheduler``),
scheduled in the grid's order as ``paper`` submits them.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ._cli import positive_int
from ._machine import machine_record

#: the parallel widths the wall-hour table is printed for (cells at a time)
WIDTHS = (1, 2, 4, 8, 16, 30, 60, 150)


def paper_grid(queries, seed=0, threads=1):
    """``(args, cells of Fold1)``: what ``paper --synthetic QUERIES --threads THREADS`` runs per fold."""
    from . import paper

    p = paper.add_arguments(argparse.ArgumentParser())
    argv = ["--synthetic", str(queries), "--seed", str(seed), "--threads", str(threads)]
    args = paper.check_args(p, p.parse_args(argv), argv)
    return args, paper.build_grid(args, ["Fold1"])


def wall_hours(cell_hours, width):
    """Hours until the last of ``cell_hours`` (in submission order) finishes with ``width`` at a time."""
    free = np.zeros(min(width, len(cell_hours)) or 1)
    for h in cell_hours:
        free[np.argmin(free)] += h
    return float(free.max())


def measure(queries=10000, rounds=3, threads=1):
    from ._data import prepared_fold
    from .paper import CRITERION_NAMES, SYSTEMS, fit_cell

    args, grid = paper_grid(queries, threads=threads)
    t = time.perf_counter()
    tr, va, te, bins = prepared_fold(args.data_key, "Fold1", None)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    bins.fit(tr.X)
    for X in (tr.X, va.X, te.X):
        bins.transform(X)
    bin_s = time.perf_counter() - t
    all_rows = tr.y.shape[0] + va.y.shape[0] + te.y.shape[0]
    timed, rows = {}, []
    for cfg in grid:  # one learning rate per (system, leaves, criterion): the rate does not change the cost
        timed.setdefault((cfg["system"], cfg["leaves"], cfg["criterion"]), cfg)
    n_rates = len(args.rates)
    for (system, leaves, criterion), cfg in timed.items():
        model, _, _, _, stamps = fit_cell(dict(cfg, iterations=rounds + 1))
        round_s = np.diff(stamps)  # the first round (compilation) has no predecessor stamp: left out
        tree_s = np.asarray(model.fit_seconds_[1:])
        row = {"system": SYSTEMS[system], "leaves": leaves, "criterion": CRITERION_NAMES[(system, criterion)],
               "criterion_key": criterion, "rounds_timed": int(round_s.size),
               "round_s": float(np.median(round_s)), "round_spread_s": float(np.ptp(round_s)),
               "tree_s": float(np.median(tree_s)), "full_rounds": cfg["iterations"]}
        row["cell_h"] = row["round_s"] * row["full_rounds"] / 3600
        rows.append(row)
        print(f"{row['system']} {leaves} leaves {row['criterion']}: {row['round_s']:.2f} s/round "
              f"(trees {row['tree_s']:.2f} s) -> {row['cell_h']:.2f} h for {row['full_rounds']} rounds", flush=True)
    cells = [r["cell_h"] for r in rows for _ in range(n_rates)]
    # today's accounting before this change: SE and OLE-diag trees only, no history, on all the rows
    before = sum(r["tree_s"] * r["full_rounds"] for r in rows if r["criterion_key"] in ("se", "ole")) \
        * n_rates * all_rows / tr.y.shape[0] / 3600
    after = sum(cells) + (load_s + bin_s) / 3600
    five = [h for _ in range(5) for h in cells]  # the five folds' cells, in the grid's order
    return {"machine": machine_record(), "queries": queries, "train_rows": int(tr.y.shape[0]), "all_rows": int(all_rows),
            "threads_per_cell": threads, "load_fold_s": load_s, "bin_fold_s": bin_s,
            "binning_saved_h_per_fold": bin_s * (len(cells) - 1) / 3600, "configs": rows, "cells_per_fold": len(cells),
            "before_h_per_fold": before, "after_h_per_fold": after,
            "wall_h": {w: {"one_fold": wall_hours(cells, w), "five_folds": wall_hours(five, w)} for w in WIDTHS}}


def add_arguments(p):
    p.add_argument("--queries", type=positive_int, default=10000,
                   help="queries of the MSLR-shaped synthetic set (10000: MSLR-WEB10K's size)")
    p.add_argument("--rounds", type=positive_int, default=3, help="timed rounds per configuration (one more is run)")
    p.add_argument("--threads", type=positive_int, default=1, help="numba threads per cell (paper's --threads)")
    p.add_argument("--out", default="results/scale", help="output folder")
    return p


def run(a):
    res = measure(a.queries, a.rounds, a.threads)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps(res, indent=2, default=float))
    print(f"{res['train_rows']} training rows per fold ({res['all_rows']} in the set), {res['threads_per_cell']} "
          f"thread(s) per cell, {res['cells_per_fold']} cells per fold; loading the fold {res['load_fold_s']:.0f} s, "
          f"binning it {res['bin_fold_s']:.0f} s, once per fold and process (once per cell before: "
          f"{res['binning_saved_h_per_fold']:.2f} h per fold saved)")
    print(f"paper grid, hours per fold on one cell at a time: before {res['before_h_per_fold']:.1f} h (SE and "
          f"OLE-diag trees only, no exact OLE, no history), after {res['after_h_per_fold']:.1f} h (every criterion "
          "paper runs, exact OLE included, with the per-round history)")
    print("wall hours with J cells at a time (--jobs J, or J one-thread Dask workers): " + "; ".join(
        f"J={w}: {v['one_fold']:.1f} h one fold, {v['five_folds']:.1f} h five" for w, v in res["wall_h"].items()))
    return 0


def main(argv=None):
    from .__main__ import main as cli

    return cli(["scale", *([] if argv is None else argv)])
