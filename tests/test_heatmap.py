"""Tests of the Heatmap Tree: counts against an independent walk, rendering in a real browser."""

import shutil
import subprocess

import numpy as np
import pytest

from lambda_objectives.data.datasets import make_ranking
from lambda_objectives.diagnostics.heatmap import (
    decision_paths,
    heatmap_counts,
    render_html,
    render_png,
)


@pytest.fixture(scope="module")
def data():
    return make_ranking(80, docs_per_query=(5, 30), n_features=5, seed=2)


def _independent_counts(levels, n_features, trees):
    """trees: list of dict {(h, i): feature or 'leaf'} built by walking each engine's own format."""
    counts = np.zeros((levels, 2 ** (levels - 1), n_features + 2), dtype=np.int64)
    for t in trees:
        for h in range(levels):
            for i in range(2 ** h):
                v = t.get((h, i))
                counts[h, i, n_features + 1 if v is None else (n_features if v == "leaf" else v)] += 1
    return counts


def _lgb_positions(node, h=0, i=0, out=None):
    out = {} if out is None else out
    if "split_feature" in node:
        out[(h, i)] = node["split_feature"]
        _lgb_positions(node["left_child"], h + 1, 2 * i, out)
        _lgb_positions(node["right_child"], h + 1, 2 * i + 1, out)
    else:
        out[(h, i)] = "leaf"
    return out


def test_lightgbm_counts_match_direct_walk(data):
    lgb = pytest.importorskip("lightgbm")
    b = lgb.train({"objective": "lambdarank", "num_leaves": 6, "verbose": -1, "min_data_in_leaf": 5},
                  lgb.Dataset(data.X, data.y, group=data.group), 12)
    heat = heatmap_counts(b, max_depth=4)
    trees = [_lgb_positions(t["tree_structure"]) for t in b.dump_model()["tree_info"]]
    trees = [{k: v for k, v in t.items() if k[0] <= 4} for t in trees]
    np.testing.assert_array_equal(heat.counts, _independent_counts(5, 5, trees))
    assert heat.n_trees == 12 and heat.counts[0, 0, :5].sum() == 12


def test_xgboost_and_reference_counts(data):
    xgb = pytest.importorskip("xgboost")
    b = xgb.train({"objective": "rank:ndcg", "max_depth": 3}, xgb.DMatrix(data.X, data.y, group=data.group), 5)
    heat = heatmap_counts(b)
    df = b.trees_to_dataframe()
    roots = df[df["Node"] == 0]
    expect = np.bincount([int(f.lstrip("f")) for f in roots["Feature"]], minlength=5)
    np.testing.assert_array_equal(heat.counts[0, 0, :5], expect)
    assert heat.counts.sum(axis=2)[0, 0] == 5
    from reference import MARTRanker

    m = MARTRanker(num_leaves=4, n_estimators=6, min_data_in_leaf=5).fit(data.X, data.y, group=data.group)
    heat = heatmap_counts(m)
    roots = [int(r[0][0]["feature"]) for r in m.trees_]
    np.testing.assert_array_equal(heat.counts[0, 0, :5], np.bincount(roots, minlength=5))
    edges = decision_paths(m, data.X[0], heat.depth)
    assert edges[0, 0].sum() == 6  # every tree's path leaves the root once


def test_html_renders_in_headless_chromium(data, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    b = lgb.train({"objective": "lambdarank", "num_leaves": 6, "verbose": -1, "min_data_in_leaf": 5},
                  lgb.Dataset(data.X, data.y, group=data.group), 8)
    heat = heatmap_counts(b, feature_names=[f"feat{j}" for j in range(5)])
    page = tmp_path / "heat.html"
    text = render_html(heat, page, document_edges=decision_paths(b, data.X[0], heat.depth))
    assert "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # no external fetches
    render_png(heat, tmp_path / "heat.png")
    assert (tmp_path / "heat.png").stat().st_size > 2000
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium): browser rendering not checked")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'prof'}"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = sum(int((heat.counts[h, : 2 ** h, -1] < heat.n_trees).sum()) for h in range(heat.depth + 1))
    assert dom.stdout.count('class="position"') == drawn
    assert "<svg" in dom.stdout and "feat" in dom.stdout
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=900,700", page.as_uri()],
                   capture_output=True, timeout=120)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.std() > 0.01  # not a blank page


def test_png_has_a_title_a_colour_bar_and_a_legend(data, tmp_path, monkeypatch):
    lgb = pytest.importorskip("lightgbm")
    import matplotlib.pyplot as plt

    X, y, group = data.X, data.y, data.group
    b = lgb.train({"objective": "lambdarank", "num_leaves": 7, "verbose": -1}, lgb.Dataset(X, y, group=group), 5)
    heat = heatmap_counts(b, max_depth=3)
    seen = []
    monkeypatch.setattr(plt, "close", lambda fig: seen.append(fig))
    render_png(heat, tmp_path / "h.png", document_edges=decision_paths(b, X[0], heat.depth))
    fig = seen[0]
    main, bar = fig.axes  # the tree and its colour bar
    assert bar.get_ylabel() == "share of trees"
    labels = [t.get_text() for t in main.get_legend().get_texts()]
    assert any("one per feature" in t for t in labels) and any("route the document" in t for t in labels)
    assert "5 trees" in main.get_title()
    assert (tmp_path / "h.png").stat().st_size > 1000
