#!/usr/bin/env python3
"""Newcomer entry point: ``python3 dev.py demo`` and ``python3 dev.py test``.

Needs nothing but Python >= 3.10: it creates ``.venv`` beside this file, installs the project
with the extras each job needs (re-installing only when ``pyproject.toml`` changes), and runs the job.

* ``demo``  - the main job: the whole pipeline on the built-in synthetic data set
  (``python -m comparisons demo``): LightGBM/XGBoost with our objective vs their native
  objectives vs the reference trainer (SE and OLE), a table in ``results/demo/``. Installs the
  ``demo`` extra only (LightGBM, XGBoost's CPU-only wheel ``xgboost-cpu``, tqdm), or uses the test
  environment when that is already installed.
* ``test``  - the test suite (``pytest``; it builds the documentation site strictly and checks two of
  its pages in headless Chromium, ``tests/test_docsite.py``) and, alongside it, the pure-kernel tests again as plain
  Python (``NUMBA_DISABLE_JIT=1``) and with numba bounds checking (``NUMBA_BOUNDSCHECK=1``), because
  numba raises no IndexError or ZeroDivisionError of its own; the suite's output comes last.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
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


def demo(args):
    ensure_env("demo")
    return _run([PY, "-m", "comparisons", "demo", *args])


def test(args):
    ensure_env("test")
    env = dict(os.environ)
    # -rs: every skipped test says why (e.g. the real LETOR data is absent). The full suite runs in
    # the background while the kernel passes below run in the foreground: on 2 cores the three
    # mostly single-threaded numba compilations overlap (CI 22 -> ~17 minutes). Its output is held
    # back and printed last, whole, so its pytest summary is the last line CI reads.
    suite = [PY, "-m", "pytest", "-q", "-rs", *args]
    print("+", " ".join(str(c) for c in suite), "(in the background; its output follows the kernel passes)", flush=True)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        proc = subprocess.Popen([str(c) for c in suite], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            # Kernels must stay valid Python and in bounds: numba itself checks neither.
            nojit = dict(env, NUMBA_DISABLE_JIT="1")
            rc_nojit = _run([PY, "-m", "pytest", "-q", "-m", "kernel", "-p", "no:cacheprovider"], env=nojit)
            bounds = dict(env, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(ROOT / ".numba_boundscheck_cache"))
            rc_bounds = _run([PY, "-m", "pytest", "-q", "-m", "kernel", "-p", "no:cacheprovider"], env=bounds)
            for name, code in (("NUMBA_DISABLE_JIT=1 kernel pass", rc_nojit),
                               ("NUMBA_BOUNDSCHECK=1 kernel pass", rc_bounds)):
                print(f"{name}: {'ok' if code == 0 else f'FAILED (exit {code})'}", flush=True)
            print("waiting for the full suite", flush=True)
            rc = proc.wait()
        finally:
            if proc.poll() is None:  # interrupted: do not leave the suite running
                proc.kill()
                proc.wait()
        log.seek(0)
        sys.stdout.write(log.read())
        sys.stdout.flush()
    return rc or rc_nojit or rc_bounds


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    jobs = {"demo": demo, "test": test}
    if not argv or argv[0] not in jobs:
        sys.exit("usage: python3 dev.py demo|test [extra arguments]")
    return jobs[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
