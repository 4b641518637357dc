"""``python -m comparisons validate --data DIR``: the engines' own gradients vs our preset kernels.

CatBoost (when installed): its LambdaMart derivatives, probed, against our reproduction of them
(``preset="catboost"``, must pass) and against our exact lambdas (agrees/differs, reported); its
PairLogit against our RankNet (must pass); its YetiRank ``der1``, averaged over seeds, against a
Monte-Carlo expectation on the first 3 queries (must lie within 5 standard errors), and against our
YetiRank objective (``yetirank_gradients``) averaged over as many rounds (``yetirank_row``; same rule).

For each fold's training file, the first few queries are probed (one boosting round in which every
document gets its own leaf; see :mod:`lambda_objectives.validation.probe`) at random scores, for every
preset setting, and compared with our kernel at float32 precision (relative 1e-6), on the documents
the probe isolated in a leaf of their own (each row says how many of how many: LightGBM cannot
isolate documents with near-zero Hessians). The probe runs each engine in its own process (LightGBM
and XGBoost slow each other down in one process).
"""

import json
import sys
from pathlib import Path

from ._cli import folds_arg, positive_int
from ._machine import log
from ._progress import Cells, Heartbeat
from ._runner import run_isolated

SETTINGS = [
    ("lightgbm", "lambdarank (defaults)", {}),
    ("lightgbm", "lambdarank truncation 3, sigmoid 2", {"lambdarank_truncation_level": 3, "sigmoid": 2.0}),
    ("lightgbm", "lambdarank, no norm", {"lambdarank_norm": False}),
    ("xgboost", "rank:ndcg", {"objective": "rank:ndcg"}),
    ("xgboost", "rank:ndcg k=5, no score norm", {"objective": "rank:ndcg", "lambdarank_num_pair_per_sample": 5,
                                                "lambdarank_score_normalization": False}),
    ("xgboost", "rank:map", {"objective": "rank:map"}),
    ("xgboost", "rank:pairwise", {"objective": "rank:pairwise"}),
]

def probe(engine, params, path, n_q, seed):
    """One probe (run in a process of its own): the engine's gradients vs our preset's."""
    import numpy as np

    from lambda_objectives import load_letor
    from lambda_objectives.adapters import LightGBMObjective, XGBoostObjective
    from lambda_objectives.validation.probe import (
        compare_gradients,
        probe_lightgbm,
        probe_xgboost,
    )

    d = load_letor(path)
    ptr = d.group_ptr[: n_q + 1]
    y = d.y[: ptr[-1]]
    s = np.random.default_rng(seed).normal(size=y.size)
    if engine == "lightgbm":
        gn, hn = probe_lightgbm(y, ptr, params, scores=s)
        obj = LightGBMObjective(k=params.get("lambdarank_truncation_level"), sigma=params.get("sigmoid", 1.0),
                                preset="lightgbm", norm=params.get("lambdarank_norm", True))
    else:
        metric = params["objective"].split(":")[1]
        if metric == "map":
            y = (y > 0).astype(float)
        gn, hn = probe_xgboost(y, ptr, params, scores=s.astype(np.float32))
        opts = {}
        if "lambdarank_score_normalization" in params:
            opts["score_normalization"] = params["lambdarank_score_normalization"]
        obj = XGBoostObjective(metric, k=params.get("lambdarank_num_pair_per_sample"), preset="xgboost", **opts)
        s = s.astype(np.float32)
    go, ho = obj.gradients(s, y, ptr)
    # documents the probe could not isolate in a leaf of their own come back as NaN: not compared
    return {**compare_gradients(go, ho, gn, hn, rtol=1e-6, atol=1e-8), "n_documents": int(y.size)}


def yetirank_row(path, n_q, seed, yetirank_queries=3):
    """Our YetiRank vs CatBoost's, seed means (``lambda_objectives.catboost.yetirank_catboost_row``), on the
    scores ``catboost_validation_rows`` probes: ``N(0, 1)`` with ``seed`` over the first ``n_q`` queries,
    of which the first ``yetirank_queries`` are used. CatBoost runs ``permutations=1000``: with its default
    10 some documents draw no pair in a run, share a leaf and cannot be read off; the expectation
    compared does not depend on the count."""
    import numpy as np

    from lambda_objectives import load_letor
    from lambda_objectives.catboost import yetirank_catboost_row

    d = load_letor(path)
    ptr = np.asarray(d.group_ptr[: n_q + 1], dtype=np.int64)
    s = np.random.default_rng(seed).normal(size=int(ptr[-1]))
    q = ptr[: yetirank_queries + 1]
    return yetirank_catboost_row(s[: q[-1]], np.asarray(d.y[: q[-1]], dtype=float), q, seed=max(seed, 0))


def _probe(engine, params, path, n_q, seed):
    try:
        return run_isolated(probe, engine, params, str(path), n_q, seed)
    except Exception as exc:  # reported per row; the other probes still run
        return {"error": f"{type(exc).__name__}: {exc}"}


def add_arguments(p):
    from ._data import DATA_HELP

    p.add_argument("--data", required=True, help=DATA_HELP)
    p.add_argument("--queries", type=positive_int, default=6, help="queries probed per file (one leaf per document)")
    p.add_argument("--folds", type=folds_arg, default=None,
                   help="comma list of folds 1..5, e.g. 1,2 (default: every fold present)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random scores probed")
    p.add_argument("--out", default="results/validate", help="output folder")
    return p


def main(argv=None):
    from .__main__ import main as cli

    return cli(["validate", *([] if argv is None else argv)])


#: printed before the rows: what a row compares and what its verdict means
LEGEND = """\
What each row compares: the first {queries} training queries of {what}, at random N(0, 1) scores (seed {seed}).
* LightGBM and XGBoost rows: the engine's own gradients and Hessians, read off one boosting round in which
  every document gets a leaf of its own (lambda_objectives.validation.probe), against our kernel with the engine's
  preset (preset="lightgbm" / "xgboost"). PASS: every document compared agrees within relative 1e-6
  (float32 precision); FAIL: one does not.
* "compared n of N documents": only documents the probe isolated in a leaf of their own can be read off.
  Documents with a zero Hessian (every document of a query whose labels are all equal) or a near-zero one
  share leaves: LightGBM sizes leaves from Hessians, so its rows compare few (e.g. 6 of 187 documents),
  XGBoost's more. Every document compared must agree.
* CatBoost rows (when it is installed): PASS = our reproduction of CatBoost's formulas (preset="catboost")
  equals its probed derivatives. "vs exact lambdas agrees/differs" sets CatBoost beside our exact
  lambdas: "differs" is an expected finding (CatBoost's formulas depart from the exact ones there:
  docs/reproducing/validate.md, "CatBoost's ranking gradients"), not a failure. YetiRank rows: CatBoost's random
  pairs averaged over seeds against their expectation; PASS within 5 standard errors.
"""


def run(a):
    from ._data import resolve_data

    try:
        ds = resolve_data(a.data, a.folds if a.folds else None, a.seed)
        if a.folds and ds.key.startswith("pooled:"):
            raise ValueError(f"{a.data} has no folds: validate probes its training file(s) "
                             f"{', '.join(name for name, _ in ds.train_files)}; drop --folds")
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ds.note:
        log(ds.note)
    what = ("each fold's training file" if not ds.key.startswith("pooled:") else
            "the training file(s) " + ", ".join(name for name, _ in ds.train_files))
    name = Path(a.data).name if ds.key.startswith("pooled:") else ds.label  # nothing is pooled here
    print(f"validate: {name}\n" + LEGEND.format(queries=a.queries, what=what, seed=a.seed), flush=True)
    width = max([6] + [len(fold) for fold, _ in ds.train_files])  # a pooled folder's rows name its file
    log(f"{'fold':{width}s} {'setting':38s} {'result':5s} details")
    rows = []
    cells = Cells("validate", len(ds.train_files) * len(SETTINGS))
    for fold, path in ds.train_files:
        fold = fold.ljust(width)
        for engine, name, params in SETTINGS:
            with Heartbeat(f"{fold.strip()} {name}"):  # a line every 30 s while a probe trains
                r = _probe(engine, params, path, a.queries, a.seed)
            rows.append({"fold": fold.strip(), "engine": engine, "setting": name, **r})
            status = "error: " + r["error"] if "error" in r else ("PASS" if r["passed"] else "FAIL")
            log(f"{fold:6s} {name:38s} {status:5s} max_abs={r.get('max_abs', float('nan')):.3g} "
                f"max_rel={r.get('max_rel', float('nan')):.3g} compared {r.get('n_compared', 0)} of "
                f"{r.get('n_documents', '?')} documents")
            cells.done()  # the row above names the cell
        rows += _catboost_rows(fold, path, a)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "validate.json").write_text(json.dumps(rows, indent=2, default=float))
    print(outcome(rows))
    print(f"written to {out}/validate.json")
    # CatBoost must be *reproduced*; where it differs from the exact lambdas that is a finding, reported
    return 0 if all(r.get("passed", False) and "error" not in r for r in rows) else 1


def outcome(rows):
    """The closing sentence: how many rows passed, failed or broke, and which CatBoost settings differ
    from the exact lambdas (findings, not failures)."""
    errors = sum("error" in r for r in rows)
    passed = sum(bool(r.get("passed")) and "error" not in r for r in rows)
    failed = len(rows) - passed - errors
    differs = sorted({r["setting"] for r in rows if r.get("exact") == "differs"})
    text = (f"{'all passed' if passed == len(rows) else 'SOME FAILED'}: {passed} of {len(rows)} rows PASS, "
            f"{failed} FAIL, {errors} errors.")
    if differs:
        text += (f" CatBoost differs from our exact lambdas in {', '.join(differs)}: expected findings "
                 "(its formulas depart from the exact ones), not failures.")
    return text


def _catboost_rows(fold, path, a):
    """CatBoost's probed LambdaMart derivatives vs our reproduction of them (pass/differs) and vs our
    exact lambdas (agrees/differs, with the figures): ``lambda_objectives.catboost.catboost_validation_rows``."""
    import importlib.util

    if importlib.util.find_spec("catboost") is None:
        log(f"{fold:6s} CatBoost probes skipped: catboost is not installed (pip install 'lambda_objectives[catboost]')")
        return []
    from lambda_objectives.catboost import catboost_validation_rows

    try:
        found = run_isolated(catboost_validation_rows, str(path), a.queries, a.seed)
    except Exception as exc:  # reported, the other engines' rows still stand
        return [{"fold": fold.strip(), "engine": "catboost", "setting": "all", "error": f"{type(exc).__name__}: {exc}"}]
    try:
        found.append(run_isolated(yetirank_row, str(path), a.queries, a.seed))
    except Exception as exc:  # reported, the rows above still stand
        found.append({"setting": "YetiRank ours vs CatBoost (seed means)", "error": f"{type(exc).__name__}: {exc}"})
    rows = []
    for r in found:
        if "error" in r:
            log(f"{fold:6s} catboost {r['setting']:29s} error: {r['error']}")
            rows.append({"fold": fold.strip(), "engine": "catboost", **r, "passed": False})
            continue
        row = {"fold": fold.strip(), "engine": "catboost", **r, "passed": r["reproduced"] == "pass"}
        exact = "" if r["exact"] == "n/a" else (
            f"; vs exact lambdas {r['exact']}: der1 max/median rel {r['exact_der1_max_rel']:.3g}/"
            f"{r['exact_der1_median_rel']:.3g}")
        if "max_abs_z" in r and "n_samples" not in r:  # our YetiRank objective: both sides seed means
            what = (f"our YetiRank, mean of {r['n_seeds']} rounds vs CatBoost's mean of {r['n_seeds']} seeds "
                    f"(× {r['permutations']} permutations each): der1 median rel {r['der1_median_rel']:.2g}, "
                    f"max |z| {r['max_abs_z']:.2f}, share within 2 SE {r['share_within_2se']:.2f}")
        elif "max_abs_z" in r:  # YetiRank: a seed average against a Monte-Carlo expectation
            what = (f"expected value (mean of {r['n_seeds']} seeds × {r['permutations']} permutations vs "
                    f"{r['n_samples']} samples: der1 max/median rel {r['repro_max_rel']:.2g}/{r['der1_median_rel']:.2g}, "
                    f"max |z| {r['max_abs_z']:.2f})")
        else:
            what = f"reproduced (max rel {r['repro_max_rel']:.2g}){exact}"
        log(f"{fold:6s} catboost {r['setting']:29s} {'PASS' if row['passed'] else 'FAIL':4s} {what} "
            f"({r['n_docs']} documents)")
        rows.append(row)
    return rows
