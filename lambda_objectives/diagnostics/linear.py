"""Model-agnostic LambdaRank (Burges, MSR-TR-2010-82, §4): lambdas drive any differentiable model.

The lambda kernels give ``∂C/∂s_i`` for every document; the chain rule gives the model's gradient
``∂C/∂w = Σ_i (∂C/∂s_i)(∂s_i/∂w)``. Two models: a linear scorer ``s = Xw + b`` and a one-hidden-layer
numpy MLP ``s = v·tanh(XW + c) + b``, trained by (full-batch) gradient descent. The Monte Carlo
test of §4.2 checks whether the learned weights sit at a local maximum of the mean metric.
"""

import math

import numpy as np

from ..checks import check_labels

__all__ = ["LinearLambdaRank", "MLPLambdaRank", "local_optimality_test", "directions_needed"]


def _features(X, where, n_features=None, min_rows=1):
    """``X`` as a finite 2-D float64 array (of ``n_features`` columns when given): NaN/inf features
    would otherwise surface as non-finite *scores* from the lambda kernels, naming the wrong input."""
    from sklearn.utils.validation import check_array

    try:
        X = check_array(X, dtype=np.float64, ensure_min_samples=min_rows)
    except ValueError as exc:
        raise ValueError(f"{where}: X {exc}") from None
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{where}: X has {X.shape[1]} features, the model has {n_features}")
    return X


class _LambdaRankModel:
    def __init__(self, metric="ndcg", k=10, sigma=1.0, learning_rate=0.05, n_iter=200, random_state=0,
                 n_threads=None, **kernel_options):
        self.metric, self.k, self.sigma = metric, k, sigma
        self.learning_rate, self.n_iter, self.random_state = learning_rate, n_iter, random_state
        self.n_threads, self.kernel_options = n_threads, kernel_options

    def fit(self, X, y, group=None, qid=None, group_ptr=None, eval_set=None):
        """Gradient descent on the lambda cost; ``history_`` holds mean NDCG@k (train, eval).

        The queries are required (``group`` sizes, ``qid`` or ``group_ptr``; an ``eval_set`` entry is
        ``(X, y, group)``), as for every ranker: rows without query ids are never one query.
        """
        from ..adapters._sklearn import require_queries
        from ..objectives.lambdas import lambda_gradients
        from ..metrics import mean_metric

        name = type(self).__name__
        X = _features(X, f"{name}.fit")
        y = check_labels(y, X.shape[0], name="y")
        ptr = require_queries(f"{name}.fit", X.shape[0], group=group, qid=qid, group_ptr=group_ptr)
        n_q = ptr.shape[0] - 1
        self._init(X.shape[1], np.random.default_rng(self.random_state))
        self.n_features_in_ = X.shape[1]
        evals = []
        for e in eval_set or []:
            Xe = _features(e[0], f"{name}.fit: eval_set", X.shape[1])
            evals.append((Xe, check_labels(e[1], Xe.shape[0], name="eval_set y"),
                          require_queries(f"{name}.fit: eval_set", Xe.shape[0], group=e[2] if len(e) > 2 else None)))
        self.history_ = {"train": [], **{f"valid_{i}": [] for i in range(len(evals))}}
        for _ in range(self.n_iter):
            s = self._scores(X)
            g, _ = lambda_gradients(s, y, ptr, self.metric, self.k, self.sigma, n_threads=self.n_threads,
                                    **self.kernel_options)
            self._step(X, g / n_q)
            self.history_["train"].append(mean_metric(self._scores(X), y, ptr, "ndcg", self.k))
            for i, (Xe, ye, pe) in enumerate(evals):
                self.history_[f"valid_{i}"].append(mean_metric(self._scores(Xe), ye, pe, "ndcg", self.k))
        return self

    def predict(self, X):
        return self._scores(_features(X, f"{type(self).__name__}.predict", self.n_features_in_, 0))

    # flat parameter vector, for the local-optimality test
    def get_weights(self):
        return np.concatenate([p.ravel() for p in self._params()])

    def set_weights(self, flat):
        i = 0
        for p in self._params():
            p[...] = flat[i:i + p.size].reshape(p.shape)
            i += p.size


class LinearLambdaRank(_LambdaRankModel):
    """A linear ranker ``s = Xw + b`` trained on the lambdas of any metric."""

    def _init(self, d, rng):
        self.coef_ = np.zeros(d)
        self.intercept_ = np.zeros(1)

    def _params(self):
        return (self.coef_, self.intercept_)

    def _scores(self, X):
        return X @ self.coef_ + self.intercept_[0]

    def gradient(self, X, g):
        """``∂C/∂w`` for per-document ``g = ∂C/∂s`` (the intercept's is ``Σg`` = 0 per query)."""
        return np.concatenate([X.T @ g, [g.sum()]])

    def _step(self, X, g):
        self.coef_ -= self.learning_rate * (X.T @ g)


class MLPLambdaRank(_LambdaRankModel):
    """A one-hidden-layer ranker ``s = v·tanh(XW + c) + b`` trained on the lambdas."""

    def __init__(self, hidden=16, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden

    def _init(self, d, rng):
        self.W_ = rng.normal(0, 1 / math.sqrt(d), (d, self.hidden))
        self.c_ = np.zeros(self.hidden)
        self.v_ = rng.normal(0, 1 / math.sqrt(self.hidden), self.hidden)
        self.b_ = np.zeros(1)

    def _params(self):
        return (self.W_, self.c_, self.v_, self.b_)

    def _scores(self, X):
        return np.tanh(X @ self.W_ + self.c_) @ self.v_ + self.b_[0]

    def gradient(self, X, g):
        """Backpropagation of per-document ``g = ∂C/∂s`` to every weight (flat, as get_weights)."""
        a = np.tanh(X @ self.W_ + self.c_)
        gv = a.T @ g
        delta = (g[:, None] * self.v_[None, :]) * (1 - a * a)
        return np.concatenate([(X.T @ delta).ravel(), delta.sum(axis=0), gv, [g.sum()]])

    def _step(self, X, g):
        self.set_weights(self.get_weights() - self.learning_rate * self.gradient(X, g))


def directions_needed(delta=0.01, p0=0.01):
    """Smallest ``n`` with ``(1 − p0)^n <= δ``: ``n >= log δ / log(1 − p0)`` (459 for 0.01, 0.01)."""
    if not (0 < delta < 1 and 0 < p0 < 1):
        raise ValueError("delta and p0 must be in (0, 1)")
    return int(math.ceil(math.log(delta) / math.log(1 - p0) - 1e-12))


def local_optimality_test(model, X, y, group_ptr, metric="ndcg", k=10, n_directions=None, delta=0.01, p0=0.01,
                          step=None, seed=0):
    """Burges §4.2: probe random directions around the learned weights for a higher mean metric.

    Directions are drawn from a spherical Gaussian in weight space (normalised); each is tried
    at ``±step`` (default 1 % of the weight norm, or 1e-2 at zero weights). If none of
    ``n = directions_needed(δ, p0)`` directions improves the mean metric, then with confidence
    ``1 − δ`` the fraction of improving directions is below ``p0``: the weights are a local
    maximum at that resolution.

    Returns
    -------
    dict with ``local_max`` (bool), ``improving`` (count), ``n_directions``, ``base`` (metric at
    the weights), ``best`` (best metric found), ``step``.
    """
    from ..metrics import mean_metric

    X = np.asarray(X, dtype=np.float64)
    n = directions_needed(delta, p0) if n_directions is None else int(n_directions)
    w0 = model.get_weights().copy()
    base = mean_metric(model.predict(X), y, group_ptr, metric, k)
    norm = np.linalg.norm(w0)
    step = (0.01 * norm if norm > 0 else 1e-2) if step is None else step
    rng = np.random.default_rng(seed)
    improving, best = 0, base
    try:
        for _ in range(n):
            u = rng.normal(size=w0.shape)
            u /= np.linalg.norm(u)
            for sign in (1.0, -1.0):
                model.set_weights(w0 + sign * step * u)
                v = mean_metric(model.predict(X), y, group_ptr, metric, k)
                if v > base + 1e-12:
                    improving += 1
                    best = max(best, v)
    finally:
        model.set_weights(w0)
    return {"local_max": improving == 0, "improving": improving, "n_directions": n, "base": base, "best": best,
            "step": step}
