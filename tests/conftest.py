"""Shared fixtures: the location of the real LETOR data beside the repository."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: ``../shared/data`` relative to the repository root; ``LAMBDA_OBJECTIVES_DATA`` overrides it.
SHARED_DATA = Path(
    os.environ.get("LAMBDA_OBJECTIVES_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


@pytest.fixture(autouse=True)
def _no_catboost_info_left_behind():
    """Fail a test that makes CatBoost write its ``catboost_info/`` log folder into the working
    directory (the repository root under ``pytest``): pass ``allow_writing_files=False``, and
    ``train_dir=`` a temporary folder where CatBoost writes anyway (``eval_metrics``)."""
    where = {Path.cwd() / "catboost_info", Path(__file__).resolve().parents[1] / "catboost_info"}
    before = {p for p in where if p.exists()}
    yield
    left = sorted(str(p) for p in where - before if p.exists())
    assert not left, f"the test left CatBoost's log folder {left}: give CatBoost a train_dir in tmp_path"


@pytest.fixture(scope="session")
def shared_data():
    """Path of the real data folder; skips the test when it is absent (a user's fresh clone)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real LETOR data not found at {SHARED_DATA} (set LAMBDA_OBJECTIVES_DATA)")
    return SHARED_DATA


def shared_file(shared_data, *parts):
    """A file under the shared data folder, skipping when that particular file is missing."""
    p = Path(shared_data, *parts)
    if not p.exists():
        pytest.skip(f"{p} is absent")
    return p


@pytest.fixture(scope="module")
def small_ranking():
    """A small synthetic ranking set shared by the reference trainer's test modules."""
    from lambda_objectives.data.datasets import make_ranking

    return make_ranking(120, docs_per_query=(5, 40), n_features=8, seed=3)


@pytest.fixture(scope="module")
def letor_folder(tmp_path_factory):
    """A two-fold LETOR-layout folder of small synthetic files, for the comparison commands."""
    from lambda_objectives import make_ranking, save_letor

    root = tmp_path_factory.mktemp("data")
    for f in (1, 2):
        d = root / f"Fold{f}"
        d.mkdir()
        for split, nq in (("train", 40), ("vali", 12), ("test", 12)):
            data = make_ranking(nq, docs_per_query=(5, 25), n_features=6, seed=10 * f + len(split))
            save_letor(d / f"{split}.txt", data.X, data.y, group_ptr=data.group_ptr)
    return root


def ten_row_queries(cls, module, name):
    """A test-only subclass of a ranker whose ``fit``/``score`` supply queries of ten consecutive rows
    when none are given: scikit-learn's API checks call ``fit(X, y)`` / ``score(X, y)`` without
    queries, which the rankers refuse (a ranker never treats rows as one query), so that the rest of
    the estimator API can be checked. Invented query ids name no real query, so ``score`` is told
    ``new_queries=True`` (the checks score other rows under the same invented ids). ``module`` and ``name``: where the caller binds the class, so
    that it pickles (``check_estimators_pickle``)."""
    import numpy as np

    def _qid(X, group, qid, kwargs):
        if group is None and qid is None and kwargs.get("group_ptr") is None and not hasattr(X, "columns"):
            return np.arange(np.shape(X)[0]) // 10
        return qid

    class TenRowQueries(cls):
        def fit(self, X, y, group=None, qid=None, **kwargs):
            return super().fit(X, y, group=group, qid=_qid(X, group, qid, kwargs), **kwargs)

        def score(self, X, y, qid=None, group=None):
            invented = _qid(X, group, qid, {})
            return super().score(X, y, qid=invented, group=group, new_queries=invented is not qid)

    TenRowQueries.__name__ = TenRowQueries.__qualname__ = name
    TenRowQueries.__module__ = module
    return TenRowQueries


def assert_same_bits_at_three_threads(script, n_cases):
    """Run ``script`` in a fresh process with numba started at 3 threads (whatever the machine's cores),
    which prints one line a case ending in its digests at 1, 2 and 3 threads: it must exit cleanly,
    print ``n_cases`` lines, and each line's three digests must be equal."""
    env = dict(os.environ, NUMBA_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == n_cases, out.stdout
    for line in lines:
        assert len(set(line.split()[-3:])) == 1, line
