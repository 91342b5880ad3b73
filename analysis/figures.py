"""The report's PNG figures. Each function writes one file into out_dir and returns
(file name, caption); captions say which reward a figure shows (own rollouts or training
batch), how it is smoothed and over which runs."""
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .metrics import TIME_METRICS, moving_average  # noqa: E402

REWARD_NAMES = {"reward_own": "own rollouts", "reward_train": "training batch (own + external)"}
DPI = 110


def _panels(n, width=4.6, height=3.2, legend_width=1.5):
    """n panels, at most 4 a row, sharing the y axis, with room on the right for one legend."""
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(max(width * cols, 6.0) + legend_width, height * rows + 0.7),
                             sharey=True, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def trailing_mean(x, w):
    """Trailing mean over the last w rounds along the last axis, defined from round 0: the
    first w - 1 points average the rounds so far (an expanding window), so a curve drawn
    with it starts at round 0 (metrics.moving_average starts at round w - 1)."""
    a = np.asarray(x, dtype=float)
    c = np.cumsum(a, axis=-1)
    n = a.shape[-1]
    counts = np.minimum(np.arange(1, n + 1), w)
    out = c.copy()
    out[..., w:] = c[..., w:] - c[..., :-w]
    return out / counts


def _seed_note(c):
    return f"seed {c.runs[0].seed}" if len(c.runs) == 1 else f"{len(c.runs)} seeds"


def _save(fig, out_dir, name, legend_right=None):
    """Write the PNG; legend_right = (handles, labels) puts one legend outside, right of the panels."""
    if legend_right:
        width = fig.get_figwidth()
        fig.legend(*legend_right, loc="center right", fontsize=8, framealpha=0.9)
        fig.tight_layout(rect=(0, 0, 1 - 1.6 / width, 1))
    else:
        fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=DPI)
    plt.close(fig)
    return name


def finish_panels(fig, axes, titles, xlabels, out_dir, name, title_size=10, legend_size=7):
    """Title, x label (one string for all panels, or one each), grid and legend (where a panel
    has labelled lines) on each panel, then _save(): returns name."""
    xlabels = [xlabels] * len(axes) if isinstance(xlabels, str) else xlabels
    for ax, t, x in zip(axes, titles, xlabels):
        ax.set_title(t, fontsize=title_size)
        ax.set_xlabel(x)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=legend_size)
    return _save(fig, out_dir, name)


def node_reward(configs, metric, out_dir, prefix=""):
    """Figure 1: every node's raw reward per round, one panel per configuration (its first seed)."""
    fig, axes = _panels(len(configs))
    for ax, c in zip(axes, configs):
        run = c.runs[0]
        for k, row in enumerate(run.per_node[metric]):
            ax.plot(run.rounds, row, lw=0.8, alpha=0.85, label=f"node {k}")
        ax.set_title(f"{c.label}  (seed {run.seed})", fontsize=10)
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"reward, {REWARD_NAMES[metric]}")
    fig.suptitle(f"{prefix}Per-node reward per round (raw), {REWARD_NAMES[metric]}", fontsize=11)
    suffix = "own" if metric == "reward_own" else "train"
    biggest = max(axes, key=lambda ax: len(ax.get_lines()))
    handles, labels = biggest.get_legend_handles_labels()
    legend = (handles[:16], labels[:16]) if handles else None
    name = _save(fig, out_dir, f"fig1_node_reward_{suffix}.png", legend)
    seeds = "the first seed of each configuration" if any(len(c.runs) > 1 for c in configs) else "one run per configuration"
    return name, (f"Figure 1 ({REWARD_NAMES[metric]}): each node's mean reward on its "
                  f"{'own completions' if metric == 'reward_own' else 'training batch (own + external groups)'} "
                  f"in every round, unsmoothed, {seeds} (the paper's Figure 1).")


def avg_reward(configs, metric, window, requested, out_dir, prefix="", from_zero=False):
    """Figure 2: agent-averaged reward, moving average, min/max band across agents.
    from_zero: smooth with trailing_mean (defined from round 0) instead of the moving average
    that starts at round window - 1."""
    smooth = trailing_mean if from_zero else moving_average
    start = 0 if from_zero else window - 1
    fig, axes = _panels(len(configs))
    for ax, c in zip(axes, configs):
        n = min(r.n_rounds for r in c.runs)
        raw = np.mean([r.per_node[metric][:, :n].mean(axis=0) for r in c.runs], axis=0)
        x = c.runs[0].rounds[:n]
        ma_nodes = np.concatenate([smooth(r.per_node[metric][:, :n], window) for r in c.runs])
        ma_mean = smooth(raw, window)
        xm = x[start:]
        ax.plot(x, raw, color="0.6", lw=0.7, alpha=0.7, label="agent mean, raw")
        if ma_mean.size:
            ax.fill_between(xm, ma_nodes.min(axis=0), ma_nodes.max(axis=0), color="C0", alpha=0.2,
                            label="min/max across\nagents (MA)")
            ax.plot(xm, ma_mean, color="C0", lw=1.8, label=f"agent mean, MA {window}")
        ax.set_title(f"{c.label}  ({_seed_note(c)})", fontsize=10)
        ax.set_xlabel("round")
        if from_zero:
            ax.set_xlim(0, None)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"reward, {REWARD_NAMES[metric]}")
    fig.suptitle(f"{prefix}Agent-averaged reward, MA {window}, {REWARD_NAMES[metric]}", fontsize=11)
    suffix = "own" if metric == "reward_own" else "train"
    name = _save(fig, out_dir, f"fig2_avg_reward_{suffix}.png", axes[0].get_legend_handles_labels())
    shrunk = (f"window {window} rounds (the paper's {requested}, shrunk to fit runs of "
              f"{min(r.n_rounds for c in configs for r in c.runs)} rounds: window = min({requested}, rounds // 5))"
              if window < requested else f"window {window} rounds")
    starts = ("from round 0: the first rounds average the rounds so far" if from_zero
              else f"it starts at round {window - 1}")
    seeds = (" Several seeds: the lines are means over seeds and the band spans every agent of every seed."
             if any(len(c.runs) > 1 for c in configs) else "")
    return name, (f"Figure 2 ({REWARD_NAMES[metric]}): reward averaged over agents, grey raw per round, blue a "
                  f"trailing moving average ({shrunk}; {starts}); the band spans the "
                  f"lowest to highest agent's own moving average (the paper's Figure 2).{seeds}")


def compare(configs, window, out_dir, prefix="", from_zero=False):
    """All configurations on one axes: agent-averaged moving average, own and training batch
    (from_zero: trailing_mean, drawn from round 0)."""
    smooth = trailing_mean if from_zero else moving_average
    start = 0 if from_zero else window - 1
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, metric in zip(axes, ("reward_own", "reward_train")):
        for i, c in enumerate(configs):
            n = min(r.n_rounds for r in c.runs)
            raw = np.mean([r.per_node[metric][:, :n].mean(axis=0) for r in c.runs], axis=0)
            ma = smooth(raw, window)
            if ma.size:
                ax.plot(c.runs[0].rounds[:n][start:], ma, lw=1.6, color=f"C{i % 10}", label=c.label)
        ax.set_title(REWARD_NAMES[metric], fontsize=10)
        ax.set_xlabel("round")
        if from_zero:
            ax.set_xlim(0, None)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"agent-mean reward, MA {window}")
    axes[1].legend(fontsize=8, loc="best", framealpha=0.8)
    if prefix:
        fig.suptitle(f"{prefix}Agent-averaged reward, MA {window}, mean over seeds", fontsize=11)
    name = _save(fig, out_dir, "fig3_compare.png")
    starts = ", from round 0 (expanding at the start)" if from_zero else ""
    return name, (f"Figure 3: every configuration's agent-averaged reward (moving average over {window} rounds{starts}, "
                  f"mean over seeds), on own rollouts (left) and on the training batch (right).")


def node_band(configs, metric, window, out_dir, prefix=""):
    """Figure 1, readable: one small panel per configuration (its first run), the node-mean
    reward as a trailing mean from round 0 and the band between the lowest and the highest
    node's trailing mean, the raw node mean faint behind."""
    fig, axes = _panels(len(configs), width=3.6, height=2.8)
    for ax, c in zip(axes, configs):
        run = c.runs[0]
        per_node = run.per_node[metric]
        smoothed = trailing_mean(per_node, window)
        ax.plot(run.rounds, per_node.mean(axis=0), color="0.7", lw=0.6, label="node mean, raw")
        ax.fill_between(run.rounds, smoothed.min(axis=0), smoothed.max(axis=0), color="C0", alpha=0.25, lw=0,
                        label="lowest to highest node")
        ax.plot(run.rounds, trailing_mean(per_node.mean(axis=0), window), color="C0", lw=1.6,
                label=f"node mean, trailing {window}")
        ax.set_title(f"{c.label}  (seed {run.seed})", fontsize=10)
        ax.set_xlabel("round")
        ax.set_xlim(0, None)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"reward, {REWARD_NAMES[metric]}")
    fig.suptitle(f"{prefix}Per-node reward, node mean and node range (trailing mean {window} rounds), "
                 f"{REWARD_NAMES[metric]}", fontsize=11)
    suffix = "own" if metric == "reward_own" else "train"
    name = _save(fig, out_dir, f"fig1_node_band_{suffix}.png", axes[0].get_legend_handles_labels())
    seeds = "the first seed of each configuration" if any(len(c.runs) > 1 for c in configs) else "one run per configuration"
    return name, (f"Figure 1 ({REWARD_NAMES[metric]}): one panel per configuration, {seeds}: the mean over nodes of "
                  f"each node's reward on its "
                  f"{'own completions' if metric == 'reward_own' else 'training batch (own + external groups)'}, "
                  f"raw (grey) and as a trailing mean over {window} rounds drawn from round 0 (blue; the first rounds "
                  f"average the rounds so far); the band spans the lowest to the highest node's trailing mean "
                  f"(the paper's Figure 1, with the nodes' spread as a band instead of one line per node).")


def cumulative(configs, out_dir, prefix=""):
    """Cumulative reward summed over nodes against rounds: the table's numbers as they grow."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, metric in zip(axes, ("reward_own", "reward_train")):
        for i, c in enumerate(configs):
            n = min(r.n_rounds for r in c.runs)
            curves = np.array([np.cumsum(r.per_node[metric][:, :n].sum(axis=0)) for r in c.runs])
            x = c.runs[0].rounds[:n]
            ax.plot(x, curves.mean(axis=0), lw=1.6, color=f"C{i % 10}", label=c.label)
            if len(c.runs) > 1:
                ax.fill_between(x, curves.min(axis=0), curves.max(axis=0), color=f"C{i % 10}", alpha=0.15)
        ax.set_title(REWARD_NAMES[metric], fontsize=10)
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cumulative reward (sum over nodes)")
    axes[0].legend(fontsize=8, loc="upper left", framealpha=0.8)
    if prefix:
        fig.suptitle(f"{prefix}Cumulative reward summed over nodes", fontsize=11)
    name = _save(fig, out_dir, "fig4_cumulative.png")
    many = any(len(c.runs) > 1 for c in configs)
    return name, ("Figure 4: cumulative reward summed over nodes up to each round, own rollouts (left) and training "
                  "batch (right)" + ("; lines are means over seeds, bands min/max over seeds." if many else "."))


def eval_pass1(configs, cms, out_dir, prefix=""):
    """pass@1 on held-out questions against rounds: node mean, min/max across nodes."""
    if not any(cm["eval"]["rounds"].size for cm in cms):
        return None
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for i, (c, cm) in enumerate(zip(configs, cms)):
        ev = cm["eval"]
        if not ev["rounds"].size:
            continue
        lo, hi = [], []
        for r in ev["rounds"]:
            vals = []
            for run in c.runs:
                col = np.nonzero(run.rounds == r)[0]
                if col.size:
                    v = run.per_node["eval_pass1"][:, col[0]]
                    vals.extend(v[~np.isnan(v)].tolist())
            lo.append(min(vals) if vals else np.nan)
            hi.append(max(vals) if vals else np.nan)
        mean = ev["mean"]
        # configurations side by side at each evaluated round so their bars do not hide each other
        step = float(np.median(np.diff(ev["rounds"]))) if ev["rounds"].size > 1 else 1.0
        x = ev["rounds"] + (i - (len(configs) - 1) / 2) * 0.06 * step
        ax.errorbar(x, mean, yerr=[mean - np.array(lo), np.array(hi) - mean], marker="o", ms=4, lw=1.4,
                    capsize=3, color=f"C{i % 10}", label=c.label)
    ax.set_xlabel("round")
    ax.set_ylabel("pass@1, held-out questions")
    if prefix:
        ax.set_title(f"{prefix}pass@1 on held-out questions", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.8)
    name = _save(fig, out_dir, "fig5_eval_pass1.png")
    return name, ("Figure 5: pass@1 on fresh held-out questions after that round's training step (one answer per "
                  "question sampled with the run's gen settings, scored by the verifier, partial credit counted), "
                  "mean over nodes and seeds; bars span the lowest to highest node (configurations are drawn slightly apart along x at each evaluated round). This is neither the own-rollout "
                  "nor the training-batch reward.")


def time_split(configs, cms, out_dir):
    """Mean seconds per round and node in each phase, stacked, one bar per configuration."""
    if not any(cm["time"] for cm in cms):
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.5 * len(configs) + 1.6))
    y = np.arange(len(configs))
    left = np.zeros(len(configs))
    for j, m in enumerate(TIME_METRICS):
        vals = np.array([cm["time"].get(m, 0.0) for cm in cms])
        ax.barh(y, vals, left=left, color=f"C{j}", label=m[2:])
        left += vals
    ax.set_yticks(y, [c.label for c in configs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per round (mean over nodes and rounds)")
    ax.set_ylabel("configuration")
    ax.legend(fontsize=8, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    name = _save(fig, out_dir, "fig6_time_split.png")
    return name, ("Figure 6: where a round's time goes on a node (generate = own completions and scoring, exchange = "
                  "encode/send/receive/verify, train = GRPO step, wait = blocked on peers, eval = held-out pass@1).")


def paired_changes(panels, arms, out_dir, name="fig_changes.png", title=""):
    """Forest plot of paired changes (analysis.paired): one panel per metric, one row per
    comparison, one marker per arm at the relative change (%) with its 95% CI as a bar (hollow
    marker and no bar where there is no CI). panels = [(panel title, [(row label, {arm: p})])]."""
    if not panels:
        return None
    n_rows = max(len(rows) for _, rows in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1.6, 0.55 * n_rows + 1.6), sharey=True,
                             squeeze=False)
    axes = list(axes.flat)
    handles = {}
    for ax, (panel_title, rows) in zip(axes, panels):
        labels = [label for label, _ in rows]
        for i, arm in enumerate(arms):
            off = (i - (len(arms) - 1) / 2) * 0.18
            for y, (_, by_arm) in enumerate(rows):
                p = by_arm.get(arm)
                if p is None or not np.isfinite(p["rel"]):
                    continue
                x = 100 * p["rel"]
                color = f"C{i % 10}"
                if np.isfinite(p["rel_lo"]):
                    h = ax.errorbar(x, y + off, xerr=[[x - 100 * p["rel_lo"]], [100 * p["rel_hi"] - x]], fmt="o",
                                    color=color, ms=5, capsize=3, lw=1.4)
                else:
                    h = ax.plot(x, y + off, "o", mfc="none", color=color, ms=5)[0]
                handles.setdefault(arm, h)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_title(panel_title, fontsize=10)
        ax.set_xlabel("change vs reference, % (95% CI)")
        ax.grid(alpha=0.3, axis="x")
    axes[0].set_ylabel("comparison (paired by seed)")
    if title:
        fig.suptitle(title, fontsize=11)
    legend = ([handles[a] for a in arms if a in handles], [a for a in arms if a in handles])
    _save(fig, out_dir, name, legend if len(legend[0]) > 1 else None)  # one arm needs no legend
    return name, ("Paired changes: for each comparison the mean over seeds of the per-seed difference, as a "
                  "percentage of the reference's mean over the same seeds, with its 95% Student t interval "
                  "(bars; a hollow marker has no interval: one paired seed). A bar crossing 0 is not significant "
                  "at 95%.")
