"""What the objectives are: one public function per family, each taking only the options it reads.

* pairwise lambdas (ΔNDCG, ΔERR, ΔMAP, ΔMRR, RankNet, the LambdaLoss weights; :mod:`.lambdas`):
  :func:`lambda_gradients`;
* XE-NDCG (:mod:`.xendcg`): :func:`xendcg_gradients`;
* YetiRank / YetiLoss (:mod:`.yetirank`): :func:`yetirank_gradients`;
* softmax cross-entropy and ListMLE (:mod:`.listwise`): :func:`softmax_gradients`, :func:`listmle_gradients`;
* PL-Rank (:mod:`.plrank`): :func:`plrank_gradients`;
* CatBoost's ``LambdaMart`` as formulas (:mod:`.catboost_lambdamart`, public in :mod:`lambda_objectives.catboost`).

Each validates its inputs and dispatches to the private numba kernels (``lambda_objectives._kernels``); the
metric each is built from, its integer code and its options are rows of ``lambda_objectives._registry``.
"""

from .lambdas import LAMBDA_METRICS, OBJECTIVES, LambdaPairs, lambda_gradients
from .listwise import LISTMLE_TIES, SOFTMAX_DEFAULTS, listmle_gradients, softmax_gradients
from .plrank import PLRANK_DEFAULTS, plrank_gradients
from .xendcg import xendcg_gradients
from .yetirank import YETIRANK_DEFAULTS, yetirank_gradients

__all__ = ["LAMBDA_METRICS", "LISTMLE_TIES", "LambdaPairs", "OBJECTIVES", "PLRANK_DEFAULTS", "SOFTMAX_DEFAULTS",
           "YETIRANK_DEFAULTS", "lambda_gradients", "listmle_gradients", "plrank_gradients", "softmax_gradients",
           "xendcg_gradients", "yetirank_gradients"]
