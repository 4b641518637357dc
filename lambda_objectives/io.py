"""Reading and writing LETOR / SVMlight ranking files, and the standard 5-fold layouts.

Format: one document per line, ``label qid:N idx:val idx:val ... # comment``; feature indices
1-based and increasing; lines without ``qid:`` take their groups from a sibling ``.query`` /
``.group`` file of group sizes (LightGBM's layout). ``.gz`` files are read transparently.
"""

import gzip
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _letor_parser as lp
from ._config import FLOAT, PTR, X_FLOAT
from .groups import sizes_to_ptr

__all__ = ["LetorData", "Fold", "load_letor", "load_letor_folds", "save_letor"]

_MESSAGES = {
    lp.BAD_LABEL: "label is not a number",
    lp.BAD_TOKEN: "malformed token (expected idx:value)",
    lp.BAD_INDEX: "feature index must be a positive integer (1-based)",
    lp.BAD_VALUE: "feature value is not a number",
    lp.NULL_VALUE: "feature value NULL (pass null_as_nan=True to read NULL as missing)",
    lp.BAD_QID: "qid must be an integer",
    lp.UNSORTED: "feature indices must be increasing within a line (duplicate or out of order)",
    lp.MIXED_QID: "some lines have qid: and others do not",
    lp.QID_RANGE: "qid does not fit a 64-bit signed integer (|qid| < 2**63)",
}
#: a dense X larger than this many bytes, and this many times the stored values, is refused:
#: a corrupt huge feature index must not ask for gigabytes silently
_DENSE_LIMIT_BYTES = 2 ** 30
_DENSE_LIMIT_RATIO = 1000


@dataclass
class LetorData:
    """A loaded ranking data set; rows of a query are contiguous.

    Attributes
    ----------
    X : ndarray (n, n_features) or scipy.sparse.csr_matrix
    y : ndarray of float64, relevance labels
    qid : ndarray of int64, one query id per row
    group_ptr : ndarray of int64, query boundaries (``group_ptr[-1] == n``)
    comments : list of str or None, the text after ``#`` per row (``keep_comments=True``)
    path : str or None
    """

    X: object
    y: np.ndarray
    qid: np.ndarray
    group_ptr: np.ndarray
    comments: list = None
    path: str = None

    @property
    def n_queries(self):
        return self.group_ptr.shape[0] - 1

    @property
    def group(self):
        """Group sizes (LightGBM's ``group=``)."""
        return np.diff(self.group_ptr)

    def to_frame(self):
        """A pandas DataFrame: ``qid``, ``label`` and one column per feature (``f1``, ``f2``, ...)."""
        import pandas as pd

        X = self.X.toarray() if sp.issparse(self.X) else self.X
        df = pd.DataFrame(X, columns=[f"f{j + 1}" for j in range(X.shape[1])])
        df.insert(0, "label", self.y)
        df.insert(0, "qid", self.qid)
        return df


@dataclass
class Fold:
    """One fold of a LETOR layout."""

    name: str
    train: LetorData
    vali: LetorData = None
    test: LetorData = None
    paths: dict = field(default_factory=dict)


def _read_bytes(path):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot be read as {'gzip' if path.suffix == '.gz' else 'a file'}: {exc}") from None


def _group_file(path, group_file):
    if group_file is not None:
        return Path(group_file)
    p = Path(path)
    stem = p.with_suffix("") if p.suffix == ".gz" else p
    for suffix in (".query", ".group"):
        cand = Path(str(stem) + suffix)
        if cand.is_file():
            return cand
    return None


def load_letor(path, *, dtype=X_FLOAT, sparse=False, n_features=None, null_as_nan=False,
               keep_comments=False, group_file=None):
    """Read a LETOR / SVMlight ranking file.

    Parameters
    ----------
    path : str or Path
        The file (``.gz`` read transparently).
    dtype : float32 (default) or float64
        Feature dtype. Values are parsed in float64 (correctly rounded, as ``strtod``) then cast.
    sparse : bool
        Return ``X`` as ``scipy.sparse.csr_matrix`` (absent entries are 0).
    n_features : int, optional
        Width of ``X`` (so train/vali/test agree); default the largest index in the file.
    null_as_nan : bool
        Read the literal ``NULL`` (LETOR's missing value) and ``nan`` as NaN; otherwise both are
        errors. ``inf`` is always an error.

    Warns
    -----
    RuntimeWarning
        When the last line has no final newline (a truncated file would otherwise pass silently).
    keep_comments : bool
        Keep each row's text after ``#`` (doc ids) in ``comments``.
    group_file : path, optional
        Group sizes for a file without ``qid:``; default a sibling ``<file>.query`` or ``.group``.

    Returns
    -------
    LetorData

    Raises
    ------
    FileNotFoundError
        The file (or its group file) does not exist.
    ValueError
        Naming the file, the 1-based line and the token, for: a malformed token, a non-numeric
        label or value, ``NULL`` / ``nan`` without ``null_as_nan``, an infinite value, a qid beyond
        int64, a feature index so large that the dense ``X`` would exceed 1 GiB and 1000× the stored
        values (use ``sparse=True``), a damaged gzip stream, a feature index < 1 or not increasing, a
        feature index beyond ``n_features``, a qid that reappears after another qid, lines with and
        without ``qid:`` mixed, a missing or inconsistent group file.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    raw = _read_bytes(path)
    buf = np.frombuffer(raw, dtype=np.uint8)
    n_lines, n_colons = lp.count_upper_bounds(buf)
    labels = np.empty(n_lines, FLOAT)
    qids = np.zeros(n_lines, np.int64)
    line_no = np.empty(n_lines, np.int64)
    comment_span = np.empty((n_lines, 2), np.int64)
    feat_row = np.empty(n_colons, np.int32)
    feat_col = np.empty(n_colons, np.int32)
    feat_val = np.empty(n_colons, FLOAT)
    has_qid = np.zeros(1, np.int64)
    cap = 1024
    while True:
        slow = np.empty((cap, 4), np.int64)
        status, line, ta, tb, n_rows, nf, n_slow = lp.parse_letor(
            buf, null_as_nan, labels, qids, has_qid, line_no, comment_span, feat_row, feat_col, feat_val,
            slow, lp._POW10)
        if status != lp.MORE_SLOW:
            break
        cap *= 8
    if status != lp.OK:
        token = raw[ta:tb].decode("utf-8", "replace")
        raise ValueError(f"{path}, line {line}: {_MESSAGES[status]}: {token!r}")
    for kind, index, a, b in slow[:n_slow]:
        text = raw[a:b].decode("ascii", "replace")
        try:
            value = float(text)
        except ValueError:
            row = index if kind == 0 else feat_row[index]
            raise ValueError(f"{path}, line {line_no[row]}: not a number: {text!r}") from None
        if kind == 0:
            labels[index] = value
        else:
            if not np.isfinite(value) and not (null_as_nan and np.isnan(value)):
                raise ValueError(f"{path}, line {line_no[feat_row[index]]}: feature value is not finite: {text!r}"
                                 + ("" if np.isinf(value) else " (pass null_as_nan=True to read it as missing)"))
            feat_val[index] = value
    if n_rows == 0:
        raise ValueError(f"{path}: no data lines")
    if raw and raw[-1:] != b"\n":
        # a file cut mid-line parses its partial last token as a valid number: say so
        warnings.warn(f"{path}, line {int(line_no[n_rows - 1])}: the last line has no newline at its end; if the "
                      "file was truncated, that row may be incomplete", RuntimeWarning, stacklevel=2)
    labels, line_no = labels[:n_rows], line_no[:n_rows]
    bad = ~np.isfinite(labels)
    if bad.any():
        r = int(np.argmax(bad))
        raise ValueError(f"{path}, line {line_no[r]}: label is not finite: {labels[r]!r}")
    rows, cols, vals = feat_row[:nf], feat_col[:nf], feat_val[:nf]
    width = int(cols.max()) + 1 if nf else 0
    if n_features is not None:
        if width > n_features:
            e = int(np.argmax(cols >= n_features))
            raise ValueError(
                f"{path}, line {line_no[rows[e]]}: feature index {cols[e] + 1} exceeds n_features={n_features}"
            )
        width = int(n_features)
    if has_qid[0]:
        qid = qids[:n_rows].copy()
        change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
        starts = np.concatenate(([0], change))
        run_ids = qid[starts]
        order = np.argsort(run_ids, kind="stable")
        dup = np.flatnonzero(run_ids[order][1:] == run_ids[order][:-1])
        if dup.size:
            r = int(starts[order[dup[0] + 1]])
            raise ValueError(
                f"{path}, line {line_no[r]}: qid:{qid[r]} reappears after rows of another query "
                "(rows of a query must be contiguous)"
            )
        group_ptr = np.concatenate((starts, [n_rows])).astype(PTR)
    else:
        gpath = _group_file(path, group_file)
        if gpath is None:
            raise ValueError(f"{path}, line {line_no[0]}: no qid: and no .query/.group file beside it")
        sizes = _read_sizes(gpath)
        try:
            group_ptr = sizes_to_ptr(sizes, n_rows)
        except ValueError as exc:
            raise ValueError(f"{gpath}: {exc} ({path} has {n_rows} rows)") from None
        qid = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    if sparse:
        X = sp.csr_matrix((vals.astype(dtype), (rows, cols)), shape=(n_rows, width))
    else:
        need = n_rows * width * dtype.itemsize
        if need > _DENSE_LIMIT_BYTES and need > _DENSE_LIMIT_RATIO * max(nf, 1) * dtype.itemsize:
            e = int(np.argmax(cols))
            raise ValueError(
                f"{path}, line {line_no[rows[e]]}: feature index {cols[e] + 1} would make a dense X of "
                f"{need / 2 ** 30:.1f} GiB for {nf} stored values; if the index is right, pass sparse=True "
                "(or n_features=), otherwise the line is corrupt")
        X = np.zeros((n_rows, width), dtype=dtype)
        X[rows, cols] = vals
    comments = None
    if keep_comments:
        spans = comment_span[:n_rows]
        comments = [raw[a + 1:b].decode("utf-8", "replace").strip() if b > a else "" for a, b in spans]
    return LetorData(X=X, y=labels, qid=qid, group_ptr=group_ptr, comments=comments, path=str(path))


def _read_sizes(gpath):
    text = _read_bytes(gpath).decode("ascii", "replace").split()
    out = []
    for i, tok in enumerate(text):
        try:
            out.append(int(tok))
        except ValueError:
            raise ValueError(f"{gpath}: group size {tok!r} (entry {i + 1}) is not an integer") from None
    return np.array(out, dtype=PTR)


_LAYOUTS = (
    ("train.txt", "vali.txt", "test.txt"),
    ("trainingset.txt", "validationset.txt", "testset.txt"),
)


def load_letor_folds(root, folds=None, **load_kwargs):
    """Load a LETOR folder: ``Fold1..5/{train,vali,test}.txt`` (or LETOR 3.0's
    ``trainingset/validationset/testset.txt``), all with the same ``n_features``.

    Parameters
    ----------
    root : path
        The data set folder (e.g. ``MQ2008``; ``MQ2008/Fold1`` alone is accepted too).
    folds : iterable of int or str, optional
        Which folds (``[1, 2]`` or ``["Fold1"]``); default every ``Fold*`` folder present.
    **load_kwargs
        Passed to :func:`load_letor`.

    Returns
    -------
    list of Fold

    Raises
    ------
    ValueError
        When the folder, a requested fold or one of its files is missing (named in the message).
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"data folder {root} does not exist")
    if any((root / f).is_file() for layout in _LAYOUTS for f in layout):
        fold_dirs = [root]
    else:
        present = sorted((p for p in root.iterdir() if p.is_dir() and p.name.lower().startswith("fold")),
                         key=lambda p: (len(p.name), p.name))
        if folds is not None:
            wanted = [f"Fold{f}" if not str(f).lower().startswith("fold") else str(f) for f in folds]
            names = {p.name.lower(): p for p in present}
            missing = [w for w in wanted if w.lower() not in names]
            if missing:
                raise ValueError(f"{root}: fold(s) {', '.join(missing)} not found (present: "
                                 f"{', '.join(p.name for p in present) or 'none'})")
            present = [names[w.lower()] for w in wanted]
        if not present:
            raise ValueError(f"{root}: no Fold1..Fold5 folders and no train.txt/vali.txt/test.txt files")
        fold_dirs = present
    layouts = []
    for d in fold_dirs:
        for layout in _LAYOUTS:
            if (d / layout[0]).is_file() or (d / (layout[0] + ".gz")).is_file():
                layouts.append((d, layout))
                break
        else:
            raise ValueError(f"{d}: missing {_LAYOUTS[0][0]} (or {_LAYOUTS[1][0]})")
    paths = []
    for d, layout in layouts:
        fp = {}
        for split, fname in zip(("train", "vali", "test"), layout):
            p = d / fname
            if not p.is_file() and (d / (fname + ".gz")).is_file():
                p = d / (fname + ".gz")
            if not p.is_file():
                raise ValueError(f"{d}: missing {fname}")
            fp[split] = p
        paths.append((d.name, fp))
    loaded = [(name, {k: load_letor(p, **load_kwargs) for k, p in fp.items()}, fp) for name, fp in paths]
    width = max(ds.X.shape[1] for _, parts, _ in loaded for ds in parts.values())
    if load_kwargs.get("n_features") is None:
        for _, parts, _ in loaded:
            for ds in parts.values():
                if ds.X.shape[1] < width:
                    ds.X = _widen(ds.X, width)
    return [Fold(name, parts["train"], parts["vali"], parts["test"], {k: str(v) for k, v in fp.items()})
            for name, parts, fp in loaded]


def _widen(X, width):
    if sp.issparse(X):
        X = X.tocsr()
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
    out = np.zeros((X.shape[0], width), dtype=X.dtype)
    out[:, : X.shape[1]] = X
    return out


def save_letor(path, X, y, group_ptr=None, qid=None, comments=None):
    """Write a LETOR file (``label qid:N idx:val ...``, zeros of sparse input omitted).

    Exactly one of ``group_ptr`` / ``qid`` gives the queries. Values are written in the shortest
    form that round-trips their own dtype (numpy's ``str`` of the float32 or float64 value), so
    :func:`load_letor` with the same dtype reads back identical numbers.
    """
    from .groups import ptr_to_qid, resolve_group_ptr

    n = X.shape[0]
    if qid is None:
        ptr = resolve_group_ptr(n, group_ptr=group_ptr)
        qid = ptr_to_qid(ptr)
    else:
        resolve_group_ptr(n, qid=qid)  # contiguity check
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows, X has {n}")
    Xc = X.tocsr() if sp.issparse(X) else None
    if Xc is None:
        X = np.asarray(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        for r in range(n):
            if Xc is not None:
                a, b = Xc.indptr[r], Xc.indptr[r + 1]
                items = zip(Xc.indices[a:b] + 1, Xc.data[a:b])
            else:
                items = ((j + 1, v) for j, v in enumerate(X[r]))
            feats = " ".join(f"{j}:{'NULL' if np.isnan(v) else str(v)}" for j, v in items)
            line = f"{repr(float(y[r])) if y[r] != int(y[r]) else int(y[r])} qid:{int(qid[r])} {feats}"
            if comments is not None:
                line += f" # {comments[r]}"
            f.write(line.rstrip() + "\n")
