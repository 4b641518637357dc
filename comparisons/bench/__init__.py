"""Every benchmark of the project, one module each, and ``python -m comparisons bench``, which runs
them all into one report (Markdown + JSON).

* :mod:`comparisons.bench.io`: the LETOR loader against scikit-learn's SVMlight reader;
* :mod:`comparisons.bench.kernels`: the lambda kernels (pairs/s, 2-thread speed-up, ΔERR prefix
  against the naive O(n³) loop, ΔNDCG against LightGBM's own gradient time);
* :mod:`comparisons.bench.long_lists`: the gradient cost per round against list length (100 to 20,000
  documents a query): our full list, @10 and sampled pairs against LightGBM's and XGBoost's objectives;
* :mod:`comparisons.bench.adapters`: our presets inside LightGBM/XGBoost against the native
  objectives (and ``--profile``: where a custom-objective round goes);
* :mod:`comparisons.bench.objectives`: what each of our objectives (YetiLoss modes, PL-Rank-3,
  softmax, ListMLE, exact ΔMRR/ΔMAP/ΔNDCG) costs inside LightGBM/XGBoost against ``lambdarank`` /
  ``rank:ndcg``: whole training and our gradient call ÷ a native round;
* :mod:`comparisons.bench.reference`: the reference trainer per tree (OLE, SE, exact OLE) against
  LightGBM on the same gradients, McRank against LightGBM ``multiclass``, and MQ2008, interleaved;
* :mod:`comparisons.bench.combine`: the exact linear combination against grid search;
* :mod:`comparisons.bench.plrank`: our PL-Rank-3 kernel against the published algorithm as a numpy
  per-query loop.

Each module runs as ``python -m comparisons.bench.<module> [--quick]`` and exposes
``run(quick) -> dict`` whose figures are ratios against a peer timed in the same run, with min and
median over repeats (:func:`timings`) and, where threads matter, at 1 and 2 threads
(:data:`THREADS`). Modules run in separate processes (:func:`comparisons._runner.run_isolated`)
because LightGBM and XGBoost loaded in one process slow each other down (their OpenMP runtimes
interfere).
"""

import json
import os
import statistics
import time
from pathlib import Path

from .._machine import log, machine_record
from .._runner import run_isolated

MODULES = ("io", "kernels", "long_lists", "adapters", "objectives", "reference", "combine", "plrank")

#: thread counts every thread-dependent ratio is reported at (the CI machine has 2 cores)
THREADS = tuple(sorted({1, min(2, os.cpu_count() or 1)}))

#: the real LETOR data beside the repository (``../shared/data``), as the tests find it
SHARED = Path(os.environ.get("LAMBDA_OBJECTIVES_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"))


def timings(fn, repeats, warmup=True):
    """``{"min", "median", "repeats"}`` of the wall times of ``repeats`` calls of ``fn`` (seconds).

    The minimum is the figure least disturbed by other work on the machine; the median shows how
    far the typical call is from it. One untimed warm-up call first (compilation, caches)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return {"min": min(times), "median": statistics.median(times), "repeats": repeats}


def interleaved(fns, repeats):
    """:func:`timings` of several callables measured in turn (a, b, a, b, ...), so a slow phase of
    the machine falls on all of them alike; ``{name: timings}`` for ``fns = {name: fn}``."""
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: {"min": min(v), "median": statistics.median(v), "repeats": repeats} for name, v in times.items()}


def ratio(a, b):
    """``a ÷ b`` of two :func:`timings` records: ``{"min": a_min/b_min, "median": a_med/b_med}``."""
    return {"min": a["min"] / b["min"], "median": a["median"] / b["median"]}


def _module_run(name, quick):
    import importlib

    return importlib.import_module(f"comparisons.bench.{name}").run(quick)


def collect(quick=False, only=None):
    """Every module's results (each module in a fresh process) with the machine record."""
    results = {"machine": machine_record(), "quick": quick, "modules": {}}
    for name in MODULES:
        if only and name not in only:
            continue
        t = time.perf_counter()
        entry = {}
        try:
            entry["result"] = json.loads(json.dumps(run_isolated(_module_run, name, quick), default=float))
        except Exception as exc:  # reported in the report; the other modules still run
            entry["error"] = f"{type(exc).__name__}: {exc}"
        entry["seconds"] = time.perf_counter() - t
        results["modules"][name] = entry
        log(f"{name}: {'ok' if 'result' in entry else 'FAILED'} ({entry['seconds']:.0f} s)")
    return results


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, default=float)[:120]
    return str(v)


def to_markdown(obj, title, level=2):
    """Nested results as Markdown tables: scalars in a two-column table, lists of records as tables."""
    lines = [f"{'#' * level} {title}", ""]
    scalars = {k: v for k, v in obj.items() if not isinstance(v, (dict, list))} if isinstance(obj, dict) else {}
    if scalars:
        lines += ["| figure | value |", "|---|---:|"] + [f"| {k} | {_fmt(v)} |" for k, v in scalars.items()] + [""]
    for k, v in (obj.items() if isinstance(obj, dict) else []):
        if isinstance(v, dict):
            lines += to_markdown(v, f"{title}: {k}", min(level + 1, 6))
        elif isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            cols = list(dict.fromkeys(c for r in v for c in r))
            lines += [f"{k}:", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
            lines += ["| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |" for r in v] + [""]
        elif isinstance(v, list):
            lines += [f"{k}: {_fmt(v)}", ""]
    return lines


def add_arguments(p):
    p.add_argument("--quick", action="store_true", help="small sizes (minutes, for a smoke run)")
    p.add_argument("--only", nargs="*", choices=MODULES, help="run only these modules")
    p.add_argument("--out", default="results/bench", help="output folder")
    return p


def run(a):
    res = collect(a.quick, a.only)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(res, indent=2, default=float))
    lines = [f"# Benchmarks ({'quick' if a.quick else 'full'})", "",
             "Every ratio is against a peer timed in the same run (see each module's docstring).", ""]
    lines += to_markdown(res["machine"], "Machine")
    for name, entry in res["modules"].items():
        if "result" in entry:
            lines += to_markdown(entry["result"], f"{name} ({entry['seconds']:.0f} s)")
        else:
            lines += [f"## {name}: FAILED", "", "```", entry["error"][-2000:], "```", ""]
    (out / "bench.md").write_text("\n".join(lines))
    print(f"written to {out}/bench.md and bench.json")
    return 0 if all("result" in e for e in res["modules"].values()) else 1


def main(argv=None):
    from ..__main__ import main as cli

    return cli(["bench", *([] if argv is None else argv)])
