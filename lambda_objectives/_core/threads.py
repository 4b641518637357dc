"""Run a numba parallel kernel on an explicit number of threads without leaking global state."""

import numbers
from contextlib import contextmanager

import numba


def check_n_threads(n_threads):
    """Resolve ``n_threads``: ``None`` or ``-1`` = all numba threads; otherwise 1..available."""
    avail = numba.config.NUMBA_NUM_THREADS
    if n_threads is None or n_threads == -1:
        return avail
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer, -1 or None, got {n_threads!r}")
    return int(min(n_threads, avail))


@contextmanager
def numba_threads(n_threads):
    """Use ``n_threads`` numba threads inside the block, then restore the previous count.

    numba's thread mask is thread-local, so this does not affect other Python threads.
    ``None``/-1 means every thread numba started (``NUMBA_NUM_THREADS``).
    """
    n = check_n_threads(n_threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)
