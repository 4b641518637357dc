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
    gn, hn = probe_lightgbm(y, ptr, params, scores=s)
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
    gn, hn = probe_xgboost(y, ptr, {"objective": f"rank:{metric}"}, scores=s)
    go, ho = XGBoostObjective(metric, preset="xgboost").gradients(s, y, ptr)
    r = compare_gradients(go, ho, gn, hn, rtol=1e-6, atol=1e-8)
    assert r["passed"], r


def test_probe_detects_a_different_objective(small):
    y, ptr = small
    s = np.random.default_rng(2).normal(size=y.size)
    gn, hn = probe_lightgbm(y, ptr, {"lambdarank_truncation_level": 2}, scores=s)
    go, ho = LightGBMObjective(preset="lightgbm").gradients(s, y, ptr)  # k=30, not 2
    assert not compare_gradients(go, ho, gn, hn)["passed"]


def test_compare_gradients_reports_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        compare_gradients(np.zeros(2), np.zeros(2), np.zeros(3), np.zeros(3))


# --- CatBoost ---------------------------------------------------------------------------------
def _catboost():
    return pytest.importorskip("catboost", reason="catboost is not installed (pip install 'lambda_objectives[catboost]')")


def test_catboost_probe_recovers_query_rmse_in_closed_form():
    _catboost()
    from lambda_objectives import probe_catboost

    s, y, ptr = np.array([0.3, -0.2, 0.5, 0.1, 0.0, 1.0, 2.0]), np.array([2.0, 0, 1, 0, 1, 3, 1]), [0, 5, 7]
    d1, d2 = probe_catboost(s, y, ptr, "QueryRMSE")
    r = y - s
    want = np.r_[r[:5] - r[:5].mean(), r[5:] - r[5:].mean()]  # −∂L/∂s of ½Σ(y − s − mean)² per query
    np.testing.assert_allclose(d1, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(d2, -1.0, rtol=1e-6)


def test_catboost_lambdamart_ndcg_is_our_linear_gain_lambda_and_mrr_differs_as_derived():
    _catboost()
    from lambda_objectives import lambda_gradients, probe_catboost

    rng = np.random.default_rng(0)
    s, y, ptr = rng.normal(size=9), np.array([2.0, 0, 1, 3, 0, 1, 2, 0, 1]), [0, 9]
    d1, d2 = probe_catboost(s, y, ptr, "LambdaMart:metric=NDCG;norm=false")
    g, h = lambda_gradients(s, y, ptr, "ndcg", gain="linear")  # CatBoost's NDCG gain is the label
    np.testing.assert_allclose(d1, g, rtol=1e-6, atol=1e-9)  # its der1 is +∂C/∂s, its der2 +∂²C/∂s²
    np.testing.assert_allclose(d2, h, rtol=1e-6, atol=1e-9)
    # MRR, by hand: ranking doc2 (label 0), doc0 (2), doc1 (1); relevant = label > 0, RR = 1/2.
    # Swapping doc1 (rank 3) with doc2 (rank 1) makes RR 1: the exact |ΔRR| is 1/2; CatBoost weights
    # the pair |1/1 − 1/3| = 2/3, as if doc1 were the only relevant document.
    s, y = np.array([0.32, -0.82, 0.73]), np.array([2.0, 1.0, 0.0])
    d1, _ = probe_catboost(s, y, [0, 3], "LambdaMart:metric=MRR;norm=false")
    rho02 = 1.0 / (1.0 + np.exp(s[0] - s[2]))
    rho12 = 1.0 / (1.0 + np.exp(s[1] - s[2]))
    np.testing.assert_allclose(d1, [-0.5 * rho02, -2 / 3 * rho12, 0.5 * rho02 + 2 / 3 * rho12], rtol=1e-6)
    g, _ = lambda_gradients(s, y, [0, 3], "mrr")
    np.testing.assert_allclose(g, [-0.5 * rho02, -0.5 * rho12, 0.5 * rho02 + 0.5 * rho12], rtol=1e-12)


def test_catboost_probe_reads_pairlogit_and_its_pairs_by_hand():
    _catboost()
    from lambda_objectives import probe_catboost

    # one query of 3 documents: pairs (0 over 1), (0 over 2), (2 over 1), weight 1 each; CatBoost's
    # der1 = −∂L/∂s and der2 = −∂²L/∂s² of L = Σ log(1 + exp(−(s_hi − s_lo)))
    s, y = np.array([0.5, -0.25, 0.75]), np.array([2.0, 0.0, 1.0])  # float32-exact scores
    p01, p02, p21 = (1.0 / (1.0 + np.exp(d)) for d in (0.75, -0.25, 1.0))
    want1 = [p01 + p02, -p01 - p21, p21 - p02]
    want2 = [-p01 * (1 - p01) - p02 * (1 - p02), -p01 * (1 - p01) - p21 * (1 - p21), -p02 * (1 - p02) - p21 * (1 - p21)]
    d1, d2, w = probe_catboost(s, y, [0, 3], "PairLogit", return_pair_weights=True)
    np.testing.assert_allclose(d1, want1, rtol=1e-10)
    np.testing.assert_allclose(d2, want2, rtol=1e-10)
    np.testing.assert_allclose(w, [2, 2, 2], rtol=1e-10)
    # ties in a 4-document query: no pair between the two label-1 documents, so doc 3 has 1 pair
    d1, _, w = probe_catboost([0.5, -0.25, 0.75, 0.0], [2.0, 1.0, 0.0, 1.0], [0, 4], "PairLogit",
                              return_pair_weights=True)
    np.testing.assert_allclose(w, [3, 2, 3, 2], rtol=1e-10)
    assert abs(d1.sum()) < 1e-12  # every pair moves its two documents by opposite amounts


def test_catboost_probe_reads_yetirank_on_two_documents_by_hand():
    _catboost()
    from lambda_objectives import probe_catboost

    # two documents are always neighbours: YetiRank's pair weight is 0.15·|Δy| whatever the noise
    s, y = np.array([0.25, 1.0]), np.array([3.0, 1.0])
    p = 1.0 / (1.0 + np.exp(s[0] - s[1]))
    # CatBoost sums the 10 permutations' float32 weights in float32, then divides by 10 in float32
    w = np.float32(0.0)
    for _ in range(10):
        w = np.float32(w + np.float32(0.15 * 2))
    w = float(np.float32(w / np.float32(10)))
    d1, d2 = probe_catboost(s, y, [0, 2], "YetiRank", params={"random_seed": 7})
    np.testing.assert_allclose(d1, [w * p, -w * p], rtol=1e-9)
    np.testing.assert_allclose(d2, [-w * p * (1 - p)] * 2, rtol=1e-9)


def test_catboost_probe_pair_weights_only_for_pairlogit():
    _catboost()
    from lambda_objectives import probe_catboost

    with pytest.raises(ValueError, match="PairLogit"):
        probe_catboost([0.0, 1.0], [1.0, 0.0], [0, 2], "QueryRMSE", return_pair_weights=True)


def test_lightgbm_retries_are_silent_and_leave_unisolated_documents_out(capfd):
    """Near-zero Hessians (truncation 3) trip LightGBM's ``left_count > 0`` check; the probe retries
    with larger leaves, and LightGBM's "[Fatal]" line of the handled failure must not reach the user."""
    pytest.importorskip("lightgbm")
    from lambda_objectives.probe import probe_lightgbm

    rng = np.random.default_rng(0)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(5, 15, size=6))])
    y = rng.integers(0, 3, size=ptr[-1]).astype(float)
    g, h = probe_lightgbm(y, ptr, {"lambdarank_truncation_level": 3, "sigmoid": 2.0},
                          scores=rng.normal(size=y.size))
    said = capfd.readouterr()
    assert "[Fatal]" not in said.err and "[Fatal]" not in said.out
    assert 0 < np.isnan(g).sum() < y.size  # documents sharing a leaf are left out, not guessed


# --- one keyword for every probe ---------------------------------------------------------------
def test_one_scores_keyword_probes_every_engine_at_those_scores():
    """``scores=`` is the one keyword of every probe: a loop over the engines probes each at the
    given scores (``probe_xgboost`` had ``base_margin=`` where ``probe_lightgbm`` had ``init_score=``)."""
    from lambda_objectives import lambda_gradients

    rng = np.random.default_rng(4)
    ptr = np.array([0, 7, 15])
    y = rng.integers(0, 3, size=15).astype(float)
    s = rng.normal(size=15).astype(np.float32).astype(float)  # exact in XGBoost's float32 margins
    presets = {probe_lightgbm: LightGBMObjective(preset="lightgbm"),
               probe_xgboost: XGBoostObjective("ndcg", preset="xgboost")}
    for probe, obj in presets.items():
        gn, hn = probe(labels=y, group_ptr=ptr, scores=s)
        go, ho = obj.gradients(s, y, ptr)
        r = compare_gradients(go, ho, gn, hn, rtol=1e-5, atol=1e-7)
        assert r["passed"] and r["n_compared"] >= 5, (probe.__name__, r)
        g0, h0 = obj.gradients(np.zeros_like(s), y, ptr)
        assert not compare_gradients(g0, h0, gn, hn, rtol=1e-5, atol=1e-7)["passed"], probe.__name__
    cb = pytest.importorskip("catboost")  # noqa: F841
    from lambda_objectives import probe_catboost

    d1, _ = probe_catboost(labels=y, group_ptr=ptr, scores=s, loss_function="LambdaMart:metric=NDCG;norm=false")
    np.testing.assert_allclose(d1, lambda_gradients(s, y, ptr, "ndcg", gain="linear")[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("probe, old", [(probe_lightgbm, "init_score"), (probe_xgboost, "base_margin")])
def test_old_score_keywords_still_work_with_a_warning(probe, old):
    ptr, y = np.array([0, 6]), np.array([2.0, 0, 1, 0, 1, 0])
    s = np.array([0.5, -0.25, 0.75, 0.0, 1.0, -1.0])
    with pytest.warns(FutureWarning, match="scores="):
        old_way = probe(y, ptr, **{old: s})
    np.testing.assert_array_equal(old_way, probe(y, ptr, scores=s))
    with pytest.raises(TypeError, match="once"):
        probe(y, ptr, scores=s, **{old: s})


# -- position bias (issue #45): the engines' debiased gradients probed in a later round, against ours ----------
def _probe_clicks():
    rng = np.random.default_rng(3)
    sizes = rng.integers(3, 12, 12)
    ptr = np.r_[0, np.cumsum(sizes)]
    pos = np.concatenate([np.arange(m) for m in sizes])
    c = ((rng.random(ptr[-1]) < 1 / (1 + pos)) & (rng.random(ptr[-1]) < 0.7)).astype(float)
    return c, ptr, pos


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_probes_take_positions_and_see_the_engines_debiasing(rounds):
    """Round 1 has b = 0 / t = 1 (the plain gradients); later rounds carry the engines' estimates, and our
    parity presets match them through the same probe to the bit."""
    pytest.importorskip("lightgbm")
    pytest.importorskip("xgboost")
    from lambda_objectives import LightGBMObjective, XGBoostObjective

    c, ptr, pos = _probe_clicks()
    lgb_params = {"objective": "lambdarank", "lambdarank_position_bias_regularization": 0.1}
    native = probe_lightgbm(c, ptr, lgb_params, position=pos, rounds=rounds)
    ours = probe_lightgbm(c, ptr, {"objective": LightGBMObjective("ndcg", preset="lightgbm", bias="additive",
                                                                   position_bias_regularization=0.1)},
                          position=pos, rounds=rounds)
    plain = probe_lightgbm(c, ptr, {"objective": "lambdarank"}, rounds=rounds)
    res = compare_gradients(*ours, *native, rtol=0, atol=0)
    assert res["passed"] and res["n_compared"] >= 10
    assert (compare_gradients(*plain, *native)["max_abs"] == 0.0) == (rounds == 1)
    native = probe_xgboost(c, ptr, {"objective": "rank:ndcg", "lambdarank_unbiased": True}, position=pos, rounds=rounds)
    ours = probe_xgboost(c, ptr, {"objective": XGBoostObjective("ndcg", preset="xgboost", bias="pairwise")},
                         position=pos, rounds=rounds)
    plain = probe_xgboost(c, ptr, {"objective": "rank:ndcg"}, rounds=rounds)
    res = compare_gradients(*ours, *native, rtol=0, atol=0)
    assert res["passed"] and res["n_compared"] >= 10
    assert (compare_gradients(*plain, *native)["max_abs"] == 0.0) == (rounds == 1)


def test_probes_refuse_bad_positions_and_rounds():
    pytest.importorskip("xgboost")
    c, ptr, pos = _probe_clicks()
    with pytest.raises(ValueError, match=r"index inside its query; position at row 1"):
        probe_xgboost(c, ptr, position=np.r_[0, 2, 1, pos[3:]])
    with pytest.raises(ValueError, match=r"position has 3 rows"):
        probe_xgboost(c, ptr, position=pos[:3])
    with pytest.raises(ValueError, match=r"rounds must be an integer >= 1"):
        probe_xgboost(c, ptr, rounds=0)
