"""Numbers the report shows, as pure functions of arrays plus per-run and per-configuration
aggregates.

Definitions (the report repeats them):
- cumulative reward: the sum over nodes and rounds of a node's per-round mean reward, on its
  own rollouts (reward_own) or on its training batch (reward_train = own + external groups);
  the paper's "total reward summed over agents and rounds".
- moving average (window w): trailing mean of the last w rounds, defined from round w-1 on
  (pandas' rolling(w).mean()); the report's window is min(100, rounds // 5), at least 1.
- roughness: mean absolute round-to-round change of the agent-averaged reward (raw).
- oscillation: standard deviation (ddof 0) of the moving-averaged agent-averaged reward around
  its least-squares straight line: slow swings, not sampling noise or a steady trend.
- band width: mean over rounds of (max - min across agents) of the per-agent moving averages.
- spread over seeds: sample standard deviation (ddof 1; none for one seed), min and max.
"""
import numpy as np

from .runs import nanmean_rows

PAPER_WINDOW = 100
NETWORK_METRICS = ("msgs_sent", "msgs_received", "msgs_dropped", "msgs_late", "msgs_rejected", "groups_rejected",
                   "bytes_sent", "bytes_received")
POOL_METRICS = ("external_used", "shortfall", "external_flat", "pool_size", "pool_eligible", "external_age_min",
                "external_age_max", "online")
TIME_METRICS = ("t_generate", "t_exchange", "t_train", "t_wait", "t_eval")  # the phases of a round
ROUND_TIME = "t_round"  # wall time of the whole round (newer logs), a straggler's sleep included


# ---- array functions ----------------------------------------------------------------------

def cumulative(per_node):
    """Sum over nodes and rounds of a (nodes, rounds) array."""
    return float(np.sum(per_node))


def window_for(n_rounds, requested=PAPER_WINDOW):
    """The moving-average window used for a run of n_rounds: the requested one, shrunk to
    n_rounds // 5 (at least 1) so a short run still shows a curve."""
    return int(max(1, min(requested, n_rounds // 5)))


def moving_average(x, w):
    """Trailing mean over the last w values along the last axis, 'valid' part only: output
    index i is the mean of x[..., i : i + w] and belongs to round index i + w - 1."""
    x = np.asarray(x, dtype=float)
    if w < 1 or x.shape[-1] < w:
        return x[..., :0]
    c = np.cumsum(np.concatenate([np.zeros(x.shape[:-1] + (1,)), x], axis=-1), axis=-1)
    return (c[..., w:] - c[..., :-w]) / w


def roughness(mean_curve):
    """Mean absolute round-to-round change; NaN with fewer than 2 rounds."""
    m = np.asarray(mean_curve, dtype=float)
    return float(np.mean(np.abs(np.diff(m)))) if m.size >= 2 else float("nan")


def oscillation(smoothed):
    """Std (ddof 0) of a smoothed curve around its least-squares line; NaN below 3 points."""
    y = np.asarray(smoothed, dtype=float)
    if y.size < 3:
        return float("nan")
    t = np.arange(y.size, dtype=float)
    slope, intercept = np.polyfit(t, y, 1)
    return float(np.std(y - (slope * t + intercept)))


def band_width(per_node_smoothed):
    """Mean over rounds of max - min across nodes, of (nodes, points) smoothed curves."""
    a = np.asarray(per_node_smoothed, dtype=float)
    if a.size == 0:
        return float("nan")
    return float(np.mean(a.max(axis=0) - a.min(axis=0)))


def spread(values):
    """(mean, std ddof 1 or NaN for one value, min, max, n) of a list of numbers."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return dict(mean=float("nan"), std=float("nan"), min=float("nan"), max=float("nan"), n=0)
    std = float(np.std(v, ddof=1)) if v.size > 1 else float("nan")
    return dict(mean=float(np.mean(v)), std=std, min=float(np.min(v)), max=float(np.max(v)), n=int(v.size))


def change(value, base):
    """Relative change value / base - 1 (NaN when base is 0 or missing)."""
    if base is None or not np.isfinite(base) or base == 0:
        return float("nan")
    return float(value / base - 1.0)


# ---- one run ------------------------------------------------------------------------------

REWARDS = ("reward_own", "reward_train")


def run_metrics(run, window):
    """Per-run numbers: cumulative rewards, curve shape, evaluation, network and time split."""
    out = {"rounds": run.n_rounds, "nodes": run.n_nodes, "window": window}
    for m in REWARDS:
        per_node = run.per_node[m]
        mean_curve = per_node.mean(axis=0)
        ma_nodes = moving_average(per_node, window)
        ma_mean = moving_average(mean_curve, window)
        out[m] = dict(
            cumulative=cumulative(per_node),
            per_node_cumulative=per_node.sum(axis=1),
            mean_per_round=float(mean_curve.mean()),
            roughness=roughness(mean_curve),
            oscillation=oscillation(ma_mean),
            band_width=band_width(ma_nodes),
            peak_ma=float(ma_mean.max()) if ma_mean.size else float("nan"),
            final_ma=float(ma_mean[-1]) if ma_mean.size else float("nan"),
        )
    out["eval"] = eval_curve(run)
    out["network"] = {m: _mean_over_rounds(run.node_mean[m]) for m in NETWORK_METRICS + POOL_METRICS
                      if m in run.node_mean}
    out["time"] = {m: _mean_over_rounds(run.node_mean[m]) for m in TIME_METRICS if m in run.node_mean}
    if ROUND_TIME in run.node_mean:
        out["round_time"] = _mean_over_rounds(run.node_mean[ROUND_TIME])
    return out


def _mean_over_rounds(x):
    """Mean over rounds ignoring NaN (external ages are NaN in rounds without external groups)."""
    return float(nanmean_rows(x, axis=0))


def eval_curve(run):
    """Rounds with an evaluation on at least one node, and mean / min / max of pass@1 across nodes."""
    e = run.per_node.get("eval_pass1")
    if e is None:
        return dict(rounds=np.zeros(0, int), mean=np.zeros(0), min=np.zeros(0), max=np.zeros(0))
    have = ~np.all(np.isnan(e), axis=0)
    sub = e[:, have]
    with np.errstate(invalid="ignore"):
        lo = np.where(np.all(np.isnan(sub), axis=0), np.nan, np.nanmin(np.where(np.isnan(sub), np.inf, sub), axis=0))
        hi = np.where(np.all(np.isnan(sub), axis=0), np.nan, np.nanmax(np.where(np.isnan(sub), -np.inf, sub), axis=0))
    return dict(rounds=run.rounds[have], mean=nanmean_rows(sub, axis=0), min=lo, max=hi)


# ---- one configuration (its runs are the seeds) ----------------------------------------------

def config_metrics(config, window):
    """Statistics over a configuration's runs (seeds), with each run's own metrics under 'runs'."""
    per_run = [run_metrics(r, window) for r in config.runs]
    out = {"runs": per_run, "window": window}
    for m in REWARDS:
        out[m] = {}
        for field in ("cumulative", "roughness", "oscillation", "band_width", "peak_ma", "final_ma", "mean_per_round"):
            out[m][field] = spread([p[m][field] for p in per_run])
    for part in ("network", "time"):
        keys = sorted(set().union(*[p[part] for p in per_run]))
        out[part] = {k: _mean_over_rounds([p[part].get(k, np.nan) for p in per_run]) for k in keys}
    times = [p["round_time"] for p in per_run if "round_time" in p]
    if times:
        out["round_time"] = float(np.mean(times))
    # evaluation: mean over seeds at each evaluated round (rounds any seed evaluated)
    rounds = sorted(set().union(*[set(p["eval"]["rounds"].tolist()) for p in per_run]))
    table = np.full((len(per_run), len(rounds)), np.nan)
    for i, p in enumerate(per_run):
        for r, v in zip(p["eval"]["rounds"].tolist(), p["eval"]["mean"]):
            table[i, rounds.index(r)] = v
    out["eval"] = dict(rounds=np.asarray(rounds, dtype=int), mean=nanmean_rows(table, axis=0), per_seed=table)
    return out
