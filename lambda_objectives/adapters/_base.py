"""What every engine adapter shares: options, the per-data-set cache and the Hessian check.

The gradient itself comes from a back end chosen by ``preset`` (:mod:`.presets`); the engine
modules only translate the engine's calling convention into ``(labels, group_ptr, weights)``.
"""

import sys
import threading
import warnings
import weakref

import numpy as np

from .. import _registry as reg
from .._core.config import ENGINE_FLOAT
from .._core.openmp import share_with_xgboost
from .._core.threads import numba_threads
from .._kernels.position_bias import additive_newton, shifted_scores
from ..checks import (check_bias, check_finite, check_k, check_n_threads, check_positions, check_training_data,
                      positions_in_query)
from ..objectives.plrank import check_plrank_options
from ..objectives.yetirank import check_yetirank_options
from .presets import BACKENDS

#: stands for "argument not passed" in the engines' 2- and 4-argument call forms
MISSING = object()


def eval_name(metric):
    """The eval metric that goes with an objective (NDCG for objectives without a metric, e.g. RankNet)."""
    return metric if isinstance(metric, str) and reg.REGISTRY[metric].metric else "ndcg"


class HessianWarning(RuntimeWarning):
    """The Hessians are too small for the engine to split on (LightGBM issue #2239)."""


class CostWarning(RuntimeWarning):
    """A data set makes the exact full-list objective expensive (a long query with every pair formed)."""


#: longest query (documents) above which the exact back end warns that every pair of the full list is
#: formed: at 2,000 documents a query costs ~2 M pairs a round, where LightGBM's lambdarank (30 pairs
#: deep) costs ~25 ms per 20,000 rows (docs/reproducing/long-lists.md, "Long queries")
COST_WARNING_DOCS = 2000
#: ns per pair of the full-list ΔNDCG loop at one thread, for the warning's estimate: 10–15 ns
#: measured at 1,000–20,000 documents a query (docs/reproducing/long-lists.md, "Long queries")
NS_PER_PAIR = 15.0


def full_list_cost(obj, ptr):
    """The warning text when ``obj``'s exact back end forms every pair of a query longer than
    :data:`COST_WARNING_DOCS`, else ``None``."""
    if obj.preset is not None or obj.kernel_options.get("pair_method", "all") != "all":
        return None
    if isinstance(obj.metric, str):
        row = reg.REGISTRY[obj.metric]
        if not row.lambdas:
            return None  # listwise / sampled objectives are O(n) per query
        every_pair = obj.k is None or row.code in reg.ALL_PAIRS
    else:
        every_pair = obj.k is None
    sizes = np.diff(np.asarray(ptr, dtype=np.int64))
    longest = int(sizes.max(initial=0))
    if not every_pair or longest <= COST_WARNING_DOCS:
        return None
    n_pairs = int(np.sum(sizes * (sizes - 1) // 2))
    why = "k=None" if obj.k is None else f"metric={obj.metric!r} (which forms every pair at any k)"
    return (f"{obj._engine}: the longest query has {longest:,} documents; with {why} and pair_method='all' every "
            f"round forms every pair of each query, {n_pairs:,} pairs over this data set: about "
            f"{n_pairs * NS_PER_PAIR * 1e-9:.2g} s per round at one thread (~{NS_PER_PAIR:g} ns a pair). Pass a "
            "cut-off k (e.g. k=10: O(n·k) a query) or pair_method='mean' with num_pair_per_sample=m (m sampled "
            "partners a document, O(n·m), unbiased for the full-list lambdas); docs/reproducing/long-lists.md has the "
            "measured costs")


class _Once:
    """A flag an objective shares with its copies: ``lgb.train`` deep-copies its params, the objective
    among them, so a flag of the copy alone would warn again on every training with the same objective."""

    __slots__ = ("done",)

    def __init__(self):
        self.done = False

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class _Shared(dict):
    """What an objective shares with its copies (``lgb.train`` deep-copies the objective with its params): the
    fitted position-bias state, readable on the object the user holds."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class LambdaObjective:
    """Shared state: options, per-data-set cache (labels, group_ptr, weights, buffers)."""

    _engine = ""
    _hess_param = ("min_sum_hessian_in_leaf", 1e-3)
    #: what the engine's weights are attached to ("row" or "query")
    _weights_per = "row"
    #: the magnitude at which the engine stores an inf label / weight, and an inf initial score
    _stored_inf = (np.inf, np.inf)
    #: the engine's name for the initial scores of a data set
    _margin_name = "init_score"
    #: where the Hessian check's threshold comes from, when the engine does not say
    _threshold_from = ""

    def __init__(self, metric="ndcg", k=None, sigma=1.0, preset=None, n_threads=None,
                 check_hessian=True, *, bias=None, propensities=None, bias_norm=None,
                 position_bias_regularization=None, positions=None, learning_rate=None, **kernel_options):
        if preset not in BACKENDS:
            raise ValueError(f"preset must be one of {tuple(BACKENDS)}, got {preset!r}")
        # "ndcg@10" works as it does everywhere else; the registry says which metrics each preset has
        if reg.is_weight_function(metric):  # a user's @njit pair weight (exact back end only)
            if preset is not None:
                raise ValueError("a pair-weight function needs preset=None (the engines have no such objective)")
            self.metric, self.k = metric, check_k(k)
        else:
            self.metric, self.k = reg.parse_metric(metric, k, kind="objective", preset=preset)
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
        self.sigma = float(sigma)
        self.preset = preset
        self.n_threads = check_n_threads(n_threads) if n_threads is not None else None
        if check_hessian not in (True, False, "raise", "warn"):
            raise ValueError(f"check_hessian must be True/False/'warn'/'raise', got {check_hessian!r}")
        self.check_hessian = check_hessian
        # every option this back end would not read is an error now, not a no-op (or a TypeError at round 1)
        given = set(kernel_options) | ({"k"} if self.k is not None else set()) | \
            ({"sigma"} if self.sigma != 1.0 else set())
        reg.check_options(self.metric, given, preset)
        if self.metric == "yetirank":
            check_yetirank_options(**kernel_options)  # the values, at construction, not at the first round
        if self.metric == "plrank":
            check_plrank_options(self.k, **kernel_options)
        self.kernel_options = dict(kernel_options)
        self._set_bias(bias, propensities, bias_norm, position_bias_regularization, positions, learning_rate)
        self._cost_warned = _Once()
        self._fitted = _Shared()
        self._slots = {}
        self.n_calls = 0
        #: the boosting round of the next engine call (preset="xgboost", pair_method="mean" draws by it): 0
        #: at construction, advanced by every engine call unless an engine callback sets it
        self.iteration = 0
        self._follow_engine = False
        self._dry_run()

    def _dry_run(self):
        """Run the back end once on one all-zero-label query, so that a bad option *value* (``gain="bogus"``,
        a malformed ``label_gain``...) fails here, through the same code that reads it, and not at the
        engine's first round (option names are checked above). All-zero labels pass every label rule.
        The run starts numba's threads: in a process that has imported XGBoost, numba first joins
        XGBoost's OpenMP runtime (:mod:`.._openmp`), as the first round would have, unless this
        objective is LightGBM's and LightGBM's runtime is loaded (numba then stays with that one)."""
        if "xgboost" in sys.modules:
            share_with_xgboost(self._engine or "XGBoost")
        try:
            self.gradients(np.zeros(2), np.zeros(2), np.array([0, 2]),
                           positions=None if self.bias is None else np.arange(2))
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}({self.metric!r}): {exc}") from None
        finally:
            self.n_calls = 0
            self._slots = {}

    # -- position bias (bias=) ----------------------------------------------------------------------
    #: which ``bias=`` ways each back end has: ``"additive"`` wraps any back end (gradients at
    #: ``score + b[position]``, then LightGBM's Newton step); ``"pairwise"`` / ``"ips"`` live in a pair loop
    _BIAS_BY_PRESET = {None: ("ips", "pairwise", "additive"), "xgboost": ("pairwise", "additive"),
                       "lightgbm": ("additive",), "catboost": ("additive",)}

    def _set_bias(self, bias, propensities, bias_norm, position_bias_regularization, positions, learning_rate):
        self.bias, opts = check_bias(bias, propensities, bias_norm, position_bias_regularization)
        self.propensities = opts.get("propensities")
        self.bias_norm = opts.get("bias_norm")
        self.position_bias_regularization = opts.get("position_bias_regularization")
        if self.bias is None and positions is not None:
            raise ValueError("positions= is read only with bias= ('ips', 'pairwise' or 'additive'); pass bias or "
                             "drop positions")
        if learning_rate is not None and self.bias != "additive":
            raise ValueError("learning_rate= is the step of bias='additive''s position-bias update; pass "
                             "bias='additive' or drop learning_rate")
        if learning_rate is not None and (isinstance(learning_rate, bool) or not np.isfinite(learning_rate)
                                          or learning_rate <= 0):
            raise ValueError(f"learning_rate must be a finite number > 0, got {learning_rate!r}")
        self.learning_rate = None if learning_rate is None else float(learning_rate)
        self.positions = None if positions is None else np.array(positions)  # a copy: checked per data set
        if self.bias is None:
            return
        if self.bias not in self._BIAS_BY_PRESET[self.preset]:
            raise ValueError(f"preset={self.preset!r} has bias= {self._BIAS_BY_PRESET[self.preset]} (the engine's "
                             f"own debiasing, or the additive model that wraps any back end), not {self.bias!r}; "
                             "use preset=None for every bias= way")
        if self.bias in ("ips", "pairwise") and self.preset is None:
            row = reg.REGISTRY.get(self.metric) if isinstance(self.metric, str) else None
            if row is None or not (row.lambdas or row.name == "yetirank"):
                raise ValueError(f"bias={self.bias!r} weights the pairs of a pair loop, so it needs one of "
                                 f"{reg.names('lambdas') + ('yetirank',)}, not {self.metric!r}; bias='additive' "
                                 "works with any objective")

    def _positions(self, ptr, positions):
        """The checked display position of every row: ``positions`` (the engine's data set's, or
        :meth:`gradients`'), else this objective's ``positions=``, else each row's index inside its query."""
        if positions is None:
            positions = self.positions
        name = "positions"
        if positions is None:
            positions, name = positions_in_query(ptr), "positions (each row's index in its query)"
        n_pos = None if self.propensities is None else self.propensities.shape[0]
        return check_positions(positions, ptr, name=name, n_positions=n_pos)

    def _prepare_bias(self, st, positions, learning_rate):
        pos = self._positions(st["ptr"], positions)
        st["pos"] = pos
        if self.bias == "additive":
            lr = self.learning_rate
            if learning_rate is not None and lr is not None and lr != learning_rate:
                raise ValueError(f"learning_rate={lr!r} of the objective and the engine's learning_rate="
                                 f"{learning_rate!r} disagree: the position-bias step must use the engine's")
            lr = lr if lr is not None else learning_rate
            if lr is None:
                raise ValueError(f"bias='additive' takes one Newton step on the position biases per round, scaled "
                                 f"by the learning rate, which {self._engine} does not tell a custom objective: "
                                 "pass learning_rate= (the engine's eta / learning_rate)")
            st["bias_lr"] = float(lr)
            st["b"] = np.zeros(int(pos.max(initial=0)) + 1, dtype=np.float32)  # LightGBM's label_t
            st["shifted"] = np.zeros(st["n"], dtype=np.float64)

    # -- data-set cache -------------------------------------------------------------------------
    # One slot per calling thread: Dask's in-process workers (and LightGBM's sklearn wrapper on
    # several threads) call one shared objective object with different data at the same time.
    def _slot(self):
        return self._slots.setdefault(threading.get_ident(), [None, None])

    def _state(self, data, labels, group_ptr, weights, hess_threshold, positions=None, learning_rate=None):
        """The prepared state for ``data``, rebuilt whenever its labels, groups or weights change.

        Engines let users call ``set_label`` / ``set_weight`` / ``set_group`` between rounds, and
        LightGBM's sklearn path passes new weights with the same labels: a cache keyed on the data
        object alone would silently keep the old inputs. The engine hands over its current arrays
        on every call; comparing them with the cached copies is O(n), far below the O(n·k) kernel.
        """
        labels = np.asarray(labels)
        ptr = np.asarray(group_ptr)
        w = None if weights is None or len(weights) == 0 else np.asarray(weights)
        pos = None if positions is None else np.asarray(positions)
        st = self._cached(data, labels, ptr, w, pos)
        if st is not None:
            return st
        st = self._prepare(labels, ptr, w, hess_threshold, positions=pos, learning_rate=learning_rate)
        st["key"] = (labels.copy(), ptr.copy(), None if w is None else w.copy(), None if pos is None else pos.copy())
        self._remember(data, st)
        return st

    def _cached(self, data, labels, ptr, w, pos=None):
        """The state cached for ``data`` when its labels, groups, weights (``None``: none) and positions
        equal the cached copies, else ``None``. Reads the arrays and keeps none of them, so they may be
        views of an engine's own memory (:func:`.xgboost._info_views`)."""
        ref, st = self._slot()
        if st is None or ref is None or ref() is not data:
            return None
        old_y, old_ptr, old_w, old_pos = st["key"]
        if (np.array_equal(old_y, labels) and np.array_equal(old_ptr, ptr)
                and (old_w is None) == (w is None) and (w is None or np.array_equal(old_w, w))
                and (old_pos is None) == (pos is None) and (pos is None or np.array_equal(old_pos, pos))):
            return st
        return None

    def _remember(self, data, state):
        slot = self._slot()
        try:
            slot[0] = weakref.ref(data)
        except TypeError:  # not weak-referenceable: keep it alive instead
            slot[0] = (lambda d: (lambda: d))(data)
        slot[1] = state

    def __getstate__(self):
        # caches hold weak references and buffers: rebuilt after a copy or on a Dask worker
        state = self.__dict__.copy()
        state["_slots"] = {}
        return state

    def _prepare(self, labels, group_ptr, weights, hess_threshold, from_engine=True, positions=None,
                 learning_rate=None):
        """Validate the data set once (labels, groups, weights, display positions) and allocate every buffer."""
        lab, ptr, weights = check_training_data(
            labels, group_ptr, weights, weights_per=self._weights_per,
            limit=self._stored_inf[0] if from_engine else np.inf, engine=self._engine if from_engine else "")
        n = lab.shape[0]
        st = {"n": n, "ptr": ptr, "labels": lab,
              "grad": np.zeros(n, ENGINE_FLOAT), "hess": np.zeros(n, ENGINE_FLOAT),
              "threshold": hess_threshold, "warned": False}
        if self.bias is not None:
            self._prepare_bias(st, positions, learning_rate)
        BACKENDS[self.preset].prepare(self, st, weights)
        if not self._cost_warned.done:  # once per objective, at the first data set that is expensive
            text = full_list_cost(self, ptr)
            if text is not None:
                self._cost_warned.done = True
                warnings.warn(text, CostWarning, stacklevel=4)
        return st

    def _compute(self, st, scores, name=None, initial=None):
        """The gradients of ``scores``; ``initial()`` (optional) returns the data set's initial scores
        (``None`` when it has none), read only to say why the engine's scores are not finite."""
        if name is None:  # the engine's margins: its initial scores plus the trees so far
            try:
                check_finite(scores, f"the score {self._engine} passed to the objective", self._stored_inf[1])
            except ValueError as exc:
                raise ValueError(f"{exc}{self._why_not_finite(initial)}") from None
        else:  # preset="lightgbm" reproduces LightGBM's skip of a document scored -inf
            check_finite(scores, name, minus_inf=self.preset == "lightgbm")
        with numba_threads(self.n_threads):
            if self.bias == "additive":  # LightGBM's model: gradients at score + b[position], then b's step
                shifted_scores(np.asarray(scores, dtype=np.float64), st["pos"], st["b"], st["shifted"])
                g, h = BACKENDS[self.preset].compute(self, st, st["shifted"])
                additive_newton(g, h, st["pos"], st["bias_lr"], self.position_bias_regularization, st["b"])
            else:
                g, h = BACKENDS[self.preset].compute(self, st, scores)
        if name is None:
            self._fitted_bias(st)
        self.n_calls += 1
        if name is None and not self._follow_engine:
            self.iteration += 1
        self._check_hessian(st)
        return g, h

    def _why_not_finite(self, initial):
        """Why the engine's scores are not finite: its initial scores, or a model that diverged."""
        stored = "" if np.isinf(self._stored_inf[1]) else f", stored by {self._engine} as {self._stored_inf[1]:g}"
        bad_init = f": the data set's {self._margin_name} is not finite (NaN or inf{stored}); pass finite initial scores"
        knobs = "min_child_weight or reg_lambda" if self._engine == "XGBoost" else "min_sum_hessian_in_leaf or lambda_l2"
        diverged = (": the model's scores overflowed, so training diverged (Newton leaf values -G/H from "
                    f"vanishing Hessians grow without bound); raise {knobs}, or lower the learning rate")
        init = initial() if initial is not None else False
        if init is False:  # not known here (LightGBM's sklearn call): either
            return f"{bad_init}, or{diverged[1:]}"
        if init is not None and len(init) and not np.all(np.abs(np.asarray(init, dtype=np.float64))
                                                         < self._stored_inf[1]):
            return bad_init
        return diverged

    def _check_hessian(self, st):
        """Raise on non-finite gradients; warn (or raise) when no split can satisfy the engine's
        minimum child Hessian (the latter only with ``check_hessian``)."""
        h = st["hess"]
        totals = st.pop("totals", None)  # (Σ grad, Σ hess, min hess) of a back end's one-pass hand-back
        if totals is None:
            totals = (np.sum(st["grad"], dtype=np.float64), np.sum(h, dtype=np.float64), None)
        total = float(totals[1])
        if not (np.isfinite(total) and np.isfinite(totals[0])):
            # a NaN/inf gradient must never reach the engine: it trains one broken tree and stops
            bad = ~(np.isfinite(st["grad"]) & np.isfinite(h))
            i = int(np.flatnonzero(bad)[0]) if bad.any() else 0
            raise ValueError(
                f"{self._engine}: the objective produced non-finite gradients or Hessians (first at row {i}: "
                f"grad {st['grad'][i]!r}, hess {h[i]!r}); check the labels (2**label overflows for labels "
                ">= 1024 with exponential gain) and sigma")
        if st["warned"] or not self.check_hessian:
            return
        low = float(totals[2] if totals[2] is not None else h.min(initial=np.inf))
        if low < 0:
            msg = f"negative Hessians (min {low:.3g})"
        elif total < 2.0 * st["threshold"]:
            msg = f"sum of Hessians over the data is {total:.3g}"
        else:
            return
        name, _ = self._hess_param
        text = (
            f"{self._engine}: {msg}, but a split needs {name} >= {st['threshold']:g} in each child{self._threshold_from}, "
            f"so the engine will stop growing trees silently (LightGBM issue #2239). Scale the "
            f"objective (e.g. larger sigma, normalize=None), lower {name} (e.g. 1e-12), or check "
            "that queries have at least two distinct labels."
        )
        st["warned"] = True
        if self.check_hessian == "raise":
            raise ValueError(text)
        warnings.warn(text, HessianWarning, stacklevel=4)

    def _fitted_bias(self, st):
        """After an engine's round: the estimated bias state, readable as ``bias_factors_`` (``"pairwise"``:
        ``(t⁺, t⁻)`` per position) or ``position_bias_`` (``"additive"``: ``b`` per position)."""
        if self.bias == "pairwise" and "ti" in st:
            self._fitted["bias_factors_"] = (st["ti"].copy(), st["tj"].copy())
        elif self.bias == "additive":
            self._fitted["position_bias_"] = st["b"].astype(np.float64)

    def _fitted_value(self, name, bias):
        if self.bias != bias:
            raise AttributeError(f"{name} is the state of bias={bias!r}; this objective has bias={self.bias!r}")
        if name not in self._fitted:
            raise AttributeError(f"{name} is set by training (the engine's first call of the objective)")
        return self._fitted[name]

    @property
    def bias_factors_(self):
        """``(t_plus, t_minus)``: bias='pairwise''s per-position factors after the last round (float64; t⁺ at
        the clicked/higher-labelled row's position, t⁻ at the other's; position 0 is 1 by construction)."""
        return self._fitted_value("bias_factors_", "pairwise")

    @property
    def position_bias_(self):
        """bias='additive''s ``b`` per display position (index = position) after the last round."""
        return self._fitted_value("position_bias_", "additive")

    def gradients(self, scores, labels, group_ptr, weight=None, positions=None):
        """Gradients and Hessians (float32 arrays) for ``scores`` outside any engine.

        ``weight`` is what the engine's data set would carry: per document for LightGBM, per
        query for XGBoost (each engine's own ``weight=``). ``positions`` (with ``bias=``): each row's
        display position (default: this objective's ``positions=``, else the row's index in its query).
        Each call starts from the initial bias state (``t⁺ = t⁻ = 1``, ``b = 0``): the first round's gradients.
        """
        if np.shape(scores) != np.shape(labels):
            raise ValueError(f"scores has shape {np.shape(scores)}, labels {np.shape(labels)}: one score per row")
        st = self._prepare(labels, group_ptr, weight, 0.0, from_engine=False, positions=positions,
                           learning_rate=None if self.learning_rate is not None else 0.1)
        g, h = self._compute(st, scores, name="scores")
        return g.copy(), h.copy()

    def __repr__(self):
        opts = "".join(f", {k}={v!r}" for k, v in self.kernel_options.items())
        if self.bias is not None:
            opts += f", bias={self.bias!r}" + "".join(
                f", {k}={getattr(self, k)!r}" for k in ("propensities", "bias_norm", "position_bias_regularization",
                                                       "learning_rate") if getattr(self, k) is not None)
        return (f"{type(self).__name__}(metric={self.metric!r}, k={self.k!r}, sigma={self.sigma!r}, "
                f"preset={self.preset!r}{opts})")
