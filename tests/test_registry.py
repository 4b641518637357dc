"""The metric registry: every row is wired through every layer it claims, and names parse one way."""

from pathlib import Path

import _oracles as oracle
import numpy as np
import pytest

from lambda_objectives.objectives import LAMBDA_METRICS
from lambda_objectives.metrics import METRICS
from lambda_objectives import (LightGBMObjective, XGBoostObjective, lambda_gradients, lightgbm_metric, metric_values, xgboost_metric)
from lambda_objectives._registry import REGISTRY, Entry, names, objective_options, parse_metric

ROWS = sorted({row.name: row for row in REGISTRY.values()}.values(), key=lambda r: r.code)
DOCS = Path(__file__).resolve().parents[1] / "docs"


def _query(seed=0, n=9):
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=n), 1)  # rounding makes ties
    y = rng.integers(0, 4, n).astype(float)
    y[:2] = (3.0, 0.0)  # at least two grades
    return s, y, np.array([0, n])


def test_codes_are_unique_and_the_public_tuples_come_from_the_registry():
    assert len({r.code for r in ROWS}) == len(ROWS)
    assert METRICS == names("metric") and LAMBDA_METRICS == names("lambdas")
    for alias, row in REGISTRY.items():
        assert parse_metric(alias)[0] == row.name


@pytest.mark.parametrize("row", [r for r in ROWS if r.metric], ids=lambda r: r.name)
def test_every_metric_row_matches_its_oracle_with_and_without_k(row):
    s, y, ptr = _query(1)
    for spec, k in ((row.name, None), (f"{row.name}@3", 3)):
        got = metric_values(s, y, ptr, spec)[0]
        want = oracle.metric_of_query(list(s), list(y), row.name, k)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert metric_values(s, y, ptr, row.name, k=3)[0] == metric_values(s, y, ptr, f"{row.name}@3")[0]


@pytest.mark.parametrize("row", [r for r in ROWS if r.lambdas], ids=lambda r: r.name)
def test_every_lambda_row_matches_its_oracle_and_takes_name_at_k(row):
    s, y, ptr = _query(2)
    g, h = lambda_gradients(s, y, ptr, f"{row.name}@4")
    go, ho = oracle.lambdas(list(s), list(y), row.name, 4)
    np.testing.assert_allclose(g, go, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, ho, rtol=1e-12, atol=1e-15)
    g2, _ = lambda_gradients(s, y, ptr, row.name, k=4)
    np.testing.assert_array_equal(g, g2)
    # the exact adapters accept the same spelling and give the same gradients (float32)
    ga, _ = LightGBMObjective(f"{row.name}@4").gradients(s, y, ptr)
    np.testing.assert_allclose(ga, g.astype(np.float32), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("row", [r for r in ROWS if r.presets], ids=lambda r: r.name)
def test_every_preset_row_builds_its_engine_objective(row):
    s, y, ptr = _query(3)
    if row.name == "map":
        y = (y > 1).astype(float)
    cls = {"lightgbm": LightGBMObjective, "xgboost": XGBoostObjective}
    for engine in row.presets:
        if engine == "catboost":
            pytest.importorskip("numba")  # the CatBoost kernels need no CatBoost
        yy = (2.0 ** y - 1) / 2.0 ** y.max() if (engine, row.name) == ("catboost", "err") else y
        g, h = cls.get(engine, LightGBMObjective)(row.name, preset=engine).gradients(s, yy, ptr)
        assert np.all(np.isfinite(g)) and np.any(g != 0) and np.all(h >= 0)


@pytest.mark.parametrize("row", [r for r in ROWS if r.metric and r.name != "dcg"], ids=lambda r: r.name)
def test_every_eval_row_is_an_engine_eval_metric(row):
    assert lightgbm_metric(f"{row.name}@5").name == f"lo_{row.name}@5"
    assert xgboost_metric(row.name).name == row.name


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_every_row_is_documented(row):
    math = (DOCS / "math.md").read_text()
    assert f"`{row.name}`" in math, f"docs/math.md has no entry naming `{row.name}`"


def test_names_are_checked_in_one_place():
    with pytest.raises(ValueError, match="unknown metric 'auc'"):
        parse_metric("auc")
    with pytest.raises(ValueError, match="for an objective"):
        lambda_gradients([1.0, 0.0], [1.0, 0.0], [0, 2], "dcg")
    with pytest.raises(ValueError, match="with preset='lightgbm'"):
        LightGBMObjective("err", preset="lightgbm")
    with pytest.raises(ValueError, match="says k=10 but k=5"):
        lambda_gradients([1.0, 0.0], [1.0, 0.0], [0, 2], "ndcg@10", k=5)
    assert XGBoostObjective("pairwise", preset="xgboost").metric == "ranknet"


@pytest.mark.parametrize("row", [r for r in ROWS if r.engine_eval], ids=lambda r: r.name)
def test_engine_eval_names_are_the_engines_own_and_ndcg_matches_ours(row):
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from lambda_objectives import make_ranking, mean_metric

    d = make_ranking(40, docs_per_query=(5, 20), n_features=4, seed=5)
    y = (d.y > 1).astype(float) if row.name == "map" else d.y
    evals = {}
    b = lgb.train({"objective": "lambdarank", "metric": row.engine_eval["lightgbm"], "eval_at": [5], "verbose": -1,
                   "num_threads": 1}, lgb.Dataset(d.X, y, group=d.group), 3,
                  valid_sets=[lgb.Dataset(d.X, y, group=d.group)], callbacks=[lgb.record_evaluation(evals)])
    native = evals["valid_0"][f"{row.engine_eval['lightgbm']}@5"][-1]
    ours = mean_metric(b.predict(d.X), y, d.group_ptr, f"{row.name}@5")
    xres = {}
    xb = xgb.train({"objective": "rank:ndcg", "eval_metric": f"{row.engine_eval['xgboost']}@5", "nthread": 1},
                   xgb.DMatrix(d.X, y, group=d.group), 3, evals=[(xgb.DMatrix(d.X, y, group=d.group), "t")],
                   evals_result=xres, verbose_eval=False)
    xnative = xres["t"][f"{row.engine_eval['xgboost']}@5"][-1]
    xours = mean_metric(xb.predict(xgb.DMatrix(d.X), output_margin=True), y, d.group_ptr, f"{row.name}@5")
    if row.name == "ndcg":  # the same convention (gain 2^l - 1, a query with no relevant document scores 1)
        assert native == pytest.approx(ours, abs=1e-6) and xnative == pytest.approx(xours, abs=1e-5)
    else:  # MAP@k normalisations differ between engines and trec_eval: only the name is checked here
        assert 0 <= native <= 1 and 0 <= xnative <= 1


#: a value other than the default for every option of the objective_options table
_OPTION_VALUES = {"k": 2, "sigma": 2.0, "gain": "linear", "label_gain": [0.0, 1.0, 5.0, 6.0], "max_label": 5.0,
                  "threshold": 1.5, "normalize": "lambdarank", "mu": 3.0, "seed": 7, "permutations": 3,
                  "decay": 0.5, "mode": "ndcg", "objective_seed": 11, "norm": False, "normalization": False,
                  "score_normalization": False, "exp_gain": False, "denominator": "position", "beta": 2.0,
                  "lambda_": 0.5, "ties": "stable", "num_neighbors": 2, "top": 2, "noise": "gauss", "noise_power": 0.3,
                  "pair_method": "mean", "num_pair_per_sample": 2}
_OPTION_VALUES.update({"n_samples": 5, "hessian": "raw"})  # PL-Rank's (hessian= changes only the Hessian)
#: the setting under which an option is read (YetiRank refuses one its mode or noise ignores)
_OPTION_CONTEXT = {"decay": {"mode": "classic"}, "num_neighbors": {"mode": "ndcg"}, "top": {"mode": "ndcg"},
                   "noise_power": {"noise": "gauss"}}


@pytest.mark.parametrize("name, preset, option", [
    (row.name, preset, option) for row in ROWS if row.lambdas or row.listwise or row.sampled
    for preset in (None,) + tuple(row.presets) for option in sorted(objective_options(row.name, preset))
])
def test_every_option_the_table_lists_is_read(name, preset, option):
    """The registry's objective_options says exactly what each back end reads: each listed option
    changes the gradients or, for softmax's lambda_ (a Hessian damping), the Hessians (an unlisted one
    raises at construction, tests/test_adapters.py)."""
    rng = np.random.default_rng(3)
    ptr = np.array([0, 6, 12, 18])
    s, y = rng.normal(size=18), rng.integers(0, 4, 18).astype(float)
    y[[0, 6, 12]], y[[1, 7, 13]] = 3.0, 0.0
    if name == "err" and preset == "catboost":
        y = (2.0 ** y - 1.0) / 8.0  # CatBoost's ERR targets
    if name == "map" and preset == "xgboost":
        y = (y > 1).astype(float)  # rank:map takes binary labels
    value = "exp" if (option, preset) == ("gain", "catboost") else _OPTION_VALUES[option]  # CatBoost's default is linear
    mode = _OPTION_CONTEXT.get(option, {})
    if preset is None and REGISTRY[name].lambdas and option in ("num_pair_per_sample", "seed"):
        mode = {"pair_method": "mean"}  # the sampled pairs' options, read with pair_method="mean"
    base = LightGBMObjective(name, preset=preset, check_hessian=False, **mode)
    other = LightGBMObjective(name, preset=preset, check_hessian=False, **mode, **{option: value})
    (g0, h0), (g1, h1) = base.gradients(s, y, ptr), other.gradients(s, y, ptr)
    assert not (np.array_equal(g0, g1) and np.array_equal(h0, h1))


def test_every_preset_of_a_row_has_its_option_list():
    for row in ROWS:
        assert set(row.presets) == set(row.preset_options), row.name
    with pytest.raises(ValueError, match="must name the same engines"):
        Entry("x", 99, False, False, True, None, presets={"lightgbm": "lambdarank"})
