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
    docs = (Path(__file__).resolve().parents[1] / "docs" / "reproducing.md").read_text()
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
