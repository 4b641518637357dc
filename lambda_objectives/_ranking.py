"""Shared low-level pieces of every kernel: the stable ranking, gain tables and discounts.

Conventions (one place, every metric and lambda kernel uses them):

* ranking: scores descending; ties keep input order (a stable sort), as LightGBM's
  ``std::stable_sort`` and XGBoost's ``StableSort`` do;
* positions are 0-based inside kernels; the discount of position ``r`` (0-based) is
  ``1 / log2(r + 2)``, i.e. ``1 / log2(rank + 1)`` for the 1-based rank;
* gains are precomputed per document in the Python layer and passed in as float64 arrays,
  so one kernel serves exponential, linear and table gains.
"""

import numpy as np
from numba import njit

from ._config import FLOAT

_INSERTION_MAX = 48  # below this an insertion sort beats argsort's negation copy and merge buffers


@njit(cache=True)
def stable_order_desc(s):
    """Indices that sort ``s`` descending, ties in input order (stable)."""
    n = s.shape[0]
    if n > _INSERTION_MAX:
        return np.argsort(-s, kind="mergesort")
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        v = s[i]
        j = i
        # strict comparison: an equal score never overtakes an earlier one (stability)
        while j > 0 and s[order[j - 1]] < v:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    return order


def discount_table(n):
    """``D[r] = 1/log2(r + 2)`` for 0-based positions ``r < n`` (float64)."""
    return 1.0 / np.log2(np.arange(n, dtype=FLOAT) + 2.0)


def gain_table(kind="exp", label_gain=None, max_label=None):
    """Return the per-grade gain table ``G[label]`` as float64.

    ``kind="exp"``: ``2**label - 1``; ``"linear"``: ``label``; ``label_gain``: a user table
    (overrides ``kind``; must be finite and non-negative). ``max_label`` sizes the generated table.
    """
    if label_gain is not None:
        g = np.ascontiguousarray(np.asarray(label_gain, dtype=FLOAT).ravel())
        if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ValueError("label_gain must be a non-empty table of finite, non-negative gains")
        return g
    top = int(max_label) if max_label is not None else 31
    grades = np.arange(top + 1, dtype=FLOAT)
    if kind == "exp":
        return np.exp2(grades) - 1.0
    if kind == "linear":
        return grades
    raise ValueError(f"gain must be 'exp' or 'linear' (or pass label_gain), got {kind!r}")


def document_gains(labels, kind="exp", label_gain=None):
    """Per-document gains for integer-valued float64 ``labels`` (already validated >= 0, whole).

    Raises ``ValueError`` when a label has no entry in ``label_gain``.
    """
    if label_gain is None:
        if kind == "exp":
            with np.errstate(over="ignore"):  # callers check for inf and name the label
                return np.exp2(labels) - 1.0
        if kind == "linear":
            return labels.copy()
        raise ValueError(f"gain must be 'exp' or 'linear' (or pass label_gain), got {kind!r}")
    table = gain_table(label_gain=label_gain)
    if labels.size and labels.max() >= table.shape[0]:
        i = int(np.argmax(labels >= table.shape[0]))
        raise ValueError(
            f"label {labels[i]:g} at row {i} has no entry in label_gain (table has {table.shape[0]} grades)"
        )
    return table[labels.astype(np.int64)]
