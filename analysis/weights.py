"""The weights study's report: in a swarm whose nodes know different things, which buys the most
skill per byte, sharing experience (SAPO's rollouts), sharing weights (DiLoCo, NoLoCo) or both,
on a clean and on a hard network? (results/weights/; the plan, fixed before any reported run,
is its README.md: the networks, arms, metrics and comparison families below are that page's and
do not change after.)

Usage:
  python3 -m analysis.weights SUMMARY_DIR -o OUT_DIR --clean-dir SPECIALISTS_SUMMARY_DIR
      --best positive_only|tis|ftis [--costs FILE] [--machine TEXT] [--seeds 1,2,3,4] [--last-k 5]

  SUMMARY_DIR  NET_ARM-SPLIT-sSEED.npz summaries: clean_diloco, clean_noloco (8L0E),
               clean_noloco_sapo (4L4E); hard_sapo_ratio1, hard_sapo_best, hard_noloco_sapo (4L4E),
               hard_diloco, hard_noloco (8L0E)
  --clean-dir  the specialist study's summaries: spec_silo-8L0E (the silo of both networks: it
               sends only rollouts nobody reads), spec_ratio1-4L4E (clean sapo_ratio1), spec_BEST-4L4E (clean sapo_best)
  --best       the correction declared as sapo_best (results/weights/sapo_best.keys)
  --costs      results/weights/costs.csv (run,seconds,status,commit,numerics)

Writes OUT_DIR/REPORT.md and OUT_DIR/fig_*.png. Metrics (analysis.specialists.run_values):
primary 1, non-specialty pass@1 over the last K evaluations; cumulative own reward; specialty
pass@1; bytes sent per node and round (the mean over rounds of mean/bytes_sent: rollouts and
weight messages together); skill per byte, (primary 1 of ARM - the silo's) / (MB sent per node
over the run), per seed, with a t interval. The primary family (16, Holm over all): on each
network each sharing arm against the silo (10), and diloco, noloco, noloco_sapo against
sapo_best (6), on primary 1; the secondary family: the same 16 on own reward. A missing or
incomplete run is a warning and leaves fewer seeds; no run at all gives a REPORT.md that says so;
mixed numerics are refused. Deterministic: no dates."""
import os
import sys

import numpy as np

from . import figures
from .errors import AnalysisError
from .paired import ci95
from .report import table, this_report
from .runs import require_one_numerics
from .specialists import run_values
from .studies import (ArmStudy, costs_line, family_section, ignored_and_warnings, interim_lines, no_runs_text,
                      provenance_head, read_costs, spread_text, study_main, write_report)

NETS = ("clean", "hard")
SHARING = ("sapo_ratio1", "sapo_best", "diloco", "noloco", "noloco_sapo")
ARMS = ("silo",) + SHARING
SPLIT = {"silo": "8L0E", "sapo_ratio1": "4L4E", "sapo_best": "4L4E", "diloco": "8L0E", "noloco": "8L0E",
         "noloco_sapo": "4L4E"}
BESTS = ("positive_only", "tis", "ftis")
SEEDS = (1, 2, 3, 4)
# the runs the specialist study made (clean network; nothing its silo sends is read, so it serves both)
FROM_SPECIALISTS = {("clean", "silo"), ("hard", "silo"), ("clean", "sapo_ratio1"), ("clean", "sapo_best")}
HARD = {"net.latency": "4", "net.drop": "0.3", "net.bandwidth": "266112"}  # README.md, 'Networks'
DEFAULTS = {("net.latency", "0"), ("net.drop", "0"), ("net.bandwidth", "0"), ("sync.method", "none")}  # unset: these
DIGITS = {"nonspec": 3, "own": 1}
DIAG = ("sync_peers", "sync_age", "sync_dropped", "external_age_mean", "shortfall", "shortfall_share", "msgs_dropped")
PER_STEP = ("sync_peers", "sync_dropped")  # logged 0 between outer steps: read on the steps' rounds only


def metric_labels(k):
    return {"nonspec": f"non-specialty pass@1, last {k} evaluations", "own": "cumulative own reward"}


def name(net, arm):
    return f"{net}_{arm}"


def _family(metric):
    return ([(f"{metric}: {name(n, a)} vs {name(n, 'silo')}", metric, name(n, a), SPLIT[a], name(n, "silo"), "8L0E")
             for n in NETS for a in SHARING] +
            [(f"{metric}: {name(n, a)} vs {name(n, 'sapo_best')}", metric, name(n, a), SPLIT[a], name(n, "sapo_best"),
              "4L4E") for n in NETS for a in ("diloco", "noloco", "noloco_sapo")])


PRIMARY, SECONDARY = _family("nonspec"), _family("own")
SCOPE = ("What a finding holds for: this swarm, 8 specialised 133k-parameter byte models on four tasks, these two "
         "networks (p2p transport on the virtual clock; hard: latency 4 rounds, 30% of messages lost, 266,112 bytes a "
         "round per sending node), the outer settings chosen on seed 0, 1000 rounds, and no more. The families were "
         "fixed in results/weights/README.md before any run; everything else here is descriptive.")


# ---- one run -------------------------------------------------------------------------------

def weights_values(run, last_k):
    """analysis.specialists.run_values plus bytes sent per node and round, MB per node over the
    run, the share of rounds in which every node holds the same weights (mean/weights_distinct,
    where the summary has it) and the diagnostics' per-round node means."""
    v = run_values(run, "spec_run", last_k)
    sent = run.node_mean.get("bytes_sent")
    v["bytes"] = float(np.nanmean(sent)) if sent is not None and np.isfinite(sent).any() else float("nan")
    v["mb"] = v["bytes"] * run.n_rounds / 1e6
    distinct = run.node_mean.get("weights_distinct")
    v["same"] = float(np.mean(distinct == 1)) if distinct is not None else float("nan")
    for c in DIAG:
        v[c] = run.node_mean[c] if c in run.node_mean else np.full(run.n_rounds, np.nan)
    v["weight_bytes"] = 0.0
    every = run.config.get("sync.every")
    if every is not None and run.config.get("sync.method", "none") != "none":
        step = (np.asarray(run.rounds) + 1) % int(float(every)) == 0  # rounds that end with an outer step
        for c in PER_STEP:
            v[c] = v[c][step]
        # weight messages leave on the steps' rounds only; a round without one sends rollouts alone
        v["weight_bytes"] = (float(np.nansum(sent[step] - np.nanmean(sent[~step]))) / run.n_rounds
                             if sent is not None and step.any() and (~step).any() else float("nan"))
    return v


def expected_keys(net, arm, best):
    """{key: value} a run of ARM on NET must have: the network's and the arm's own keys."""
    keys = dict(HARD) if net == "hard" else {"net.latency": "0", "net.drop": "0", "net.bandwidth": "0"}
    keys["sync.method"] = {"diloco": "diloco", "noloco": "noloco", "noloco_sapo": "noloco"}.get(arm, "none")
    if arm in ("sapo_ratio1", "sapo_best", "noloco_sapo"):
        keys["grpo.external"] = "ratio1" if arm == "sapo_ratio1" else best
    return keys


class Study(ArmStudy):
    """The weights runs of summary_dir and, under this study's names, the specialist study's silo
    and clean SAPO runs of clean_dir, as one study."""

    def __init__(self, summary_dir, clean_dir, best, seeds, last_k):
        if best not in BESTS:
            raise AnalysisError(f"--best {best!r}: expected one of {', '.join(BESTS)}")
        self.best = best
        values_of = lambda e: weights_values(e.run, last_k)  # noqa: E731
        own = {name(n, a): (SPLIT[a],) for n in NETS for a in ARMS if (n, a) not in FROM_SPECIALISTS}
        super().__init__(summary_dir, own, seeds, values_of, allow_empty=True)
        self.n_weights = len(self.entries)
        ref_arms = {"spec_silo": ("8L0E",), "spec_ratio1": ("4L4E",), f"spec_{best}": ("4L4E",)}
        ref = ArmStudy(clean_dir, ref_arms, seeds, values_of, allow_empty=True)
        alias = {"spec_silo": ("clean_silo", "hard_silo"), "spec_ratio1": ("clean_sapo_ratio1",),
                 f"spec_{best}": ("clean_sapo_best",)}
        for (arm, split, seed), e in ref.entries.items():
            for new in alias[arm]:
                self.entries[(new, split, seed)] = e
        self.warnings += ref.warnings
        require_one_numerics((e.path, e.run) for e in self.entries.values())
        seen = set()
        for (arm, split, seed), e in sorted(self.entries.items()):
            net, kind = arm.split("_", 1)
            for key, want in expected_keys("clean" if kind == "silo" else net, kind, best).items():  # silo: one run
                got = e.run.config.differs(key, want)
                if got == "(not set)" and (key, want) in DEFAULTS:
                    continue
                if got is not None and (e.path, key) not in seen:
                    seen.add((e.path, key))
                    self.warnings.append(f"{e.path}: {key} = {got}, the plan's {arm} sets {want}")
            for note in getattr(e, "values", {}).get("notes", []):
                if (e.path, note) not in seen:
                    seen.add((e.path, note))
                    self.warnings.append(f"{e.path}: {note}")

    def expected(self):
        return sum((n, a) not in FROM_SPECIALISTS for n in NETS for a in ARMS) * len(self.seeds)


# ---- skill per byte ------------------------------------------------------------------------

def skill_per_byte(study, net, arm):
    """Per seed (primary 1 of ARM - the silo's) / MB sent per node over ARM's run: (mean, lo, hi,
    n) with the Student t 95% interval over seeds (NaN bounds below two)."""
    a, s = study.used(name(net, arm), SPLIT[arm]), study.values(name(net, "silo"), "8L0E", "nonspec")
    xs = [(e.values["nonspec"] - s[e.seed]) / e.values["mb"] for e in a
          if e.seed in s and np.isfinite(e.values["nonspec"]) and np.isfinite(s[e.seed]) and e.values["mb"] > 0]
    mean, _, half, _ = ci95(xs)
    return mean, mean - half, mean + half, len(xs)


def section_arms(study):
    rows = []
    for net in NETS:
        for arm in ARMS:
            es = study.used(name(net, arm), SPLIT[arm])
            get = lambda k: [e.values[k] for e in es if np.isfinite(e.values[k])]  # noqa: E731
            spb = skill_per_byte(study, net, arm) if arm != "silo" else (float("nan"),) * 3 + (0,)
            spb_text = "–" if not np.isfinite(spb[0]) else (
                f"{spb[0]:+.5f}" + (f" [{spb[1]:+.5f}, {spb[2]:+.5f}]" if np.isfinite(spb[1]) else ""))
            rows.append([name(net, arm), SPLIT[arm], len(es), spread_text(get("nonspec"), 3), spread_text(get("spec"), 3),
                         spread_text(get("own"), 1), spread_text(get("bytes"), 0), spread_text(get("weight_bytes"), 0),
                         spread_text(get("mb"), 2), spb_text])
    return "\n\n".join([
        "## The arms",
        "Per arm and network, mean over seeds (min-max). Bytes: sent per node and round, rollouts and weight messages "
        "together (the mean over rounds of `mean/bytes_sent`), and of which weights: what the rounds that end with an "
        "outer step sent beyond the mean of the other rounds (rollouts alone), over all rounds (an estimate: the logs "
        "count bytes, not kinds); MB: sent per node over the whole run. Skill per byte: "
        "per seed, (primary 1 of the arm - the silo's) / MB, mean over seeds with its 95% t interval (descriptive). "
        "clean_silo and hard_silo are the same runs (spec_silo 8/0: it sends its rollouts, which nobody reads); clean_sapo_ratio1 and "
        f"clean_sapo_best are the specialist study's spec_ratio1 and spec_{study.best}.",
        table(["run", "split", "seeds", "non-specialty pass@1", "specialty pass@1", "own reward", "bytes / node / round",
               "of which weights", "MB / node", "pass@1 gained per MB [95% CI]"], rows, ["l", "l"] + ["r"] * 8),
        "![skill and bytes](fig_bytes.png)"])


def section_diagnostics(study):
    rows = []
    for net in NETS:
        for arm in SHARING:
            es = study.used(name(net, arm), SPLIT[arm])
            cells = [spread_text([float(np.nanmean(e.values[c])) for e in es if np.isfinite(e.values[c]).any()], 2)
                     for c in DIAG]
            same = [e.values["same"] for e in es if np.isfinite(e.values["same"])]
            rows.append([name(net, arm), len(es)] + cells + [spread_text(same, 2)])
    return "\n\n".join([
        "## Diagnostics (descriptive)",
        "Node means per round (`mean/<column>`), mean over rounds (those that log it), mean over seeds (range): the "
        "peers whose weights entered an outer step and their age in rounds (0 for a step no peer entered), the weight "
        "messages dropped (peers and drops per outer step: the mean over the rounds that end with one, every "
        "`sync.every`-th), the external "
        "rollout groups' age, the shortfall (external groups short of J per node and round) and the share of "
        "node-rounds that went short, the messages lost; and the share of rounds in which every node "
        "holds the same weights (`weights_digest`, where the summary counts distinct digests).",
        table(["run", "seeds"] + list(DIAG) + ["rounds with one set of weights"], rows)])


# ---- figures -------------------------------------------------------------------------------

def bytes_figure(study, out_dir):
    """Left: non-specialty pass@1 against MB sent per node (seeds as small dots, arm means as
    large markers), one marker shape per network, the silo as a dashed level (it shares nothing);
    right: non-specialty pass@1 over rounds by arm."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.4))
    for i, arm in enumerate(ARMS):
        for net, marker in zip(NETS, ("o", "s")):
            es = [e for e in study.used(name(net, arm), SPLIT[arm]) if np.isfinite(e.values["nonspec"])]
            if not es:
                continue
            xs = [max(e.values["mb"], 1e-3) for e in es]
            ys = [e.values["nonspec"] for e in es]
            if arm == "silo":  # what it sends nobody reads: a level, not a point at its bytes
                if net == NETS[0]:
                    axes[0].axhline(np.mean(ys), color=f"C{i}", ls="--", lw=1, label=f"silo, no sharing ({len(es)})")
            else:
                axes[0].scatter(xs, ys, s=10, color=f"C{i}", marker=marker, alpha=0.4)
                axes[0].scatter([np.mean(xs)], [np.mean(ys)], s=60, color=f"C{i}", marker=marker,
                                label=f"{name(net, arm)} ({len(es)})")
            ax = axes[1 + NETS.index(net)]
            ok = [e for e in es if e.values.get("curves") is not None]
            if ok:
                n = min(len(e.values["trained"]) for e in ok)
                ys = np.stack([e.values["curves"]["nonspec"][:n] for e in ok])
                ax.plot(ok[0].values["trained"][:n], ys.mean(axis=0), "o-", ms=3, color=f"C{i}", label=f"{arm} ({len(ok)})")
                ax.fill_between(ok[0].values["trained"][:n], ys.min(axis=0), ys.max(axis=0), color=f"C{i}", alpha=0.12,
                                lw=0)
    axes[0].set_xscale("log")
    return figures.finish_panels(
        fig, axes, ("non-specialty pass@1 against MB sent per node (circles clean, squares hard)",
                    "clean: non-specialty pass@1 (mean, min-max)", "hard: non-specialty pass@1 (mean, min-max)"),
        ("MB sent per node over the run (log)", "round", "round"), out_dir, "fig_bytes.png", title_size=9)


def changes_figure(prim, sec, out_dir):
    rows = lambda ps, fam: [(c[0].split(": ", 1)[1], {"change": ps[c[0]]}) for c in fam]  # noqa: E731
    return figures.paired_changes([("non-specialty pass@1", rows(prim, PRIMARY)), ("own reward", rows(sec, SECONDARY))],
                                  ["change"], out_dir, "fig_changes.png",
                                  "Paired changes, the primary and secondary families")


# ---- the report ----------------------------------------------------------------------------

TITLE = "# Share experience or share weights? (issue 38)"


def section_definitions(study, last_k):
    return "\n\n".join([
        "## The question and the metrics",
        "In a swarm whose nodes know different things, which buys the most skill per byte: sharing experience (SAPO's "
        "rollouts), sharing weights (DiLoCo's averaged pseudo-gradient, NoLoCo's group averages) or both; and does the "
        "answer change on a hard network? The specialist swarm (8 nodes, node k warmed up on task k mod 4) under "
        f"silo 8/0, sapo_ratio1 and sapo_best (grpo.external = {study.best}, declared before any run) at 4/4, diloco "
        "and noloco at 8/0 (settings chosen on seed 0), noloco_sapo at 4/4, on the clean network and the hard one.",
        f"- **Primary 1, non-specialty pass@1**: per node the mean held-out pass@1 over the three tasks it was not "
        f"warmed on, the mean over nodes, averaged over the last {last_k} evaluations.\n"
        "- **Secondary, cumulative own reward**: the sum over nodes and rounds of each node's own mean reward.\n"
        "- Every comparison is paired by seed: the Student t 95% CI, the t test's p, Holm's p within its family and "
        "the exact sign-flip p. Everything outside the two families is descriptive."])


def section_provenance(study, costs, machine, argv):
    lines = provenance_head("analysis.weights", "Runs: experiments/weights/run.sh (seeds 1-4; the settings of "
                            "results/weights/calibration/, chosen on seed 0); the silo and the clean SAPO arms are the "
                            "specialist study's.", machine, argv)
    if costs:
        lines.append(costs_line(costs, study.warnings))
    rows = sorted({(os.path.basename(e.path), e.run.n_rounds, e.status, e.run.numerics, e.run.blas_kernel or "–")
                   for e in study.entries.values()})
    lines.append(f"{study.n_weights} of the {study.expected()} planned runs of this study are in (seeds "
                 f"{', '.join(map(str, study.seeds))}).")
    if rows:
        lines.append(table(["summary", "rounds", "status", "numerics", "BLAS kernel"], [list(r) for r in rows]))
    lines += ignored_and_warnings(study)
    return "\n\n".join(lines)


def build(summary_dir, out_dir, clean_dir, best, costs=None, machine=None, seeds=SEEDS, last_k=5, argv=()):
    study = Study(summary_dir, clean_dir, best, seeds, last_k)
    os.makedirs(out_dir, exist_ok=True)
    costs_rows = read_costs(costs)
    labels = metric_labels(last_k)
    if not study.n_weights:
        parts = [TITLE, no_runs_text(summary_dir, "networks, arms and seeds", study, "results/weights/README.md"),
                 this_report("analysis.weights", argv), SCOPE]
    else:
        prim = family_section(study, PRIMARY, DIGITS, "The primary family: non-specialty pass@1",
                              "On each network each sharing arm against the silo, and the weight-sharing arms against "
                              "sapo_best, paired by seed.", labels)
        sec = family_section(study, SECONDARY, DIGITS, "The secondary family: own reward", "The same 16 comparisons.", labels)
        changes_figure(prim[0], sec[0], out_dir)
        arms = section_arms(study)
        bytes_figure(study, out_dir)
        interim = interim_lines(study.n_weights, study.expected(), "results/weights/README.md")
        parts = [TITLE] + interim + [section_definitions(study, last_k),
                                     section_provenance(study, costs_rows, machine, argv), prim[1], sec[1],
                                     "![paired changes](fig_changes.png)", arms, section_diagnostics(study), SCOPE]
        study.primary, study.secondary = prim[0], sec[0]
    write_report(out_dir, parts)
    return study


def main(argv=None):
    def run(a, seeds, argv):
        if not a.clean_dir:
            raise AnalysisError("--clean-dir (the specialist study's summaries) is required")
        if not a.best:
            raise AnalysisError("--best (the correction declared as sapo_best) is required")
        build(a.summary_dir, a.out, a.clean_dir, a.best, a.costs, a.machine, seeds, a.last_k, argv)
    return study_main("analysis.weights", __doc__, "1,2,3,4", "costs.csv (run,seconds,status,commit,numerics)",
                      [("--clean-dir", dict(help="the specialist study's summaries (spec_silo-8L0E, spec_ARM-4L4E)")),
                       ("--best", dict(help="the correction declared as sapo_best: positive_only, tis or ftis"))],
                      run, argv)


if __name__ == "__main__":
    sys.exit(main())
