"""``python -m comparisons bench``: every ``bench_*`` module in one report (Markdown + JSON).

Each module exposes ``run(quick) -> dict`` whose figures are ratios against a peer timed in the
same run; the report records the machine and thread counts beside them. Modules run in separate
processes (:func:`comparisons._runner.run_isolated`) because LightGBM and XGBoost loaded in one process slow each other down (their OpenMP
runtimes interfere).
"""

import json
import time
from pathlib import Path

from ._machine import log, machine_record
from ._runner import run_isolated

MODULES = ("bench_io", "bench_kernels", "bench_adapters", "bench_reference", "bench_combine")


def _module_run(name, quick):
    import importlib

    return importlib.import_module(f"comparisons.{name}").run(quick)


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
    from .__main__ import main as cli

    return cli(["bench", *([] if argv is None else argv)])
