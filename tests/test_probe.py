"""The engine gradient probe: native per-document gradients equal the preset kernels' on real data."""

import numpy as np
import pytest

pytest.importorskip("lightgbm")
pytest.importorskip("xgboost")

from conftest import shared_file  # noqa: E402

from lambda_objectives.adapters import LightGBMObjective, XGBoostObjective  # noqa: E402
from lambda_objectives.probe import compare_gradients, probe_lightgbm, probe_xgboost  # noqa: E402


def _few_queries(path, query_file=None, n_q=6):
    from sklearn.datasets import load_svmlight_file

    if query_file is None:
        _, y, qid = load_svmlight_file(str(path), query_id=True)
        ptr = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    else:
        _, y = load_svmlight_file(str(path))
        ptr = np.r_[0, np.cumsum(np.loadtxt(query_file, dtype=np.int64))]
    ptr = ptr[: n_q + 1]
    return y[: ptr[-1]], ptr


@pytest.fixture(scope="module", params=["mq2008", "yahoo"])
def small(request, shared_data):
    if request.param == "mq2008":
        return _few_queries(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"), n_q=8)
    d = "yahoo-sample"
    return _few_queries(shared_file(shared_data, d, "rank.train"), shared_file(shared_data, d, "rank.train.query"))


@pytest.mark.parametrize("params", [{}, {"lambdarank_truncation_level": 3, "sigmoid": 2.0},
                                    {"lambdarank_norm": False}])
def test_probe_lightgbm_equals_preset(small, params):
    y, ptr = small
    s = np.random.default_rng(0).normal(size=y.size)
    gn, hn = probe_lightgbm(y, ptr, params, init_score=s)
    obj = LightGBMObjective(k=params.get("lambdarank_truncation_level"), sigma=params.get("sigmoid", 1.0),
                            preset="lightgbm", norm=params.get("lambdarank_norm", True))
    go, ho = obj.gradients(s, y, ptr)
    r = compare_gradients(go, ho, gn, hn, rtol=1e-6)
    assert r["passed"], r
    # LightGBM leaves some documents sharing a leaf (its histogram counts are estimated from
    # Hessians); several documents with a gradient must still be isolated
    assert r["n_compared"] >= 5 and np.count_nonzero(go) > 0


@pytest.mark.parametrize("metric", ["ndcg", "map", "pairwise"])
def test_probe_xgboost_equals_preset(small, metric):
    y, ptr = small
    if metric == "map":
        y = (y > 0).astype(float)
    s = np.random.default_rng(1).normal(size=y.size).astype(np.float32)
    gn, hn = probe_xgboost(y, ptr, {"objective": f"rank:{metric}"}, base_margin=s)
    go, ho = XGBoostObjective(metric, preset="xgboost").gradients(s, y, ptr)
    r = compare_gradients(go, ho, gn, hn, rtol=1e-6, atol=1e-8)
    assert r["passed"], r


def test_probe_detects_a_different_objective(small):
    y, ptr = small
    s = np.random.default_rng(2).normal(size=y.size)
    gn, hn = probe_lightgbm(y, ptr, {"lambdarank_truncation_level": 2}, init_score=s)
    go, ho = LightGBMObjective(preset="lightgbm").gradients(s, y, ptr)  # k=30, not 2
    assert not compare_gradients(go, ho, gn, hn)["passed"]


def test_compare_gradients_reports_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        compare_gradients(np.zeros(2), np.zeros(2), np.zeros(3), np.zeros(3))
