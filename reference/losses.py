"""Losses of the reference trainer: gradient, Hessian, initial score and the loss value.

Each loss fills caller-provided ``g``/``h`` (pygbm pattern). Scores ``F`` are float64.

* ``"ls"``: ``L = ½ Σ (F − y)²``; ``g = F − y``, ``h = 1``; ``F₀ = mean(y)`` (MART regression).
* ``"logistic"``: binary relevance ``t = [y > threshold]``, ``L = Σ w·log(1 + e^{−(2t−1)F})``;
  ``g = w(p − t)``, ``h = w p (1 − p)``, ``p = 1/(1+e^{−F})``; ``F₀ = logit(mean t)``. With
  ``balanced=True`` (Burges §6.1) positives and negatives carry equal total weight.
* ``"mcrank"`` (Li, Burges & Wu 2007): softmax over grades ``0..K−1``, one score column per grade;
  ``g_k = p_k − [y = k]``, ``h_k = p_k(1 − p_k)``; ``F₀`` = log class priors; documents are
  ranked by the expected grade ``Σ_k k p_k``. Each column's leaves are the trainer's one Newton step
  ``−G/(H + λ₂)``, **without** the ``(K − 1)/K`` of Friedman's multi-class MART (2001, Algorithm 6),
  the MART McRank's paper trains with: one constant per model that the split gains do not see, so with
  ``λ₂ = 0`` learning rate ``η`` here is Friedman's scaling at ``η·K/(K−1)`` (docs/math.md, "Newton
  leaves"; pass ``learning_rate=η·(K−1)/K`` for his).
* ``"lambda"``: :func:`lambda_objectives.lambda_gradients` for any metric; ``F₀ = 0`` (only score
  differences within a query matter); the loss is the fixed-ranking pairwise cost
  ``Σ |ΔZ_ij| log(1 + e^{−σ(s_i − s_j)})`` evaluated at the current ranking.
* ``"lambda"`` with ``metric="xendcg"`` / ``"yetirank"``: :class:`XENDCG`, :class:`YetiRank` (fresh
  draws every round, reproducible from ``random_state``).
* ``"lambda"`` with ``metric="softmax"`` / ``"listmle"``: :class:`Listwise` (deterministic; the loss is
  the objective's own: softmax cross-entropy, or ListMLE's negative log-likelihood).
"""

import numpy as np

OBJECTIVES = ("ls", "logistic", "mcrank", "lambda")


def _sigmoid(x):
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


class LeastSquares:
    n_columns = 1

    def init_score(self, y, ptr):
        return np.full(y.shape[0], float(np.mean(y)))

    def gradients(self, F, y, ptr, g, h):
        np.subtract(F, y, out=g)
        h.fill(1.0)

    def loss(self, F, y, ptr):
        return float(0.5 * np.mean((F - y) ** 2))

    def ranking_scores(self, F):
        return F


class Logistic:
    n_columns = 1

    def __init__(self, threshold=0.0, balanced=False):
        self.threshold, self.balanced = threshold, balanced

    def _targets(self, y):
        t = (y > self.threshold).astype(np.float64)
        w = np.ones_like(t)
        if self.balanced:
            pos = t.sum()
            neg = t.shape[0] - pos
            if pos > 0 and neg > 0:
                w = np.where(t > 0, 0.5 * t.shape[0] / pos, 0.5 * t.shape[0] / neg)
        return t, w

    def init_score(self, y, ptr):
        t, w = self._targets(y)
        p = np.clip(np.average(t, weights=w), 1e-12, 1 - 1e-12)
        return np.full(y.shape[0], float(np.log(p / (1 - p))))

    def gradients(self, F, y, ptr, g, h):
        t, w = self._targets(y)
        p = _sigmoid(F)
        g[:] = w * (p - t)
        h[:] = w * p * (1 - p)

    def loss(self, F, y, ptr):
        t, w = self._targets(y)
        m = (2 * t - 1) * F
        return float(np.average(np.logaddexp(0.0, -m), weights=w))

    def ranking_scores(self, F):
        return F


#: the largest McRank grade: it fits one tree per grade per round and holds (rows × grades) arrays of
#: scores, gradients, Hessians and probabilities, so a stray label of 1e6 asked for 22 GB and an OOM kill
MCRANK_MAX_GRADE = 99


class McRank:
    """Multi-class classification over grades ``0..n_classes−1`` (one tree per grade per round);
    at most ``MCRANK_MAX_GRADE + 1`` grades. :meth:`from_labels` checks the labels first."""

    def __init__(self, n_classes):
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) \
                or not 1 <= n_classes <= MCRANK_MAX_GRADE + 1:
            raise ValueError(f"McRank takes 1..{MCRANK_MAX_GRADE + 1} grades, got n_classes={n_classes!r}")
        self.n_columns = int(n_classes)

    @classmethod
    def from_labels(cls, y, name="y"):
        """McRank over grades ``0..max(y)``: ``y`` must hold integer grades in ``0..MCRANK_MAX_GRADE``.

        Raises ``ValueError`` naming the first offending row before any (rows × grades) array exists.
        """
        y = np.asarray(y, dtype=np.float64)
        if y.size == 0:
            return cls(1)
        for bad, what in ((y != np.floor(y), "is not an integer grade"), (y < 0, "is negative"),
                          (y > MCRANK_MAX_GRADE, f"asks for {y.max() + 1:,.0f} grade columns")):
            if bad.any():
                r = int(np.argmax(bad))
                raise ValueError(
                    f"objective='mcrank' needs integer relevance grades 0..{MCRANK_MAX_GRADE} (one tree and one "
                    f"(rows × grades) score column per grade): {name}[{r}] = {y[r].item()!r} {what}; map the labels "
                    "to grades 0..K (e.g. np.unique(y, return_inverse=True)[1]) or use objective='lambda'")
        return cls(int(y.max()) + 1)

    def _proba(self, F):
        z = F - F.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def init_score(self, y, ptr):
        prior = np.bincount(y.astype(np.int64), minlength=self.n_columns).astype(np.float64) + 1.0
        prior /= prior.sum()
        return np.tile(np.log(prior), (y.shape[0], 1))

    #: :meth:`gradients` can return :meth:`loss` at ``F`` from the same class probabilities
    loss_with_gradients = True

    def gradients(self, F, y, ptr, g, h, want_loss=False):
        """Fill ``g``, ``h`` at ``F``; with ``want_loss``, return :meth:`loss` at ``F`` too (from the
        probabilities the gradients use: the same number as a second call)."""
        p = self._proba(F)
        onehot = np.zeros_like(p)
        onehot[np.arange(y.shape[0]), y.astype(np.int64)] = 1.0
        g[:] = p - onehot
        h[:] = np.maximum(p * (1 - p), 1e-16)
        return self._log_loss(p, y) if want_loss else None

    def loss(self, F, y, ptr):
        return self._log_loss(self._proba(F), y)

    @staticmethod
    def _log_loss(p, y):
        """The mean negative log-probability of each row's own grade (probabilities floored at 1e-300)."""
        return float(-np.mean(np.log(np.maximum(p[np.arange(y.shape[0]), y.astype(np.int64)], 1e-300))))

    def ranking_scores(self, F):
        return self._proba(F) @ np.arange(self.n_columns, dtype=np.float64)


def _mean_query_cost(cost, ptr):
    """The loss the ranking objectives report: per-query costs (an array, or their sum) averaged over
    every query of ``ptr``, those too short to have a pair counted as 0."""
    return float(np.sum(cost) / (ptr.shape[0] - 1))


class Lambda:
    n_columns = 1

    #: ``lambda_gradients``' position-bias keywords (issue #45): read by the training gradients only
    BIAS_OPTIONS = ("bias", "propensities", "bias_norm", "position_bias_regularization")

    def __init__(self, metric="ndcg", k=None, sigma=1.0, n_threads=None, pairs=False, positions=None,
                 learning_rate=None, **kernel_options):
        self.metric, self.k, self.sigma, self.n_threads = metric, k, sigma, n_threads
        self.pairs = pairs
        # bias=: the training data's gradients are debiased by display position, the bias state (t+/t- or b)
        # carried from round to round; eval sets' losses are of their labels as they are
        self.bias_options = {key: kernel_options.pop(key) for key in self.BIAS_OPTIONS if key in kernel_options}
        self.kernel_options = kernel_options
        if self.bias_options.get("bias") is not None:
            self.bias_options["positions"] = positions
            if self.bias_options["bias"] == "additive":
                self.bias_options["learning_rate"] = learning_rate
        elif positions is not None:
            raise ValueError("position= is read with a bias= in kernel_options (bias='ips', 'pairwise' or "
                             "'additive'); pass one or drop position")
        self.bias_state = None
        self.last_pairs = None

    def init_score(self, y, ptr):
        return np.zeros(y.shape[0])

    #: :meth:`gradients` can return :meth:`loss` at ``F`` from the same kernel call
    loss_with_gradients = True

    def gradients(self, F, y, ptr, g, h, want_loss=False):
        """Fill ``g``, ``h`` at ``F``; with ``want_loss``, return :meth:`loss` at ``F`` too (the kernel's
        cost from the same call: the same numbers as a second call, at the price of one)."""
        from lambda_objectives import lambda_gradients

        biased = self.bias_options.get("bias") is not None
        extra = dict(self.bias_options, bias_state=self.bias_state) if biased else {}
        res = lambda_gradients(F, y, ptr, self.metric, self.k, self.sigma, out=(g, h), n_threads=self.n_threads,
                               return_pairs=self.pairs, return_cost=want_loss, **self.kernel_options, **extra)
        if biased and self.bias_options["bias"] != "ips":  # the state for the next round comes last
            self.bias_state = res[-1]
            res = res[:-1]
        self.last_pairs = res[2] if self.pairs else None
        return _mean_query_cost(res[-1], ptr) if want_loss else None

    def loss(self, F, y, ptr):
        from lambda_objectives import lambda_gradients

        return _mean_query_cost(lambda_gradients(F, y, ptr, self.metric, self.k, self.sigma, n_threads=self.n_threads,
                                                 return_cost=True, **self.kernel_options)[2], ptr)

    def ranking_scores(self, F):
        return F


class XENDCG:
    """XE-NDCG (Bruch et al. 2021) through :func:`lambda_objectives.xendcg_gradients`: fresh ``γ``
    every round from a generator seeded by ``random_state``. The recorded loss uses ``γ = 1/2``
    (the mean of ``U[0, 1)``), so the loss history is deterministic."""

    n_columns = 1

    def __init__(self, random_state=0, n_threads=None, **kernel_options):
        if kernel_options:
            raise ValueError(f"XE-NDCG takes no kernel_options, got {sorted(kernel_options)}")
        self.rng = np.random.default_rng(random_state)
        self.n_threads = n_threads
        self.last_pairs = None

    def init_score(self, y, ptr):
        return np.zeros(y.shape[0])

    def gradients(self, F, y, ptr, g, h):
        from lambda_objectives import xendcg_gradients

        g[:], h[:] = xendcg_gradients(F, y, ptr, gammas=self.rng.random(y.shape[0]), n_threads=self.n_threads)

    def loss(self, F, y, ptr):
        total = 0.0
        for a, b in zip(ptr[:-1], ptr[1:]):
            if b - a < 2:
                continue
            z = F[a:b] - F[a:b].max()
            phi = np.exp2(y[a:b]) - 0.5
            total -= float(np.sum(phi / phi.sum() * (z - np.log(np.exp(z).sum()))))
        return _mean_query_cost(total, ptr)

    def ranking_scores(self, F):
        return F


class YetiRank:
    """YetiRank (CatBoost's ``YetiRank``) through :func:`lambda_objectives.yetirank_gradients`: round
    ``r`` uses the draws of ``(seed, r, query)``, ``seed`` = ``random_state`` unless ``kernel_options``
    give one. The recorded loss is the pairwise logistic loss of the neighbour pairs of the
    noise-free ranking (every ``u = 1/2``, the noise's median), so the loss history is deterministic
    (``mode="classic"``, and ``"ndcg"`` with one neighbour and no ``top``; NaN for the other modes)."""

    n_columns = 1

    def __init__(self, random_state=0, n_threads=None, positions=None, learning_rate=None, **kernel_options):
        from lambda_objectives.checks import check_bias
        from lambda_objectives.objectives.yetirank import YETIRANK_DEFAULTS, check_yetirank_options

        # bias= (issue #45), as the adapters give it: each drawn pair's weight times its position factors
        # ("ips", "pairwise"), or the draws at score + b[position] ("additive"); the state carried by round
        given = {key: kernel_options.pop(key) for key in Lambda.BIAS_OPTIONS if key in kernel_options}
        self.bias, self.bias_options = check_bias(given.get("bias"), given.get("propensities"), given.get("bias_norm"),
                                                  given.get("position_bias_regularization"))
        if self.bias is None and positions is not None:
            raise ValueError("position= is read with a bias= in kernel_options (bias='ips', 'pairwise' or "
                             "'additive'); pass one or drop position")
        if self.bias == "additive" and learning_rate is None:
            raise ValueError("bias='additive' needs the learning rate of the position biases' Newton step")
        self.positions, self.learning_rate, self.bias_state = positions, learning_rate, None
        unknown = set(kernel_options) - set(YETIRANK_DEFAULTS) - {"seed"}
        if unknown:
            raise ValueError(f"YetiRank takes kernel_options {sorted(YETIRANK_DEFAULTS) + ['seed']}, got {sorted(unknown)}")
        opts = {**YETIRANK_DEFAULTS, "seed": 0 if random_state is None else random_state, **kernel_options}
        self.options = check_yetirank_options(**opts)
        self.permutations, self.decay, self.mode, self.seed = (self.options[k] for k in
                                                               ("permutations", "decay", "mode", "seed"))
        self.n_threads = n_threads
        self.round = 0
        self.last_pairs = None

    def init_score(self, y, ptr):
        return np.zeros(y.shape[0])

    def gradients(self, F, y, ptr, g, h):
        from lambda_objectives import yetirank_gradients

        if self.bias is None:
            yetirank_gradients(F, y, ptr, iteration=self.round, out=(g, h), n_threads=self.n_threads, **self.options)
            self.round += 1
            return
        from lambda_objectives._kernels.position_bias import additive_newton, shifted_scores
        from lambda_objectives.checks import check_positions, positions_in_query
        from lambda_objectives.objectives.lambdas import bias_arrays, bias_update

        n_pos = self.bias_options["propensities"].shape[0] if self.bias == "ips" else None
        pos = check_positions(positions_in_query(ptr) if self.positions is None else self.positions, ptr,
                              "position", n_pos)
        arrays = None
        if self.bias == "additive":
            if self.bias_state is None:
                self.bias_state = np.zeros(int(pos.max(initial=0)) + 1)
            shifted = np.empty(F.shape[0])
            shifted_scores(np.asarray(F, dtype=np.float64), pos, self.bias_state, shifted)
            F = shifted
        else:
            arrays, factors = bias_arrays(self.bias, self.bias_options, pos, self.bias_state)
        yetirank_gradients(F, y, ptr, iteration=self.round, out=(g, h), n_threads=self.n_threads, _bias=arrays,
                           **self.options)
        self.round += 1
        if self.bias == "additive":
            additive_newton(g, h, pos, float(self.learning_rate), self.bias_options["position_bias_regularization"],
                            self.bias_state)
        elif self.bias == "pairwise":
            self.bias_state = bias_update(arrays, factors, pos, self.bias_options["bias_norm"])

    def loss(self, F, y, ptr):
        o = self.options
        if o["mode"] not in ("classic", "ndcg") or o["top"] is not None or o["num_neighbors"] != 1:
            return float("nan")  # the YetiLoss modes' pairs are not written out here: no loss history
        from lambda_objectives._kernels.ranking import position_log2_table

        total = 0.0
        logs = position_log2_table(int(np.max(np.diff(ptr), initial=1)))  # log2(r + 2), the kernel's table
        for a, b in zip(ptr[:-1], ptr[1:]):
            if b - a < 2:
                continue
            o = np.argsort(-F[a:b], kind="stable")
            s, t = F[a:b][o], y[a:b][o]
            pos = np.arange(1, b - a)
            if self.mode == "classic":
                w = 0.15 * self.decay ** (pos - 1.0) * np.abs(t[:-1] - t[1:])
            else:
                idcg = float(np.sum(np.sort(t)[::-1] / logs[: b - a]))
                if idcg <= 0:
                    continue
                w = np.abs((t[:-1] - t[1:]) * (1.0 / logs[pos - 1] - 1.0 / logs[pos])) / idcg
            sign = np.where(t[:-1] > t[1:], 1.0, -1.0)  # margin of the better-labelled document
            total += float(np.sum(w * np.logaddexp(0.0, -sign * (s[:-1] - s[1:]))))
        return _mean_query_cost(total, ptr)

    def ranking_scores(self, F):
        return F


class Listwise:
    """Softmax cross-entropy (CatBoost's ``QuerySoftMax``) or ListMLE through
    :func:`lambda_objectives.softmax_gradients` / :func:`lambda_objectives.listmle_gradients`
    (``kernel_options``: ``beta``/``lambda_`` or ``ties``).
    The recorded loss is the objective's own (formulas: :mod:`lambda_objectives.objectives.listwise`), mean over queries."""

    n_columns = 1

    def __init__(self, metric, k=None, sigma=1.0, n_threads=None, **kernel_options):
        from lambda_objectives._registry import check_options
        from lambda_objectives.objectives.lambdas import _given_options
        from lambda_objectives.objectives.listwise import check_listmle_options, check_softmax_options

        if metric not in ("softmax", "listmle"):
            raise ValueError(f"Listwise takes metric 'softmax' or 'listmle', got {metric!r}")
        self.metric, self.k, self.sigma, self.n_threads = metric, k, sigma, n_threads
        self.kernel_options = kernel_options
        # fail at construction, not at the first round (the registry refuses unknown names there)
        known = {k: v for k, v in kernel_options.items() if k in ("beta", "lambda_", "ties")}
        if metric == "softmax":
            self.beta = check_softmax_options(**{k: v for k, v in known.items() if k != "ties"})[0]
        else:
            self.ties = check_listmle_options(**{k: v for k, v in known.items() if k == "ties"})
        # k, sigma and another family's options are refused as the registry refuses them
        check_options(metric, _given_options(k=k, sigma=sigma, **known))
        self.last_pairs = None

    def init_score(self, y, ptr):
        return np.zeros(y.shape[0])

    def gradients(self, F, y, ptr, g, h):
        from lambda_objectives import listmle_gradients, softmax_gradients

        opts = {key: v for key, v in self.kernel_options.items() if v is not None}  # None: the function's default
        (softmax_gradients if self.metric == "softmax" else listmle_gradients)(
            F, y, ptr, out=(g, h), n_threads=self.n_threads, **opts)

    def _query_loss(self, s, t):
        if self.metric == "softmax":
            z = self.beta * (s - s.max())
            return -float(np.sum(t * (z - np.log(np.exp(z).sum()))))
        order = np.argsort(-t, kind="stable")
        s, t = s[order], t[order]
        starts = np.r_[0, np.flatnonzero(t[1:] != t[:-1]) + 1] if self.ties == "breslow" else np.arange(t.size)
        total = 0.0
        for a, b in zip(starts[:-1], starts[1:]):  # every group but the last
            total += (b - a) * float(np.logaddexp.reduce(s[a:])) - float(s[a:b].sum())
        return total

    def loss(self, F, y, ptr):
        total = sum(self._query_loss(F[a:b], y[a:b]) for a, b in zip(ptr[:-1], ptr[1:]) if b > a)
        return _mean_query_cost(total, ptr)

    def ranking_scores(self, F):
        return F
