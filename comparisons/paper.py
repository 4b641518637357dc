"""``python -m comparisons paper --data DIR``: SE vs OLE, after Xia, Zhai & Wang, "Analysis of
Regression Tree Fitting Algorithms in Learning to Rank" (arXiv 1909.05965, Tables 2/3, Figure 2).

The paper's protocol, by default:

* systems McRank (point-wise multi-class) and LambdaMART (ΔNDCG, full list) on the reference
  trainer, identical gradients for every criterion; leaves {10, 20} × learning rate
  {0.06, 0.10, 0.12}; breadth-first growth with a leaf limit; 1000 LambdaMART and 2500 McRank
  rounds; every fold present;
* criteria: SE and the paper's OLE. For McRank's derivative-additive loss OLE is the Newton
  criterion ``G²/H`` (``criterion="ole"``). For LambdaMART's pairwise loss the paper's OLE uses the
  exact second derivative with respect to each child's value, in which pairs inside one child
  cancel (``criterion="ole_exact"``); the diagonal (Newton, LightGBM-style) criterion is shown as
  a third variant, "OLE-diag";
* test metrics at the predefined final iteration (not a validation-selected one;
  ``--select validation`` is offered, and labelled, as an alternative) and the whole trajectory
  (Figure 2); NDCG@1, NDCG@3, NDCG@10 and full-list ERR, ERR's grade scale fixed to the data
  set's largest grade for training, validation and test; averaged over folds;
* significance (ours, not the paper's): per cell, a 95 % paired confidence interval of
  OLE − SE over the per-query test values pooled across folds (t interval); a cell is marked
  only when OLE − SE > 0.1 point *and* the interval excludes 0.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._cli import convention_arg, csv_arg, dataset_name, folds_arg, int_at_least, positive_float, positive_int
from ._data import DATA_HELP, FOLD_TABLE, load_fold, prepared_fold, resolve_data  # noqa: F401 (load_fold: re-exported)
from ._machine import log, machine_record
from ._progress import Heartbeat
from ._runner import run_grid
from ._stats import mde, paired_ci, t_half_width
from .paper_tables import CITATION, PAPER_TABLES, PAPER_TEXT
from .runstore import RunStore

MEASURES = ("ndcg@1", "ndcg@3", "ndcg@10", "err")
EXTRA = ("err@10",)
SYSTEMS = {"mcrank": "McRank", "lambdamart": "LambdaMART"}
#: The paper's OLE per system, and every criterion a system can run.
PAPER_OLE = {"mcrank": "ole", "lambdamart": "ole_exact"}
SYSTEM_CRITERIA = {"mcrank": ("se", "ole"), "lambdamart": ("se", "ole_exact", "ole")}
CRITERION_NAMES = {("mcrank", "se"): "SE", ("mcrank", "ole"): "OLE",
                   ("lambdamart", "se"): "SE", ("lambdamart", "ole_exact"): "OLE",
                   ("lambdamart", "ole"): "OLE-diag"}


def paper_counts(names=("yahoo", "mslr10k")):
    """Cells where OLE − SE > 0.1 point in the paper's own tables: ``{system: (wins, cells)}``."""
    counts = {}
    for name in names:
        for (system, _, _), cells in PAPER_TABLES[name][1].items():
            w, n = counts.get(SYSTEMS[system], (0, 0))
            # two-decimal figures: compare in hundredths so 0.1 itself is not a win
            w += sum(round(100 * (ole - se)) > 10 for se, ole in cells.values())
            counts[SYSTEMS[system]] = (w, n + len(cells))
    return counts


# ---------------------------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------------------------
#: seconds between two progress lines of one cell's rounds; None: ``COMPARISONS_PROGRESS_SECONDS`` or 30
#: (:func:`comparisons._progress.progress_seconds`)
PROGRESS_SECONDS = None


def _cell_name(cfg):
    return (f"{cfg['fold']} {SYSTEMS[cfg['system']]} {cfg['leaves']} leaves lr {cfg['learning_rate']} "
            f"{CRITERION_NAMES[(cfg['system'], cfg['criterion'])]}")


class _RoundProgress(io.TextIOBase):
    """Stands in for stdout while the reference trainer prints its ``[i] ...`` line per round
    (``verbose=True``): the round reached goes to a :class:`comparisons._progress.Heartbeat` (a line
    on the real stdout every :data:`PROGRESS_SECONDS`, naming the cell and the round); the per-round
    lines themselves are dropped. ``stamps``: when each round ended (tree and history included), for
    ``scale``. A context manager (the heartbeat's)."""

    def __init__(self, name, total):
        self.beat = Heartbeat(name, total=total, every=PROGRESS_SECONDS)
        self.stamps = []

    def __enter__(self):
        self.beat.__enter__()
        return self

    def __exit__(self, *exc):
        return self.beat.__exit__(*exc)

    def write(self, text):
        for line in text.splitlines():
            if not (line.startswith("[") and "]" in line):
                continue
            self.stamps.append(time.perf_counter())
            self.beat.round(int(line[1:line.index("]")]))
        return len(text)


def fit_cell(cfg):
    """``(model, (train, vali, test), metric options, seconds, round end times)``: one configuration
    trained on one fold the way the paper grid trains it (``scale`` times the same call)."""
    from reference import MARTRanker

    # the fold and its bins: loaded and learned by the first cell of this process on the fold, reused after
    tr, va, te, bins = prepared_fold(cfg["data"], cfg["fold"], cfg.get("max_queries"))
    # ERR's grade scale: the data set's largest grade, the same for train, validation and test
    opts = {"max_label": float(max(tr.y.max(), va.y.max(), te.y.max())), "convention": cfg["convention"]}
    objective = "mcrank" if cfg["system"] == "mcrank" else "lambda"
    model = MARTRanker(objective=objective, metric="ndcg", k=cfg["k"], criterion=cfg["criterion"],
                       growth=cfg["growth"], num_leaves=cfg["leaves"], learning_rate=cfg["learning_rate"],
                       n_estimators=cfg["iterations"], random_state=cfg["seed"], n_threads=cfg["threads"])
    t = time.perf_counter()
    with _RoundProgress(_cell_name(cfg), cfg["iterations"]) as progress, contextlib.redirect_stdout(progress):
        model.fit(tr.X, tr.y, group=tr.group, eval_set=[(va.X, va.y, va.group), (te.X, te.y, te.group)],
                  history_metrics=MEASURES + EXTRA, history_options=opts, verbose=True, bin_mapper=bins,
                  history_loss="train")  # the grid reads the training loss; an eval set's would cost a gradient call
    return model, (tr, va, te), opts, time.perf_counter() - t, progress.stamps


def one_run(cfg):
    """Train one configuration on one fold; a JSON-serialisable result with per-query test values."""
    from lambda_objectives import metric_values_table

    model, (tr, va, te), opts, seconds, _ = fit_cell(cfg)
    measures = MEASURES + EXTRA
    vali, test = model.history_["valid_0"], model.history_["valid_1"]
    best = int(np.argmax(vali["ndcg@10"])) + 1

    def per_query(n_iter):
        s = model.predict(te.X, n_iterations=n_iter)
        return {m: v.tolist() for m, v in metric_values_table(s, te.y, te.group_ptr, measures, **opts).items()}

    # a round's tree time, without the first round (it loads or compiles the kernels) and the metrics
    rounds = model.fit_seconds_[1:] or model.fit_seconds_
    return {"best_iteration": best, "seconds": seconds, "n_test_queries": int(te.n_queries),
            "tree_seconds": float(np.sum(rounds)), "round_seconds": float(np.median(rounds)),
            "test_final": {m: test[m][-1] for m in measures},
            "test_at_best": {m: test[m][best - 1] for m in measures},
            "test_history": {m: test[m] for m in measures},
            "per_query_final": per_query(None), "per_query_best": per_query(best),
            "final_train_loss": model.history_["train"]["loss"][-1], "max_label": opts["max_label"]}


def build_grid(args, folds):
    grid = []
    for fold in folds:
        for system in args.systems:
            iters = args.iterations or (args.mcrank_iterations if system == "mcrank" else args.lambdamart_iterations)
            for leaves in args.leaves:
                for lr in args.rates:
                    for crit in args.criteria:
                        if crit not in SYSTEM_CRITERIA[system]:
                            continue  # ole_exact is defined for the pairwise loss only
                        grid.append({"fold": fold, "system": system, "leaves": leaves, "learning_rate": lr,
                                     "criterion": crit, "growth": args.growth, "iterations": iters, "k": args.k,
                                     "seed": args.seed, "threads": args.threads, "max_queries": args.max_queries,
                                     "convention": args.convention, "data": args.data_key})
    return grid


# ---------------------------------------------------------------------------------------------
# statistics and report
# ---------------------------------------------------------------------------------------------
def mark(diff_points, lo_points, hi_points):
    """``**`` when OLE leads by > 0.1 point and its CI excludes 0; ``vv`` for SE likewise."""
    if diff_points > 0.1 and lo_points > 0:
        return "**"
    if diff_points < -0.1 and hi_points < 0:
        return "vv"
    return ""


def aggregate(results, select):
    """Per cell ``(system, leaves, lr, criterion)``: fold means, per-query values, history."""
    key_final = "final" if select == "final" else "best"
    cells = {}
    for cfg, res in results:
        cells.setdefault((cfg["system"], cfg["leaves"], cfg["learning_rate"], cfg["criterion"]), []).append((cfg, res))
    out = {}
    for key, runs in cells.items():
        runs.sort(key=lambda r: r[0]["fold"])
        n_it = min(len(r["test_history"]["ndcg@10"]) for _, r in runs)
        out[key] = {
            "folds": [c["fold"] for c, _ in runs],
            "metrics": {m: float(np.mean([r["test_" + ("final" if select == "final" else "at_best")][m] for _, r in runs]))
                        for m in MEASURES + EXTRA},
            "per_query": {m: np.concatenate([r["per_query_" + key_final][m] for _, r in runs]) for m in MEASURES + EXTRA},
            "fold_history": {m: np.array([r["test_history"][m][:n_it] for _, r in runs]) for m in MEASURES},
            "loss": float(np.mean([r["final_train_loss"] for _, r in runs])),
            "seconds": float(np.mean([r["seconds"] for _, r in runs])),
            "round_seconds": float(np.mean([r["round_seconds"] for _, r in runs])),
            "tree_seconds": float(np.mean([r["tree_seconds"] for _, r in runs])),
            "best_iterations": [r["best_iteration"] for _, r in runs],
        }
    return out


#: the OLE − SE effects the paper reports on NDCG@10 (points): a grid that cannot detect the largest
#: of them at 80 % power is a smoke test, not a result
PAPER_EFFECT = (0.3, 0.5)
#: below this time spent on SE's trees per cell (seconds, first round excluded) an OLE/SE time ratio is
#: timing noise, not a cost: it is reported flagged as no measurement
MIN_TIMED_SECONDS = 10.0
#: what each criterion is, per system, in the words of the tables
CRITERION_TEXT = {("mcrank", "se"): "SE", ("mcrank", "ole"): "OLE (the paper's: Newton G²/H)",
                  ("lambdamart", "se"): "SE",
                  ("lambdamart", "ole_exact"): "OLE (the paper's: exact second derivatives)",
                  ("lambdamart", "ole"): "OLE-diag (Newton, diagonal; NOT the paper's OLE)"}


def compared_ole(system, criteria):
    """The criterion ``system``'s OLE − SE statistics use: the paper's OLE when it ran, else the
    other OLE that ran (LambdaMART's OLE-diag), named as such wherever it is reported."""
    if PAPER_OLE[system] in criteria:
        return PAPER_OLE[system]
    return next(c for c in SYSTEM_CRITERIA[system] if c != "se" and c in criteria)


def verdict(counts, power):
    """One sentence on what the grid shows: its significant cells against chance, and whether it
    could detect the paper's effects (:data:`PAPER_EFFECT`) at all."""
    n = sum(c["cells"] for c in counts.values())
    if not n:
        return "Verdict: nothing to compare: no cell ran both SE and an OLE."
    detectable = min((v["detectable_points"] for v in power.values()), default=float("nan"))
    small = not np.isfinite(detectable) or detectable > PAPER_EFFECT[1]
    size = (f"it detects NDCG@10 differences of {detectable:.2f} points or more at 80 % power (two-sided α = 0.05)"
            if np.isfinite(detectable) else "its power cannot be estimated")
    sig = sum(c["ole_significant"] + c["se_significant"] for c in counts.values())
    if sig == 0:
        text = f"no cell is significant either way ({n} cell × measure comparisons)"
    else:
        text = "significant cells: " + "; ".join(
            f"{s}: {c['name']} ahead in {c['ole_significant']}, SE in {c['se_significant']} of {c['cells']}"
            for s, c in counts.items()) + f" (about {0.05 * n:.1f} of {n} are expected by chance at the 5 % level)"
    if small:
        text += (f": this grid is a smoke test, not a result: {size}, the paper's effects are "
                 f"{PAPER_EFFECT[0]}–{PAPER_EFFECT[1]} points")
    else:
        text += f"; {size}"
    return "Verdict: " + text + "."


def report(agg, args, out):
    """Write table.md / table.csv / figure2.png / summary.json; return the summary.

    Every table names the criteria of its cells (LambdaMART's OLE-diag is never shown as the paper's
    OLE); an analysis without data is a sentence, never an empty table or figure."""
    from lambda_objectives.metrics import convention_label

    protocol = ("test metrics at the final iteration (the paper's protocol)" if args.select == "final" else
                "test metrics at the iteration with the best validation NDCG@10 (NOT the paper's protocol)")
    rows = ["| system | leaves | lr | criteria | " + " | ".join(m.upper() for m in MEASURES + EXTRA) + " |",
            "|---|---:|---:|---|" + "---|" * len(MEASURES + EXTRA)]
    diff_rows = ["| system | leaves | lr | difference | " + " | ".join(f"{m.upper()} [95% CI]" for m in MEASURES) + " |",
                 "|---|---:|---:|---|" + "---|" * len(MEASURES)]
    csv = ["system,leaves,learning_rate,criterion," + ",".join(MEASURES + EXTRA)]
    counts, loss_diffs, overheads, diag_rows, power_sd = {}, [], {}, [], {}
    for system in args.systems:
        crits = [c for c in SYSTEM_CRITERIA[system] if c in args.criteria]
        ole = compared_ole(system, args.criteria)
        name = CRITERION_NAMES[(system, ole)]
        for leaves in args.leaves:
            for lr in args.rates:
                got = {c: agg.get((system, leaves, lr, c)) for c in crits}
                ran = [c for c in crits if got[c] is not None]
                if not ran:
                    continue
                for c in ran:
                    csv.append(f"{system},{leaves},{lr},{CRITERION_NAMES[(system, c)]}," +
                               ",".join(f"{got[c]['metrics'][m]:.6f}" for m in MEASURES + EXTRA))
                paired = got.get("se") is not None and got.get(ole) is not None
                cols, dcols = [], []
                for m in MEASURES + EXTRA:
                    cell = " / ".join(f"{100 * got[c]['metrics'][m]:.2f}" for c in ran)
                    if paired and m in MEASURES:
                        diffs = 100 * (got[ole]["per_query"][m] - got["se"]["per_query"][m])
                        d = 100 * (got[ole]["metrics"][m] - got["se"]["metrics"][m])
                        _, lo, hi = paired_ci(diffs)
                        flag = mark(d, lo, hi)
                        cell += f" {flag}" if flag else ""
                        dcols.append(f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}]{' ' + flag if flag else ''}")
                        if m == "ndcg@10":
                            power_sd.setdefault(SYSTEMS[system], []).append((float(np.std(diffs / 100, ddof=1)),
                                                                              diffs.size))
                        c = counts.setdefault(SYSTEMS[system], {"name": name, "cells": 0, "ole_by_0.1": 0,
                                                                 "ole_significant": 0, "se_significant": 0})
                        c["cells"] += 1
                        c["ole_by_0.1"] += d > 0.1
                        c["ole_significant"] += flag == "**"
                        c["se_significant"] += flag == "vv"
                    cols.append(cell)
                label = " / ".join(CRITERION_NAMES[(system, c)] for c in ran)
                rows.append(f"| {SYSTEMS[system]} | {leaves} | {lr:.2f} | {label} | " + " | ".join(cols) + " |")
                if dcols:
                    diff_rows.append(f"| {SYSTEMS[system]} | {leaves} | {lr:.2f} | {name} − SE | "
                                     + " | ".join(dcols) + " |")
                if paired:
                    if got["se"]["loss"] > 0:
                        loss_diffs.append((got["se"]["loss"] - got[ole]["loss"]) / got["se"]["loss"])
                    overheads.setdefault(SYSTEMS[system], []).append(
                        (got[ole]["round_seconds"] / got["se"]["round_seconds"] - 1, got["se"]["tree_seconds"]))
                if system == "lambdamart" and got.get("ole") is not None and got.get("ole_exact") is not None:
                    diag_rows.append(100 * (got["ole_exact"]["metrics"]["ndcg@10"] - got["ole"]["metrics"]["ndcg@10"]))
    folds = sorted({f for v in agg.values() for f in v["folds"]})
    conv = convention_label(args.convention)
    n_queries = {s: int(next(v["per_query"]["ndcg@10"].size for k, v in agg.items() if k[0] == s))
                 for s in args.systems if any(k[0] == s for k in agg)}
    power = {}
    for sysname, pairs in power_sd.items():
        sd, n = float(np.median([p[0] for p in pairs])), int(max(p[1] for p in pairs))
        power[sysname] = {"difference": f"{counts[sysname]['name']} − SE", "sd_points": 100 * sd, "test_queries": n,
                          "detectable_points": 100 * mde(sd, n)}
    power_line = ("Power: the NDCG@10 difference detectable at 80 % power (two-sided α = 0.05, normal "
                  "approximation, from the median per-query sd of the paired difference over the cells): " +
                  "; ".join(f"{k} ({v['difference']}) {v['detectable_points']:.2f} points (sd {v['sd_points']:.1f}, "
                            f"{v['test_queries']} pooled test queries)" for k, v in power.items()) + "."
                  if power else "Power: not estimated (no cell ran both SE and an OLE).")
    timing = {}
    for sysname, pairs in overheads.items():
        se_seconds = float(np.mean([p[1] for p in pairs]))
        timing[sysname] = {"criterion": counts[sysname]["name"], "per_round_pct_mean": 100 * float(np.mean([p[0] for p in pairs])),
                           "se_tree_seconds_mean": se_seconds, "reliable": se_seconds >= MIN_TIMED_SECONDS}
    said = verdict(counts, power)
    summary = {
        "verdict": said,
        "data": str(args.data_label), "data_folder": args.data, "folds": folds, "power_ndcg10": power,
        "criteria": args.criteria, "protocol": protocol,
        "compared": {SYSTEMS[s]: f"{CRITERION_NAMES[(s, compared_ole(s, args.criteria))]} − SE" for s in args.systems},
        "convention": conv, "err": "full-list ERR (and ERR@10), R = (2^g − 1)/2^max_grade, max_grade of the data set",
        "significance": "95% paired t interval of per-query OLE − SE pooled over folds; ** (OLE) / vv (SE) when "
                        "|OLE − SE| > 0.1 point and the interval excludes 0",
        "test_queries_pooled": n_queries,
        "cells": {s: {k: f"{v}/{c['cells']}" if k not in ("cells", "name") else v for k, v in c.items()}
                  for s, c in counts.items()},
        "final_train_loss_ole_lower_by_pct_mean": 100 * float(np.mean(loss_diffs)) if loss_diffs else None,
        "ole_wall_time_overhead": timing,
        "lambdamart_ole_minus_ole_diag_ndcg10_points_mean": float(np.mean(diag_rows)) if diag_rows else None,
        "paper_tables_counts_ole_by_0.1": {s: f"{w}/{n}" for s, (w, n) in paper_counts().items()},
        "paper_mslr10k_counts_ole_by_0.1": {s: f"{w}/{n}" for s, (w, n) in paper_counts(("mslr10k",)).items()},
        "paper_text": PAPER_TEXT,
        "paper": CITATION,
        "lambdas": _lambdas(args.k),
    }
    ran = "; ".join(f"{SYSTEMS[s]}: " + " / ".join(CRITERION_TEXT[(s, c)] for c in SYSTEM_CRITERIA[s] if c in args.criteria)
                    for s in args.systems)
    marks = "; ".join(f"{SYSTEMS[s]}: {CRITERION_NAMES[(s, compared_ole(s, args.criteria))]} − SE" for s in args.systems)
    md = [f"# SE vs OLE on {args.data_label}", "", said, "",
          f"{protocol}; mean of {len(folds)} fold(s) ({', '.join(folds)}); ×100. NDCG: {conv}. ERR: full list "
          f"(ERR@10 as an extra column), grade scale fixed to the data set's largest grade. LambdaMART: "
          f"{_lambdas(args.k)}. Criteria run, in each cell's order: {ran}. Marks ({marks}): `**` the OLE "
          "leads by > 0.1 point and its 95% paired CI over pooled test queries excludes 0; `vv`: the same for SE.",
          "", power_line, "", *rows, ""]
    if len(diff_rows) > 2:
        md += ["## OLE − SE with 95% paired confidence intervals (points)", "", *diff_rows, ""]
    else:
        md += ["No OLE − SE differences: no cell ran both SE and an OLE (see the criteria above).", ""]
    if args.paper_table:
        md += _beside(agg, args)
    md += ["## Summary", "", *_summary_lines(summary, counts), ""]
    try:
        drawn, fig_error = _figure(agg, args, out / "figure2.png"), None
    except OSError as exc:  # a read-only --out: the table is still printed below, then the error is raised
        drawn, fig_error = f"not written ({exc.strerror or exc})", exc
    md += [f"Figure 2 (`figure2.png`): {drawn}", "",
           "Everything above, with the paper's own counts and figures, is in `summary.json`.", ""]
    summary["figure2"] = drawn
    print("\n".join(md))  # before any file is written: a read-only --out still shows the table
    if fig_error is not None:
        raise fig_error
    (out / "table.md").write_text("\n".join(md))
    (out / "table.csv").write_text("\n".join(csv) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _summary_lines(summary, counts):
    """The summary in words (``summary.json`` holds the same, and the paper's figures)."""
    paper = summary["paper_tables_counts_ole_by_0.1"]
    lines = []
    for s, c in counts.items():
        lines.append(f"* {s}, {c['name']} − SE: ahead by > 0.1 point in {c['ole_by_0.1']}/{c['cells']} cell × measure "
                     f"comparisons (the paper's OLE, Tables 2–3: {paper.get(s, '–')}); significant: "
                     f"{c['ole_significant']}/{c['cells']} for the OLE, {c['se_significant']}/{c['cells']} for SE.")
    if summary["lambdamart_ole_minus_ole_diag_ndcg10_points_mean"] is not None:
        lines.append(f"* LambdaMART OLE − OLE-diag on NDCG@10: {summary['lambdamart_ole_minus_ole_diag_ndcg10_points_mean']:+.2f} "
                     "point on average over the configurations.")
    if summary["final_train_loss_ole_lower_by_pct_mean"] is not None:
        pct = summary["final_train_loss_ole_lower_by_pct_mean"]
        # "-4.5 % lower" reads as a double negative: say which way it went
        lines.append(f"* Training loss at the final iteration: {abs(pct):.1f} % {'lower' if pct >= 0 else 'HIGHER'} "
                     "with the OLE on average (the paper: 0.32–1 % lower).")
    for s, t in summary["ole_wall_time_overhead"].items():
        how = (f"{t['per_round_pct_mean']:+.0f} % (SE cells: {t['se_tree_seconds_mean']:.0f} s of trees on average)"
               if t["reliable"] else
               f"{t['per_round_pct_mean']:+.0f} %, NOT a measurement: SE cells build their trees in "
               f"{t['se_tree_seconds_mean']:.1f} s, below {MIN_TIMED_SECONDS:.0f} s, where timing noise decides the ratio")
        lines.append(f"* Tree time per round (median over rounds, the first excluded), {s} {t['criterion']} over SE: "
                     f"{how}" + (" (the paper: about 30 % for its pairwise objective)." if s == "LambdaMART" else "."))
    return lines


def _lambdas(k):
    return "full-list ΔNDCG lambdas" if k is None else f"ΔNDCG@{k} lambdas (--k {k})"


def _beside(agg, args):
    """The paper's cells beside ours, for the cells run with SE and the paper's OLE; the others are
    counted in one line, not printed as rows of "not run"."""
    title, cells = PAPER_TABLES[args.paper_table]
    run, missing = [], {}
    for (system, leaves, lr), paper in cells.items():
        se, ole = agg.get((system, leaves, lr, "se")), agg.get((system, leaves, lr, PAPER_OLE[system]))
        if se and ole:
            run.append((system, leaves, lr, paper, se, ole))
        else:
            missing[SYSTEMS[system]] = missing.get(SYSTEMS[system], 0) + 1
    md = [f"## Beside the paper's {title}", "", f"{CITATION}.", ""]
    if run:
        md += ["Ours and the paper's, ×100, \"SE / OLE\" (the paper's OLE; our OLE-diag is not in the paper).", "",
               "| system | leaves | lr | " + " | ".join(f"{m.upper()} ours | {m.upper()} paper" for m in MEASURES) + " |",
               "|---|---:|---:|" + "---|---|" * len(MEASURES)]
        for system, leaves, lr, paper, se, ole in run:
            cols = [f"{100 * se['metrics'][m]:.2f} / {100 * ole['metrics'][m]:.2f} | {paper[m][0]:.2f} / {paper[m][1]:.2f}"
                    for m in MEASURES]
            md.append(f"| {SYSTEMS[system]} | {leaves} | {lr:.2f} | " + " | ".join(cols) + " |")
        md.append("")
    if missing:
        why = [f"{s} not in --systems" if k not in args.systems else
               f"{s}'s {CRITERION_NAMES[(k, PAPER_OLE[k])]} ({PAPER_OLE[k]}) not in --criteria"
               for k, s in SYSTEMS.items() if s in missing
               and (k not in args.systems or PAPER_OLE[k] not in args.criteria)]
        md += [f"Not run here: {sum(missing.values())} of the paper's {len(cells)} cells ("
               + ", ".join(f"{s} {n}" for s, n in missing.items()) + ")"
               + (f"; {'; '.join(why)}" if why else "") + ".", ""]
    return md


def figure_lines(agg, args):
    """What Figure 2 draws: ``{(system, measure): [(lr, iterations, mean, half-width or None)]}``, the
    OLE − SE test-set difference (points ×100) over iterations at the first ``--leaves`` value, the
    OLE being :func:`compared_ole`'s; a band half-width (95 % t over folds) only with two folds or more."""
    lines = {}
    leaves = args.leaves[0]
    for system in args.systems:
        ole = compared_ole(system, args.criteria)
        for lr in args.rates:
            se, other = agg.get((system, leaves, lr, "se")), agg.get((system, leaves, lr, ole))
            if se is None or other is None:
                continue
            for m in MEASURES:
                n = min(se["fold_history"][m].shape[1], other["fold_history"][m].shape[1])
                k = min(se["fold_history"][m].shape[0], other["fold_history"][m].shape[0])
                d = 100 * (other["fold_history"][m][:k, :n] - se["fold_history"][m][:k, :n])
                half = t_half_width(d.std(axis=0, ddof=1), k) if k > 1 else None
                lines.setdefault((system, m), []).append((lr, np.arange(1, n + 1), d.mean(axis=0), half))
    return lines


def _figure(agg, args, path):
    """Draw Figure 2 into ``path`` and return its caption; with nothing to draw, write no figure
    (and remove one left by an earlier run) and say why."""
    lines = figure_lines(agg, args)
    if not lines:
        Path(path).unlink(missing_ok=True)
        return "not drawn: no configuration at the first --leaves value ran both SE and an OLE."
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = [s for s in args.systems if any((s, m) in lines for m in MEASURES)]
    fig, axes = plt.subplots(len(systems), len(MEASURES), figsize=(4 * len(MEASURES), 3.2 * len(systems)),
                             squeeze=False)
    leaves = args.leaves[0]
    for r, system in enumerate(systems):
        name = CRITERION_NAMES[(system, compared_ole(system, args.criteria))]
        for c, m in enumerate(MEASURES):
            ax = axes[r][c]
            top = 1.0
            for lr, x, mean, half in lines.get((system, m), []):
                line, = ax.plot(x, mean, label=f"lr {lr:.2f}")
                if half is not None:
                    ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.15, lw=0)
                    top = max(top, float(np.nanmax(np.abs(mean) + half)))
                else:
                    top = max(top, float(np.nanmax(np.abs(mean))))
            ax.axhline(0, color="grey", lw=0.6)
            # symmetric, at least ±1 point: small differences are not blown up to fill the panel
            ax.set_ylim(-1.05 * top, 1.05 * top)
            ax.set_title(f"{SYSTEMS[system]}, {leaves} leaves: {m.upper()}", fontsize=9)
            ax.set_xlabel("iteration")
            ax.set_ylabel(f"{name} − SE (points ×100)")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    n_folds = len({f for v in agg.values() for f in v["folds"]})
    band = f"bands: 95% t interval over {n_folds} folds" if n_folds > 1 else "one fold: no band over folds"
    drawn = ", ".join(f"{SYSTEMS[s]} {CRITERION_NAMES[(s, compared_ole(s, args.criteria))]} − SE" for s in systems)
    fig.suptitle(f"Figure 2 after Xia, Zhai & Wang: {drawn} on the test set over iterations, {args.data_label}; "
                 + band, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return (f"{drawn} over iterations, {leaves} leaves, one line per learning rate; " + band
            + ("" if n_folds > 1 else " (run two folds or more for one)") + ".")


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def add_arguments(p):
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", help=DATA_HELP)
    src.add_argument("--synthetic", type=int_at_least(5), metavar="N_QUERIES",
                     help="an MSLR-WEB10K-shaped synthetic set of N >= 5 queries (make_mslr_like), split into "
                          "five partitions with the LETOR fold table")
    p.add_argument("--out", default="results/paper", help="output folder (the run store lives in OUT/runs)")
    p.add_argument("--criteria", default="se,ole,ole_exact",
                   help="comma list of se, ole, ole_exact; each system runs the ones defined for it "
                        "(McRank: se, ole; LambdaMART: se, ole_exact = the paper's OLE, ole = OLE-diag)")
    p.add_argument("--systems", default="mcrank,lambdamart", help="comma list of mcrank, lambdamart")
    p.add_argument("--leaves", type=csv_arg(kind=int_at_least(2)), default=[10, 20],
                   help="comma list of leaf limits (each >= 2)")
    p.add_argument("--rates", type=csv_arg(kind=positive_float), default=[0.06, 0.10, 0.12],
                   help="comma list of learning rates")
    p.add_argument("--growth", default="breadth_first", choices=("breadth_first", "best_first", "depth_first"),
                   help="tree growth with a leaf limit (the paper's: breadth-first)")
    p.add_argument("--iterations", type=positive_int, default=None, help="rounds for every system (overrides both below)")
    p.add_argument("--lambdamart-iterations", type=positive_int, default=1000, help="LambdaMART rounds (the paper's)")
    p.add_argument("--mcrank-iterations", type=positive_int, default=2500, help="McRank rounds (the paper's)")
    p.add_argument("--k", type=positive_int, default=None,
                   help="truncate LambdaMART's ΔNDCG lambdas at rank k (default: the full list; the paper states "
                        "no truncation; the MQ2008 table in docs/reproducing/paper.md was measured with --k 10)")
    p.add_argument("--select", default="final", choices=("final", "validation"),
                   help="final: test metrics at the last iteration (the paper's protocol); validation: at the best "
                        "validation NDCG@10 iteration (not the paper's protocol)")
    convention_arg(p)
    p.add_argument("--paper-table", choices=tuple(PAPER_TABLES), default=None,
                   help="print the paper's cells for this data set beside ours")
    p.add_argument("--folds", type=folds_arg, default=None,
                   help="comma list of folds 1..5, e.g. 1,2 (default: every fold present)")
    p.add_argument("--jobs", type=positive_int, default=1, help="local processes")
    p.add_argument("--scheduler", default=None, help="a Dask scheduler address (tcp://host:8786); the --out folder "
                   "must be on a file system this process can write (results travel back from the workers)")
    p.add_argument("--force", action="store_true", help="recompute cells already in the run store")
    p.add_argument("--threads", type=positive_int, default=1, help="numba threads per run")
    p.add_argument("--seed", type=int, default=0, help="seed of the trainer (and of the synthetic set)")
    p.add_argument("--max-queries", type=positive_int, default=None, help="use the first N training queries of each fold")
    p.add_argument("--quick", action="store_true",
                   help="a smoke-sized grid: one fold (the first), the first --leaves value, lr 0.1 unless --rates is given, "
                        "40 rounds unless --iterations is given, 150 training queries unless --max-queries is given")
    return p


def check_args(p, a, argv):
    """Cross-option checks and derived values after parsing (called by the command dispatcher)."""
    a.criteria = [c.strip() for c in a.criteria.split(",") if c.strip()]
    bad = [c for c in a.criteria if c not in ("se", "ole", "ole_exact")]
    if bad or "se" not in a.criteria or not ({"ole", "ole_exact"} & set(a.criteria)):
        p.error("--criteria must include se and at least one of ole, ole_exact")
    a.systems = [s.strip() for s in a.systems.split(",") if s.strip()]
    if not a.systems or any(s not in SYSTEMS for s in a.systems):
        p.error(f"--systems takes a comma list of {', '.join(SYSTEMS)}")
    for system in a.systems:
        if not set(SYSTEM_CRITERIA[system]) - {"se"} & set(a.criteria):
            p.error(f"--criteria {','.join(a.criteria)} holds no OLE defined for {system} "
                    f"(it runs {', '.join(SYSTEM_CRITERIA[system])})")
    given = set(argv or [])
    if a.quick:
        a.leaves = a.leaves[:1]
        if "--rates" not in given:
            a.rates = [0.1]
        a.iterations = a.iterations or 40
        a.max_queries = a.max_queries or 150
    if a.synthetic:
        a.data_key = f"synthetic:mslr:{a.synthetic}:{a.seed}"
        a.data_label = f"synthetic MSLR-shaped set, {a.synthetic} queries (seed {a.seed})"
    else:  # a folder is resolved in run (resolve_data): its errors are reported there, before training
        a.data_key = str(Path(a.data).resolve())
        a.data_label = dataset_name(a.data)
    return a


def run(args):
    if args.synthetic:
        names = [n for n in FOLD_TABLE if not args.folds or n in args.folds]
    else:
        try:
            ds = resolve_data(args.data, args.folds, args.seed)
        except (ValueError, FileNotFoundError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if ds.note:
            log(ds.note)
        args.data_key, args.data_label, names = ds.key, ds.label, ds.folds
    if args.quick:
        names = names[:1]
    out = Path(args.out)
    store = RunStore(out / "runs", "paper")
    grid = build_grid(args, names)

    def finished(cfg, res):
        log(f"done {_cell_name(cfg)}: final NDCG@10 {res['test_final']['ndcg@10']:.4f} ({res['seconds']:.1f} s)")

    results = run_grid(grid, one_run, store, jobs=args.jobs, scheduler=args.scheduler, force=args.force,
                       desc="paper grid (cells)", meta={"machine": machine_record()}, on_result=finished,
                       name=_cell_name)
    out.mkdir(parents=True, exist_ok=True)
    summary = report(aggregate(results, args.select), args, out)  # prints the table
    print(summary["verdict"])
    print(f"written to {out}/table.md, table.csv, summary.json"
          + (", figure2.png" if (out / "figure2.png").exists() else " (no figure2.png: see table.md)"))
    return 0 if summary else 1


def main(argv=None):
    from .__main__ import main as cli

    return cli(["paper", *([] if argv is None else argv)])
