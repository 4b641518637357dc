"""Tests of comparisons.paper: the paper's protocol, its tables and counts, significance marks,
the criteria per system, and a Dask cluster filling the same run store as a local run."""

import json

import numpy as np
import pytest

from comparisons import paper
from comparisons.__main__ import main as cli


def test_paper_table_counts_are_computed_from_the_transcribed_cells():
    assert paper.paper_counts() == {"McRank": (46, 48), "LambdaMART": (40, 48)}
    assert paper.paper_counts(("mslr10k",)) == {"McRank": (22, 24), "LambdaMART": (16, 24)}
    yahoo = paper.PAPER_TABLES["yahoo"][1]
    mslr = paper.PAPER_TABLES["mslr10k"][1]
    assert yahoo[("mcrank", 10, 0.06)]["ndcg@1"] == (71.32, 71.76)
    assert yahoo[("lambdamart", 20, 0.12)]["err"] == (45.71, 45.96)
    assert mslr[("mcrank", 10, 0.06)]["ndcg@1"] == (47.43, 47.14)  # one of the cells SE wins
    assert mslr[("lambdamart", 20, 0.12)]["ndcg@3"] == (46.69, 46.51)
    assert len(yahoo) == len(mslr) == 12


def test_the_papers_cells_and_citation_are_in_the_repository():
    from pathlib import Path

    from comparisons import paper_tables

    assert "1909.05965" in paper_tables.CITATION and "Analysis of Regression Tree Fitting" in paper_tables.CITATION
    assert paper.PAPER_TABLES is paper_tables.PAPER_TABLES
    docs = (Path(__file__).resolve().parents[1] / "docs" / "reproducing" / "paper.md").read_text()
    assert "shared/notes" not in docs and "comparisons/paper_tables.py" in docs


def test_paired_ci_and_marks():
    d = np.array([0.5, 0.7, 0.6, 0.4, 0.8, 0.5])
    m, lo, hi = paper.paired_ci(d)
    assert m == pytest.approx(0.5833333) and lo > 0 and hi > m
    # by hand: mean ± t(0.975, 5) · sd / sqrt(6)
    half = 2.5705818366147395 * np.std(d, ddof=1) / np.sqrt(6)
    assert lo == pytest.approx(m - half) and hi == pytest.approx(m + half)
    assert paper.mark(0.58, lo, hi) == "**"
    assert paper.mark(0.08, 0.01, 0.15) == ""        # significant but not > 0.1 point
    assert paper.mark(0.5, -0.2, 1.2) == ""          # > 0.1 point but within noise
    assert paper.mark(-0.5, -0.9, -0.1) == "vv"


def test_quick_grid_runs_every_criterion_per_system_with_the_papers_protocol(letor_folder, tmp_path, capsys):
    out = tmp_path / "res"
    # --criteria se,ole,ole_exact crashed on the McRank runs in 0.1 (ole_exact is lambda-only)
    args = ["paper", "--data", str(letor_folder), "--quick", "--iterations", "6", "--out", str(out),
            "--criteria", "se,ole,ole_exact", "--paper-table", "mslr10k"]
    assert cli(args) == 0
    table = (out / "table.md").read_text()
    assert "at the final iteration (the paper's protocol)" in table
    assert "a query with no relevant document scores 1" in table
    assert "| McRank | 10 | 0.10 |" in table and "| LambdaMART | 10 | 0.10 |" in table
    lm = next(line for line in table.splitlines() if line.startswith("| LambdaMART | 10 | 0.10 |"))
    assert lm.split("|")[4].count("/") == 2  # SE / OLE / OLE-diag
    assert "Beside the paper's Table 3" in table and "47.79 / 47.64" in table
    runs = list((out / "runs").glob("*.json"))
    assert len(runs) == 5  # McRank: se, ole; LambdaMART: se, ole_exact, ole
    doc = json.loads(runs[0].read_text())["result"]
    assert doc["test_final"]["ndcg@10"] == doc["test_history"]["ndcg@10"][-1]
    assert np.mean(doc["per_query_final"]["ndcg@10"]) == pytest.approx(doc["test_final"]["ndcg@10"])
    assert doc["max_label"] == 4.0  # ERR's grade scale: the data set's, not each split's
    summary = json.loads((out / "summary.json").read_text())
    assert summary["paper_tables_counts_ole_by_0.1"] == {"McRank": "46/48", "LambdaMART": "40/48"}
    # the power statement: 2.8016 · sd / sqrt(n) per system, from the paired OLE − SE differences
    for name, v in summary["power_ndcg10"].items():
        assert v["detectable_points"] == pytest.approx(2.801585 * v["sd_points"] / np.sqrt(v["test_queries"]),
                                                       rel=1e-4)
    assert "detectable at 80 % power" in table
    assert summary["paper_text"]["cells_ole_beats_se_by_0.1pt (the text's count)"]["McRank"] == "68/72"
    assert (out / "figure2.png").stat().st_size > 1000
    capsys.readouterr()
    assert cli(args + ["--select", "validation"]) == 0  # reuses the runs, only reports differently
    said = "".join(capsys.readouterr())
    assert "5 reused" in said and "0 to compute" in said
    assert "NOT the paper's protocol" in (out / "table.md").read_text()


def test_a_dask_cluster_fills_the_same_store_as_a_local_run(letor_folder, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "res"
    args = ["paper", "--data", str(letor_folder), "--quick", "--iterations", "4", "--out", str(out),
            "--systems", "lambdamart", "--criteria", "se,ole"]
    assert cli(args) == 0
    capsys.readouterr()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        assert cli(args + ["--criteria", "se,ole,ole_exact", "--scheduler", cl.scheduler_address]) == 0
    said = "".join(capsys.readouterr())
    assert "3 cells, 2 reused" in said and "1 to compute" in said  # nothing computed twice
    assert len(list((out / "runs").glob("*.json"))) == 3


def test_bad_arguments_fail_before_training(letor_folder, tmp_path, capsys):
    assert cli(["paper", "--data", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    for bad in (["--iterations", "0"], ["--criteria", "ole"], ["--systems", "ranknet"], ["--rates", "0,0.1"]):
        assert cli(["paper", "--data", str(letor_folder), *bad]) == 2


def test_tables_name_the_criteria_run_and_never_show_ole_diag_as_the_papers_ole(letor_folder, tmp_path, capsys,
                                                                                 monkeypatch):
    # issue #32: `--criteria se,ole` runs LambdaMART's OLE-diag; it was printed under "OLE (the paper's,
    # exact second derivatives)", with an empty CI table, empty power and four empty Figure-2 panels
    monkeypatch.setattr(paper, "PROGRESS_SECONDS", 0.0)  # a progress line per round
    out = tmp_path / "res"
    assert cli(["paper", "--data", str(letor_folder), "--quick", "--iterations", "4", "--out", str(out),
                "--systems", "lambdamart", "--criteria", "se,ole", "--paper-table", "mslr10k"]) == 0
    said = capsys.readouterr().out
    table = (out / "table.md").read_text()
    assert "exact second derivatives" not in table and "SE / OLE [/ OLE-diag]" not in table
    row = next(line for line in table.splitlines() if line.startswith("| LambdaMART | 10 | 0.10 |"))
    assert row.split("|")[4].strip() == "SE / OLE-diag"  # the criteria column names each cell's values
    assert "| LambdaMART | 10 | 0.10 | OLE-diag − SE |" in table  # the CI table has its row, labelled
    summary = json.loads((out / "summary.json").read_text())
    assert summary["compared"] == {"LambdaMART": "OLE-diag − SE"}
    assert summary["power_ndcg10"]["LambdaMART"]["difference"] == "OLE-diag − SE"
    (lines,) = [v for k, v in paper.figure_lines(paper.aggregate(_stored(out), "final"), _args(
        systems=["lambdamart"], criteria=["se", "ole"])).items() if k == ("lambdamart", "ndcg@10")]
    assert len(lines) == 1 and lines[0][3] is None  # one fold: a line, no band
    assert (out / "figure2.png").stat().st_size > 1000 and "one fold: no band" in table
    # the paper's table: the cells not run are one line, not ten rows of "not run"
    assert "not run |" not in table
    assert "Not run here: 12 of the paper's 12 cells (McRank 6, LambdaMART 6); McRank not in --systems; " \
           "LambdaMART's OLE (ole_exact) not in --criteria." in table
    # stdout: the table, a verdict, the progress by rounds; the summary's JSON only in summary.json
    assert '"power_ndcg10"' not in said and "{" not in table
    assert said.rstrip().splitlines()[-2] == summary["verdict"]
    assert summary["verdict"].startswith("Verdict: no cell is significant either way") and "smoke test" in said
    assert "round 4 of 4 (100 %)" in said
    # cells of a fraction of a second: the time ratio is flagged, not reported as a cost
    assert not summary["ole_wall_time_overhead"]["LambdaMART"]["reliable"] and "NOT a measurement" in table


def _stored(out):
    return [(d["config"], d["result"]) for d in (json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json")))]


def _args(**kw):
    import argparse

    base = dict(systems=["mcrank", "lambdamart"], criteria=["se", "ole", "ole_exact"], leaves=[10], rates=[0.1],
                select="final", convention="lightgbm", data_label="toy", data="toy", k=None, paper_table=None)
    return argparse.Namespace(**{**base, **kw})


def _cell(folds, value, n_iter=5, n_queries=30, seed=0):
    """An aggregated cell (:func:`paper.aggregate`'s shape) with per-query values around ``value``."""
    rng = np.random.default_rng(seed)
    pq = {m: value + 0.05 * rng.standard_normal(n_queries) for m in paper.MEASURES + paper.EXTRA}
    return {"folds": folds, "metrics": {m: float(v.mean()) for m, v in pq.items()}, "per_query": pq,
            "fold_history": {m: value + 0.01 * rng.standard_normal((len(folds), n_iter)) for m in paper.MEASURES},
            "loss": 1.0, "seconds": 1.0, "round_seconds": 0.1, "tree_seconds": 0.4, "best_iterations": [n_iter]}


def test_an_analysis_without_data_is_said_in_words_and_draws_no_figure(tmp_path):
    # only SE ran (the OLE cells failed or are another run's): no empty CI table, power or figure
    (tmp_path / "figure2.png").write_bytes(b"stale")  # an earlier run's figure must not stay as if current
    agg = {("lambdamart", 10, 0.1, "se"): _cell(["Fold1"], 0.5)}
    summary = paper.report(agg, _args(systems=["lambdamart"], criteria=["se", "ole_exact"]), tmp_path)
    table = (tmp_path / "table.md").read_text()
    assert "## OLE − SE" not in table and "No OLE − SE differences: no cell ran both SE and an OLE" in table
    assert "Power: not estimated" in table and summary["power_ndcg10"] == {}
    assert summary["verdict"] == "Verdict: nothing to compare: no cell ran both SE and an OLE."
    assert not (tmp_path / "figure2.png").exists() and "Figure 2 (`figure2.png`): not drawn" in table
    # two folds: Figure 2 gets its 95 % band; the timing is reported when the trees took long enough
    agg = {("mcrank", 10, 0.1, c): _cell(["Fold1", "Fold2"], 0.5, seed=i) for i, c in enumerate(("se", "ole"))}
    for cell in agg.values():
        cell["tree_seconds"] = 2 * paper.MIN_TIMED_SECONDS
    summary = paper.report(agg, _args(systems=["mcrank"]), tmp_path)
    ((lr, x, mean, half),) = paper.figure_lines(agg, _args(systems=["mcrank"]))[("mcrank", "ndcg@10")]
    assert half.shape == mean.shape == (5,) and np.all(half > 0)
    assert summary["ole_wall_time_overhead"]["McRank"]["reliable"]
    assert "NOT a measurement" not in (tmp_path / "table.md").read_text()
    assert (tmp_path / "figure2.png").stat().st_size > 1000


def test_the_verdict_says_whether_the_grid_can_show_the_papers_effect():
    counts = {"LambdaMART": {"name": "OLE", "cells": 4, "ole_by_0.1": 2, "ole_significant": 0, "se_significant": 0}}
    small = paper.verdict(counts, {"LambdaMART": {"detectable_points": 3.15}})
    assert small.startswith("Verdict: no cell is significant either way (4 cell × measure comparisons)")
    assert "this grid is a smoke test, not a result" in small and "3.15 points" in small
    large = paper.verdict(counts, {"LambdaMART": {"detectable_points": 0.3}})
    assert "smoke test" not in large and "0.30 points or more" in large
    counts["LambdaMART"]["ole_significant"] = 2
    said = paper.verdict(counts, {"LambdaMART": {"detectable_points": 0.3}})
    assert "OLE ahead in 2, SE in 0 of 4" in said and "expected by chance" in said


def _letor_copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_every_command_reads_variant_and_foldless_folders_through_one_resolver(letor_folder, tmp_path, capsys):
    # OHSUMED's layout: variants side by side, one of them complete; yahoo-sample's: files, no folds
    root = tmp_path / "OHSUMED"
    _letor_copy(letor_folder, root / "QueryLevelNorm")
    (root / "Feature-null" / "Fold1").mkdir(parents=True)
    (root / "Feature-null" / "Fold1" / "testset.txt").write_text("0 qid:1 1:NULL\n")
    ds = paper.resolve_data(root)
    assert ds.key == str((root / "QueryLevelNorm").resolve()) and ds.label == "OHSUMED (QueryLevelNorm)"
    assert ds.folds == ["Fold1", "Fold2"] and "Feature-null: incomplete" in ds.note
    assert ds.train_files[0] == ("Fold1", str(root / "QueryLevelNorm" / "Fold1" / "train.txt"))
    _letor_copy(letor_folder, root / "Feature-min")
    with pytest.raises(ValueError, match="the folders Feature-min, Feature-null, QueryLevelNorm: pass one of them"):
        paper.resolve_data(root)
    # a folder of several data sets is never narrowed to the one with folds
    (tmp_path / "yahoo").mkdir()
    with pytest.raises(ValueError, match="the folders OHSUMED, yahoo: pass one of them"):
        paper.resolve_data(tmp_path)
    flat = tmp_path / "flat"
    flat.mkdir()
    for name in ("rank.train", "rank.test"):
        (flat / name).write_text((letor_folder / "Fold1" / "train.txt").read_text())
    ds = paper.resolve_data(flat, folds=["Fold2"], seed=3)
    assert ds.key == f"pooled:3:{flat.resolve()}" and ds.folds == ["Fold2"]
    assert ds.train_files == [("rank.train", str(flat / "rank.train"))] and "pooled" in ds.label
    with pytest.raises(ValueError, match="does not exist"):
        paper.resolve_data(tmp_path / "nope")
    # paper runs on the foldless folder (it refused it before)
    out = tmp_path / "res"
    assert cli(["paper", "--data", str(flat), "--quick", "--iterations", "2", "--out", str(out),
                "--systems", "mcrank", "--criteria", "se,ole"]) == 0
    assert "# SE vs OLE on flat (rank.test + rank.train pooled" in (out / "table.md").read_text()
    assert "are pooled and split by query" in capsys.readouterr().out


def test_quick_says_in_its_help_what_it_runs(capsys):
    import re

    assert cli(["paper", "--help"]) == 0
    said = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "--quick a smoke-sized grid: one fold (the first)" in said
    assert "QueryLevelNorm" in said and "rank.train/rank.test" in said  # --data says which folders it reads


def test_the_shared_ohsumed_and_yahoo_sample_folders_are_read_as_documented(shared_data):
    oh = paper.resolve_data(shared_data / "OHSUMED", folds=["Fold1"])
    assert oh.label == "OHSUMED (QueryLevelNorm)" and oh.folds == ["Fold1"] and "Feature-null" in oh.note
    ya = paper.resolve_data(shared_data / "yahoo-sample")
    assert ya.key.startswith("pooled:0:") and len(ya.folds) == 5 and [n for n, _ in ya.train_files] == ["rank.train"]
    with pytest.raises(ValueError, match="pass one of them as --data"):
        paper.resolve_data(shared_data)
