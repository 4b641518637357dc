"""How every command reads a ``--data`` folder and a fold of it: the one home of data loading.

:func:`resolve_data` turns a ``--data`` folder into a :class:`DataSet` (a LETOR layout, a folder of
files without folds pooled into five folds by query, or OHSUMED's variant folders); :func:`load_fold`
returns ``(train, vali, test)`` of one fold of it, or of ``"synthetic:mslr:N:SEED"``. ``paper``,
``quality``, ``engines`` and ``validate`` all import from here, so no command imports another.
"""

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

#: LETOR fold tables: (train partitions, validation, test), partitions S1..S5 numbered 0..4.
FOLD_TABLE = {f"Fold{f + 1}": ([(f + i) % 5 for i in range(3)], (f + 3) % 5, (f + 4) % 5) for f in range(5)}


@lru_cache(maxsize=2)
def _synthetic_partitions(n_queries, seed):
    from lambda_objectives import make_mslr_like

    data = make_mslr_like(n_queries, seed=seed)
    parts = np.array_split(np.random.default_rng(seed).permutation(data.n_queries), 5)
    return data, [np.sort(p) for p in parts]


def _data_files(folder):
    return sorted(p for p in Path(folder).iterdir()
                  if p.is_file() and p.suffix not in (".query", ".group", ".md") and not p.name.startswith("."))


def pooled_files(folder):
    """The data files of a folder without ``Fold*`` subfolders (LightGBM's example layout:
    ``rank.train``, ``rank.test``, each with its ``.query`` group file), in name order."""
    files = _data_files(folder)
    if not files:
        raise FileNotFoundError(f"{folder}: no Fold1..5 subfolders and no data files")
    return files


def _pooled_partitions(folder, seed):
    """Every file of ``folder`` pooled (query ids made distinct per file) and split by query into five
    parts with a fixed seed: a data set shipped without folds gets LETOR's 3/1/1 fold table."""
    import scipy.sparse as sp

    from lambda_objectives.data.io import RankingData, load_letor

    parts = [load_letor(f) for f in pooled_files(folder)]
    width = max(d.X.shape[1] for d in parts)
    X = np.vstack([np.pad(d.X.toarray() if sp.issparse(d.X) else d.X, ((0, 0), (0, width - d.X.shape[1])))
                   for d in parts])
    offsets = np.cumsum([0] + [int(d.qid.max()) + 1 for d in parts[:-1]])
    qid = np.concatenate([d.qid - d.qid.min() + o for d, o in zip(parts, offsets)])
    ptr = np.concatenate([[0], np.cumsum(np.concatenate([d.group for d in parts]))])
    data = RankingData(X, np.concatenate([d.y for d in parts]), qid, ptr, path=str(folder))
    split = np.array_split(np.random.default_rng(seed).permutation(data.n_queries), 5)
    return data, [np.sort(p) for p in split]


#: the ``--data`` help of every command that reads a data set through :func:`resolve_data`
DATA_HELP = ("a data folder: the LETOR layout (Fold1..5/{train,vali,test}.txt, LETOR 3.0 names, or one fold); "
             "a folder of files without folds (yahoo-sample: rank.train/rank.test + .query), pooled and split by "
             "query into five folds; or a folder of variants with one complete LETOR layout (OHSUMED: its "
             "QueryLevelNorm folds)")


class DataSet(NamedTuple):
    """A ``--data`` folder as every command reads it (:func:`resolve_data`).

    ``key``: what :func:`load_fold` takes (a LETOR folder's absolute path, or ``"pooled:SEED:FOLDER"``);
    ``label``: its name for titles and tables; ``folds``: the fold names run; ``train_files``:
    ``[(name, path)]`` of the training files ``validate`` probes (per fold, or the pooled folder's
    training files); ``note``: how the folder was read, when that is not what was passed (else ``""``).
    """

    key: str
    label: str
    folds: list
    train_files: list
    note: str = ""


def _is_letor(folder):
    """Whether ``folder`` holds a complete LETOR layout (split files, or ``Fold*`` folders each with
    them), judged from the file names alone."""
    from lambda_objectives.data.io import _LAYOUTS

    def complete(d):
        return any(all((d / f).is_file() or (d / (f + ".gz")).is_file() for f in layout) for layout in _LAYOUTS)

    folds = [d for d in folder.iterdir() if d.is_dir() and d.name.lower().startswith("fold")]
    return complete(folder) or (bool(folds) and all(complete(d) for d in folds))


def resolve_data(folder, folds=None, seed=0):
    """The :class:`DataSet` of a ``--data`` folder: the one home of how the commands read a data set.

    * a LETOR layout (``Fold1..5/{train,vali,test}.txt``, LETOR 3.0 names, or one fold's files):
      its folds (``folds``: the ones wanted, each checked to exist);
    * a folder of data files without folds (LightGBM's example layout, ``yahoo-sample``:
      ``rank.train``/``rank.test`` with ``.query`` group files): pooled and split by query into five
      folds with LETOR's fold table (:func:`_pooled_partitions`, seed ``seed``);
    * a folder holding only variant folders (LETOR 3.0's ``OHSUMED/{QueryLevelNorm,Feature-null}``):
      the one variant with a complete LETOR layout, said in ``note``; with several, or a folder of
      several data sets, a ``ValueError`` naming the folders, to pass one of them.

    Raises ``ValueError`` naming the folder and what to pass instead.
    """
    from lambda_objectives import load_letor_folds

    from ._cli import _VARIANTS, dataset_name

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"data folder {root} does not exist")
    has_folds = any(d.is_dir() and d.name.lower().startswith("fold") for d in root.iterdir())
    if has_folds or _is_letor(root):
        loaded = load_letor_folds(root, folds=folds)  # names a missing fold or split file
        return DataSet(str(root.resolve()), dataset_name(root), [f.name for f in loaded],
                       [(f.name, str(f.paths["train"])) for f in loaded])
    if _data_files(root):
        files = pooled_files(root)
        names = [f for f in FOLD_TABLE if folds is None or f in folds]
        train = [f for f in files if "train" in f.name.lower()] or files
        return DataSet(f"pooled:{seed}:{root.resolve()}",
                       f"{root.name} ({' + '.join(f.name for f in files)} pooled, five folds by query)", names,
                       [(f.name, str(f)) for f in train],
                       f"{root} has no folds: its files {', '.join(f.name for f in files)} are pooled and split "
                       "by query into five folds (LETOR's fold table)")
    subs = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith("."))
    usable = [d for d in subs if _is_letor(d)]
    # only variants of one data set (OHSUMED's QueryLevelNorm, Feature-null, ...) are chosen among:
    # a folder of several data sets (../shared/data) is never narrowed to one of them silently
    if subs and len(usable) == 1 and all(d.name.lower() in _VARIANTS for d in subs):
        inner = resolve_data(usable[0], folds, seed)
        others = [d.name for d in subs if d != usable[0]]
        return inner._replace(note=f"{root} holds no folds itself: using {usable[0]}, its only complete LETOR "
                                   "layout" + (f" ({', '.join(others)}: incomplete)" if others else ""))
    if subs:
        raise ValueError(f"{root} holds no folds and no data files, but the folders {', '.join(d.name for d in subs)}: "
                         "pass one of them as --data" + (f", e.g. --data {usable[0]}" if usable else ""))
    raise ValueError(f"{root}: no Fold1..Fold5 folders, no train.txt/vali.txt/test.txt files and no data files")


def load_fold(data, fold):
    """``(train, vali, test)`` of ``fold`` from a LETOR folder, ``"synthetic:mslr:N:SEED"`` or
    ``"pooled:SEED:FOLDER"`` (a folder without folds, split by :func:`_pooled_partitions`)."""
    if str(data).startswith("pooled:"):
        _, seed, folder = str(data).split(":", 2)
        full, parts = _pooled_partitions(folder, int(seed))
        train, vali, test = FOLD_TABLE[fold]
        return (full.subset(np.sort(np.concatenate([parts[p] for p in train]))), full.subset(parts[vali]),
                full.subset(parts[test]))
    if str(data).startswith("synthetic:"):
        _, _, n, seed = str(data).split(":")
        full, parts = _synthetic_partitions(int(n), int(seed))
        train, vali, test = FOLD_TABLE[fold]
        return (full.subset(np.sort(np.concatenate([parts[p] for p in train]))), full.subset(parts[vali]),
                full.subset(parts[test]))
    from lambda_objectives import load_letor_folds

    f = load_letor_folds(data, folds=[fold])[0]
    return f.train, f.vali, f.test


def _first_queries(d, n):
    return d.subset(np.arange(min(n, d.n_queries))) if hasattr(d, "subset") else _letor_head(d, n)


def _letor_head(d, n):
    from lambda_objectives.data.io import LetorData

    n = min(n, d.n_queries)
    end = int(d.group_ptr[n])
    return LetorData(d.X[:end], d.y[:end], d.qid[:end], d.group_ptr[: n + 1])


@lru_cache(maxsize=None)
def _fold_bins_class():  # reference (numba) is imported only when a fold is prepared
    from reference import BinMapper

    class FoldBins(BinMapper):
        """A :class:`reference.BinMapper` that bins each array once: the fold's training, validation
        and test matrices are binned by the first configuration a process runs on the fold and reused,
        as arrays, by every later one (:func:`prepared_fold`). The arrays binned are kept alive here,
        so an ``id`` is never reused for another array while its binned twin is stored."""

        def __init__(self, max_bin=255):
            super().__init__(max_bin)
            self._binned = {}

        def transform(self, X):
            kept = self._binned.get(id(X))
            if kept is not None and kept[0] is X:
                return kept[1]
            out = super().transform(X)
            self._binned[id(X)] = (X, out)
            return out

    return FoldBins


@lru_cache(maxsize=1)
def prepared_fold(data, fold, max_queries=None, max_bin=255):
    """``(train, vali, test, bins)`` of one fold (:func:`load_fold`; the first ``max_queries`` training
    queries when given), loaded once per process and kept for the next configuration on the same fold.

    ``bins`` is a :class:`reference.BinMapper` to pass to ``MARTRanker.fit(bin_mapper=...)``: the
    first fit learns the fold's bins on its training matrix, and every matrix is binned once per
    process, so a grid over one fold loads and bins it once (per worker process), not once per
    configuration. A fit with it gives the model a fit learning its own bins gives, to the bit (the
    same thresholds from the same matrix; the trainer only reads binned matrices)."""
    tr, va, te = load_fold(data, fold)
    if max_queries:
        tr = _first_queries(tr, max_queries)
    return tr, va, te, _fold_bins_class()(max_bin)
