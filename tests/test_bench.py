"""Tests of comparisons.bench: the report is Markdown tables a person reads, each module isolated."""

import pytest

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
    assert cli(["bench", "--quick", "--only", "combine", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "bench.md").read_text()
    assert "## combine" in md and "| figure | value |" in md
    assert (tmp_path / "bench.json").exists()


def test_round_profile_times_every_part_of_our_callback():
    from comparisons.bench import adapters

    r = adapters._profile_round("lightgbm", 3000, 2, 1, repeats=1)
    assert r["native_round_s"] > 0 and r["ours_round_s"] > 0 and r["threads"] == 1
    p = r["parts_s"]
    assert set(p) == {"our callback inside training", "engine's copy of the margins for the callback",
                      "rest of our round (engine: tree, gradient hand-in)",
                      "engine hand-over (labels, groups, weights), alone",
                      "cache check (labels/groups/weights unchanged), alone",
                      "our kernel (compute, float32 out), alone", "Hessian and finiteness check, alone"}
    assert all(v >= 0 for v in p.values()) and p["our kernel (compute, float32 out), alone"] > 0
    assert p["our callback inside training"] > 0 and p["rest of our round (engine: tree, gradient hand-in)"] > 0
    assert p["engine's copy of the margins for the callback"] > 0  # LightGBM 4's __inner_predict was timed
    assert isinstance(r["openmp"], str)  # this process's state: an earlier test may have made an XGBoost objective


def test_timings_report_min_and_median_of_the_repeats():
    calls = []
    t = bench.timings(lambda: calls.append(1), 4)
    assert len(calls) == 5 and t["repeats"] == 4  # one warm-up call, then the repeats
    assert 0 <= t["min"] <= t["median"]
    r = bench.ratio({"min": 2.0, "median": 6.0}, {"min": 1.0, "median": 2.0})
    assert r == {"min": 2.0, "median": 3.0}


def test_interleaved_alternates_the_callables():
    order = []
    t = bench.interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, 3)
    assert order == ["a", "b"] * 3 and set(t) == {"a", "b"} and t["a"]["repeats"] == 3


def test_every_bench_module_runs_from_the_package():
    import importlib

    for name in bench.MODULES:
        mod = importlib.import_module(f"comparisons.bench.{name}")
        assert callable(mod.run) and callable(mod.main)
        assert f"python -m comparisons.bench.{name}" in mod.__doc__


@pytest.mark.parametrize("name", bench.MODULES)
def test_every_bench_module_answers_help_and_refuses_an_unknown_option(name, capsys):
    """``--help`` prints usage and runs nothing (bench.adapters once parsed its argv by hand and
    started its 4-minute benchmark on ``--help``); an unknown option is an error, not ignored."""
    import importlib

    mod = importlib.import_module(f"comparisons.bench.{name}")
    with pytest.raises(SystemExit) as done:
        mod.main(["--help"])
    assert done.value.code == 0 and "usage:" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        mod.main(["--no-such-option"])
    assert done.value.code == 2 and "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_adapter_benchmark_runs_only_the_configurations_asked_for():
    from comparisons.bench import adapters

    with pytest.raises(SystemExit):
        adapters.main(["--runs", "xgboost-sideways"])
    with pytest.raises(SystemExit):
        adapters.main(["--rows", "0"])
    r = adapters.run(quick=True, repeats=1, rows=600, rounds=1, runs=["lightgbm"], threads=[1])
    assert [(x["engine"], x["threads"], x["imports"]) for x in r["runs"]] == [("lightgbm", 1, "lightgbm only")]


def test_adapter_benchmark_reports_min_and_median_ratios_per_thread_count():
    from comparisons.bench import adapters

    r = adapters._engine_pair("lightgbm", True, 1, 2)
    assert r["threads"] == 1 and r["repeats"] == 2
    assert r["ratio_min"] == r["ours_s_min"] / r["native_s_min"]
    assert r["ratio_median"] == r["ours_s_median"] / r["native_s_median"]
    assert r["max_pred_diff"] < 1e-9  # the parity preset: the same trees as the native objective
    assert isinstance(r["openmp"], str) and r["threading_layer"] in ("omp", "tbb", "workqueue")


def test_plrank_peer_is_the_published_estimator_unbiased_for_the_enumerated_derivatives():
    import numpy as np

    import _oracles as oracle
    from comparisons.bench.plrank import numpy_plrank

    s, y = np.array([0.3, -0.5, 1.1, 0.0]), np.array([2.0, 0.0, 1.0, 3.0])
    gains = 2.0 ** y - 1.0
    rng = np.random.default_rng(0)
    runs = np.array([np.concatenate(numpy_plrank(s, gains, 2, 50, rng)) for _ in range(400)])
    d1, d2 = oracle.pl_expected_dcg_derivatives(list(s), list(y), 2)
    z = np.abs(runs.mean(0) + np.r_[d1, d2]) / (runs.std(0, ddof=1) / np.sqrt(400))
    assert z.max() < 4.5, z.round(2)


def test_long_list_benchmark_times_ours_and_both_engines_per_size_and_thread_count():
    from comparisons.bench import THREADS, long_lists

    r = long_lists.run(rows=600, sizes=(100, 300), repeats=1, rounds=1, one=2100)
    assert "in turn" in r["unit"] and "3 repeats" in r["unit"]  # at least 3 repeats, whatever was asked
    assert [(row["docs_per_query"], row["threads"]) for row in r["rows"]] == [(d, nt) for d in (100, 300) for nt in THREADS]
    for row in r["rows"]:
        for name in ("ours_full", "ours_at10", "ours_mean", "ours_mean4"):
            assert row[f"{name}_ms_min"] >= 0 and row[f"{name}_ms_median"] >= row[f"{name}_ms_min"]
        for name in ("lightgbm_lambdarank", "xgboost_topk", "xgboost_mean", "xgboost_mean4"):
            # a difference of two trainings' minima (or medians): not ordered, and clipped at 0
            assert row[f"{name}_ms_min"] >= 0 and row[f"{name}_ms_median"] >= 0
        assert row["ours_full_ms_min"] > 0
        # ours inside XGBoost at m = 1 and 4, timed as its native is, and the whole-training ratio a user pays
        for ours in ("ours_mean", "ours_mean4"):
            assert row[f"{ours}_in_xgboost_ms_median"] >= 0 and row[f"{ours}_in_xgboost_ms_min"] >= 0
            xgb = "xgboost_mean" if ours == "ours_mean" else "xgboost_mean4"
            assert row[f"training_{ours}_over_{xgb}_min"] > 0
    one = r["one_query"]  # 2,100 documents: just over the split threshold
    assert one["docs"] == 2100 and one["blocks"] > 1 and one["same_bits_at_1_and_2_threads"]
    assert set(one["ms"]) == {f"{sp}_{nt}t" for sp in ("split", "unsplit") for nt in THREADS}
    assert one[f"speedup_{THREADS[-1]}t_over_{THREADS[0]}t"]["min"] > 0
    for m in ("1", "4"):  # the sampled draws of the same query, in turn at 1 and 2 threads
        sampled = one["sampled"][m]
        assert sampled["same_bits_at_1_and_2_threads"]
        assert set(sampled["ms"]) == {f"{nt}t" for nt in THREADS}
        assert sampled[f"speedup_{THREADS[-1]}t_over_{THREADS[0]}t"]["median"] > 0


def test_long_list_benchmark_alternates_ours_and_xgboost_in_one_process(monkeypatch):
    """Issue #47: ours and XGBoost's trainings alternate within each repeat (not ours for every size
    first and the engine later), so a background load falls on both alike."""
    from comparisons.bench import long_lists

    seen = []
    real = long_lists.interleaved

    def spy(fns, repeats):
        seen.append(list(fns))
        return real(fns, repeats)

    monkeypatch.setattr(long_lists, "interleaved", spy)
    monkeypatch.setattr(long_lists, "THREADS", (1,))
    long_lists.engine_times("xgboost", (100,), 400, 1, 1)
    assert len(seen) == 1 and {"xgboost_mean", "xgboost_mean4", "fixed", "ours_mean", "ours_mean4",
                               "ours_in_xgboost_mean", "ours_full"} <= set(seen[0])


@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_objective_benchmark_reports_each_objective_against_the_native_in_the_same_run(engine):
    from comparisons.bench import objectives

    names = ["mrr@10 (exact ΔMRR)", "softmax"]
    r = objectives._engine_side(engine, 1200, 2, 1, 1, names)
    assert r["native"] == objectives.NATIVE[engine] and r["threads"] == 1 and r["rounds"] == 2
    assert [row["objective"] for row in r["objectives"]] == names
    for row in r["objectives"]:
        assert row["train_ratio_min"] > 0 and row["gradient_ms_median"] >= row["gradient_ms_min"] > 0
        # the call's time over one native round (the native training's time / rounds)
        assert row["gradient_per_native_round_min"] == pytest.approx(row["gradient_ms_min"] / r["native_round_ms_min"])
    assert set(objectives.OBJECTIVES) >= {"yetirank mode=mrr", "yetirank mode=map", "plrank@10 (PL-Rank-3 + Hessian)",
                                         "softmax", "listmle", "map@10 (exact ΔMAP)"}
