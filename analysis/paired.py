"""Paired comparisons over seeds: the statistics of the mini-paper (analysis.minipaper).

Two configurations run with the same seed share the warm-up checkpoint and the question
streams, so their difference is taken seed by seed:

  d_s = value(A, seed s) - value(B, seed s)      over the seeds both have (n of them)
  mean = (1/n) sum d_s,   sd = sample std of d_s (ddof 1),   se = sd / sqrt(n)
  95% CI = mean -/+ t(0.975, n - 1) x se          (Student t, two-sided; n = 3: t = 4.303)
  relative change = mean / mean(value(B, s) over the same seeds), its CI the CI above divided
  by the same number (the baseline mean is held fixed: an approximation for a ratio)

"significant at 95%" means the CI excludes 0; "not significant at 95%" that it contains 0;
with one paired seed there is no CI ("untestable"). Below: two-sided p-values of the paired t
test (the incomplete beta function, no scipy), Holm's correction and minimum detectable effects. No scipy: t quantiles come from a table
(df 1..30, scipy's values to 6 decimals) and a Cornish-Fisher expansion above 30 (error
below 3e-8 there)."""
import math

import numpy as np

# t(0.975, df) for df = 1..30
T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
        2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
        2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)
Z975 = 1.959963984540054

SIGNIFICANT = "significant at 95%"
NOT_SIGNIFICANT = "not significant at 95%"
UNTESTABLE = "untestable (one paired seed)"
NO_PAIRS = "no paired seeds"
ROUNDING = 1e-12  # relative size below which a difference is float rounding


def t975(df):
    """Two-sided 95% Student t quantile t(0.975, df) for df >= 1."""
    if df < 1:
        raise ValueError(f"t quantile needs df >= 1, got {df}")
    if df <= len(T975):
        return T975[int(df) - 1]
    z = Z975
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def mean_sd(values):
    """(mean, sample sd ddof 1 or NaN below 2 values, n) of the finite values."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(np.mean(v)), float(np.std(v, ddof=1)) if v.size > 1 else float("nan"), int(v.size)


def ci95(diffs):
    """(mean, sd, half-width, t) of the 95% Student t interval of a list of differences;
    half-width and t are NaN below two values."""
    d = np.asarray(diffs, dtype=float)
    n = d.size
    if n == 0:
        return float("nan"), float("nan"), float("nan"), float("nan")
    mean = float(np.mean(d))
    if n < 2:
        return mean, float("nan"), float("nan"), float("nan")
    sd = float(np.std(d, ddof=1))
    t = t975(n - 1)
    return mean, sd, t * sd / math.sqrt(n), t


def verdict(lo, hi, n):
    """The significance wording of one comparison."""
    if n == 0:
        return NO_PAIRS
    if n < 2 or not (np.isfinite(lo) and np.isfinite(hi)):
        return UNTESTABLE
    return SIGNIFICANT if lo > 0 or hi < 0 else NOT_SIGNIFICANT


def paired(a, b):
    """Paired difference a - b over the seeds both have. a, b: {seed: value} (non-finite values
    are treated as absent). Returns a dict with seeds, diffs, n, mean, sd, half, t, lo, hi,
    base (mean of b over the paired seeds), rel / rel_lo / rel_hi (fractions, NaN when the
    base mean is 0) and verdict. Differences within 1e-12 of the values' scale count as 0; also the seeds only one side has (only_a, only_b)."""
    ok = lambda v: v is not None and np.isfinite(v)  # noqa: E731
    seeds = sorted(s for s in a if s in b and ok(a[s]) and ok(b[s]))
    # values this close to each other (or to 0) are equal up to float rounding: 0 exactly, so
    # rounding noise is never "significant" and never a base for a relative change
    scale = max([abs(float(a[s])) for s in seeds] + [abs(float(b[s])) for s in seeds] + [1.0])
    tiny = ROUNDING * scale
    diffs = [float(a[s]) - float(b[s]) for s in seeds]
    diffs = [0.0 if abs(d) <= tiny else d for d in diffs]
    mean, sd, half, t = ci95(diffs)
    if abs(mean) <= tiny:
        mean = 0.0
    lo, hi = mean - half, mean + half
    base = float(np.mean([b[s] for s in seeds])) if seeds else float("nan")
    if seeds and np.isfinite(base) and abs(base) > tiny:
        rel, rel_lo, rel_hi = mean / abs(base), lo / abs(base), hi / abs(base)
    else:
        rel = rel_lo = rel_hi = float("nan")
    return dict(seeds=seeds, diffs=diffs, n=len(seeds), mean=mean, sd=sd, half=half, t=t, lo=lo, hi=hi, base=base,
                rel=rel, rel_lo=rel_lo, rel_hi=rel_hi, verdict=verdict(lo, hi, len(seeds)),
                only_a=sorted(s for s in a if ok(a[s]) and s not in seeds),
                only_b=sorted(s for s in b if ok(b[s]) and s not in seeds))


def direction(p):
    """+1 when the CI lies above 0, -1 below, 0 when it contains 0 or cannot be computed."""
    if p["verdict"] != SIGNIFICANT:
        return 0
    return 1 if p["lo"] > 0 else -1


def trend(values, xs):
    """Least-squares slope of value against x within each seed, then the 95% CI of the mean
    slope over seeds. values: {x: {seed: value}}; a seed counts only when it has a finite value
    at every x. Returns dict(seeds, slopes, n, mean, sd, half, lo, hi, verdict)."""
    xs = list(xs)
    ok = lambda v: v is not None and np.isfinite(v)  # noqa: E731
    seeds = []
    if len(set(xs)) >= 2:
        seeds = sorted(set.intersection(*[{s for s, v in values.get(x, {}).items() if ok(v)} for x in xs]))
    x = np.asarray(xs, dtype=float)
    slopes = []
    for s in seeds:
        y = np.asarray([values[xx][s] for xx in xs], dtype=float)
        slopes.append(float(np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)))
    mean, sd, half, t = ci95(slopes)
    lo, hi = mean - half, mean + half
    return dict(seeds=seeds, slopes=slopes, n=len(seeds), mean=mean, sd=sd, half=half, t=t, lo=lo, hi=hi,
                verdict=verdict(lo, hi, len(seeds)))


# ---- p-values, Holm, detectable effects ---------------------------------------------------

def _betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
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


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf2(t, df):
    """Two-sided tail P(|T| >= |t|) of Student t with df degrees of freedom."""
    if not np.isfinite(t):
        return 0.0 if np.isinf(t) else float("nan")
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(q, df):
    """t(q, df) for 0.5 <= q < 1, by bisection on t_sf2 (used for power, not for the CIs)."""
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def p_value(p):
    """Two-sided paired t-test p-value of a paired() result (NaN below two seeds; 1 when every
    difference is 0; 0 when the differences are equal and non-zero)."""
    n = p["n"]
    if n < 2 or not np.isfinite(p["mean"]):
        return float("nan")
    if p["mean"] == 0.0:
        return 1.0
    if not p["sd"] > 0:
        return 0.0
    return t_sf2(p["mean"] / (p["sd"] / math.sqrt(n)), n - 1)


def holm(pvalues, alpha=0.05):
    """Holm's step-down correction. pvalues: {name: p} (NaN ones are left out). Returns
    {name: (adjusted p, rejected at alpha)}; adjusted p = max over the ranks up to this one of
    (m - rank) x p, capped at 1."""
    items = sorted(((p, k) for k, p in pvalues.items() if np.isfinite(p)))
    m, out, running = len(items), {}, 0.0
    for rank, (p, k) in enumerate(items):
        running = max(running, min(1.0, (m - rank) * p))
        out[k] = (running, running <= alpha)
    return out


def mde(sd, n, alpha=0.05, power=0.8):
    """Minimum detectable effect of a two-sided paired t-test with n pairs whose differences
    have standard deviation sd: (t(1 - alpha/2, n-1) + t(power, n-1)) x sd / sqrt(n), the
    usual approximation (the noncentral t would give slightly more). NaN below two pairs."""
    if n < 2 or not np.isfinite(sd):
        return float("nan")
    return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)) * sd / math.sqrt(n)
