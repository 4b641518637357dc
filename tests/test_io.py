"""Tests of lambda_objectives.data.io: LETOR parsing against sklearn, round trips, folds, every bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import shared_file

from lambda_objectives import load_letor, load_letor_folds, save_letor


def _write(path, text):
    path.write_text(text)
    return path


def _write_bytes(path, data):
    path.write_bytes(data)
    return path


def test_round_trip_dense_sparse_gz(tmp_path):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(30, 7)), 6)
    X[rng.random(X.shape) < 0.4] = 0.0
    y = rng.integers(0, 5, 30).astype(float)
    ptr = np.array([0, 4, 11, 30])
    comments = [f"docid = d{i}" for i in range(30)]
    for name in ("a.txt", "a.txt.gz"):
        save_letor(tmp_path / name, sp.csr_matrix(X), y, group_ptr=ptr, comments=comments)
        d = load_letor(tmp_path / name, dtype=np.float64, n_features=7, keep_comments=True)
        np.testing.assert_array_equal(d.X, X)
        np.testing.assert_array_equal(d.y, y)
        np.testing.assert_array_equal(d.group_ptr, ptr)
        assert d.comments == comments
        s = load_letor(tmp_path / name, sparse=True, n_features=7)
        assert sp.issparse(s.X) and s.X.dtype == np.float32
        np.testing.assert_array_equal(s.X.toarray(), X.astype(np.float32))
    df = d.to_frame()
    assert list(df.columns[:3]) == ["qid", "label", "f1"] and len(df) == 30


def test_number_forms_parse_like_float(tmp_path):
    vals = ["1", "-2.5", "+0.125", "1e-3", "3.0E+2", ".5", "5.", "0.1234567890123456789", "1e-30"]
    text = "2 qid:1 " + " ".join(f"{i + 1}:{v}" for i, v in enumerate(vals)) + "\n"
    d = load_letor(_write(tmp_path / "n.txt", text), dtype=np.float64)
    np.testing.assert_array_equal(d.X[0], np.array([float(v) for v in vals]))


def test_blank_and_comment_lines_and_crlf(tmp_path):
    text = "# header\n\n1 qid:3 1:0.5 # a\r\n0 qid:3 2:1 #b\n  \n2 qid:9 1:1\n"
    d = load_letor(_write(tmp_path / "c.txt", text), keep_comments=True)
    assert d.X.shape == (3, 2)
    np.testing.assert_array_equal(d.qid, [3, 3, 9])
    assert d.comments == ["a", "b", ""]


@pytest.mark.parametrize(
    "text, line, token, match",
    [
        ("1 qid:1 1:0.5\nx qid:1 1:0.2\n", 2, "x", "label is not a number"),
        ("1 qid:1 1:0.5 2:NULL\n", 1, "2:NULL", "null_as_nan"),
        ("1 qid:1 0:0.5\n", 1, "0:0.5", "positive integer"),
        ("1 qid:1 -3:0.5\n", 1, "-3:0.5", "positive integer"),
        ("1 qid:1 2:0.5 1:0.3\n", 1, "1:0.3", "increasing"),
        ("1 qid:1 2:0.5 2:0.3\n", 1, "2:0.3", "increasing"),
        ("1 qid:1 1:abc\n", 1, "1:abc", "not a number"),
        ("1 qid:1 1\n", 1, "1", "malformed token"),
        ("1 qid:a 1:1\n", 1, "qid:a", "qid must be an integer"),
        ("1 qid:1 1:1\n0 2:1\n", 2, "0 2:1", "some lines have qid"),
    ],
)
def test_malformed_lines_name_file_line_and_token(tmp_path, text, line, token, match):
    path = _write(tmp_path / "bad.txt", text)
    with pytest.raises(ValueError, match=match) as err:
        load_letor(path)
    msg = str(err.value)
    assert str(path) in msg and f"line {line}" in msg and repr(token) in msg


def test_non_contiguous_qid_and_width_errors(tmp_path):
    path = _write(tmp_path / "q.txt", "1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:2\n")
    with pytest.raises(ValueError, match=r"line 3: qid:1 reappears"):
        load_letor(path)
    path = _write(tmp_path / "w.txt", "1 qid:1 1:1 5:2\n")
    with pytest.raises(ValueError, match=r"line 1: feature index 5 exceeds n_features=3"):
        load_letor(path, n_features=3)


def test_group_file_layout(tmp_path):
    _write(tmp_path / "r.train", "1 1:1\n0 2:1\n2 1:3\n")
    _write(tmp_path / "r.train.query", "2\n1\n")
    d = load_letor(tmp_path / "r.train")
    np.testing.assert_array_equal(d.group_ptr, [0, 2, 3])
    _write(tmp_path / "r.train.query", "2\n2\n")
    with pytest.raises(ValueError, match=r"r.train.query: group sizes sum to 4 but there are 3 rows"):
        load_letor(tmp_path / "r.train")
    _write(tmp_path / "s.txt", "1 1:1\n")
    with pytest.raises(ValueError, match=r"no qid: and no .query/.group file"):
        load_letor(tmp_path / "s.txt")
    _write(tmp_path / "g.txt", "1 1:1\n0 1:2\n")
    _write(tmp_path / "sizes", "0\n2\n")
    with pytest.raises(ValueError, match="empty group"):
        load_letor(tmp_path / "g.txt", group_file=tmp_path / "sizes")


def test_missing_file_and_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_letor(tmp_path / "nope.txt")
    with pytest.raises(ValueError, match="does not exist"):
        load_letor_folds(tmp_path / "nope")
    (tmp_path / "D" / "Fold1").mkdir(parents=True)
    _write(tmp_path / "D" / "Fold1" / "train.txt", "1 qid:1 1:1\n")
    with pytest.raises(ValueError, match="missing vali.txt"):
        load_letor_folds(tmp_path / "D")
    with pytest.raises(ValueError, match="Fold2 not found"):
        load_letor_folds(tmp_path / "D", folds=[2])


def test_fold_layouts_share_width(tmp_path):
    for fold, width in (("Fold1", 3), ("Fold2", 5)):
        d = tmp_path / "L" / fold
        d.mkdir(parents=True)
        _write(d / "trainingset.txt", f"1 qid:1 {width}:1\n0 qid:1 1:1\n")
        _write(d / "validationset.txt", "1 qid:2 1:1\n")
        _write(d / "testset.txt", "1 qid:3 2:1\n")
    folds = load_letor_folds(tmp_path / "L")
    assert [f.name for f in folds] == ["Fold1", "Fold2"]
    assert {ds.X.shape[1] for f in folds for ds in (f.train, f.vali, f.test)} == {5}


# --- the real data beside the repository ---


def _sk(path, **kw):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(path), **kw)


def test_mq2008_matches_sklearn_and_published_counts(shared_data):
    path = shared_file(shared_data, "MQ2008", "Fold1", "train.txt")
    d = load_letor(path, dtype=np.float64)
    X, y, q = _sk(path, query_id=True)
    assert d.X.shape == (9630, 46)
    np.testing.assert_array_equal(d.X, X.toarray())
    np.testing.assert_array_equal(d.y, y)
    np.testing.assert_array_equal(d.qid, q)
    folds = load_letor_folds(shared_data / "MQ2008")
    assert len(folds) == 5
    assert sum(f.test.n_queries for f in folds) == 784
    assert sum(f.test.X.shape[0] for f in folds) == 15211
    f1 = folds[0]
    assert f1.train.X.shape[0] + f1.vali.X.shape[0] + f1.test.X.shape[0] == 15211


def test_ohsumed_and_yahoo(shared_data):
    folds = load_letor_folds(shared_file(shared_data, "OHSUMED", "QueryLevelNorm"), folds=[1])
    f = folds[0]
    assert f.train.n_queries + f.vali.n_queries + f.test.n_queries == 106
    assert f.train.X.shape[0] + f.vali.X.shape[0] + f.test.X.shape[0] == 16140
    path = shared_file(shared_data, "yahoo-sample", "rank.train")
    d = load_letor(path, dtype=np.float64)
    assert d.X.shape[0] == 3005 and d.n_queries == 201
    X, y = _sk(path)
    np.testing.assert_array_equal(d.X[:, : X.shape[1]], X.toarray())
    np.testing.assert_array_equal(d.y, y)


def test_real_null_file(shared_data):
    path = shared_file(shared_data, "OHSUMED", "Feature-null", "Fold1", "testset.txt")
    with pytest.raises(ValueError, match=r"testset.txt, line \d+: feature value NULL .*'\d+:NULL'"):
        load_letor(path)
    d = load_letor(path, null_as_nan=True)
    assert d.X.shape == (3383, 45) and d.n_queries == 22
    assert np.isnan(d.X).any() and not np.isnan(d.y).any()


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
def test_non_finite_values_need_null_as_nan_and_inf_is_never_read(tmp_path, value):
    # 0.1 read these silently as NaN / inf features
    f = _write(tmp_path / "v.txt", f"1 qid:1 1:0.5 2:{value}\n")
    with pytest.raises(ValueError, match=r"v.txt, line 1: feature value is not finite"):
        load_letor(f)
    if value.lower() == "nan":
        assert np.isnan(load_letor(f, null_as_nan=True).X[0, 1])
    else:
        with pytest.raises(ValueError, match="not finite"):
            load_letor(f, null_as_nan=True)


def test_qids_beyond_int64_are_an_error_not_a_wrap(tmp_path):
    # 2**64 + 5 wrapped to 5 on 0.1 and merged with qid 5
    f = _write(tmp_path / "q.txt", "1 qid:5 1:0.5\n0 qid:18446744073709551621 1:0.2\n")
    with pytest.raises(ValueError, match=r"q.txt, line 2: qid does not fit"):
        load_letor(f)
    big = _write(tmp_path / "b.txt", "1 qid:9223372036854775807 1:0.5\n0 qid:-9223372036854775807 1:0.2\n")
    np.testing.assert_array_equal(load_letor(big).qid, [2 ** 63 - 1, -(2 ** 63 - 1)])


def test_a_last_line_without_newline_warns(tmp_path):
    f = _write(tmp_path / "t.txt", "1 qid:1 1:0.5\n0 qid:1 1:0.12")
    with pytest.warns(RuntimeWarning, match=r"t.txt, line 2: the last line has no newline"):
        d = load_letor(f)
    assert d.X.shape == (2, 1)


def test_a_huge_corrupt_feature_index_names_its_line(tmp_path):
    f = _write(tmp_path / "h.txt", "1 qid:1 1:0.5\n0 qid:1 1:0.1 1999999999:0.3\n2 qid:1 1:0.7\n")
    with pytest.raises(ValueError, match=r"h.txt, line 2: feature index 1999999999 would make a dense X"):
        load_letor(f)
    assert load_letor(f, sparse=True).X.shape == (3, 1999999999)


def test_missing_and_damaged_files_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt: no such file"):
        load_letor(tmp_path / "nope.txt")
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="bad.txt.gz: cannot be read as gzip"):
        load_letor(bad)
    import gzip

    good = gzip.compress(b"1 qid:1 1:0.5\n0 qid:1 1:0.2\n")
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(good[: len(good) - 6])  # truncated download
    with pytest.raises(ValueError, match="cut.txt.gz: cannot be read as gzip"):
        load_letor(cut)


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_cr_only_and_crlf_line_ends_read_as_lines(tmp_path, ending):
    # a CR-only file loaded as one row (its first '#' comment swallowed the rest)
    text = b"2 qid:1 1:0.5 2:1 # doc a\n0 qid:1 1:0.25 # doc b\n1 qid:7 2:3\n"
    lf = load_letor(_write_bytes(tmp_path / "lf.txt", text), keep_comments=True)
    other = load_letor(_write_bytes(tmp_path / "cr.txt", text.replace(b"\n", ending)), keep_comments=True)
    np.testing.assert_array_equal(other.X, lf.X)
    np.testing.assert_array_equal(other.y, lf.y)
    np.testing.assert_array_equal(other.group_ptr, lf.group_ptr)
    assert other.comments == lf.comments == ["doc a", "doc b", ""]
    with pytest.raises(ValueError, match="line 3"):
        load_letor(_write_bytes(tmp_path / "bad.txt", b"1 qid:1 1:1\r0 qid:1 1:2\rx qid:1 1:3\r"))


def test_cr_only_real_file_keeps_every_row(tmp_path, shared_data):
    src = shared_file(shared_data, "MQ2008", "Fold1", "vali.txt")
    raw = src.read_bytes()
    d = load_letor(_write_bytes(tmp_path / "vali_cr.txt", raw.replace(b"\n", b"\r")))
    assert d.X.shape[0] == load_letor(src).X.shape[0] == 2707


def test_values_beyond_float32_raise_unless_float64(tmp_path):
    path = _write(tmp_path / "big.txt", "1 qid:1 1:0.5 2:1e39\n")
    with pytest.raises(ValueError, match=r"line 1: feature value 1e\+39 \(index 2\) overflows float32"):
        load_letor(path)
    assert load_letor(path, dtype=np.float64).X[0, 1] == 1e39


def test_save_letor_refuses_a_line_break_in_a_comment(tmp_path):
    X, y = np.ones((2, 2)), np.array([1.0, 0.0])
    path = tmp_path / "c.txt"
    with pytest.raises(ValueError, match=r"comments\[1\] holds a line break"):
        save_letor(path, X, y, qid=np.array([1, 1]), comments=["fine", "two\n0 qid:1 1:1"])
    assert not path.exists()  # checked before anything is written
    with pytest.raises(ValueError, match="comments has 1 entries"):
        save_letor(path, X, y, qid=np.array([1, 1]), comments=["one"])


# --- save_letor: what a LETOR file can hold (issue #31 item 6) ---


@pytest.mark.parametrize("qid, row, shown", [
    ([1.2, 1.7, 2.0], 0, "1.2"),  # 0.1 wrote qid:1 twice: two queries merged on reload
    ([1.0, 1.0, 2.5], 2, "2.5"),
    (["a", "a", "b"], 0, "'a'"),  # ended in "invalid literal for int()" naming nothing
    (["1", "1", "q2"], 2, "'q2'"),
    (np.array([1, 1, 2.5], dtype=object), 2, "2.5"),
])
def test_save_letor_refuses_qids_without_an_integer_form_naming_the_row(tmp_path, qid, row, shown):
    path = tmp_path / "q.txt"
    with pytest.raises(ValueError, match=rf"qid\[{row}\] = {shown} is not an integer"):
        save_letor(path, np.ones((3, 2)), np.array([1.0, 0.0, 2.0]), qid=qid)
    assert not path.exists()  # checked before the file is opened


@pytest.mark.parametrize("qid", [["7", "007", "8"], ["7", "8", "007"], ["7", "+7", "8"], [" 7", "7", "8"]])
def test_save_letor_refuses_distinct_qids_written_as_one_integer(tmp_path, qid):
    with pytest.raises(ValueError, match=r"are different queries that would both be written qid:7"):
        save_letor(tmp_path / "q.txt", np.ones((3, 2)), np.array([1.0, 0.0, 2.0]), qid=qid)


def test_save_letor_qids_out_of_int64_and_queries_given_twice(tmp_path):
    X, y = np.ones((3, 2)), np.array([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match=r"qid\[0\] = 9223372036854775809 does not fit a 64-bit"):
        save_letor(tmp_path / "q.txt", X, y, qid=np.array([2 ** 63 + 1, 2 ** 63 + 1, 1], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"qid\[2\] = 1e\+19 does not fit"):
        save_letor(tmp_path / "q.txt", X, y, qid=[1.0, 1.0, 1e19])
    with pytest.raises(ValueError, match="give only one of group_ptr, qid"):  # qid won silently
        save_letor(tmp_path / "q.txt", X, y, qid=[1, 1, 2], group_ptr=[0, 3])
    with pytest.raises(ValueError, match=r"qid contains NaN or inf \(first at row 1"):
        save_letor(tmp_path / "q.txt", X, y, qid=[1.0, np.nan, 2.0])


@pytest.mark.parametrize("qid, want", [
    ([3.0, 3.0, 2.0, 2.0], [3, 3, 2, 2]),  # a pandas column with missing values holds whole floats
    (["17", "17", "-4", "-4"], [17, 17, -4, -4]),
    (np.array([2 ** 63 - 1, 2 ** 63 - 1, -(2 ** 63 - 1), -(2 ** 63 - 1)], dtype=np.int64),
     [2 ** 63 - 1, 2 ** 63 - 1, -(2 ** 63 - 1), -(2 ** 63 - 1)]),
    (np.array([5, 5, 9, 9], dtype=np.uint8), [5, 5, 9, 9]),
])
def test_save_letor_round_trips_integer_qids_in_every_accepted_form(tmp_path, qid, want):
    X = np.arange(8.0).reshape(4, 2)
    y = np.array([2.0, 0.0, 1.5, -1.0])
    save_letor(tmp_path / "q.txt", X, y, qid=qid)
    d = load_letor(tmp_path / "q.txt", dtype=np.float64)
    np.testing.assert_array_equal(d.qid, want)
    np.testing.assert_array_equal(d.group_ptr, [0, 2, 4])
    np.testing.assert_array_equal(d.y, y)
    np.testing.assert_array_equal(d.X, X)
    near = np.array(qid, dtype=object)
    near[-1] = "-4.5" if isinstance(qid[0], str) else 0.5  # no integer form: 0.1 wrote qid:-4 / qid:0
    with pytest.raises(ValueError, match=r"qid\[3\] = '?-?[04].5'? is not an integer"):
        save_letor(tmp_path / "q.txt", X, y, qid=near)


@pytest.mark.parametrize("label, error", [(np.nan, ValueError), (np.inf, ValueError), (-np.inf, ValueError)])
def test_save_letor_refuses_non_finite_labels_naming_the_row(tmp_path, label, error):
    # 0.1: "cannot convert float NaN to integer" / OverflowError, no argument or row named
    with pytest.raises(error, match=r"y\[1\] = -?(nan|inf) is not finite"):
        save_letor(tmp_path / "y.txt", np.ones((3, 2)), [1.0, label, 2.0], qid=[1, 1, 2])
    with pytest.raises(ValueError, match=r"y\[2\] = 'x' is not a number"):
        save_letor(tmp_path / "y.txt", np.ones((3, 2)), ["1", "0", "x"], qid=[1, 1, 2])
    with pytest.raises(ValueError, match=r"y must be 1-D"):
        save_letor(tmp_path / "y.txt", np.ones((3, 2)), np.ones((3, 1)), qid=[1, 1, 2])


def test_save_letor_round_trips_large_and_fractional_labels_and_refuses_infinite_features(tmp_path):
    y = np.array([1e300, 2.0 ** 60 + 2 ** 8, 0.1, -3.0])
    save_letor(tmp_path / "y.txt", np.ones((4, 1)), y, group_ptr=[0, 4])
    np.testing.assert_array_equal(load_letor(tmp_path / "y.txt").y, y)
    X = np.ones((3, 2))
    X[2, 1] = -np.inf  # written as "-inf", which load_letor refuses
    for Xi in (X, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match=r"X\[2, 1\] = -inf is infinite"):
            save_letor(tmp_path / "x.txt", Xi, [1, 0, 2], qid=[1, 1, 2])
    X[2, 1] = np.nan  # missing: NULL, read back with null_as_nan
    save_letor(tmp_path / "x.txt", X, [1, 0, 2], qid=[1, 1, 2])
    assert np.isnan(load_letor(tmp_path / "x.txt", null_as_nan=True).X[2, 1])


@pytest.mark.parametrize("text, match", [
    ("1 qid:1 1:1 qid:2\n", r"line 1: qid: must come once, right after the label: 'qid:2'"),
    ("1 1:1 qid:1\n", r"line 1: qid: must come once, right after the label: 'qid:1'"),
    ("1 qid:1 1:1\n0 qid:1 3000000000:1\n", r"line 2: feature index beyond the largest supported \(2,000,000,000\)"),
])
def test_loader_names_what_is_wrong_with_a_line(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_letor(_write(tmp_path / "b.txt", text))


def test_loader_refuses_queries_given_twice_and_a_fractional_width(tmp_path):
    path = _write(tmp_path / "q.txt", "1 qid:1 1:1\n0 qid:2 1:1\n")
    _write(tmp_path / "sizes", "2\n")
    # the group file was ignored silently: which queries held was unsaid
    with pytest.raises(ValueError, match=r"q.txt, line 1: the lines have qid: and group_file=.*give the queries once"):
        load_letor(path, group_file=tmp_path / "sizes")
    with pytest.raises(ValueError, match=r"n_features must be a non-negative integer or None, got 2.5"):
        load_letor(path, n_features=2.5)  # cut to 2 columns without a word
    assert load_letor(path, n_features=np.int64(3)).X.shape == (2, 3)
