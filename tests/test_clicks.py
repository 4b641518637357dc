"""``comparisons clicks``: a tiny end-to-end run (outputs, run store reuse), the LightGBM-test mode on a
tiny copy of its layout, the statistics against their definitions, and bad options."""

import json

import numpy as np
import pytest

from comparisons import clicks
from comparisons.__main__ import main


@pytest.fixture(scope="module")
def lgb_layout(tmp_path_factory):
    """LightGBM's examples/lambdarank layout (rank.train, rank.test, .query files) with 40 features."""
    from lambda_objectives import make_ranking

    root = tmp_path_factory.mktemp("lgbtest")
    for name, nq, seed in (("rank.train", 60, 1), ("rank.test", 20, 2)):
        d = make_ranking(nq, docs_per_query=(5, 15), n_features=40, seed=seed)
        with open(root / name, "w") as fh:
            for i in range(d.y.shape[0]):
                fh.write(f"{int(d.y[i])} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(d.X[i])) + "\n")
        (root / f"{name}.query").write_text("\n".join(str(s) for s in np.diff(d.group_ptr)) + "\n")
    return root


def test_quick_run_writes_every_output_and_reuses_its_store(letor_folder, tmp_path):
    out = tmp_path / "c"
    args = ["clicks", "--data", str(letor_folder), "--quick", "--engines", "lightgbm", "--rounds", "3",
            "--log-fraction", "0.2", "--out", str(out)]
    assert main(args) == 0
    for name in ("clicks.md", "summary.json", "clicks.png"):
        assert (out / name).stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    rows = summary["rows"]
    names = {r["ranker"] for r in rows}
    assert {"logging ranker", "lightgbm: naive lambdarank", "lightgbm: native lambdarank + position",
            "lightgbm: skyline lambdarank (true labels)"} <= names
    assert all(not n.startswith("xgboost") for n in names)
    for r in rows:
        assert r["click"] == "pbm η=1" and r["folds"] == 1 and r["seeds"] == 1
        assert all(0 <= r[m] <= 1 for m in clicks.METRICS)
        if r["ranker"].startswith("lightgbm") and "naive" not in r["ranker"]:
            assert 0 < r["ndcg@10 p_holm"] <= 1 and r["ndcg@10 significant"] == (r["ndcg@10 p_holm"] < 0.05)
        else:
            assert "ndcg@10 p" not in r  # the baseline and the logging ranker are not tested against it
    (power,) = summary["power"].values()
    assert power["n_queries"] == 12 and power["mde"] > 0
    md = (out / "clicks.md").read_text()
    assert "TRUE labels" in md and "Holm" in md and "80 % power" in md and "LightGBM convention" in md
    stored = sorted((out / "runs").glob("*.json"))
    assert len(stored) == 1
    mtimes = [p.stat().st_mtime for p in stored]
    assert main(args) == 0  # nothing recomputed
    assert [p.stat().st_mtime for p in stored] == mtimes


def test_click_log_is_the_protocol(letor_folder):
    """The click-training rows are the shown rows of the non-logged queries, in display order, with the
    simulator's clicks and positions; the skyline's rows are those queries' rows with true labels."""
    from comparisons._data import load_fold
    from lambda_objectives import metric_values

    train, _, _ = load_fold(str(letor_folder), "Fold1")
    cfg = {"seed": 3, "log_fraction": 0.25, "sessions": 2, "top_k": 4, "click": {"name": "pbm η=1", "model": "pbm",
                                                                                  "eta": 1.0, "epsilon": 0.1}}
    predict, d = clicks.click_log(cfg, train)
    assert d["n_logged"] == 10 and d["n_queries"] == 30
    assert d["ptr"][-1] == d["X"].shape[0] == d["y"].shape[0] == d["positions"].shape[0]
    sizes = np.diff(d["ptr"])
    assert sizes.shape[0] == 60 and np.all(sizes == np.minimum(4, np.tile(np.diff(d["ptr_true"]), 2)))
    for q in range(60):  # positions 0.. in display order within each impression
        np.testing.assert_array_equal(d["positions"][d["ptr"][q]:d["ptr"][q + 1]], np.arange(sizes[q]))
    # display order is the logging ranker's: its scores decrease along each impression
    s = predict(d["X"])
    assert all(np.all(np.diff(s[d["ptr"][q]:d["ptr"][q + 1]]) <= 0) for q in range(60))
    assert set(np.unique(d["y"])) <= {0.0, 1.0}
    np.testing.assert_allclose(d["propensities"], 1 / np.arange(1, 5))
    # the skyline rows: every row of the clicked queries, true labels
    assert d["y_true"].shape[0] == d["ptr_true"][-1] and d["X_true"].shape[0] == d["ptr_true"][-1]
    assert np.all(np.isfinite(metric_values(predict(d["X_true"]), d["y_true"], d["ptr_true"], "ndcg@10")))


def test_lightgbm_test_mode(lgb_layout, tmp_path):
    out = tmp_path / "l"
    assert main(["clicks", "--lightgbm-test", "--data", str(lgb_layout), "--seeds", "2", "--out", str(out)]) == 0
    res = json.loads((out / "lightgbm_test.json").read_text())["summary"]
    assert {"lightgbm lambdarank", "lightgbm lambdarank + position", "xgboost rank:ndcg",
            "xgboost rank:ndcg + lambdarank_unbiased"} <= set(res)
    base = res["lightgbm lambdarank"]
    assert len(base["ndcg@3"]) == 2 and base["gap"] == [0.0, 0.0]
    for name, v in res.items():
        np.testing.assert_allclose(np.array(v["ndcg@3"]) - base["ndcg@3"], v["gap"])
        assert v["engine_agrees"], name  # LightGBM's own ndcg@3 equals ours
    assert "0.03" in (out / "lightgbm_test.md").read_text()


def test_summarise_against_its_definition(monkeypatch):
    """Fold means of seed-averaged per-query values; paired differences against the engine's naive ranker;
    Holm over the NDCG@10 family."""
    def res(values):
        return {"test": {m: list(values) for m in clicks.METRICS}, "seconds": 1.0}

    results = []
    for fold, shift in (("Fold1", 0.0), ("Fold2", 0.1)):
        for seed, noise in ((0, 0.0), (1, 0.2)):
            cfg = {"data_label": "d", "click": {"name": "pbm η=1"}, "fold": fold, "seed": seed}
            results.append((cfg, {"rankers": {
                "lightgbm: naive lambdarank": res([0.2 + shift, 0.4, 0.6]),
                "lightgbm: native lambdarank + position": res([0.3 + shift + noise, 0.5, 0.6]),
                "logging ranker": res([0.1, 0.1, 0.1])}}))
    monkeypatch.setattr(clicks, "sign_flip_pvalue", lambda d: 0.01)
    rows, power = clicks.summarise(results)
    native = next(r for r in rows if r["ranker"].endswith("+ position"))
    # per query: seed mean of (0.3+s, 0.5+s... ) minus naive: Fold1 [0.2, 0.1, 0], Fold2 [0.2, 0.1, 0]
    assert native["ndcg@10 diff"] == pytest.approx(0.1)
    assert native["ndcg@10 n"] == 6 and native["ndcg@10 p_holm"] == pytest.approx(0.01)
    assert native["err@10 p_holm"] == pytest.approx(0.04)  # the secondary family: 4 metrics
    assert native["ndcg@10"] == pytest.approx(np.mean([np.mean([0.4, 0.5, 0.6]), np.mean([0.5, 0.5, 0.6])]))
    assert "ndcg@10 p" not in next(r for r in rows if r["ranker"] == "logging ranker")
    assert power["d"]["n_queries"] == 6 and power["d"]["family"] == 1


@pytest.mark.parametrize("argv, said", [
    (["clicks"], "give --data"),
    (["clicks", "--lightgbm-test", "--data", "a", "b"], "exactly one --data"),
    (["clicks", "--data", "x", "--log-fraction", "1.5"], "expected a number in (0, 1)"),
    (["clicks", "--data", "x", "--etas", "1,-2"], "--etas"),
    (["clicks", "--data", "x", "--models", "ubm"], "unknown ubm"),
    (["clicks", "--data", "x", "--biases", "naive"], "unknown naive"),
])
def test_bad_options_exit_2(argv, said, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_missing_folders_exit_2(tmp_path, capsys):
    assert main(["clicks", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["clicks", "--lightgbm-test", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "rank.train" in capsys.readouterr().err
