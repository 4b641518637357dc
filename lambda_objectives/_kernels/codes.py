"""The integer code of every metric / objective, shared by the metric, pair-loop and engine-parity kernels.

Plain module constants (numba folds them into the compiled loops). They live beside the kernels, the
lowest layer, so no kernel imports upward; ``lambda_objectives._registry`` gives each its row.
"""

NDCG, DCG, ERR, MAP, MRR, RANKNET = 0, 1, 2, 3, 4, 5
NDCG_LOSS2, NDCG_LOSS2PP, LABEL_DIFF, GAIN_DIFF = 6, 7, 8, 9
XENDCG = 10
YETIRANK = 11
NDCG_LOSS2_TOP, NDCG_LOSS2PP_TOP = 12, 13
SOFTMAX, LISTMLE = 20, 21  # listwise (own kernels in _kernels/listwise.py)
PLRANK = 14
