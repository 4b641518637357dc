"""Brute-force, pure-Python definitions the kernels are tested against.

Written for clarity, not speed: each metric is computed from its textbook definition on one
query, and the lambda oracle *literally swaps* two documents in the ranked list and recomputes
the metric. Conventions (the package's, see ``lambda_objectives/_ranking.py``):

* ranking: scores descending, ties by input position (stable);
* NDCG@k: gain ``2**l - 1`` (or linear, or a ``label_gain`` table), discount ``1/log2(rank+1)``
  (1-based rank), normalised by the ideal DCG@k; ``ideal_zero`` when the ideal DCG is 0;
* ERR@k (Chapelle et al. 2009): ``R = (2**l - 1) / 2**max_label``,
  ``ERR = sum_r R_r/r * prod_{t<r}(1 - R_t)``;
* AP@k (trec_eval map_cut): relevant means ``label > threshold``;
  ``AP@k = (1/R) * sum_{r<=k, rel} precision@r``, ``R`` = relevant documents of the query; 0 if R=0;
* RR@k: ``1/rank`` of the first relevant document within k, else 0.
"""

import functools
import math


def ranking(scores):
    """0-based document indices in rank order: scores descending, ties by input position."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _gain(label, gain="exp", label_gain=None):
    if label_gain is not None:
        return float(label_gain[int(label)])
    return 2.0 ** label - 1.0 if gain == "exp" else float(label)


def _cut(n, k):
    return n if k is None else min(n, k)


def dcg_of_order(labels_in_order, k=None, gain="exp", label_gain=None):
    """DCG@k of labels already in rank order."""
    return sum(
        _gain(labels_in_order[r], gain, label_gain) / math.log2(r + 2)
        for r in range(_cut(len(labels_in_order), k))
    )


def ndcg_of_order(labels_in_order, k=None, gain="exp", label_gain=None, ideal_zero=1.0):
    """NDCG@k of labels in rank order; ``ideal_zero`` when the ideal DCG@k is 0."""
    ideal_order = sorted(labels_in_order, key=lambda l: -_gain(l, gain, label_gain))
    ideal = dcg_of_order(ideal_order, k, gain, label_gain)
    if ideal == 0.0:
        return ideal_zero
    return dcg_of_order(labels_in_order, k, gain, label_gain) / ideal


def err_of_order(labels_in_order, k=None, max_label=None):
    """ERR@k of labels in rank order, ``R = (2**l - 1) / 2**max_label``."""
    if max_label is None:
        max_label = max(labels_in_order, default=0)
    total, not_stopped = 0.0, 1.0
    for r in range(_cut(len(labels_in_order), k)):
        R = (2.0 ** labels_in_order[r] - 1.0) / 2.0 ** max_label
        total += not_stopped * R / (r + 1)
        not_stopped *= 1.0 - R
    return total


def ap_of_order(labels_in_order, k=None, threshold=0.0):
    """AP@k (trec_eval map_cut): divides by all relevant documents of the query."""
    rel = [1 if l > threshold else 0 for l in labels_in_order]
    n_rel = sum(rel)
    if n_rel == 0:
        return 0.0
    hits, total = 0, 0.0
    for r in range(_cut(len(rel), k)):
        if rel[r]:
            hits += 1
            total += hits / (r + 1)
    return total / n_rel


def rr_of_order(labels_in_order, k=None, threshold=0.0):
    """RR@k: 1/rank of the first relevant document within the cutoff, else 0."""
    for r in range(_cut(len(labels_in_order), k)):
        if labels_in_order[r] > threshold:
            return 1.0 / (r + 1)
    return 0.0


def metric_of_order(labels_in_order, metric, k=None, **opts):
    """Dispatch by metric name ("ndcg", "dcg", "err", "map", "mrr") on labels in rank order."""
    if metric == "ndcg":
        return ndcg_of_order(labels_in_order, k, opts.get("gain", "exp"), opts.get("label_gain"),
                             opts.get("ideal_zero", 1.0))
    if metric == "dcg":
        return dcg_of_order(labels_in_order, k, opts.get("gain", "exp"), opts.get("label_gain"))
    if metric == "err":
        return err_of_order(labels_in_order, k, opts.get("max_label"))
    if metric == "map":
        return ap_of_order(labels_in_order, k, opts.get("threshold", 0.0))
    if metric == "mrr":
        return rr_of_order(labels_in_order, k, opts.get("threshold", 0.0))
    raise ValueError(metric)


def metric_of_query(scores, labels, metric, k=None, **opts):
    """The metric of one query scored by ``scores``."""
    order = ranking(scores)
    return metric_of_order([labels[i] for i in order], metric, k, **opts)


def swap_delta(scores, labels, a, b, metric, k=None, **opts):
    """|metric(after swapping the rank positions of docs a and b) - metric(now)|, by recomputation."""
    order = ranking(scores)
    ranked = [labels[i] for i in order]
    pa, pb = order.index(a), order.index(b)
    swapped = list(ranked)
    swapped[pa], swapped[pb] = swapped[pb], swapped[pa]
    return abs(metric_of_order(swapped, metric, k, **opts) - metric_of_order(ranked, metric, k, **opts))


LAMBDALOSS = ("ndcg_loss2", "ndcg_loss2pp", "ndcg_loss2_top", "ndcg_loss2pp_top", "label_diff", "gain_diff")
#: the published LambdaLoss@K forms every pair; the others only pairs with a document in the top k
ALL_PAIRS = ("ndcg_loss2", "ndcg_loss2pp")


@functools.lru_cache(maxsize=64)
def _ranks(scores):
    """1-based rank of every document (cached: the pair oracles ask once per pair)."""
    return {d: p + 1 for p, d in enumerate(ranking(scores))}


@functools.lru_cache(maxsize=64)
def _ideal_dcg(labels, k, gain, label_gain):
    ideal = sorted((_gain(v, gain, label_gain) for v in labels), reverse=True)
    return sum(g / math.log2(1 + p) for p, g in enumerate(ideal[:_cut(len(labels), k)], start=1))


def lambdaloss_weight(scores, labels, i, j, metric, k=None, mu=10.0, gain="exp", label_gain=None, **_):
    """The LambdaLoss-family pair weight of documents i, j from its definition, 1-based ranks.

    Wang et al. (CIKM 2018), ``D(x) = log2(1 + x)``, ranks ``r`` by the current scores:
    NDCG-Loss2 ``|G_i − G_j| δ_ij / IDCG`` with ``δ_ij = |1/D(|r_i − r_j|) − 1/D(|r_i − r_j| + 1)|``;
    NDCG-Loss2++ ``|G_i − G_j| (ρ_ij + μ δ_ij) / IDCG`` with ``ρ_ij = |1/D(r_i) − 1/D(r_j)|``.
    LambdaLoss@K (Jagerman et al. SIGIR 2022; TF-Ranking V2) with ``k``: every pair; ``δ`` times
    ``1/(1 − 1/D(max(r_i, r_j)))`` when ``max(r_i, r_j) > k``; ``1/D(r)`` taken as 0 in ``ρ`` for
    ``r > k``; IDCG@k. The ``_top`` forms (ours) and ``label_diff`` / ``gain_diff``: 0 unless
    ``min(r_i, r_j) <= k``. ``label_diff``: ``|y_i − y_j|``; ``gain_diff``: ``|G_i − G_j|``.
    """
    r = _ranks(tuple(scores))
    ri, rj = r[i], r[j]
    if k is not None and min(ri, rj) > k and metric not in ALL_PAIRS:
        return 0.0
    metric = metric.replace("_top", "")
    if metric == "label_diff":
        return abs(labels[i] - labels[j])
    gi, gj = _gain(labels[i], gain, label_gain), _gain(labels[j], gain, label_gain)
    if metric == "gain_diff":
        return abs(gi - gj)
    idcg = _ideal_dcg(tuple(labels), k, gain, None if label_gain is None else tuple(label_gain))
    if idcg == 0:
        return 0.0

    def inv_d(x):
        return 1.0 / math.log2(1 + x)

    gap = abs(ri - rj)
    delta = abs(inv_d(gap) - inv_d(gap + 1))
    if k is not None and max(ri, rj) > k:
        delta /= 1.0 - inv_d(max(ri, rj))
    if metric == "ndcg_loss2":
        return abs(gi - gj) * delta / idcg

    def inv_d_cut(x):
        return inv_d(x) if k is None or x <= k else 0.0

    rho = abs(inv_d_cut(ri) - inv_d_cut(rj))
    return abs(gi - gj) * (rho + mu * delta) / idcg


def pair_weight(scores, labels, i, j, metric, k=None, **opts):
    """``|ΔZ_ij|`` (a swap, recomputed) or the pair weight of a LambdaLoss-family / RankNet objective."""
    if metric == "ranknet":
        pos = {d: p for p, d in enumerate(ranking(scores))}
        return 1.0 if (k is None or min(pos[i], pos[j]) < k) else 0.0
    if metric in LAMBDALOSS:
        return lambdaloss_weight(scores, labels, i, j, metric, k, **opts)
    return swap_delta(scores, labels, i, j, metric, k, **opts)


def lambdas(scores, labels, metric="ndcg", k=None, sigma=1.0, **opts):
    """Brute-force LambdaMART gradient and diagonal Hessian of one query (Burges MSR-TR-2010-82).

    For every pair with ``labels[i] > labels[j]``: ``|dZ|`` from :func:`swap_delta` (1 for
    ``"ranknet"``, restricted to pairs with at least one document in the top k when k is set),
    ``rho = 1/(1+exp(sigma*(s_i - s_j)))``,
    ``grad_i -= sigma*|dZ|*rho``, ``grad_j += sigma*|dZ|*rho``,
    ``hess_i += hess_j += sigma**2*|dZ|*rho*(1-rho)``.
    """
    n = len(scores)
    grad, hess = [0.0] * n, [0.0] * n
    if metric == "err" and opts.get("max_label") is None:
        opts = dict(opts, max_label=max(labels, default=0))
    for i in range(n):
        for j in range(n):
            if not labels[i] > labels[j]:
                continue
            ranknet_force(scores, i, j, pair_weight(scores, labels, i, j, metric, k, **opts), sigma, grad, hess)
    return grad, hess


def ranknet_force(scores, i, j, dz, sigma, grad, hess):
    """Add the RankNet force of pair ``i`` (higher label) over ``j`` with weight ``dz``:
    ``rho = 1/(1+exp(sigma*(s_i - s_j)))``, ``grad_i -= sigma*dz*rho``, ``grad_j += sigma*dz*rho``,
    ``hess_i, hess_j += sigma**2*dz*rho*(1-rho)``."""
    rho = 1.0 / (1.0 + math.exp(sigma * (scores[i] - scores[j])))
    grad[i] -= sigma * dz * rho
    grad[j] += sigma * dz * rho
    h = sigma * sigma * dz * rho * (1.0 - rho)
    hess[i] += h
    hess[j] += h


def softmax_loss(scores, labels, beta=1.0):
    """Softmax cross-entropy of one query: ``−Σ_i y_i log p_i``, ``p = softmax(β s)`` (CatBoost's QuerySoftMax
    without its ``lambda``, which only damps the Hessian)."""
    top = max(scores)
    z = [beta * (s - top) for s in scores]
    lse = math.log(sum(math.exp(v) for v in z))
    return -sum(y * (v - lse) for y, v in zip(labels, z))


def _listmle_groups(labels, ties):
    """The documents sorted by label, best first (ties in input order), as ListMLE's groups: runs of equal
    labels with ``ties="breslow"``, one document each with ``"stable"``."""
    groups = []
    for i in sorted(range(len(labels)), key=lambda i: (-labels[i], i)):
        if ties == "breslow" and groups and labels[groups[-1][0]] == labels[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def listmle_loss(scores, labels, ties="breslow"):
    """ListMLE of one query from its definition: sort by label (ties in input order), then
    ``−log Π_r e^{s_(r)} / Σ_{t >= r} e^{s_(t)}`` (``ties="stable"``). ``ties="breslow"``: the equal-label
    groups, each document of a group over the denominator of the whole group and everything below
    it, the last group left out (its order has probability 1)."""
    groups = _listmle_groups(labels, ties)
    total = 0.0
    for g in range(len(groups) - 1):
        below = [j for grp in groups[g:] for j in grp]
        denominator = sum(math.exp(scores[j]) for j in below)
        for i in groups[g]:
            total -= math.log(math.exp(scores[i]) / denominator)
    return total


def listmle_derivatives(scores, labels, ties="breslow"):
    """ListMLE's gradient and Hessian diagonal of one query from the groups of :func:`listmle_loss`:
    ``g_i = Σ_{g ≤ γ(i), g < m} |G_g| p_ig − [γ(i) < m]``, ``h_i = Σ |G_g| p_ig (1 − p_ig)``, each
    ``p_ig = 1 / Σ_{j ∈ S_g} e^{s_j − s_i}`` (every exponent one score difference: valid at any finite score)."""
    groups = _listmle_groups(labels, ties)
    grad = [0.0] * len(scores)
    hess = [0.0] * len(scores)
    for g in range(len(groups) - 1):
        below = [j for grp in groups[g:] for j in grp]
        for i in below:
            diffs = [scores[j] - scores[i] for j in below]
            p = 1.0 / sum(math.exp(d) if d < 710 else math.inf for d in diffs)
            grad[i] += len(groups[g]) * p
            hess[i] += len(groups[g]) * p * (1.0 - p)
        for i in groups[g]:
            grad[i] -= 1.0
    return grad, hess


# --- PL-Rank (Plackett-Luce expected DCG@K), by enumerating every ranking --------------------------
def pl_rankings(n, k=None):
    """Every ordered top-``min(n, k)`` list of ``range(n)`` (the rankings a Plackett-Luce draw can give)."""
    import itertools

    return list(itertools.permutations(range(n), _cut(n, k)))


def _share(scores, d, left):
    """``e^{s_d} / Σ_{i ∈ left} e^{s_i}`` as ``1 / Σ e^{s_i − s_d}``: one score difference per exponent, so
    valid at any finite spread of the scores (``e^{s}`` itself would under/overflow beyond ±709)."""
    return 1.0 / sum(math.exp(scores[i] - scores[d]) if scores[i] - scores[d] < 710 else math.inf for i in left)


def pl_probability(scores, top):
    """Plackett-Luce probability of the top positions ``top``: each pick ``e^{s_d}`` over what remains."""
    left = list(range(len(scores)))
    p = 1.0
    for d in top:
        p *= _share(scores, d, left)
        left.remove(d)
    return p


def pl_expected_dcg(scores, labels, k=None, gain="exp"):
    """``E[DCG@k]`` under the Plackett-Luce policy of ``scores`` (unnormalised; gain ``2**l - 1``)."""
    return sum(pl_probability(scores, top) * dcg_of_order([labels[d] for d in top], k, gain)
               for top in pl_rankings(len(scores), k))


def pl_expected_dcg_derivatives(scores, labels, k=None, gain="exp"):
    """Exact ``∂E[DCG@k]/∂s_d`` and ``∂²E[DCG@k]/∂s_d²`` by enumeration (score-function identity).

    ``∂E = Σ_y R(y) π(y) ∂ log π(y)`` and ``∂²E = Σ_y R(y) π(y) ((∂ log π)² + ∂² log π)``, where
    ``log π(y) = Σ_j (s_{y_j} − log D_j)`` over the placed positions, ``D_j`` the mass still unplaced.
    """
    n = len(scores)
    g1 = [0.0] * n
    g2 = [0.0] * n
    for top in pl_rankings(n, k):
        p = pl_probability(scores, top)
        reward = dcg_of_order([labels[d] for d in top], k, gain)
        remaining = []  # the documents still unplaced at each position
        left = set(range(n))
        for d in top:
            remaining.append(sorted(left))
            left.remove(d)
        for d in range(n):
            # d is in the remaining set at every position up to and including its own (all if unplaced)
            upto = top.index(d) + 1 if d in top else len(top)
            shares = [_share(scores, d, remaining[j]) for j in range(upto)]  # e^{s_d} / D_j
            first = (1.0 if d in top else 0.0) - sum(shares)
            second = -sum(q - q * q for q in shares)
            g1[d] += reward * p * first
            g2[d] += reward * p * (first * first + second)
    return g1, g2


def debiased_lambdas(queries, metric="ndcg", k=None, sigma=1.0, bias=None, propensities=None, t_plus=None,
                     t_minus=None, bias_norm=1.0, b=None, learning_rate=None, regularization=0.0, **opts):
    """Position-debiased LambdaMART gradients of several queries, from the definitions (issue #45).

    ``queries``: a list of ``(scores, labels, positions)``. For every pair with ``labels[i] > labels[j]`` the
    pair weight ``|dZ|`` (:func:`pair_weight`) is multiplied by

    * ``"ips"``: ``1/propensities[pos_i]`` (the clicked/higher-labelled row's inverse examination probability);
    * ``"pairwise"`` (Hu et al. 2019): ``1/(t_plus[pos_i] * t_minus[pos_j])`` (a factor below 1e-16, or at a
      position beyond the tables, counts as 1); the paper's pair cost ``c = |dZ| log(1 + exp(-sigma(s_i -
      s_j)))`` is summed as ``Lp[pos_i] += c / t_minus[pos_j]``, ``Lm[pos_j] += c / t_plus[pos_i]`` (tracked
      positions only) over all queries, and the returned factors are ``(Lp[p]/Lp[0]) ** (1/(1 + bias_norm))``
      (likewise ``Lm``; unchanged when the position-0 sum is below 1e-16);
    * ``"additive"`` (LightGBM): the gradients are those of ``scores + b[pos]``; then per position
      ``G = -sum g - mu n b``, ``H = -sum h - mu n``, ``b += learning_rate G/(|H| + 0.001)``.

    Returns ``(grad, hess, state)`` with grad/hess lists per query and ``state`` the new factors / biases.
    """
    grads, hesses = [], []
    if bias == "pairwise":
        size = len(t_plus)
        lp, lm = [0.0] * size, [0.0] * size
    for scores, labels, pos in queries:
        if bias == "additive":
            scores = [s + b[p] for s, p in zip(scores, pos)]
        n = len(scores)
        grad, hess = [0.0] * n, [0.0] * n
        o = dict(opts)
        if metric == "err" and o.get("max_label") is None:
            o["max_label"] = max(max(lab) for _, lab, _ in queries)
        for i in range(n):
            for j in range(n):
                if not labels[i] > labels[j]:
                    continue
                dz = pair_weight(scores, labels, i, j, metric, k, **o)
                if bias == "ips":
                    dz /= propensities[pos[i]]
                elif bias == "pairwise":
                    tracked = pos[i] < size and pos[j] < size
                    tp = t_plus[pos[i]] if pos[i] < size else 1.0
                    tm = t_minus[pos[j]] if pos[j] < size else 1.0
                    fp = 1.0 / tp if tp >= 1e-16 else 1.0
                    fm = 1.0 / tm if tm >= 1e-16 else 1.0
                    if tracked:
                        c = dz * math.log1p(math.exp(-sigma * (scores[i] - scores[j])))
                        lp[pos[i]] += c * fm
                        lm[pos[j]] += c * fp
                    dz *= fp * fm
                ranknet_force(scores, i, j, dz, sigma, grad, hess)
        grads.append(grad)
        hesses.append(hess)
    state = None
    if bias == "pairwise":
        reg = 1.0 / (1.0 + bias_norm)
        new_p = [(x / lp[0]) ** reg if lp[0] >= 1e-16 else t for x, t in zip(lp, t_plus)]
        new_m = [(x / lm[0]) ** reg if lm[0] >= 1e-16 else t for x, t in zip(lm, t_minus)]
        state = (new_p, new_m)
    elif bias == "additive":
        state = list(b)
        for p in range(len(b)):
            rows = [(g, h) for (_, _, pos), gq, hq in zip(queries, grads, hesses) for q_p, g, h in zip(pos, gq, hq)
                    if q_p == p]
            count = len(rows)
            big_g = -sum(g for g, _ in rows) - regularization * count * b[p]
            big_h = -sum(h for _, h in rows) - regularization * count
            state[p] = b[p] + learning_rate * big_g / (abs(big_h) + 0.001)
    return grads, hesses, state
