"""LOW LEVEL LambdaLoss pair weights: NDCG-Loss2, NDCG-Loss2++, LambdaLoss@K, label and gain differences.

Each weight is a scalar ``@njit(inline="always")`` function with ONE calling convention, so a
generic pair loop can plug any of them in::

    w = weight(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu)

* ``ra < rb``: 0-based positions in the current ranking (scores descending, ties in input order);
* ``ga, gb``: the two documents' gains (already computed: ``2^y − 1``, linear, ...);
* ``ya, yb``: their labels (real-valued allowed);
* ``inv_idcg``: ``1/IDCG@k`` of the query (0 when IDCG is 0, which makes every NDCG weight 0);
* ``k``: the cut-off, ``n`` (or anything ``>= n``) for "no cut-off"; must be ``>= 1``;
* ``mu``: the NDCG-Loss2++ mixing parameter (ignored by the others).

The loop calls the weight for pairs ``a < b`` with ``ya != yb`` and multiplies the RankNet force
``rho = 1/(1 + exp(sigma (s_hi − s_lo)))`` by it: the loss is
``sum_{y_i > y_j} w_ij log(1 + exp(−sigma (s_i − s_j)))`` with the ranks (hence ``w_ij``) held fixed.
Which pairs can have a non-zero weight (so the loop may skip the rest) is stated per function.

References: Wang, Li, Golbandi, Bendersky & Najork, "The LambdaLoss Framework for Ranking Metric
Optimization", CIKM 2018 (NDCG-Loss2, NDCG-Loss2++); Jagerman, Qin, Wang, Bendersky & Najork,
"On Optimizing Top-K Metrics for Neural Ranking Models", SIGIR 2022 (LambdaLoss@K). docs/_lambdaloss.md
says where allRank, rax and TF-Ranking differ.
"""

import math

from numba import njit

#: Default NDCG-Loss2++ mixing weight. The paper leaves mu a tuned hyper-parameter; 10 is
#: allRank's default (allrank/models/losses/lambdaLoss.py, ``mu=10.``), the one public
#: implementation of NDCG-Loss2++, so results are comparable with it.
DEFAULT_MU = 10.0


@njit(cache=True, inline="always")
def pair_delta(ra, rb):
    """LambdaLoss ``δ_ij`` for 0-based positions ``ra < rb``.

    .. math:: δ_{ij} = \\frac{1}{D(|r_i - r_j|)} - \\frac{1}{D(|r_i - r_j| + 1)},\\quad D(x) = \\log_2(1 + x)

    (Wang et al. 2018, Eq. for NDCG-Loss2); only the distance ``rb − ra`` enters, so 0- and
    1-based ranks give the same value. Positive for ``ra < rb``.
    """
    d = float(rb - ra)
    return 1.0 / math.log2(1.0 + d) - 1.0 / math.log2(2.0 + d)


@njit(cache=True, inline="always")
def topk_factor(rb, k):
    """LambdaLoss@K multiplier for the pair whose LOWER member sits at 0-based position ``rb``.

    .. math:: μ_{ij} = 1/(1 − 1/D(\\max(r_i, r_j)))\\ \\text{if}\\ \\max(r_i, r_j) > k,\\ \\text{else}\\ 1

    with 1-based ranks and ``D(r) = log2(1 + r)`` (Jagerman et al. 2022, as implemented by the
    authors' rax ``dcg2_lambdaweight(topn=)`` and TF-Ranking ``DCGLambdaWeightV2``). 1-based
    ``max(r) = rb + 1 > k`` is ``rb >= k``; ``D(rb + 1) = log2(rb + 2) > 1`` there because ``rb >= k >= 1``.
    """
    if rb >= k:
        return 1.0 / (1.0 - 1.0 / math.log2(rb + 2.0))
    return 1.0


@njit(cache=True, inline="always")
def ndcg_loss2(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu):
    """NDCG-Loss2 weight (Wang et al. 2018): ``w = |G_a − G_b| δ_ab / IDCG`` (no cut-off).

    ``k`` only enters through ``inv_idcg`` (pass ``1/IDCG`` of the full list for the paper's
    definition). Non-zero for EVERY pair with different gains: the loop must visit all ``a < b``.
    """
    return abs(ga - gb) * pair_delta(ra, rb) * inv_idcg


@njit(cache=True, inline="always")
def ndcg_loss2_at_k(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu):
    """LambdaLoss@K weight (Jagerman et al. 2022): ``w = |G_a − G_b| δ_ab μ_ab / IDCG@k``.

    ``μ_ab = 1/(1 − 1/log2(rb + 2))`` when the lower member is beyond the cut-off (``rb >= k``,
    0-based), else 1 (:func:`topk_factor`). With ``k >= n`` this is :func:`ndcg_loss2`.
    Non-zero for EVERY pair with different gains, including pairs with both members beyond
    ``k`` (as in rax and TF-Ranking): the loop must visit all ``a < b``.
    """
    return abs(ga - gb) * pair_delta(ra, rb) * topk_factor(rb, k) * inv_idcg


@njit(cache=True, inline="always")
def ndcg_loss2pp(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu):
    """NDCG-Loss2++ weight (Wang et al. 2018) with this package's cut-off:

    .. math:: w = |G_a − G_b| (ρ_{ab} + μ\\, δ_{ab} μ^{@k}_{ab}) / \\mathrm{IDCG@k},\\quad
              ρ_{ab} = |D_k(a) − D_k(b)|,\\ D_k(r) = [r < k] / \\log_2(r + 2)

    ``ρ`` is exactly the ΔNDCG@k position term of the LambdaRank kernel (the paper's LambdaRank
    term, truncated as our ΔNDCG@k is) and the ``δ`` term carries the LambdaLoss@K factor, so
    ``k`` means the same as for ΔNDCG@k; with ``k >= n`` it is the paper's definition.
    ``mu >= 0`` (default :data:`DEFAULT_MU`). Pairs with non-zero weight: every pair when
    ``mu > 0``; only ``a < k`` when ``mu == 0`` (then it is ΔNDCG@k).
    """
    da = 1.0 / math.log2(ra + 2.0) if ra < k else 0.0
    db = 1.0 / math.log2(rb + 2.0) if rb < k else 0.0
    return abs(ga - gb) * (abs(da - db) + mu * pair_delta(ra, rb) * topk_factor(rb, k)) * inv_idcg


@njit(cache=True, inline="always")
def label_diff(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu):
    """RankNet weighted by the label difference: ``w = |y_a − y_b|`` (allRank's
    ``rankNetWeightedByGTDiff``; rax ``labeldiff_lambdaweight``). Ranks, ``k`` and IDCG are not
    used; non-zero for every pair with different labels."""
    return abs(ya - yb)


@njit(cache=True, inline="always")
def gain_diff(ra, rb, ga, gb, ya, yb, inv_idcg, k, mu):
    """RankNet weighted by the gain difference: ``w = |G_a − G_b|`` (not normalised by IDCG;
    ranks and ``k`` not used). Non-zero for every pair with different gains."""
    return abs(ga - gb)
