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
    from .metric import metrics_driver

    try:
        return metrics_driver._cache._cache_path  # the locator numba chose (FunctionCache)
    except AttributeError:  # NUMBA_DISABLE_JIT=1: a plain function, no cache
        return os.environ.get("NUMBA_CACHE_DIR") or "(no cache: NUMBA_DISABLE_JIT is set)"
