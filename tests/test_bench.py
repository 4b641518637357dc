"""Tests of comparisons.bench: the report is Markdown tables a person reads, each module isolated."""

from comparisons import bench
from comparisons.__main__ import main as cli


def test_results_render_as_tables_not_json():
    md = "\n".join(bench.to_markdown({"ratio": 1.2345678, "runs": [{"engine": "lightgbm", "ratio": 0.9},
                                                                     {"engine": "xgboost", "ratio": 0.88}],
                                      "machine": {"cpu_count": 2}}, "bench_x"))
    assert "| figure | value |" in md and "| ratio | 1.235 |" in md
    assert "| engine | ratio |" in md and "| xgboost | 0.88 |" in md
    assert "## bench_x" in md and "### bench_x: machine" in md
    assert "{" not in md  # no raw JSON


def test_bench_command_writes_a_table_report(tmp_path):
    assert cli(["bench", "--quick", "--only", "bench_combine", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "bench.md").read_text()
    assert "## bench_combine" in md and "| figure | value |" in md
    assert (tmp_path / "bench.json").exists()


def test_round_profile_times_every_part_of_our_callback():
    from comparisons import bench_adapters

    r = bench_adapters._profile_round("lightgbm", 3000, 2, 1, repeats=1)
    assert r["native_round_s"] > 0 and r["ours_round_s"] > 0 and r["threads"] == 1
    assert set(r["parts_s"]) == {"engine hand-over (labels, groups, weights)",
                                 "cache check (labels/groups/weights unchanged)",
                                 "our kernel (compute, float32 out)", "Hessian and finiteness check"}
    assert all(v >= 0 for v in r["parts_s"].values()) and r["parts_s"]["our kernel (compute, float32 out)"] > 0
