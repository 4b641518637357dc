"""Argument types shared by the comparison commands: errors name the option's bad value."""

import argparse
import sys


def positive_int(text):
    """An integer >= 1 (``--iterations 0`` is an error, not an empty run)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def int_at_least(low):
    """An integer >= ``low`` (e.g. ``--leaves``: a tree has at least 2 leaves)."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {v}")
        return v
    parse.__name__ = f"integer >= {low}"
    return parse


def positive_float(text):
    """A finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (v > 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


def open_fraction(text):
    """A number strictly between 0 and 1 (``--log-fraction``: a share of the queries, neither none nor all)."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return v


def csv_arg(choices=None, kind=None):
    """A non-empty comma list, of ``choices`` or of values parsed by ``kind`` (e.g. positive_int)."""
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a non-empty comma list")
        if choices is not None:
            bad = [t for t in items if t not in choices]
            if bad:
                raise argparse.ArgumentTypeError(f"unknown {', '.join(bad)}; choose from {', '.join(choices)}")
        return [kind(t) for t in items] if kind is not None else items
    return parse


def convention_arg(p):
    """``--convention``: the NDCG gain and the score of a query without relevant documents."""
    p.add_argument("--convention", default="lightgbm", choices=("lightgbm", "xgboost", "trec"),
                   help="metric convention: lightgbm/xgboost = gain 2^rel-1 and a query with no relevant "
                        "document scores 1; trec = trec_eval's linear gain, such a query scores 0 (docs/math.md)")


def grid_args(p, out):
    """The options of a command that runs a grid through the run store: --jobs, --scheduler, --force, --out."""
    p.add_argument("--jobs", type=positive_int, default=1, help="local processes")
    p.add_argument("--scheduler", default=None, help="a Dask scheduler address (tcp://host:8786)")
    p.add_argument("--force", action="store_true", help="recompute tasks already in the run store")
    p.add_argument("--out", default=out, help="output folder (run store in OUT/runs)")
    return p


#: the folds of the LETOR layout (and of the synthetic sets, split with the LETOR fold table)
FOLDS = tuple(f"Fold{i}" for i in range(1, 6))


def folds_arg(text):
    """``--folds``: a comma list of fold numbers 1..5 or names Fold1..Fold5, as ``["Fold1", ...]``
    (a fold missing from a data folder is reported, naming the folder, when it is read)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a non-empty comma list of folds 1..5")
    out = []
    for t in items:
        name = f"Fold{t}" if t.isdigit() else t[:1].upper() + t[1:].lower()
        if name not in FOLDS:
            raise argparse.ArgumentTypeError(f"unknown fold {t!r}; choose from 1..5 (or Fold1..Fold5)")
        if name not in out:
            out.append(name)
    return out


#: folder names that say how a data set is stored, not which it is (LETOR 3.0's OHSUMED variants)
_VARIANTS = ("querylevelnorm", "feature-min", "feature-null", "min", "null", "data")


def dataset_name(data):
    """A data set's name for titles: ``MQ2008`` for ``../shared/data/MQ2008`` (or its ``Fold1``),
    ``OHSUMED (QueryLevelNorm)`` for a variant folder; anything that is not a folder as given."""
    from pathlib import Path

    p = Path(str(data))
    if not p.exists():
        return str(data)
    p = p.resolve()
    if p.is_file() or p.name.lower().startswith("fold"):
        p = p.parent
    if p.name.lower() in _VARIANTS and p.parent.name:
        return f"{p.parent.name} ({p.name})"
    return p.name


def run_command(module, args):
    """``module.run(args)``; a failure of the run store, the output folder (``--out``) or a worker
    process ends in one line on stderr naming the path and what to do, and exit code 1 (no traceback).
    While it runs, a line on stderr says when numba compiles (first run only; worker processes say their
    own), ended before that one line, which stays the last."""
    from lambda_objectives._kernels.compile import compile_notice

    from .runstore import RunError

    try:
        with compile_notice("cli"):
            return module.run(args) or 0
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        out = getattr(args, "out", None)
        if out is None or exc.filename is None or not _inside(exc.filename, out):
            raise
        from pathlib import Path

        blocker = next((p for p in (Path(out), *Path(out).parents) if p.exists() and not p.is_dir()), None)
        what = (f"{blocker} is a file, not a folder" if blocker is not None
                else f"cannot write {exc.filename} ({exc.strerror or type(exc).__name__})")
        print(f"error: {what}: choose an output folder (--out) you can write to", file=sys.stderr)
        return 1


def _inside(path, folder):
    from pathlib import Path

    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
    except (ValueError, OSError, TypeError):
        return False
    return True
