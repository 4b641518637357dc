"""reference: a from-scratch MART / LambdaMART trainer on the lambda_objectives kernels.

Histogram regression trees with pluggable split criteria (SE, OLE, exact OLE; Xia, Zhai & Wang),
growth policies with a leaf limit, Newton leaves, and the losses ls, logistic, McRank and lambda.
"""

from .binning import BinMapper
from .grower import GROWTH, NODE_DTYPE, TreeGrower
from .losses import OBJECTIVES
from .ranker import FORMAT_VERSION, HISTORY_METRICS, MARTRanker
from .splitting import CRITERIA

__all__ = ["BinMapper", "CRITERIA", "FORMAT_VERSION", "GROWTH", "HISTORY_METRICS", "MARTRanker", "NODE_DTYPE",
           "OBJECTIVES", "TreeGrower"]
