"""Compile once, and say so (issue #48): one specialisation per kernel, the compile notice, the warm-up
and numba's cache location when the install folder is read-only."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import lambda_objectives as lo
from lambda_objectives import _warmup
from lambda_objectives._kernels import compile as _compile
from lambda_objectives.checks import kernel_array

ROOT = Path(__file__).resolve().parents[1]
JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")


def _python(code, env=None, **kw):
    """Run ``code`` in a fresh interpreter importing this checkout; ``(returncode, stdout, stderr)``."""
    full = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                       cwd=kw.pop("cwd", ROOT), **kw)
    return p.returncode, p.stdout, p.stderr


# -- one specialisation -----------------------------------------------------------------------------
def test_kernel_array_copies_only_what_a_kernel_cannot_take_and_never_mutates():
    a = np.arange(5.0)
    assert kernel_array(a) is a  # already float64, C, aligned, writeable: the user's own array
    ro = a.copy()
    ro.flags.writeable = False
    out = kernel_array(ro)
    assert out is not ro and out.flags.writeable and not ro.flags.writeable and np.array_equal(out, ro)
    strided = np.arange(10.0)[::2]
    assert kernel_array(strided).flags.c_contiguous and np.array_equal(kernel_array(strided), strided)
    assert kernel_array(np.arange(5, dtype=np.int32)).dtype == np.float64
    assert kernel_array(np.arange(3), np.int64).dtype == np.int64


_SIGNATURES = """
import importlib, json, pkgutil, warnings
import numpy as np
from numba.core.registry import CPUDispatcher
import lambda_objectives as lo, lambda_objectives._kernels as K
warnings.simplefilter("ignore")
disp = {}
for m in pkgutil.iter_modules(K.__path__):
    mod = importlib.import_module("lambda_objectives._kernels." + m.name)
    disp.update({f"{m.name}.{k}": v for k, v in vars(mod).items()
                 if isinstance(v, CPUDispatcher) and v.py_func.__module__ == mod.__name__})
    # drivers compiled one per metric code live in tables (pairs.DRIVERS, ...): with a warm cache they load
    # whole, so their callees above record no signature; count the drivers themselves
    disp.update({f"{m.name}.{k}[{c}]": v for k, t in vars(mod).items() if isinstance(t, dict)
                 for c, v in t.items() if isinstance(v, CPUDispatcher)})
d = lo.make_ranking(12, 8, 5, seed=2)
s = np.random.default_rng(0).normal(size=d.y.shape[0]); y = d.y; p = d.group_ptr
def ro(a):
    a = a.copy(); a.flags.writeable = False; return a
variants = {
    "float32 scores and labels, int32 boundaries": (s.astype(np.float32), y.astype(np.float32), p.astype(np.int32)),
    "read-only arrays": (ro(s), ro(y), ro(p)),
    "int64 labels, uint64 boundaries": (s, y.astype(np.int64), p.astype(np.uint64)),
    "strided views": (np.repeat(s, 2)[::2], np.repeat(y, 2)[::2], p),
    "Fortran-ordered column": (np.asfortranarray(np.c_[s, s])[:, 0], y, p),
    "lists": (s.tolist(), y.tolist(), p.tolist()),
}
def calls(s, y, p):
    for m in ("ndcg", "err", "ndcg_loss2", "xendcg", "yetirank", "softmax", "listmle", "plrank"):
        lo.lambda_gradients(s, y, p, m)
    lo.lambda_gradients(s, y, p, "ndcg", pair_method="mean")
    lo.lambda_gradients(s, y, p, "ndcg", query_weights=np.ones(len(p) - 1, np.float32)[::-1])
    lo.metric_values(s, y, p, "ndcg@5"); lo.metric_values_table(s, y, p, ["err", "map"])
    lo.LightGBMObjective("ndcg").gradients(s, y, p)
    lo.LightGBMObjective("ndcg", preset="lightgbm").gradients(s, y, p, weight=np.ones(len(y), np.float32))
    lo.XGBoostObjective("ndcg", preset="xgboost").gradients(s, y, p, weight=np.ones(len(p) - 1))
calls(s, y, p)
base = {k: {str(x) for x in v.signatures} for k, v in disp.items()}
extra = {}
for name, args in variants.items():
    calls(*args)
    for k, v in disp.items():
        new = {str(x) for x in v.signatures} - base[k]
        if new:
            extra.setdefault(name, {})[k] = sorted(new)
            base[k] |= new
print(json.dumps({"extra": extra, "used": sum(bool(v) for v in base.values())}))
"""


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing is compiled, no signatures to count")
def test_every_kernel_compiles_one_specialisation_whatever_the_inputs_dtype_layout_or_flags():
    # a fresh process: its dispatchers hold only what this script's calls load or compile
    rc, out, err = _python(_SIGNATURES, timeout=3600)
    assert rc == 0, err
    found = json.loads(out.strip().splitlines()[-1])
    assert found["used"] >= 15  # the calls reached the kernels (16 dispatchers with a warm cache, more cold)
    assert found["extra"] == {}, f"inputs that compiled a second specialisation: {found['extra']}"


# -- the notice ------------------------------------------------------------------------------------
@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")
def test_the_notice_speaks_when_numba_compiles_and_is_quiet_when_nothing_does():
    @njit(cache=False)
    def fresh(x):  # a new function: its first call compiles
        return x + 1

    buf = io.StringIO()
    with _compile.compile_notice("metric_values", stream=buf) as notice:
        fresh(1)
    said = buf.getvalue()
    assert said.startswith(f"compiling numba kernels (first run only, about {_compile.COLD_SECONDS['metric_values']} s)")
    assert "numba kernels compiled in" in said and notice.count >= 1 and said.count("compiling numba") == 1
    buf = io.StringIO()
    with _compile.compile_notice("metric_values", stream=buf) as notice:
        fresh(2)  # compiled already: nothing to say
    assert buf.getvalue() == "" and notice.count == 0


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")
def test_nested_notices_print_once_from_the_outermost():
    @njit(cache=False)
    def fresh(x):
        return x * 2

    outer, inner = io.StringIO(), io.StringIO()
    with _compile.compile_notice(stream=outer):
        with _compile.compile_notice("MARTRanker", stream=inner):
            fresh(3)
    assert inner.getvalue() == "" and outer.getvalue().count("compiling numba kernels (first run only) ...") == 1


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")
def test_rankers_say_when_their_fit_compiles(monkeypatch, capsys):
    from reference import MARTRanker

    for cls in (lo.LGBMLambdaRanker, lo.XGBLambdaRanker, MARTRanker):
        assert cls.fit.__wrapped__  # the signature scikit-learn's routing reads is fit's own
    import inspect
    assert "eval_set" in inspect.signature(MARTRanker.fit).parameters

    @njit(cache=False)
    def fresh(x):
        return x - 1

    def fake_fit(self, *args, **kwargs):
        fresh(1)
        return self

    monkeypatch.setattr(MARTRanker, "_fit", fake_fit)
    MARTRanker().fit(np.zeros((2, 1)), np.zeros(2), group=[2])
    err = capsys.readouterr().err
    assert f"compiling numba kernels (first run only, about {_compile.COLD_SECONDS['MARTRanker']} s) ..." in err


_CACHED_KERNEL = """
from numba import njit

@njit(cache=True)
def twice(x):
    return 2 * x
"""


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")
def test_a_cold_cache_is_announced_and_a_warm_one_is_not(tmp_path):
    (tmp_path / "mod_cached.py").write_text(_CACHED_KERNEL)
    code = f"""
    import sys; sys.path.insert(0, {str(tmp_path)!r})
    from lambda_objectives._kernels.compile import compile_notice
    import mod_cached
    with compile_notice("cli"):
        mod_cached.twice(2)
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    rc, _, cold = _python(code, env)
    assert rc == 0 and "compiling numba kernels (first run only; `python -m lambda_objectives warmup` compiles everything once) ..." in cold
    assert str(tmp_path / "cache") in cold
    rc, _, warm = _python(code, env)
    assert rc == 0 and warm == ""


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")
def test_the_cli_says_when_it_compiles():
    import types

    from comparisons import _runner
    from comparisons._cli import run_command
    from comparisons.runstore import RunError

    assert _runner._noticed(lambda a, b: a + b, 1, 2) == 3

    @njit(cache=False)
    def fresh(x):
        return x + 3

    def failing(args):
        fresh(1)
        raise RunError("the store cannot be written")

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(types.SimpleNamespace(run=failing), types.SimpleNamespace()) == 1
    lines = err.getvalue().splitlines()
    # the notice first, its end before the command's one error line, which stays the last
    assert lines[0].startswith("compiling numba kernels (first run only; `python -m lambda_objectives warmup`")
    assert lines[1].startswith("numba kernels compiled in") and lines[-1] == "error: the store cannot be written"


# -- the read-only install -------------------------------------------------------------------------
def _unprivileged():
    """A ``preexec_fn`` dropping root to ``nobody`` (root writes into a read-only folder anyway), and its uid."""
    if os.geteuid() != 0:
        return None, os.geteuid()
    return (lambda: (os.setgid(65534), os.setuid(65534))), 65534


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")
@pytest.mark.skipif(os.name != "posix", reason="permissions and setuid as on Linux")
def test_a_read_only_install_caches_in_numba_cache_dir_or_the_user_wide_folder():
    # not pytest's tmp_path: its parents are private to the user running the tests, and the child runs as
    # another user when that one is root
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="lo-readonly-"))
    try:
        _read_only_install(tmp_path)
    finally:
        for p in tmp_path.rglob("*"):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(tmp_path, ignore_errors=True)


def _read_only_install(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(ROOT / "lambda_objectives", site / "lambda_objectives",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for p in [site, *site.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    drop, uid = _unprivileged()
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, uid, -1) if os.geteuid() == 0 else None
    tmp_path.chmod(0o755)
    code = """
    import numpy as np
    from lambda_objectives._kernels.compile import compile_notice
    from lambda_objectives._warmup import cache_location
    from lambda_objectives._kernels.ranking import discount_table
    with compile_notice() as n:
        discount_table(4)
    print(cache_location()); print(n.count)
    """
    base = {"PYTHONPATH": str(site), "HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg")}
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    # the fallback twice (cold, then warm); NUMBA_CACHE_DIR once (numba's documented override)
    for where, extra, runs in (("fallback", {}, 2), ("NUMBA_CACHE_DIR", {"NUMBA_CACHE_DIR": str(home / "ncd")}, 1)):
        said = []
        for _ in range(runs):
            p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                               env={**env, **base, **extra}, cwd=home, preexec_fn=drop, timeout=600)
            assert p.returncode == 0, p.stderr
            said.append(p.stdout.split())
        location, compiled = said[0]
        expect = home / ("xdg" / Path("numba") if where == "fallback" else Path("ncd"))
        assert Path(location).is_relative_to(expect), (where, location)
        assert list(Path(location).glob("ranking.discount_table*.nbi")), where
        assert int(compiled) >= 1, (where, compiled)
        if runs == 2:  # the second process finds the cache: nothing compiles
            assert said[1] == [location, "0"], (where, said[1])
    assert not list(site.rglob("*.nbi"))  # nothing was written into the install


# -- the warm-up -----------------------------------------------------------------------------------


def test_warmup_steps_name_every_step_once():
    names = [n for n, _ in _warmup.WARMUP_STEPS]
    assert len(set(names)) == len(names) and all(callable(f) for _, f in _warmup.WARMUP_STEPS)


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT=1: nothing to compile")
def test_warmup_reaches_every_kernel_and_says_each_step(capsys):
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import lambda_objectives._kernels as K
    import reference

    buf = io.StringIO()
    _warmup.warmup(stream=buf)
    lines = buf.getvalue().splitlines()
    n = len(_warmup.WARMUP_STEPS)
    assert lines[0].startswith(f"warm-up: {n} steps in 1 process(es); numba's cache: ")
    assert [ln.split(":")[0] for ln in lines[1:-1]] == [f"warm-up {i}/{n}" for i in range(1, n + 1)]
    assert lines[-1].startswith("warm-up done in ")
    missed, seen = [], 0
    for pkg in (K, reference):
        for m in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
            for k, v in vars(mod).items():
                if not isinstance(v, CPUDispatcher) or v.py_func.__module__ != mod.__name__ or k in _NOT_WARMED \
                        or v.targetoptions.get("inline") == "always":  # inlined into its callers, never alone
                    continue
                seen += 1
                # a kernel loaded from the cache does not load its callees, so read each one's on-disk index
                # (entries of the current source only: numba drops an index whose source stamp differs)
                index = getattr(v._cache, "_cache_file", None)  # None: a function numba does not cache
                if not (v.signatures or (index is not None and index._load_index())):
                    missed.append(f"{mod.__name__}.{k}")
    assert seen > 100 and not missed, f"kernels the warm-up does not reach: {missed}"


#: kernels no public call reaches with fixed types: a user's pair weight function is compiled into
#: ``custom_lambda_driver`` per function
_NOT_WARMED = {"custom_lambda_driver", "_custom_query"}
