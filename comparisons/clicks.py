"""``python -m comparisons clicks --data DIR [DIR ...]``: what rankers trained on simulated clicks recover.

The standard offline protocol of unbiased learning to rank (Joachims, Swaminathan & Schnabel, WSDM 2017;
Ai et al., SIGIR 2018; the ULTRA toolbox), on any LETOR folder and on the built-in MSLR-shaped set
(``--synthetic N``): per fold and seed, a *logging ranker* (LightGBM ``lambdarank`` on the true labels)
is trained on a small random fraction of the training queries (``--log-fraction``) and ranks the others;
each of those queries is shown ``--sessions`` times, its top ``--top-k`` rows in the logging ranker's order,
and clicks are drawn by :func:`lambda_objectives.simulate_clicks` (one cell per click model: the
position-based model at each ``--etas`` η, and ``--models cascade,dbn``). Rankers are trained on the
shown rows with the clicks as labels, in display order:

* *naive*: each engine's own objective on the clicks (LightGBM ``lambdarank``, XGBoost ``rank:ndcg``);
* the engines' native debiasing: LightGBM ``lambdarank`` with ``Dataset(position=...)`` (an additive
  position bias, since 4.1) and XGBoost ``rank:ndcg`` with ``lambdarank_unbiased=True`` (Unbiased
  LambdaMART, Hu et al., WWW 2019);
* ours, in both engines, each ``bias=`` (``ips`` with the click model's examination probabilities, ``pairwise``,
  ``additive``) for each ``--metrics`` objective, when the installed package has ``bias=``;
* the *skyline*: each engine's objective on the true labels of every row of the same queries (full information).

Every ranker is scored on the fold's test queries against the TRUE labels, per query: NDCG@3/10, ERR@10,
MAP@10, MRR@10 (``--convention``). Statistics (``clicks.md``, ``summary.json``): per test query averaged over
the seeds, the mean over folds, and a paired sign-flip test of each ranker against its engine's naive ranker
over the pooled test queries, Holm-corrected over the table's NDCG@10 comparisons (the primary endpoint; the
other metrics form a second family), with the difference detectable at 80 % power. ``clicks.png`` draws
test NDCG@10 against η (position-based cells), one line per ranker.

``--lightgbm-test`` instead reproduces LightGBM's own test of its position bias on a folder holding its
``rank.train``/``rank.test`` example (``yahoo-sample``): logging ranking by feature 34, cascade clicks
(``preset="lightgbm-test"``) on every row, 50 rounds with the test's parameters, test NDCG@3 of plain
``lambdarank`` against position-aware training (LightGBM's assertion: at least 0.03 better), per seed.

Rounds are fixed (``--rounds``, no early stopping: no validation set has true labels in this protocol), and
one configuration is used for every ranker of an engine. Each (data set, fold) runs in a process of its own;
finished cells are stored and reused.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

from ._cli import convention_arg, csv_arg, dataset_name, folds_arg, grid_args, open_fraction, positive_int
from ._data import DATA_HELP, load_fold, resolve_data
from ._machine import log, machine_record
from ._runner import run_grid
from ._stats import holm_families, power_by_data, sign_flip_pvalue, t_interval
from .runstore import RunStore

METRICS = ("ndcg@3", "ndcg@10", "err@10", "map@10", "mrr@10")
PRIMARY = "ndcg@10"
ENGINES = ("lightgbm", "xgboost")
MODELS = ("pbm", "cascade", "dbn")
BIASES = ("ips", "pairwise", "additive")
#: the click models of the non-position-based cells (the PBM cells: ``ultra-pbm`` at each η)
CELL_OPTIONS = {
    "pbm": {"model": "pbm", "epsilon": 0.1},
    # LightGBM's test's cascade shape (leave with 0.2 after each examined document, clicked or not) with
    # the ε = 0.1 attractiveness of the position-based cells
    "cascade": {"model": "cascade", "epsilon": 0.1, "stop_prob": 0.2, "stop_after_click": 0.0},
    # Chapelle & Zhang's DBN: ε = 0.1 attractiveness, ERR's satisfaction, perseverance 0.9
    "dbn": {"model": "dbn", "epsilon": 0.1, "gamma": 0.9},
}
#: each engine's configuration (the same for every ranker of the engine), and the logging ranker's
LIGHTGBM = {"num_leaves": 31, "learning_rate": 0.05, "min_data_in_leaf": 20, "verbose": -1, "num_threads": 1,
            "deterministic": True, "force_row_wise": True}
XGBOOST = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "eta": 0.05, "nthread": 1}
LOGGING = dict(LIGHTGBM, objective="lambdarank", min_data_in_leaf=5)
LOGGING_ROUNDS = 50
#: LightGBM's own test (tests/python_package_test/test_engine.py, 4.x)
LGB_TEST = {"objective": "lambdarank", "verbose": -1, "eval_at": [3], "metric": "ndcg", "bagging_freq": 1,
            "bagging_fraction": 0.9, "min_data_in_leaf": 50, "min_sum_hessian_in_leaf": 5.0, "num_threads": 1,
            "deterministic": True, "seed": 0}
LGB_TEST_FEATURE = 34  # 1-based, as in the test's libsvm files
LGB_TEST_ROUNDS = 50


# ---------------------------------------------------------------------------------------------
# which rankers run
# ---------------------------------------------------------------------------------------------
def working_biases(wanted=BIASES):
    """The ``bias=`` ways of ``wanted`` that the installed adapters have *and* that change what LightGBM
    trains (three rounds on a toy click log against no bias): a way the constructor accepts but that
    trains the unbiased model is not implemented yet, and is left out with a log line rather than
    reported as debiasing."""
    import inspect

    import lightgbm as lgb

    from lambda_objectives import LightGBMObjective, make_ranking, simulate_clicks

    if "bias" not in inspect.signature(LightGBMObjective).parameters:
        return []
    data = make_ranking(30, docs_per_query=(10, 10), n_features=4, seed=1)
    clicked = simulate_clicks(data.y, data.X[:, 0], data.group_ptr, top_k=10, eta=2.0, seed=1)
    X, y, pos = data.X[clicked.shown], clicked.clicks[clicked.shown], clicked.positions[clicked.shown]

    def fit(obj):
        p = {"objective": obj, "verbose": -1, "min_data_in_leaf": 2, "num_threads": 1, "learning_rate": 0.1}
        return lgb.train(p, lgb.Dataset(X, y, group=np.diff(clicked.shown_ptr), position=pos), 3).predict(X)

    plain = fit(LightGBMObjective("ndcg@10"))
    out = []
    for b in wanted:
        opts = {"bias": b, "propensities": clicked.propensities} if b == "ips" else {"bias": b}
        if b != "additive":
            opts["positions"] = pos
        try:
            same = np.array_equal(fit(LightGBMObjective("ndcg@10", **opts)), plain)
        except (TypeError, ValueError) as exc:
            log(f"bias={b!r} is not usable here ({exc}): left out")
            continue
        if same:
            log(f"bias={b!r} trains the model of no bias in this installation (not implemented yet): left out")
            continue
        out.append(b)
    return out


def rankers(engines, metrics, biases, parity=False):
    """``[(engine, name, spec)]``: per engine its naive ranker (the baseline of the paired tests), its
    native debiasing, ours (``("ours", metric, bias)`` for each working ``bias=``, and the engine's own debiasing
    through our parity preset, ``("ours", "ndcg", bias, preset)``, with ``parity``) and the skyline."""
    out = []
    for e in engines:
        native = "lambdarank" if e == "lightgbm" else "rank:ndcg"
        out.append((e, f"naive {native}", ("naive",)))
        out.append((e, f"native {native} + " + ("position" if e == "lightgbm" else "lambdarank_unbiased"),
                    ("native",)))
        if biases and parity:  # the engine's own debiasing through our objective: its parity preset (same model)
            preset, b = ("lightgbm", "additive") if e == "lightgbm" else ("xgboost", "pairwise")
            out.append((e, f"ours ndcg preset={preset} bias={b}", ("ours", "ndcg", b, preset)))
        for m in metrics:
            out.append((e, f"ours {m} (no bias)", ("ours", m, None)))
            out.extend((e, f"ours {m} bias={b}", ("ours", m, b)) for b in biases)
        out.append((e, f"skyline {native} (true labels)", ("skyline",)))
    return out


def baseline(engine):
    return "naive lambdarank" if engine == "lightgbm" else "naive rank:ndcg"


# ---------------------------------------------------------------------------------------------
# one cell: one (data set, fold, click model, seed), every ranker
# ---------------------------------------------------------------------------------------------
def _lgb_train(params, X, y, ptr, rounds, position=None, objective=None):
    import lightgbm as lgb

    p = dict(params)
    if objective is not None:
        p["objective"] = objective
    ds = lgb.Dataset(X, y, group=np.diff(ptr), position=position, free_raw_data=False)
    return lgb.train(p, ds, rounds)


def click_log(cfg, train):
    """The logging ranker and the click log of one cell: ``(log_predict, clicks)``, where ``clicks`` holds
    the click-training rows (``X``, ``y`` clicks, ``positions``, ``ptr``, ``propensities``) and the true-label
    training set of the same queries (``X_true``, ``y_true``, ``ptr_true``)."""
    from lambda_objectives import simulate_clicks

    rng = np.random.default_rng([cfg["seed"], 45])
    n_log = max(3, int(round(cfg["log_fraction"] * train.n_queries)))
    if n_log >= train.n_queries:
        raise ValueError(f"--log-fraction {cfg['log_fraction']} leaves no training query to click on "
                         f"({train.n_queries} queries)")
    perm = rng.permutation(train.n_queries)
    logged, rest = train.subset(np.sort(perm[:n_log])), train.subset(np.sort(perm[n_log:]))
    logger = _lgb_train(dict(LOGGING, seed=cfg["seed"]), logged.X, logged.y, logged.group_ptr, LOGGING_ROUNDS)
    scores = logger.predict(rest.X)
    sessions, n = cfg["sessions"], rest.y.shape[0]
    sizes = np.diff(rest.group_ptr)
    ptr = np.concatenate([[0], np.cumsum(np.tile(sizes, sessions))])
    options = {o: v for o, v in cfg["click"].items() if o != "name"}
    clicked = simulate_clicks(np.tile(rest.y, sessions), np.tile(scores, sessions), ptr, top_k=cfg["top_k"],
                              seed=cfg["seed"], **options)
    rows = np.tile(np.arange(n), sessions)[clicked.shown]
    pos = clicked.positions[clicked.shown]
    if clicked.propensities is not None:
        prop = np.asarray(clicked.propensities)
    else:  # the cascade models: the examination probability by position, averaged over the log
        prop = np.array([clicked.examination_prob[clicked.shown][pos == r].mean() for r in range(pos.max() + 1)])
    data = {"X": rest.X[rows], "y": clicked.clicks[clicked.shown].astype(np.float64), "positions": pos,
            "ptr": clicked.shown_ptr, "propensities": prop, "X_true": rest.X, "y_true": rest.y,
            "ptr_true": rest.group_ptr, "n_queries": int(rest.n_queries), "n_logged": int(n_log),
            "clicks": int(clicked.clicks.sum()), "shown": int(clicked.shown.shape[0])}
    return logger.predict, data


def train_ranker(engine, spec, d, rounds, seed):
    """A predict function of one ranker trained on the click log ``d`` (:func:`click_log`)."""
    kind = spec[0]
    X, y, ptr = (d["X_true"], d["y_true"], d["ptr_true"]) if kind == "skyline" else (d["X"], d["y"], d["ptr"])
    if engine == "lightgbm":
        if kind == "ours":
            model = _lgb_train(dict(LIGHTGBM, seed=seed), X, y, ptr, rounds, objective=_ours(engine, spec, d),
                               position=d["positions"] if spec[2] is not None else None)
        else:
            model = _lgb_train(dict(LIGHTGBM, seed=seed, objective="lambdarank"), X, y, ptr, rounds,
                               position=d["positions"] if kind == "native" else None)
        return model.predict
    import xgboost as xgb

    dm = xgb.DMatrix(X, y, group=np.diff(ptr))
    p = dict(XGBOOST, seed=seed)
    if kind == "ours":
        obj = _ours(engine, spec, d)
        model = xgb.train(obj.params(**p), dm, rounds, obj=obj)
    else:
        p["objective"] = "rank:ndcg"
        if kind == "native":  # rows are in display order: XGBoost's position is the index inside the query
            p["lambdarank_unbiased"] = True
        model = xgb.train(p, dm, rounds)
    return lambda Z: model.predict(xgb.DMatrix(Z), output_margin=True)


def _ours(engine, spec, d):
    """Our objective for ``spec = ("ours", metric, bias[, preset])`` on the click log ``d``: LightGBM's
    ``bias="additive"`` reads the positions from its ``Dataset(position=...)`` (and its learning rate from
    the training parameters), every other way gets them as ``positions=`` (the rows are in display order, so they equal each row's index in
    its query) and ``bias="additive"`` its ``eta`` as ``learning_rate=``. ``bias="ips"`` takes the click
    model's examination probability per position as ``propensities=``."""
    from lambda_objectives import LightGBMObjective, XGBoostObjective

    _, metric, bias, preset = (*spec, None) if len(spec) == 3 else spec
    cls = LightGBMObjective if engine == "lightgbm" else XGBoostObjective
    if bias is None:
        return cls(metric)
    opts = {"bias": bias, "preset": preset}
    if bias == "ips":
        opts["propensities"] = d["propensities"]
    if engine == "xgboost" or bias != "additive":  # LightGBM's Dataset(position=) serves 'additive' only
        opts["positions"] = d["positions"]
    if engine == "xgboost" and bias == "additive":
        opts["learning_rate"] = XGBOOST["eta"]
    return cls(metric, **opts)


def one_cell(cfg):
    """Every ranker of one (data set, fold, click model, seed): per-query test metrics on the true labels."""
    from lambda_objectives import metric_values_table

    t0 = time.perf_counter()
    train, _, test = load_fold(cfg["data"], cfg["fold"])
    log_predict, d = click_log(cfg, train)
    where = f"{cfg['data_label']} {cfg['fold']} {cfg['click']['name']} seed {cfg['seed']}"
    log(f"  {where}: {d['n_queries']} queries × {cfg['sessions']} sessions clicked on ({d['clicks']} clicks on "
        f"{d['shown']} shown rows), logging ranker from {d['n_logged']} queries")

    def score(predict):
        table = metric_values_table(predict(test.X), test.y, test.group_ptr, METRICS, convention=cfg["convention"])
        return {m: v.tolist() for m, v in table.items()}

    out = {"rankers": {"logging ranker": {"test": score(log_predict), "seconds": 0.0}},
           "n_test_queries": int(test.n_queries), "clicks": d["clicks"], "shown": d["shown"],
           "n_click_queries": d["n_queries"], "n_logged": d["n_logged"]}
    for engine, name, spec in (tuple(r) for r in cfg["rankers"]):
        t = time.perf_counter()
        predict = train_ranker(engine, tuple(spec), d, cfg["rounds"], cfg["seed"])
        res = {"test": score(predict), "seconds": time.perf_counter() - t}
        out["rankers"][f"{engine}: {name}"] = res
        log(f"  {where}: {engine} {name}: test NDCG@10 {np.mean(res['test']['ndcg@10']):.4f} "
            f"({res['seconds']:.1f} s)")
    out["seconds"] = time.perf_counter() - t0
    return out


# ---------------------------------------------------------------------------------------------
# LightGBM's own test of its position bias
# ---------------------------------------------------------------------------------------------
def lgb_test_data(folder):
    """``(train, test)`` of LightGBM's ``examples/lambdarank`` files in ``folder`` (``rank.train``/``rank.test``
    with their ``.query`` files), with equal widths."""
    from lambda_objectives import RankingData, load_letor

    folder = Path(folder)
    missing = [f for f in ("rank.train", "rank.test") if not (folder / f).is_file()]
    if missing:
        raise ValueError(f"--lightgbm-test needs LightGBM's examples/lambdarank files in --data: {folder} has no "
                         f"{', '.join(missing)}")
    tr, te = load_letor(folder / "rank.train"), load_letor(folder / "rank.test")
    width = max(tr.X.shape[1], te.X.shape[1], LGB_TEST_FEATURE)

    def pad(d):
        return RankingData(np.pad(d.X, ((0, 0), (0, width - d.X.shape[1]))), d.y, d.qid, d.group_ptr)

    return pad(tr), pad(te)


def lgb_test_cell(cfg):
    """One seed of LightGBM's test: NDCG@3 on ``rank.test`` after 50 rounds, plain and position-aware
    (LightGBM's own evaluation, and ours, LightGBM convention, which must agree), plus XGBoost's native
    and our debiased objectives where they run."""
    import lightgbm as lgb

    from lambda_objectives import metric_values, simulate_clicks

    tr, te = lgb_test_data(cfg["data"])
    # the test's logging ranking: feature 34 descending, ties in file order (Python's stable sort)
    clicked = simulate_clicks(tr.y, tr.X[:, LGB_TEST_FEATURE - 1], tr.group_ptr, preset="lightgbm-test",
                              seed=cfg["seed"])
    y = clicked.clicks.astype(np.float64)
    out = {"clicks": int(y.sum()), "rankers": {}}
    for name, spec in cfg["rankers"]:
        t = time.perf_counter()
        if spec[0] == "xgboost":
            import xgboost as xgb

            o = clicked.order  # display order: XGBoost's position is the index inside the query
            dm = xgb.DMatrix(tr.X[o], y[o], group=np.diff(tr.group_ptr))
            p = dict(XGBOOST, seed=0, objective="rank:ndcg", lambdarank_unbiased=spec[1] == "unbiased")
            model = xgb.train(p, dm, LGB_TEST_ROUNDS)
            pred = model.predict(xgb.DMatrix(te.X), output_margin=True)
            engine_ndcg = None
        else:
            params = dict(LGB_TEST)
            position = clicked.positions if spec[1] in ("position", "ours-additive") else None
            if spec[1].startswith("ours"):
                from lambda_objectives import LightGBMObjective

                bias = spec[1].split("-", 1)[1] if "-" in spec[1] else None
                params["objective"] = (LightGBMObjective("ndcg", preset="lightgbm") if bias is None
                                       else LightGBMObjective("ndcg", preset="lightgbm", bias=bias))
            dtr = lgb.Dataset(tr.X, y, group=np.diff(tr.group_ptr), position=position)
            dte = lgb.Dataset(te.X, te.y, group=np.diff(te.group_ptr), reference=dtr)
            model = lgb.train(params, dtr, LGB_TEST_ROUNDS, valid_sets=[dte])
            pred = model.predict(te.X)
            engine_ndcg = float(model.best_score["valid_0"]["ndcg@3"])
        ours = float(np.mean(metric_values(pred, te.y, te.group_ptr, "ndcg@3", convention="lightgbm")))
        out["rankers"][name] = {"ndcg@3": ours, "engine_ndcg@3": engine_ndcg, "seconds": time.perf_counter() - t}
        log(f"  LightGBM test seed {cfg['seed']}: {name}: test NDCG@3 {ours:.4f}")
    return out


LGB_TEST_RANKERS = [("lightgbm lambdarank", ("lightgbm", "plain")),
                    ("lightgbm lambdarank + position", ("lightgbm", "position")),
                    ("xgboost rank:ndcg", ("xgboost", "plain")),
                    ("xgboost rank:ndcg + lambdarank_unbiased", ("xgboost", "unbiased"))]
LGB_TEST_OURS = [("ours ndcg (preset lightgbm)", ("lightgbm", "ours")),
                 ("ours ndcg (preset lightgbm) bias=additive", ("lightgbm", "ours-additive"))]


def run_lgb_test(a):
    folder = a.data[0]
    try:
        lgb_test_data(folder)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    named = LGB_TEST_RANKERS + (LGB_TEST_OURS if "additive" in working_biases(("additive",)) else [])
    cells = [{"mode": "lightgbm-test", "data": str(Path(folder).resolve()), "seed": a.seed + i,
              "rankers": [[n, list(s)] for n, s in named]} for i in range(a.seeds)]
    out = Path(a.out)
    store = RunStore(out / "runs", "clicks-lgbtest")
    results = run_grid(cells, lgb_test_cell, store, jobs=a.jobs, scheduler=a.scheduler, force=a.force,
                       desc="lightgbm-test", meta={"machine": machine_record()}, isolate=True,
                       on_result=lambda c, r: log(f"done LightGBM test seed {c['seed']}"))
    summary = summarise_lgb_test(results)
    md = lgb_test_markdown(summary, a, folder)
    print("\n".join(md))
    out.mkdir(parents=True, exist_ok=True)
    (out / "lightgbm_test.md").write_text("\n".join(md) + "\n")
    (out / "lightgbm_test.json").write_text(json.dumps({"summary": summary, "machine": machine_record()},
                                                       indent=2, default=float))
    return 0


def summarise_lgb_test(results):
    """Per ranker: NDCG@3 per seed, its mean and 95 % t interval, and the gap to plain ``lambdarank``
    per seed with the share of seeds where it reaches LightGBM's 0.03."""
    names = list(results[0][1]["rankers"])
    base = np.array([r["rankers"]["lightgbm lambdarank"]["ndcg@3"] for _, r in results])
    out = {}
    for n in names:
        v = np.array([r["rankers"][n]["ndcg@3"] for _, r in results])
        eng = [r["rankers"][n]["engine_ndcg@3"] for _, r in results]
        gap = v - base
        out[n] = {"ndcg@3": v.tolist(), "mean": float(v.mean()), "ci": t_interval(v),
                  "gap": gap.tolist(), "gap_mean": float(gap.mean()), "gap_ci": t_interval(gap),
                  "share_gap_0.03": float(np.mean(gap >= 0.03)),
                  "engine_agrees": all(e is None or abs(e - x) < 1e-9 for e, x in zip(eng, v))}
    return out


def lgb_test_markdown(summary, a, folder):
    seeds = len(next(iter(summary.values()))["ndcg@3"])
    md = [f"# LightGBM's position-bias test, reproduced ({seeds} click seeds)", "",
          f"Command: `python -m comparisons clicks --lightgbm-test --data {folder} --seeds {a.seeds}`. "
          f"{dataset_name(folder)}: rank.train clicked (logging ranking by feature {LGB_TEST_FEATURE} descending, "
          "ties in file order; `simulate_clicks(preset='lightgbm-test')`: every row shown, cascade, p(click | grade "
          "0..4) = 0.4/0.6/0.7/0.8/0.9, leave with 0.2 after each examined row), one click stream per query and "
          f"seed; {LGB_TEST_ROUNDS} rounds with the test's parameters ({LGB_TEST}); test NDCG@3 of rank.test on the "
          "TRUE labels, LightGBM convention (gain 2^y − 1, a query without relevant documents scores 1); LightGBM's "
          "own `ndcg@3` equals ours on every LightGBM row: "
          f"{'yes' if all(v['engine_agrees'] for v in summary.values()) else 'NO'}). "
          "LightGBM's test asserts position-aware ≥ plain + 0.03 (one click draw, Python's `random.seed(10)`).",
          "", "| ranker | NDCG@3 mean [95 % CI] | minus plain lambdarank [95 % CI] | seeds with gap ≥ 0.03 |",
          "|---|---:|---:|---:|"]
    for n, v in summary.items():
        md.append(f"| {n} | {v['mean']:.4f} [{v['ci'][0]:.4f}, {v['ci'][1]:.4f}] | {v['gap_mean']:+.4f} "
                  f"[{v['gap_ci'][0]:+.4f}, {v['gap_ci'][1]:+.4f}] | {100 * v['share_gap_0.03']:.0f} % |")
    return md


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------
def summarise(results, alpha=0.05):
    """Per (data, click cell, ranker): the fold mean of per-query means (each test query averaged over
    seeds), a 95 % t interval, and a paired sign-flip test against the engine's naive ranker over the
    pooled test queries; Holm over the table's NDCG@10 comparisons, and over the other metrics as a
    second family. ``power``: per data set, the median sd of the paired NDCG@10 differences and the
    difference detectable at 80 % power."""
    cells = {}
    for cfg, res in results:
        for ranker, r in res["rankers"].items():
            key = (cfg["data_label"], cfg["click"]["name"], ranker)
            cells.setdefault(key, {}).setdefault(cfg["fold"], []).append(np.array([r["test"][m] for m in METRICS]))
    means = {k: {f: np.mean(v, axis=0) for f, v in folds.items()} for k, folds in cells.items()}
    rows = []
    for (data, click, ranker), folds in sorted(means.items()):
        names = sorted(folds)
        row = {"data": data, "click": click, "ranker": ranker, "folds": len(names),
               "seeds": min(len(cells[(data, click, ranker)][f]) for f in names)}
        for i, m in enumerate(METRICS):
            row[m] = float(np.mean([np.mean(folds[f][i]) for f in names]))
            row[m + " ci"] = t_interval(np.concatenate([folds[f][i] for f in names]))
        engine = ranker.split(":")[0]
        base = means.get((data, click, f"{engine}: {baseline(engine)}")) if engine in ENGINES else None
        if base is not None and ranker != f"{engine}: {baseline(engine)}":
            for i, m in enumerate(METRICS):
                diffs = np.concatenate([folds[f][i] - base[f][i] for f in names])
                row[m + " diff"] = float(diffs.mean())
                row[m + " sd"] = float(diffs.std(ddof=1)) if diffs.size > 1 else float("nan")
                row[m + " n"] = int(diffs.size)
                row[m + " p"] = sign_flip_pvalue(diffs)
        rows.append(row)
    family = holm_families(rows, PRIMARY, METRICS, alpha)
    power = power_by_data(rows, PRIMARY, family, alpha)
    return rows, power


def _click_name(model, eta=None):
    return f"pbm η={eta:g}" if model == "pbm" else model


def _plot(rows, datasets, path):
    """Per data set: test NDCG@10 ×100 against η of the position-based cells, one line per ranker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(7.5 * len(datasets), 5.2), squeeze=False, layout="constrained")
    for ax, label in zip(axes[0], datasets):
        pts = {}
        for r in rows:
            if r["data"] == label and r["click"].startswith("pbm η="):
                pts.setdefault(r["ranker"], []).append((float(r["click"].split("=")[1]), 100 * r[PRIMARY],
                                                        r.get(PRIMARY + " significant") and r[PRIMARY + " diff"]))
        colors = plt.get_cmap("tab20").colors  # more rankers than tab10's ten colours
        for i, (ranker, p) in enumerate(sorted(pts.items())):
            p.sort()
            style = "--" if "skyline" in ranker or "logging" in ranker else "-"
            color = colors[i % len(colors)]
            line, = ax.plot([x for x, _, _ in p], [v for _, v, _ in p], style, marker="o", ms=4, label=ranker,
                            color=color)
            for x, v, sig in p:  # a filled triangle: significantly different from the naive ranker (Holm)
                if sig:
                    ax.plot(x, v, "^" if sig > 0 else "v", color=line.get_color(), ms=9)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("η (position-bias severity: examination (1/rank)^η)")
        ax.set_ylabel("test NDCG@10 ×100 (true labels)")
        ax.set_title(dataset_name(label), fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="lower left")
    fig.suptitle("Rankers trained on simulated clicks (position-based model, top 10 shown): test NDCG@10 on the true "
                 "labels; ▲/▼ = significantly better/worse than the engine's naive ranker (Holm)", fontsize=9)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# command
# ---------------------------------------------------------------------------------------------
def add_arguments(p):
    p.add_argument("--data", nargs="*", default=[], help="data folders, each " + DATA_HELP.replace("a data folder: ", ""))
    p.add_argument("--synthetic", type=positive_int, default=None, metavar="N_QUERIES",
                   help="also the built-in MSLR-WEB10K-shaped synthetic set of N queries, in five folds")
    p.add_argument("--folds", type=folds_arg, default=None, help="comma list of folds 1..5 (default: every fold)")
    p.add_argument("--engines", type=csv_arg(ENGINES), default=list(ENGINES), help="comma list")
    p.add_argument("--models", type=csv_arg(MODELS), default=["pbm"],
                   help="click models: pbm (one cell per --etas), cascade, dbn (comma list)")
    p.add_argument("--etas", type=csv_arg(kind=_eta), default=[0.5, 1.0, 2.0],
                   help="position-bias severities η of the position-based cells (comma list)")
    p.add_argument("--metrics", type=csv_arg(), default=["ndcg@10"],
                   help="our objectives trained with each bias= (comma list of objective names)")
    p.add_argument("--biases", type=csv_arg(BIASES), default=list(BIASES), help="our bias= options (comma list)")
    p.add_argument("--parity", action="store_true",
                   help="also the engines' own debiasing through our parity presets (preset=lightgbm bias=additive, "
                        "preset=xgboost bias=pairwise), which must equal the native rows")
    p.add_argument("--top-k", type=positive_int, default=10, help="positions shown per query")
    p.add_argument("--sessions", type=positive_int, default=4, help="impressions of each clicked query")
    p.add_argument("--log-fraction", type=open_fraction, default=0.05,
                   help="share of the training queries the logging ranker is trained on (at least 3 queries)")
    p.add_argument("--rounds", type=positive_int, default=None, help="boosting rounds (default 100; 30 with --quick)")
    p.add_argument("--seeds", type=positive_int, default=2, help="seeds per fold (click log and training)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--quick", action="store_true",
                   help="a smoke-sized run: Fold1 only, one seed, η = 1, 30 rounds, 300 synthetic queries")
    p.add_argument("--lightgbm-test", action="store_true",
                   help="reproduce LightGBM's own position-bias test on --data (its rank.train/rank.test), "
                        "--seeds click seeds")
    convention_arg(p)
    grid_args(p, "results/clicks")
    return p


def _eta(text):
    v = float(text)
    if not (v >= 0 and np.isfinite(v)):
        raise ValueError(f"η must be a finite number >= 0, got {text!r}")
    return v


def check_args(parser, a, argv):
    if a.lightgbm_test and (len(a.data) != 1 or a.synthetic):
        parser.error("--lightgbm-test takes exactly one --data folder (LightGBM's rank.train/rank.test) and no --synthetic")
    if not a.lightgbm_test and not a.data and not a.synthetic:
        parser.error("give --data DIR [DIR ...] and/or --synthetic N")
    return a


def run(a):
    if a.lightgbm_test:
        return run_lgb_test(a)
    try:
        datasets = []
        for d in a.data:
            ds = resolve_data(d, a.folds, a.seed)
            if ds.note:
                log(ds.note)
            datasets.append((ds.key, ds.label, ds.folds[:1] if a.quick else ds.folds))
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.synthetic:
        n = 300 if a.quick else a.synthetic
        names = [f for f in (["Fold1"] if a.quick else [f"Fold{i}" for i in range(1, 6)]) if not a.folds or f in a.folds]
        datasets.append((f"synthetic:mslr:{n}:{a.seed}", f"synthetic MSLR-shaped, {n} queries", names))
    rounds = a.rounds or (30 if a.quick else 100)
    etas = [1.0] if a.quick else a.etas
    seeds = [a.seed] if a.quick else [a.seed + i for i in range(a.seeds)]
    cells = [dict(CELL_OPTIONS[m], name=_click_name(m, eta), **({"eta": eta} if m == "pbm" else {}))
             for m in a.models for eta in (etas if m == "pbm" else [None])]
    biases = working_biases(a.biases)
    if not biases:
        log("no bias= option of ours works in this installation: the 'ours' rankers are left out")
    chosen = [[e, n, list(s)] for e, n, s in rankers(a.engines, a.metrics if biases else [], biases, a.parity)]
    configs = [{"data": key, "data_label": label, "fold": f, "click": c, "seed": s, "rankers": chosen,
                "rounds": rounds, "top_k": a.top_k, "sessions": a.sessions, "log_fraction": a.log_fraction,
                "convention": a.convention}
               for key, label, folds in datasets for f in folds for c in cells for s in seeds]
    out = Path(a.out)
    store = RunStore(out / "runs", "clicks")
    t0 = time.perf_counter()

    def done(cfg, res):
        best = max((k for k in res["rankers"] if "skyline" not in k),
                   key=lambda k: np.mean(res["rankers"][k]["test"]["ndcg@10"]))
        log(f"done {cfg['data_label']} {cfg['fold']} {cfg['click']['name']} seed {cfg['seed']} "
            f"({res['seconds']:.0f} s): best from clicks {best}")

    results = run_grid(configs, one_cell, store, jobs=a.jobs, scheduler=a.scheduler, force=a.force, desc="clicks",
                       meta={"machine": machine_record()}, on_result=done, isolate=True,
                       batch_by=lambda c: (c["data"], c["fold"]))
    rows, power = summarise(results)
    md = markdown(a, rows, power, datasets, rounds, etas, seeds, time.perf_counter() - t0, len(configs))
    print("\n".join(md))
    out.mkdir(parents=True, exist_ok=True)
    (out / "clicks.md").write_text("\n".join(md) + "\n")
    (out / "summary.json").write_text(json.dumps({"rows": rows, "power": power, "machine": machine_record(),
                                                  "argv": sys.argv[1:]}, indent=2, default=float))
    _plot(rows, [label for _, label, _ in datasets], out / "clicks.png")
    print(f"written to {out}/clicks.md, summary.json, clicks.png")
    return 0


def markdown(a, rows, power, datasets, rounds, etas, seeds, wall, n_cells):
    from lambda_objectives.metrics import convention_label

    md = [f"# Learning from clicks ({'quick' if a.quick else 'full'} run)", "",
          f"Protocol: logging ranker = LightGBM lambdarank ({LOGGING_ROUNDS} rounds) on {100 * a.log_fraction:g} % of "
          f"each fold's training queries (at least 3); the others shown {a.sessions} time(s) each, top {a.top_k} in "
          f"its order; clicks by `simulate_clicks` (pbm: ε = 0.1, examination (1/rank)^η, η ∈ {{{', '.join(f'{e:g}' for e in etas)}}}; "
          "cascade: ε = 0.1 attractiveness, leave with 0.2 after each examined row; dbn: ε = 0.1, ERR's satisfaction, "
          f"γ = 0.9); seeds {seeds}. Rankers: {rounds} rounds, no early stopping; LightGBM {LIGHTGBM}; XGBoost {XGBOOST}.",
          "",
          f"Metrics ×100 on the test queries' TRUE labels: NDCG {convention_label(a.convention)}; ERR@10 R = (2^g − 1)/2^max; "
          "MAP@10 and MRR@10 relevant = label > 0 (a query without relevant documents scores 0 on them). Per test "
          "query averaged over seeds, then the mean over folds.",
          "",
          f"Tests: paired sign-flip randomisation test over the pooled test queries against the engine's naive ranker "
          f"(LightGBM: {baseline('lightgbm')}; XGBoost: {baseline('xgboost')}, each on the clicks as labels); "
          "NDCG@10 is the primary endpoint, Holm-corrected over the table's NDCG@10 comparisons; ▲/▼ = better/worse, "
          "p_Holm < 0.05.",
          "",
          "Power (NDCG@10 points; sd = median over rankers of the per-query sd of the paired difference): " + "; ".join(
              f"{d}: sd {100 * v['sd']:.1f}, {v['n_queries']} test queries, detectable at 80 % power "
              f"{100 * v['mde']:.2f} (one test) / {100 * v['mde_holm']:.2f} (α/{v['family']}, Holm's strictest step)"
              for d, v in power.items()) + ".", ""]
    for _, label, folds in datasets:
        md += [f"## {label} ({len(folds)} fold(s))", "",
               "| click model | ranker | " + " | ".join(m.upper() for m in METRICS) + " | NDCG@10 vs naive (p Holm) |",
               "|---|---|" + "---:|" * (len(METRICS) + 1)]
        for r in (r for r in rows if r["data"] == label):
            cells = []
            for m in METRICS:
                mark = (" ▲" if r[m + " diff"] > 0 else " ▼") if r.get(m + " significant") else ""
                cells.append(f"{100 * r[m]:.2f}{mark}")
            vs = "—" if PRIMARY + " diff" not in r else f"{100 * r[PRIMARY + ' diff']:+.2f} ({r[PRIMARY + ' p_holm']:.3g})"
            md.append(f"| {r['click']} | {r['ranker']} | " + " | ".join(cells) + f" | {vs} |")
        md.append("")
    md.append(f"Wall time: {wall / 60:.1f} min for {n_cells} cells, --jobs {a.jobs} (cells reused from the run store "
              "take no time).")
    return md


def main(argv=None):
    from .__main__ import main as cli

    return cli(["clicks", *([] if argv is None else argv)])
