"""Tests of comparisons.long_lists: full list, truncated and sampled pairs on long queries."""

import json

import numpy as np
import pytest

from comparisons import long_lists
from comparisons.__main__ import main as cli


def test_paired_differences_are_taken_against_the_full_list_query_by_query():
    base = [0.5, 0.6, 0.7, 0.8]
    other = [0.6, 0.6, 0.9, 0.8]  # +0.1, 0, +0.2, 0
    systems = [{"system": long_lists.BASELINE, "engine": "lightgbm", "best_iteration": 3, "seconds": 1.0,
                "per_query": {"ndcg@10": base, "err@10": base}},
               {"system": "other", "engine": "xgboost", "best_iteration": 5, "seconds": 2.0,
                "per_query": {"ndcg@10": other, "err@10": other}}]
    rows = long_lists.compare(systems)
    assert "diff_ndcg10" not in rows[0] and rows[0]["ndcg@10"] == pytest.approx(0.65)
    d = np.array(other) - np.array(base)
    half = 3.182446305284263 * d.std(ddof=1) / 2  # t_{0.975, 3}
    assert rows[1]["diff_ndcg10"] == pytest.approx(0.075)
    assert (rows[1]["diff_lo"], rows[1]["diff_hi"]) == pytest.approx((0.075 - half, 0.075 + half))
    assert 0 < rows[1]["p"] <= 1


def test_the_command_trains_every_system_and_writes_its_table(tmp_path, capsys):
    out = tmp_path / "ll"
    assert cli(["long-lists", "--queries", "10", "--docs", "40", "--rounds", "3", "--threads", "1",
                "--out", str(out)]) == 0
    said = capsys.readouterr().out
    result = json.loads((out / "long_lists.json").read_text())
    names = [r["system"] for r in result["rows"]]
    assert names == [long_lists.BASELINE, "ours ΔNDCG@10", "ours ΔNDCG, sampled m = 1", "ours ΔNDCG, sampled m = 4",
                     "LightGBM native lambdarank", "XGBoost native rank:ndcg, topk",
                     "XGBoost native rank:ndcg, mean m = 1"]
    assert sum(result["data"]["queries"]) == 10 and result["data"]["docs_per_query"][2] <= 80
    for r in result["rows"]:
        assert 0 <= r["ndcg@10"] <= 1 and 0 <= r["err@10"] <= 1 and 1 <= r["best_iteration"] <= 3
        assert ("diff_ndcg10" in r) == (r["system"] != long_lists.BASELINE)
    assert (out / "long_lists.md").read_text().strip() == long_lists.to_markdown(result)
    assert "| ours ΔNDCG, full list |" in said and "(the reference)" in said


def test_too_few_queries_for_a_three_way_split_is_an_option_error(capsys):
    assert cli(["long-lists", "--queries", "4"]) == 2
    assert "--queries must be at least 5" in capsys.readouterr().err
