"""What the package's scikit-learn rankers share: every call that sees rows must see their queries.

A ranking estimator that silently treats rows without query ids as one query scores a whole
cross-validation fold as a single list (NDCG@10 0.47 where the per-query value is 0.78 on MQ2008),
and ``GridSearchCV`` then picks another model. The rankers therefore refuse rows without queries,
and the message names every way to pass them.
"""

from .groups import resolve_group_ptr

#: how to pass queries, quoted by every error about missing ones
HOW_TO_PASS_QUERIES = (
    "pass the queries as a 'qid' column of a pandas DataFrame X (never used as a feature), as qid= "
    "(or group= sizes), or inside GridSearchCV / cross_val_score with scikit-learn's metadata routing: "
    "sklearn.set_config(enable_metadata_routing=True); est.set_fit_request(qid=True).set_score_request(qid=True); "
    "GridSearchCV(...).fit(X, y, groups=qid, qid=qid) or cross_val_score(..., params={'qid': qid, 'groups': qid})")


def require_queries(where, n_rows, group=None, qid=None, group_ptr=None):
    """``group_ptr`` of ``n_rows`` rows from exactly one of ``group``/``qid``/``group_ptr``.

    Raises ``ValueError`` naming ``where`` (e.g. ``"XGBLambdaRanker.score"``) when none is given:
    a ranker never guesses that all rows form one query.
    """
    if group is None and qid is None and group_ptr is None:
        raise ValueError(f"{where}: no queries for these {n_rows} rows; a ranker never treats rows without "
                         f"query ids as one query: {HOW_TO_PASS_QUERIES}")
    return resolve_group_ptr(n_rows, group=group, group_ptr=group_ptr, qid=qid)
