"""Pair weights of the LambdaLoss framework and two plain label weights, for the one pair loop.

Wang, Li, Golbandi, Bendersky & Najork, "The LambdaLoss Framework for Ranking Metric
Optimization", CIKM 2018: a pairwise logistic loss ``Σ_{y_i > y_j} w_ij log(1 + exp(−σ(s_i − s_j)))``
whose weights come from the ranks ``r`` (1-based, by the current scores, ties in input order) and
the gains ``G``; ``D(x) = log2(1 + x)``. With 0-based positions ``a < b`` (``r = a + 1``) and the
package's discount table ``disc[p] = 1/log2(p + 2)``, ``1/D(x) = disc[x − 1]``:

* NDCG-Loss2: ``w = |G_a − G_b| · δ_ab / IDCG`` with ``δ_ab = 1/D(b − a) − 1/D(b − a + 1)``;
* NDCG-Loss2++: ``w = |G_a − G_b| · (ρ_ab + μ δ_ab) / IDCG`` with the LambdaRank term
  ``ρ_ab = |1/D(a + 1) − 1/D(b + 1)|`` (the ΔNDCG discount factor of ``ndcg.py``);
* LambdaLoss@K (Jagerman, Qin, Wang, Bendersky & Najork, SIGIR 2022; TF-Ranking's
  ``NDCGLambdaWeightV2``), what ``ndcg_loss2@k`` / ``ndcg_loss2pp@k`` compute: **every** pair with
  different labels is formed; ``δ`` is multiplied by ``1/(1 − 1/D(b + 1))`` when ``b >= k`` (1-based:
  ``max(i, j) > k``); gains are normalised by IDCG@k. NDCG-Loss2++@k's LambdaRank term ``ρ`` uses the
  truncated discount (``1/D(r)`` taken as 0 for ``r > k``, both ranks), so ``ρ`` is 0 for a pair
  entirely below ``k`` while its ``μ δ`` term is not (our choice: the paper defines the @K weight for
  NDCG-Loss2; the ++ sum keeps ΔNDCG@k as its first term). TF-Ranking's extra list-size factor (a
  learning-rate heuristic) is not applied;
* ``ndcg_loss2_top@k`` / ``ndcg_loss2pp_top@k`` (ours, not the paper's): the same weights on pairs with
  ``a < k`` only (a document in the top ``k``), the form these names had before 2026-11-24;
* ``label_diff``: ``w = |y_a − y_b|``; ``gain_diff``: ``w = |G_a − G_b|`` (no rank information).

docs/math.md states where allRank, rax and TF-Ranking differ from these definitions.
"""

from numba import njit


@njit(cache=True)
def gap_deltas(disc, kk, deltas, scale):
    """Per-query tables: ``deltas[g] = 1/D(g) − 1/D(g + 1) = disc[g − 1] − disc[g]`` for rank gaps
    ``g >= 1``, and the LambdaLoss@K multiplier ``scale[b] = 1/(1 − 1/D(b + 1))`` for ``b >= kk``
    (1 above the cut-off), so a pair's ``δ`` is two reads and a product, with no branch.
    """
    deltas[0] = 0.0
    for g in range(1, deltas.shape[0]):
        deltas[g] = disc[g - 1] - disc[g]
    for b in range(deltas.shape[0]):
        scale[b] = 1.0 if b < kk else 1.0 / (1.0 - disc[b])


@njit(cache=True, inline="always")
def ndcg_loss2_weight(ga, gb, a, b, deltas, scale, inv_idcg):
    """NDCG-Loss2 (LambdaLoss@K with a cut-off) pair weight for positions ``a < b``."""
    return abs(ga - gb) * deltas[b - a] * scale[b] * inv_idcg


@njit(cache=True, inline="always")
def ndcg_loss2pp_weight(ga, gb, a, b, kk, disc, deltas, scale, inv_idcg, mu):
    """NDCG-Loss2++ pair weight: the LambdaRank |ΔNDCG@k| plus ``mu`` times NDCG-Loss2's."""
    # ρ: the ΔNDCG@k discount factor of ndcg.ndcg_delta, both discounts truncated at the cut-off
    # (the all-pairs loop visits a >= kk too, where ρ must be 0)
    da = disc[a] if a < kk else 0.0
    db = disc[b] if b < kk else 0.0
    return abs(ga - gb) * (abs(da - db) + mu * deltas[b - a] * scale[b]) * inv_idcg
