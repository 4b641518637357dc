"""Tests of the comparisons commands demo, engines and validate, and the command dispatcher."""

import importlib.util
import json

import numpy as np
import pytest

from comparisons.__main__ import main as cli


def test_demo_smoke(tmp_path):
    from comparisons.demo import run_demo

    res = run_demo(n_queries=60, rounds=3, out=str(tmp_path))
    names = [r["system"] for r in res["rows"]]
    assert "LightGBM native lambdarank" in names and any(n.startswith("reference") for n in names)
    preset = next(r for r in res["rows"] if "preset=lightgbm" in r["system"])
    assert preset["note"].endswith(": 0")  # bit-for-bit parity with native
    assert (tmp_path / "demo.md").exists()
    assert all(np.isfinite(r["ndcg@10"]) for r in res["rows"])


def test_one_parser_errors_and_help(capsys):
    assert cli(["nonsense"]) == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err
    assert cli([]) == 2
    assert "required: command" in capsys.readouterr().err
    assert cli(["--help"]) == 0
    said = capsys.readouterr().out
    assert all(name in said for name in ("demo", "paper", "engines", "validate", "bench"))
    assert cli(["engines", "--help"]) == 0
    assert "(default: 100)" in capsys.readouterr().out  # every option shows its default
    for bad, said in ((["paper", "--data", "x", "--iterations", "0"], "expected an integer >= 1"),
                      (["engines", "--data", "x", "--lr", "-1"], "expected a finite number > 0"),
                      (["engines", "--data", "x", "--systems", "lightgbm-ours,catboost"], "unknown catboost"),
                      (["paper", "--data", "x", "--synthetic", "10"], "not allowed with argument"),
                      # a fold outside 1..5 ended in a matplotlib traceback after an empty grid
                      (["paper", "--synthetic", "50", "--folds", "9"], "argument --folds: unknown fold '9'"),
                      (["paper", "--data", "x", "--folds", "1,x"], "argument --folds: unknown fold 'x'"),
                      (["paper", "--synthetic", "50", "--folds", ","], "argument --folds: expected a non-empty"),
                      (["engines", "--data", "x", "--folds", "0"], "argument --folds: unknown fold '0'"),
                      (["validate", "--data", "x", "--folds", "Fold6"], "argument --folds: unknown fold 'Fold6'"),
                      (["quality", "--synthetic", "50", "--folds", "9"], "argument --folds: unknown fold '9'"),
                      (["quality", "--synthetic", "50", "--quick", "--folds", "4"], "--quick runs the synthetic"),
                      (["quality", "--synthetic", "50", "--objectives", "per-metric,bogus"], "unknown bogus"),
                      (["quality", "--synthetic", "50", "--primary", "mrr@5"], "argument --primary: invalid choice"),
                      (["paper", "--synthetic", "3"], "argument --synthetic: expected an integer >= 5"),
                      (["paper", "--synthetic", "50", "--leaves", "10,1"], "argument --leaves: expected an integer >= 2"),
                      (["engines", "--data", "x", "--leaves", "1"], "argument --leaves: expected an integer >= 2"),
                      (["paper", "--synthetic", "50", "--systems", "mcrank", "--criteria", "se,ole_exact"],
                       "holds no OLE defined for mcrank")):
        assert cli(bad) == 2
        assert said in capsys.readouterr().err


def _parsers():
    import argparse
    import importlib

    from comparisons.__main__ import COMMANDS, _Formatter

    for name, (module, _) in COMMANDS.items():
        p = argparse.ArgumentParser(prog=f"python -m comparisons {name}", formatter_class=_Formatter)
        importlib.import_module(module).add_arguments(p)
        yield name, p


def test_every_commands_help_is_plain_text_with_each_default_once(capsys):
    import re

    from comparisons.__main__ import COMMANDS

    for name in COMMANDS:
        assert cli([name, "--help"]) == 0
        said = capsys.readouterr().out
        assert "``" not in said and not re.search(r":(func|mod|class|meth|attr):", said), name  # RST markup
        assert "(default: None)" not in said, name
        for block in re.split(r"\n  (?=-)", said):  # one option's help per block
            assert block.count("(default") <= 1, (name, block)
    for name, p in _parsers():
        for action in p._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings[0]} has no help"


def test_full_list_is_the_default_truncation_everywhere():
    for name, p in _parsers():
        k = next((a for a in p._actions if a.dest == "k"), None)
        if k is not None:
            assert k.default is None and "full list" in k.help, name


def test_titles_name_the_data_set_not_the_path(tmp_path):
    from comparisons._cli import dataset_name

    (tmp_path / "MQ2008" / "Fold1").mkdir(parents=True)
    (tmp_path / "OHSUMED" / "QueryLevelNorm").mkdir(parents=True)
    assert dataset_name(tmp_path / "MQ2008") == "MQ2008"
    assert dataset_name(str(tmp_path / "MQ2008" / "Fold1") + "/") == "MQ2008"
    assert dataset_name(tmp_path / "OHSUMED" / "QueryLevelNorm") == "OHSUMED (QueryLevelNorm)"
    assert dataset_name("synthetic MSLR-shaped, 400 queries") == "synthetic MSLR-shaped, 400 queries"


def test_quick_does_not_override_explicit_rates(capsys):
    import argparse

    from comparisons import paper
    from comparisons.__main__ import main as dispatch  # noqa: F401

    p = paper.add_arguments(argparse.ArgumentParser())
    argv = ["--data", "x", "--quick", "--rates", "0.06,0.12"]
    a = paper.check_args(p, p.parse_args(argv), argv)
    assert a.rates == [0.06, 0.12] and a.iterations == 40  # --rates wins; --quick fills what is not given
    argv = ["--data", "x", "--quick", "--iterations", "7"]
    a = paper.check_args(p, p.parse_args(argv), argv)
    assert a.rates == [0.1] and a.iterations == 7


def test_engines_command_small(letor_folder, tmp_path, capsys):
    out = tmp_path / "eng"
    cat = importlib.util.find_spec("catboost") is not None
    args = ["engines", "--data", str(letor_folder), "--folds", "1", "--rounds", "3", "--leaves", "4",
            "--min-data", "5", "--systems", "reference-ole,lightgbm-native" + (",catboost-native" if cat else ""),
            "--out", str(out)]
    assert cli(args) == 0
    md = (out / "engines.md").read_text()
    assert "| reference-ole |" in md and "| lightgbm-native |" in md
    assert md.startswith(f"ΔNDCG (full list) objective on {letor_folder.name} (")  # the default: no truncation
    assert ("| catboost-native |" in md) == cat
    assert (out / "engines.png").stat().st_size > 1000
    assert len((out / "engines.csv").read_text().splitlines()) == 3 + cat


def test_engines_refuses_k_for_an_objective_without_a_cutoff(tmp_path, capsys):
    # before: every training child raised the objective's "unknown options" error, one traceback a cell
    assert cli(["engines", "--data", str(tmp_path), "--metric", "xendcg", "--k", "5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "--k" in err and "xendcg" in err


def test_validate_command_small(letor_folder, tmp_path, capsys):
    assert cli(["validate", "--data", str(letor_folder), "--folds", "1", "--queries", "3",
                "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "validate.json").read_text())
    engines = [r for r in rows if r["engine"] != "catboost"]
    assert len(engines) == 7 and all(r["passed"] and 0 < r["n_compared"] <= r["n_documents"] for r in engines)
    said = "".join(capsys.readouterr())
    assert f"compared {engines[0]['n_compared']} of {engines[0]['n_documents']} documents" in said
    # a header and legend before the rows (what PASS compares, why few documents, CatBoost's "differs")
    legend = said[:said.index("lambdarank (defaults)")]
    assert "What each row compares" in legend and "PASS: every document compared agrees within relative 1e-6" in legend
    assert "LightGBM sizes leaves from Hessians" in legend and "is an expected finding" in legend
    assert "fold   setting" in legend
    assert f"all passed: {len(rows)} of {len(rows)} rows PASS, 0 FAIL, 0 errors." in said
    cat = [r for r in rows if r["engine"] == "catboost"]
    if importlib.util.find_spec("catboost") is not None:
        # every CatBoost setting is reproduced; where it departs from the exact lambdas is reported
        assert len(cat) >= 8 and all(r["passed"] and r["reproduced"] == "pass" for r in cat)
        assert {r["exact"] for r in cat} <= {"agrees", "differs", "n/a"}
        # our YetiRank objective against CatBoost's own, both averaged over seeds
        assert any(r["setting"] == "YetiRank ours vs CatBoost (seed means)" for r in cat)
    else:
        assert cat == []


def test_validate_closes_with_counts_and_calls_catboosts_departures_findings():
    from comparisons.validate_cmd import outcome

    rows = [{"engine": "lightgbm", "setting": "a", "passed": True},
            {"engine": "catboost", "setting": "MAP norm=false", "passed": True, "exact": "differs"},
            {"engine": "catboost", "setting": "NDCG", "passed": True, "exact": "agrees"},
            {"engine": "xgboost", "setting": "b", "passed": False},
            {"engine": "xgboost", "setting": "c", "error": "RuntimeError: x", "passed": False}]
    said = outcome(rows)
    assert said.startswith("SOME FAILED: 3 of 5 rows PASS, 1 FAIL, 1 errors.")
    assert "differs from our exact lambdas in MAP norm=false: expected findings" in said and "NDCG" not in said
    assert outcome(rows[:3]).startswith("all passed: 3 of 3 rows PASS")


def test_commands_read_variant_and_foldless_folders(letor_folder, tmp_path, capsys):
    import shutil

    # OHSUMED's layout (variants side by side): engines and validate refused it with no hint
    root = tmp_path / "OHSUMED"
    shutil.copytree(letor_folder, root / "QueryLevelNorm")
    (root / "Feature-null").mkdir()
    out = tmp_path / "eng"
    assert cli(["engines", "--data", str(root), "--folds", "1", "--rounds", "2", "--leaves", "4", "--min-data", "5",
                "--systems", "lightgbm-native", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "using " + str(root / "QueryLevelNorm") in said
    assert (out / "engines.md").read_text().startswith("ΔNDCG (full list) objective on OHSUMED (QueryLevelNorm) (")
    # a folder without folds: validate probes its training file, and says --folds does not apply
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "rank.train").write_text((letor_folder / "Fold1" / "train.txt").read_text())
    assert cli(["validate", "--data", str(flat), "--folds", "1", "--out", str(tmp_path / "v")]) == 2
    assert "has no folds: validate probes its training file(s) rank.train; drop --folds" in capsys.readouterr().err


def test_figure_titles_name_the_data_set_not_the_path(letor_folder, tmp_path):
    import shutil

    from comparisons.engines import figure_title
    from comparisons.paper import resolve_data

    shutil.copytree(letor_folder, tmp_path / "OHSUMED" / "QueryLevelNorm")
    label = resolve_data(tmp_path / "OHSUMED").label
    title = figure_title(label, "ΔNDCG (full list)", 2)
    assert title.startswith("OHSUMED (QueryLevelNorm): ΔNDCG (full list) objective") and str(tmp_path) not in title
    assert "bars: SD over folds" in title and "one fold, no bars" in figure_title(label, "x", 1)


def test_a_fold_is_loaded_and_binned_once_per_process_and_its_trees_do_not_change(monkeypatch):
    from comparisons._data import prepared_fold
    from reference import BinMapper, MARTRanker

    fits = []
    real_fit = BinMapper.fit
    monkeypatch.setattr(BinMapper, "fit", lambda self, X: fits.append(X.shape) or real_fit(self, X))
    tr, va, te, bins = prepared_fold("synthetic:mslr:40:0", "Fold2", None)
    assert prepared_fold("synthetic:mslr:40:0", "Fold2", None)[3] is bins  # the next cell's fold
    kw = dict(objective="lambda", num_leaves=6, n_estimators=3, growth="breadth_first", n_threads=1)
    for criterion in ("ole_exact", "se"):
        own = MARTRanker(criterion=criterion, **kw).fit(tr.X, tr.y, group=tr.group, eval_set=[(va.X, va.y, va.group)])
        shared = MARTRanker(criterion=criterion, **kw).fit(tr.X, tr.y, group=tr.group,
                                                           eval_set=[(va.X, va.y, va.group)], bin_mapper=bins)
        assert shared.bin_mapper_ is bins
        for a, b in zip(own.trees_, shared.trees_):
            assert a[0].tobytes() == b[0].tobytes()
        assert np.array_equal(own.predict(te.X), shared.predict(te.X))
        assert own.history_ == shared.history_
    assert len(fits) == 3  # two rankers learning their own bins, and the fold's bins once
    assert bins.transform(tr.X) is bins.transform(tr.X)  # each matrix binned once


def test_a_bin_mapper_of_another_width_or_max_bin_is_refused():
    from reference import BinMapper, MARTRanker

    X, y = np.random.default_rng(0).normal(size=(30, 3)), np.arange(30) % 3
    with pytest.raises(ValueError, match="max_bin=255"):
        MARTRanker(n_estimators=1).fit(X, y, group=[30], bin_mapper=BinMapper(16))
    with pytest.raises(ValueError, match="fitted on 2 features, X has 3"):
        MARTRanker(n_estimators=1).fit(X, y, group=[30], bin_mapper=BinMapper().fit(X[:, :2]))
