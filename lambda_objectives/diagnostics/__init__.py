"""Tools on top of the objectives: the Heatmap Tree of where a model's trees split (:mod:`.heatmap`), the best
linear combination of two rankers by exact line search (:mod:`.combine`) and linear / MLP rankers trained
with lambdas with their local-optimality test (:mod:`.linear`)."""

from .combine import best_linear_combination
from .heatmap import HeatmapTree, decision_paths, heatmap_counts, render_html, render_png
from .linear import LinearLambdaRank, MLPLambdaRank, directions_needed, local_optimality_test

__all__ = ["HeatmapTree", "LinearLambdaRank", "MLPLambdaRank", "best_linear_combination", "decision_paths",
           "directions_needed", "heatmap_counts", "local_optimality_test", "render_html", "render_png"]
