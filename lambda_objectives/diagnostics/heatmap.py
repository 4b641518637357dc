"""The Heatmap Tree: one picture of a whole tree ensemble (after Burges, MSR-TR-2010-82, §7.2).

Every tree is laid on a common grid of node positions: level ``h`` (the root is level 0) and index
``i`` within the level, the children of ``(h, i)`` being ``(h+1, 2i)`` and ``(h+1, 2i+1)``. At each
position we count, over all trees, which feature is split on there, or that the position is a
leaf, or that it does not exist in that tree. Rendering each position as a small heatmap of those
counts shows which features the ensemble uses where, e.g. how strongly the top levels agree.
Works for reference models, LightGBM boosters and XGBoost boosters.
"""

import html
import json
from dataclasses import dataclass

import numpy as np

from .._core.optional import require

__all__ = ["HeatmapTree", "heatmap_counts", "render_html", "render_png", "decision_paths"]


@dataclass
class HeatmapTree:
    """``counts[h, i, f]`` trees splitting on feature ``f`` at position ``(h, i)``;
    ``counts[h, i, -2]`` trees with a leaf there, ``counts[h, i, -1]`` trees without a node there."""

    counts: np.ndarray
    feature_names: list
    n_trees: int

    @property
    def depth(self):
        return self.counts.shape[0] - 1


def _walk(root, children, feature, max_depth, counts, n_features):
    """Count one tree: ``children(node) -> (left, right) or None``, ``feature(node) -> int``."""
    present = np.zeros(counts.shape[:2], dtype=bool)
    stack = [(root, 0, 0)]
    while stack:
        node, h, i = stack.pop()
        if h > max_depth:
            continue
        present[h, i] = True
        kids = children(node)
        if kids is None:
            counts[h, i, n_features] += 1
        else:
            counts[h, i, feature(node)] += 1
            stack.append((kids[0], h + 1, 2 * i))
            stack.append((kids[1], h + 1, 2 * i + 1))
    for h in range(counts.shape[0]):
        counts[h, : 2 ** h, n_features + 1] += ~present[h, : 2 ** h]


def _trees(model):
    """(kind, list of tree objects, n_features, feature names)."""
    if hasattr(model, "trees_") and hasattr(model, "bin_mapper_"):  # reference.MARTRanker
        trees = [t for rnd in model.trees_ for t in rnd]
        return "reference", trees, model.n_features_, None
    if hasattr(model, "get_dump"):  # xgboost.Booster
        trees = [json.loads(t) for t in model.get_dump(dump_format="json")]
        names = model.feature_names
        n = model.num_features()
        return "xgboost", trees, n, names
    if hasattr(model, "dump_model"):  # lightgbm.Booster
        d = model.dump_model()
        return "lightgbm", [t["tree_structure"] for t in d["tree_info"]], d["max_feature_idx"] + 1, d["feature_names"]
    if hasattr(model, "booster_"):
        return _trees(model.booster_)
    if hasattr(model, "get_booster"):
        return _trees(model.get_booster())
    raise ValueError(f"cannot read trees from {type(model).__name__}: expected a reference MARTRanker, "
                     "a LightGBM or an XGBoost booster")


def _xgb_feature(node, names):
    f = node["split"]
    if names and f in names:
        return names.index(f)
    return int(str(f).lstrip("f"))


def heatmap_counts(model, feature_names=None, max_depth=None):
    """Aggregate an ensemble's trees onto the common grid of node positions.

    Parameters
    ----------
    model : reference.MARTRanker, lightgbm.Booster / LGBMModel, xgboost.Booster / XGBModel
    feature_names : list of str, optional (default the model's names or ``f0, f1, ...``)
    max_depth : int, optional
        Deepest level drawn (default: the deepest node of any tree, at most 6).

    Returns
    -------
    HeatmapTree
    """
    kind, trees, n_features, names = _trees(model)
    if kind == "reference":
        def depth_of(t):
            return int(t["depth"].max())
    elif kind == "lightgbm":
        def depth_of(t):
            return 0 if "split_index" not in t else 1 + max(depth_of(t["left_child"]), depth_of(t["right_child"]))
    else:
        def depth_of(t):
            return 0 if "children" not in t else 1 + max(depth_of(c) for c in t["children"])
    deepest = max((depth_of(t) for t in trees), default=0)
    max_depth = min(deepest, 6) if max_depth is None else int(max_depth)
    counts = np.zeros((max_depth + 1, 2 ** max_depth, n_features + 2), dtype=np.int64)
    for t in trees:
        if kind == "reference":
            _walk(0, lambda i, t=t: None if t[i]["feature"] < 0 else (int(t[i]["left"]), int(t[i]["right"])),
                  lambda i, t=t: int(t[i]["feature"]), max_depth, counts, n_features)
        elif kind == "lightgbm":
            _walk(t, lambda n: (n["left_child"], n["right_child"]) if "split_index" in n else None,
                  lambda n: n["split_feature"], max_depth, counts, n_features)
        else:
            def kids(n):
                if "children" not in n:
                    return None
                by_id = {c["nodeid"]: c for c in n["children"]}
                return by_id[n["yes"]], by_id[n["no"]]  # yes = "x < threshold" = left
            _walk(t, kids, lambda n: _xgb_feature(n, names), max_depth, counts, n_features)
    names = list(feature_names or names or [f"f{j}" for j in range(n_features)])
    if len(names) != n_features:
        raise ValueError(f"{len(names)} feature names for {n_features} features")
    return HeatmapTree(counts, names, len(trees))


def decision_paths(model, x, max_depth):
    """Edge use of one document: ``edges[h, i, c]`` = trees whose path goes from ``(h, i)`` to child c."""
    kind, trees, n_features, names = _trees(model)
    x = np.asarray(x, dtype=np.float64).ravel()
    edges = np.zeros((max_depth, 2 ** max(max_depth - 1, 0), 2), dtype=np.int64)
    for t in trees:
        h, i = 0, 0
        if kind == "reference":
            node = 0
            b = model.bin_mapper_.transform(x[None, :])[0]
            while t[node]["feature"] >= 0 and h < max_depth:
                go = 0 if b[t[node]["feature"]] <= t[node]["bin"] else 1
                edges[h, i, go] += 1
                node = int(t[node]["left"] if go == 0 else t[node]["right"])
                h, i = h + 1, 2 * i + go
        elif kind == "lightgbm":
            node = t
            while "split_index" in node and h < max_depth:
                v = x[node["split_feature"]]
                go = 0 if (np.isnan(v) and node.get("default_left", True)) or v <= node["threshold"] else 1
                edges[h, i, go] += 1
                node = node["left_child"] if go == 0 else node["right_child"]
                h, i = h + 1, 2 * i + go
        else:
            node = t
            while "children" in node and h < max_depth:
                v = x[_xgb_feature(node, names)]
                nxt = node["missing"] if np.isnan(v) else (node["yes"] if v < node["split_condition"] else node["no"])
                go = 0 if nxt == node["yes"] else 1
                edges[h, i, go] += 1
                node = {c["nodeid"]: c for c in node["children"]}[nxt]
                h, i = h + 1, 2 * i + go
    return edges


def _color(frac):
    # white -> dark blue
    r = int(255 - 215 * frac)
    g = int(255 - 175 * frac)
    b = int(255 - 55 * frac)
    return f"rgb({r},{g},{b})"


def _check_heat(heat, where):
    if not isinstance(heat, HeatmapTree):
        raise TypeError(f"{where}: heat must be the HeatmapTree of heatmap_counts(model), got {type(heat).__name__}")


def render_html(heat, path=None, document_edges=None, title="Heatmap Tree", cell=7):
    """A self-contained HTML page (inline SVG, no external resources) of the Heatmap Tree.

    Each position is a small grid of cells, one per feature plus "leaf" and "absent", shaded by
    the share of trees; hovering shows the counts and the most used features. With
    ``document_edges`` (from :func:`decision_paths`) edge widths show one document's paths.
    Returns the HTML text (and writes it to ``path`` when given).
    """
    _check_heat(heat, "render_html")
    counts = heat.counts
    L, _, K = counts.shape
    cols = int(np.ceil(np.sqrt(K)))
    rows = int(np.ceil(K / cols))
    box_w, box_h = cols * cell, rows * cell
    gap = 6
    width = max(2 ** (L - 1) * (box_w + gap), 400)
    level_h = box_h + 50
    labels = heat.feature_names + ["leaf", "absent"]
    parts = []
    centers = {}
    for h in range(L):
        n_pos = 2 ** h
        slot = width / n_pos
        for i in range(n_pos):
            cx = slot * (i + 0.5)
            centers[(h, i)] = (cx, 30 + h * level_h)
    # edges first, under the boxes
    for h in range(L - 1):
        for i in range(2 ** h):
            if counts[h, i, :-2].sum() == 0:
                continue
            x0, y0 = centers[(h, i)]
            for c in (0, 1):
                x1, y1 = centers[(h + 1, 2 * i + c)]
                w = 1.0
                if document_edges is not None and h < document_edges.shape[0]:
                    w = 1.0 + 8.0 * document_edges[h, i, c] / max(heat.n_trees, 1)
                parts.append(f'<line class="edge" x1="{x0:.1f}" y1="{y0 + box_h:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                             f'stroke="#888" stroke-width="{w:.2f}"/>')
    for (h, i), (cx, y) in centers.items():
        c = counts[h, i]
        if c[-1] == heat.n_trees:
            continue  # no tree has a node here
        top = np.argsort(-c[:-2], kind="stable")[:3]
        tip = "; ".join(f"{labels[f]}: {c[f]}" for f in top if c[f] > 0)
        tip = f"level {h}, position {i}: " + (tip + "; " if tip else "") + f"leaf: {c[-2]}; absent: {c[-1]}"
        x0 = cx - box_w / 2
        cells = []
        for f in range(K):
            r, q = divmod(f, cols)
            frac = c[f] / max(heat.n_trees, 1)
            cells.append(f'<rect x="{x0 + q * cell:.1f}" y="{y + r * cell:.1f}" width="{cell}" height="{cell}" '
                         f'fill="{_color(frac)}" stroke="#ddd" stroke-width="0.3"/>')
        label = labels[top[0]] if c[top[0]] > 0 else "leaf"
        parts.append(f'<g class="position" data-level="{h}" data-index="{i}"><title>{html.escape(tip)}</title>'
                     + "".join(cells)
                     + f'<text x="{cx:.1f}" y="{y + box_h + 11:.1f}" font-size="9" text-anchor="middle">'
                       f'{html.escape(label)}</text></g>')
    height = 40 + L * level_h
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}">' + "".join(parts) + "</svg>")
    doc = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
           f"<body style='font-family:sans-serif'><h1 style='font-size:16px'>{html.escape(title)}</h1>"
           f"<p style='font-size:12px'>{heat.n_trees} trees; each box: one cell per feature, then leaf and "
           f"absent, darker = more trees; hover for counts.</p>{svg}</body></html>")
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(doc)
    return doc


def render_png(heat, path, title="Heatmap Tree", document_edges=None):
    """The same picture as :func:`render_html`, as a PNG (matplotlib, Agg)."""
    _check_heat(heat, "render_png")
    matplotlib = require("matplotlib")

    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot")
    require("matplotlib.lines")
    require("matplotlib.patches")

    counts = heat.counts
    L, _, K = counts.shape
    cols = int(np.ceil(np.sqrt(K)))
    rows = int(np.ceil(K / cols))
    fig, ax = plt.subplots(figsize=(min(4 + 2 ** (L - 1) * 0.9, 30), 1.4 * L + 1))
    for h in range(L):
        n_pos = 2 ** h
        for i in range(n_pos):
            c = counts[h, i]
            if c[-1] == heat.n_trees:
                continue
            cx, cy = (i + 0.5) / n_pos, 1 - (h + 0.5) / L
            grid = np.zeros(rows * cols)
            grid[:K] = c / max(heat.n_trees, 1)
            w, hh = 0.8 / 2 ** (L - 1), 0.6 / L
            ax.imshow(grid.reshape(rows, cols), cmap="Blues", vmin=0, vmax=1,
                      extent=(cx - w / 2, cx + w / 2, cy - hh / 2, cy + hh / 2), aspect="auto", zorder=2)
            top = int(np.argmax(c[:-2])) if c[:-2].max() > 0 else None
            ax.text(cx, cy - hh / 2 - 0.01, heat.feature_names[top] if top is not None else "leaf", fontsize=6,
                    ha="center", va="top")
            if h < L - 1 and c[:-2].sum() > 0:
                for ch in (0, 1):
                    x1, y1 = (2 * i + ch + 0.5) / (2 * n_pos), 1 - (h + 1.5) / L
                    lw = 0.6
                    if document_edges is not None and h < document_edges.shape[0]:
                        lw = 0.6 + 5 * document_edges[h, i, ch] / max(heat.n_trees, 1)
                    ax.plot([cx, x1], [cy - hh / 2, y1 + hh / 2], color="#999", lw=lw, zorder=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title(f"{title} ({heat.n_trees} trees, depth {L})", fontsize=9)
    # what a box means, and what the colour and the edges encode
    sm = plt.cm.ScalarMappable(cmap="Blues", norm=matplotlib.colors.Normalize(0, 1))
    fig.colorbar(sm, ax=ax, fraction=0.025, pad=0.01).set_label("share of trees", fontsize=7)
    handles = [matplotlib.patches.Patch(color=plt.cm.Blues(0.8),
                                        label=f"box: {rows}×{cols} cells, one per feature (row by row), then leaf, absent"),
               matplotlib.lines.Line2D([], [], color="#999", lw=0.6, label="edge: parent to child position")]
    if document_edges is not None:
        handles.append(matplotlib.lines.Line2D([], [], color="#999", lw=4,
                                               label="wider edge: more trees route the document this way"))
    handles.append(matplotlib.patches.Patch(color="none", label="label under a box: its most used feature"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.01), fontsize=6, frameon=False, ncol=2)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
