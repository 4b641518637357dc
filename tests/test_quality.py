"""``comparisons quality``: the statistics against their definitions, a real run, and bad input."""

import itertools
import json

import numpy as np
import pytest

from comparisons import quality


def test_sign_flip_test_equals_exact_enumeration_and_holm_by_hand():
    d = np.array([0.3, -0.1, 0.25, 0.4, 0.05, 0.2])
    obs = abs(d.mean())
    exact = np.mean([abs(np.dot(s, d)) / d.size >= obs - 1e-15 for s in itertools.product((-1, 1), repeat=d.size)])
    assert quality.sign_flip_pvalue(d, n_resamples=40000) == pytest.approx(exact, abs=0.01)
    assert quality.sign_flip_pvalue(np.zeros(5)) == 1.0
    # Holm: sorted p (0.01, 0.02, 0.04) times (3, 2, 1), made monotone
    np.testing.assert_allclose(quality.holm([0.04, 0.01, 0.02]), [0.04, 0.03, 0.04])


def test_quick_run_writes_every_output_reuses_its_store_and_marks_only_significant_cells(letor_folder, tmp_path):
    from comparisons.__main__ import main

    out = tmp_path / "q"
    args = ["quality", "--data", str(letor_folder), "--quick", "--engines", "lightgbm", "--objectives",
            "native lambdarank,ours ndcg@10,ours xendcg", "--out", str(out)]
    assert main(args) == 0
    for name in ("quality.md", "quality.csv", "summary.json", "quality.png"):
        assert (out / name).stat().st_size > 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert {r["system"] for r in rows} == {"native lambdarank", "ours ndcg@10", "ours xendcg"}
    for r in rows:
        assert 0 <= r["ndcg@10"] <= 1 and r["folds"] == 2
        if r["system"] != "native lambdarank":
            assert 0 < r["ndcg@10 p_holm"] <= 1
            assert r["ndcg@10 significant"] == (r["ndcg@10 p_holm"] < 0.05)
    md = (out / "quality.md").read_text()
    assert "LightGBM convention" in md and "Holm" in md
    stored = sorted((out / "runs").glob("*.json"))
    assert len(stored) == 6  # 2 folds x 3 systems
    mtimes = [p.stat().st_mtime for p in stored]
    assert main(args) == 0  # the second run computes nothing
    assert [p.stat().st_mtime for p in stored] == mtimes


@pytest.mark.parametrize("extra, match", [
    (["--objectives", "ours nope"], "unknown"),
    (["--engines", "lightgbm", "--objectives", "native rank:ndcg"], "no system left"),
])
def test_bad_arguments_fail_before_training(letor_folder, tmp_path, extra, match, capsys):
    from comparisons.__main__ import main

    assert main(["quality", "--data", str(letor_folder), "--quick", *extra, "--out", str(tmp_path)]) == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_missing_folds_validation_file_or_engine_is_named(tmp_path, letor_folder, capsys, monkeypatch):
    from comparisons.__main__ import main

    assert main(["quality", "--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "nothing" in capsys.readouterr().err
    bare = tmp_path / "novali" / "Fold1"
    bare.mkdir(parents=True)
    for split in ("train", "test"):
        (bare / f"{split}.txt").write_text((letor_folder / "Fold1" / f"{split}.txt").read_text())
    assert main(["quality", "--data", str(tmp_path / "novali"), "--out", str(tmp_path / "o")]) == 2
    assert "missing vali.txt" in capsys.readouterr().err
    real = quality.importlib.util.find_spec
    monkeypatch.setattr(quality.importlib.util, "find_spec", lambda n: None if n == "xgboost" else real(n))
    assert main(["quality", "--data", str(letor_folder), "--engines", "xgboost", "--out", str(tmp_path / "o")]) == 2
    assert "'xgboost' is not installed" in capsys.readouterr().err


def test_every_system_name_can_be_given_to_objectives():
    # --objectives is a comma list: a name with a comma in it could never be selected
    from comparisons._cli import csv_arg

    parse = csv_arg(quality.OBJECTIVE_NAMES)
    assert parse(",".join(quality.OBJECTIVE_NAMES)) == quality.OBJECTIVE_NAMES
    assert set(quality.DEFAULT_SYSTEMS) <= set(quality.OBJECTIVE_NAMES)
