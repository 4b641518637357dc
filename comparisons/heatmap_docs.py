"""Regenerate the pictures of docs/heatmap.md: ``python -m comparisons.heatmap_docs [--out docs/img]``.

LightGBM lambdarank on the built-in synthetic data (30 features, 8 of them informative), 200
trees of 15 leaves, at two learning rates and two feature-subsampling fractions.
"""

import argparse
from pathlib import Path

import numpy as np


def main(argv=None):
    import lightgbm as lgb

    from lambda_objectives.data.datasets import make_ranking
    from lambda_objectives.diagnostics.heatmap import heatmap_counts, render_png

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="docs/img")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    d = make_ranking(400, n_features=30, n_informative=8, seed=0)
    settings = [("lr0.05_ff1.0", 0.05, 1.0), ("lr0.5_ff1.0", 0.5, 1.0), ("lr0.1_ff1.0", 0.1, 1.0),
                ("lr0.1_ff0.3", 0.1, 0.3)]
    for name, lr, ff in settings:
        b = lgb.train({"objective": "lambdarank", "num_leaves": 15, "learning_rate": lr, "feature_fraction": ff,
                       "verbose": -1, "seed": 0, "num_threads": 2}, lgb.Dataset(d.X, d.y, group=d.group), 200)
        heat = heatmap_counts(b, max_depth=3)
        render_png(heat, out / f"heatmap_{name}.png", title=f"learning rate {lr}, feature_fraction {ff}")
        root = heat.counts[0, 0, :-2]
        top = np.argsort(-root)[:3]
        print(f"{name}: root splits " + ", ".join(f"{heat.feature_names[f]}={root[f]}" for f in top))


if __name__ == "__main__":
    main()
