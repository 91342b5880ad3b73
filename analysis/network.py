"""The network study's report: how much of what sharing gives survives stale, lost and missing
messages and slow peers, and which way of training received answers degrades least?
(results/network/; the plan, fixed before any reported run, is its README.md: the conditions,
arms, metrics and comparison families below are that page's and do not change after.)

Usage:
  python3 -m analysis.network SUMMARY_DIR -o OUT_DIR --clean-dir SPECIALISTS_SUMMARY_DIR
      [--costs FILE] [--machine TEXT] [--seeds 1,2,3,4] [--last-k 5]

  SUMMARY_DIR  COND_ARM-4L4E-sSEED.npz summaries, COND in lat4 lat32 drop50 churn30 slow4, ARM in
               ratio1 positive_only ftis
  --clean-dir  the specialist study's summaries: the clean runs spec_ARM-4L4E-sSEED.npz and the
               reference spec_silo-8L0E-sSEED.npz
  --costs      results/network/costs.csv (run,seconds,status,commit,numerics)

Writes OUT_DIR/REPORT.md and OUT_DIR/fig_*.png. The metrics are the specialist study's
(analysis.specialists.run_values): non-specialty pass@1 over the last K evaluations, cumulative
own reward. The primary family (30): COND_ARM against clean ARM on both metrics, Holm over all
30; the secondary family (30): COND_ARM against spec_silo 8/0, Holm within it. Each paired by seed
with a Student t 95% CI and the exact sign-flip p. What survives: S = mean(COND - silo) /
mean(clean - silo) with a 95% Fieller interval. A missing or incomplete run is a warning and
leaves fewer seeds; no run at all gives a REPORT.md that says so; mixed numerics are refused."""
import os
import sys

import numpy as np

from . import figures
from .errors import AnalysisError
from .paired import t975
from .report import fmt, table, this_report
from .runs import require_one_numerics
from .specialists import TASKS, eval_table, node_means, run_values
from .studies import (ArmStudy, costs_line, family_section, ignored_and_warnings, interim_lines, no_runs_text,
                      provenance_head, read_costs, spread_text, study_main, write_report)

CONDS = ("lat4", "lat32", "drop50", "churn30", "slow4")
ARMS = ("ratio1", "positive_only", "ftis")
SEEDS = (1, 2, 3, 4)
SPLIT = "4L4E"
SILO = ("spec_silo", "8L0E")
SLOW, TWINS = (0, 5), (4, 1)  # the slow nodes and their fast twins (same specialty)
DIGITS = {"nonspec": 3, "own": 1}
# what each condition sets (README.md, 'Conditions'); a run whose config says otherwise is a warning
KEYS = {"lat4": {"net.latency": "4"}, "lat32": {"net.latency": "32"}, "drop50": {"net.drop": "0.5"},
        "churn30": {"net.offline": "0.3", "net.offline_len": "20"},
        "slow4": {"node.0.net.slowdown": "4", "node.5.net.slowdown": "4"}}
DIAG = ("external_age_mean", "external_age_min", "external_age_max", "shortfall", "shortfall_share", "offpolicy_weight",
        "offpolicy_capped", "offpolicy_dropped")
# only ftis weights its received tokens; sapo before 2026-12-04 logged 0 for these in a round
# without a loss token (src/rl/grpo.c), which no other arm's row should show as a weight
WEIGHT_COLUMNS = ("offpolicy_weight", "offpolicy_capped", "offpolicy_dropped")
AGE_BINS = (0, 1, 2, 4, 8, 16, 32, 64, np.inf)


def metric_labels(k):
    return {"nonspec": f"non-specialty pass@1, last {k} evaluations", "own": "cumulative own reward"}


def clean(arm):
    return f"spec_{arm}"


PRIMARY = [(f"{m}: {c}_{a} vs clean {a}", m, f"{c}_{a}", SPLIT, clean(a), SPLIT)
           for m in ("nonspec", "own") for c in CONDS for a in ARMS]
SECONDARY = [(f"{m}: {c}_{a} vs spec_silo 8/0", m, f"{c}_{a}", SPLIT) + SILO
             for m in ("nonspec", "own") for c in CONDS for a in ARMS]
SCOPE = ("What a finding holds for: this swarm, 8 specialised 133k-parameter byte models on four tasks, these "
         "network settings (p2p transport on the virtual clock), 1000 rounds, and no more. The families were fixed in "
         "results/network/README.md before any run; everything else here is descriptive.")


# ---- one run -------------------------------------------------------------------------------

def net_values(run, arm, last_k):
    """analysis.specialists.run_values plus the per-node non-specialty pass@1 and own reward
    (for the slow nodes) and the network diagnostics' per-round node means."""
    v = run_values(run, arm, last_k)
    v["own_node"] = run.per_node["reward_own"].sum(axis=1)
    v["nonspec_node"] = None
    tab, _ = eval_table(run)
    if tab is not None and not np.isnan(tab[2]).any() and all(s in TASKS for s in run.specialty):
        ns = node_means(tab[2], [TASKS.index(s) for s in run.specialty], "nonspec")
        v["nonspec_node"] = ns[:, -last_k:].mean(axis=1)
    for c in DIAG:
        v[c] = run.node_mean[c] if c in run.node_mean else np.full(run.n_rounds, np.nan)
    return v


class Study(ArmStudy):
    """The network runs of summary_dir and the clean runs and silo of clean_dir as one study."""

    def __init__(self, summary_dir, clean_dir, seeds, last_k):
        values_of = lambda e: net_values(e.run, e.arm, last_k)  # noqa: E731
        super().__init__(summary_dir, {f"{c}_{a}": (SPLIT,) for c in CONDS for a in ARMS}, seeds, values_of,
                         allow_empty=True)
        ref = ArmStudy(clean_dir, {**{clean(a): (SPLIT,) for a in ARMS}, SILO[0]: (SILO[1],)}, seeds, values_of,
                       allow_empty=True)
        self.n_network = len(self.entries)
        self.entries.update(ref.entries)
        self.warnings += ref.warnings
        self.ignored += [f"{x} (clean dir)" for x in ref.ignored if not x.startswith(("spec_", "gen_"))]
        require_one_numerics((e.path, e.run) for e in self.entries.values())
        for e in self.entries.values():
            for note in getattr(e, "values", {}).get("notes", []):
                self.warnings.append(f"{e.path}: {note}")
            cond = e.arm.split("_", 1)[0]
            for key, want in KEYS.get(cond, {}).items():
                got = e.run.config.differs(key, want)
                if got is not None:
                    self.warnings.append(f"{e.path}: {key} = {got}, the plan's {cond} sets {want}")

    def expected(self):
        return len(CONDS) * len(ARMS) * len(self.seeds)


# ---- what survives -------------------------------------------------------------------------

def fieller(a, b):
    """S = mean(a) / mean(b) of paired values (a_i, b_i) with its 95% Fieller interval (Student t,
    n - 1 df): the S for which the paired t test of a - S b does not reject. Returns (S, lo, hi,
    n); lo, hi NaN below 2 pairs, and (S, -inf, inf) when mean(b)'s CI includes 0 (unbounded)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = a.size
    if n == 0 or b.mean() == 0:  # no S (said so when n > 0)
        return float("nan"), float("nan"), float("nan"), n
    s = float(a.mean() / b.mean())
    if n < 2:
        return s, float("nan"), float("nan"), n
    t2 = t975(n - 1) ** 2
    cov = np.cov(np.stack([a, b]), ddof=1) / n
    qa = b.mean() ** 2 - t2 * cov[1, 1]
    qb = a.mean() * b.mean() - t2 * cov[0, 1]
    qc = a.mean() ** 2 - t2 * cov[0, 0]
    disc = qb * qb - qa * qc
    if qa <= 0 or disc < 0:
        return s, float("-inf"), float("inf"), n
    r = np.sqrt(disc)
    return s, float((qb - r) / qa), float((qb + r) / qa), n


def survival(study, cond, arm, key):
    """fieller() of (COND - silo, clean - silo) over the seeds all three have."""
    c, cl, si = (study.values(f"{cond}_{arm}", SPLIT, key), study.values(clean(arm), SPLIT, key),
                 study.values(*SILO, key))
    seeds = sorted(s for s in c if s in cl and s in si and all(np.isfinite(x[s]) for x in (c, cl, si)))
    return fieller([c[s] - si[s] for s in seeds], [cl[s] - si[s] for s in seeds])


def s_text(f):
    s, lo, hi, n = f
    if not np.isfinite(s):
        return "undefined: clean - silo is 0" if n else "–"
    if not np.isfinite(lo) and not np.isnan(lo):
        return f"{s:.2f} (unbounded: clean - silo not distinguishable from 0)"
    return f"{s:.2f} [{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) else f"{s:.2f}"


def section_survival(study):
    rows, out = [], {}
    for cond in CONDS:
        for arm in ARMS:
            fs = {m: survival(study, cond, arm, m) for m in ("nonspec", "own")}
            out[(cond, arm)] = fs
            rows.append([cond, arm, fs["nonspec"][3], s_text(fs["nonspec"]), s_text(fs["own"])])
    return out, "\n\n".join([
        "## What survives (descriptive)",
        "S = mean(COND - silo) / mean(clean - silo) over the seeds with all three runs, on each primary metric: 1 "
        "keeps all that sharing gives over spec_silo 8/0, 0 none of it. In brackets the 95% Fieller interval from "
        "the paired seed differences (Student t, n - 1 df); unbounded when clean - silo's own interval includes 0.",
        table(["condition", "arm", "seeds", "S, non-specialty pass@1", "S, own reward"], rows,
              ["l", "l", "r", "l", "l"]),
        "![survival](fig_survival.png)"])


# ---- descriptive sections ------------------------------------------------------------------

def section_slow(study):
    rows = []
    for name in [f"slow4_{a}" for a in ARMS] + [clean(a) for a in ARMS]:
        es = [e for e in study.used(name, SPLIT)]
        get = lambda key, nodes: [float(np.mean(e.values[key][list(nodes)])) for e in es  # noqa: E731
                                  if e.values.get(key) is not None]
        rows.append([name, len(es)] + [spread_text(get(k, n), DIGITS[m]) for k, m in
                                       (("nonspec_node", "nonspec"), ("own_node", "own")) for n in (SLOW, TWINS)])
    return "\n\n".join([
        "## Slow nodes (descriptive)",
        "Under slow4 nodes 0 and 5 (base_conversion, basic_arithmetic) take 4x as long a round; nodes 4 and 1 are "
        "their fast twins of the same specialty. Per node, mean over the two nodes, mean over seeds (range); the "
        "clean runs beside them.",
        table(["run", "seeds", "non-specialty pass@1, slow (0, 5)", "non-specialty pass@1, twins (4, 1)",
               "own reward, slow (0, 5)", "own reward, twins (4, 1)"], rows)])


def _fin(x):
    return float(np.nanmean(x)) if np.isfinite(x).any() else float("nan")


def by_age(study, names):
    """Binned per-round (age, weight, drop) of the runs named: [(bin label, rounds, weight, drop)]."""
    age, w, dr = [], [], []
    for name in names:
        for e in study.used(name, SPLIT):
            age.append(e.values["external_age_mean"])
            w.append(e.values["offpolicy_weight"])
            dr.append(e.values["offpolicy_dropped"])
    if not age:
        return [], (np.array([]),) * 3
    age, w, dr = np.concatenate(age), np.concatenate(w), np.concatenate(dr)
    out = []
    for lo, hi in zip(AGE_BINS[:-1], AGE_BINS[1:]):
        sel = np.isfinite(age) & (age >= lo) & (age < hi)
        if sel.any():
            label = f"[{lo:g}, {hi:g})" if np.isfinite(hi) else f">= {lo:g}"
            out.append((label, int(sel.sum()), _fin(w[sel]), _fin(dr[sel])))
    return out, (age, w, dr)


def section_diagnostics(study):
    rows = []
    for name in [f"{c}_{a}" for c in CONDS for a in ARMS] + [clean(a) for a in ARMS] + ["spec_silo"]:
        split = SILO[1] if name == "spec_silo" else SPLIT
        es = study.used(name, split)
        rows.append([name, len(es)] + ["–" if c in WEIGHT_COLUMNS and not name.endswith("_ftis") else
                                        spread_text([_fin(e.values[c]) for e in es if np.isfinite(e.values[c]).any()], 3)
                                        for c in DIAG])
    binned, _ = by_age(study, [f"{c}_ftis" for c in CONDS] + [clean("ftis")])
    return "\n\n".join([
        "## Diagnostics (descriptive)",
        "From the summaries' node-mean columns (`mean/<column>`), mean over rounds (those that log it), then mean over "
        "seeds (range): the external groups' age in rounds (mean, min, max), the shortfall (how many of the J = 4 "
        "external groups a node wanted its pool could not provide, per node and round: 0 to 4, a count), the "
        "shortfall share (the share of node-rounds with fewer than J external groups, `mean/shortfall_share`: over "
        "the seeds whose summaries keep it, those made from the node logs since 2026-12-04; `–` where none does), "
        "the importance weight, its capped share and the F-TIS drop rate.",
        "The age is the receiver's round minus the round its sender sent the group in (docs/SWARM.md). Under slow4 "
        "the slow nodes' rounds lag the others' 4x, so the age holds that skew as well as the delay: a slow node's "
        "groups from fast peers have negative ages, a fast node's groups from slow peers ages far above any delay. "
        "Slow4's ages measure the skew of rounds, not staleness alone; the by-age table bins ages of 0 and more.",
        table(["run", "seeds"] + list(DIAG), rows),
        "By age (ftis under every condition and clean): the per-round importance weight and F-TIS drop rate against "
        "the round's mean external age, rounds pooled over runs and seeds (the weights are logged per round, not "
        "per group).",
        table(["mean external age (rounds)", "rounds", "importance weight", "F-TIS drop rate"],
              [[b, n, fmt(w, 3), fmt(d, 3)] for b, n, w, d in binned]) if binned else "No round logs an age.",
        "![by age](fig_age.png)"])


# ---- figures -------------------------------------------------------------------------------

def survival_figure(surv, out_dir):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=False)
    for ax, (m, title) in zip(axes, (("nonspec", "non-specialty pass@1"), ("own", "cumulative own reward"))):
        for i, arm in enumerate(ARMS):
            xs = np.arange(len(CONDS)) + (i - 1) * 0.25
            for x, cond in zip(xs, CONDS):
                s, lo, hi, _ = surv[(cond, arm)][m]
                if not np.isfinite(s):
                    continue
                ax.plot([x], [s], "o", color=f"C{i}", label=arm if cond == CONDS[0] else None,
                        mfc=f"C{i}" if np.isfinite(lo) else "none")
                if np.isfinite(lo) and np.isfinite(hi):
                    ax.plot([x, x], [lo, hi], "-", color=f"C{i}")
        ax.axhline(1, color="grey", lw=0.8)
        ax.axhline(0, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(CONDS)))
        ax.set_xticklabels(CONDS)
        ax.set_title(f"S on {title}, 95% Fieller (hollow: unbounded)", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "fig_survival.png"), dpi=figures.DPI)
    plt.close(fig)


def age_figure(study, out_dir):
    """Left: the distribution of the per-round mean external age by condition; right: the ftis
    arms' importance weight and drop rate against it."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    by_cond = {}
    for cond in ("clean",) + CONDS:
        names = [clean(a) for a in ARMS] if cond == "clean" else [f"{cond}_{a}" for a in ARMS]
        ages = [e.values["external_age_mean"] for n in names for e in study.used(n, SPLIT)]
        ages = np.concatenate(ages) if ages else np.array([])
        by_cond[cond] = ages[np.isfinite(ages)]
    pooled = np.concatenate(list(by_cond.values()))
    if pooled.size:  # one set of bins for all (whole rounds where the range allows), counts on a log scale:
        lo, hi = np.floor(pooled.min()), np.ceil(pooled.max())  # the clean spike and slow4's tails both show
        bins = np.linspace(lo - 0.5, hi + 0.5, int(min(hi - lo + 2, 121)))
        for i, (cond, ages) in enumerate(by_cond.items()):
            if ages.size:
                axes[0].hist(ages, bins=bins, histtype="step", color=f"C{i}", label=cond)
        axes[0].set_yscale("log")
        axes[0].set_ylabel("rounds (log scale)")
    _, (age, w, dr) = by_age(study, [f"{c}_ftis" for c in CONDS] + [clean("ftis")])
    if age.size:
        axes[1].scatter(age, w, s=4, alpha=0.4, label="importance weight")
        axes[1].scatter(age, dr, s=4, alpha=0.4, label="F-TIS drop rate")
    figures.finish_panels(fig, axes, ("mean external age per round (node mean), all arms; slow4: skew of rounds too",
                                      "ftis: per round, against the round's mean external age"),
                          ("rounds", "mean external age (rounds)"), out_dir, "fig_age.png", title_size=9)


# ---- the report ----------------------------------------------------------------------------

TITLE = "# The network at learning scale (issue 36)"


def section_provenance(study, costs, machine, argv):
    lines = provenance_head("analysis.network", "Runs: experiments/network/ (COND.ini over the specialists' configs, "
                            "seeds 1-4); the clean runs and the silo are the specialist study's.", machine, argv)
    if costs:
        lines.append(costs_line(costs, study.warnings))
    rows = [[f"`{os.path.basename(e.path)}`", e.run.n_rounds, e.status,
             costs.get(f"{a}-{sp}-s{sd}", {}).get("commit", "–"), e.run.numerics, e.run.blas_kernel or "–"]
            for (a, sp, sd), e in sorted(study.entries.items())]
    lines.append(f"{study.n_network} of the {study.expected()} planned network runs are in (planned seeds: "
                 f"{', '.join(map(str, study.seeds))}).")
    if rows:
        lines.append(table(["summary", "rounds", "status", "commit", "numerics", "BLAS kernel"], rows))
        lines.append("BLAS kernel: OpenBLAS's sgemm kernel on the nodes (`–`: a summary written before "
                     "summaries carried it; runs of recorded kernels are checked to be one kernel).")
    lines += ignored_and_warnings(study)
    return "\n\n".join(lines)


def section_definitions(last_k):
    return "\n\n".join([
        "## The question and the metrics",
        "How much of what sharing gives survives stale, lost and missing messages and slow peers, and which way of "
        "training received answers degrades least? The specialist swarm (8 nodes, node k warmed up on task k mod 4, "
        "4 local and 4 external groups) under five network conditions (lat4, lat32: every message 4 or 32 rounds "
        "late; drop50: half the messages lost; churn30: nodes offline 30% of rounds; slow4: nodes 0 and 5 4x slower), "
        "three arms (ratio1, positive_only, ftis); clean: the specialist study's runs of the same arm and seed.",
        f"- **Primary 1, non-specialty pass@1**: per node the mean held-out pass@1 over the three tasks it was not "
        f"warmed on, the mean over nodes, averaged over the last {last_k} evaluations.\n"
        "- **Primary 2, cumulative own reward**: the sum over nodes and rounds of each node's own mean reward.\n"
        "- Every comparison is paired by seed: the Student t 95% CI, the t test's p, Holm's p within its family and "
        "the exact sign-flip p. Everything outside the two families is descriptive."])


def build(summary_dir, out_dir, clean_dir, costs=None, machine=None, seeds=SEEDS, last_k=5, argv=()):
    study = Study(summary_dir, clean_dir, seeds, last_k)
    os.makedirs(out_dir, exist_ok=True)
    costs_rows = read_costs(costs)
    labels = metric_labels(last_k)
    if not study.n_network:
        parts = [TITLE, no_runs_text(summary_dir, "conditions, arms and seeds", study, "results/network/README.md"),
                 this_report("analysis.network", argv), SCOPE]
    else:
        prim = family_section(study, PRIMARY, DIGITS, "The primary family: what the network costs each arm",
                              "Each COND_ARM against the same arm's clean run (the specialist study's), paired by seed,"
                              " on both primary metrics.", labels)
        sec = family_section(study, SECONDARY, DIGITS, "The secondary family: against the silo",
                             "Each COND_ARM against spec_silo 8/0 of the same seed.", labels)
        surv, surv_md = section_survival(study)
        survival_figure(surv, out_dir)
        diag = section_diagnostics(study)
        age_figure(study, out_dir)
        parts = [TITLE] + interim_lines(study.n_network, study.expected(), "results/network/README.md") + [
                 section_definitions(last_k), section_provenance(study, costs_rows, machine, argv), prim[1],
                 sec[1], surv_md,
                 section_slow(study), diag, SCOPE]
        study.primary, study.secondary, study.survival = prim[0], sec[0], surv
    write_report(out_dir, parts)
    return study


def main(argv=None):
    def run(a, seeds, argv):
        if not a.clean_dir:
            raise AnalysisError("--clean-dir (the specialist study's summaries) is required")
        build(a.summary_dir, a.out, a.clean_dir, a.costs, a.machine, seeds, a.last_k, argv)
    return study_main("analysis.network", __doc__, "1,2,3,4", "costs.csv (run,seconds,status,commit,numerics)",
                      [("--clean-dir", dict(help="the specialist study's summaries (spec_ARM-4L4E, spec_silo-8L0E)"))],
                      run, argv)


if __name__ == "__main__":
    sys.exit(main())
