"""Benchmark: our PL-Rank-3 kernel (gradient + Hessian, ``plrank_gradients``) against the published
algorithm as a numpy per-query loop.

The peer, :func:`numpy_plrank`, is "numpy per-query loop, the published algorithm": Kang et al. (SIGIR
2024) publish PL-Rank-3 with its Hessian as an XGBoost custom objective that loops over the queries in
Python and vectorises each query's samples in numpy (Gumbel scores, ``argpartition`` for the top K,
cumulative sums over positions). It is written here from the formulas of docs/math.md in that style (one
set of rankings for both derivatives, as ours; the published code draws a second set for the Hessian, so
it costs about twice this peer). Both run on the same data in the same run: web-like queries
(``make_ranking``, 5–120 documents), K = 10, 200 rankings per query. Ours at 1 and 2 threads (numba),
the peer single-threaded (numpy); min and median over repeats, measured in turn. The peer's
estimates are checked against ours (means over rounds agree within sampling error, ``max_abs_z``).

Run: ``python -m comparisons.bench.plrank [--quick]``.
"""

import argparse
import json

import numpy as np

from lambda_objectives import make_ranking, numba_threads, plrank_gradients
from lambda_objectives._kernels.plrank import SPAN
from lambda_objectives._kernels.ranking import document_gains

from . import THREADS, interleaved, ratio
from .._machine import machine_record


def numpy_plrank(scores, gains, k, n_samples, rng):
    """One query's ``(−g, −h)`` of PL-Rank-3 with its Hessian, vectorised over the samples in numpy."""
    n = scores.shape[0]
    if n <= 1:
        return np.zeros(n), np.zeros(n)
    kk = min(k, n)
    e = np.exp(np.maximum(scores - scores.max(), -SPAN))
    noisy = np.log(e)[None, :] + rng.gumbel(size=(n_samples, n))
    rows = np.arange(n_samples)[:, None]
    part = np.argpartition(-noisy, kk - 1, axis=1)[:, :kk] if kk < n else np.tile(np.arange(n), (n_samples, 1))
    top = part[rows, np.argsort(-noisy[rows, part], axis=1, kind="stable")]
    disc = 1.0 / np.log2(np.arange(kk) + 2.0)
    unplaced = np.ones((n_samples, n), dtype=bool)
    unplaced[rows, top] = False
    et = e[top]
    denom = (e[None, :] * unplaced).sum(1)[:, None] + np.cumsum(et[:, ::-1], axis=1)[:, ::-1]
    pr = np.cumsum((gains[top] * disc)[:, ::-1], axis=1)[:, ::-1]
    pr_next = np.concatenate([pr[:, 1:], np.zeros((n_samples, 1))], axis=1)
    q = 1.0 / denom
    c1, dr, ri = np.cumsum(q, 1), np.cumsum(disc * q, 1), np.cumsum(pr * q, 1)
    dr2, ri2 = np.cumsum(disc * q * q, 1), np.cumsum(pr * q * q, 1)
    sp = e * (gains * dr[:, -1:] - ri[:, -1:])  # every document as if unplaced ...
    g = sp.copy()
    h = sp * (1.0 - e * c1[:, -1:]) - e * e * (gains * dr2[:, -1:] - ri2[:, -1:])
    sp_top = et * (gains[top] * dr - ri)  # ... then the placed ones at their positions
    g_top = pr_next + sp_top
    g[rows, top] = g_top
    h[rows, top] = g_top * (1.0 - et * c1) + sp_top - et * et * (gains[top] * dr2 - ri2)
    return -g.mean(0), -h.mean(0)


def numpy_plrank_all(scores, labels, group_ptr, k, n_samples, seed):
    """The per-query loop over :func:`numpy_plrank` (gain ``2**label − 1``)."""
    rng = np.random.default_rng(seed)
    gains = document_gains(labels, "exp")
    grad, hess = np.zeros(scores.shape[0]), np.zeros(scores.shape[0])
    for a, b in zip(group_ptr[:-1], group_ptr[1:]):
        grad[a:b], hess[a:b] = numpy_plrank(scores[a:b], gains[a:b], k, n_samples, rng)
    return grad, hess


def _agreement(s, y, ptr, k, rounds=30):
    """max |z| of (our mean − the peer's mean) over documents, each side averaged over ``rounds`` rounds."""
    ours = np.array([plrank_gradients(s, y, ptr, k=k, iteration=r, hessian="raw")[0] for r in range(rounds)])
    peer = np.array([numpy_plrank_all(s, y, ptr, k, 200, r)[0] for r in range(rounds)])
    se = np.sqrt((ours.var(0, ddof=1) + peer.var(0, ddof=1)) / rounds)
    keep = se > 0
    return float(np.max(np.abs(ours.mean(0) - peer.mean(0))[keep] / se[keep]))


def run(quick=False):
    n_queries, repeats, k, n_samples = (100, 3, 10, 200) if quick else (1000, 5, 10, 200)
    d = make_ranking(n_queries, seed=0)
    s = np.random.default_rng(1).normal(size=d.y.shape[0])
    y, ptr = d.y.astype(np.float64), d.group_ptr
    fns = {"numpy per-query loop, the published algorithm": lambda: numpy_plrank_all(s, y, ptr, k, n_samples, 0)}
    for t in THREADS:
        def ours(t=t):
            with numba_threads(t):
                plrank_gradients(s, y, ptr, k=k, n_samples=n_samples, seed=0)
        ours()  # compile and warm up outside the timings
        fns[f"ours, {t} thread{'s' if t > 1 else ''}"] = ours
    fns[next(iter(fns))]()
    times = interleaved(fns, repeats)
    peer = times["numpy per-query loop, the published algorithm"]
    rows = [{"threads": t, "ours_s_min": times[name]["min"], "ours_s_median": times[name]["median"],
             "peer_s_min": peer["min"], "peer_s_median": peer["median"],
             "peer_over_ours_min": ratio(peer, times[name])["min"],
             "peer_over_ours_median": ratio(peer, times[name])["median"]}
            for t, name in zip(THREADS, [n for n in fns if n.startswith("ours")])]
    small = make_ranking(20, seed=3)
    s_small = np.random.default_rng(2).normal(size=small.y.shape[0])
    return {"machine": machine_record(), "queries": int(d.n_queries), "rows": int(y.shape[0]), "k": k,
            "n_samples": n_samples, "repeats": repeats,
            "peer": "numpy per-query loop, the published algorithm (one sample set for g and h)",
            "runs": rows,
            "max_abs_z_ours_vs_peer": _agreement(s_small, small.y.astype(np.float64), small.group_ptr, k)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    print(json.dumps(run(p.parse_args(argv).quick), indent=2, default=float))


if __name__ == "__main__":
    main()
