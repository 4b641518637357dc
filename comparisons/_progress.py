"""Progress lines of the comparison commands: the one home (``quality``, ``paper``, ``validate``, and any
new command, use it).

Two things, both printed with :func:`comparisons._machine.log` (plain lines that do not break a tqdm bar):

* :class:`Cells` — a line per finished cell of a grid: ``quality: 3/120 cells (2 m 05 s): <what>``.
  :func:`comparisons._runner.run_grid` prints these itself; a command looping over its own cells
  makes one ``Cells(desc, total)`` and calls ``.done(what)`` after each.
* :class:`Heartbeat` — inside one long cell, a line every :data:`progress_seconds` (30 s) saying the
  cell is alive and how far it is: ``  <name>: round 40 of 200 (20 %), 1 m 30 s``, or ``running,
  1 m 30 s`` when nobody reports rounds. Use it as a context manager around the cell and call
  ``.round(i)`` as rounds end (optional: a background thread prints even when no round ends, e.g.
  while numba compiles). ``run_grid`` wraps every cell in one.

``COMPARISONS_PROGRESS_SECONDS`` (environment) sets the interval (e.g. ``5`` to watch closely).

Example (a command's own loop)::

    cells = Cells("clicks", len(configs))
    for cfg in configs:
        with Heartbeat(f"clicks {cfg['name']}", total=cfg["rounds"]) as beat:
            for r in range(cfg["rounds"]):
                ...             # one round
                beat.round(r + 1)
        cells.done(cfg["name"])
"""

import os
import sys
import threading
import time

from ._machine import log


def progress_seconds():
    """Seconds between two progress lines of one cell: ``COMPARISONS_PROGRESS_SECONDS``, else 30."""
    text = os.environ.get("COMPARISONS_PROGRESS_SECONDS", "30")
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ValueError(f"COMPARISONS_PROGRESS_SECONDS must be a number of seconds > 0, got {text!r}")
    return value


def elapsed(seconds):
    """``"42 s"``, ``"3 m 05 s"``, ``"2 h 04 m"``: a duration as a person reads it."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} m {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} m"


class Cells:
    """A line per finished cell: ``<desc>: <done>/<total> cells (<elapsed>)[: <what>]``."""

    def __init__(self, desc, total):
        self.desc, self.total, self.count, self.start = desc, total, 0, time.perf_counter()

    def done(self, what=""):
        self.count += 1
        log(f"{self.desc}: {self.count}/{self.total} cells ({elapsed(time.perf_counter() - self.start)})"
            + (f": {what}" if what else ""))


class Heartbeat:
    """Inside a long cell: a line every ``every`` seconds (default :func:`progress_seconds`) naming the
    cell, the round reached (when :meth:`round` is called) and the time since the cell began. A
    context manager; lines come from :meth:`round` as rounds end and from a daemon thread when none
    does for ``every`` seconds. A heartbeat entered inside another (in one thread) speaks for both:
    the outer one is silent until the inner one ends. Lines go to the ``sys.stdout`` of entry (a cell
    that redirects stdout meanwhile does not swallow them)."""

    def __init__(self, name, total=None, every=None):
        self.name, self.total = name, total
        self.every = progress_seconds() if every is None else float(every)
        self.start = self.last = time.perf_counter()
        self.reached = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._muted = 0
        self._outer = None
        self.out = None

    def __enter__(self):
        self.out = sys.stdout
        self._outer = getattr(_active, "beat", None)
        if self._outer is not None:
            self._outer._muted += 1
        _active.beat = self
        self._thread = threading.Thread(target=self._beat, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        _active.beat = self._outer
        if self._outer is not None:
            self._outer._muted -= 1
            self._outer.last = time.perf_counter()
        return False

    def round(self, reached):
        """Round ``reached`` has ended: a line if ``every`` seconds passed since the last one."""
        self.reached = reached
        if time.perf_counter() - self.last >= self.every:
            self._say()

    def _beat(self):
        while not self._stop.wait(max(0.05, self.every - (time.perf_counter() - self.last))):
            if time.perf_counter() - self.last >= self.every:
                self._say()

    def _say(self):
        if self._muted:
            return
        with self._lock:
            now = time.perf_counter()
            self.last = now
            where = "running"
            if self.reached is not None:
                where = f"round {self.reached}" + (
                    f" of {self.total} ({100 * self.reached / self.total:.0f} %)" if self.total else "")
            log(f"  {self.name}: {where}, {elapsed(now - self.start)}", file=self.out)


_active = threading.local()
