"""What sampling noise alone gives: the white-noise expectation of the curve-shape numbers
(oscillation and band width, analysis.metrics) for one run.

A node's own reward in a round is the mean over its I x L completions (I local groups of L),
so even a policy that never changes shows round-to-round noise of about
sqrt(var / (I x L)). The white-noise model keeps each node's straight-line trend and the
distribution of its residuals around it and destroys any order in time: the residuals are
shuffled in time (independently per node, a fixed seed), the trend added back, and the
oscillation and band width recomputed; the expectation is the mean over the shuffles. The
observed / expected ratio says how much more slow swing a run has than noise of its own size:
about 1 means the shape is what I x L samples a round give by themselves.

The analytic check beside it: the residuals' per-round standard deviation against the
binomial sqrt(p (1 - p) / (I x L)) of a reward in [0, 1] with mean p (an upper bound when
rewards take values between 0 and 1)."""
import numpy as np

from .metrics import band_width, moving_average, oscillation

SHUFFLES = 200
SHUFFLE_SEED = 20260901


def _trend(y):
    """Least-squares straight line of each row of a (nodes, rounds) array."""
    t = np.arange(y.shape[-1], dtype=float)
    out = np.empty_like(y)
    for k, row in enumerate(y):
        slope, intercept = np.polyfit(t, row, 1)
        out[k] = slope * t + intercept
    return out


def shape(per_node, window):
    """(oscillation of the node-mean curve, band width across nodes) of a (nodes, rounds) array."""
    return oscillation(moving_average(per_node.mean(axis=0), window)), band_width(moving_average(per_node, window))


def white_noise(per_node, window, samples_per_round, shuffles=SHUFFLES, seed=SHUFFLE_SEED):
    """Observed and white-noise-expected shape of one run's (nodes, rounds) rewards.
    samples_per_round: I x L (completions behind one node's per-round mean). Returns a dict:
    osc, osc_null, band, band_null (means over the shuffles), resid_sd (mean over nodes of the
    residuals' sd), binom_sd (sqrt(p (1 - p) / (I x L)) at the run's mean p)."""
    y = np.asarray(per_node, dtype=float)
    trend = _trend(y)
    resid = y - trend
    rng = np.random.default_rng(seed)
    osc_null, band_null = [], []
    for _ in range(shuffles):
        shuffled = trend + np.stack([rng.permutation(r) for r in resid])
        o, b = shape(shuffled, window)
        osc_null.append(o)
        band_null.append(b)
    osc, band = shape(y, window)
    p = float(y.mean())
    return dict(osc=osc, osc_null=float(np.mean(osc_null)), band=band, band_null=float(np.mean(band_null)),
                resid_sd=float(resid.std(axis=1).mean()),
                binom_sd=float(np.sqrt(max(p * (1 - p), 0.0) / samples_per_round)) if samples_per_round else float("nan"))
