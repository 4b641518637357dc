"""YetiRank kernels: the generator, hand-computed queries, a brute-force oracle on the same draws,
and bit-identical results at 1 and 2 threads and with numba off."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lambda_objectives._kernels import yetirank as yk


def _run(s, y, ptr, seed=0, rnd=0, permutations=10, decay=0.85, mode=yk.CLASSIC, weights=None, noise=yk.GUMBEL,
         noise_power=1.0, top=-1, neighbors=1):
    n = len(s)
    g, h = np.empty(n), np.empty(n)
    w = np.ones(len(ptr) - 1) if weights is None else np.asarray(weights, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):  # the generator wraps by design (numba off: numpy warns)
        yk.yetirank_driver(np.asarray(s, float), np.asarray(y, float), np.asarray(ptr, np.int64), w,
                           np.uint64(seed), np.uint64(rnd), permutations, decay, mode, noise, noise_power, top,
                           neighbors, g, h)
    return g, h


@pytest.mark.kernel
def test_mix64_is_splitmix64():
    # the published splitmix64 sequence for seed 1234567 (state += golden, then the finaliser)
    state = 1234567
    want = [6457827717110365317, 3203168211198807973, 9817491932198370423]
    with np.errstate(over="ignore"):
        for k, w in enumerate(want, start=1):
            z = np.uint64((state + k * 0x9E3779B97F4A7C15) % 2 ** 64)
            assert int(yk.mix64(z)) == w


@pytest.mark.kernel
def test_uniforms_lie_on_the_float32_grid_in_zero_one_and_look_uniform():
    with np.errstate(over="ignore"):
        key = np.uint64(yk.query_key(np.uint64(5), np.uint64(0), np.uint64(0)))  # numba returns a Python int
        u = np.array([yk.uniform32(key, np.uint64(c)) for c in range(4000)], dtype=np.float64)
    assert np.all((u >= 0) & (u < 1)) and np.all(u * 2 ** 24 == np.floor(u * 2 ** 24))
    assert abs(u.mean() - 0.5) < 4 * np.sqrt(1 / 12 / u.size)
    assert np.unique(u).size > 3990


@pytest.mark.kernel
@pytest.mark.parametrize("mode", [yk.CLASSIC, yk.NDCG])
def test_two_documents_have_one_pair_whatever_the_draw(mode):
    s, y = np.array([0.3, -0.4]), np.array([0.0, 2.0])
    g, h = _run(s, y, [0, 2], seed=11, mode=mode)
    w = 0.15 * 2.0 if mode == yk.CLASSIC else 2.0 * (1.0 - 1.0 / np.log2(3.0)) / 2.0  # |ΔDCG|/IDCG, IDCG = 2
    p = 1.0 / (1.0 + np.exp(s[1] - s[0]))  # document 1 is the better one
    np.testing.assert_allclose(g, [w * p, -w * p], rtol=1e-14)
    np.testing.assert_allclose(h, [w * p * (1 - p)] * 2, rtol=1e-14)


@pytest.mark.kernel
def test_single_documents_and_equal_labels_get_zero_and_weights_scale():
    s = np.array([0.5, 0.1, 0.2, 0.9, -1.0, 0.3])
    y = np.array([1.0, 2.0, 2.0, 2.0, 0.0, 1.0])
    ptr = [0, 1, 4, 6]
    g, h = _run(s, y, ptr)
    assert np.all(g[:4] == 0) and np.all(h[:4] == 0) and np.any(g[4:] != 0)
    g2, h2 = _run(s, y, ptr, weights=[1.0, 1.0, 2.5])
    np.testing.assert_allclose(g2, 2.5 * g, rtol=1e-15)
    np.testing.assert_allclose(h2, 2.5 * h, rtol=1e-15)


def _oracle(s, y, key, permutations, decay, mode):
    """One query written out with numpy: the same draws, a stable descending sort, neighbour pairs."""
    m = s.size
    g, h = np.zeros(m), np.zeros(m)
    idcg = np.sum(np.sort(y)[::-1] / np.log2(np.arange(m) + 2.0))
    with np.errstate(over="ignore", divide="ignore"):
        for r in range(permutations):
            u = np.array([yk.uniform32(key, np.uint64(r * m + i)) for i in range(m)], dtype=np.float32)
            noisy = s + np.log((u / (np.float32(1.000001) - u)).astype(np.float64))
            o = np.argsort(-noisy, kind="stable")
            for t in range(1, m):
                a, b = o[t - 1], o[t]
                if y[a] == y[b]:
                    continue
                if mode == yk.CLASSIC:
                    w = 0.15 * decay ** (t - 1) * abs(y[a] - y[b])
                else:
                    w = abs((y[a] - y[b]) * (1 / np.log2(t + 1) - 1 / np.log2(t + 2))) / idcg
                hi, lo = (a, b) if y[a] > y[b] else (b, a)
                p = 1 / (1 + np.exp(s[hi] - s[lo]))
                g[hi] -= w * p / permutations
                g[lo] += w * p / permutations
                h[[hi, lo]] += w * p * (1 - p) / permutations
    return g, h


@pytest.mark.kernel
@pytest.mark.parametrize("mode", [yk.CLASSIC, yk.NDCG])
def test_kernel_matches_a_numpy_oracle_on_the_same_draws(mode):
    rng = np.random.default_rng(4)
    sizes = [9, 1, 14, 6]
    ptr = np.r_[0, np.cumsum(sizes)]
    s = rng.normal(size=ptr[-1])
    y = rng.integers(0, 4, ptr[-1]).astype(float)
    y[3] = 1.5  # real-valued labels are allowed
    g, h = _run(s, y, ptr, seed=3, rnd=7, permutations=5, decay=0.9, mode=mode)
    for q in range(len(sizes)):
        a, b = ptr[q], ptr[q + 1]
        with np.errstate(over="ignore"):
            key = np.uint64(yk.query_key(np.uint64(3), np.uint64(7), np.uint64(q)))  # numba returns a Python int
        go, ho = _oracle(s[a:b], y[a:b], key, 5, 0.9, mode)
        np.testing.assert_allclose(g[a:b], go, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h[a:b], ho, rtol=1e-12, atol=1e-15)


@pytest.mark.kernel
def test_draws_change_with_seed_round_and_query_only():
    s = np.tile(np.linspace(0, 1, 12), 2)
    y = np.tile(np.arange(12) % 3, 2).astype(float)
    ptr = [0, 12, 24]
    g, _ = _run(s, y, ptr, seed=1, rnd=2)
    np.testing.assert_array_equal(g, _run(s, y, ptr, seed=1, rnd=2)[0])
    assert not np.array_equal(g[:12], g[12:])  # same data, different query index: other draws
    assert not np.array_equal(g, _run(s, y, ptr, seed=2, rnd=2)[0])
    assert not np.array_equal(g, _run(s, y, ptr, seed=1, rnd=3)[0])


def _many_queries():
    rng = np.random.default_rng(8)
    sizes = rng.integers(1, 60, 200)
    ptr = np.r_[0, np.cumsum(sizes)]
    return rng.normal(size=ptr[-1]), rng.integers(0, 5, ptr[-1]).astype(float), ptr


@pytest.mark.parametrize("kw", [{}, {"mode": yk.MRR, "neighbors": -1, "noise": yk.GAUSS, "noise_power": 0.5},
                                {"mode": yk.MAP, "neighbors": 3, "top": 10}, {"mode": yk.ERR, "neighbors": 2},
                                {"mode": yk.DCG, "top": 5, "noise": yk.NO_NOISE}])
def test_bit_identical_at_one_and_two_threads(kw):
    from lambda_objectives import numba_threads

    s, y, ptr = _many_queries()
    if kw.get("mode") == yk.ERR:
        y = y / 4.0  # stop probabilities
    with numba_threads(1):
        one = _run(s, y, ptr, seed=9, rnd=4, **kw)
    with numba_threads(2):
        two = _run(s, y, ptr, seed=9, rnd=4, **kw)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    assert np.any(one[0] != 0)


_NO_JIT = """
import json, sys
import numpy as np
from lambda_objectives import yetirank_gradients
rng = np.random.default_rng(8)
ptr = np.array([0, 7, 8, 20])
s, y = rng.normal(size=20), rng.integers(0, 4, 20).astype(float)
out = [yetirank_gradients(s, y, ptr, seed=5, iteration=2, mode=m) for m in ("classic", "ndcg")]
out += [yetirank_gradients(s, y / 4 if m == "err" else y, ptr, seed=5, iteration=2, mode=m, num_neighbors=-1, top=4,
                           noise="gauss", noise_power=0.7) for m in ("dcg", "mrr", "err", "map")]
print(json.dumps([[float(v).hex() for v in a] for pair in out for a in pair]))
"""


def test_bit_identical_with_numba_off():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = []
    for off in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=off, PYTHONPATH=root)
        res = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", _NO_JIT], cwd=root, env=env,
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(res.stdout))
    assert runs[0] == runs[1]
