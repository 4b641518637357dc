"""Run a grid of configurations once each: serially, in a spawn-context process pool, or on a
Dask cluster, with the run store (:mod:`comparisons.runstore`) as the single source of truth.

Every cell is computed at most once across a local run, a cluster run and a resumed run: a
finished cell in the store is reused (and reported as reused), an unfinished one is *claimed*
with a lock file before it is computed, so a second run into the same ``--out`` skips it and
waits for the first run's result instead of computing it again. With a Dask scheduler the store
must live on a file system that the workers and this process share (the worker writes nothing:
results travel back to this process, which writes the store).
"""

import multiprocessing
import sys
import threading
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from ._machine import log, progress, progress_bar
from ._progress import Cells, Heartbeat
from .runstore import RunError


def run_isolated(func, *args, **kwargs):
    """``func(*args, **kwargs)`` in a fresh spawn-context process; its result (or its exception).

    For anything that loads an engine: LightGBM and XGBoost loaded in one process slow each
    other down (their OpenMP runtimes interfere), and forking after OpenMP started is unsafe.
    ``func`` must be a module-level function; an exception in the child is raised here with the
    child's traceback attached.
    """
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_noticed, func, *args, **kwargs).result()


def _noticed(func, *args, **kwargs):
    """``func(*args, **kwargs)`` saying on stderr when numba compiles (a child process's own line; in the
    process of a command already saying so, nothing more)."""
    from lambda_objectives._kernels.compile import compile_notice

    with compile_notice("cli"):
        return func(*args, **kwargs)


def _run_batch(func, batch, args, store=None, meta=None, name=None):
    """``[(index, result)]`` of ``func`` on each ``(index, config)`` of ``batch`` in turn, and the
    exception that stopped it (``None`` when every config finished): results computed before a
    failure still reach the store.

    With ``store``, each result is saved as soon as it is computed, by the process computing it:
    a batch can run for an hour, and a run stopped (or a worker killed) part-way through keeps
    every cell it finished instead of losing the whole batch.
    """
    from lambda_objectives._kernels.compile import compile_notice

    with compile_notice("cli"):  # a worker process says when it compiles
        return _batch(func, batch, args, store, meta, name)


def _batch(func, batch, args, store, meta, name):
    done = []
    for i, cfg in batch:
        try:
            with Heartbeat(_cell_name(name, cfg)):  # a line every 30 s inside a long cell
                res = func(cfg, *args)
        except Exception as exc:  # noqa: BLE001 - handed back to the parent, which raises it
            if hasattr(exc, "add_note"):  # the child's traceback would not survive pickling
                exc.add_note(f"in the run of {cfg}:\n{traceback.format_exc()}")
            return done, exc
        if store is not None:
            try:
                store.save(cfg, res, meta)
            except RunError as exc:
                return done, exc
        done.append((i, res))
    return done, None


def _cell_name(name, cfg):
    """The cell's name in progress lines: ``name(cfg)``, else its configuration's values."""
    if name is not None:
        return name(cfg)
    return " ".join(str(v) for v in cfg.values() if isinstance(v, (str, int, float)))[:100]


def _batches(mine, configs, batch_by):
    """``mine`` in batches of equal ``batch_by(config)`` (singletons without it), largest first, so
    the longest batches start before the short ones fill the gaps."""
    if batch_by is None:
        return [[i] for i in mine]
    groups = {}
    for i in mine:
        groups.setdefault(batch_by(configs[i]), []).append(i)
    return sorted(groups.values(), key=len, reverse=True)


def run_grid(configs, func, store, *, args=(), jobs=1, scheduler=None, force=False, desc="runs", meta=None,
             on_result=None, poll_seconds=2.0, isolate=False, batch_by=None, refresh_seconds=60.0, name=None):
    """Results ``[(config, result)]`` for every config, computing only what the store lacks.

    Parameters
    ----------
    configs : list of dict
        JSON-serialisable configurations (the store key, with ``store``'s version key added).
    func : callable
        A module-level function ``func(config, *args) -> JSON-serialisable result``.
    store : comparisons.runstore.RunStore
    jobs : int
        Local processes (spawn context: forking after OpenMP has started kills children).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``) or a ``distributed.Client``.
    force : bool
        Recompute (and overwrite) stored cells.
    on_result : callable, optional
        Called as ``on_result(config, result)`` for each newly computed cell.
    isolate : bool
        Every cell in a fresh process (:func:`run_isolated`; with ``jobs > 1`` a pool whose workers
        each run one task, Python >= 3.11), e.g. when cells load different engines.
    batch_by : callable, optional
        ``batch_by(config)``: local runs compute the configs with one key in one process, one after
        the other (each still stored as its own cell), so a process's start-up (imports, compiled
        kernels, a loaded fold) is paid once per batch, not once per cell. With ``isolate`` the
        key must keep engines that must not share a process apart. Dask runs ignore it.
    name : callable, optional
        ``name(config) -> str``: the cell in progress lines (:mod:`comparisons._progress`: a line per finished
        cell, ``done/total`` and the time since the grid began, and inside a cell a line every 30 s);
        default, the configuration's scalar values.
    refresh_seconds : float
        How often the locks of the cells this run computes are refreshed (another host takes a lock
        over after ``store.stale_seconds`` without refresh).

    The store keys every cell on its config, the data files it reads, the code of ``lambda_objectives``,
    ``reference`` and ``func``'s module, and the package versions; reused cells are reported.

    Raises
    ------
    comparisons.runstore.RunError
        The store cannot be written (a grid with cells to compute needs a writable store; a fully
        stored one needs no write), or a worker process died (killed, out of memory): one line naming
        the store and what to do; the cells finished before are stored.
    """
    store.use_code(func.__module__)  # a change to the code computing a cell invalidates its results
    started = time.time()
    results, todo, reused = {}, [], 0
    for i, cfg in enumerate(configs):
        res = None if force else store.load(cfg)
        if res is not None:
            results[i] = res
            reused += 1
        else:
            todo.append(i)
    for p in store.redone:
        log(f"corrupt or partial result {p}: redoing it")
    outdated = {} if force or not todo else store.outdated([configs[i] for i in todo])
    if outdated:
        log(f"{desc}: stored results computed from " + ", ".join(f"{why} ({n})" for why, n in outdated.items())
            + " are not reused: recomputing those cells")
    mine, waiting = [], []
    for i in todo:
        (mine if store.claim(configs[i]) else waiting).append(i)
    log(f"{desc}: {len(configs)} cells, {reused} reused from {store.folder}, {len(mine)} to compute"
        + (f", {len(waiting)} being computed by another run (waiting for them)" if waiting else ""))
    if reused:
        log(f"{desc}: reused {reused} stored cell(s) computed with the same configuration, data files (SHA-256), "
            f"code and package versions; --force recomputes them")

    cells = Cells(desc, len(mine) + len(waiting))

    def finished(i, res, saved=False):
        cells.done(_cell_name(name, configs[i]))
        if not saved:
            store.save(configs[i], res, meta)
        store.release(configs[i])
        results[i] = res
        if on_result is not None:
            on_result(configs[i], res)

    stop = threading.Event()

    def keep_locks():  # another host judges a lock stale when it is not refreshed
        while not stop.wait(refresh_seconds):
            for i in list(mine):
                if i not in results:
                    store.refresh(configs[i])

    refresher = threading.Thread(target=keep_locks, daemon=True)
    refresher.start()
    try:
        if scheduler is not None:
            _run_dask(configs, func, args, mine, scheduler, finished, desc)
        else:
            batches = [[(i, configs[i]) for i in b] for b in _batches(mine, configs, batch_by)]
            with progress_bar(len(mine), desc=desc, disable=not mine) as bar:
                def collect(outcome):
                    done, exc = outcome
                    for i, res in done:
                        finished(i, res, saved=True)
                    bar.update(len(done))
                    if exc is not None:
                        raise exc

                try:
                    if jobs <= 1 or (isolate and sys.version_info < (3, 11)):
                        call = run_isolated if isolate else (lambda f, *a: f(*a))
                        for batch in batches:
                            collect(call(_run_batch, func, batch, args, store, meta, name))
                    else:
                        ctx = multiprocessing.get_context("spawn")
                        once = {"max_tasks_per_child": 1} if isolate else {}
                        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, **once) as pool:
                            futures = [pool.submit(_run_batch, func, batch, args, store, meta, name)
                                       for batch in batches]
                            for fut in as_completed(futures):
                                collect(fut.result())
                except BrokenProcessPool:
                    for i in mine:  # cells the dead worker's batches finished before it died are stored
                        if i not in results and (res := store.load(configs[i])) is not None:
                            finished(i, res, saved=True)
                    left = sum(i not in results for i in mine)
                    raise RunError(f"{desc}: a worker process died (killed by a signal, e.g. out of memory) with {left} "
                                   f"of {len(mine)} cells unfinished; the {len(mine) - left} finished are stored in "
                                   f"{store.folder}: run the command again to resume (with fewer --jobs if memory ran "
                                   "out)") from None
        for i in waiting:
            log(f"waiting for a cell locked by {store.holder(configs[i]) or 'another run'}: {store.lock_path(configs[i])} "
                f"(taken over when its process has exited, or after {store.stale_seconds:.0f} s without refresh "
                "for another host's lock)")
            while i not in results:
                # with force, an older stored result is not the one being waited for
                res = store.load(configs[i], newer_than=started if force else None)
                if res is not None:
                    results[i] = res
                elif store.claim(configs[i]):  # the other run died, or its lock went stale: compute it here
                    mine.append(i)
                    with Heartbeat(_cell_name(name, configs[i])):
                        finished(i, func(configs[i], *args))
                else:
                    time.sleep(poll_seconds)
    finally:
        stop.set()
        for i in mine:
            if i not in results:
                store.release(configs[i])
    return [(configs[i], results[i]) for i in range(len(configs))]


def _run_dask(configs, func, args, mine, scheduler, finished, desc):
    from distributed import Client
    from distributed import as_completed as dask_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = {client.submit(func, configs[i], *args, pure=False): i for i in mine}
        for fut in progress(dask_completed(list(futures)), total=len(futures), desc=desc, disable=not mine):
            finished(futures[fut], fut.result())
    finally:
        if client is not scheduler:
            client.close()
