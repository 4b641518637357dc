"""The split pair loop of long queries (lambda_objectives/_kernels/pairs.py, issue #34 item 3).

A query whose pair loop visits at least ``pairs.SPLIT_PAIRS`` pairs has its rows ``a`` cut into blocks
(``split_blocks``, ``block_bounds``) run over the threads and added in block order. The tests lower
``SPLIT_PAIRS`` and ``BLOCK_SPAN`` (read by ``lambda_gradients`` at each call) so that lists of tens of
documents are split into many blocks, cheap enough for the ``NUMBA_DISABLE_JIT=1`` pass, and check: the
same bits at 1 and 2 threads (gradient, Hessian, stored pairs, cost), the unsplit loop's result within
1e-12 relative (the sums' order is all that changes), and queries below the threshold unchanged.
"""

import numba
import numpy as np
import pytest

from lambda_objectives.objectives import LAMBDA_METRICS
from lambda_objectives import lambda_gradients
from lambda_objectives import _registry as reg
from lambda_objectives._kernels import pairs

pytestmark = pytest.mark.kernel

NEVER = np.iinfo(np.int64).max  # SPLIT_PAIRS that splits no query
THREADS = (1, min(2, numba.config.NUMBA_NUM_THREADS))
VARIANTS = [
    {},
    {"k": 5},
    {"normalize": "lambdarank"},
    {"k": 7, "normalize": "lambdarank", "weighted": True},
]


def _data(sizes, seed):
    """Web-like grades 0..4, scores with ties (rounded), per-query weights."""
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    y = rng.choice(5, size=n, p=[0.5, 0.3, 0.15, 0.04, 0.01]).astype(np.float64)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return s, y, ptr, rng.uniform(0.5, 2.0, size=len(sizes))


def _run(s, y, ptr, w, metric, n_threads, opts):
    opts = dict(opts)
    weighted = opts.pop("weighted", False)
    return lambda_gradients(s, y, ptr, metric, n_threads=n_threads, query_weights=w if weighted else None,
                            return_pairs=True, return_cost=True, **opts)


def _split(monkeypatch, split_pairs, block_span=1):
    monkeypatch.setattr(pairs, "SPLIT_PAIRS", split_pairs)
    monkeypatch.setattr(pairs, "BLOCK_SPAN", block_span)


@pytest.mark.parametrize("metric", LAMBDA_METRICS)
@pytest.mark.parametrize("opts", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "plain")
def test_long_queries_same_bits_at_any_thread_count_and_unsplit_sums(monkeypatch, metric, opts):
    # long queries (split) mixed with short ones (whole), one of one document, one without gain
    sizes = [70, 3, 1, 45, 9, 60, 2, 30]
    s, y, ptr, w = _data(sizes, seed=len(metric))
    y[ptr[6]:ptr[7]] = 0.0  # a short query whose ideal value is 0
    y[ptr[7]:ptr[8]] = 0.0  # and a long one
    code = reg.REGISTRY[metric].code
    _split(monkeypatch, 200)
    blocks = [pairs.split_blocks(code, int(n), opts.get("k", 0), 200, 1) for n in sizes]
    # long queries cut into blocks (many without k; at most k rows' worth with k), short ones whole
    assert max(blocks) > (8 if metric in ("ndcg_loss2", "ndcg_loss2pp") or "k" not in opts else 1)
    assert min(blocks) == 1
    got = {nt: _run(s, y, ptr, w, metric, nt, opts) for nt in THREADS}
    (g1, h1, p1, c1), (g2, h2, p2, c2) = got[THREADS[0]], got[THREADS[-1]]
    assert g1.tobytes() == g2.tobytes() and h1.tobytes() == h2.tobytes() and c1.tobytes() == c2.tobytes()
    for a, b in zip(p1, p2):
        assert a.tobytes() == b.tobytes()

    _split(monkeypatch, NEVER)
    g0, h0, p0, c0 = _run(s, y, ptr, w, metric, THREADS[-1], opts)
    scale = max(np.abs(g0).max(), np.abs(h0).max(), 1e-300)
    np.testing.assert_allclose(g1, g0, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(h1, h0, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(c1, c0, rtol=1e-12, atol=1e-300)
    # the same pairs in the same slots; their Hessian terms as the gradients
    np.testing.assert_array_equal(p1.ptr, p0.ptr)
    np.testing.assert_array_equal(p1.i, p0.i)
    np.testing.assert_array_equal(p1.j, p0.j)
    np.testing.assert_allclose(p1.h, p0.h, rtol=1e-12, atol=1e-12 * scale)
    # short queries take the unsplit path: the very same bits
    for q, n in enumerate(sizes):
        if blocks[q] == 1:
            rows = slice(ptr[q], ptr[q + 1])
            assert g1[rows].tobytes() == g0[rows].tobytes() and h1[rows].tobytes() == h0[rows].tobytes()
            assert c1[q] == c0[q]


@pytest.mark.parametrize("metric", ["ndcg", "err", "ndcg_loss2"])
def test_the_split_depends_on_the_query_only(monkeypatch, metric):
    # the same long query alone or among others, at the front or the back: the same bits
    _split(monkeypatch, 200)
    s, y, ptr, _ = _data([50, 4, 6], seed=3)
    alone = lambda_gradients(s[:50], y[:50], [0, 50], metric, n_threads=THREADS[-1])
    mixed = lambda_gradients(s, y, ptr, metric, n_threads=THREADS[0])
    back = lambda_gradients(np.concatenate([s[50:], s[:50]]), np.concatenate([y[50:], y[:50]]), [0, 4, 10, 60],
                            metric, n_threads=THREADS[-1])
    for a, b, c in zip(alone, mixed, back):
        assert a.tobytes() == b[:50].tobytes() == c[10:].tobytes()


def test_split_blocks_and_bounds():
    # queries below split_pairs pairs run whole; at most MAX_BLOCKS and a_end blocks; top-k rows only
    ndcg, loss2 = reg.REGISTRY["ndcg"].code, reg.REGISTRY["ndcg_loss2"].code
    assert pairs.split_blocks(ndcg, 2000, 0, pairs.SPLIT_PAIRS, pairs.BLOCK_SPAN) == 1
    assert pairs.split_blocks(ndcg, 20000, 0, pairs.SPLIT_PAIRS, pairs.BLOCK_SPAN) == pairs.MAX_BLOCKS
    assert pairs.split_blocks(ndcg, 20000, 10, pairs.SPLIT_PAIRS, pairs.BLOCK_SPAN) == 1  # @10: 2e5 pairs
    assert pairs.split_blocks(ndcg, 10**6, 10, pairs.SPLIT_PAIRS, pairs.BLOCK_SPAN) == 2  # 1e7 pairs, 2 blocks
    assert pairs.split_blocks(ndcg, 50, 1, 1, 1) == 1  # one row: nothing to split
    assert pairs.split_blocks(ndcg, 50, 3, 1, 1) == 2
    assert pairs.split_blocks(loss2, 50, 3, 1, 1) == 24  # LambdaLoss@K as published: every row
    assert pairs.split_blocks(ndcg, 1, 0, 1, 1) == pairs.split_blocks(ndcg, 0, 0, 1, 1) == 1
    for n, a_end, nb in [(20000, 20000, 32), (100, 100, 7), (100, 10, 4), (5, 3, 3), (9, 2, 2), (40, 40, 32)]:
        bounds = pairs.block_bounds(n, a_end, nb)
        assert bounds[0] == 0 and bounds[-1] == a_end and np.all(np.diff(bounds) >= 0)
        work = np.array([sum(n - 1 - a for a in range(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])])
        assert work.sum() == a_end * (n - 1) - a_end * (a_end - 1) // 2
        # each block about 1/nb of the pairs: off by less than one row's partners
        assert np.all(np.abs(work - work.sum() / nb) <= n)


def test_block_slots_bound_each_blocks_pairs():
    rng = np.random.default_rng(0)
    lr = rng.choice(3, size=40).astype(np.float64)
    bounds = pairs.block_bounds(40, 40, 6)
    slots = pairs.block_slots(lr, bounds)
    for j in range(6):
        want = sum(int(lr[a] != lr[b]) for a in range(bounds[j], bounds[j + 1]) for b in range(a + 1, 40))
        assert slots[j + 1] - slots[j] == want
