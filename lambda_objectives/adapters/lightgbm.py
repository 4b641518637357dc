"""LightGBM: :class:`LightGBMObjective` for ``lgb.train`` and ``lgb.LGBMRanker``.

LightGBM's sklearn wrapper counts parameters and passes ``group`` only to a 4-parameter
callable; ``__call__`` has four, the ``lgb.train`` path uses the first two.
"""


from ..groups import sizes_to_ptr
from ._base import MISSING, LambdaObjective

__all__ = ["LightGBMObjective"]


class _SklearnCall:
    """Stands for "the data of LGBMRanker's 4-argument call" in the per-thread cache."""


_SKLEARN_CALL = _SklearnCall()


def _lgb_hess_threshold(params):
    for key in ("min_sum_hessian_in_leaf", "min_sum_hessian_per_leaf", "min_sum_hessian",
                "min_hessian", "min_child_weight"):
        if params and key in params:
            return float(params[key])
    return 1e-3


class LightGBMObjective(LambdaObjective):
    """A LambdaMART objective for LightGBM (``lgb.train`` and ``lgb.LGBMRanker``).

    Parameters
    ----------
    metric : {"ndcg", "err", "map", "mrr", "ranknet"} or ``"name@k"``
        The metric whose swap change weights each pair, ``|Δmetric|``.
    k : int or None
        Truncation (``None``: the package default; with ``preset="lightgbm"`` it is
        ``lambdarank_truncation_level``, default 30).
    sigma : float
        Sigmoid steepness, ``rho = 1/(1 + exp(sigma (s_i - s_j)))``.
    preset : None or "lightgbm" or "xgboost"
        ``"lightgbm"`` reproduces the native ``lambdarank`` bit for bit.
    n_threads : int or None
        numba threads for the kernel (LightGBM's pool idles during the callback).
    check_hessian : bool or "raise"
        Warn (``True``) or raise when the Hessians cannot pass ``min_sum_hessian_in_leaf``.
    **kernel_options
        Passed to the kernel (``lambda_gradients`` keywords, or the preset options).

    Notes
    -----
    Called as ``obj(preds, train_data)`` by ``lgb.train`` (group boundaries from
    ``train_data.get_field('group')``, cached per Dataset) and as ``obj(y_true, y_pred, weight,
    group)`` by ``LGBMRanker`` (``group`` = sizes). Per-document weights multiply grad and hess.
    Returned arrays are float32 views of buffers reused every iteration.
    """

    _engine = "LightGBM"

    def __call__(self, preds, train_data, weight=MISSING, group=MISSING):
        if group is MISSING:  # lgb.train path: (preds, Dataset)
            bounds = train_data.get_field("group")
            if bounds is None:
                raise ValueError("the LightGBM Dataset has no group: pass group=sizes to lgb.Dataset")
            st = self._state(train_data, train_data.get_label(), bounds, train_data.get_weight(),
                             _lgb_hess_threshold(getattr(train_data, "params", None)))
            return self._compute(st, preds)
        y_true, y_pred = preds, train_data  # LGBMRanker path
        if group is None:
            raise ValueError("LGBMRanker passed no group to the objective: fit(..., group=sizes)")
        st = self._state(_SKLEARN_CALL, y_true, sizes_to_ptr(group, len(y_true)), weight, 1e-3)
        return self._compute(st, y_pred)

    #: explicit 4-argument form for ``LGBMRanker(objective=obj.sklearn)``
    def sklearn(self, y_true, y_pred, weight, group):
        """``LGBMRanker`` objective form ``(y_true, y_pred, weight, group_sizes)``."""
        return self(y_true, y_pred, weight, group)
