"""Synthetic learning-to-rank data shaped like web-search data (the project's built-in default).

The project cannot ship third-party data; these generators are **synthetic**: no real queries
or documents, only their statistical shape. Real data is read with :func:`lambda_objectives.load_letor`.
"""

import math
import numbers

import numpy as np

from .._core.config import FLOAT, PTR, X_FLOAT
from .io import RankingData

__all__ = ["RankingData", "make_ranking", "make_mslr_like", "train_test_split_queries", "WEB_LABEL_SHARES"]

#: Share of grades 0..4 in web-search judgments (roughly MSLR-WEB10K / Yahoo set 1: mostly
#: irrelevant, few perfect matches).
WEB_LABEL_SHARES = (0.50, 0.30, 0.15, 0.04, 0.01)


def _list_sizes(rng, n_queries, docs_per_query):
    if np.ndim(docs_per_query) == 0:
        n = int(docs_per_query)
        if n < 1:
            raise ValueError(f"docs_per_query must be >= 1, got {docs_per_query}")
        return np.full(n_queries, n, dtype=PTR)
    lo, hi = (int(v) for v in docs_per_query)
    if not 1 <= lo <= hi:
        raise ValueError(f"docs_per_query range must satisfy 1 <= low <= high, got {docs_per_query}")
    # Web result lists: log-normal lengths (many short lists, a long tail), clipped to the range,
    # with the median at the geometric middle of the range.
    median = np.sqrt(lo * hi)
    sizes = np.exp(rng.normal(np.log(median), 0.6, n_queries))
    return np.clip(np.rint(sizes), lo, hi).astype(PTR)


def make_ranking(n_queries=200, docs_per_query=(5, 120), n_features=20, seed=0, *, n_informative=None,
                 max_label=4, label_shares=WEB_LABEL_SHARES, noise=0.5, dtype=X_FLOAT):
    """Generate a seeded synthetic learning-to-rank data set shaped like web-search data.

    Each document has a hidden relevance score: a non-linear function of ``n_informative``
    features (a linear part, pairwise interactions and a saturating term), a per-query offset
    (queries differ in how many good documents they have) and Gaussian noise. Grades
    ``0..max_label`` are cut from that score at global quantiles matching ``label_shares``
    (default 50/30/15/4/1 % for grades 0..4), so labels are mostly 0 with few top grades, and a
    model can learn them. List lengths are log-normal between the bounds of ``docs_per_query``.
    The remaining features are noise. Deterministic given ``seed``.

    Parameters
    ----------
    n_queries : int
    docs_per_query : int or (low, high)
        Fixed list length, or the range of the log-normal list lengths.
    n_features : int
    seed : int
    n_informative : int, optional
        Features that carry signal (default ``max(2, n_features // 3)``, at most ``n_features``).
    max_label : int
        Grades are ``0..max_label``; ``label_shares`` must have ``max_label + 1`` entries.
    label_shares : sequence of float
        Target share of each grade.
    noise : float
        Standard deviation of the label noise relative to the signal's.
    dtype : float32 (default) or float64

    Returns
    -------
    RankingData
        ``X`` (n, n_features), ``y`` float64 integer grades, ``qid`` int64, ``group_ptr`` int64.
    """
    for name, v in (("n_queries", n_queries), ("n_features", n_features), ("max_label", max_label)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not math.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        # an integer dtype would truncate the Gaussian features to a handful of values
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    shares = np.asarray(label_shares, dtype=FLOAT)
    if shares.shape[0] != max_label + 1 or np.any(shares < 0) or shares.sum() <= 0:
        raise ValueError(f"label_shares needs {max_label + 1} non-negative entries (grades 0..{max_label})")
    n_inf = min(n_features, max(2, n_features // 3)) if n_informative is None else int(n_informative)
    if not 1 <= n_inf <= n_features:
        raise ValueError(f"n_informative must be in 1..n_features, got {n_inf}")
    rng = np.random.default_rng(seed)
    sizes = _list_sizes(rng, n_queries, docs_per_query)
    ptr = np.zeros(n_queries + 1, dtype=PTR)
    np.cumsum(sizes, out=ptr[1:])
    n = int(ptr[-1])
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    X = rng.standard_normal((n, n_features), dtype=np.float64 if dtype == np.float64 else np.float32)
    inf = X[:, :n_inf].astype(FLOAT)
    w = rng.normal(size=n_inf) / np.sqrt(n_inf)
    signal = inf @ w
    if n_inf >= 2:
        signal += 0.5 * inf[:, 0] * inf[:, 1]
    signal += 0.7 * np.tanh(2.0 * inf[:, -1])
    signal /= signal.std() + 1e-12
    offset = np.repeat(rng.normal(0.0, 0.5, n_queries), sizes)
    score = signal + offset + noise * rng.standard_normal(n)
    cuts = np.quantile(score, np.cumsum(shares / shares.sum())[:-1])
    y = np.searchsorted(cuts, score, side="right").astype(FLOAT)
    # Features as a ranker sees them: shifted/scaled like raw web features, all finite.
    X = X.astype(dtype, copy=False)
    return RankingData(X=X, y=y, qid=qid, group_ptr=ptr)


def make_mslr_like(n_queries=3000, seed=0, **kwargs):
    """An MSLR-WEB10K-shaped synthetic set: about 112 documents per query (111.7 for 1,000 queries), 136 features,
    grades 0..4.

    3,000 queries give about 340 K rows (339,099: the benchmark size); 10,000 give about 1.1 M (MSLR-WEB10K has 1.2 M).
    """
    kwargs.setdefault("docs_per_query", (40, 250))
    kwargs.setdefault("n_features", 136)
    kwargs.setdefault("n_informative", 24)
    return make_ranking(n_queries=n_queries, seed=seed, **kwargs)


def train_test_split_queries(data, test_size=0.2, seed=0):
    """Split a :class:`RankingData` (or anything with X, y, qid, group_ptr) by whole queries."""
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    if not isinstance(data, RankingData):
        data = RankingData(data.X, data.y, data.qid, data.group_ptr)
    nq = data.n_queries
    perm = np.random.default_rng(seed).permutation(nq)
    n_test = max(1, int(round(test_size * nq)))
    if n_test >= nq:
        raise ValueError("test_size leaves no training query")
    return data.subset(np.sort(perm[n_test:])), data.subset(np.sort(perm[:n_test]))
