"""Tests of the comparisons commands demo, engines and validate, and the command dispatcher."""

import importlib.util
import json

import numpy as np

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
                      (["paper", "--data", "x", "--synthetic", "10"], "not allowed with argument")):
        assert cli(bad) == 2
        assert said in capsys.readouterr().err


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
    assert ("| catboost-native |" in md) == cat
    assert (out / "engines.png").stat().st_size > 1000
    assert len((out / "engines.csv").read_text().splitlines()) == 3 + cat


def test_validate_command_small(letor_folder, tmp_path, capsys):
    assert cli(["validate", "--data", str(letor_folder), "--folds", "1", "--queries", "3",
                "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "validate.json").read_text())
    engines = [r for r in rows if r["engine"] != "catboost"]
    assert len(engines) == 7 and all(r["passed"] and r["n_compared"] > 0 for r in engines)
    cat = [r for r in rows if r["engine"] == "catboost"]
    if importlib.util.find_spec("catboost") is not None:
        # every CatBoost setting is reproduced; where it departs from the exact lambdas is reported
        assert len(cat) >= 8 and all(r["passed"] and r["reproduced"] == "pass" for r in cat)
        assert {r["exact"] for r in cat} <= {"agrees", "differs", "n/a"}
        # our YetiRank objective against CatBoost's own, both averaged over seeds
        assert any(r["setting"] == "YetiRank ours vs CatBoost (seed means)" for r in cat)
    else:
        assert cat == []
