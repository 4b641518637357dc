#!/usr/bin/env python3
"""Newcomer entry point: ``python3 dev.py demo`` and ``python3 dev.py test``.

Needs nothing but Python >= 3.10: it creates ``.venv`` beside this file, installs the project
with the extras each job needs (re-installing only when ``pyproject.toml`` changes), and runs the job.

* ``demo``  - the main job: the whole pipeline on the built-in synthetic data set
  (``python -m comparisons demo``): LightGBM/XGBoost with our objective vs their native
  objectives vs the reference trainer (SE and OLE), a table in ``results/demo/``. Installs the
  ``demo`` extra only (LightGBM, XGBoost's CPU-only wheel ``xgboost-cpu``, tqdm), or uses the test
  environment when that is already installed.
  Compiles the numba kernels first (``python -m lambda_objectives warmup``: a line per step, quick
  when the cache is warm).
* ``test``  - the warm-up (two processes), then the test suite (``pytest`` in one pytest-xdist worker a
  core; it builds the documentation site strictly and checks two of its pages in headless Chromium,
  ``tests/test_docsite.py``); from the start, beside both, the pure-kernel tests again with numba bounds
  checking (``NUMBA_BOUNDSCHECK=1``, compiled unoptimised: ``NUMBA_OPT=0``) and as plain Python
  (``NUMBA_DISABLE_JIT=1``), because numba raises no IndexError or
  ZeroDivisionError of its own. The suite's progress is shown as it runs (its whole output in
  ``.test-logs/suite.log``, each kernel pass's in ``.test-logs/kernels-*.log``); its summary comes last.
"""

import hashlib
import os
import re
import subprocess
import sys
import threading
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")


def _run(cmd, env=None):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env)


def _stamp(extras):
    return VENV / f".installed-{extras}"


def ensure_env(extras):
    """Create the virtual environment and install the project with ``extras`` when needed.

    ``demo`` installs XGBoost's CPU-only wheel (``xgboost-cpu``), ``test`` the full ``xgboost`` wheel:
    both install the same ``xgboost`` package, so one environment must never hold both. The test
    set holds everything the demo runs, so ``demo`` uses it once it is installed, and ``test``
    removes the demo's ``xgboost-cpu`` before installing its own.
    """
    if sys.version_info < (3, 10):
        sys.exit(f"Python >= 3.10 is required, this is {sys.version.split()[0]}")
    if extras == "demo" and _stamp("test").exists():
        extras = "test"
    stamp = _stamp(extras)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest and PY.exists():
        return
    if not PY.exists():
        print(f"creating virtual environment {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if _run([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"]) != 0:
        sys.exit("could not upgrade pip in the virtual environment")
    if extras == "test" and _stamp("demo").exists():
        if _run([PY, "-m", "pip", "uninstall", "-q", "-y", "xgboost-cpu"]) != 0:
            sys.exit("could not remove the demo's xgboost-cpu before installing the full xgboost")
        _stamp("demo").unlink()
    if _run([PY, "-m", "pip", "install", "-q", "-e", f".[{extras}]"]) != 0:
        sys.exit("installing the project failed (see pip's message above)")
    stamp.write_text(digest)


def warmup():
    """``python -m lambda_objectives warmup``: compile every kernel once (loads the cache when warm)."""
    return _run([PY, "-m", "lambda_objectives", "warmup", "--jobs", "2"])


def demo(args):
    ensure_env("demo")
    warmup()  # a line per step: the first run's compilation is not a silent wait
    return _run([PY, "-m", "comparisons", "demo", *args])


#: a line of pytest -q's progress as it is written: outcome letters, then the "[ 12%]" counter
_PROGRESS = re.compile(r"[.FEsxXp]*(?: +(?:\[ *\d*%?\]?)?)?")
#: pytest-xdist's line while it starts its workers, before the first progress letter
_XDIST = "bringing up nodes..."
LOGS = ROOT / ".test-logs"


class _Suite(threading.Thread):
    """Reads the main suite's output: every byte to its log; progress lines (pytest -q's letters and
    ``[ NN%]``) echoed to this terminal as they come; from the first other line on (warnings,
    failures, the summary) everything held back for :meth:`finish`, so the suite's summary line is
    the last line printed whatever the kernel passes print meanwhile."""

    def __init__(self, proc, log):
        super().__init__(daemon=True)
        self.proc, self.log, self.held, self.line, self.holding = proc, log, [], "", False

    def run(self):
        for chunk in iter(lambda: self.proc.stdout.read1(4096), b""):
            self.log.write(chunk)
            self.log.flush()
            self._echo(chunk.decode("utf-8", "replace"))

    def _echo(self, text):
        for ch in text:
            self.line += ch
            if self.holding:
                if ch == "\n":
                    self.held.append(self.line)
                    self.line = ""
            elif ch == "\n" or _PROGRESS.fullmatch(self.line) or _XDIST.startswith(self.line):
                with _OUT:
                    sys.stdout.write(ch)
                    sys.stdout.flush()
                if ch == "\n":
                    self.line = ""
            else:  # the summary begins: hold it from the start of its line
                self.holding = True
                if len(self.line) > 1:  # a partial line was echoed: end it
                    _print("")

    def finish(self):
        self.join()
        with _OUT:
            sys.stdout.write("".join(self.held) + self.line)
            sys.stdout.flush()


_OUT = threading.Lock()


def _print(text):
    with _OUT:
        print(text, flush=True)


def _kernel_pass(name, env, log_path):
    """One ``-m kernel`` pass with its output in ``log_path``: one line here (its whole log on failure)."""
    cmd = [PY, "-m", "pytest", "-q", "-m", "kernel", "-p", "no:cacheprovider"]
    _print(f"+ {name} {' '.join(str(c) for c in cmd)} > {log_path}")
    t = time.time()
    with open(log_path, "w", encoding="utf-8") as log:
        code = subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    last = lines[-1] if lines else "(no output)"
    _print(f"{name} kernel pass: {'ok' if code == 0 else f'FAILED (exit {code})'}: {last.strip('= ')} "
           f"[{time.time() - t:.0f} s wall]")
    if code != 0:
        _print("\n".join(lines))
    return code


def suite_command(args, cores=None):
    """The main suite's pytest command line: ``args`` last, so a user's ``-n 0`` or ``-k`` wins.

    The suite runs in pytest-xdist workers, one a core (at most 4), whole test files to a worker
    (``--dist loadfile``: a module's fixtures, e.g. the docs-site build or a Dask cluster, are made
    once); on 2 cores the second worker fills the core the kernel passes leave idle when they end.
    """
    cores = os.cpu_count() if cores is None else cores
    workers = max(1, min(4, cores or 1))
    return [PY, "-m", "pytest", "-q", "-rs", "-n", str(workers), "--dist", "loadfile", *args]


def test(args):
    ensure_env("test")
    env = dict(os.environ)
    LOGS.mkdir(exist_ok=True)
    # The kernel passes start at once, beside everything else: numba raises no IndexError or
    # ZeroDivisionError of its own, so the kernels run bounds-checked (their own cache: other machine
    # code, compiled while the warm-up compiles), then as plain Python (nothing to compile).
    side = {}

    def kernel_passes():
        # NUMBA_OPT=0: this pass checks indexing, not speed; LLVM's optimiser is most of its compile time
        # (bounds-checked code cannot be cached, so every kernel compiles anew in this one process)
        bounds = dict(env, NUMBA_BOUNDSCHECK="1", NUMBA_OPT="0",
                      NUMBA_CACHE_DIR=str(ROOT / ".numba_boundscheck_cache"))
        side["bounds"] = _kernel_pass("NUMBA_BOUNDSCHECK=1", bounds, LOGS / "kernels-boundscheck.log")
        side["nojit"] = _kernel_pass("NUMBA_DISABLE_JIT=1", dict(env, NUMBA_DISABLE_JIT="1"), LOGS / "kernels-nojit.log")

    passes = threading.Thread(target=kernel_passes, daemon=True)
    passes.start()
    # Every kernel compiled first, in two processes (numba compiles on one core): the suite then loads
    # the cache instead of compiling kernels one after the other inside its tests (a line per step here).
    rc_warm = warmup()
    # -rs: every skipped test says why (e.g. the real LETOR data is absent). The suite starts when the
    # warm-up ends, the kernel passes still running beside it. Its progress is shown as it comes, its
    # whole output is in .test-logs/suite.log, and everything after its progress (warnings, failures,
    # the summary) is printed last, so its pytest summary is the last line CI reads.
    suite = suite_command(args)
    suite_log = LOGS / "suite.log"
    _print("+ " + " ".join(str(c) for c in suite) + f"  (the main suite: progress below, everything in {suite_log})")
    with open(suite_log, "wb") as log:
        proc = subprocess.Popen([str(c) for c in suite], cwd=ROOT, env=dict(env, PYTHONUNBUFFERED="1"),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        reader = _Suite(proc, log)
        reader.start()
        try:
            passes.join()
            _print("waiting for the main suite")
            rc = proc.wait()
        finally:
            if proc.poll() is None:  # interrupted: do not leave the suite running
                proc.kill()
                proc.wait()
        reader.finish()
    failed = [code for code in (side.get("bounds", 1), side.get("nojit", 1), rc_warm) if code]
    return rc or (failed[0] if failed else 0)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    jobs = {"demo": demo, "test": test}
    if not argv or argv[0] not in jobs:
        sys.exit("usage: python3 dev.py demo|test [extra arguments]")
    return jobs[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
