"""Growing one regression tree on binned data with a leaf limit: best-first, breadth-first or depth-first."""

import numpy as np
from numba import njit, prange

from .histogram import (
    N_BINS,
    build_histogram,
    build_pair_histograms,
    new_histogram,
    subtract_histogram,
)
from .splitting import CRITERIA, OLE_EXACT, find_best_split, pick

#: One record per node; leaves have ``feature == -1``. ``bin``: rows with ``binned <= bin`` go
#: left (NaN, bin 255, always right); ``threshold`` is the same split on raw values.
NODE_DTYPE = np.dtype([
    ("feature", np.int32), ("bin", np.int32), ("threshold", np.float64), ("left", np.int32),
    ("right", np.int32), ("value", np.float64), ("gain", np.float64), ("count", np.int64),
    ("sum_g", np.float64), ("sum_h", np.float64), ("depth", np.int32),
])
GROWTH = ("best_first", "breadth_first", "depth_first")


@njit(cache=True)
def _partition(binned, rows, feature, b):
    n_left = 0
    for t in range(rows.shape[0]):
        if binned[rows[t], feature] <= b:
            n_left += 1
    left = np.empty(n_left, dtype=rows.dtype)
    right = np.empty(rows.shape[0] - n_left, dtype=rows.dtype)
    a = 0
    c = 0
    for t in range(rows.shape[0]):
        r = rows[t]
        if binned[r, feature] <= b:
            left[a] = r
            a += 1
        else:
            right[c] = r
            c += 1
    return left, right


@njit(cache=True)
def _pair_sides(member, pi, pj):
    """Per pair: 0 when both documents are marked in ``member``, 1 when neither is, 2 when the
    pair crosses (one each)."""
    side = np.empty(pi.shape[0], dtype=np.int8)
    for t in range(pi.shape[0]):
        a = member[pi[t]]
        b = member[pj[t]]
        side[t] = 0 if (a and b) else (2 if (a or b) else 1)
    return side


def _split_pairs(member, pairs):
    """The pairs inside the marked rows, outside them, and crossing: three ``(i, j, h)`` tuples."""
    side = _pair_sides(member, pairs[0], pairs[1])
    return tuple(tuple(x[side == k] for x in pairs) for k in range(3))


class _Node:
    __slots__ = ("rows", "G", "H", "N", "H_exact", "depth", "hist", "pairs", "phist", "split", "id")


class TreeGrower:
    """Grow one tree from per-row gradients ``g`` and Hessians ``h`` on ``binned`` data.

    Parameters
    ----------
    binned : uint8 array (n_rows, n_features), column-major
    n_bins : int array (n_features,), bins per feature (without the NaN bin)
    g, h : float64 arrays (n_rows,)
    rows : int64 array, the rows this tree is fitted on (a query subsample, or all)
    criterion : {"se", "ole", "ole_exact"}
    growth : {"best_first", "breadth_first", "depth_first"}
        Which splittable leaf is split next until ``num_leaves``: the one of largest gain
        (LightGBM's leaf-wise); level by level, left to right (the paper's width-first); or
        always the most recent left child first (depth-first).
    leaf_value : {"newton", "mean"}
        ``−G/(H+λ)`` (Burges' γ = Σλ/Σw) or ``−G/N`` (plain least-squares MART).
    leaf_hessian : {"diagonal", "exact"}
        With pairs: the exact pair-aware Hessian in the Newton step (falls back to the diagonal
        one when the exact Hessian is below ``min_sum_hessian_in_leaf``).
    pairs : (i, j, h) arrays, optional
        Per-pair Hessian terms for ``"ole_exact"``.
    feature_mask : bool array, optional
        Features this tree may split on (column subsampling).
    """

    def __init__(self, binned, n_bins, g, h, rows, *, num_leaves=31, criterion="ole", growth="best_first",
                 min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0, max_depth=None,
                 leaf_value="newton", leaf_hessian="diagonal", pairs=None, feature_mask=None):
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {tuple(CRITERIA)}, got {criterion!r}")
        if growth not in GROWTH:
            raise ValueError(f"growth must be one of {GROWTH}, got {growth!r}")
        if num_leaves < 2:
            raise ValueError(f"num_leaves must be >= 2, got {num_leaves}")
        if CRITERIA[criterion] == OLE_EXACT and pairs is None:
            raise ValueError("criterion='ole_exact' needs the per-pair Hessians (a lambda objective)")
        self.binned, self.n_bins, self.g, self.h = binned, n_bins, g, h
        self.rows = rows
        self.num_leaves, self.criterion, self.growth = num_leaves, CRITERIA[criterion], growth
        self.min_data, self.min_hess, self.lam = float(min_data_in_leaf), float(min_sum_hessian_in_leaf), float(lambda_l2)
        self.max_depth = max_depth
        self.leaf_value, self.leaf_hessian = leaf_value, leaf_hessian
        self.pairs = pairs
        self.exact = self.criterion == OLE_EXACT or (leaf_hessian == "exact" and pairs is not None)
        n_features = binned.shape[1]
        self.feature_mask = np.ones(n_features, dtype=np.bool_) if feature_mask is None else feature_mask
        self._gain = np.empty(n_features)
        self._bin = np.empty(n_features, dtype=np.int64)
        self._member = np.zeros(binned.shape[0], dtype=np.bool_) if self.exact else None
        self._empty_pairs = np.zeros((1, 1))

    def _make_node(self, rows, depth, hist, pairs, phist=None):
        node = _Node()
        node.rows, node.depth, node.hist, node.pairs, node.phist = rows, depth, hist, pairs, phist
        node.G = float(self.g[rows].sum())
        node.H = float(self.h[rows].sum())
        node.N = float(rows.shape[0])
        node.H_exact = node.H - 2.0 * float(pairs[2].sum()) if pairs is not None else node.H
        node.split = None
        if self.max_depth is None or depth < self.max_depth:
            node.split = self._best_split(node)
        return node

    def _best_split(self, node):
        if node.N < 2 * self.min_data or node.H < 2 * self.min_hess:
            return None
        if self.criterion == OLE_EXACT:
            if node.phist is None:
                node.phist = self._pair_histograms(node.pairs)
            pmax, pmin = node.phist
            h_parent = node.H_exact
        else:
            pmax = pmin = self._empty_pairs
            h_parent = node.H
        find_best_split(node.hist, self.n_bins, self.feature_mask, node.G, node.H, node.N, h_parent,
                        self.criterion, self.lam, self.min_data, self.min_hess, pmax, pmin, self._gain, self._bin)
        gain, feature, b = pick(self._gain, self._bin)
        if feature < 0:
            return None
        return gain, int(feature), int(b)

    def _pair_histograms(self, pairs):
        pmax = np.empty((self.binned.shape[1], N_BINS))
        pmin = np.empty_like(pmax)
        build_pair_histograms(self.binned, pairs[0], pairs[1], pairs[2], pmax, pmin)
        return pmax, pmin

    def _children_pairs(self, left_rows, node):
        """The children's pairs and, where it is cheaper, their pair histograms.

        The pair histograms of a node are those of its two children plus those of the pairs
        crossing the split, so the child with more pairs can be had by subtraction from the
        parent's at the cost of the smaller child and the crossing pairs, whenever the crossing
        pairs are fewer than the larger child's (typical of a split that cuts off a few rows).
        """
        if not self.exact:
            return None, None, None, None
        self._member[left_rows] = True
        left, right, cross = _split_pairs(self._member, node.pairs)
        self._member[left_rows] = False
        if node.phist is None:  # only exact OLE keeps pair histograms
            return left, right, None, None
        n_left, n_right, n_cross = left[0].shape[0], right[0].shape[0], cross[0].shape[0]
        if n_cross >= max(n_left, n_right):
            return left, right, None, None
        small_is_left = n_left <= n_right
        small = self._pair_histograms(left if small_is_left else right)
        crossing = self._pair_histograms(cross)
        large = node.phist  # the parent's buffers become the larger child's
        for a, b, c in zip(large, small, crossing):
            a -= b
            a -= c
        return (left, right, small, large) if small_is_left else (left, right, large, small)

    def grow(self):
        """Return the tree as a ``NODE_DTYPE`` array (node 0 is the root)."""
        n_features = self.binned.shape[1]
        hist = new_histogram(n_features)
        build_histogram(self.binned, self.rows, self.g, self.h, hist)
        root_pairs = None
        if self.exact:
            self._member[self.rows] = True
            root_pairs = _split_pairs(self._member, self.pairs)[0]
            self._member[self.rows] = False
        nodes = [self._make_node(self.rows, 0, hist, root_pairs)]
        records = [None]
        children = {}
        order = [0]  # frontier: node ids, policy decides which to split
        n_leaves = 1
        while n_leaves < self.num_leaves:
            candidates = [i for i in order if nodes[i].split is not None]
            if not candidates:
                break
            if self.growth == "best_first":
                nid = max(candidates, key=lambda i: (nodes[i].split[0], -i))
            elif self.growth == "breadth_first":
                nid = min(candidates, key=lambda i: (nodes[i].depth, i))
            else:  # depth_first: the most recently created node first (left before right)
                nid = candidates[-1]
            node = nodes[nid]
            gain, feature, b = node.split
            left_rows, right_rows = _partition(self.binned, node.rows, feature, b)
            small, large = (left_rows, right_rows) if left_rows.shape[0] <= right_rows.shape[0] else (right_rows, left_rows)
            h_small = new_histogram(n_features)
            build_histogram(self.binned, small, self.g, self.h, h_small)
            h_large = node.hist  # reuse the parent's buffer: parent − small
            subtract_histogram(node.hist, h_small, h_large)
            hl, hr = (h_small, h_large) if small is left_rows else (h_large, h_small)
            lp, rp, lph, rph = self._children_pairs(left_rows, node)
            node.hist = None
            node.phist = None
            left = self._make_node(left_rows, node.depth + 1, hl, lp, lph)
            right = self._make_node(right_rows, node.depth + 1, hr, rp, rph)
            nodes += [left, right]
            records.append(None)
            records.append(None)
            children[nid] = (len(nodes) - 2, len(nodes) - 1)
            order.remove(nid)
            if self.growth == "depth_first":
                order += [len(nodes) - 1, len(nodes) - 2]  # left child is split next
            else:
                order += [len(nodes) - 2, len(nodes) - 1]
            n_leaves += 1
        return self._to_array(nodes, children)

    def _leaf_value(self, node):
        if self.leaf_value == "mean":
            return -node.G / node.N if node.N > 0 else 0.0
        H = node.H
        if self.leaf_hessian == "exact" and self.exact and node.H_exact > self.min_hess:
            H = node.H_exact
        d = H + self.lam
        return -node.G / d if d > 0 else 0.0

    def _to_array(self, nodes, children):
        tree = np.zeros(len(nodes), dtype=NODE_DTYPE)
        for i, node in enumerate(nodes):
            rec = tree[i]
            rec["count"], rec["sum_g"], rec["sum_h"], rec["depth"] = node.N, node.G, node.H, node.depth
            if i in children:
                gain, feature, b = node.split
                rec["feature"], rec["bin"], rec["gain"] = feature, b, gain
                rec["left"], rec["right"] = children[i]
                rec["value"] = np.nan
            else:
                rec["feature"], rec["bin"], rec["left"], rec["right"] = -1, -1, -1, -1
                rec["value"] = self._leaf_value(node)
        return tree


@njit(cache=True, parallel=True)
def predict_binned(trees_feature, trees_bin, trees_left, trees_right, trees_value, offsets, binned, out):
    """Add every tree's leaf value to ``out`` for each row of ``binned`` (trees concatenated)."""
    n = binned.shape[0]
    for r in prange(n):
        total = 0.0
        for t in range(offsets.shape[0] - 1):
            node = offsets[t]
            base = offsets[t]
            while trees_feature[node] >= 0:
                if binned[r, trees_feature[node]] <= trees_bin[node]:
                    node = base + trees_left[node]
                else:
                    node = base + trees_right[node]
            total += trees_value[node]
        out[r] += total
