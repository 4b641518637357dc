"""``python -m comparisons bench``: every ``bench_*`` module in one report (Markdown + JSON).

Each module exposes ``run(quick) -> dict`` whose figures are ratios against a peer timed in the
same run; the report records the machine and thread counts beside them. Modules run in separate
processes because LightGBM and XGBoost loaded in one process slow each other down (their OpenMP
runtimes interfere).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from ._machine import machine_record

MODULES = ("bench_io", "bench_kernels", "bench_adapters", "bench_reference", "bench_combine")


def _available():
    here = Path(__file__).resolve().parent
    return [m for m in MODULES if (here / f"{m}.py").exists()]


def run(quick=False, only=None):
    results = {"machine": machine_record(), "quick": quick, "modules": {}}
    for name in _available():
        if only and name not in only:
            continue
        code = (f"import json; from comparisons.{name} import run; "
                f"print('@@JSON@@' + json.dumps(run(quick={quick!r}), default=float))")
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        entry = {"seconds": time.perf_counter() - t}
        marker = proc.stdout.rfind("@@JSON@@")
        if proc.returncode == 0 and marker >= 0:
            entry["result"] = json.loads(proc.stdout[marker + 8:])
        else:
            entry["error"] = (proc.stderr or proc.stdout)[-2000:]
        results["modules"][name] = entry
        print(f"{name}: {'ok' if 'result' in entry else 'FAILED'} ({entry['seconds']:.0f} s)", flush=True)
    return results


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m comparisons bench", description=__doc__)
    p.add_argument("--quick", action="store_true", help="small sizes (minutes, for a smoke run)")
    p.add_argument("--only", nargs="*", choices=MODULES)
    p.add_argument("--out", default="results/bench")
    a = p.parse_args(argv)
    res = run(a.quick, a.only)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(res, indent=2, default=float))
    lines = [f"# Benchmarks ({'quick' if a.quick else 'full'})", "", "Machine: " + json.dumps(res["machine"]), ""]
    for name, entry in res["modules"].items():
        lines += [f"## {name}", "", "```", json.dumps(entry.get("result", entry.get("error")), indent=1,
                                                       default=float)[:6000], "```", ""]
    (out / "bench.md").write_text("\n".join(lines))
    print(f"written to {out}/bench.md and bench.json")
    return 0 if all("result" in e for e in res["modules"].values()) else 1
