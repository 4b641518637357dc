"""Every ```python snippet in README.md and docs/**/*.md runs as written.

A snippet whose first line is ``# needs: shared data`` runs from the real data folder (so paths
such as ``MQ2008/Fold1/train.txt`` resolve) and skips when it is absent; every other snippet
runs in an empty temporary folder and must be self-contained. A snippet that imports an optional
extra's package (CatBoost, say) skips, naming it, when that package is not installed. A snippet
that emits a warning fails: a user following the docs should see none.
"""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the optional extras' packages: a snippet that imports one skips when it is absent
OPTIONAL = {"lightgbm", "xgboost", "catboost", "dask", "distributed", "matplotlib", "tqdm", "ir_measures"}
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _snippets():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        if "_build" in path.parts:
            continue
        text = path.read_text()
        for m in _BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 2
            yield pytest.param(path, line, m.group(1), id=f"{path.relative_to(ROOT)}:{line}")


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("path, line, code", list(_snippets()))
def test_snippet_runs_as_written(path, line, code, tmp_path, shared_data_or_none, monkeypatch):
    where = tmp_path
    if code.startswith("# needs: shared data"):
        if shared_data_or_none is None:
            pytest.skip(f"{path.name}:{line} needs the real LETOR data (set LAMBDA_OBJECTIVES_DATA)")
        where = shared_data_or_none
    monkeypatch.chdir(where)
    try:
        exec(compile(code, f"{path}:{line}", "exec"), {"__name__": "__snippet__"})
    except ModuleNotFoundError as exc:
        if exc.name in OPTIONAL:
            pytest.skip(f"{path.name}:{line} needs {exc.name} (an optional extra), which is not installed")
        raise AssertionError(f"the snippet at {path.relative_to(ROOT)} line {line} fails: {exc}") from exc
    except Exception as exc:
        raise AssertionError(f"the snippet at {path.relative_to(ROOT)} line {line} fails: "
                             f"{type(exc).__name__}: {exc}") from exc


@pytest.fixture
def shared_data_or_none():
    from conftest import SHARED_DATA

    return SHARED_DATA if SHARED_DATA.is_dir() else None


def test_snippets_are_found():
    found = {p.name for p, _, _ in (s.values for s in _snippets())}
    assert {"README.md", "user-guide.md", "heatmap.md"} <= found
    readme = [code for p, _, code in (s.values for s in _snippets()) if p.name == "README.md"]
    # the front page's two quick starts, one per engine, both run above
    assert any("import lightgbm" in c for c in readme) and any("import xgboost" in c for c in readme)
    assert os.path.exists(ROOT / "README.md")


def test_stated_synthetic_set_figures_hold():
    """docs/reproducing/quality.md states the size of the synthetic quality set; recompute it."""
    from comparisons.paper import load_fold
    from lambda_objectives import make_mslr_like

    text = (ROOT / "docs" / "reproducing" / "quality.md").read_text()
    d = make_mslr_like(1000, seed=0)
    assert f"`make_mslr_like(1000, seed=0)` ({d.X.shape[0] / d.n_queries:.1f} documents per query" in text
    train, _, _ = load_fold("synthetic:mslr:1000:0", "Fold1")
    assert f"Fold1 trains on\n{train.X.shape[0]:,} rows" in text
    assert f"{train.X.shape[0]:,} training rows" in text

