"""What a benchmark ran on: recorded beside every figure."""

import os
import platform
import time


def machine_record():
    """CPU count, numba threads, platform and package versions."""
    import numba
    import numpy

    rec = {
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
    }
    rec.update(engine_versions())
    return rec


def engine_versions():
    """``{engine: version or None}`` for the engines the results may depend on."""
    out = {}
    for name in ("lightgbm", "xgboost"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = None
    return out


def best_time(fn, repeat):
    """Best wall time of ``repeat`` calls of ``fn`` after one warm-up call (compilation, caches)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def progress(iterable, **kw):
    """``tqdm(iterable, **kw)`` when tqdm is installed (the ``plots`` extra), else the iterable."""
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, **kw)


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


def progress_bar(total, **kw):
    """A manually advanced ``tqdm(total=total, **kw)`` (a context manager with ``update(n)``), or a
    silent stand-in without tqdm."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, **kw)


def log(message, file=None):
    """One log line that does not break an active tqdm progress bar (on ``file``, default stdout)."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(message, file=file, flush=True)
        return
    tqdm.write(str(message), file=file)
