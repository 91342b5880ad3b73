"""The mini-paper report: the SAPO study's splits in two arms, paired by seed.

Usage:
  python3 -m analysis.minipaper SUMMARY_DIR -o OUT_DIR [--commands FILE] [--commit SHA]
      [--machine TEXT] [--arms paper,offpolicy] [--seeds 1,2,3] [--rounds N] [--last-k 5]
      [--window 100] [--fig-seed S]

  SUMMARY_DIR  summaries written by `python3 -m analysis.summarize RUN_DIR -o DIR`, named
               ARM-SPLIT-sSEED.npz (e.g. paper-4L4E-s1.npz, offpolicy-2L6E-s3.npz); SPLIT is
               ILJE (I local, J external groups): 8L0E, 6L2E, 4L4E, 2L6E and the 4L0E control

Writes OUT_DIR/REPORT.md (provenance, per-split results as mean ± sd over seeds, paired
changes vs 8/0 and 4/4 vs 4/0 with 95% Student t intervals, the paper's four findings point by
point per arm, arms compared) and PNGs: OUT_DIR/fig_changes.png and OUT_DIR/ARM/fig*.png (the
paper's Figures 1 and 2 per arm, own and training-batch reward, pass@1, cumulative).

Missing, incomplete and substituted runs are warnings in the report, never a crash: a J = 0
split (8L0E, 4L0E) trains nothing external, so it is the same run in every arm; when
ARM-8L0E-sS.npz is missing another arm's file for the same split and seed is used (paper's
first) and the report says so. Every run is compared over its first R rounds (--rounds, by
default the configured rounds most runs share); runs with fewer logged rounds are left out of
the numbers, with a warning. Unreadable input stops with one line (exit 1). The output is
deterministic: no dates; commit and machine are what --commit and --machine say."""
import argparse
import hashlib
import os
import re
import shlex
import sys
from collections import Counter

import numpy as np

from . import figures
from .errors import AnalysisError
from .grouping import node_split
from .metrics import PAPER_WINDOW, config_metrics, eval_curve, run_metrics, window_for
from .paired import NOT_SIGNIFICANT, SIGNIFICANT, direction, mean_sd, paired, t975, trend
from .paper import PAPER_CHANGES, PAPER_TOTALS
from .report import fmt, table
from .runs import load_summary, nanmean_rows

DEFAULT_ARMS = ("paper", "offpolicy")
DEFAULT_SEEDS = (1, 2, 3)
BASELINE, CONTROL, BEST = "8L0E", "4L0E", "4L4E"
SPLITS = ("8L0E", "6L2E", "4L4E", "2L6E", "4L0E")  # the four paper splits, then the control
PAPER_FOUR = ("8L0E", "6L2E", "4L4E", "2L6E")
SHARING = ("6L2E", "4L4E", "2L6E")
COMPARISONS = (("6L2E", "8L0E"), ("4L4E", "8L0E"), ("2L6E", "8L0E"), ("4L4E", "4L0E"))
PLANNED_ROUNDS = 400
NAME = re.compile(r"^(?P<arm>.+)-(?P<split>(?P<local>\d+)L(?P<external>\d+)E)-s(?P<seed>\d+)\.npz$")

PRIMARY = "own"
METRICS = {  # key: (label, digits)
    "own": ("cumulative own reward (PRIMARY)", 2),
    "train": ("cumulative training-batch reward (genrl's logged metric, the paper's likely +94% measure)", 2),
    "pass_last": ("fixed-set pass@1 at the last evaluation", 3),
    "pass_lastk": ("fixed-set pass@1, mean of the last K evaluations", 3),
    "per_1k": ("cumulative own reward per 1,000 completions generated", 4),
}
CHANGE_METRICS = ("own", "train", "pass_last", "pass_lastk", "per_1k")
REWARD_KEYS = {"own": "reward_own", "train": "reward_train"}


def split_label(split):
    m = re.match(r"^(\d+)L(\d+)E$", split)
    return f"{m.group(1)}/{m.group(2)}" if m else split


def split_external(split):
    m = re.match(r"^(\d+)L(\d+)E$", split)
    return int(m.group(2)) if m else None


def pm(mean, sd, digits):
    """'mean ± sd' ('mean' alone for one seed, '–' for none)."""
    if not np.isfinite(mean):
        return "–"
    return fmt(mean, digits) + (f" ± {fmt(sd, digits)}" if np.isfinite(sd) else "")


def signed(x, digits):
    """+1.00 / -1.00; a value that rounds to zero is 0.00 (no sign)."""
    if x is None or not np.isfinite(x):
        return "–"
    if abs(x) < 0.5 * 10 ** -digits:
        return f"{0:.{digits}f}"
    return f"{x:+.{digits}f}"


def ci_text(p, digits):
    if not np.isfinite(p["half"]):
        return "–"
    return f"[{signed(p['lo'], digits)}, {signed(p['hi'], digits)}]"


def rel_text(p):
    if not np.isfinite(p["rel"]):
        return "–"
    out = f"{signed(100 * p['rel'], 1)}%"
    if np.isfinite(p["rel_lo"]):
        out += f" [{signed(100 * p['rel_lo'], 1)}%, {signed(100 * p['rel_hi'], 1)}%]"
    return out


def short(p, digits):
    """One comparison in a sentence: difference, CI, relative change, verdict."""
    if p["n"] == 0:
        return "no paired seeds"
    ci = f", 95% CI {ci_text(p, digits)}" if np.isfinite(p["half"]) else ""
    rel = f", {signed(100 * p['rel'], 1)}%" if np.isfinite(p["rel"]) else ""
    return f"{signed(p['mean'], digits)}{ci}{rel} (n = {p['n']}; {p['verdict']})"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


# ---- loading ------------------------------------------------------------------------------

class Entry:
    """One summary file and what was computed from it."""

    def __init__(self, arm, split, seed, path):
        self.arm, self.split, self.seed, self.path = arm, split, seed, path
        self.file = os.path.basename(path)
        self.run = None
        self.status = "used"
        self.values = {}
        self.rm = None
        self.eval_tasks = None  # (labels, (rounds, tasks) array) when the summary has a per-task evaluation


class SplitRuns:
    """The runs of one split in one arm, shaped like grouping.Configuration for figures/metrics."""

    def __init__(self, split, runs):
        self.split = split
        self.label = f"{split_label(split)} ({split})"
        self.runs = runs


def scan(summary_dir):
    """{(arm, split, seed): path} of the ARM-SPLIT-sSEED.npz files, and the other .npz names."""
    if not os.path.isdir(summary_dir):
        what = "not a directory" if os.path.exists(summary_dir) else "no such directory"
        raise AnalysisError(f"{summary_dir}: {what} (expected a folder of ARM-SPLIT-sSEED.npz summaries)")
    found, ignored = {}, []
    for f in sorted(os.listdir(summary_dir)):
        if not f.endswith(".npz"):
            continue
        m = NAME.match(f)
        if not m:
            ignored.append(f)
            continue
        found[(m.group("arm"), m.group("split"), int(m.group("seed")))] = os.path.join(summary_dir, f)
    if not found:
        raise AnalysisError(f"{summary_dir}: no ARM-SPLIT-sSEED.npz summaries in it (e.g. paper-4L4E-s1.npz, written "
                            f"by python3 -m analysis.summarize)")
    return found, ignored


def find_eval_by_task(path, run):
    """(labels, (rounds, tasks) array) of an optional per-task fixed-set evaluation in a summary:
    any entry whose name contains 'eval_by_task', (rounds, tasks) or (nodes, rounds, tasks), NaN
    where not evaluated; labels from an entry with 'label' in its name, else the summary's task
    labels when the counts match. (None, note) when absent or not understood."""
    with np.load(path, allow_pickle=False) as z:
        keys = [k for k in z.files if "eval_by_task" in k]
        if not keys:
            return None, None
        arrays = {k: z[k] for k in keys}
    label_keys = [k for k, v in arrays.items() if v.dtype.kind in "US"]
    data_keys = [k for k, v in arrays.items() if v.dtype.kind in "fiu" and v.ndim >= 2]
    if not data_keys:
        return None, f"{path}: entries {keys} named like a per-task evaluation but none is a numeric table; ignored"
    key = sorted(data_keys)[0]
    a = np.asarray(arrays[key], dtype=float)
    n_rounds = len(run.rounds)
    if a.ndim == 3 and a.shape[0] == run.n_nodes and a.shape[1] == n_rounds:
        a = nanmean_rows(a, axis=0)
    elif not (a.ndim == 2 and a.shape[0] == n_rounds):
        return None, (f"{path}: {key} has shape {a.shape}: expected (rounds {n_rounds}, tasks) or (nodes "
                      f"{run.n_nodes}, rounds, tasks); ignored")
    labels = None
    for k in sorted(label_keys):
        if arrays[k].size == a.shape[1]:
            labels = [str(x) for x in arrays[k].ravel()]
            break
    if labels is None:
        labels = list(run.task_labels) if len(run.task_labels) == a.shape[1] else [f"task {i}" for i in range(a.shape[1])]
    return (labels, a), None


def load_study(summary_dir, arms=None, seeds=DEFAULT_SEEDS):
    """Load every summary. Returns (arms, splits, seeds, entries {(arm, split, seed): Entry}
    of the files, cells {(arm, split, seed): Entry or None} of the study (substitutions
    resolved), notes [str], ignored files)."""
    found, ignored = scan(summary_dir)
    present_arms = sorted({a for a, _, _ in found})
    if arms:
        arms = list(arms)
    else:
        arms = [a for a in DEFAULT_ARMS] + [a for a in present_arms if a not in DEFAULT_ARMS]
    present_splits = {s for _, s, _ in found}
    splits = list(SPLITS) + sorted((s for s in present_splits if s not in SPLITS), key=lambda s: (split_external(s), s))
    seeds = sorted(set(seeds) | {s for _, _, s in found})
    entries = {}
    notes = []
    for key, path in sorted(found.items()):
        e = Entry(*key, path)
        e.run = load_summary(path)
        e.sha = sha256(path)
        cfg = e.run.config
        try:
            cfg_split = f"{int(cfg.get('sampling.local'))}L{int(cfg.get('sampling.external'))}E"
        except (TypeError, ValueError):
            cfg_split = None
        if cfg_split != e.split:
            notes.append(f"{path}: the file name says {e.split} but its config has sampling.local = "
                         f"{cfg.get('sampling.local')}, sampling.external = {cfg.get('sampling.external')}; "
                         f"grouped by the file name")
        if str(cfg.get("swarm.seed")) != str(e.seed):
            notes.append(f"{path}: the file name says seed {e.seed} but its config has swarm.seed = "
                         f"{cfg.get('swarm.seed')}; paired by the file name")
        tasks, note = find_eval_by_task(path, e.run)
        e.eval_tasks = tasks
        if note:
            notes.append(note)
        entries[key] = e
    for a in present_arms:
        if a not in arms:
            notes.append(f"summaries of arm '{a}' are present but not reported (--arms {','.join(arms)})")
    cells = {}
    for arm in arms:
        for split in splits:
            for seed in seeds:
                e = entries.get((arm, split, seed))
                if e is None and split_external(split) == 0:
                    donors = [a for a in ["paper"] + sorted(present_arms) if a != arm and (a, split, seed) in entries]
                    if donors:
                        e = entries[(donors[0], split, seed)]
                        notes.append(f"{arm}-{split}-s{seed}.npz is missing: using {e.file} (J = 0: no external "
                                     f"groups, so the run is the same in every arm)")
                cells[(arm, split, seed)] = e
    return arms, splits, seeds, entries, cells, notes, ignored


def choose_rounds(entries, rounds=None):
    """R: --rounds, else the configured rounds most runs share (the smaller on a tie)."""
    if rounds is not None:
        return rounds
    counts = Counter(e.run.expected_rounds for e in entries.values())
    best = max(counts.values())
    return min(r for r, c in counts.items() if c == best)


def completions_generated(run, rounds):
    """sum over nodes of I_k x L_k, times rounds: the completions the swarm sampled (evaluation
    answers not counted). L defaults to 8 when the config does not name grpo.completions."""
    total = 0
    for k, (local, _, _) in enumerate(node_split(run)):
        try:
            completions = int(run.config.node_get(k, "grpo.completions", 8))
        except (TypeError, ValueError):
            completions = 8
        total += (local or 0) * completions
    return total * rounds


def compute(entry, rounds, window, last_k):
    """The per-run numbers over the first `rounds` rounds (entry.values), or a status why not."""
    run = entry.run
    if run.n_rounds < rounds:
        entry.status = f"excluded: {run.n_rounds} of {rounds} rounds logged"
        return
    if not run.complete:
        entry.status = "used (incomplete run, but the compared rounds are all logged)"
    cut = run.truncated(rounds)
    entry.cut = cut
    rm = run_metrics(cut, window)
    entry.rm = rm
    ev = eval_curve(cut)
    v = {"own": rm["reward_own"]["cumulative"], "train": rm["reward_train"]["cumulative"]}
    v["pass_last"] = float(ev["mean"][-1]) if ev["rounds"].size else float("nan")
    v["pass_lastk"] = float(np.mean(ev["mean"][-last_k:])) if ev["rounds"].size else float("nan")
    v["eval_last_round"] = int(ev["rounds"][-1]) if ev["rounds"].size else None
    v["n_evals"] = int(ev["rounds"].size)
    v["completions"] = completions_generated(cut, rounds)
    v["mean_own"] = v["own"] / (cut.n_nodes * rounds)
    v["per_1k"] = 1000 * v["own"] / v["completions"] if v["completions"] else float("nan")
    for key, metric in REWARD_KEYS.items():
        for f in ("oscillation", "peak_ma", "final_ma", "band_width", "roughness"):
            v[f"{f}_{key}"] = rm[metric][f]
        v[f"drop_{key}"] = rm[metric]["peak_ma"] - rm[metric]["final_ma"]
    entry.values = v


class Study:
    def __init__(self, summary_dir, arms=None, seeds=DEFAULT_SEEDS, rounds=None, window=PAPER_WINDOW, last_k=5):
        (self.arms, self.splits, self.seeds, self.entries, self.cells, self.notes,
         self.ignored) = load_study(summary_dir, arms, seeds)
        self.summary_dir = summary_dir
        self.rounds = choose_rounds(self.entries, rounds)
        self.rounds_given = rounds is not None
        self.requested_window = window
        self.window = window_for(self.rounds, window)
        self.last_k = last_k
        for e in self.entries.values():
            compute(e, self.rounds, self.window, last_k)
        # J = 0 runs present in two arms should be the same run
        for (arm, split, seed), e in sorted(self.entries.items()):
            if split_external(split) != 0 or arm == "paper" or ("paper", split, seed) not in self.entries:
                continue
            other = self.entries[("paper", split, seed)]
            if e.values and other.values and abs(e.values["own"] - other.values["own"]) > 1e-9 * max(1, abs(e.values["own"])):
                self.notes.append(f"{e.file} and {other.file} differ (cumulative own reward {fmt(e.values['own'])} vs "
                                  f"{fmt(other.values['own'])}) although a J = 0 run should be the same in both arms; "
                                  f"each arm uses its own file")

    def used(self, arm, split):
        """The entries of one arm and split whose numbers are in the statistics, by seed."""
        out = {}
        for seed in self.seeds:
            e = self.cells.get((arm, split, seed))
            if e is not None and e.values:
                out[seed] = e
        return out

    def values(self, arm, split, key):
        return {s: e.values[key] for s, e in self.used(arm, split).items()}

    def compare(self, arm, a, b, key):
        return paired(self.values(arm, a, key), self.values(arm, b, key))

    def arm_has_runs(self, arm):
        return any(self.used(arm, s) for s in self.splits)


# ---- sections -----------------------------------------------------------------------------

def section_provenance(study, commands, commit, machine, argv):
    lines = ["## Provenance"]
    if commands is not None:
        lines.append("Commands that made the runs and summaries (from --commands):\n\n```sh\n" + commands.rstrip("\n")
                     + "\n```")
    else:
        lines.append("Commands that made the runs: not given (pass --commands FILE).")
    lines.append(f"Commit of the runs: {commit or 'not given (pass --commit SHA)'}. "
                 f"Machine: {machine or 'not given (pass --machine TEXT)'}.")
    lines.append("This report: `python3 -m analysis.minipaper " + shlex.join(argv) + "`.")
    lines.append(f"Summaries: `{study.summary_dir}`; arms {', '.join(study.arms)}; splits "
                 f"{', '.join(study.splits)}; seeds {', '.join(str(s) for s in study.seeds)}.")
    rows = []
    for key, e in sorted(study.entries.items(), key=lambda kv: (_arm_order(study, kv[0][0]),
                                                                  _split_order(study, kv[0][1]), kv[0][2])):
        r = e.run
        rows.append([f"`{e.file}`", e.arm, e.split, e.seed, r.n_nodes, f"{r.n_rounds}/{r.expected_rounds}",
                     "yes" if r.done else "**no**", e.status if e.status == "used" else f"**{e.status}**", e.sha])
    lines.append("### Summaries used\n\n" + table(["file", "arm", "split", "seed", "nodes", "rounds logged/configured",
                                                    "DONE", "status", "sha256[:12]"], rows,
                                                   ["l", "l", "l", "r", "r", "r", "l", "l", "l"]))
    missing, incomplete = [], []
    for arm in study.arms:
        for split in study.splits:
            for seed in study.seeds:
                e = study.cells[(arm, split, seed)]
                if e is None:
                    missing.append(f"{arm}-{split}-s{seed}")
    for e in study.entries.values():
        if not e.run.complete:
            incomplete.append(f"{e.file}: {'DONE present' if e.run.done else 'no DONE'}, {e.run.n_rounds} of "
                              f"{e.run.expected_rounds} configured rounds logged ({e.status})")
        elif not e.values:
            incomplete.append(f"{e.file}: {e.status}")
    warn = []
    if missing:
        warn.append(f"**Missing runs ({len(missing)}):** " + ", ".join(missing) + ".")
    else:
        warn.append("Missing runs: none (every arm x split x seed has a summary, directly or by J = 0 substitution).")
    if incomplete:
        warn.append(f"**Incomplete or excluded runs ({len(incomplete)}):**\n\n" + "\n".join(f"- {x}" for x in sorted(incomplete)))
    else:
        warn.append("Incomplete runs: none (every summary has DONE and all its configured rounds).")
    excluded = [e for e in study.entries.values() if not e.values]
    if excluded and not study.rounds_given:
        shortest = min(e.run.n_rounds for e in excluded)
        warn.append(f"Runs with fewer than {study.rounds} logged rounds are left out of every number below; "
                    f"`--rounds {shortest}` compares all runs on their first {shortest} rounds instead.")
    notes = list(study.notes)
    for e in sorted(study.entries.values(), key=lambda e: e.file):
        notes += [f"{e.file}: {w}" for w in e.run.warnings]
    if study.ignored:
        notes.append("ignored (not named ARM-SPLIT-sSEED.npz): " + ", ".join(study.ignored))
    if notes:
        warn.append("Notes:\n\n" + "\n".join(f"- {n}" for n in notes))
    lines.append("### Missing, incomplete and substituted runs\n\n" + "\n\n".join(warn))
    shrink = (f"; the moving-average window is {study.window} rounds (the paper's {study.requested_window}, shrunk "
              f"to rounds // 5 to fit)" if study.window < study.requested_window else
              f"; the moving-average window is {study.window} rounds")
    planned = (f" **This is shorter than the study's planned {PLANNED_ROUNDS} rounds.**"
               if study.rounds < PLANNED_ROUNDS else "")
    lines.append(f"Every run is compared over its first **{study.rounds} rounds** "
                 f"({'--rounds' if study.rounds_given else 'the configured rounds most runs share'}){shrink}.{planned}")
    return "\n\n".join(lines)


def _arm_order(study, arm):
    return study.arms.index(arm) if arm in study.arms else len(study.arms)


def _split_order(study, split):
    return study.splits.index(split) if split in study.splits else len(study.splits)


def section_definitions(study):
    return "\n\n".join([
        "## Definitions",
        "- **Cumulative own reward (PRIMARY)**: the sum over nodes and rounds of each node's mean reward on its own "
        "I x L completions in that round (reward_own): what the agents themselves earn, the paper's \"total reward "
        "summed over agents and rounds\" on own rollouts.\n"
        "- **Cumulative training-batch reward**: the same sum of reward_train, the mean reward over the node's "
        "training batch (own + J external groups). This is genrl's logged metric and the paper's likely measure "
        "behind +94%; it counts rewards the node did not earn (external groups are pre-filtered, zero_adv).\n"
        "- **Fixed-set pass@1**: eval_pass1, the node's mean verifier score on held-out questions on evaluation "
        "rounds (NaN otherwise); \"last\" is the mean over nodes at the last evaluation within the compared rounds, "
        f"\"last K\" the mean of the node-means over the last K = {study.last_k} evaluations.\n"
        "- **Completions generated** = rounds x sum over nodes of I x L (L = grpo.completions; evaluation answers "
        "not counted). 4/4 generates half of 8/0's completions, 2/6 a quarter; 4/0 as many as 4/4.\n"
        "- **Mean own reward per completion** = cumulative own reward / (nodes x rounds): every node-round mean is "
        "over I x L completions, so this is the average reward of one generated completion (quality). **Cumulative "
        "own reward per 1,000 completions** = 1000 x cumulative own reward / completions generated: the paper's "
        "total per unit of generation cost (efficiency; with equal quality, 4/4 scores 2x 8/0 here).\n"
        f"- **Oscillation** (analysis.metrics): std of the moving average (window {study.window}) of the "
        "agent-averaged reward around its least-squares line; **peak** and **final** are the highest and last "
        "moving-average values; **band** is the mean over rounds of max - min across agents of their moving "
        "averages.\n"
        "- **mean ± sd**: over seeds, sample sd (ddof 1). **Paired change** A vs B: per-seed differences "
        "d_s = A_s - B_s over the seeds both have (same seed = same warm-up and question streams); mean, 95% CI "
        f"mean ± t(0.975, n-1) x sd / sqrt(n) (Student t; n = 3: t = {t975(2):.3f}); relative change = mean "
        "difference / B's mean over the same seeds (CI divided likewise, B's mean held fixed). "
        f"\"{SIGNIFICANT}\" = the CI excludes 0; \"{NOT_SIGNIFICANT}\" = it contains 0.",
    ])


def section_results(study, arm):
    lines = [f"### Results per split ({arm})"]
    rows1, rows2 = [], []
    base_comp = mean_sd(study.values(arm, BASELINE, "completions").values())[0]
    for split in study.splits:
        used = study.used(arm, split)
        if not used and split not in SPLITS:
            continue
        seeds = ", ".join(str(s) for s in used) or "none"

        def cell(key, digits):
            m, sd, _ = mean_sd(study.values(arm, split, key).values())
            return pm(m, sd, digits)

        comp = mean_sd(study.values(arm, split, "completions").values())[0]
        ratio = f" ({comp / base_comp:.2f}x 8/0)" if np.isfinite(comp) and np.isfinite(base_comp) and base_comp else ""
        rows1.append([split_label(split), split, seeds, cell("own", 2), cell("train", 2), cell("oscillation_own", 4),
                      cell("peak_ma_own", 4), cell("band_width_own", 4)])
        rows2.append([split_label(split), split, cell("pass_last", 3), cell("pass_lastk", 3),
                      f"{int(comp):,}{ratio}" if np.isfinite(comp) else "–", cell("mean_own", 4), cell("per_1k", 4)])
    lines.append("#### Reward\n\n" + table(
        ["split", "run", "seeds", "cum. own reward (PRIMARY)",
         "cum. training-batch reward (genrl's logged metric, the paper's likely +94% measure)",
         "oscillation (own)", "peak MA (own)", "band (own)"], rows1))
    lines.append("#### Evaluation and efficiency\n\n" + table(
        ["split", "run", "pass@1 last eval", f"pass@1 last {study.last_k} evals", "completions generated",
         "mean own reward per completion", "cum. own reward per 1,000 completions"], rows2))
    return "\n\n".join(lines)


def section_changes(study, arm):
    lines = [f"### Paired changes vs 8/0, and 4/4 vs 4/0 ({arm})",
             "Per-seed differences A - B (seed order as listed), mean, 95% Student t CI, relative change with its "
             "CI, and whether the change is significant at 95%. A null result is shown as such."]
    for key in CHANGE_METRICS:
        label, digits = METRICS[key]
        if key == "pass_lastk":
            label = label.replace("last K", f"last {study.last_k}")
        rows = []
        for a, b in COMPARISONS:
            p = study.compare(arm, a, b, key)
            diffs = ", ".join(f"s{s}: {signed(d, digits)}" for s, d in zip(p["seeds"], p["diffs"])) or "–"
            verdict = f"**{p['verdict']}**" if p["verdict"] == SIGNIFICANT else p["verdict"]
            rows.append([f"{split_label(a)} vs {split_label(b)}", p["n"], diffs, signed(p["mean"], digits),
                         ci_text(p, digits), rel_text(p), verdict])
        lines.append(f"#### {label}\n\n" + table(["comparison", "n", "per-seed differences", "mean difference",
                                                 "95% CI", "relative change [95% CI]", "verdict"], rows,
                                                ["l", "r", "l", "r", "r", "r", "l"]))
    paper = ", ".join(f"{split_label(s)} {PAPER_CHANGES[split_label(s)]}" for s in SHARING)
    lines.append(f"The paper's changes vs 8/0 (its total reward, {PAPER_TOTALS['8/0']} for 8/0): {paper}; it has no "
                 f"4/0 control.")
    return "\n\n".join(lines)


def _holds(ps):
    """Summary of a list of comparisons expected to be positive: supported / partly / contradicted."""
    dirs = [direction(p) for p in ps]
    if all(p["n"] == 0 for p in ps):
        return "cannot be tested (no paired seeds)"
    if any(d < 0 for d in dirs):
        return "**contradicted** (significantly in the opposite direction for at least one comparison)"
    if all(d > 0 for d in dirs):
        return "**supported** (every comparison significant at 95%)"
    if all(np.isfinite(p["mean"]) and p["mean"] > 0 for p in ps):
        return "**not shown**: the point estimates go the paper's way, but not every comparison is significant at 95%"
    return "**not supported**: not every point estimate is above 0 (none is significantly below)"


def finding1(study, arm, key):
    ps = [(s, study.compare(arm, s, BASELINE, key)) for s in SHARING]
    parts = [f"{split_label(s)} vs 8/0 {short(p, METRICS[key][1])}" for s, p in ps]
    return f"{_holds([p for _, p in ps])}. " + "; ".join(parts) + "."


def finding2(study, arm, key):
    means = {s: mean_sd(study.values(arm, s, key).values())[0] for s in PAPER_FOUR}
    have = {s: m for s, m in means.items() if np.isfinite(m)}
    if BEST not in have or len(have) < 2:
        return "cannot be tested (4/4 or every other split has no runs)."
    top = max(have, key=lambda s: have[s])
    ranking = " > ".join(f"{split_label(s)} {fmt(have[s])}" for s in sorted(have, key=lambda s: -have[s]))
    ps = [(s, study.compare(arm, BEST, s, key)) for s in PAPER_FOUR if s != BEST and s in have]
    parts = "; ".join(f"4/4 vs {split_label(s)} {short(p, METRICS[key][1])}" for s, p in ps)
    if top != BEST:
        beaten = [s for s, p in ps if direction(p) < 0]
        head = (f"**{'contradicted' if beaten else 'not supported'}**: {split_label(top)} accumulates most"
                + (", significantly more than 4/4" if top in beaten else ""))
    else:
        head = _holds([p for _, p in ps]).replace("every comparison", "4/4 above every other split,")
        head = "4/4 has the highest mean; " + head
    return f"{head}. Means: {ranking}. {parts}."


def finding3(study, arm, key):
    metric = key
    xs = [split_external(s) for s in PAPER_FOUR]
    splits = {split_external(s): s for s in PAPER_FOUR}
    out = []
    verdicts = []
    for field, name in (("peak_ma", "peak MA reward"), ("oscillation", "oscillation")):
        vals = {x: study.values(arm, splits[x], f"{field}_{metric}") for x in xs}
        means = ", ".join(f"{split_label(splits[x])} {pm(*mean_sd(vals[x].values())[:2], 4)}" for x in xs)
        tr = trend(vals, xs)
        ci = f", 95% CI [{signed(tr['lo'], 5)}, {signed(tr['hi'], 5)}]" if np.isfinite(tr["half"]) else ""
        p = paired(vals[6], vals[2])
        out.append(f"{name}: {means}; slope per external group {signed(tr['mean'], 5)}{ci} (n = {tr['n']}; "
                   f"{tr['verdict']}); 2/6 vs 6/2 {short(p, 4)}")
        verdicts.append(tr)
    dirs = [direction(t) for t in verdicts]
    if all(t["n"] == 0 for t in verdicts):
        head = "cannot be tested (no seed has all four splits)"
    elif all(d > 0 for d in dirs):
        head = "**supported**: both peak and oscillation rise significantly with J"
    elif any(d < 0 for d in dirs):
        head = "**contradicted** for " + " and ".join(n for n, d in zip(("peak", "oscillation"), dirs) if d < 0) + \
               " (significantly falls with J)"
    elif dirs[0] > 0 or dirs[1] > 0:
        head = "**partly supported**: only " + ("peak" if dirs[0] > 0 else "oscillation") + " rises significantly with J"
    else:
        head = "**not shown**: neither trend is significant at 95%"
    return f"{head}. " + ". ".join(out) + "."


def finding4(study, arm, key):
    metric = key
    osc = {s: study.values(arm, s, f"oscillation_{metric}") for s in PAPER_FOUR}
    means = {s: mean_sd(v.values())[0] for s, v in osc.items()}
    have = {s: m for s, m in means.items() if np.isfinite(m)}
    if "2L6E" not in have or BASELINE not in have:
        return "cannot be tested (2/6 or 8/0 has no runs)."
    p26 = paired(osc["2L6E"], osc[BASELINE])
    lowest = min(have, key=lambda s: have[s])
    highest = max(have, key=lambda s: have[s])
    vs_base = [(s, paired(osc[s], osc[BASELINE])) for s in SHARING if s in have]
    band = paired(study.values(arm, "2L6E", f"band_width_{metric}"), study.values(arm, BASELINE, f"band_width_{metric}"))
    drop = paired(study.values(arm, "2L6E", f"drop_{metric}"), study.values(arm, BEST, f"drop_{metric}"))
    d = direction(p26)
    head = ("**supported**" if d > 0 and lowest == BASELINE else
            "**partly supported**" if d > 0 or lowest == BASELINE else
            "**contradicted**" if d < 0 else "**not shown**")
    return (f"{head}: 2/6 oscillates more than 8/0 by {short(p26, 4)}; the split that oscillates most is "
            f"{split_label(highest)}, least {split_label(lowest)} (the paper: 8/0 least) — "
            + ", ".join(f"{split_label(s)} {fmt(have[s], 4)}" for s in PAPER_FOUR if s in have) + ". "
            + "Each sharing split vs 8/0: " + "; ".join(f"{split_label(s)} {short(p, 4)}" for s, p in vs_base) + ". "
            f"Agents drifting apart (band, 2/6 vs 8/0): {short(band, 4)}. Decline from peak to final MA "
            f"(2/6 vs 4/4): {short(drop, 4)}.")


def section_findings(study, arm):
    lines = [f"### The paper's four findings ({arm})",
             "Each stated from our numbers: first on own rollouts (PRIMARY), then on the training batch (genrl's "
             "logged metric, the paper's likely +94% measure). Paired by seed, 95% Student t CIs."]
    items = [
        ("(1) Every sharing configuration beats the 8/0 baseline (cumulative reward).", finding1),
        ("(2) 4/4 accumulates the most reward.", finding2),
        ("(3) More external rollouts raise the peak reward but also the oscillation (moving-average peak and "
         "oscillation against J = 0, 2, 4, 6: per-seed least-squares slope, then a t interval over seeds).", finding3),
        ("(4) 2/6 oscillates strongly (good agents dragged down by weaker ones; a pool fed by too few local "
         "rollouts degrades); the baseline varies least.", finding4),
    ]
    for title, fn in items:
        lines.append(f"**{title}**\n\n- Own rollouts (PRIMARY): {fn(study, arm, 'own')}\n"
                     f"- Training batch (genrl's logged metric): {fn(study, arm, 'train')}")
    return "\n\n".join(lines)


def section_arms(study):
    if len(study.arms) < 2:
        return None
    ref = study.arms[0]
    lines = ["## Arms compared",
             f"Each arm minus {ref}, split by split, paired by seed (same warm-up and questions). J = 0 splits are "
             f"the same runs in every arm and are left out."]
    for other in study.arms[1:]:
        rows = []
        for split in study.splits:
            if split_external(split) == 0:
                continue
            for key in ("own", "train", "pass_lastk"):
                digits = METRICS[key][1]
                p = paired(study.values(other, split, key), study.values(ref, split, key))
                verdict = f"**{p['verdict']}**" if p["verdict"] == SIGNIFICANT else p["verdict"]
                rows.append([split_label(split), {"own": "cum. own (PRIMARY)", "train": "cum. training batch",
                                                  "pass_lastk": f"pass@1 last {study.last_k}"}[key], p["n"],
                             signed(p["mean"], digits), ci_text(p, digits), rel_text(p), verdict])
        lines.append(f"### {other} vs {ref}\n\n" + table(["split", "metric", "n", "mean difference", "95% CI",
                                                          "relative change [95% CI]", "verdict"], rows,
                                                         ["l", "l", "r", "r", "r", "r", "l"]))
    return "\n\n".join(lines)


def section_eval_tasks(study):
    """Per-task fixed-set evaluation, when the summaries have it (optional)."""
    have = [e for e in study.entries.values() if e.eval_tasks is not None and e.values]
    if not have:
        return ("## Per-task fixed-set evaluation\n\nNot in these summaries (no entry named like `eval_by_task`); "
                "only the overall pass@1 above.")
    lines = ["## Per-task fixed-set evaluation",
             f"Mean over the last {study.last_k} evaluations (rounds where any task was evaluated) of the node-mean "
             f"pass@1 per task, then mean ± sd over seeds."]
    for arm in study.arms:
        splits = [s for s in study.splits if any(e.eval_tasks is not None for e in study.used(arm, s).values())]
        if not splits:
            continue
        labels = []
        for s in splits:
            for e in study.used(arm, s).values():
                if e.eval_tasks is not None:
                    labels += [l for l in e.eval_tasks[0] if l not in labels]
        rows = []
        for label in labels:
            row = [label]
            for s in splits:
                vals = []
                for e in study.used(arm, s).values():
                    if e.eval_tasks is None or label not in e.eval_tasks[0]:
                        continue
                    a = e.eval_tasks[1][:study.rounds]
                    col = a[:, e.eval_tasks[0].index(label)]
                    evaluated = ~np.all(np.isnan(a), axis=1)
                    col = col[evaluated][-study.last_k:]
                    col = col[~np.isnan(col)]
                    if col.size:
                        vals.append(float(col.mean()))
                row.append(pm(*mean_sd(vals)[:2], 3))
            rows.append(row)
        lines.append(f"### {arm}\n\n" + table(["task"] + [split_label(s) for s in splits], rows))
    return "\n\n".join(lines)


def arm_figures(study, arm, out_dir, fig_seed):
    """The paper's Figures 1 and 2 (own and training batch), pass@1, cumulative; in out_dir/arm/."""
    sub = os.path.join(out_dir, arm)
    os.makedirs(sub, exist_ok=True)
    groups = []
    for split in study.splits:
        used = study.used(arm, split)
        if used:
            groups.append(SplitRuns(split, [used[s].cut for s in sorted(used)]))
    if not groups:
        return []
    prefix = f"[{arm}] "
    one = []
    for g in groups:
        seed = fig_seed if fig_seed in study.used(arm, g.split) else sorted(study.used(arm, g.split))[0]
        one.append(SplitRuns(g.split, [study.used(arm, g.split)[seed].cut]))
    figs = [figures.node_reward(one, m, sub, prefix) for m in ("reward_own", "reward_train")]
    figs += [figures.avg_reward(groups, m, study.window, study.requested_window, sub, prefix)
             for m in ("reward_own", "reward_train")]
    cms = [config_metrics(g, study.window) for g in groups]
    ev = figures.eval_pass1(groups, cms, sub, prefix)
    if ev:
        figs.append(ev)
    figs.append(figures.compare(groups, study.window, sub, prefix))
    figs.append(figures.cumulative(groups, sub, prefix))
    return [(f"{arm}/{name}", caption) for name, caption in figs]


def changes_figure(study, out_dir):
    panels = []
    for key in ("own", "train", "pass_lastk"):
        rows = []
        for a, b in COMPARISONS:
            rows.append((f"{split_label(a)} vs {split_label(b)}", {arm: study.compare(arm, a, b, key)
                                                                   for arm in study.arms}))
        title = {"own": "cumulative own reward (PRIMARY)", "train": "cum. training-batch reward (genrl)",
                 "pass_lastk": f"pass@1, last {study.last_k} evaluations"}[key]
        panels.append((title, rows))
    return figures.paired_changes(panels, study.arms, out_dir, "fig_changes.png",
                                  "Paired changes by seed, mean and 95% CI")


def fig_md(fig):
    name, caption = fig
    return f"![{name}]({name})\n\n*{caption}*"


def build(summary_dir, out_dir, commands=None, commit=None, machine=None, arms=None, seeds=DEFAULT_SEEDS,
          rounds=None, last_k=5, window=PAPER_WINDOW, fig_seed=1, argv=()):
    """Write out_dir/REPORT.md and the figures; returns the report's path. Raises AnalysisError."""
    study = Study(summary_dir, arms, seeds, rounds, window, last_k)
    os.makedirs(out_dir, exist_ok=True)
    parts = ["# Mini-paper: sharing rollouts in a SAPO swarm, two arms (paper, off-policy correction)",
             section_provenance(study, commands, commit, machine, list(argv)), section_definitions(study)]
    ch = changes_figure(study, out_dir)
    for arm in study.arms:
        if not study.arm_has_runs(arm):
            parts.append(f"## Arm: {arm}\n\nNo usable runs in this arm (see the missing and excluded runs above).")
            continue
        parts.append(f"## Arm: {arm}")
        parts.append(section_results(study, arm))
        parts.append(section_changes(study, arm))
        parts.append(section_findings(study, arm))
        figs = arm_figures(study, arm, out_dir, fig_seed)
        if figs:
            parts.append(f"### Figures ({arm})\n\nFigure 1 shows one seed (seed {fig_seed} where it ran), Figure 2 "
                         f"the mean over seeds.\n\n" + "\n\n".join(fig_md(f) for f in figs))
    arms_part = section_arms(study)
    if arms_part:
        parts.append(arms_part)
    if ch:
        parts.append("## Paired changes at a glance\n\n" + fig_md(ch))
    parts.append(section_eval_tasks(study))
    path = os.path.join(out_dir, "REPORT.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(parts) + "\n")
    return path


def _int_list(text, what):
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: expected comma-separated integers, got {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"{what}: empty")
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="python3 -m analysis.minipaper", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("summary_dir", metavar="SUMMARY_DIR")
    ap.add_argument("-o", "--out", required=True, metavar="OUT_DIR", help="where REPORT.md and the PNGs go")
    ap.add_argument("--commands", metavar="FILE", help="a file with the commands that made the runs (shown verbatim)")
    ap.add_argument("--commit", metavar="SHA", help="the commit the runs were made with")
    ap.add_argument("--machine", metavar="TEXT", help="the machine the runs were made on")
    ap.add_argument("--arms", type=lambda s: [a for a in s.split(",") if a], default=None,
                    help="arms in report order (default paper,offpolicy, then any other found)")
    ap.add_argument("--seeds", type=lambda s: _int_list(s, "--seeds"), default=list(DEFAULT_SEEDS),
                    help="the seeds expected (default 1,2,3); seeds found beyond them are used too")
    ap.add_argument("--rounds", type=int, default=None,
                    help="compare every run over its first N rounds (default: the configured rounds most runs share)")
    ap.add_argument("--last-k", type=int, default=5, help="evaluations averaged for 'pass@1 last K' (default 5)")
    ap.add_argument("--window", type=int, default=PAPER_WINDOW,
                    help="moving-average window (default %(default)s, the paper's; shrunk to rounds // 5)")
    ap.add_argument("--fig-seed", type=int, default=1, help="the seed Figure 1 shows (default 1)")
    args = ap.parse_args(argv)
    if args.window < 1 or args.last_k < 1 or (args.rounds is not None and args.rounds < 1):
        ap.error("--window, --last-k and --rounds must be at least 1")
    try:
        commands = None
        if args.commands is not None:
            try:
                with open(args.commands, encoding="utf-8") as f:
                    commands = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise AnalysisError(f"{args.commands}: cannot read the commands file ({e.strerror or e})") from None
        path = build(args.summary_dir, args.out, commands, args.commit, args.machine, args.arms, args.seeds,
                     args.rounds, args.last_k, args.window, args.fig_seed, argv)
    except AnalysisError as e:
        print(f"analysis.minipaper: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
