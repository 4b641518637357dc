"""HIGH LEVEL XE-NDCG (Bruch et al., WWW 2021): gradients, Hessians and the per-round γ generator."""

import numbers

import numpy as np

from ._config import FLOAT, PTR
from ._kernels import xendcg as xk
from ._threads import numba_threads
from ._validation import check_group_ptr, check_labels, check_scores

XENDCG_PRESETS = (None, "lightgbm")

#: LightGBM's default ``objective_seed`` (config.h), used by ``rank_xendcg``.
LIGHTGBM_OBJECTIVE_SEED = 5


def _check_preset(preset):
    if preset not in XENDCG_PRESETS:
        raise ValueError(f"unknown preset {preset!r} for XE-NDCG; choose None or 'lightgbm'")
    return preset


class XENDCGGammas:
    """The γ of XE-NDCG, drawn afresh on every :meth:`draw` (call it once per boosting round).

    Parameters
    ----------
    group_ptr : array-like of int
        Query boundaries the γ are drawn for.
    seed : int
        ``preset=None``: seed of a ``numpy.random.default_rng`` that draws ``U[0, 1)`` for every
        document. ``preset="lightgbm"``: LightGBM's ``objective_seed`` (default 5); query ``q``
        gets its own ``Random(seed + q)`` exactly as ``rank_xendcg`` does, so round ``t`` of a
        booster sees the same γ as the native objective's round ``t``. (LightGBM derives
        ``objective_seed`` from ``seed`` when ``seed`` is set; pass the derived value.)
    preset : None or "lightgbm"

    A plain object, not a jitclass: the state is an int64 array (LightGBM) or a numpy Generator.
    """

    def __init__(self, group_ptr, seed=0, preset=None):
        self.preset = _check_preset(preset)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        ptr = np.asarray(group_ptr)
        self.group_ptr = check_group_ptr(ptr, int(ptr[-1]) if ptr.ndim == 1 and ptr.size else 0)
        self.seed = int(seed)
        self.rounds = 0
        n_queries = self.group_ptr.shape[0] - 1
        if preset == "lightgbm":
            # Random(int seed) stores the int in an unsigned int: wrap modulo 2^32
            self._states = (self.seed + np.arange(n_queries, dtype=np.int64)) & 0xFFFFFFFF
        else:
            self._rng = np.random.default_rng(self.seed)

    def draw(self):
        """This round's γ (float64, one per document), advancing the generator."""
        n = int(self.group_ptr[-1])
        if self.preset == "lightgbm":
            out = np.empty(n, dtype=FLOAT)
            xk.lightgbm_gammas(self._states, self.group_ptr, out)
        else:
            out = self._rng.random(n)
        self.rounds += 1
        return out


def xendcg_gradients(scores, labels, group_ptr, *, seed=0, preset=None, n_threads=None, gammas=None):
    r"""Gradient and Hessian diagonal of the XE-NDCG loss (Bruch, Zoghi, Bendersky & Najork 2021).

    Per query, ``ρ = softmax(s)``, ``φ_i = 2^{y_i} − γ_i`` with ``γ_i ~ U[0, 1)`` and

    .. math:: L = −\sum_i \frac{φ_i}{\sum_j φ_j} \log ρ_i,\qquad
              \frac{∂L}{∂s_i} = ρ_i − \frac{φ_i}{\sum_j φ_j},\qquad
              \frac{∂^2 L}{∂s_i^2} = ρ_i (1 − ρ_i).

    Queries with one document get 0. O(n) per query.

    Parameters
    ----------
    scores, labels : array-like, shape (n,)
        Finite scores; finite non-negative labels (real values allowed for ``preset=None``;
        ``preset="lightgbm"`` truncates them to int as LightGBM does and needs labels < 31,
        beyond which LightGBM's integer ``2^y`` overflows).
    group_ptr : array-like of int, shape (n_queries + 1,)
    seed : int or XENDCGGammas
        An int draws one round of γ from a fresh generator (the first boosting round). For
        training, create one :class:`XENDCGGammas` and pass it every round: it advances.
    preset : None or "lightgbm"
        ``None``: the exact gradient above, float64. ``"lightgbm"``: LightGBM 4.x
        ``objective="rank_xendcg"`` bit for bit (its three-term series gradient, float32
        accumulation, its generator; values returned as float64 holding float32 numbers).
    n_threads : int, optional
        numba threads (None or -1: all).
    gammas : array-like, shape (n,), optional
        Fixed γ in [0, 1) instead of drawing them (then ``seed`` must be left at 0).

    Returns
    -------
    grad, hess : ndarray of float64, shape (n,)
    """
    _check_preset(preset)
    s = check_scores(scores)
    n = s.shape[0]
    y = check_labels(labels, n)
    ptr = check_group_ptr(group_ptr, n)
    if preset == "lightgbm" and n and float(y.max()) >= 31:
        raise ValueError(f"preset='lightgbm' needs labels < 31 (LightGBM computes 2**int(label) in int), "
                         f"got {float(y.max())!r}; use preset=None for large or real-valued labels")
    if gammas is not None:
        if not (isinstance(seed, numbers.Integral) and seed == 0):
            raise ValueError("pass either gammas or seed, not both")
        gam = np.array(gammas, dtype=FLOAT).reshape(-1)
        if gam.shape[0] != n:
            raise ValueError(f"gammas has {gam.shape[0]} values, the data has {n} rows")
        if not np.all((gam >= 0.0) & (gam < 1.0)):
            i = int(np.flatnonzero(~((gam >= 0.0) & (gam < 1.0)))[0])
            raise ValueError(f"gammas must lie in [0, 1), row {i} is {gam[i]!r}")
    elif isinstance(seed, XENDCGGammas):
        if seed.preset != preset:
            raise ValueError(f"the XENDCGGammas was made for preset={seed.preset!r}, not {preset!r}")
        if not np.array_equal(seed.group_ptr, ptr):
            raise ValueError("the XENDCGGammas was made for different query boundaries (group_ptr)")
        gam = seed.draw()
    else:
        gam = XENDCGGammas(ptr, seed, preset).draw()
    g = np.empty(n, dtype=FLOAT)
    h = np.empty(n, dtype=FLOAT)
    code = xk.PRESET_LIGHTGBM if preset == "lightgbm" else xk.PRESET_EXACT
    with numba_threads(n_threads):
        xk.xendcg_driver(s, y, ptr.astype(PTR, copy=False), gam, code, g, h)
    if not (np.isfinite(np.sum(g)) and np.isfinite(np.sum(h))):
        # finite inputs can still overflow: 2**label beyond label 1023, or LightGBM's 1/(1 − ρ)
        # when one document takes the whole softmax mass
        i = int(np.flatnonzero(~(np.isfinite(g) & np.isfinite(h)))[0])
        raise ValueError(f"XE-NDCG gradients are not finite (first at row {i}): labels up to "
                         f"{float(y.max())!r} overflow 2**label beyond 1023, or (preset='lightgbm') one "
                         "document's softmax weight is 1 in float64 (a score gap beyond ~37)")
    return g, h
