"""The statistics the commands report, each written once: t intervals, paired tests, Holm, power.

``paper`` (OLE − SE per cell) and ``quality`` (each objective against its engine's default) both
import from here, so neither command imports the other.
"""

import math

import numpy as np


def t_half_width(sd, n, level=0.95):
    """Half-width of the two-sided ``level`` t interval of a mean of ``n`` values with sample sd
    ``sd`` (``ddof=1``): ``t_{(1+level)/2, n-1} · sd / √n``; ``sd`` may be an array (one interval
    per column)."""
    from scipy import stats

    return stats.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n)


def paired_ci(diffs, level=0.95):
    """Mean and two-sided t confidence interval of paired per-query differences."""
    d = np.asarray(diffs, dtype=float)
    m = float(d.mean())
    if d.size < 2:
        return m, float("nan"), float("nan")
    half = float(t_half_width(d.std(ddof=1), d.size, level))
    return m, m - half, m + half


def t_interval(values, level=0.95):
    """Two-sided ``level`` t interval of the mean of the finite ``values`` (NaN, NaN below two)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan"), float("nan")
    half = t_half_width(v.std(ddof=1), v.size, level)
    return float(v.mean() - half), float(v.mean() + half)


def sign_flip_pvalue(diffs, n_resamples=20000, seed=0):
    """Two-sided paired randomisation test of mean(diffs) = 0 (random signs; the observed counts)."""
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0 or not np.any(d):
        return 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = 1  # the observed assignment itself
    for start in range(0, n_resamples, 2000):
        m = min(2000, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(m, d.size))
        hits += int(np.sum(np.abs(signs @ d) / d.size >= observed - 1e-15))
    return hits / (n_resamples + 1)


def holm(pvalues):
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    adj = np.empty_like(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (p.size - rank) * p[i]))
        adj[i] = running
    return adj


def mde(sd, n, alpha=0.05, power=0.8):
    """Smallest mean paired difference a two-sided level-``alpha`` test detects with ``power``
    (normal approximation): (z_{1-alpha/2} + z_power) · sd / √n."""
    from scipy import stats

    if n < 2 or not np.isfinite(sd):
        return float("nan")
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * sd / np.sqrt(n))


def holm_families(rows, primary, metrics, alpha=0.05):
    """Holm's correction over a table's paired tests, in place: ``primary`` (the pre-declared endpoint)
    is one family across the rows, the other ``metrics`` a second; each row with ``"<metric> p"`` gets
    ``"<metric> p_holm"`` and ``"<metric> significant"`` (p_Holm < ``alpha``). Returns the size of the
    primary family."""
    for family in ([primary], [m for m in metrics if m != primary]):
        tested = [(i, m) for i, r in enumerate(rows) for m in family if m + " p" in r]
        adjusted = holm([rows[i][m + " p"] for i, m in tested]) if tested else []
        for (i, m), p in zip(tested, adjusted):
            rows[i][m + " p_holm"] = float(p)
            rows[i][m + " significant"] = bool(p < alpha)
    return sum(primary + " p" in r for r in rows)


def power_by_data(rows, primary, family, alpha=0.05):
    """Per data set of ``rows``: the median over rows of the sd of the paired ``primary`` differences
    (``"<primary> sd"``), the largest number of paired queries, and the difference detectable at 80 %
    power by one test (``mde``) and at Holm's strictest step over ``family`` tests (``mde_holm``)."""
    power = {}
    for data in sorted({r["data"] for r in rows}):
        sds = [r[primary + " sd"] for r in rows if r["data"] == data and np.isfinite(r.get(primary + " sd", np.nan))]
        ns = [r[primary + " n"] for r in rows if r["data"] == data and primary + " n" in r]
        sd, n = (float(np.median(sds)), int(max(ns))) if sds else (float("nan"), 0)
        power[data] = {"sd": sd, "n_queries": n, "mde": mde(sd, n, alpha),
                       "mde_holm": mde(sd, n, alpha / max(family, 1)), "family": family}
    return power
