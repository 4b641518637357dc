"""Tests of lambda_objectives._core.optional: a missing extra is named."""


def test_a_missing_optional_dependency_names_its_extra(monkeypatch):
    import sys

    import pytest

    from lambda_objectives._core.optional import require

    monkeypatch.setitem(sys.modules, "xgboost", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'lambda_objectives\[engines\]'"):
        require("xgboost")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # other tests may have imported it
    with pytest.raises(ImportError, match=r"lambda_objectives\[plots\]"):
        require("matplotlib.pyplot")
