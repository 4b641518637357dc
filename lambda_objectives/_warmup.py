"""The warm-up: every kernel a user can reach compiled once (``python -m lambda_objectives warmup``).

It sits above the whole library and ``reference`` (it calls each of them once on a tiny data set), so
nothing in the library imports it; the notice it prints is ``lambda_objectives._kernels.compile``'s.
"""

import os
import sys
import time

import numpy as np
from numba.core import event

from ._kernels.compile import _Notice, _state, cache_location


def _tiny():
    """A small synthetic set (12 queries of 8 documents, grades 0..4, 5 features): every kernel's types."""
    from .data.datasets import make_ranking

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
    from .objectives.lambdas import LAMBDA_METRICS

    return [m for m in LAMBDA_METRICS if not (reg.REGISTRY[m].listwise or reg.REGISTRY[m].sampled)]


def _pair_objectives(d, s):
    from .objectives.lambdas import lambda_gradients

    for m in _pair_metrics():
        lambda_gradients(s, d.y, d.group_ptr, m, 5, return_pairs=True, return_cost=True)
    # the adapters' hand-back of the exact pair objectives to an engine
    from ._kernels.handback import hand_back

    g = np.zeros(d.y.shape[0])
    hand_back(g, g, g[:0], g.astype(np.float32), g.astype(np.float32))


def _sampled_pairs(d, s):
    from .objectives.lambdas import lambda_gradients, pair_setup

    for m in _pair_metrics():
        lambda_gradients(s, d.y, d.group_ptr, m, 5, pair_method="mean")
    # the adapters' per-data-set constants of the sampled pairs (pairs.sampled_constants)
    pair_setup(d.y, d.group_ptr, d.y.shape[0], "ndcg", 5, pair_method="mean")


def _listwise_objectives(d, s):
    from . import _registry as reg
    from . import objectives
    from .objectives.lambdas import OBJECTIVES, OTHER_DOORS, lambda_gradients
    from .objectives.listwise import listmle_gradients

    for m in OBJECTIVES:
        if reg.REGISTRY[m].listwise or reg.REGISTRY[m].sampled:
            if m in OTHER_DOORS:  # each family through its own function (one door per objective)
                getattr(objectives, OTHER_DOORS[m])(s, d.y, d.group_ptr)
            else:
                lambda_gradients(s, d.y, d.group_ptr, m)
    listmle_gradients(s, d.y, d.group_ptr, ties="stable")


def _engine_presets(d, s):
    from .adapters import LightGBMObjective, XGBoostObjective
    from .catboost import catboost_lambdamart_gradients

    for m in ("ndcg", "xendcg"):
        LightGBMObjective(m, preset="lightgbm").gradients(s, d.y, d.group_ptr)
    for m, method in (("ndcg", "topk"), ("ndcg", "mean"), ("map", "topk")):
        XGBoostObjective(m, preset="xgboost", pair_method=method).gradients(
            s, (d.y > 1).astype(float) if m == "map" else d.y, d.group_ptr)
    for m in ("ndcg", "err"):
        catboost_lambdamart_gradients(s, d.y / d.y.max() if m == "err" else d.y, d.group_ptr, metric=m)


def _combine_and_io(d, s):
    import tempfile

    from .diagnostics.combine import best_linear_combination
    from .data.io import load_letor, save_letor

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
