"""Tests of lambda_objectives.metrics: definitions, properties, an independent evaluator, bad input."""

import _oracles as oracle
import numba
import numpy as np
import pytest
from conftest import shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

from lambda_objectives import METRICS, mean_metric, metric_table, metric_values, metric_values_table, parse_metric

EXAMPLES = 200 if not numba.config.DISABLE_JIT else 60


@st.composite
def batches(draw):
    sizes = draw(st.lists(st.integers(1, 60), min_size=1, max_size=6))
    n = sum(sizes)
    scores = draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n))  # many ties
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    k = draw(st.one_of(st.none(), st.integers(1, 70)))
    return np.array(scores, float) * 0.3, np.array(labels, float), np.concatenate(([0], np.cumsum(sizes))), k


#: the options each metric's value reads (docs/math.md); metric_values refuses the others
READS = {"ndcg": {"gain", "label_gain", "ideal_zero"}, "dcg": {"gain", "label_gain"}, "err": {"max_label"},
         "map": {"threshold"}, "mrr": {"threshold"}}


def _own(name, opts):
    """The entries of ``opts`` metric ``name`` (``"ndcg@3"`` or ``"ndcg"``) reads."""
    return {key: v for key, v in opts.items() if key in READS[name.split("@")[0]]}


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(b=batches(), gain=st.sampled_from(["exp", "linear"]), threshold=st.sampled_from([0.0, 1.0, 2.5]))
def test_matches_definition(metric, b, gain, threshold):
    s, y, ptr, k = b
    got = metric_values(s, y, ptr, metric, k, **_own(metric, dict(gain=gain, threshold=threshold)))
    max_label = y.max()
    for q in range(len(ptr) - 1):
        a, e = ptr[q], ptr[q + 1]
        want = oracle.metric_of_query(list(s[a:e]), list(y[a:e]), metric, k, gain=gain,
                                      threshold=threshold, max_label=max_label)
        assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-12)
        if metric != "dcg":
            assert 0.0 <= got[q] <= 1.0 + 1e-12


@pytest.mark.kernel
@pytest.mark.parametrize("metric", METRICS)
@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(b=batches(), seed=st.integers(0, 2**31))
def test_permutation_invariance_and_k_beyond_list(metric, b, seed):
    _, y, ptr, k = b
    rng = np.random.default_rng(seed)
    s = rng.normal(size=len(y))  # distinct scores: the ranking does not depend on input order
    perm = np.concatenate([a + rng.permutation(e - a) for a, e in zip(ptr[:-1], ptr[1:])])
    np.testing.assert_allclose(metric_values(s[perm], y[perm], ptr, metric, k),
                               metric_values(s, y, ptr, metric, k), rtol=1e-13)
    longest = int(np.diff(ptr).max())
    np.testing.assert_array_equal(metric_values(s, y, ptr, metric, longest),
                                  metric_values(s, y, ptr, metric, None))


@pytest.mark.kernel
def test_ties_broken_by_input_position():
    # Equal scores: the first document in the input ranks first.
    assert metric_values([1.0, 1.0], [0.0, 1.0], [0, 2], "mrr")[0] == 0.5
    assert metric_values([1.0, 1.0], [1.0, 0.0], [0, 2], "mrr")[0] == 1.0


def test_closed_form_values():
    # One query ranked [2, 0, 1] (labels in rank order).
    s, y, ptr = [3.0, 2.0, 1.0], [2.0, 0.0, 1.0], [0, 3]
    dcg = 3.0 + 1.0 / np.log2(4)
    idcg = 3.0 + 1.0 / np.log2(3)
    assert metric_values(s, y, ptr, "dcg")[0] == pytest.approx(dcg)
    assert metric_values(s, y, ptr, "ndcg")[0] == pytest.approx(dcg / idcg)
    assert metric_values(s, y, ptr, "ndcg@1")[0] == 1.0
    R2, R1 = 3 / 4, 1 / 4
    assert metric_values(s, y, ptr, "err")[0] == pytest.approx(R2 + (1 - R2) * (1 - 0) * R1 / 3)
    assert metric_values(s, y, ptr, "map")[0] == pytest.approx((1 + 2 / 3) / 2)
    assert metric_values(s, y, ptr, "map@2")[0] == pytest.approx(1 / 2)
    assert metric_values(s, y, ptr, "mrr", threshold=1.0)[0] == 1.0
    assert metric_values(s, y, ptr, "ndcg", gain="linear")[0] == pytest.approx(
        (2 + 1 / np.log2(4)) / (2 + 1 / np.log2(3)))
    assert metric_values(s, y, ptr, "ndcg", label_gain=[0, 10, 1])[0] == pytest.approx(
        (1 + 10 / np.log2(4)) / (10 + 1 / np.log2(3)))


def test_parse_metric_and_means():
    assert parse_metric("NDCG@10") == ("ndcg", 10)
    assert parse_metric("err") == ("err", None)
    assert parse_metric("map", 5) == ("map", 5)
    with pytest.raises(ValueError, match="k=3"):
        parse_metric("ndcg@3", 5)
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("auc@3")
    s, y, ptr = [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0, 2, 4]
    v = metric_values(s, y, ptr, "ndcg", ideal_zero="drop")
    assert np.isnan(v[1])
    assert mean_metric(s, y, ptr, "ndcg", ideal_zero="drop") == pytest.approx(v[0])
    assert mean_metric(s, y, ptr, "ndcg") == pytest.approx((v[0] + 1.0) / 2)
    assert mean_metric(s, y, ptr, "ndcg", query_weights=[3, 1]) == pytest.approx((3 * v[0] + 1) / 4)
    table = metric_table(s, y, ptr, metrics=("ndcg@1", "mrr"))
    assert set(table) == {"ndcg@1", "mrr"}


@pytest.mark.kernel
@settings(max_examples=EXAMPLES, deadline=None)
@given(b=batches(), gain=st.sampled_from(["exp", "linear"]), threshold=st.sampled_from([0.0, 1.0]),
       ideal_zero=st.sampled_from(["one", "zero", "drop"]))
def test_values_table_is_metric_values_to_the_bit(b, gain, threshold, ideal_zero):
    s, y, ptr, k = b
    names = [f"{m}@{k}" if k else m for m in METRICS] + ["ndcg@1", "err@2", "map@3", "mrr@70"]
    names = list(dict.fromkeys(names))
    opts = dict(gain=gain, threshold=threshold, ideal_zero=ideal_zero, max_label=4.0)
    table = metric_values_table(s, y, ptr, names, **opts)
    assert list(table) == names
    for name in names:
        np.testing.assert_array_equal(table[name], metric_values(s, y, ptr, name, **_own(name, opts)))
    means = metric_table(s, y, ptr, names, **opts)
    for name in names:
        assert means[name] == mean_metric(s, y, ptr, name, **_own(name, opts)) or np.isnan(means[name])


@pytest.mark.parametrize("metrics, match", [([], "empty"), ("ndcg@3", "sequence"), (["ndcg@3", "ndcg@3"], "twice"),
                                             (["ndcg", "auc"], "unknown metric"), (3, "sequence")])
def test_values_table_bad_names(metrics, match):
    with pytest.raises(ValueError, match=match):
        metric_values_table([0.2, 0.1], [1.0, 0.0], [0, 2], metrics)


def test_values_table_and_metric_table_take_a_shared_cutoff():
    s, y, ptr = [0.2, 0.1, 0.4, 0.3], [1.0, 0.0, 2.0, 0.0], [0, 4]
    table = metric_values_table(s, y, ptr, ["ndcg", "map@2"], k=2)
    np.testing.assert_array_equal(table["ndcg"], metric_values(s, y, ptr, "ndcg", 2))
    np.testing.assert_array_equal(table["map@2"], metric_values(s, y, ptr, "map", 2))
    assert metric_table(s, y, ptr, ["ndcg", "mrr"], k=1)["ndcg"] == mean_metric(s, y, ptr, "ndcg@1")
    with pytest.raises(ValueError, match="k=3"):
        metric_values_table(s, y, ptr, ["ndcg@3"], k=2)


def test_values_table_checks_labels_for_every_metric():
    # MAP takes real-valued labels, ERR does not: together they need whole grades, named in the error
    s, y, ptr = [0.2, 0.1], [1.5, 0.0], [0, 2]
    metric_values_table(s, y, ptr, ["map", "mrr@1"])
    with pytest.raises(ValueError, match="integer"):
        metric_values_table(s, y, ptr, ["map", "err"])
    with pytest.raises(ValueError, match="non-finite"):
        metric_values_table([np.nan, 0.0], [1.0, 0.0], ptr, ["map", "ndcg"])
    np.testing.assert_array_equal(metric_values_table([0.0, 1.0], [1, 0], ptr, ["mrr", "ndcg@1"], n_threads=1)["mrr"],
                                  [0.5])


def test_thread_count_does_not_change_values():
    rng = np.random.default_rng(0)
    ptr = np.concatenate(([0], np.cumsum(rng.integers(1, 50, 300))))
    s, y = rng.normal(size=ptr[-1]), rng.integers(0, 5, ptr[-1]).astype(float)
    for metric in METRICS:
        np.testing.assert_array_equal(metric_values(s, y, ptr, metric, 10, n_threads=1),
                                      metric_values(s, y, ptr, metric, 10, n_threads=2))
    one = metric_values_table(s, y, ptr, [f"{m}@10" for m in METRICS], n_threads=1)
    two = metric_values_table(s, y, ptr, [f"{m}@10" for m in METRICS], n_threads=2)
    for name in one:
        np.testing.assert_array_equal(one[name], two[name])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scores=[0.0, np.nan]), "non-finite"),
        (dict(scores=[0.0, -np.inf]), "non-finite"),
        (dict(labels=[np.nan, 0.0]), "non-finite"),
        (dict(labels=[-1.0, 0.0]), "non-negative"),
        (dict(labels=[1.5, 0.0]), "integer"),
        (dict(labels=[5e-324, 0.0], gain="linear"), "subnormal"),
        (dict(labels=[1.0]), "length mismatch"),
        (dict(group_ptr=[0, 3]), "end at"),
        (dict(group_ptr=[1, 2]), "start at 0"),
        (dict(group_ptr=[0, 2, 2]), "empty"),
        (dict(metric="precision"), "unknown metric"),
        (dict(k=0), "k must be"),
        (dict(ideal_zero="maybe"), "ideal_zero"),
        (dict(metric="err", max_label=0.5), "exceeds max_label"),
        (dict(label_gain=[0.0]), "no entry in label_gain"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(scores=[0.2, 0.1], labels=[1.0, 0.0], group_ptr=[0, 2], metric="ndcg")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        metric_values(args.pop("scores"), args.pop("labels"), args.pop("group_ptr"), args.pop("metric"), **args)


@pytest.mark.parametrize("call", [
    lambda s, y, p, **o: metric_values(s, y, p, "ndcg", **o),
    lambda s, y, p, **o: mean_metric(s, y, p, "ndcg@2", **o),
    lambda s, y, p, **o: metric_values_table(s, y, p, ["ndcg@1", "ndcg@2"], **o),
    lambda s, y, p, **o: metric_table(s, y, p, ["ndcg", "dcg@2"], **o),
])
@pytest.mark.parametrize("option", [{"threshold": 1.0}, {"max_label": 3.0}])
def test_options_no_metric_reads_are_refused(call, option):
    """Issue #48: ``threshold`` and ``max_label`` with NDCG were silently ignored (the objectives refuse
    options they do not read); now the same kind of ValueError names the option and the metric."""
    s, y, p = np.r_[0.3, 0.1, -0.2, 0.5], np.r_[2.0, 0, 1, 0], np.r_[0, 4]
    with pytest.raises(ValueError, match=rf"unknown options for metrics?=.*ndcg.*\['{next(iter(option))}'\]"):
        call(s, y, p, **option)
    call(s, y, p, convention="trec")  # a named convention speaks for every metric
    call(s, y, p, threshold=0.0)      # the default is not an option given (as for the objectives)


def test_each_metric_refuses_what_it_does_not_read():
    s, y, p = np.r_[0.3, 0.1, -0.2, 0.5], np.r_[2.0, 0, 1, 0], np.r_[0, 4]
    given = {"gain": "linear", "label_gain": [0.0, 1.0, 3.0], "ideal_zero": "zero", "max_label": 3.0, "threshold": 1.0}
    for metric in METRICS:
        for key, value in given.items():
            if key in READS[metric]:
                assert np.isfinite(metric_values(s, y, p, metric, **{key: value})).all()
            else:
                with pytest.raises(ValueError, match=rf"metric='{metric}': \['{key}'\] \(this metric does not read"):
                    metric_values(s, y, p, metric, **{key: value})
    # a table takes an option when at least one of its metrics reads it, and hands it to that one only
    table = metric_values_table(s, y, p, ["ndcg", "map"], threshold=1.0, gain="linear")
    np.testing.assert_array_equal(table["map"], metric_values(s, y, p, "map", threshold=1.0))
    np.testing.assert_array_equal(table["ndcg"], metric_values(s, y, p, "ndcg", gain="linear"))
    with pytest.raises(ValueError, match=r"none of these metrics reads them"):
        metric_values_table(s, y, p, ["map", "mrr@2"], gain="linear")


def test_inputs_not_mutated():
    s, y = np.array([0.3, 0.1, 0.2]), np.array([1.0, 0.0, 2.0])
    s0, y0 = s.copy(), y.copy()
    for metric in METRICS:
        metric_values(s, y, [0, 3], metric)
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)


# --- an independent public evaluator (trec_eval via ir_measures, gdeval for ERR) on real data ---


@pytest.fixture(scope="module")
def mq2008_scored(shared_data):
    lgb = pytest.importorskip("lightgbm")
    sk = pytest.importorskip("sklearn.datasets")
    train = shared_file(shared_data, "MQ2008", "Fold1", "train.txt")
    test = shared_file(shared_data, "MQ2008", "Fold1", "test.txt")
    Xtr, ytr, qtr = sk.load_svmlight_file(str(train), query_id=True, n_features=46)
    Xte, yte, qte = sk.load_svmlight_file(str(test), query_id=True, n_features=46)
    _, sizes = np.unique(qtr, return_counts=True)
    order = np.argsort(qtr, kind="stable")  # files are already grouped; keep it explicit
    model = lgb.train({"objective": "lambdarank", "verbose": -1, "num_leaves": 15, "seed": 1},
                      lgb.Dataset(Xtr[order], ytr[order], group=np.diff(np.flatnonzero(
                          np.r_[True, qtr[order][1:] != qtr[order][:-1], True]))), 20)
    scores = model.predict(Xte)
    # Replace scores by their stable rank (integers, exactly representable everywhere), so
    # trec_eval's own tie rule (docno descending) cannot differ from ours.
    order = np.argsort(-scores, kind="stable")
    scores = np.empty(len(order))
    scores[order] = len(order) - np.arange(len(order), dtype=float)
    ptr = np.flatnonzero(np.r_[True, qte[1:] != qte[:-1], True])
    return scores, yte, qte, ptr


def _ir_measures(measure, scores, labels, qid):
    irm = pytest.importorskip("ir_measures")
    qrels = [irm.Qrel(str(int(q)), f"d{i}", int(l)) for i, (q, l) in enumerate(zip(qid, labels))]
    run = [irm.ScoredDoc(str(int(q)), f"d{i}", float(s)) for i, (q, s) in enumerate(zip(qid, scores))]
    return {m.query_id: m.value for m in irm.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize("k", [3, 10])
def test_agrees_with_trec_eval_on_mq2008(mq2008_scored, k):
    irm = pytest.importorskip("ir_measures")
    scores, labels, qid, ptr = mq2008_scored
    qids = [str(int(qid[a])) for a in ptr[:-1]]
    cases = [
        # trec_eval scores a query without relevant documents 0: our ideal_zero="zero".
        (irm.nDCG(gains={0: 0, 1: 1, 2: 3}) @ k, "ndcg", {"ideal_zero": "zero"}),  # exponential gains
        (irm.nDCG @ k, "ndcg", {"gain": "linear", "ideal_zero": "zero"}),           # its default, linear
        (irm.nDCG @ k, "ndcg", {"convention": "trec"}),                              # the same, by name
        (irm.AP @ k, "map", {}),
        (irm.RR @ k, "mrr", {}),
    ]
    for measure, metric, opts in cases:
        ref = _ir_measures(measure, scores, labels, qid)
        ours = metric_values(scores, labels, ptr, metric, k, **opts)
        for q, v in zip(qids, ours):
            if q in ref:
                assert v == pytest.approx(ref[q], abs=1e-9), (measure, q)
        assert len(ref) >= 0.5 * len(qids)


def test_err_agrees_with_gdeval_on_mq2008(mq2008_scored):
    irm = pytest.importorskip("ir_measures")
    import shutil

    if shutil.which("perl") is None:
        pytest.skip("gdeval (ERR) needs perl")
    scores, labels, qid, ptr = mq2008_scored
    ref = _ir_measures(irm.ERR @ 20, scores, labels, qid)
    ours = metric_values(scores, labels, ptr, "err", 20, max_label=4)  # gdeval fixes max grade 4
    qids = [str(int(qid[a])) for a in ptr[:-1]]
    compared = 0
    for q, v in zip(qids, ours):
        if q in ref:
            assert v == pytest.approx(ref[q], abs=5e-6), q  # gdeval prints 5 decimals
            compared += 1
    assert compared >= 0.5 * len(qids)


def test_labels_whose_exponential_gain_overflows_raise():
    s, y, ptr = np.array([0.3, 0.1, 0.2]), np.array([1500.0, 0.0, 1.0]), np.array([0, 3])
    for m in ("ndcg@10", "dcg", "err"):  # NaN metrics with only a numpy warning on 0.1
        with pytest.raises(ValueError, match="overflow"):
            metric_values(s, y, ptr, m)
    # linear gain has no overflow; this ranking is ideal
    assert metric_values(s, y, ptr, "ndcg", gain="linear")[0] == pytest.approx(1.0, abs=1e-15)


def test_named_conventions_resolve_and_conflicts_raise():
    rng = np.random.default_rng(3)
    ptr = np.array([0, 5, 9, 14])
    y = np.r_[rng.integers(0, 3, 9), np.zeros(5)].astype(float)  # the last query has no relevant document
    s = rng.normal(size=14)
    trec = metric_values(s, y, ptr, "ndcg@3", convention="trec")
    np.testing.assert_array_equal(trec, metric_values(s, y, ptr, "ndcg@3", gain="linear", ideal_zero="zero"))
    assert trec[-1] == 0.0
    lgbc = metric_values(s, y, ptr, "ndcg@3", convention="lightgbm")
    np.testing.assert_array_equal(lgbc, metric_values(s, y, ptr, "ndcg@3"))
    assert lgbc[-1] == 1.0
    with pytest.raises(ValueError, match="convention='trec' means gain='linear'"):
        metric_values(s, y, ptr, "ndcg", convention="trec", gain="exp")
    with pytest.raises(ValueError, match="convention must be one of"):
        metric_values(s, y, ptr, "ndcg", convention="ranx")
    from lambda_objectives import convention_label

    assert "scores 0" in convention_label("trec") and "2^rel" in convention_label()
    assert "dropped" in convention_label(ideal_zero="drop")
