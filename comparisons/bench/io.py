"""Benchmark of the LETOR loader against scikit-learn's ``load_svmlight_file(query_id=True)``.

Run: ``python -m comparisons.bench.io [--quick]``. Reports ours ÷ sklearn wall time per file
(best of several runs each, both warmed up, same process).
"""

import argparse
import json
import tempfile
from pathlib import Path

from lambda_objectives import load_letor, save_letor
from lambda_objectives.data.datasets import make_ranking

from .._machine import best_time, machine_record
from . import SHARED



def run(quick=False):
    from sklearn.datasets import load_svmlight_file

    files = [SHARED / "MQ2008" / "Fold1" / "train.txt",
             SHARED / "OHSUMED" / "QueryLevelNorm" / "Fold1" / "train.txt",
             SHARED / "yahoo-sample" / "rank.train"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        synth = make_ranking(2500 if not quick else 300, docs_per_query=120, n_features=46, seed=0)
        big = Path(tmp) / "synthetic.txt"
        save_letor(big, synth.X, synth.y, group_ptr=synth.group_ptr)
        for path in files + [big]:
            if not path.exists():
                rows.append({"file": str(path), "skipped": "absent"})
                continue
            has_qid = "qid:" in path.read_text(errors="replace")[:2000]
            ours = best_time(lambda: load_letor(path), 3 if quick else 5)
            theirs = best_time(lambda: load_svmlight_file(str(path), query_id=has_qid), 3 if quick else 5)
            rows.append({"file": path.name if path == big else str(path.relative_to(SHARED)),
                         "rows": int(load_letor(path).X.shape[0]), "ours_s": ours, "sklearn_s": theirs,
                         "ours_over_sklearn": ours / theirs})
    return {"machine": machine_record(), "rows": rows}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    res = run(args.quick)
    for r in res["rows"]:
        if "skipped" in r:
            print(f"{r['file']}: skipped ({r['skipped']})")
        else:
            print(f"{r['file']:45s} {r['rows']:>8d} rows  ours {r['ours_s'] * 1e3:8.1f} ms  "
                  f"sklearn {r['sklearn_s'] * 1e3:8.1f} ms  ratio {r['ours_over_sklearn']:.2f}")
    print(json.dumps(res["machine"]))


if __name__ == "__main__":
    main()
