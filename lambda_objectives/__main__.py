"""``python -m lambda_objectives warmup``: compile every numba kernel once, before the first real call.

numba compiles each kernel on its first call in a fresh environment and caches the result on disk
(docs/user-guide.md, "First run and compilation"); ``warmup`` pays that once, with a line per step and
the time it took, so that the first ``lambda_gradients`` call, engine round or ``fit`` starts at once.
Run again, it only loads the cache (seconds) and says so.
"""

import argparse
import sys


def main(argv=None):
    from . import _warmup

    names = [name for name, _ in _warmup.WARMUP_STEPS]
    parser = argparse.ArgumentParser(prog="python -m lambda_objectives", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    w = sub.add_parser("warmup", help="compile every numba kernel a user can reach (first run only)",
                       description=__doc__.split("\n\n")[1])
    w.add_argument("--jobs", type=int, default=1,
                   help="processes compiling at once (numba compiles on one core; 2 on a 2-core machine)")
    w.add_argument("--only", metavar="STEP", action="append",
                   help="run only the step whose name starts with STEP (repeatable); steps: " + "; ".join(names))
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
        if args.jobs < 1:
            w.error(f"argument --jobs: expected an integer >= 1, got {args.jobs}")
        bad = [p for p in args.only or () if not p.strip() or not any(n.startswith(p) for n in names)]
        if bad:
            w.error(f"--only: no step starts with {', '.join(map(repr, bad))}; steps: {'; '.join(names)}")
    except SystemExit as exc:  # argparse's errors and --help: an exit code
        return exc.code if isinstance(exc.code, int) else 2
    _warmup.warmup(steps=args.only, jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
