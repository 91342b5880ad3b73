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
test, the exact sign-flip permutation p, Holm's correction, minimum detectable effects and
log-ratio intervals for relative changes.

The distributions come from scipy.stats (Debian's python3-scipy): t quantiles and tails from
scipy.stats.t, the paired t test is scipy.stats.ttest_1samp of the differences (the same as
ttest_rel of the two sides), the sign-flip p is scipy.stats.permutation_test over every one of
the 2^n sign patterns (exact; with n = 4 the smallest two-sided p is 2/16 = 0.125, with n = 6
2/64 = 0.031). Until issue 35 this module carried its own t table, Cornish-Fisher expansion and
incomplete beta function; tests/analysis/test_paired_scipy.py keeps a frozen copy of them and
checks that both agree."""
import math
import warnings

import numpy as np
from scipy import stats

SIGNIFICANT = "significant at 95%"
NOT_SIGNIFICANT = "not significant at 95%"
UNTESTABLE = "untestable (one paired seed)"
NO_PAIRS = "no paired seeds"
ROUNDING = 1e-12  # relative size below which a difference is float rounding


def t975(df):
    """Two-sided 95% Student t quantile t(0.975, df) for df >= 1 (scipy.stats.t.ppf)."""
    if df < 1:
        raise ValueError(f"t quantile needs df >= 1, got {df}")
    return float(stats.t.ppf(0.975, df))


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

def t_sf2(t, df):
    """Two-sided tail P(|T| >= |t|) of Student t with df degrees of freedom (scipy.stats.t.sf)."""
    if not np.isfinite(t):
        return 0.0 if np.isinf(t) else float("nan")
    return float(2.0 * stats.t.sf(abs(t), df))


def t_quantile(q, df):
    """t(q, df), the Student t quantile (scipy.stats.t.ppf)."""
    return float(stats.t.ppf(q, df))


def p_value(p):
    """Two-sided paired t-test p-value of a paired() result (NaN below two seeds; 1 when every
    difference is 0; 0 when the differences are equal and non-zero). scipy.stats.ttest_1samp of
    the differences (= ttest_rel of the two sides); a result without differences (trend()) uses
    its mean and sd."""
    n = p["n"]
    if n < 2 or not np.isfinite(p["mean"]):
        return float("nan")
    if p["mean"] == 0.0:
        return 1.0
    if not p["sd"] > 0:
        return 0.0
    d = p.get("diffs", p.get("slopes"))
    if d is not None and len(d) == n:
        with warnings.catch_warnings():  # nearly equal differences: scipy warns, the p is still ~0
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(stats.ttest_1samp(np.asarray(d, dtype=float), 0.0).pvalue)
    return t_sf2(p["mean"] / (p["sd"] / math.sqrt(n)), n - 1)


def signflip_p(diffs):
    """Exact two-sided sign-flip permutation p of paired differences: the share of the 2^n sign
    patterns whose mean is at least as far from 0 as the observed mean (the observed pattern
    counts). scipy.stats.permutation_test, permutation_type 'samples' on the one sample of
    differences, every pattern enumerated (n_resamples inf). NaN with no difference; 1 when every
    difference is 0. With n all-positive differences it is 2 / 2^n: 0.125 at n = 4, 0.031 at 6."""
    d = np.asarray([x for x in diffs if x is not None and np.isfinite(x)], dtype=float)
    if d.size == 0:
        return float("nan")
    if not np.any(d != 0) or d.size == 1:
        return 1.0  # one difference: both of its signs are as far from 0
    if d.size > 20:
        raise ValueError(f"exact sign-flip p enumerates 2^n patterns; n = {d.size} is too many")
    res = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                                 vectorized=True, n_resamples=np.inf, alternative="two-sided")
    return float(min(1.0, res.pvalue))


def p_signflip(p):
    """signflip_p of a paired() result's differences."""
    return signflip_p(p["diffs"]) if p["n"] else float("nan")


def log_ratio(a, b):
    """Relative change a / b - 1 as a ratio per seed: r_s = log(a_s / b_s) over the seeds both
    have, a Student t 95% CI of the mean of r_s, mapped back by exp(.) - 1 (so the interval is
    that of the geometric mean ratio, not the baseline-fixed approximation of paired()). a, b:
    {seed: value}; a seed counts only when both values are finite and positive. Returns dict(seeds,
    logs, n, mean, lo, hi (log scale), rel, rel_lo, rel_hi (fractions), p (t test of the logs),
    p_signflip)."""
    ok = lambda v: v is not None and np.isfinite(v) and v > 0  # noqa: E731
    seeds = sorted(s for s in a if s in b and ok(a[s]) and ok(b[s]))
    logs = [math.log(float(a[s]) / float(b[s])) for s in seeds]
    mean, sd, half, _ = ci95(logs)
    lo, hi = mean - half, mean + half
    out = dict(seeds=seeds, logs=logs, n=len(seeds), mean=mean, sd=sd, lo=lo, hi=hi,
               rel=math.expm1(mean) if np.isfinite(mean) else float("nan"),
               rel_lo=math.expm1(lo) if np.isfinite(lo) else float("nan"),
               rel_hi=math.expm1(hi) if np.isfinite(hi) else float("nan"))
    out["p"] = p_value(dict(n=len(logs), mean=mean, sd=sd, diffs=logs))
    out["p_signflip"] = signflip_p(logs)
    return out


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
