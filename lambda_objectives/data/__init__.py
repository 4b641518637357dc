"""Where data comes from: the LETOR/SVMlight loader and writer (:mod:`.io`), synthetic ranking data
(:mod:`.datasets`) and query boundaries (:mod:`.groups`: ``group_ptr`` from query ids, sizes or a frame).

Every loader hands on one record, :class:`RankingData` (features, labels, ``group_ptr``, query ids), whose
``group_ptr`` is what every objective, metric and adapter reads. Imports only the private core.
"""

from .datasets import WEB_LABEL_SHARES, make_mslr_like, make_ranking, train_test_split_queries
from .groups import (check_group_ptr, frame_group_ptr, ptr_to_qid, ptr_to_sizes, qid_to_ptr, resolve_group_ptr,
                     sizes_to_ptr, split_qid_column)
from .io import Fold, LetorData, RankingData, load_letor, load_letor_folds, save_letor

__all__ = ["Fold", "LetorData", "RankingData", "WEB_LABEL_SHARES", "check_group_ptr", "frame_group_ptr",
           "load_letor", "load_letor_folds", "make_mslr_like", "make_ranking", "ptr_to_qid", "ptr_to_sizes",
           "qid_to_ptr", "resolve_group_ptr", "save_letor", "sizes_to_ptr", "split_qid_column",
           "train_test_split_queries"]
