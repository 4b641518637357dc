"""Saying when numba compiles: the one notice the CLI, the rankers and the warm-up print.

Every kernel is ``@njit(cache=True)``: its first call in a fresh environment compiles it (seconds to
tens of seconds a kernel on 2 cores) and writes the machine code to numba's on-disk cache; every later
process loads it from there in milliseconds. :func:`compile_notice` prints one line on stderr when a
compilation actually starts inside its block and, at its end, how long compiling took and where the
cache is. The detection is numba's own: a dispatcher fires its ``"numba:compile"`` event only after it
found no compiled overload for the call's signature in memory *and* none in its on-disk cache index
(``Dispatcher.compile``), so a warm cache prints nothing and a cold one prints before the wait.
A plain ``print`` to stderr, not ``logging`` or ``warnings``: nothing to configure, nothing a warnings
filter (or pytest) swallows, nothing on stdout that a script parses.
"""

import contextlib
import functools
import os
import sys
import threading
import time

from numba.core import event

#: Measured cold first calls (an empty ``NUMBA_CACHE_DIR``, the 2-core machine, 2026-11-28, loaded by
#: other work: load 2-3, MARTRanker 6; docs/user-guide.md "First run and compilation" has the table), in
#: seconds: the "about N s" of each notice. ``"cli"``: no single figure (a command reaches anything from
#: one objective to all of them), so its line names the warm-up instead.
COLD_SECONDS = {
    "lambda_gradients": 46,
    "metric_values": 17,
    "LGBMLambdaRanker": 45,
    "XGBLambdaRanker": 197,
    "MARTRanker": 300,
    "cli": None,
}

_state = threading.local()
_lock = threading.Lock()


class _Notice(event.Listener):
    """Prints the line at the first top-level compilation (unless ``stream`` is None) and counts and times
    the compilations (top-level ones: a kernel's callees compile inside it)."""

    def __init__(self, about, stream, hint=""):
        self.about, self.stream, self.hint = about, stream, hint
        self.depth, self.started, self.seconds, self.count = 0, None, 0.0, 0

    def on_start(self, ev):
        with _lock:
            if self.depth == 0:
                if self.count == 0 and self.stream is not None:
                    about = f", about {self.about:.0f} s" if self.about else self.hint
                    print(f"compiling numba kernels (first run only{about}) ...", file=self.stream, flush=True)
                self.started = time.perf_counter()
            self.depth += 1
            self.count += 1

    def on_end(self, ev):
        with _lock:
            self.depth -= 1
            if self.depth == 0 and self.started is not None:
                self.seconds += time.perf_counter() - self.started
                self.started = None


@contextlib.contextmanager
def compile_notice(what=None, stream=None):
    """Within the block, say on ``stream`` (default ``sys.stderr``) when numba starts compiling.

    Parameters
    ----------
    what : str, optional
        A key of :data:`COLD_SECONDS` (the measured cold time the line quotes as "about N s"), or
        ``None`` for no estimate.
    stream : file, optional
        Where the two lines go (default ``sys.stderr`` at entry).

    Nested blocks (a ranker's ``fit`` inside a CLI command) print once, from the outermost. Nothing
    is printed when nothing compiles (a warm cache, ``NUMBA_DISABLE_JIT=1``). Yields the listener:
    ``.count`` compilations (nested included), ``.seconds`` spent in top-level ones.
    """
    if what is not None and what not in COLD_SECONDS:
        raise ValueError(f"what must be one of {sorted(COLD_SECONDS)} or None, got {what!r}")
    outer = getattr(_state, "notice", None)
    if outer is not None:
        yield outer
        return
    stream = sys.stderr if stream is None else stream
    hint = "; `python -m lambda_objectives warmup` compiles everything once" if what == "cli" else ""
    listener = _Notice(COLD_SECONDS.get(what) if what is not None else None, stream, hint)
    _state.notice = listener
    try:
        with event.install_listener("numba:compile", listener):
            yield listener
    finally:
        _state.notice = None
        if listener.count:
            print(f"numba kernels compiled in {listener.seconds:.1f} s ({listener.count} functions); cached in "
                  f"{cache_location()}: later runs start at once", file=stream, flush=True)


def announces_compilation(what):
    """Decorator: run the function inside :func:`compile_notice` (``what``: its :data:`COLD_SECONDS` key).
    The signature is kept (``functools.wraps``), which scikit-learn's metadata routing reads from ``fit``."""
    def decorate(fn):
        @functools.wraps(fn)
        def noticed(*args, **kwargs):
            with compile_notice(what):
                return fn(*args, **kwargs)
        return noticed
    return decorate


def cache_location():
    """Where numba caches this package's kernels: ``NUMBA_CACHE_DIR`` when set, else the ``__pycache__``
    folder beside the sources when it is writable, else numba's user-wide folder (``~/.cache/numba`` on
    Linux, ``$XDG_CACHE_HOME/numba`` when that is set); numba's own choice, read from a kernel's cache."""
    from ._kernels.metric import metrics_driver

    try:
        return metrics_driver._cache._cache_path  # the locator numba chose (FunctionCache)
    except AttributeError:  # NUMBA_DISABLE_JIT=1: a plain function, no cache
        return os.environ.get("NUMBA_CACHE_DIR") or "(no cache: NUMBA_DISABLE_JIT is set)"


def _tiny():
    """A small synthetic set (12 queries of 8 documents, grades 0..4, 5 features): every kernel's types."""
    from .datasets import make_ranking

    d = make_ranking(12, 8, 5, seed=0)
    s = (d.X[:, 0] - d.X[:, 1]).astype(float)
    return d, s


def _metrics(d, s):
    from .metrics import METRICS, metric_values, metric_values_table

    for m in METRICS:
        metric_values(s, d.y, d.group_ptr, m, 5)
    metric_values_table(s, d.y, d.group_ptr, ["ndcg@5", "err"])


def _pair_metrics():
    from . import _registry as reg
    from .lambdas import LAMBDA_METRICS

    return [m for m in LAMBDA_METRICS if not (reg.REGISTRY[m].listwise or reg.REGISTRY[m].sampled)]


def _pair_objectives(d, s):
    from .lambdas import lambda_gradients

    for m in _pair_metrics():
        lambda_gradients(s, d.y, d.group_ptr, m, 5, return_pairs=True, return_cost=True)


def _sampled_pairs(d, s):
    from .lambdas import lambda_gradients

    for m in _pair_metrics():
        lambda_gradients(s, d.y, d.group_ptr, m, 5, pair_method="mean")


def _listwise_objectives(d, s):
    from . import _registry as reg
    from .lambdas import OBJECTIVES, lambda_gradients
    from .listwise import listmle_gradients

    for m in OBJECTIVES:
        if reg.REGISTRY[m].listwise or reg.REGISTRY[m].sampled:
            lambda_gradients(s, d.y, d.group_ptr, m)
    listmle_gradients(s, d.y, d.group_ptr, ties="stable")


def _engine_presets(d, s):
    from .adapters import LightGBMObjective, XGBoostObjective
    from .catboost_gradients import catboost_lambdamart_gradients

    for m in ("ndcg", "xendcg"):
        LightGBMObjective(m, preset="lightgbm").gradients(s, d.y, d.group_ptr)
    for m, method in (("ndcg", "topk"), ("ndcg", "mean"), ("map", "topk")):
        XGBoostObjective(m, preset="xgboost", pair_method=method).gradients(
            s, (d.y > 1).astype(float) if m == "map" else d.y, d.group_ptr)
    for m in ("ndcg", "err"):
        catboost_lambdamart_gradients(s, d.y / d.y.max() if m == "err" else d.y, d.group_ptr, metric=m)


def _combine_and_io(d, s):
    import tempfile

    from .combine import best_linear_combination
    from .io import load_letor, save_letor

    best_linear_combination(s, -s, d.y, d.group_ptr)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiny.txt")
        save_letor(path, d.X, d.y, group_ptr=d.group_ptr)
        load_letor(path)


def _reference(d, s):
    import numpy as np

    try:
        from reference import MARTRanker
    except ImportError:  # an install without the research trainer
        return "reference trainer not installed: skipped"
    group = np.diff(d.group_ptr)
    fits = [dict(criterion=c) for c in ("se", "ole", "ole_exact")] + [
        dict(objective=o) for o in ("ls", "logistic", "mcrank")] + [
        dict(growth="breadth_first"), dict(leaf_hessian="exact"), dict(metric="yetirank"), dict(metric="listmle"),
        dict(subsample=0.5, colsample=0.5)]
    for opts in fits:
        m = MARTRanker(n_estimators=2, num_leaves=4, min_data_in_leaf=2, **opts).fit(d.X, d.y, group=group)
        m.predict(d.X)
    # the multi-threaded builders a large data set takes (tiny nodes take their single-threaded twins):
    # the same fits with the size thresholds at 0, restored after
    from reference import grower

    saved = grower.TreeGrower.SERIAL_WORK, grower.PARALLEL_PAIRS
    grower.TreeGrower.SERIAL_WORK, grower.PARALLEL_PAIRS = 0, 0
    try:
        for opts in (dict(criterion="ole_exact"), dict(objective="mcrank"), dict(criterion="se")):
            MARTRanker(n_estimators=2, num_leaves=4, min_data_in_leaf=2, n_threads=2, **opts).fit(d.X, d.y, group=group)
    finally:
        grower.TreeGrower.SERIAL_WORK, grower.PARALLEL_PAIRS = saved
    return None


#: The warm-up's steps, in order: (name, function of the tiny data set). Every public entry point
#: reaches the kernels of one of them; tests/test_compile.py checks that no kernel is left out.
#: The heaviest first: ``warmup(jobs=2)`` hands them out in this order to whichever process is free.
WARMUP_STEPS = (
    ("pair objectives (lambda_gradients, every pair)", _pair_objectives),
    ("sampled pairs (lambda_gradients, pair_method='mean')", _sampled_pairs),
    ("reference trainer (MARTRanker: SE, OLE, exact OLE, McRank...)", _reference),
    ("metrics (metric_values)", _metrics),
    ("listwise and sampled objectives (XE-NDCG, YetiRank, softmax, ListMLE, PL-Rank)", _listwise_objectives),
    ("engine presets (LightGBM, XGBoost, CatBoost parity kernels)", _engine_presets),
    ("linear combination and the LETOR loader", _combine_and_io),
)


def warmup(stream=None, steps=None, jobs=1):
    """Compile (or load from numba's cache) every kernel a user can reach, saying so step by step.

    One line per step on ``stream`` (default ``sys.stderr``): its name, time and how many functions
    it compiled, then the total and the cache folder. ``steps``: names (or unique name prefixes) of
    :data:`WARMUP_STEPS` to run (default all). ``jobs``: processes compiling at once (numba compiles
    on one core: ``jobs=2`` halves a cold warm-up on 2 cores; each step goes to the next free process,
    the heaviest first; the cache files are written atomically, so processes may share them). Returns
    the number of functions numba compiled (0 when the cache was warm). The inputs are a tiny
    synthetic set: nothing is computed for anyone.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    names = [name for name, _ in WARMUP_STEPS]
    if steps is not None:
        if isinstance(steps, str):
            raise ValueError(f"steps must be a list of step names (or name prefixes), got the string {steps!r}")
        bad = [p for p in steps if not isinstance(p, str) or not p.strip() or not any(n.startswith(p) for n in names)]
        if bad:
            raise ValueError(f"steps: no warm-up step starts with {', '.join(map(repr, bad))}; steps: {'; '.join(names)}")
    stream = sys.stderr if stream is None else stream
    todo = [name for name, _ in WARMUP_STEPS if steps is None or any(name.startswith(p) for p in steps)]
    t0 = time.perf_counter()
    print(f"warm-up: {len(todo)} steps in {min(jobs, len(todo))} process(es); numba's cache: {cache_location()}",
          file=stream, flush=True)
    compiled = 0

    def say(i, outcome):
        name, seconds, cpu, count, note = outcome
        what = f"compiled {count} functions" if count else "already cached"
        # the processor time too: on a machine shared with other work the wall time says little
        print(f"warm-up {i}/{len(todo)}: {name}: {seconds:.1f} s ({cpu:.1f} s of processor time), {what}"
              + (f" ({note})" if note else ""), file=stream, flush=True)
        return count

    if jobs > 1 and len(todo) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        ctx = multiprocessing.get_context("spawn")  # no fork after numba's threads started
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx) as pool:
            futures = [pool.submit(_step, name) for name in todo]
            for i, fut in enumerate(as_completed(futures), 1):  # each step said as it ends
                compiled += say(i, fut.result())
    else:
        for i, name in enumerate(todo, 1):
            compiled += say(i, _step(name))
    print(f"warm-up done in {time.perf_counter() - t0:.1f} s ({compiled} functions compiled"
          f"{'' if compiled else ': the cache was warm'})", file=stream, flush=True)
    return compiled


def _step(name):
    """Run one warm-up step (in this process or a worker): ``(name, seconds, processor seconds, functions
    compiled, note)``."""
    fn = dict(WARMUP_STEPS)[name]
    d, s = _tiny()
    t, cpu = time.perf_counter(), time.process_time()
    notice, outer = _Notice(None, None), getattr(_state, "notice", None)
    _state.notice = notice  # the rankers' own notices inside the step stay silent (nested)
    try:
        with event.install_listener("numba:compile", notice):
            note = fn(d, s)
    finally:
        _state.notice = outer
    return name, time.perf_counter() - t, time.process_time() - cpu, notice.count, note
