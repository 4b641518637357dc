"""Tests of lambda_objectives.data.groups: sizes / group_ptr / qid conversions and their errors."""

import numpy as np
import pandas as pd
import pytest

from lambda_objectives.data import frame_group_ptr, ptr_to_sizes, resolve_group_ptr
from lambda_objectives import ptr_to_qid, qid_to_ptr, sizes_to_ptr


def test_round_trips():
    sizes = np.array([3, 1, 4])
    ptr = sizes_to_ptr(sizes)
    np.testing.assert_array_equal(ptr, [0, 3, 4, 8])
    np.testing.assert_array_equal(ptr_to_sizes(ptr), sizes)
    qid = ptr_to_qid(ptr, qid_values=[10, 7, 12])
    np.testing.assert_array_equal(qid, [10, 10, 10, 7, 12, 12, 12, 12])
    np.testing.assert_array_equal(qid_to_ptr(qid), ptr)
    np.testing.assert_array_equal(qid_to_ptr(np.array(["b", "b", "a"])), [0, 2, 3])
    df = pd.DataFrame({"qid": qid, "x": 0})
    np.testing.assert_array_equal(frame_group_ptr(df), ptr)
    assert ptr.dtype == np.int64


def test_resolve_exactly_one():
    np.testing.assert_array_equal(resolve_group_ptr(4), [0, 4])
    np.testing.assert_array_equal(resolve_group_ptr(4, group=[1, 3]), [0, 1, 4])
    np.testing.assert_array_equal(resolve_group_ptr(4, qid=[5, 6, 6, 6]), [0, 1, 4])
    with pytest.raises(ValueError, match="only one"):
        resolve_group_ptr(4, group=[4], qid=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="sum to 3 but there are 4 rows"):
        resolve_group_ptr(4, group=[1, 2])
    with pytest.raises(ValueError, match="qid has 3 rows"):
        resolve_group_ptr(4, qid=[1, 1, 1])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: qid_to_ptr([1, 1, 2, 1]), "qid 1 reappears at row 3"),
        (lambda: sizes_to_ptr([2, 0, 1]), "query 1 has size 0"),
        (lambda: sizes_to_ptr([2, -1]), "positive"),
        (lambda: sizes_to_ptr([1.5]), "whole numbers"),
        (lambda: qid_to_ptr([1.0, np.nan]), "NaN or inf .first at row 1"),
        # NaN != NaN: an object column's missing ids each became a query of their own
        (lambda: qid_to_ptr(np.array(["a", "a", np.nan, np.nan], dtype=object)), "missing or non-finite id at row 2"),
        (lambda: qid_to_ptr(np.array([1, None, 1], dtype=object)), "row 1"),
        (lambda: qid_to_ptr(np.array(["2020-01-01", "NaT", "NaT"], dtype="datetime64[D]")), r"NaT\) at row 1"),
        (lambda: qid_to_ptr(np.array([1, "a", 1], dtype=object)), "one comparable type"),
        (lambda: frame_group_ptr(pd.DataFrame({"q": [1]})), "no 'qid' column"),
        (lambda: ptr_to_qid([0, 2], qid_values=[1, 2]), "2 qid values for 1 queries"),
    ],
)
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_dataframe_qid_accepted_where_group_ptr_is():
    from lambda_objectives import lambda_gradients, metric_values

    df = pd.DataFrame({"qid": [7, 7, 7, 3, 3], "score": [0.1, 0.3, 0.2, 0.5, 0.4],
                       "label": [0.0, 2.0, 1.0, 1.0, 0.0]})
    ptr = [0, 3, 5]
    np.testing.assert_array_equal(metric_values(df.score, df.label, df, "ndcg"),
                                  metric_values(df.score, df.label, ptr, "ndcg"))
    np.testing.assert_array_equal(lambda_gradients(df.score, df.label, df["qid"])[0],
                                  lambda_gradients(df.score, df.label, ptr)[0])
    with pytest.raises(ValueError, match="needs a 'qid' column"):
        metric_values(df.score, df.label, df[["score"]], "ndcg")
    with pytest.raises(ValueError, match="reappears"):
        metric_values([0.0] * 3, [0.0] * 3, pd.DataFrame({"qid": [1, 2, 1]}), "ndcg")



def test_split_qid_column():
    import pandas as pd

    from lambda_objectives.data import split_qid_column

    df = pd.DataFrame({"qid": [1, 1, 2], "a": [0.1, 0.2, 0.3]})
    X, qid = split_qid_column(df)
    assert list(X.columns) == ["a"] and list(qid) == [1, 1, 2] and "qid" in df.columns  # input untouched
    arr = np.zeros((3, 2))
    assert split_qid_column(arr, qid=[5, 5, 6])[0] is arr
    with pytest.raises(ValueError, match="give the queries once"):
        split_qid_column(df, qid=[1, 1, 2])
