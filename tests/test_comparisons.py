"""Tests of the comparisons commands: run store, paper grid smoke, demo smoke, fail-fast errors."""

import json

import numpy as np
import pytest

from comparisons.__main__ import main as cli
from comparisons.runstore import RunStore, config_hash
from lambda_objectives import save_letor
from lambda_objectives.datasets import make_ranking


def test_runstore_resume_corruption_and_atomicity(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1, "b": [1, 2]}
    assert store.load(cfg) is None
    p = store.save(cfg, {"v": 0.5})
    assert p.name == f"x-{config_hash(cfg)}.json" and store.load(cfg) == {"v": 0.5}
    assert not list(tmp_path.glob("*.tmp*"))
    p.write_text(p.read_text()[:20])  # truncated by a crash
    assert store.load(cfg) is None and store.redone == [str(p)]
    store.save(cfg, {"v": 0.5})
    doc = json.loads(p.read_text())
    doc["result"]["v"] = 0.7  # edited or bit-flipped: checksum mismatch
    p.write_text(json.dumps(doc))
    assert store.load(cfg) is None
    assert config_hash({"b": [1, 2], "a": 1}) == config_hash(cfg)


@pytest.fixture(scope="module")
def letor_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    for f in (1, 2):
        d = root / f"Fold{f}"
        d.mkdir()
        for split, nq in (("train", 40), ("vali", 12), ("test", 12)):
            data = make_ranking(nq, docs_per_query=(5, 25), n_features=6, seed=10 * f + len(split))
            save_letor(d / f"{split}.txt", data.X, data.y, group_ptr=data.group_ptr)
    return root


def test_paper_quick_grid_resumes(letor_folder, tmp_path, capsys):
    out = tmp_path / "res"
    args = ["paper", "--data", str(letor_folder), "--quick", "--iterations", "8", "--out", str(out)]
    # two worker processes: the pool must survive a parent that already runs OpenMP
    assert cli(args + ["--jobs", "2"]) == 0
    table = (out / "table.md").read_text()
    assert "| McRank | 10 | 0.10 |" in table and "| LambdaMART | 10 | 0.10 |" in table
    assert (out / "figure2.png").stat().st_size > 1000
    summary = json.loads((out / "summary.json").read_text())
    assert summary["folds"] == ["Fold1"] and summary["published"]["cells_ole_beats_se_by_0.1pt"]["McRank"] == "68/72"
    assert len(list((out / "runs").glob("*.json"))) == 4
    capsys.readouterr()
    assert cli(args) == 0
    assert "4 runs: 4 already done, 0 to run" in capsys.readouterr().out


def test_paper_fails_fast_on_missing_data(tmp_path, capsys):
    assert cli(["paper", "--data", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "Fold1").mkdir()
    assert cli(["paper", "--data", str(tmp_path)]) == 2
    assert "missing" in capsys.readouterr().err


def test_demo_smoke(tmp_path):
    from comparisons.demo import run

    res = run(n_queries=60, rounds=3, out=str(tmp_path))
    names = [r["system"] for r in res["rows"]]
    assert "LightGBM native lambdarank" in names and any(n.startswith("reference") for n in names)
    preset = next(r for r in res["rows"] if "preset=lightgbm" in r["system"])
    assert preset["note"].endswith(": 0")  # bit-for-bit parity with native
    assert (tmp_path / "demo.md").exists()
    assert all(np.isfinite(r["ndcg@10"]) for r in res["rows"])


def test_unknown_command_usage(capsys):
    assert cli(["nonsense"]) == 2
    assert "commands:" in capsys.readouterr().out


def test_engines_command_small(letor_folder, tmp_path, capsys):
    out = tmp_path / "eng"
    args = ["engines", "--data", str(letor_folder), "--folds", "1", "--rounds", "3", "--leaves", "4",
            "--min-data", "5", "--systems", "reference-ole,lightgbm-native", "--out", str(out)]
    assert cli(args) == 0
    md = (out / "engines.md").read_text()
    assert "| reference-ole |" in md and "| lightgbm-native |" in md
    assert (out / "engines.png").stat().st_size > 1000
    assert len((out / "engines.csv").read_text().splitlines()) == 3


def test_validate_command_small(letor_folder, tmp_path, capsys):
    assert cli(["validate", "--data", str(letor_folder), "--folds", "1", "--queries", "3",
                "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "validate.json").read_text())
    assert len(rows) == 7 and all(r["passed"] and r["n_compared"] > 0 for r in rows)
