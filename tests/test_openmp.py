"""numba joining XGBoost's OpenMP runtime (``lambda_objectives/_core/openmp.py``), checked in fresh processes:
the dynamic loader's own record of which runtime each library's ``GOMP_parallel`` bound to
(``LD_DEBUG=bindings``), the cases where it must not happen, the processes that load both engines
(issue #34: numba joins the engine whose objective comes first), and gradients unchanged bit for bit
whatever the runtime and the thread count."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("xgboost")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runtime is only shared on Linux")

_TRAIN = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    {before}
    import xgboost as xgb
    from lambda_objectives.adapters import XGBoostObjective
    from lambda_objectives._core.openmp import openmp_sharing
    from lambda_objectives.data.datasets import make_ranking

    d = make_ranking(80, docs_per_query=(5, 40), n_features=6, seed=3)
    obj = XGBoostObjective(preset="xgboost", n_threads=2)
    dm = xgb.DMatrix(d.X, d.y, group=np.diff(d.group_ptr))
    xgb.train(obj.params(nthread=2, tree_method="hist"), dm, 2, obj=obj)
    g, h = obj.gradients(np.linspace(-1, 1, d.y.shape[0]), d.y, d.group_ptr)
    g1, h1 = XGBoostObjective(preset="xgboost", n_threads=1).gradients(np.linspace(-1, 1, d.y.shape[0]), d.y,
                                                                      d.group_ptr)
    import numba
    print("RESULT" + json.dumps({{"status": openmp_sharing(), "layer": numba.threading_layer(),
                                  "g": g.tobytes().hex(), "h": h.tobytes().hex(),
                                  "threads_agree": g.tobytes() == g1.tobytes() and h.tobytes() == h1.tobytes()}}))
""")

#: a LightGBM objective made before any XGBoost one, in a process that has imported both engines
_LIGHTGBM_OBJECTIVE_FIRST = """import lightgbm, xgboost
from lambda_objectives.adapters import LightGBMObjective
LightGBMObjective(preset="lightgbm", n_threads=2)"""


def _run(before="", **env):
    """Run the training script in a fresh interpreter; (its result, the GOMP_parallel bindings)."""
    e = {k: v for k, v in os.environ.items() if k != "LAMBDA_OBJECTIVES_SHARE_OPENMP"}
    # LD_BIND_NOW: every symbol binds (and is logged) at load, not at a library's first call
    e.update(LD_DEBUG="bindings", LD_BIND_NOW="1", **env)
    p = subprocess.run([sys.executable, "-c", _TRAIN.format(before=before)], env=e, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    result = json.loads(next(line for line in p.stdout.splitlines() if line.startswith("RESULT"))[len("RESULT"):])
    bound = {}
    for line in p.stderr.splitlines():
        # "binding file <user> [0] to <provider> [0]: normal symbol `GOMP_parallel' [GOMP_4.0]"
        if "`GOMP_parallel'" in line and "binding file" in line:
            user, provider = line.split("binding file ", 1)[1].split(": normal symbol")[0].split(" to ")
            bound[os.path.basename(user.split(" [")[0])] = os.path.realpath(provider.split(" [")[0])
    return result, bound


def _runtime_of(bound, prefix):
    return next(v for k, v in bound.items() if k.startswith(prefix))


@pytest.fixture(scope="module")
def shared():
    return _run()


def test_numba_binds_to_the_runtime_xgboost_uses(shared):
    result, bound = shared
    if not result["status"].startswith("shared"):
        pytest.skip(result["status"])  # e.g. an XGBoost build that links the system runtime itself
    assert _runtime_of(bound, "omppool") == _runtime_of(bound, "libxgboost")


def test_off_switch_leaves_numba_on_the_system_runtime_and_results_unchanged(shared):
    result, bound = _run(LAMBDA_OBJECTIVES_SHARE_OPENMP="0")
    assert result["status"] == "not shared: LAMBDA_OBJECTIVES_SHARE_OPENMP is off"
    assert os.path.basename(_runtime_of(bound, "omppool")).startswith("libgomp.so")
    if shared[0]["status"].startswith("shared"):
        assert _runtime_of(bound, "omppool") != _runtime_of(bound, "libxgboost")
    # the kernels write each query's own slice: the runtime changes the time, never a bit of the result
    assert (result["g"], result["h"]) == (shared[0]["g"], shared[0]["h"])
    assert np.frombuffer(bytes.fromhex(result["g"]), np.float32).any()


def test_too_late_once_numba_started_its_threads():
    result, _ = _run(before="import numba; numba.get_num_threads()")
    assert result["status"] == "not shared: numba's threading layer was started before (omp)"


def _system(path):
    return os.path.basename(path).startswith("libgomp.so")


@pytest.mark.parametrize("imports", ["import lightgbm", "import xgboost, lightgbm"],
                         ids=["lightgbm-first", "xgboost-first"])
def test_both_engines_loaded_an_xgboost_objective_first_joins_xgboost_and_leaves_lightgbm_its_own(shared, imports):
    """Both engines imported (either order) before the first objective, an XGBoost one: the system runtime is
    loaded (LightGBM is bound to it), yet numba's omp layer binds to XGBoost's; the gradients are the
    shared case's, bit for bit, and do not depend on the thread count."""
    pytest.importorskip("lightgbm")
    result, bound = _run(before=imports)
    if not shared[0]["status"].startswith("shared"):
        pytest.skip(shared[0]["status"])
    assert result["status"].startswith("shared: XGBoost's runtime (")
    assert "LightGBM keeps the system one (" in result["status"] and "libgomp.so" in result["status"]
    assert result["layer"] == "omp"
    assert _runtime_of(bound, "omppool") == _runtime_of(bound, "libxgboost")
    lightgbm_runtime = _runtime_of(bound, "lib_lightgbm")
    assert _system(lightgbm_runtime) and lightgbm_runtime != _runtime_of(bound, "omppool")
    assert (result["g"], result["h"]) == (shared[0]["g"], shared[0]["h"])
    assert result["threads_agree"] and shared[0]["threads_agree"]


def test_both_engines_loaded_a_lightgbm_objective_first_keeps_numba_with_lightgbm(shared):
    """The other way round: a LightGBM objective first leaves numba on the system runtime it shares with
    LightGBM, says so, and the XGBoost objective made afterwards computes the same gradients."""
    pytest.importorskip("lightgbm")
    result, bound = _run(before=_LIGHTGBM_OBJECTIVE_FIRST)
    assert result["status"].startswith("not shared: the system OpenMP runtime is already loaded (")
    assert "a LightGBM objective came first, so numba stays with it" in result["status"]
    assert result["layer"] == "omp"
    assert _runtime_of(bound, "omppool") == _runtime_of(bound, "lib_lightgbm")
    assert _system(_runtime_of(bound, "omppool"))
    assert (result["g"], result["h"]) == (shared[0]["g"], shared[0]["h"])
    assert result["threads_agree"]


def test_both_engines_loaded_the_off_switch_keeps_numba_with_lightgbm(shared):
    """``LAMBDA_OBJECTIVES_SHARE_OPENMP=0`` is how a user favours LightGBM whatever objective comes first."""
    pytest.importorskip("lightgbm")
    result, bound = _run(before="import lightgbm", LAMBDA_OBJECTIVES_SHARE_OPENMP="0")
    assert result["status"] == "not shared: LAMBDA_OBJECTIVES_SHARE_OPENMP is off"
    assert _runtime_of(bound, "omppool") == _runtime_of(bound, "lib_lightgbm")
    assert (result["g"], result["h"]) == (shared[0]["g"], shared[0]["h"]) and result["threads_agree"]
