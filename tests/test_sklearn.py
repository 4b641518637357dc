"""What the scikit-learn rankers share (``lambda_objectives.adapters._sklearn``): the refusal to score a query
cut between fit and score, for ``XGBLambdaRanker``, ``LGBMLambdaRanker`` and ``reference.MARTRanker``."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import shared_file

import lambda_objectives as lo
from lambda_objectives.adapters._sklearn import TrainingQueries, query_fingerprints, row_fingerprints

pytest.importorskip("lightgbm")
pytest.importorskip("xgboost")
sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GroupKFold, KFold, cross_val_score, cross_validate  # noqa: E402

from reference import MARTRanker  # noqa: E402

RANKERS = {
    "xgb": lambda n=3: lo.XGBLambdaRanker(n_estimators=n, max_depth=3, nthread=1),
    "lgbm": lambda n=3: lo.LGBMLambdaRanker(n_estimators=n, num_leaves=7, min_data_in_leaf=5, num_threads=1),
    "mart": lambda n=3: MARTRanker(n_estimators=n, num_leaves=7, min_data_in_leaf=5, n_threads=1),
}
CUT = "is cut between fit and score"


@pytest.fixture(scope="module")
def data():
    return lo.make_ranking(45, docs_per_query=(6, 20), n_features=5, seed=0)


@pytest.fixture(scope="module")
def frame(data):
    return data.to_frame().drop(columns="label")


@pytest.mark.parametrize("name", RANKERS)
def test_row_split_cross_validation_is_refused_and_group_splits_work(name, data, frame):
    make = RANKERS[name]
    # a DataFrame with a qid column: the test folds of KFold hold the rest of queries fitted on
    with pytest.raises(ValueError, match=rf"{type(make()).__name__}.score: query qid=\d+ {CUT}: fit saw \d+ "
                                         r"of its rows.*GroupKFold"):
        cross_val_score(make(), frame, data.y, cv=KFold(3, shuffle=True, random_state=0), error_score="raise")
    # numpy X with metadata routing: the same split, the same refusal
    with sklearn.config_context(enable_metadata_routing=True):
        est = make().set_fit_request(qid=True).set_score_request(qid=True)
        with pytest.raises(ValueError, match=CUT):
            cross_val_score(est, data.X, data.y, cv=KFold(3, shuffle=True, random_state=0),
                            params={"qid": data.qid}, error_score="raise")
        routed = cross_validate(est, data.X, data.y, cv=GroupKFold(3), params={"qid": data.qid, "groups": data.qid},
                                return_train_score=True, error_score="raise")
    # whole queries per fold: scored, and the training folds scored again (return_train_score) too
    framed = cross_validate(make(), frame, data.y, groups=data.qid, cv=GroupKFold(3), return_train_score=True,
                            error_score="raise")
    assert np.all((framed["test_score"] > 0) & (framed["test_score"] <= 1))
    np.testing.assert_allclose(routed["test_score"], framed["test_score"])
    np.testing.assert_allclose(routed["train_score"], framed["train_score"])


@pytest.mark.parametrize("name", RANKERS)
def test_training_rows_and_disjoint_queries_score_and_cut_ones_do_not(name, data, frame):
    est = RANKERS[name]().fit(frame, data.y)
    assert isinstance(est.train_queries_, TrainingQueries) and "train_queries_" not in vars(clone(est))
    # the training set again: in another query order, as float32, as CSR, with numpy X and qid=
    full = est.score(frame, data.y)
    order = np.concatenate([np.arange(a, b) for a, b in zip(data.group_ptr[-2::-1], data.group_ptr[:0:-1])])
    assert est.score(frame.iloc[order], data.y[order]) == pytest.approx(full)
    assert est.score(frame.astype(np.float32), data.y) == pytest.approx(full, abs=1e-6)
    assert est.score(sp.csr_matrix(data.X), data.y, qid=data.qid) == pytest.approx(full)
    # rows of a query in another order within the query: the same query
    within = np.concatenate([np.arange(b - 1, a - 1, -1) for a, b in zip(data.group_ptr[:-1], data.group_ptr[1:])])
    est.score(data.X[within], data.y[within], qid=data.qid[within])
    # a model fitted on some queries scores the others
    train, test = lo.train_test_split_queries(data, 0.3, seed=1)
    est = RANKERS[name]().fit(train.X, train.y, qid=train.qid)
    assert not np.isin(test.qid, train.qid).any()
    assert 0 < est.score(test.X, test.y, qid=test.qid) <= 1
    # a query half fitted, half scored: equal row counts, other rows (the fingerprint sees it)
    half = lo.make_ranking(20, docs_per_query=(4, 12), n_features=5, seed=2)
    sizes = np.diff(half.group_ptr)
    keep = sizes % 2 == 0
    rows = [np.arange(a, b) for a, b, k in zip(half.group_ptr[:-1], half.group_ptr[1:], keep) if k]
    first = np.concatenate([r[: r.size // 2] for r in rows])
    second = np.concatenate([r[r.size // 2:] for r in rows])
    est = RANKERS[name]().fit(half.X[first], half.y[first], qid=half.qid[first])
    with pytest.raises(ValueError, match=rf"{CUT}: fit saw (\d+) of its rows, and score is given \1 rows"):
        est.score(half.X[second], half.y[second], qid=half.qid[second])
    # scoring a part of a fitted query (fewer rows) or a fitted query plus other rows is refused too
    with pytest.raises(ValueError, match=CUT):
        est.score(half.X[first[1:]], half.y[first[1:]], qid=half.qid[first[1:]])


@pytest.mark.parametrize("name", RANKERS)
def test_reused_qid_values_need_new_queries_or_renumbering(name, data):
    other = lo.make_ranking(15, docs_per_query=(6, 20), n_features=5, seed=7)  # qids 0..14 again
    est = RANKERS[name]().fit(data.X, data.y, qid=data.qid)
    with pytest.raises(ValueError, match=r"renumber them .* or pass score\(\.\.\., new_queries=True\)"):
        est.score(other.X, other.y, qid=other.qid)
    renumbered = est.score(other.X, other.y, qid=other.qid + data.qid.max() + 1)
    assert est.score(other.X, other.y, qid=other.qid, new_queries=True) == renumbered
    with pytest.raises(ValueError, match="new_queries must be True or False"):
        est.score(other.X, other.y, qid=other.qid, new_queries="yes")
    # queries given as sizes carry no ids: nothing is recorded, nothing can be compared
    by_size = RANKERS[name]().fit(data.X, data.y, group=np.diff(data.group_ptr))
    assert by_size.train_queries_ is None
    assert by_size.score(other.X, other.y, qid=other.qid) == pytest.approx(renumbered)


@pytest.mark.parametrize("name", RANKERS)
def test_feature_names_are_recorded_and_compared_as_scikit_learn_does(name, data, frame):
    """Issue #48: the training columns in another order scored NDCG@10 0.68 against 0.75 (no error),
    and the training frame reordered raised the unrelated "cut between fit and score". Now the
    rules of scikit-learn's ``validate_data``: the same ValueError as its own estimators give,
    before any query check, and a warning for a frame after an array or the reverse."""
    import warnings

    from sklearn.linear_model import LinearRegression

    est = RANKERS[name]().fit(frame, data.y)
    names = [c for c in frame.columns if c != "qid"]
    assert list(est.feature_names_in_) == names and est.n_features_in_ == len(names)  # qid is no feature
    moved = frame[names[::-1] + ["qid"]]
    with pytest.raises(ValueError) as ours:
        est.score(moved, data.y)  # the training frame reordered: the names, not "cut between fit and score"
    with pytest.raises(ValueError) as theirs:
        LinearRegression().fit(frame[names], data.y).predict(moved[names[::-1]])
    assert str(ours.value) == str(theirs.value) and "same order" in str(ours.value)
    with pytest.raises(ValueError, match="unseen at fit time:\n- g0\n"):
        est.predict(frame.rename(columns={names[0]: "g0"}))
    with pytest.raises(ValueError, match="X has 4 features, but .* is expecting 5 features"):
        est.predict(data.X[:, :4])
    with pytest.warns(UserWarning, match=f"X does not have valid feature names, but {type(est).__name__} was fitted with"):
        np.testing.assert_array_equal(est.predict(data.X), est.predict(frame))
    plain = RANKERS[name]().fit(data.X, data.y, qid=data.qid)
    assert not hasattr(plain, "feature_names_in_")
    with pytest.warns(UserWarning, match=f"X has feature names, but {type(est).__name__} was fitted without"):
        plain.predict(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain.score(data.X, data.y, qid=data.qid)
        est.score(frame, data.y)
    refit = est.fit(data.X, data.y, qid=data.qid)  # a refit on an array forgets the names, as sklearn's do
    assert not hasattr(refit, "feature_names_in_")
    # an eval set's columns are the training frame's, in its order
    if name == "mart":
        kw = {"eval_set": [(moved, data.y, data.group)]}
        where = "eval set 0"
    else:
        kw = {"eval_set": [(moved, data.y)]}
        where = r"eval_set\[0\]"
    with pytest.raises(ValueError, match=f"{where}: its feature names should match .*another order"):
        RANKERS[name]().fit(frame, data.y, **kw)


@pytest.mark.parametrize("name", RANKERS)
def test_row_splits_that_scatter_queries_point_to_group_kfold(name, data, frame):
    """Under ShuffleSplit a training fold's queries are scattered: fit says so and names GroupKFold."""
    from sklearn.model_selection import ShuffleSplit

    with pytest.raises(ValueError, match=rf"{type(RANKERS[name]()).__name__}.fit: .*row splitter \(ShuffleSplit.*"
                                         r"cv=GroupKFold"):
        cross_val_score(RANKERS[name](), frame, data.y, cv=ShuffleSplit(2, random_state=0), error_score="raise")
    # without error_score="raise": scikit-learn raises only when every fit failed (ShuffleSplit), with
    # our message inside; a refused score (KFold keeps training rows in order) is a NaN and a warning
    with pytest.raises(ValueError, match=r"(?s)All the 2 fits failed.*cv=GroupKFold"):
        cross_val_score(RANKERS[name](), frame, data.y, cv=ShuffleSplit(2, random_state=0))
    with pytest.warns(UserWarning, match="Scoring failed"):
        scores = cross_val_score(RANKERS[name](), frame, data.y, cv=KFold(3, shuffle=True, random_state=0))
    assert np.isnan(scores).all()


def test_fingerprints_are_exact_for_the_same_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6))
    X[rng.random(X.shape) < 0.4] = 0.0
    X[3, 2], X[4, 1] = np.nan, -0.0
    h = row_fingerprints(X)
    csr = sp.csr_matrix(X)
    indptr = csr.indptr.copy()
    indptr[-1] += 1  # an explicit zero stored in the last row
    with_zero = sp.csr_matrix((np.r_[csr.data, 0.0], np.r_[csr.indices, 0], indptr), shape=X.shape)
    assert with_zero.nnz == csr.nnz + 1
    np.testing.assert_array_equal(row_fingerprints(csr), h)
    np.testing.assert_array_equal(row_fingerprints(with_zero), h)
    np.testing.assert_array_equal(row_fingerprints(X.astype(np.float32)), h)
    np.testing.assert_array_equal(row_fingerprints(X, chunk=7), h)  # the blocked loop agrees
    assert np.unique(h).size == np.unique(X, axis=0).shape[0]
    moved = X[:, ::-1]  # the same values in other columns are another row
    same = np.all((moved == X) | (np.isnan(moved) & np.isnan(X)), axis=1)
    assert not np.any((row_fingerprints(moved) == h)[~same]) and (~same).sum() > 25
    ptr = np.array([0, 10, 30])
    q = query_fingerprints(X, ptr)
    np.testing.assert_array_equal(query_fingerprints(X[np.r_[9:-1:-1, 29:9:-1]], ptr), q)  # order-free
    assert query_fingerprints(X[np.r_[0:9, 10, 10:30]][:30], ptr)[0] != q[0]


def test_mq2008_row_split_is_refused_and_whole_queries_score(shared_data):
    """MQ2008 Fold1 train, 20 trees: KFold(5, shuffle) scored 0.94 NDCG@10, GroupKFold(5) 0.78."""
    d = lo.load_letor(shared_file(shared_data, "MQ2008", "Fold1", "train.txt"))
    df = d.to_frame().drop(columns="label")
    est = lo.LGBMLambdaRanker(n_estimators=20, num_threads=1)
    with pytest.raises(ValueError, match=CUT):
        cross_val_score(est, df, d.y, cv=KFold(5, shuffle=True, random_state=0), error_score="raise")
    grouped = cross_val_score(est, df, d.y, groups=d.qid, cv=GroupKFold(5), error_score="raise")
    assert 0.74 < grouped.mean() < 0.82
    # what the row split reported: the refused fold scored anyway (new_queries=True disables the check)
    train, test = next(KFold(5, shuffle=True, random_state=0).split(df))
    cut = clone(est).fit(df.iloc[train], d.y[train]).score(df.iloc[test], d.y[test], new_queries=True)
    assert cut > 0.9 > grouped.mean() + 0.1


# -- bias= through the rankers (issue #45): fit(..., position=) --------------------------------------------------
@pytest.mark.parametrize("bias", ["ips", "pairwise", "additive"])
@pytest.mark.parametrize("metric", ["ndcg", "mrr", "yetirank"])
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_rankers_train_every_bias_from_fit_position(engine, metric, bias):
    """fit(..., position=) trains the debiased model of an objective given those positions (a copy: the
    caller's objective is untouched), the same bits at 1 and 2 threads, and not the model without bias."""
    d = lo.make_ranking(25, docs_per_query=(2, 15), n_features=4, seed=7)
    rng = np.random.default_rng(7)
    pos = np.concatenate([rng.permutation(m) for m in d.group])
    clicks = ((rng.random(len(d.y)) < 1.0 / (1.0 + pos)) & (d.y > 0)).astype(float)
    cls, ranker = ((lo.LightGBMObjective, lo.LGBMLambdaRanker) if engine == "lightgbm"
                   else (lo.XGBoostObjective, lo.XGBLambdaRanker))
    opts = {"ips": {"propensities": 1.0 / (1.0 + np.arange(15))}, "pairwise": {"bias_norm": 0.5},
            "additive": {"position_bias_regularization": 0.1}}[bias]
    threads = "num_threads" if engine == "lightgbm" else "nthread"
    engine_opts = {"min_data_in_leaf": 2, "num_leaves": 7, "verbose": -1} if engine == "lightgbm" else {"max_depth": 3}
    if engine == "xgboost":  # small Hessians on 25 queries: the objective's min_child_weight goes to XGBoost
        opts["min_child_weight"] = 1e-3

    def fit(obj, t, **kw):
        est = ranker(obj, n_estimators=3, learning_rate=0.2, **{threads: t}, **engine_opts)
        return est.fit(d.X, clicks, group=d.group, **kw)

    preds = []
    for t in (1, 2):
        obj = cls(metric, bias=bias, n_threads=t, **opts)
        est = fit(obj, t, position=pos)
        assert obj.positions is None  # the caller's objective keeps its own (none)
        preds.append(est.predict(d.X))
        given = fit(cls(metric, bias=bias, n_threads=t, positions=pos, **opts), t)
        np.testing.assert_array_equal(given.predict(d.X), preds[-1])
    np.testing.assert_array_equal(preds[0], preds[1])
    plain = cls(metric, **({"min_child_weight": 1e-3} if engine == "xgboost" else {}))
    assert not np.array_equal(fit(plain, 1).predict(d.X), preds[0])
    fitted = est.objective_
    if bias == "pairwise":
        assert np.any(fitted.bias_factors_[0] != 1.0)
    elif bias == "additive":
        assert np.any(fitted.position_bias_ != 0.0)
