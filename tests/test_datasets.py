"""Tests of lambda_objectives.data.datasets: determinism, web-like shape, learnability, splits."""

import numpy as np
import pytest

from lambda_objectives import mean_metric
from lambda_objectives.data.datasets import (
    make_mslr_like,
    make_ranking,
    train_test_split_queries,
)


def test_deterministic_and_shaped_like_web_data():
    a, b = make_ranking(300, seed=3), make_ranking(300, seed=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.y, make_ranking(300, seed=4).y)
    shares = np.bincount(a.y.astype(int), minlength=5) / a.y.shape[0]
    np.testing.assert_allclose(shares, [0.5, 0.3, 0.15, 0.04, 0.01], atol=0.01)
    sizes = a.group
    assert sizes.min() >= 5 and sizes.max() <= 120 and sizes.std() > 5  # variable list lengths
    assert a.group_ptr[-1] == a.X.shape[0] == a.qid.shape[0]
    assert a.X.dtype == np.float32 and a.y.dtype == np.float64


def test_learnable_and_split_by_query():
    d = make_ranking(400, n_features=12, seed=1)
    train, test = train_test_split_queries(d, 0.25, seed=0)
    assert train.n_queries + test.n_queries == 400
    assert not set(train.qid) & set(test.qid)
    w = np.linalg.lstsq(train.X.astype(float), train.y, rcond=None)[0]
    learned = mean_metric(test.X @ w, test.y, test.group_ptr, "ndcg@10")
    random = mean_metric(np.random.default_rng(0).normal(size=test.y.shape[0]), test.y, test.group_ptr, "ndcg@10")
    assert learned > random + 0.2


def test_fixed_lengths_mslr_preset_and_bad_arguments():
    d = make_ranking(10, docs_per_query=7, n_features=3)
    assert np.all(d.group == 7)
    m = make_mslr_like(20)
    assert m.X.shape[1] == 136 and 60 < np.median(m.group) < 150
    with pytest.raises(ValueError, match="label_shares"):
        make_ranking(5, label_shares=(0.5, 0.5))
    with pytest.raises(ValueError, match="docs_per_query"):
        make_ranking(5, docs_per_query=(10, 2))
    with pytest.raises(ValueError, match="test_size"):
        train_test_split_queries(d, 1.5)


def test_make_ranking_small_and_bad_arguments():
    import numpy as np
    import pytest

    from lambda_objectives import make_ranking

    d = make_ranking(30, n_features=1, seed=2)  # raised "n_informative must be in 1..n_features" on 0.1
    assert d.X.shape[1] == 1 and len(np.unique(d.y)) > 1
    for kw, name in (({"noise": float("nan")}, "noise"), ({"noise": -1.0}, "noise"),   # NaN gave all-top labels
                     ({"dtype": np.int32}, "dtype"), ({"dtype": np.float16}, "dtype"),  # int truncated features
                     ({"n_features": 2.5}, "n_features"), ({"n_queries": 0}, "n_queries"),
                     ({"max_label": True}, "max_label")):
        with pytest.raises(ValueError, match=name):
            make_ranking(**{"n_queries": 10, **kw})
