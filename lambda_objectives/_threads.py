"""Run a numba parallel kernel on an explicit number of threads without leaking global state."""

from contextlib import contextmanager

import numba

from .checks import check_n_threads


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
