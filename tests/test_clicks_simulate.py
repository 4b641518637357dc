"""Tests of lambda_objectives.clicks.simulate: display order, exact click probabilities against the models'
generative definitions (enumeration, then Monte-Carlo with seeded bounds), determinism and independence."""

import itertools

import numpy as np
import pytest

import lambda_objectives as lo
from lambda_objectives.clicks import CLICK_PRESETS, simulate_clicks


# ----------------------------------------------------------------------------------------------
# oracles: each model's definition, written out step by step (no code shared with the simulator)
# ----------------------------------------------------------------------------------------------
def attractiveness(y, eps, ymax):
    return eps + (1 - eps) * (2.0 ** y - 1) / (2.0 ** ymax - 1) if ymax > 0 else eps


def pbm_pattern_probs(theta, c):
    """P(click vector) of the position-based model: independent examination × attraction per position."""
    out = {}
    p = np.asarray(theta) * np.asarray(c)
    for pattern in itertools.product((0, 1), repeat=len(c)):
        out[pattern] = float(np.prod([p[r] if b else 1 - p[r] for r, b in enumerate(pattern)]))
    return out


def sequential_pattern_probs(a, s, g):
    """P(click vector) of a cascade/DBN user by enumerating every path of (attracted, satisfied, persevered)
    decisions: examine position 0; an examined position is clicked iff attracted; after a click the user is
    satisfied (stops) with probability s[r]; otherwise continues with probability g."""
    m = len(a)
    out = {}
    exam = np.zeros(m)

    def walk(r, prob, clicks):
        if r == m or prob == 0:
            key = tuple(clicks + [0] * (m - len(clicks)))
            out[key] = out.get(key, 0.0) + prob
            return
        exam[r] += prob
        for attracted in (1, 0):
            pa = a[r] if attracted else 1 - a[r]
            for satisfied in ((1, 0) if attracted else (0,)):
                ps = (s[r] if satisfied else 1 - s[r]) if attracted else 1.0
                if satisfied:
                    walk(m, prob * pa * ps, clicks + [attracted])
                    continue
                walk(r + 1, prob * pa * ps * g, clicks + [attracted])
                walk(m, prob * pa * ps * (1 - g), clicks + [attracted])

    walk(0, 1.0, [])
    return out, exam


def empirical_patterns(clicks, ptr, m):
    rows = clicks.reshape(-1, m) if ptr is None else clicks
    keys, counts = np.unique(rows, axis=0, return_counts=True)
    return {tuple(int(v) for v in k): c for k, c in zip(keys, counts)}


def check_patterns(exact, log, n_copies, m):
    """Every click pattern's frequency within 5 binomial sd (+ 1/N) of its exact probability; the patterns
    the simulator produced must all have positive probability."""
    clicks = log.clicks[log.shown].reshape(n_copies, m)
    seen = empirical_patterns(clicks, None, m)
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-12)
    for pattern, count in seen.items():
        assert exact.get(pattern, 0.0) > 0, f"impossible click pattern {pattern}"
    for pattern, p in exact.items():
        freq = seen.get(pattern, 0) / n_copies
        assert abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n_copies) + 1.0 / n_copies, (pattern, freq, p)


# one query of 5 rows, scores not in label order, one tie
LABELS = np.array([0, 2, 4, 1, 3])
SCORES = np.array([0.3, 0.9, 0.1, 0.9, 0.5])  # ranking: rows 1, 3 (tie kept in input order), 4, 0, 2
RANKING = [1, 3, 4, 0, 2]


def copies(n):
    return (np.tile(LABELS, n), np.tile(SCORES, n), np.arange(n + 1) * LABELS.size)


def test_display_order_positions_and_shown_rows():
    labels = np.array([0, 1, 2, 0, 1, 1, 0])
    scores = np.array([0.5, 0.5, 0.7, 0.0, 2.0, -1.0, -0.0])
    ptr = np.array([0, 4, 4, 7])  # an empty query in the middle shows nothing
    log = simulate_clicks(labels, scores, ptr, top_k=2, seed=3)
    assert log.positions.tolist() == [1, -1, 0, -1, 0, -1, 1]  # ties (0.5, 0.5; 0.0, -0.0) in input order
    assert log.order.tolist() == [2, 0, 1, 3, 4, 6, 5]
    assert log.shown.tolist() == [2, 0, 4, 6] and log.shown_ptr.tolist() == [0, 2, 2, 4]
    assert np.all(log.clicks[log.positions < 0] == 0) and np.all(log.examined[log.positions < 0] == 0)
    assert set(np.unique(log.clicks)) <= {0, 1} and log.clicks.dtype == np.int64
    everything = simulate_clicks(labels, scores, ptr, top_k=None, seed=3)
    assert everything.positions.tolist() == [1, 2, 0, 3, 0, 2, 1]
    assert everything.shown.tolist() == everything.order.tolist()


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_pbm_click_patterns_match_the_model(eta):
    n = 20000
    log = simulate_clicks(*copies(n), model="pbm", top_k=4, eta=eta, epsilon=0.1, seed=11)
    theta = [(1.0 / (r + 1)) ** eta for r in range(4)]
    c = [attractiveness(LABELS[i], 0.1, 4) for i in RANKING[:4]]
    check_patterns(pbm_pattern_probs(theta, c), log, n, 4)
    np.testing.assert_allclose(log.propensities, theta, rtol=0, atol=1e-15)
    np.testing.assert_allclose(log.examination_prob[log.shown[:4]], theta, rtol=0, atol=1e-15)
    # examination itself is drawn with θ_r, independently of the grade
    ex = log.examined[log.shown].reshape(n, 4).mean(axis=0)
    assert np.all(np.abs(ex - theta) <= 5 * np.sqrt(np.array(theta) * (1 - np.array(theta)) / n) + 1e-12)


def test_pbm_wrong_model_is_caught():
    """The bounds can fail: clicks of η = 1 are far outside the bounds of η = 2's model."""
    n = 20000
    log = simulate_clicks(*copies(n), top_k=4, eta=1.0, seed=11)
    c = [attractiveness(LABELS[i], 0.1, 4) for i in RANKING[:4]]
    with pytest.raises(AssertionError):
        check_patterns(pbm_pattern_probs([(1.0 / (r + 1)) ** 2 for r in range(4)], c), log, n, 4)


@pytest.mark.parametrize("stop_prob,stop_after_click", [(0.0, 1.0), (0.2, 0.0), (0.3, 0.5)])
def test_cascade_click_patterns_match_the_model(stop_prob, stop_after_click):
    n = 20000
    table = [0.4, 0.6, 0.7, 0.8, 0.9]
    log = simulate_clicks(*copies(n), model="cascade", top_k=None, click_prob=table, stop_prob=stop_prob,
                          stop_after_click=stop_after_click, seed=5)
    a = [table[LABELS[i]] for i in RANKING]
    exact, exam = sequential_pattern_probs(a, [stop_after_click] * 5, 1 - stop_prob)
    check_patterns(exact, log, n, 5)
    np.testing.assert_allclose(log.examination_prob[log.shown[:5]], exam, rtol=1e-12)


@pytest.mark.parametrize("gamma", [1.0, 0.7])
def test_dbn_click_patterns_match_the_model(gamma):
    n = 20000
    log = simulate_clicks(*copies(n), model="dbn", top_k=5, epsilon=0.2, gamma=gamma, seed=8)
    a = [attractiveness(LABELS[i], 0.2, 4) for i in RANKING]
    s = [(2.0 ** LABELS[i] - 1) / 2.0 ** 4 for i in RANKING]
    exact, exam = sequential_pattern_probs(a, s, gamma)
    check_patterns(exact, log, n, 5)
    np.testing.assert_allclose(log.examination_prob[log.shown[:5]], exam, rtol=1e-12)
    # DBN with tables
    sat = [0.0, 0.1, 0.5, 0.9, 1.0]
    att = [0.05, 0.3, 0.5, 0.7, 0.95]
    log = simulate_clicks(*copies(n), model="dbn", top_k=5, click_prob=att, satisfaction=sat, gamma=gamma, seed=9)
    exact, _ = sequential_pattern_probs([att[LABELS[i]] for i in RANKING], [sat[LABELS[i]] for i in RANKING], gamma)
    check_patterns(exact, log, n, 5)


def test_presets_are_the_published_parameters():
    n = 3000
    log = simulate_clicks(*copies(n), preset="xgboost-demo", seed=0)
    curve = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]
    np.testing.assert_array_equal(log.propensities, curve[:5])  # 5 rows a query: 5 positions shown
    np.testing.assert_array_equal(log.click_prob[:5], np.array([0.1, 0.16, 0.28, 0.52, 1.0])[LABELS])
    assert log.model == "pbm" and log.params["top_k"] == 10
    lgb = simulate_clicks(*copies(n), preset="lightgbm-test", seed=0)
    assert lgb.model == "cascade" and np.all(lgb.positions >= 0)  # every row shown, as in LightGBM's test
    exact, exam = sequential_pattern_probs([[0.4, 0.6, 0.7, 0.8, 0.9][LABELS[i]] for i in RANKING], [0.0] * 5, 0.8)
    np.testing.assert_allclose(lgb.examination_prob[lgb.shown[:5]], 0.8 ** np.arange(5), rtol=1e-12)
    ultra = simulate_clicks(*copies(2), preset="ultra-pbm", seed=0)
    assert ultra.params["epsilon"] == 0.1 and ultra.params["top_k"] == 10
    np.testing.assert_allclose(ultra.click_prob[:5], [attractiveness(y, 0.1, 4) for y in LABELS])
    # explicit options override a preset's
    assert simulate_clicks(*copies(2), preset="ultra-pbm", eta=2.0).propensities[1] == 0.25
    assert set(CLICK_PRESETS) == {"ultra-pbm", "xgboost-demo", "lightgbm-test"}


def test_deterministic_and_seed_dependent():
    args = copies(200)
    a = simulate_clicks(*args, seed=4)
    b = simulate_clicks(*args, seed=4)
    for f in ("positions", "clicks", "examined", "order", "shown"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert not np.array_equal(a.clicks, simulate_clicks(*args, seed=5).clicks)


def test_queries_do_not_share_a_stream():
    """Identical queries get different clicks (XGBoost's demo re-seeds every query alike), and a query's
    clicks do not change when another query changes or disappears, or (keyed by query_ids) moves."""
    labels, scores, ptr = copies(300)
    log = simulate_clicks(labels, scores, ptr, seed=2)
    per_query = log.clicks[log.shown].reshape(300, 5)
    assert len({tuple(r) for r in per_query}) > 4
    # change query 0's rows: queries 1.. keep their clicks
    lab2, sc2 = labels.copy(), scores.copy()
    lab2[:5], sc2[:5] = [4, 4, 4, 4, 4], [5, 4, 3, 2, 1]
    other = simulate_clicks(lab2, sc2, ptr, seed=2)
    np.testing.assert_array_equal(other.clicks[5:], log.clicks[5:])
    # reverse the query order with their ids as keys: each query keeps its clicks
    perm = np.arange(300)[::-1]
    rows = np.concatenate([np.arange(q * 5, q * 5 + 5) for q in perm])
    moved = simulate_clicks(labels[rows], scores[rows], ptr, query_ids=perm, seed=2)
    np.testing.assert_array_equal(moved.clicks, log.clicks[rows])
    np.testing.assert_array_equal(simulate_clicks(labels, scores, ptr, query_ids=np.arange(300), seed=2).clicks,
                                  log.clicks)


def test_top_positions_do_not_depend_on_top_k():
    labels, scores, ptr = copies(100)
    short = simulate_clicks(labels, scores, ptr, top_k=2, seed=1)
    long = simulate_clicks(labels, scores, ptr, top_k=5, seed=1)
    top2 = long.positions < 2
    np.testing.assert_array_equal(short.clicks[top2], long.clicks[top2])


def test_formula_edges_and_huge_grades():
    log = simulate_clicks([0, 0, 0], [1.0, 2.0, 3.0], [0, 3], epsilon=0.25)  # y_max = 0: every document ε
    np.testing.assert_array_equal(log.click_prob, [0.25, 0.25, 0.25])
    big = simulate_clicks([0, 1500, 3000], [1.0, 2.0, 3.0], [0, 3], model="dbn", epsilon=0.0)
    assert np.all(np.isfinite(big.click_prob)) and big.click_prob[2] == 1.0 and big.click_prob[0] == 0.0
    assert 0 <= big.click_prob[1] < 1e-300 or big.click_prob[1] == 0.0
    assert np.all(np.isfinite(big.examination_prob))
    log = simulate_clicks([0, 1], [1.0, 2.0], [0, 2], max_label=4, epsilon=0.0)
    assert log.click_prob[1] == pytest.approx(1 / 15)


def test_inputs_not_mutated_and_lists_accepted():
    labels, scores, ptr = copies(3)
    keep = (labels.copy(), scores.copy(), ptr.copy())
    simulate_clicks(labels, scores, ptr, seed=1)
    for a, b in zip((labels, scores, ptr), keep):
        np.testing.assert_array_equal(a, b)
    assert simulate_clicks(labels.tolist(), scores.tolist(), ptr.tolist(), seed=1).clicks.tolist() == \
        simulate_clicks(labels, scores, ptr, seed=1).clicks.tolist()
    assert lo.simulate_clicks is simulate_clicks


@pytest.mark.parametrize("kwargs,pattern", [
    (dict(model="ubm"), "unknown model 'ubm'"),
    (dict(preset="yandex"), "unknown preset 'yandex'"),
    (dict(preset="lightgbm-test", model="pbm"), "contradicts preset"),
    (dict(model="cascade", eta=2.0), "eta is not read by model 'cascade'"),
    (dict(model="pbm", stop_prob=0.2), "stop_prob is not read by model 'pbm'"),
    (dict(model="pbm", gamma=0.5), "gamma is not read"),
    (dict(click_prob=[0.1, 0.5, 0.9, 1, 1], epsilon=0.2), "epsilon is not read when click_prob"),
    (dict(click_prob=[0.1, 0.2]), r"grades 0..1 for click_prob.*row 2 is 2"),
    (dict(click_prob=[0.1, 1.2, 1, 1, 1]), r"click_prob must lie in \[0, 1\], entry 1"),
    (dict(examination=[1.0, 0.5, 0.0]), r"examination must lie in \(0, 1\], entry 2"),
    (dict(examination=[1.0], top_k=3), "examination has 1 positions, but 2 are shown"),
    (dict(epsilon=1.5), r"epsilon must be a probability in \[0, 1\]"),
    (dict(epsilon=float("nan")), "epsilon must be a probability"),
    (dict(eta=-1.0), "eta must be a finite number >= 0"),
    (dict(eta=float("inf")), "eta must be a finite number >= 0"),
    (dict(model="cascade", stop_prob=-0.1), "stop_prob must be a probability"),
    (dict(model="dbn", satisfaction=[0.1, 2.0, 1, 1, 1]), r"satisfaction must lie in \[0, 1\], entry 1"),
    (dict(top_k=0), "top_k must be a positive integer or None"),
    (dict(top_k=2.5), "top_k must be a positive integer"),
    (dict(seed=-1), "seed must be an integer >= 0"),
    (dict(seed=1.5), "seed must be an integer"),
    (dict(max_label=1), "labels must not exceed max_label=1, row 2"),
    (dict(query_ids=[0]), "one id per query"),
    (dict(query_ids=[-3, 1]), "query_ids must be non-negative, query 0"),
    (dict(query_ids=[7, 7]), "queries 0 and 1 both have 7"),
])
def test_bad_options_name_the_problem(kwargs, pattern):
    labels, scores, ptr = [0, 1, 2, 0], [0.1, 0.2, 0.3, 0.4], [0, 2, 4]
    with pytest.raises(ValueError, match=pattern):
        simulate_clicks(labels, scores, ptr, **kwargs)


@pytest.mark.parametrize("labels,scores,ptr,pattern", [
    ([0, 1.5, 2], [0.1, 0.2, 0.3], [0, 3], "integer relevance grades.*row 1"),
    ([0, -1, 2], [0.1, 0.2, 0.3], [0, 3], "non-negative, row 1"),
    ([0, np.nan, 2], [0.1, 0.2, 0.3], [0, 3], "non-finite.*row 1"),
    ([0, 1, 2], [0.1, np.inf, 0.3], [0, 3], "scores contains non-finite.*row 1"),
    ([0, 1, 2], [0.1, 0.2], [0, 3], "length mismatch"),
    ([0, 1, 2], [0.1, 0.2, 0.3], [0, 2], "group sizes do not sum"),
    ([0, 1, 2], [0.1, 0.2, 0.3], [0, 2, 1, 3], "query 1 decreases"),
])
def test_bad_data_names_the_row_or_query(labels, scores, ptr, pattern):
    with pytest.raises(ValueError, match=pattern):
        simulate_clicks(labels, scores, ptr)
