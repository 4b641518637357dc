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

    import csv
    import shutil

    out = tmp_path / "q"
    data = tmp_path / "web, sample"  # a comma in the data set's label: the CSV must quote it
    shutil.copytree(letor_folder, data)
    args = ["quality", "--data", str(data), "--quick", "--seeds", "2", "--engines", "lightgbm",
            "--objectives", "native lambdarank,ours ndcg@10,ours xendcg", "--out", str(out)]
    assert main(args) == 0
    for name in ("quality.md", "quality.csv", "summary.json", "quality.png"):
        assert (out / name).stat().st_size > 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert {r["system"] for r in rows} == {"native lambdarank", "ours ndcg@10", "ours xendcg"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cap"]["tasks"] == 12 and 0 <= summary["cap"]["share_below_cap"] <= 1
    (power,) = summary["power"].values()
    assert power["n_queries"] == 24 and power["mde"] > 0  # 2 folds x 12 test queries
    for r in rows:
        assert 0 <= r["ndcg@10"] <= 1 and r["folds"] == 2 and r["seeds"] == 2
        if r["system"] != "native lambdarank":
            assert 0 < r["ndcg@10 p_holm"] <= 1
            assert r["ndcg@10 significant"] == (r["ndcg@10 p_holm"] < 0.05)
    with open(out / "quality.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [t["data"] for t in table] == ["web, sample"] * 3 and None not in table[0]
    for t, r in zip(table, rows):
        assert t["system"] == r["system"] and float(t["ndcg@10"]) == pytest.approx(r["ndcg@10"], abs=1e-6)
    md = (out / "quality.md").read_text()
    assert "LightGBM convention" in md and "Holm" in md and "80 % power" in md and "below the cap" in md
    stored = sorted((out / "runs").glob("*.json"))
    assert len(stored) == 12  # 2 folds x 3 systems x 2 seeds
    mtimes = [p.stat().st_mtime for p in stored]
    assert main(args) == 0  # the second run computes nothing
    assert [p.stat().st_mtime for p in stored] == mtimes
    # another pre-declared primary re-summarises the same stored tasks: nothing retrains
    assert main(args + ["--primary", "mrr@10"]) == 0
    assert [p.stat().st_mtime for p in sorted((out / "runs").glob("*.json"))] == mtimes
    again = json.loads((out / "summary.json").read_text())
    assert again["primary"] == "mrr@10" and again["power"][next(iter(again["power"]))]["family"] == 2
    assert all(r["mrr@10 significant"] == (r["mrr@10 p_holm"] < 0.05) for r in again["rows"] if "mrr@10 p" in r)
    md = (out / "quality.md").read_text()
    assert "Primary endpoint MRR@10 (pre-declared with --primary)" in md and "vs native MRR@10 (p Holm)" in md
    assert "selected on validation NDCG@10" in md


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


def _result(values, best=10, rounds=100):
    """A task result as ``one_task`` returns it: the same per-query ``values`` for every metric."""
    return {"test": {m: list(values) for m in quality.METRICS}, "seconds": 1.0, "best_iteration": best,
            "rounds": rounds}


def _cfg(system, fold, seed, engine="lightgbm"):
    return {"data_label": "d", "engine": engine, "system": system, "fold": fold, "seed": seed}


def test_seeds_are_averaged_per_query_before_the_paired_test():
    base = [_result([0.5, 0.5, 0.5])]
    # two seeds whose per-query mean is exactly the baseline: no difference, p = 1
    ours = [_result([0.7, 0.3, 0.9]), _result([0.3, 0.7, 0.1])]
    results = [(_cfg("native lambdarank", "Fold1", 0), base[0])]
    results += [(_cfg("ours ndcg", "Fold1", s), r) for s, r in enumerate(ours)]
    rows, _, _ = quality.summarise(results)
    row = next(r for r in rows if r["system"] == "ours ndcg")
    assert row["seeds"] == 2 and row["ndcg@10"] == pytest.approx(0.5)
    assert row["ndcg@10 diff"] == pytest.approx(0.0) and row["ndcg@10 p"] == 1.0
    np.testing.assert_allclose(quality.seed_means(ours)["ndcg@10"], [0.5, 0.5, 0.5])


def test_holm_runs_over_the_primary_family_and_the_secondary_family_separately(monkeypatch):
    # p-values handed out in call order: 3 systems x 7 metrics, by hand
    pvals = iter([0.01, 0.2, 0.3, 0.01, 0.02, 0.5, 0.4] * 3)
    monkeypatch.setattr(quality, "sign_flip_pvalue", lambda d: next(pvals))
    results = [(_cfg("native lambdarank", "Fold1", 0), _result([0.5, 0.6]))]
    results += [(_cfg(s, "Fold1", 0), _result([0.7, 0.8])) for s in ("ours a", "ours b", "ours c")]
    rows, power, _ = quality.summarise(results)
    tested = [r for r in rows if "ndcg@10 p" in r]
    assert len(tested) == 3
    order = quality.METRICS
    # the primary family has 3 members, each p = 0.01 (METRICS[3] is ndcg@10): Holm gives 0.03 for all,
    # where one Holm over all 21 tests would give 0.21
    assert order[3] == "ndcg@10"
    assert [r["ndcg@10 p"] for r in tested] == [0.01] * 3
    np.testing.assert_allclose([r["ndcg@10 p_holm"] for r in tested], [0.03] * 3)
    assert all(r["ndcg@10 significant"] for r in tested)
    # ndcg@1's 0.01 sits in the secondary family of 18: 18 x 0.01, not significant
    np.testing.assert_allclose([r["ndcg@1 p_holm"] for r in tested], [0.18] * 3)
    # the secondary family: 3 systems x 6 metrics = 18 tests, each adjusted within those 18 only
    secondary = [(r, m) for r in tested for m in order if m != "ndcg@10"]
    assert len(secondary) == 18
    np.testing.assert_allclose([r[m + " p_holm"] for r, m in secondary],
                               quality.holm([r[m + " p"] for r, m in secondary]))
    assert power["d"]["family"] == 3


def test_another_primary_is_its_own_holm_family_and_power_statement(monkeypatch):
    # mrr@10 (METRICS[6]) as the pre-declared primary: its 3 comparisons are the primary family
    assert quality.METRICS[6] == "mrr@10"
    pvals = iter([0.2, 0.2, 0.2, 0.01, 0.2, 0.2, 0.01] * 3)
    monkeypatch.setattr(quality, "sign_flip_pvalue", lambda d: next(pvals))
    results = [(_cfg("native lambdarank", "Fold1", 0), _result([0.5, 0.6, 0.2]))]
    results += [(_cfg(s, "Fold1", 0), _result([0.7, 0.8, 0.1])) for s in ("ours a", "ours b", "ours c")]
    rows, power, _ = quality.summarise(results, primary="mrr@10")
    tested = [r for r in rows if "mrr@10 p" in r]
    np.testing.assert_allclose([r["mrr@10 p_holm"] for r in tested], [0.03] * 3)  # 3 x 0.01
    assert all(r["mrr@10 significant"] for r in tested)
    # ndcg@10 is secondary now: 0.01 in a family of 18
    np.testing.assert_allclose([r["ndcg@10 p_holm"] for r in tested], [0.18] * 3)
    sd = np.std(np.array([0.7, 0.8, 0.1]) - [0.5, 0.6, 0.2], ddof=1)
    assert power["d"]["family"] == 3 and power["d"]["sd"] == pytest.approx(sd)
    verdict = quality.verdicts(rows, ["lightgbm"], "mrr@10")
    assert verdict[0]["text"].startswith("ours a, ours b, ours c significantly better than native lambdarank on MRR@10")
    with pytest.raises(ValueError, match="primary endpoint 'mrr@5' is not one of the measured metrics"):
        quality.summarise(results, primary="mrr@5")


def test_a_stored_task_without_a_metric_is_refused_not_read_as_missing():
    old = {"test": {m: [0.5] for m in quality.METRICS if m != "mrr@10"}, "seconds": 1.0, "best_iteration": 1,
           "rounds": 10}
    with pytest.raises(ValueError, match=r"stored task d Fold1 lightgbm ours a seed 0 has no mrr@10: re-run it"):
        quality.summarise([(_cfg("ours a", "Fold1", 0), old)])


def test_system_sets_name_existing_systems_for_every_engine():
    assert set(quality.PER_METRIC_SYSTEMS) <= set(quality.OBJECTIVE_NAMES)
    for name in ("ours yetirank mrr", "ours yetirank map", "ours plrank", "ours softmax", "ours listmle",
                 "ours mrr@10", "ours map@10", "ours err@10"):
        assert {e for e, n in quality.SYSTEMS if n == name} == {"lightgbm", "xgboost"}
    assert quality.SYSTEM_SETS["default"] == quality.DEFAULT_SYSTEMS


def test_power_statement_and_cap_share_by_hand():
    rng = np.random.default_rng(1)
    base = rng.uniform(0, 1, 400)
    diff = rng.normal(0.01, 0.1, 400)
    results = [(_cfg("native lambdarank", "Fold1", 0), _result(base, best=50)),
               (_cfg("ours ndcg", "Fold1", 0), _result(base + diff, best=100)),  # the cap bound this one
               (_cfg("ours err", "Fold1", 0), _result(base + diff, best=20)),
               (_cfg("ours map", "Fold1", 0), _result(base + diff, best=99))]
    _, power, cap = quality.summarise(results)
    assert cap == {"tasks": 4, "share_below_cap": 0.75, "diverged": [], "diverged_tasks": 0, "diverged_chosen": 0}
    # a task whose second configuration diverged (chosen: the first) and one whose chosen one did
    results[2][1].update(diverged_at=[None, 37], chosen_diverged=False)
    results[3][1].update(diverged_at=[12], chosen_diverged=True)
    cap = quality.summarise(results)[2]
    assert (cap["diverged"], cap["diverged_tasks"], cap["diverged_chosen"]) == \
        (["lightgbm: ours err", "lightgbm: ours map"], 2, 1)
    for r in results[2:]:
        del r[1]["diverged_at"], r[1]["chosen_diverged"]
    sd = np.std(diff, ddof=1)
    assert power["d"]["sd"] == pytest.approx(sd) and power["d"]["n_queries"] == 400
    # (1.959964 + 0.841621) * sd / sqrt(n)
    assert power["d"]["mde"] == pytest.approx(2.801585 * sd / 20, rel=1e-5)
    assert power["d"]["mde_holm"] > power["d"]["mde"]


def test_verdicts_name_the_winners_or_say_none():
    rows = [{"data": "d", "engine": "lightgbm", "system": "native lambdarank", "ndcg@10": 0.5},
            {"data": "d", "engine": "lightgbm", "system": "native rank_xendcg", "ndcg@10": 0.6,
             "ndcg@10 diff": 0.1, "ndcg@10 significant": False},
            {"data": "d", "engine": "lightgbm", "system": "ours ndcg", "ndcg@10": 0.55,
             "ndcg@10 diff": 0.05, "ndcg@10 significant": True},
            {"data": "d", "engine": "catboost", "system": "native LambdaMart NDCG", "ndcg@10": 0.5}]
    got = {v["engine"]: v["text"] for v in quality.verdicts(rows, ["lightgbm", "catboost"])}
    assert got["lightgbm"] == ("ours ndcg significantly better than native lambdarank on NDCG@10 "
                               "(best native by NDCG@10 point estimate: native rank_xendcg)")
    assert got["catboost"].startswith("natives only")
    rows[2]["ndcg@10 significant"] = False
    assert quality.verdicts(rows, ["lightgbm"])[0]["text"].startswith("no objective of ours")


def test_every_objective_of_an_engine_gets_the_same_configurations():
    for engine, space in quality.SPACE.items():
        configs = quality.search_configs(engine, 6)
        assert configs == quality.search_configs(engine, 6) and len(configs) == 6
        assert len({tuple(c.values()) for c in configs}) == 6 and configs[0] == quality.QUICK[engine]
        assert quality.search_configs(engine, 1) == [quality.QUICK[engine]]
        assert all(set(c) == set(space) and all(c[k] in space[k] for k in c) for c in configs)
        assert quality.search_configs(engine, 6, quick=True) == [quality.QUICK[engine]]
    assert "reg_lambda" in quality.SPACE["xgboost"]
    assert {"ours ndcg"} <= set(quality.DEFAULT_SYSTEMS)


def test_a_folder_without_folds_is_pooled_and_split_by_query(tmp_path):
    # LightGBM's example layout (yahoo-sample): rank.train / rank.test with .query group files, no qid:
    from comparisons.__main__ import main
    from comparisons.paper import load_fold
    from lambda_objectives import make_ranking

    folder = tmp_path / "nofolds"
    folder.mkdir()
    for name, nq, seed in (("rank.train", 30, 1), ("rank.test", 10, 2)):
        d = make_ranking(nq, docs_per_query=(4, 9), n_features=5, seed=seed)
        lines = [f"{int(y)} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x)) for x, y in zip(d.X, d.y)]
        (folder / name).write_text("\n".join(lines) + "\n")
        (folder / f"{name}.query").write_text("\n".join(str(g) for g in d.group) + "\n")
    seen = []
    for fold in ("Fold1", "Fold2"):
        tr, va, te = load_fold(f"pooled:0:{folder}", fold)
        assert tr.n_queries + va.n_queries + te.n_queries == 40
        assert not set(tr.qid) & set(te.qid) and not set(va.qid) & set(te.qid)
        seen.append(set(te.qid))
    assert not seen[0] & seen[1]  # test parts of different folds are disjoint
    out = tmp_path / "q"
    assert main(["quality", "--data", str(folder), "--quick", "--seeds", "1", "--engines", "lightgbm",
                 "--objectives", "native lambdarank,ours ndcg", "--out", str(out)]) == 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert {r["folds"] for r in rows} == {2} and "pooled" in rows[0]["data"]


def test_attribution_systems_train_with_their_own_settings(letor_folder, monkeypatch):
    # CatBoost-like training replaces the searched configuration; the spec's own params win
    import lightgbm as lgb

    from comparisons.paper import load_fold

    seen = []
    real = lgb.train
    monkeypatch.setattr(lgb, "train", lambda p, *a, **k: (seen.append(dict(p)), real(p, *a, **k))[1])
    tr, va, te = load_fold(str(letor_folder), "Fold1")
    for system in ("native lambdarank (catboost-like training)", "ours catboost-lambdamart"):
        cfg = {"data": str(letor_folder), "fold": "Fold1", "engine": "lightgbm", "system": system,
               "grid": quality.search_configs("lightgbm", 1, quick=True), "rounds": 20, "patience": 5, "seed": 0,
               "convention": "lightgbm"}
        res = quality.one_task(cfg)
        assert 0 <= np.mean(res["test"]["ndcg@10"]) <= 1
    assert seen[0]["max_depth"] == 6 and seen[0]["bagging_fraction"] == 0.8 and seen[0]["bagging_by_query"]
    assert seen[0]["lambda_l2"] == 0.0 and seen[0]["objective"] == "lambdarank"
    assert "max_depth" not in seen[1] and seen[1]["objective"].preset == "catboost"
    assert set(quality.ATTRIBUTION) <= set(quality.OBJECTIVE_NAMES)


def test_the_plot_draws_the_paired_difference_to_the_native_that_the_table_tests():
    # quality.png drew each system's own interval (all overlapping) beside a table marking ▼ from a
    # paired test; it now draws the paired difference to the engine's native with its interval
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.7, 40)
    worse = base - 0.05 + 0.01 * rng.standard_normal(40)
    results = [(_cfg("native lambdarank", "Fold1", 0), _result(base)), (_cfg("ours ndcg", "Fold1", 0), _result(worse)),
               (_cfg("native rank:ndcg", "Fold1", 0, "xgboost"), _result(base)),
               (_cfg("ours ndcg", "Fold1", 0, "xgboost"), _result(base + 0.001 * rng.standard_normal(40)))]
    rows, _, _ = quality.summarise(results)
    points = quality.plot_points(rows, "d")
    assert [p["name"] for p in points] == ["lightgbm: ours ndcg", "xgboost: ours ndcg"]  # natives are the zero line
    lo, hi = quality.t_interval(worse - base)
    assert points[0]["diff"] == pytest.approx(100 * np.mean(worse - base))
    assert (points[0]["lo"], points[0]["hi"]) == pytest.approx((100 * lo, 100 * hi))
    assert points[0]["significant"] == -1 and points[1]["significant"] == 0  # the table's ▼ and no mark
    assert "minus the engine's default native (lightgbm: native lambdarank; xgboost: native rank:ndcg)" in \
        quality.figure_title(["lightgbm", "xgboost"])


def test_variant_folders_are_read_as_their_complete_layout_and_named(letor_folder, tmp_path):
    import argparse
    import shutil

    from comparisons._cli import dataset_name

    root = tmp_path / "OHSUMED"
    shutil.copytree(letor_folder, root / "QueryLevelNorm")
    (root / "Feature-null" / "Fold1").mkdir(parents=True)
    a = argparse.Namespace(data=[str(root)], synthetic=None, engines=["lightgbm"], objectives=None, folds=None,
                           quick=True, seed=0)
    _, _, datasets = quality._validate(a)
    assert datasets == [(str((root / "QueryLevelNorm").resolve()), "OHSUMED (QueryLevelNorm)", ["Fold1", "Fold2"])]
    assert dataset_name(datasets[0][1]) == "OHSUMED (QueryLevelNorm)"  # the panel title of quality.png


def test_quick_help_says_two_folds(capsys):
    import re

    from comparisons.__main__ import main

    assert main(["quality", "--help"]) == 0
    said = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "the first two folds of each data set (Fold1, Fold2)" in said


@pytest.mark.parametrize("engine, system", [("lightgbm", "ours softmax"), ("lightgbm", "ours listmle"),
                                            ("xgboost", "ours softmax"), ("xgboost", "ours listmle"),
                                            ("catboost", "native QuerySoftMax")])
def test_issue33_listwise_systems_train_and_are_opt_in(engine, system):
    pytest.importorskip(engine)
    from comparisons.quality import DEFAULT_SYSTEMS, OBJECTIVE_NAMES, QUICK, SYSTEMS, _train
    from lambda_objectives import make_ranking, mean_metric

    # selectable with --objectives, not in the default protocol whose tables docs/reproducing/quality.md shows
    assert system in OBJECTIVE_NAMES and system not in DEFAULT_SYSTEMS
    tr, va = make_ranking(60, docs_per_query=(5, 25), n_features=5, seed=1), make_ranking(30, n_features=5, seed=2)
    predict, best, diverged = _train(engine, SYSTEMS[(engine, system)], tr, va, dict(QUICK[engine]), 15, 5, 0)
    assert 1 <= best <= 15 and diverged is None
    base = mean_metric(np.zeros(va.y.shape[0]), va.y, va.group_ptr, "ndcg@10")
    assert mean_metric(predict(va.X), va.y, va.group_ptr, "ndcg@10") > base


def test_a_diverging_xgboost_training_stops_there_and_keeps_its_best_iteration():
    # ΔERR@10 with XGBoost's min_child_weight = 0, reg_lambda = 0 and eta = 1 on this set: leaf values
    # −G/H from vanishing Hessians overflow the scores within ~25 rounds, and our objective refuses
    # them. The task must not die (it killed a 375-task run): the training stops there, keeping the
    # best validation iteration before it; non-finite scores the model did not produce still raise
    pytest.importorskip("xgboost")
    import xgboost as xgb

    from comparisons.quality import QUICK, SYSTEMS, _train
    from lambda_objectives import make_ranking, mean_metric

    tr, va = make_ranking(60, docs_per_query=(5, 40), n_features=5, seed=1), make_ranking(30, n_features=5, seed=2)
    hp = dict(QUICK["xgboost"], eta=1.0, colsample_bytree=1.0)
    predict, best, diverged = _train("xgboost", SYSTEMS[("xgboost", "ours err@10")], tr, va, hp, 300, 300, 0)
    assert diverged is not None and 1 <= best < diverged < 300
    s = predict(va.X)
    assert np.all(np.isfinite(s))
    # the kept iteration is the best of the validation history XGBoost itself records
    from lambda_objectives import XGBoostObjective

    obj = XGBoostObjective("err@10")
    p = dict(obj.params(grow_policy="lossguide", tree_method="hist", seed=0, nthread=1, **hp), eval_metric="ndcg@10")
    p.pop("disable_default_eval_metric", None)
    logs = []

    class Keep(xgb.callback.TrainingCallback):  # xgb.train fills evals_result only when it returns
        def after_iteration(self, model, epoch, evals_log):
            logs.append(list(evals_log["valid"]["ndcg@10"]))
            return False

    with pytest.raises(ValueError, match="not finite"):
        xgb.train(p, xgb.DMatrix(tr.X, tr.y, group=tr.group), 300, obj=obj, callbacks=[Keep()],
                  evals=[(xgb.DMatrix(va.X, va.y, group=va.group), "valid")], verbose_eval=False)
    history = logs[-1]
    assert len(history) == diverged - 1 and best == int(np.argmax(history)) + 1
    assert mean_metric(s, va.y, va.group_ptr, "ndcg@10") > mean_metric(np.zeros(va.y.shape[0]), va.y, va.group_ptr,
                                                                        "ndcg@10")
    # an objective that refuses its input before any round is not a divergence: the error stands
    bad = make_ranking(60, docs_per_query=(5, 40), n_features=5, seed=1)
    bad.y[3] = 1.5  # ΔERR needs whole-number grades
    with pytest.raises(ValueError, match="whole|integer"):
        _train("xgboost", SYSTEMS[("xgboost", "ours err@10")], bad, va, hp, 300, 300, 0)
