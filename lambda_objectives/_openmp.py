"""One OpenMP runtime for numba's kernels and XGBoost (Linux wheels).

XGBoost's Linux wheels carry their own GNU OpenMP (``xgboost.libs/libgomp-<hash>.so.1.0.0``), while
numba's ``omp`` threading layer links the system ``libgomp.so.1`` (which LightGBM's wheel also uses).
Two runtimes mean two thread pools on the same cores, and after each parallel region libgomp's idle
workers spin (``GOMP_SPINCOUNT``, 300,000 pauses by default) before they sleep: in a custom-objective
round XGBoost's spinning workers take a core from our kernel, and numba's from XGBoost's histograms.
On 2 threads that made a round with ``XGBoostObjective`` 6 % slower than native ``rank:ndcg``
(docs/development.md, "Where a custom-objective round goes", has the measurement).

The fix binds numba to XGBoost's runtime: loading that library with ``RTLD_GLOBAL`` before numba
starts its pool makes the symbols numba's OpenMP layer asks for (``GOMP_parallel``, ``omp_*``)
resolve to it, so both use one pool, the calling thread's. It can only happen before numba's first
parallel call in the process; anywhere else it does nothing and says why (:func:`openmp_sharing`).
``LAMBDA_OBJECTIVES_SHARE_OPENMP=0`` turns it off. Results do not change (kernels write each
query's own slice); only the time does.

A process that has loaded both engines (issue #34: LightGBM imported before or after XGBoost, then
our objectives) holds two runtimes whatever numba does: LightGBM is bound to the system one, XGBoost
to its own, both at load (Python and ctypes load with ``RTLD_NOW``), so no one pool can serve all
three. numba joins the runtime of the engine whose objective (or XGBoost eval metric) comes first:
an XGBoost one binds numba to XGBoost's runtime as above, a LightGBM one leaves numba on the system
runtime it shares with LightGBM. The other engine's rounds with our objective then run beside a
second runtime, as before this fix (measured at 2 threads: 1.08-1.21x its native objective for
XGBoost, 1.16-1.26x for LightGBM). numba's ``workqueue`` layer, which never spins, was measured too and
is no better for either engine (the engine's own spinning workers still take a core from our kernel),
and it aborts the process when two Python threads launch kernels at once.

The runtime stays global for the rest of the process: a library loaded later that links
``libgomp.so.1`` binds to it too, for every symbol it defines. XGBoost 3.2's copy defines the
OpenMP entry points up to ``GOMP_5.0``; LightGBM, XGBoost and scikit-learn ask for at most
``GOMP_4.5``/``OMP_3.0``, numba's layer for ``GOMP_4.0``/``OMP_1.0`` (checked with ``readelf -V``).
A library needing newer ones would have those resolved in its own runtime and the rest in XGBoost's;
the off switch is for that case.
"""

import ctypes
import glob
import os
import sys

#: what :func:`share_with_xgboost` did in this process: ``None`` until first asked
_STATE = {"status": None}

_OFF = ("0", "false", "no", "off")


def _xgboost_runtime():
    """The path of the OpenMP runtime bundled in XGBoost's wheel, or ``None``."""
    try:
        import xgboost  # noqa: F401  (loads libxgboost and, with it, the runtime it is bound to)
    except ImportError:
        return None
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(xgboost.__file__))), "xgboost.libs")
    found = sorted(glob.glob(os.path.join(libs, "libgomp*.so*")))
    return found[0] if found else None


def _system_runtime_in_use():
    """The path of the system GNU OpenMP runtime (``libgomp.so.1``, the one numba's layer links) if a
    library has mapped it into this process already, else ``""``; wheels' renamed private copies
    (``libgomp-<hash>.so``, e.g. scikit-learn's) do not count: nothing else binds to them."""
    try:
        with open("/proc/self/maps") as fh:
            maps = fh.read()
    except OSError:
        return ""
    for line in maps.splitlines():
        path = line.split()[-1] if line.split() else ""
        name = os.path.basename(path)
        if name.startswith("libgomp.so"):
            return path
    return ""


def share_with_xgboost(by="XGBoost"):
    """Make numba's OpenMP layer use XGBoost's bundled runtime, once per process, if it still can.

    ``by`` names the engine whose objective or eval metric asks (``"XGBoost"``, ``"LightGBM"``): when
    the system runtime is loaded already (LightGBM imported), numba joins the runtime of the engine
    that asks first, XGBoost's or the system one it shares with LightGBM.

    Returns the status string (also :func:`openmp_sharing`): ``"shared: XGBoost's runtime (<soname>)..."``
    or ``"not shared: <reason>"``. Never raises: a runtime that cannot be shared only costs time.
    """
    if _STATE["status"] is not None:
        return _STATE["status"]
    _STATE["status"] = status = _decide(by)
    return status


def _decide(by):
    if os.environ.get("LAMBDA_OBJECTIVES_SHARE_OPENMP", "1").strip().lower() in _OFF:
        return "not shared: LAMBDA_OBJECTIVES_SHARE_OPENMP is off"
    if not sys.platform.startswith("linux"):
        return f"not shared: only done on Linux (this is {sys.platform})"
    import numba
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", True):
        # numba has bound its layer already (an earlier parallel call): too late to choose
        return f"not shared: numba's threading layer was started before ({numba.threading_layer()})"
    if numba.config.THREADING_LAYER not in ("default", "omp"):
        return f"not shared: NUMBA_THREADING_LAYER={numba.config.THREADING_LAYER}"
    other = _system_runtime_in_use()
    if other and by != "XGBoost":
        # a library already loaded (LightGBM's wheel, say) shares the system runtime with numba-to-be,
        # and that engine's objective came first: binding numba to XGBoost's would trade that pair's
        # contention for this one's
        return (f"not shared: the system OpenMP runtime is already loaded ({other}) and a {by} objective "
                f"came first, so numba stays with it")
    path = _xgboost_runtime()
    if path is None:
        return "not shared: this XGBoost has no bundled OpenMP runtime (it uses the system's, as numba does)"
    # the copy XGBoost is bound to: the loader reuses the first object with the wheel's soname, which
    # may be another wheel's identical copy (scikit-learn ships the same renamed libgomp) rather than
    # the file under xgboost.libs; RTLD_NOLOAD finds that object and RTLD_GLOBAL exposes it to numba
    soname = os.path.basename(path)
    try:
        lib = ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL | os.RTLD_NOLOAD)
    except OSError:
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            return f"not shared: loading {path} failed ({exc})"
    if other:
        # both engines loaded, an XGBoost objective first: numba joins XGBoost (LightGBM keeps the system one)
        return f"shared: XGBoost's runtime ({lib._name}); LightGBM keeps the system one ({other})"
    return f"shared: XGBoost's runtime ({lib._name})"


def openmp_sharing():
    """What ``share_with_xgboost`` did in this process (``None``: not asked yet)."""
    return _STATE["status"]
