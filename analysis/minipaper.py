"""The mini-paper report: the SAPO study's splits in two arms, paired by seed.

Usage:
  python3 -m analysis.minipaper SUMMARY_DIR -o OUT_DIR [--commands FILE] [--commit SHA]
      [--machine TEXT] [--arms paper,offpolicy] [--seeds 1,2,3] [--rounds N] [--last-k 5]
      [--window 100] [--fig-seed S]

  SUMMARY_DIR  summaries written by `python3 -m analysis.summarize RUN_DIR -o DIR`, named
               ARM-SPLIT-sSEED.npz (e.g. paper-4L4E-s1.npz, offpolicy-2L6E-s3.npz); SPLIT is
               ILJE (I local, J external groups): 8L0E, 6L2E, 4L4E, 2L6E and the 4L0E control

Writes OUT_DIR/REPORT.md (provenance, learning from rounds 0-9, oscillation and band against
white noise, per-split results as mean ± sd over seeds, paired changes vs 8/0 and 4/4 vs 4/0
with 95% Student t intervals, p-values and Holm's correction within each metric's family, the
paper's four findings point by point per arm, arms compared) and PNGs: OUT_DIR/fig_changes.png
and OUT_DIR/ARM/fig*.png (the paper's Figures 1 and 2 per arm, own and training-batch reward,
pass@1, cumulative; every curve from round 0).

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
import sys
from collections import Counter

import numpy as np

from . import figures
from .errors import AnalysisError
from .grouping import node_split
from .metrics import PAPER_WINDOW, config_metrics, eval_curve, run_metrics, window_for
from .noise import SHUFFLES, white_noise
from .paired import NOT_SIGNIFICANT, SIGNIFICANT, direction, holm, mde, mean_sd, p_value, paired, t975, trend
from .paper import PAPER_CHANGES, PAPER_TOTALS
from .report import fmt, table, this_report
from .runs import load_summary, nanmean_rows, require_one_numerics

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
# the paired tests; per_1k is described, never tested: it is 125 x mean own reward per completion / I,
# so its change against 8/0 is the factor 8 / I by construction
CHANGE_METRICS = ("own", "train", "pass_last", "pass_lastk")
ARMS_METRICS = ("own", "train", "pass_lastk")  # the metrics of "Arms compared"
START_ROUNDS, END_ROUNDS = 10, 50  # learning: own reward over rounds 0-9 against the last 50 rounds
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


def p_text(x):
    return "–" if x is None or not np.isfinite(x) else (f"{x:.3f}" if x >= 0.001 else "<0.001")


SIGNIFICANT_HOLM = "significant after Holm"
NOT_SIGNIFICANT_HOLM = "not significant after Holm"
UNCORRECTED = "uncorrected"


def pct_of_reference(x, base):
    if not (np.isfinite(x) and np.isfinite(base) and abs(base) > 0):
        return "–"
    return f"{100 * x / abs(base):.1f}% of the reference"


def verdict_text(p, digits):
    """The verdict of one comparison: Holm's within its family (with the minimum detectable
    effect for a null), else the single 95% CI's, labelled uncorrected."""
    if "family" not in p or p["n"] < 2 or not np.isfinite(p.get("holm_p", float("nan"))):
        if p["verdict"] in (SIGNIFICANT, NOT_SIGNIFICANT):
            return f"{p['verdict']}, {UNCORRECTED}"
        return p["verdict"]
    if p["rejected"]:
        return SIGNIFICANT_HOLM
    return f"{NOT_SIGNIFICANT_HOLM} (MDE {fmt(p['mde'], digits)}, {pct_of_reference(p['mde'], p['base'])})"


def verdict_cell(p, digits):
    text = verdict_text(p, digits)
    return f"**{text}**" if text.startswith("significant") else text


def decision(p):
    """+1 / -1 when the comparison is significant (after Holm within a family, else its 95% CI
    excludes 0), 0 otherwise."""
    if "family" in p and np.isfinite(p.get("holm_p", float("nan"))):
        return 0 if not p["rejected"] else (1 if p["mean"] > 0 else -1)
    return direction(p)


def short(p, digits):
    """One comparison in a sentence: difference, CI, relative change, p-values, verdict."""
    if p["n"] == 0:
        return "no paired seeds"
    ci = f", 95% CI {ci_text(p, digits)}" if np.isfinite(p["half"]) else ""
    rel = f", {signed(100 * p['rel'], 1)}%" if np.isfinite(p["rel"]) else ""
    ps = ""
    if "family" in p and np.isfinite(p.get("holm_p", float("nan"))):
        ps = f"p = {p_text(p['p'])}, Holm p = {p_text(p['holm_p'])}; "
    return f"{signed(p['mean'], digits)}{ci}{rel} (n = {p['n']}; {ps}{verdict_text(p, digits)})"


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


def scan(summary_dir, allow_empty=False):
    """{(arm, split, seed): path} of the ARM-SPLIT-sSEED.npz files, and the other .npz names;
    an AnalysisError when there is none, unless allow_empty."""
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
    if not found and not allow_empty:
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
    require_one_numerics((e.path, e.run) for e in entries.values())
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


def learning_rounds(rounds):
    """(first, last): own reward over rounds 0..first-1 against the last `last` rounds: 10 and
    50, shrunk to rounds // 5 and rounds // 2 (at least 1) for runs shorter than 60 rounds."""
    if rounds >= START_ROUNDS + END_ROUNDS:
        return START_ROUNDS, END_ROUNDS
    return max(1, rounds // 5), max(1, rounds // 2)


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
    first, last = learning_rounds(rounds)
    mean_own = cut.per_node["reward_own"].mean(axis=0)
    v["own_start"], v["own_end"] = float(mean_own[:first].mean()), float(mean_own[-last:].mean())
    v["learn"] = v["own_end"] - v["own_start"]
    # white noise of I x L samples a round (I x L averaged over nodes; equal in these splits)
    v["samples"] = completions_generated(cut, 1) / cut.n_nodes
    v["noise"] = white_noise(cut.per_node["reward_own"], window, v["samples"])
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
        self.make_families()

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

    def pair(self, arm_a, split_a, arm_b, split_b, key):
        """A - B paired by seed, with its p-value and minimum detectable effect; a comparison
        of a family also carries its family's name, Holm-adjusted p and rejection."""
        found = self.tested.get((arm_a, split_a, arm_b, split_b, key))
        if found is not None:
            return found
        p = paired(self.values(arm_a, split_a, key), self.values(arm_b, split_b, key))
        p["p"] = p_value(p)
        p["mde"] = mde(p["sd"], p["n"])
        return p

    def compare(self, arm, a, b, key):
        return self.pair(arm, a, arm, b, key)

    def family_members(self, key):
        """[(name, (arm A, split A, arm B, split B))] of one metric's family: the paired changes
        of every arm (COMPARISONS), then, for the metrics of "Arms compared", each arm against the
        first on every split with J > 0."""
        out = [(f"{arm}: {split_label(a)} vs {split_label(b)}", (arm, a, arm, b))
               for arm in self.arms for a, b in COMPARISONS]
        if key in ARMS_METRICS:
            out += [(f"{other} vs {self.arms[0]}: {split_label(s)}", (other, s, self.arms[0], s))
                    for other in self.arms[1:] for s in self.splits if split_external(s) != 0]
        return out

    def make_families(self):
        """Holm's correction within each metric of CHANGE_METRICS (own: the primary family)."""
        self.tested, self.families = {}, {}
        for key in CHANGE_METRICS:
            members = self.family_members(key)
            ps = {name: self.pair(*cell, key) for name, cell in members}
            adjusted = holm({name: p["p"] for name, p in ps.items()})
            for name, cell in members:
                p = ps[name]
                p["family"] = key
                p["holm_p"], p["rejected"] = adjusted.get(name, (float("nan"), False))
                self.tested[cell + (key,)] = p
            self.families[key] = [(name, ps[name]) for name, _ in members]

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
    lines.append(this_report("analysis.minipaper", argv))
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
        f"\"last K\" the mean of the node-means over the last K = {study.last_k} evaluations. *Caveat: the "
        "\"held-out\" set overlaps training.* At the tiny preset the task generators have few distinct questions "
        "(base_conversion about 90), so the fixed evaluation set and the questions the nodes train on share many "
        "questions; these runs predate `tasks.exclude_eval` (which drops evaluation questions from training), so "
        "the overlap was not measured. Fixed-set pass@1 is therefore partly a score on trained questions, not a "
        "clean measure of generalisation.\n"
        "- **Completions generated** = rounds x sum over nodes of I x L (L = grpo.completions; evaluation answers "
        "not counted). 4/4 generates half of 8/0's completions, 2/6 a quarter; 4/0 as many as 4/4.\n"
        "- **Mean own reward per completion** = cumulative own reward / (nodes x rounds): every node-round mean is "
        "over I x L completions, so this is the average reward of one generated completion (quality). **Cumulative "
        "own reward per 1,000 completions** = 1000 x cumulative own reward / completions generated: the paper's "
        "total per unit of generation cost (efficiency; with equal quality, 4/4 scores 2x 8/0 here). It is "
        "described, never tested: it equals 125 x mean own reward per completion / I, so against 8/0 it scales as "
        "8/I by construction, and a test of it would only restate the split.\n"
        f"- **Oscillation** (analysis.metrics): std of the moving average (window {study.window}) of the "
        "agent-averaged reward around its least-squares line; **peak** and **final** are the highest and last "
        "moving-average values; **band** is the mean over rounds of max - min across agents of their moving "
        "averages.\n"
        "- **mean ± sd**: over seeds, sample sd (ddof 1). **Paired change** A vs B: per-seed differences "
        "d_s = A_s - B_s over the seeds both have (same seed = same warm-up and question streams); mean, 95% CI "
        f"mean ± t(0.975, n-1) x sd / sqrt(n) (Student t; n = 3: t = {t975(2):.3f}); relative change = mean "
        "difference / B's mean over the same seeds (CI divided likewise, B's mean held fixed). "
        f"\"{SIGNIFICANT}\" = the CI excludes 0; \"{NOT_SIGNIFICANT}\" = it contains 0.\n"
        "- **p, Holm p, MDE**: p is the two-sided paired t test's (n - 1 degrees of freedom); Holm p is Holm's "
        "step-down adjustment within the comparison's family (familywise error 5%); \"significant after Holm\" = "
        "Holm p <= 0.05. A null gives its minimum detectable effect, (t(0.975, n-1) + t(0.8, n-1)) x sd / sqrt(n) "
        "(two-sided 5%, 80% power, at the unadjusted 5%: Holm's stricter thresholds need larger effects), and that "
        "MDE as a share of the reference's mean.\n"
        f"- **The primary family** ({len(study.families['own'])} comparisons, Holm-corrected together) is every "
        "paired change of cumulative own reward in this report: "
        + "; ".join(name for name, _ in study.families["own"]) + ". "
        "**Secondary families**, each Holm-corrected on its own over the same comparisons of its metric: cumulative "
        f"training-batch reward ({len(study.families['train'])}), pass@1 at the last evaluation "
        f"({len(study.families['pass_last'])}: no arms comparison), pass@1 of the last {study.last_k} evaluations "
        f"({len(study.families['pass_lastk'])}). Everything else (finding (2)'s 4/4 vs 6/2 and vs 2/6, the trends "
        "and the oscillation, band and decline comparisons of findings (3) and (4), the learning intervals) is a "
        f"single 95% CI, labelled \"{UNCORRECTED}\".",
    ])


def arm_split_runs(study):
    """(arm, split, {seed: Entry}) of every arm and split with used runs, in report order."""
    for arm in study.arms:
        for split in study.splits:
            used = study.used(arm, split)
            if used:
                yield arm, split, used


def section_learning(study):
    """Own reward at the start (rounds 0-9: the warm-up's policy) against the last 50 rounds."""
    first, last = learning_rounds(study.rounds)
    shrunk = ("" if (first, last) == (START_ROUNDS, END_ROUNDS) else
              f" (rounds 0-{START_ROUNDS - 1} and the last {END_ROUNDS}, shrunk to rounds // 5 and rounds // 2 "
              f"for runs of {study.rounds} rounds)")
    rows = []
    for arm, split, used in arm_split_runs(study):
        start = mean_sd(study.values(arm, split, "own_start").values())
        end = mean_sd(study.values(arm, split, "own_end").values())
        p = paired(study.values(arm, split, "own_end"), study.values(arm, split, "own_start"))
        rows.append([arm, split_label(split), len(used), pm(start[0], start[1], 4), pm(end[0], end[1], 4),
                     pm(p["mean"], p["sd"], 4), ci_text(p, 4), verdict_text(p, 4)])
    return "\n\n".join([
        "## Learning from the start: own reward over rounds 0-%d against the last %d rounds" % (first - 1, last),
        f"Own reward is the node-mean per-round reward on the node's own completions. Learning is measured from the "
        f"start, rounds 0-{first - 1} (the warm-up's policy), not from the dip after the learning-rate warm-up (a "
        f"first-50-rounds mean would include it and overstate the gain): own reward over the last {last} rounds "
        f"minus rounds 0-{first - 1}{shrunk}. Mean ± sd over seeds; the CI is the 95% Student t interval over seeds "
        f"of the per-seed difference (paired by run), {UNCORRECTED}.",
        table(["arm", "split", "seeds", f"own rounds 0-{first - 1}", f"own last {last}", "difference",
               "95% CI of the difference", "verdict"], rows, ["l", "l", "r", "r", "r", "r", "r", "l"])])


def noise_vs_observed(study, arm, split, field):
    """Observed minus white-noise-expected oscillation or band (field 'osc' / 'band') paired by
    seed: the comparison that says whether the shape exceeds what I x L samples a round give."""
    obs = {s: e.values["noise"][field] for s, e in study.used(arm, split).items()}
    null = {s: e.values["noise"][field + "_null"] for s, e in study.used(arm, split).items()}
    return paired(obs, null)


def noise_ratio(study, arm, split, field):
    ratios = [e.values["noise"][field] / e.values["noise"][field + "_null"]
              for e in study.used(arm, split).values() if e.values["noise"][field + "_null"] > 1e-12]
    return mean_sd(ratios)


def noise_word(p):
    d = direction(p)
    return "exceeds" if d > 0 else "below" if d < 0 else "within"


def section_noise(study):
    rows = []
    for arm, split, used in arm_split_runs(study):
        n = [e.values["noise"] for e in used.values()]
        row = [arm, split_label(split), len(used), fmt(np.mean([e.values["samples"] for e in used.values()]), 0)]
        for field in ("osc", "band"):
            ratio = noise_ratio(study, arm, split, field)
            p = noise_vs_observed(study, arm, split, field)
            row += [fmt(np.mean([x[field] for x in n]), 4), fmt(np.mean([x[field + "_null"] for x in n]), 4),
                    pm(ratio[0], ratio[1], 2), ci_text(p, 4), noise_word(p)]
        row += [fmt(np.mean([x["resid_sd"] for x in n]), 4), fmt(np.mean([x["binom_sd"] for x in n]), 4)]
        rows.append(row)
    return "\n\n".join([
        "## Oscillation and band width against white noise",
        f"Own reward, moving average of {study.window} rounds (the oscillation and band of findings (3) and (4)). A "
        f"node's own reward in a round is a mean over its I x L completions (I local groups x grpo.completions), so "
        f"a policy that never changed would still swing, more so the fewer own completions a split samples (64 a "
        f"round at 8/0, 16 at 2/6). The white-noise expectation (analysis.noise) shuffles each node's residuals "
        f"around its own straight line in time ({SHUFFLES} shuffles) and recomputes oscillation and band: sampling "
        f"noise of its own size and nothing slower. Observed and expected are means over seeds; the ratio is "
        f"observed / expected, mean ± sd over seeds; the CI is the 95% Student t interval over seeds of observed - "
        f"expected ({UNCORRECTED}): above 0, the shape exceeds the white-noise expectation. The residual sd is set "
        f"beside the binomial sqrt(p (1 - p) / (I x L)) of I x L independent completions.",
        table(["arm", "split", "seeds", "I x L", "oscillation", "white noise", "ratio", "95% CI obs. - noise",
               "oscillation vs noise", "band", "white noise", "ratio", "95% CI obs. - noise", "band vs noise",
               "residual sd", "binomial sd"], rows)])


def noise_sentence(study, arm, field, name):
    """Finding (3) / (4): whether the own-reward oscillation or band exceeds white noise, per split."""
    splits = [s for s in PAPER_FOUR if study.used(arm, s)]
    if not splits:
        return ""
    words = {s: noise_word(noise_vs_observed(study, arm, s, field)) for s in splits}
    parts = [f"{split_label(s)} {fmt(noise_ratio(study, arm, s, field)[0], 2)}x ({words[s]})" for s in splits]
    above = [split_label(s) for s in splits if words[s] == "exceeds"]
    rest = [split_label(s) for s in splits if words[s] != "exceeds"]
    if not above:
        summary = (f"in no split does the {name} exceed the white-noise expectation: it is what I x L samples a "
                   f"round give by themselves")
    else:
        summary = f"the {name} exceeds the white-noise expectation in {', '.join(above)}" + (
            f"; in {', '.join(rest)} it does not (what I x L samples a round give by themselves)" if rest else "")
    return (f" Against white noise (observed / expected {name} of own reward, 95% CI of the difference over seeds, "
            f"uncorrected; the section of that name): " + "; ".join(parts) + f". So {summary}.")


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
             "CI, the paired t test's two-sided p and its Holm-adjusted p within the metric's family (see "
             "Definitions: cumulative own reward is the primary family), and the verdict after Holm; a null gives "
             "its minimum detectable effect (MDE: two-sided 5%, 80% power). Cumulative own reward per 1,000 "
             "completions is not tested (see Definitions)."]
    for key in CHANGE_METRICS:
        label, digits = METRICS[key]
        if key == "pass_lastk":
            label = label.replace("last K", f"last {study.last_k}")
        rows = []
        for a, b in COMPARISONS:
            p = study.compare(arm, a, b, key)
            diffs = ", ".join(f"s{s}: {signed(d, digits)}" for s, d in zip(p["seeds"], p["diffs"])) or "–"
            rows.append([f"{split_label(a)} vs {split_label(b)}", p["n"], diffs, signed(p["mean"], digits),
                         ci_text(p, digits), rel_text(p), p_text(p["p"]), p_text(p.get("holm_p")),
                         verdict_cell(p, digits)])
        lines.append(f"#### {label}\n\n" + table(["comparison", "n", "per-seed differences", "mean difference",
                                                 "95% CI", "relative change [95% CI]", "p", "Holm p", "verdict"],
                                                rows, ["l", "r", "l", "r", "r", "r", "r", "r", "l"]))
    paper = ", ".join(f"{split_label(s)} {PAPER_CHANGES[split_label(s)]}" for s in SHARING)
    lines.append(f"The paper's changes vs 8/0 (its total reward, {PAPER_TOTALS['8/0']} for 8/0): {paper}; it has no "
                 f"4/0 control.")
    return "\n\n".join(lines)


def _holds(ps):
    """Summary of a list of comparisons expected to be positive: supported / partly / contradicted."""
    dirs = [decision(p) for p in ps]
    if all(p["n"] == 0 for p in ps):
        return "cannot be tested (no paired seeds)"
    if any(d < 0 for d in dirs):
        return "**contradicted** (significantly in the opposite direction for at least one comparison)"
    if all(d > 0 for d in dirs):
        return "**supported** (every comparison significant)"
    if all(np.isfinite(p["mean"]) and p["mean"] > 0 for p in ps):
        return "**not shown**: the point estimates go the paper's way, but not every comparison is significant"
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
        beaten = [s for s, p in ps if decision(p) < 0]
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
                   f"{verdict_text(tr, 5)}); 2/6 vs 6/2 {short(p, 4)}")
        verdicts.append(tr)
    dirs = [direction(t) for t in verdicts]
    if all(t["n"] == 0 for t in verdicts):
        head = "cannot be tested (no seed has all four splits)"
    elif all(d > 0 for d in dirs):
        head = "**supported**: both peak and oscillation rise significantly with J (95% CIs, uncorrected)"
    elif any(d < 0 for d in dirs):
        head = "**contradicted** for " + " and ".join(n for n, d in zip(("peak", "oscillation"), dirs) if d < 0) + \
               " (significantly falls with J; 95% CIs, uncorrected)"
    elif dirs[0] > 0 or dirs[1] > 0:
        head = ("**partly supported**: only " + ("peak" if dirs[0] > 0 else "oscillation")
                + " rises significantly with J (95% CIs, uncorrected)")
    else:
        head = "**not shown**: neither trend is significant at 95%"
    noise = noise_sentence(study, arm, "osc", "oscillation") if key == PRIMARY else ""
    return f"{head}. " + ". ".join(out) + "." + noise


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
            f"(2/6 vs 4/4): {short(drop, 4)}."
            + (noise_sentence(study, arm, "osc", "oscillation") + noise_sentence(study, arm, "band", "band")
               if key == PRIMARY else ""))


def section_findings(study, arm):
    lines = [f"### The paper's four findings ({arm})",
             "Each stated from our numbers: first on own rollouts (PRIMARY), then on the training batch (genrl's "
             "logged metric, the paper's likely +94% measure). Paired by seed, 95% Student t CIs. The changes vs "
             "8/0 and 4/4 vs 4/0 carry their family's Holm verdict (see Definitions); the other comparisons and the "
             "trends are single 95% CIs, labelled uncorrected. On own rollouts, findings (3) and (4) also say "
             "whether the oscillation and band exceed the white-noise expectation (the section of that name)."]
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
             f"the same runs in every arm and are left out. These comparisons belong to their metric's family "
             f"(cumulative own reward: the primary family) and carry its Holm-adjusted p."]
    for other in study.arms[1:]:
        rows = []
        for split in study.splits:
            if split_external(split) == 0:
                continue
            for key in ARMS_METRICS:
                digits = METRICS[key][1]
                p = study.pair(other, split, ref, split, key)
                rows.append([split_label(split), {"own": "cum. own (PRIMARY)", "train": "cum. training batch",
                                                  "pass_lastk": f"pass@1 last {study.last_k}"}[key], p["n"],
                             signed(p["mean"], digits), ci_text(p, digits), rel_text(p), p_text(p["p"]),
                             p_text(p.get("holm_p")), verdict_cell(p, digits)])
        lines.append(f"### {other} vs {ref}\n\n" + table(["split", "metric", "n", "mean difference", "95% CI",
                                                          "relative change [95% CI]", "p", "Holm p", "verdict"], rows,
                                                         ["l", "l", "r", "r", "r", "r", "r", "r", "l"]))
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
    figs = [figures.node_band(one, m, max(1, study.window // 4), sub, prefix) for m in ("reward_own", "reward_train")]
    figs += [figures.avg_reward(groups, m, study.window, study.requested_window, sub, prefix, from_zero=True)
             for m in ("reward_own", "reward_train")]
    cms = [config_metrics(g, study.window) for g in groups]
    ev = figures.eval_pass1(groups, cms, sub, prefix)
    if ev:
        figs.append(ev)
    figs.append(figures.compare(groups, study.window, sub, prefix, from_zero=True))
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
             section_provenance(study, commands, commit, machine, list(argv)), section_definitions(study),
             section_learning(study), section_noise(study)]
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
        name, caption = ch
        parts.append("## Paired changes at a glance\n\n" + fig_md((name, caption + " The bars are single 95% CIs, "
                                                                      "uncorrected; the tables give the Holm verdicts.")))
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
