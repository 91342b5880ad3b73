"""analysis.paired on scipy.stats (issue 35): the hand-written statistics it replaced (a t table
with a Cornish-Fisher expansion above 30 degrees of freedom, a continued-fraction incomplete beta
for the t tails, bisection for other quantiles), frozen here as they were, agree with the scipy
ones wherever both apply; the paired t p-value is scipy's ttest_rel; the exact sign-flip
permutation p is checked by hand and against a plain enumeration of the 2^n sign patterns; the
log-ratio interval by hand."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import synthetic_runs  # noqa: F401 (puts the source tree on sys.path)
from analysis.paired import log_ratio, mde, p_signflip, p_value, paired, signflip_p, t975, t_quantile, t_sf2

# ---- the old hand-written statistics, frozen (analysis/paired.py before issue 35) -------------

OLD_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
            2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
            2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)


def old_t975(df):
    if df <= len(OLD_T975):
        return OLD_T975[int(df) - 1]
    z = 1.959963984540054
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def old_betacf(a, b, x):
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def old_betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * old_betacf(a, b, x) / a
    return 1.0 - front * old_betacf(b, a, 1.0 - x) / b


def old_t_sf2(t, df):
    return old_betainc(df / 2.0, 0.5, df / (df + t * t))


def old_t_quantile(q, df):
    target, lo, hi = 2.0 * (1.0 - q), 0.0, 1e6
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if old_t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ---- old and new agree --------------------------------------------------------------------------

def test_t975_old_table_and_scipy_agree():
    assert t975(3) == pytest.approx(3.182446, abs=1e-6)  # the value every n = 4 interval of the studies uses
    for df in list(range(1, 61)) + [100, 500, 1000]:
        assert t975(df) == pytest.approx(old_t975(df), abs=1e-6), df
        assert t975(df) == stats.t.ppf(0.975, df)


def test_t_tails_and_quantiles_old_and_scipy_agree():
    for df in (1, 2, 3, 5, 10, 30, 100):
        for t in (0.0, 0.1, 0.5, 1.0, 2.0, 3.182446, 5.0, 12.7, 40.0):
            assert t_sf2(t, df) == pytest.approx(old_t_sf2(t, df), rel=1e-9, abs=1e-13), (t, df)
        for q in (0.6, 0.8, 0.9, 0.975, 0.995):
            assert t_quantile(q, df) == pytest.approx(old_t_quantile(q, df), rel=1e-8), (q, df)
    assert mde(1.0, 4) == pytest.approx((old_t_quantile(0.975, 3) + old_t_quantile(0.8, 3)) / 2, rel=1e-8)


def test_p_value_is_ttest_rel_and_matches_the_old_one():
    rng = np.random.default_rng(35)
    for n in (2, 3, 4, 6, 10):
        for _ in range(20):
            a, b = rng.normal(1.0, 1.0, n), rng.normal(0.8, 1.0, n)
            p = paired(dict(enumerate(a)), dict(enumerate(b)))
            assert p_value(p) == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
            t = p["mean"] / (p["sd"] / math.sqrt(n))
            assert p_value(p) == pytest.approx(old_t_sf2(t, n - 1), rel=1e-8)


# ---- the exact sign-flip p ----------------------------------------------------------------------

def enumerate_signflips(d):
    d = np.asarray(d, dtype=float)
    obs = abs(d.mean())
    hits = sum(abs(np.mean(np.array(s) * d)) >= obs - 1e-12 for s in itertools.product((1, -1), repeat=d.size))
    return hits / 2 ** d.size


def test_signflip_p_by_hand():
    assert signflip_p([0.5, 1.0, 2.0, 3.0]) == pytest.approx(0.125)  # 2 of 16: the smallest at n = 4
    assert signflip_p([-0.5, -1.0, -2.0, -3.0]) == pytest.approx(0.125)
    assert signflip_p([1, 2, 3, 4, 5, 6]) == pytest.approx(2 / 64)  # 0.031 at n = 6
    assert signflip_p([1.0, 1.0, 1.0]) == pytest.approx(0.25)
    # 1, -2, 3, 4 (sum 6): the sign patterns of 1, 2, 3, 4 with sum >= 6 are all plus (10), -1 (8) and -2 (6);
    # with their mirror images, 6 of 16
    assert signflip_p([1.0, -2.0, 3.0, 4.0]) == pytest.approx(6 / 16)
    assert signflip_p([0.0, 0.0, 0.0]) == 1.0
    assert math.isnan(signflip_p([]))
    assert signflip_p([2.0]) == 1.0  # one difference: both signs are as extreme


def test_signflip_p_matches_enumeration():
    rng = np.random.default_rng(1)
    for n in (2, 3, 4, 5, 6, 8):
        for _ in range(10):
            d = rng.normal(0.3, 1.0, n)
            assert signflip_p(d) == pytest.approx(enumerate_signflips(d), abs=1e-12), d


def test_p_signflip_of_paired():
    p = paired({1: 3.0, 2: 5.0, 3: 7.0, 4: 8.0}, {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0})
    assert p_signflip(p) == pytest.approx(0.125)
    assert p_value(p) < 0.125  # the t test goes below what four seeds can show without normality


def test_log_ratio_by_hand():
    # ratios 2, 2, 2: +100% with no spread
    r = log_ratio({1: 2.0, 2: 4.0, 3: 3.0}, {1: 1.0, 2: 2.0, 3: 1.5})
    assert r["rel"] == pytest.approx(1.0) and r["rel_lo"] == pytest.approx(1.0) and r["n"] == 3
    # ratios e^0.1, e^0.2, e^0.3: mean log 0.2, sd 0.1, half-width t(0.975, 2) x 0.1 / sqrt 3
    r = log_ratio({1: math.exp(0.1), 2: math.exp(0.2), 3: math.exp(0.3)}, {1: 1.0, 2: 1.0, 3: 1.0})
    half = 4.302653 * 0.1 / math.sqrt(3)
    assert r["rel"] == pytest.approx(math.exp(0.2) - 1)
    assert r["rel_lo"] == pytest.approx(math.exp(0.2 - half) - 1, abs=1e-6)
    assert r["rel_hi"] == pytest.approx(math.exp(0.2 + half) - 1, abs=1e-6)
    assert r["p_signflip"] == pytest.approx(0.25)
    # a non-positive value cannot enter a log ratio: that seed is left out
    assert log_ratio({1: 1.0, 2: 0.0, 3: 2.0}, {1: 1.0, 2: 1.0, 3: 1.0})["seeds"] == [1, 3]
