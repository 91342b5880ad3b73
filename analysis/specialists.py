"""The specialist study's report: do skills travel between nodes that know different things, and
which way of training received answers lets them through? (results/specialists/; the plan,
fixed before any reported run, is its README.md: the question, arms, metrics and comparison
families below are that page's and do not change after.)

Usage:
  python3 -m analysis.specialists SUMMARY_DIR -o OUT_DIR [--costs FILE] [--machine TEXT]
      [--seeds 1,2,3,4,5,6] [--last-k 5] [--warmups DIR]

  SUMMARY_DIR  ARM-SPLIT-sSEED.npz summaries (analysis.summarize) of spec_silo (8L0E 4L0E),
               spec_ratio1, spec_positive_only, spec_tis, spec_ftis (4L4E), gen_silo (8L0E 4L0E),
               gen_ratio1, gen_positive_only, gen_ftis (4L4E)
  --costs      costs.csv of experiments/specialists/run.sh (run,seconds,status,commit,numerics)
  --warmups    the warm-ups' folder (experiments/specialists/warmups.sh): sSEED/*.ckpt.json per seed,
               each warm-up's CKPT.json (its held-out pass@1 and draws)

Writes OUT_DIR/REPORT.md and OUT_DIR/fig_*.png. The metrics (README.md, 'Metrics'):
- non-specialty pass@1: per node, the mean held-out pass@1 over the three tasks it was not
  warmed on (node/eval_by_task, node.K.run.specialty); the mean over nodes; averaged over the
  last K evaluations. For the gen_* arms (no specialty): pass@1 over all four tasks.
- cumulative own reward: the sum over nodes and rounds of node/reward_own.
- specialty pass@1: the same on the node's own task.
- arrival: the rounds of training until a node's non-specialty pass@1 first reaches half of the
  specialists' level (the mean specialty pass@1 of the run's nodes at its first evaluation,
  before round 0 with run.eval_first).
Every comparison is paired by seed with a Student t 95% CI, the exact sign-flip p and the
log-ratio change beside it; the main family (18) and the generalists' family (6) are each
Holm-corrected. A missing or incomplete run is a warning and leaves its comparisons with fewer
seeds, never a crash; no run at all gives a REPORT.md that says so. Deterministic: no dates."""
import glob
import json
import os
import sys

import numpy as np

from . import calibration_rule, figures
from .minipaper import sha256
from .paired import mean_sd
from .report import fmt, table, this_report
from .studies import (MISSING_SUFFIX, ArmStudy, comparison_table, costs_line, family_section, ignored_and_warnings,
                      interim_lines, no_runs_text, provenance_head, read_costs, spread_text, study_main, write_report)

TASKS = tuple(calibration_rule.TASKS)
ARMS = {  # arm: its splits (README.md, 'The arms')
    "spec_silo": ("8L0E", "4L0E"),
    "spec_ratio1": ("4L4E",),
    "spec_positive_only": ("4L4E",),
    "spec_tis": ("4L4E",),
    "spec_ftis": ("4L4E",),
    "gen_silo": ("8L0E", "4L0E"),
    "gen_ratio1": ("4L4E",),
    "gen_positive_only": ("4L4E",),
    "gen_ftis": ("4L4E",),
}
SPLIT_LABEL = {"8L0E": "8/0", "4L0E": "4/0", "4L4E": "4/4"}
SHARING = ("spec_ratio1", "spec_positive_only", "spec_tis", "spec_ftis")
GEN_SHARING = ("gen_ratio1", "gen_positive_only", "gen_ftis")
SEEDS = (1, 2, 3, 4, 5, 6)
START, END = 10, 100  # diagnostics: the first 10 rounds, the last 100


def metric_labels(k):
    return {"nonspec": f"non-specialty pass@1, last {k} evaluations", "own": "cumulative own reward",
            "all": f"pass@1 over all tasks, last {k} evaluations", "spec": f"specialty pass@1, last {k} evaluations"}


DIGITS = {"nonspec": 3, "own": 1, "all": 3, "spec": 3}


def name_of(arm, split):
    return f"{arm} {SPLIT_LABEL[split]}"


# The main family (README.md, 'The comparison family'): on both primary metrics, 1-8 each sharing
# specialist arm at 4/4 against spec_silo 8/0 and against spec_silo 4/0, 9 spec_tis against
# spec_positive_only; 9 x 2 = 18, Holm-corrected together.
MAIN = [(f"P{i}: {name_of(arm, sa)} vs {name_of(ref, sb)}", m, arm, sa, ref, sb)
        for i, m in ((1, "nonspec"), (2, "own"))
        for arm, sa, ref, sb in [(a, "4L4E", "spec_silo", silo) for a in SHARING for silo in ("8L0E", "4L0E")] +
        [("spec_tis", "4L4E", "spec_positive_only", "4L4E")]]
# The second family, Holm within it: the generalists' sharing arms against gen_silo 8/0 on own
# reward and on pass@1 (over all tasks: a generalist has no specialty); 6.
SECOND = [(f"{tag}: {name_of(arm, '4L4E')} vs gen_silo 8/0", m, arm, "4L4E", "gen_silo", "8L0E")
          for tag, m in (("own", "own"), ("pass@1", "all")) for arm in GEN_SHARING]
# Secondary (planned, outside both families, no correction): does sharing cost a node its own skill?
SPECIALTY = [(f"{name_of(arm, '4L4E')} vs {name_of('spec_silo', silo)}", "spec", arm, "4L4E", "spec_silo", silo)
             for arm in SHARING for silo in ("8L0E", "4L0E")]
SCOPE = ("What a finding holds for: this swarm, 8 specialised 133k-parameter byte models (the minipaper byte GPT, "
         "2 layers, d_model 64) on four tasks at the small preset, 1000 rounds, one exchange without loss. The "
         "comparison families were fixed in results/specialists/README.md (committed in 4dcf090) before any run; "
         "everything else here is descriptive or labelled as outside them.")


# ---- one run -------------------------------------------------------------------------------

def eval_table(run):
    """(rows, trained, P) of a run's per-node evaluation on the four tasks: the rows holding an
    evaluation, the rounds of training before each (0 for run.eval_first's evaluation in round
    0's row, else row + 1: sapo evaluates after the round's step) and P (nodes, evaluations, 4)
    pass@1 in TASKS order; None with the reason when the summary lacks what it needs."""
    per = run.per_node.get("eval_by_task")
    if per is None or per.ndim != 3:
        return None, "no node/eval_by_task (per-node pass@1 per task) in the summary"
    missing = [t for t in TASKS if t not in run.eval_task_labels]
    if missing:
        return None, f"node/eval_by_task has no {', '.join(missing)}"
    cols = [run.eval_task_labels.index(t) for t in TASKS]
    p = per[:, :, cols]
    rows = np.flatnonzero(np.isfinite(p).any(axis=(0, 2)))
    if rows.size == 0:
        return None, "node/eval_by_task holds no evaluation"
    first = str(run.config.get("run.eval_first", "false")).lower() in ("true", "1", "yes")
    rounds = run.rounds[rows]
    trained = np.where((rounds == 0) & first, 0, rounds + 1)
    return (rows, trained, p[:, rows, :]), None


def node_means(p, spec_index, which):
    """(nodes, evaluations) pass@1 per node: over its three non-specialty tasks ('nonspec'), its
    specialty ('spec') or all four ('all'). spec_index: each node's task column."""
    nodes = p.shape[0]
    if which == "all":
        return p.mean(axis=2)
    own = np.zeros(p.shape[2], dtype=bool)
    out = []
    for k in range(nodes):
        mask = own.copy()
        mask[spec_index[k]] = True
        out.append(p[k][:, mask].mean(axis=1) if which == "spec" else p[k][:, ~mask].mean(axis=1))
    return np.stack(out)


def arrival(nonspec, trained, level):
    """Per node, the rounds of training until its non-specialty pass@1 first reaches level
    (NaN: never within the run)."""
    out = []
    for curve in nonspec:
        hit = np.flatnonzero(curve >= level)
        out.append(float(trained[hit[0]]) if hit.size else float("nan"))
    return out


def diagnostics(run):
    nm = run.node_mean
    col = lambda k: nm[k] if k in nm else np.full(run.n_rounds, np.nan)  # noqa: E731
    fin = lambda x: float(np.nanmean(x)) if np.isfinite(x).any() else float("nan")  # noqa: E731
    grad, fmt_ = col("grad_norm"), col("format_rate")
    tie = col("train_in_eval")
    return dict(weight=fin(col("offpolicy_weight")), capped=fin(col("offpolicy_capped")),
                drop=fin(col("offpolicy_dropped")), grad=fin(grad), grad_first=fin(grad[:START]),
                grad_end=fin(grad[-END:]), format_first=fin(fmt_[:END]), format_end=fin(fmt_[-END:]),
                # the node mean a round x the nodes: the held-out questions asked in the rounds (must be 0)
                train_in_eval=float(np.nansum(tie) * run.n_nodes) if np.isfinite(tie).any() else float("nan"),
                grad_curve=grad, format_curve=fmt_, weight_curve=col("offpolicy_weight"),
                drop_curve=col("offpolicy_dropped"))


def run_values(run, arm, last_k):
    """The study's numbers of one complete run; v['notes'] says what could not be computed."""
    v = dict(own=float(run.per_node["reward_own"].sum()), notes=[])
    v["own_curve"] = run.per_node["reward_own"].mean(axis=0)
    v.update(diagnostics(run))
    nan = float("nan")
    v.update(nonspec=nan, spec=nan, all=nan, nonspec0=nan, spec0=nan, all0=nan, level=nan, arrival=[], curves=None)
    tab, why = eval_table(run)
    if tab is None:
        v["notes"].append(why + ": pass@1 metrics left out")
        return v
    rows, trained, p = tab
    v["trained"] = trained
    if np.isnan(p).any():
        v["notes"].append("node/eval_by_task has NaN at an evaluation (a node or task not evaluated): pass@1 metrics "
                          "left out")
        return v
    if last_k > len(trained):
        v["notes"].append(f"only {len(trained)} evaluations, fewer than the last {last_k} asked for: all used")
    last = slice(-last_k, None)
    v["all"], v["all0"] = float(p.mean(axis=2).mean(axis=0)[last].mean()), float(p.mean(axis=2).mean(axis=0)[0])
    v["task_curves"] = p  # (nodes, evaluations, 4)
    specialty = list(run.specialty)
    v["specialty"] = specialty
    if arm.startswith("gen_"):
        if any(specialty):
            v["notes"].append(f"a generalist run with node specialties set ({', '.join(sorted(set(specialty) - {''}))})")
        return v
    bad = sorted({s for s in specialty if s not in TASKS})
    if bad:
        v["notes"].append(f"node specialty {', '.join(repr(s) for s in bad)} is not one of the four tasks: "
                          f"specialty metrics left out")
        return v
    idx = [TASKS.index(s) for s in specialty]
    ns, sp = node_means(p, idx, "nonspec"), node_means(p, idx, "spec")
    v["curves"] = dict(nonspec=ns.mean(axis=0), spec=sp.mean(axis=0))
    v["nonspec"], v["nonspec0"] = float(ns.mean(axis=0)[last].mean()), float(ns.mean(axis=0)[0])
    v["spec"], v["spec0"] = float(sp.mean(axis=0)[last].mean()), float(sp.mean(axis=0)[0])
    v["level"] = 0.5 * v["spec0"]
    if trained[0] != 0:
        v["notes"].append(f"the first evaluation is after {trained[0]} rounds of training (no run.eval_first): the "
                          f"specialists' level is taken there")
    if v["level"] > 0:
        v["arrival"] = arrival(ns, trained, v["level"])
    else:
        v["notes"].append("the specialists' level at the first evaluation is 0: no arrival time")
    return v


class Study(ArmStudy):
    def __init__(self, summary_dir, seeds, last_k):
        self.last_k = last_k
        super().__init__(summary_dir, ARMS, seeds, lambda e: run_values(e.run, e.arm, last_k), allow_empty=True)
        for e in self.entries.values():
            for note in getattr(e, "values", {}).get("notes", []):
                self.warnings.append(f"{e.path}: {note}")
            labels = getattr(e.run, "eval_task_labels", [])
            evaluated = [l for i, l in enumerate(labels) if "eval_by_task" in e.run.per_node
                         and np.isfinite(e.run.per_node["eval_by_task"][:, :, i]).any()]
            extra = sorted(set(evaluated) - set(TASKS))
            if extra:
                self.warnings.append(f"{e.path}: evaluated on tasks outside the study's four ({', '.join(extra)}); "
                                     f"they are not counted")

    def expected(self):
        return sum(len(s) for s in ARMS.values()) * len(self.seeds)


# ---- sections ------------------------------------------------------------------------------

def section_provenance(study, costs, machine, argv):
    lines = provenance_head(
        "analysis.specialists", "Runs: `SEEDS=\"1 2 3 4 5 6\" experiments/specialists/run.sh build/sapo FORMAT SPEC` (8 "
        "ranks a run, 1000 rounds; per seed its warm-ups by experiments/specialists/warmups.sh); each run's summary by "
        "`python3 -m analysis.summarize RUN -o results/specialists/summaries` (run.sh does it after each run).",
        machine, argv)
    if costs:
        lines.append(costs_line(costs, study.warnings))
    rows = []
    for (arm, split, seed), e in sorted(study.entries.items(), key=lambda kv: (list(ARMS).index(kv[0][0]), kv[0][1], kv[0][2])):
        c = costs.get(f"{arm}-{split}-s{seed}", {})
        rows.append([f"`{os.path.basename(e.path)}`", e.run.n_rounds, e.status, c.get("seconds", "–"),
                     c.get("commit", "–"), e.run.numerics, sha256(e.path)])
    present = sorted({seed for _, _, seed in study.entries})
    lines.append(f"{len(study.entries)} of the {study.expected()} planned runs are in (planned seeds "
                 f"{', '.join(map(str, study.seeds))}; runs in from seeds {', '.join(map(str, present)) or 'none'}).")
    if rows:
        lines.append(table(["summary", "rounds", "status", "run seconds", "commit", "numerics", "sha256[:12]"], rows,
                           ["l", "r", "l", "r", "l", "r", "l"]))
    listed = {f"{a}-{sp}-s{sd}" for a, sp, sd in study.entries}
    other = sorted(r for r in costs if r not in listed)
    if other:
        lines.append("costs.csv rows without a summary here: " + ", ".join(
            f"`{r}` ({costs[r].get('status') or '–'}, {costs[r].get('seconds') or '–'} s)" for r in other) + ".")
    lines += ignored_and_warnings(study)
    return "\n\n".join(lines)


def section_definitions(study):
    return "\n\n".join([
        "## The question and the metrics",
        "When the nodes of a swarm know different things, does sharing carry a skill from the node that has it to the "
        "nodes that lack it, and which way of training received answers lets it through? Node k starts from a warm-up "
        "specialised on task k mod 4 and is asked all four tasks every round (spec_* arms); the gen_* arms start every "
        "node from the generalists' warm-up.",
        f"- **Primary 1, non-specialty pass@1**: per node, the mean held-out pass@1 over the three tasks it was not "
        f"warmed on (`node/eval_by_task`, `node.K.run.specialty`); the mean over nodes; averaged over the last "
        f"{study.last_k} evaluations (rounds 800-1000 of a 1000-round run). For the gen_* arms: pass@1 over all four "
        f"tasks, the same way.\n"
        f"- **Primary 2, cumulative own reward**: the sum over nodes and rounds of the mean reward of a node's own "
        f"completions (`node/reward_own`).\n"
        f"- Secondary: the specialty's pass@1 (last {study.last_k} evaluations).\n"
        f"- Statistics: paired by seed (same warm-ups, same question streams); the difference's Student t 95% CI "
        f"(scipy.stats), the t test's p, Holm's correction within each family (over the comparisons that have a p: "
        f"all of them when every run is in), and beside each the exact sign-flip permutation p over all 2^n sign "
        f"patterns (n = 6 all of one sign: 2/64 = 0.031) and the relative change as a log-ratio per seed, its t "
        f"interval mapped back by exp - 1 (a seed whose value is 0 on either side has no log-ratio: its n is then "
        f"given). 'relative change' divides the difference and its CI by the reference's mean.",
        SCOPE])


def section_family(study, family, title, note):
    return family_section(study, family, DIGITS, title, f"{note}: {len(family)} comparisons.",
                          metric_labels(study.last_k))


def section_main(study):
    return section_family(
        study, MAIN, "The main family (18 comparisons, Holm over all of them)",
        "Each sharing specialist arm at 4/4 against the silo 8/0 (8 own groups, no sharing) and the equal-generation "
        "silo 4/0 (4 own groups, no sharing), and spec_tis against spec_positive_only (does truncated IS block what "
        "positive_only lets through?), on both primary metrics (P1: non-specialty pass@1, P2: cumulative own reward)")


def section_second(study):
    return section_family(
        study, SECOND, "The generalists' family (6 comparisons, Holm within it)",
        "The same swarm with every node from the generalists' warm-up: each sharing arm at 4/4 against gen_silo 8/0, "
        "on own reward and on pass@1 over all four tasks")


def section_arms(study):
    rows = []
    for arm, splits in ARMS.items():
        for split in splits:
            if not study.has(arm, split):
                rows.append([arm, SPLIT_LABEL[split], 0] + ["–"] * 7)
                continue
            ms = {k: mean_sd(study.values(arm, split, k).values()) for k in
                  ("own", "nonspec0", "nonspec", "spec0", "spec", "all0", "all")}
            pm = lambda k, d: "–" if not ms[k][2] else fmt(ms[k][0], d) + (  # noqa: E731
                f" ± {fmt(ms[k][1], d)}" if np.isfinite(ms[k][1]) else "")
            rows.append([arm, SPLIT_LABEL[split], len(study.used(arm, split)), pm("own", 1)] +
                        [pm(k, 3) for k in ("nonspec0", "nonspec", "spec0", "spec", "all0", "all")])
    k = study.last_k
    return "\n\n".join([
        "## The arms",
        f"Mean ± sd over seeds. First: the evaluation before round 0 (the warm-ups); last {k}: the mean of the last {k} "
        f"evaluations. A generalist has no specialty: its non-specialty and specialty columns read '–'.",
        table(["arm", "split", "seeds", "cumulative own reward", "non-specialty pass@1, first", f"non-specialty, last {k}",
               "specialty pass@1, first", f"specialty, last {k}", "all tasks, first", f"all tasks, last {k}"], rows)])


def section_specialty(study):
    _, text = comparison_table(study, SPECIALTY, DIGITS, metric_labels(study.last_k), "comparison (secondary)", with_ci=True)
    return "\n\n".join([
        "## Secondary: does sharing cost a node its own skill?",
        f"The specialty's pass@1 (last {study.last_k} evaluations) of each sharing specialist arm against spec_silo 8/0 "
        "and 4/0. Planned as a secondary metric, outside both families: no Holm correction; the t test's p, the exact "
        "sign-flip p and the count of seeds above / below 0 are given together.", text])


def section_arrival(study):
    rows = []
    for arm, splits in ARMS.items():
        if not arm.startswith("spec_"):
            continue
        for split in splits:
            es = study.used(arm, split)
            times = [t for e in es for t in e.values["arrival"]]
            got = [t for t in times if np.isfinite(t)]
            levels = [e.values["level"] for e in es if np.isfinite(e.values["level"])]
            rows.append([arm, SPLIT_LABEL[split], len(es), spread_text(levels, 3), len(times),
                         len(got), len(times) - len(got),
                         fmt(float(np.median(got)), 0) if got else "–", fmt(float(np.mean(got)), 0) if got else "–",
                         spread_text(got, 0)])
    return "\n\n".join([
        "## How fast a skill arrives (descriptive)",
        "Per node, the rounds of training until its non-specialty pass@1 (the mean over its three other tasks) first "
        "reaches half of the specialists' level: the mean specialty pass@1 of the run's nodes at its first evaluation "
        "(before round 0: the warm-ups). A time is that of the first evaluation at or above the level, so a multiple "
        "of the evaluation interval (`run.eval_every`, 50 rounds in the plan). Median and mean over the nodes of "
        "every seed that reach it; 'never': the nodes that do not within the run. The level: mean over seeds "
        "(range). No test. The gen_* arms have no specialty and no such time.",
        table(["arm", "split", "seeds", "half the specialists' level", "nodes", "reach it", "never",
               "median rounds", "mean rounds", "mean (range) of those that reach it"], rows)])


def section_diagnostics(study):
    rows = []
    for arm, splits in ARMS.items():
        for split in splits:
            es = study.used(arm, split)
            if not es:
                continue
            get = lambda k: [e.values[k] for e in es if np.isfinite(e.values[k])]  # noqa: E731
            weighted = arm.endswith("_tis") or arm.endswith("_ftis")
            tie = get("train_in_eval")
            rows.append([arm, SPLIT_LABEL[split], len(es),
                         spread_text(get("weight"), 3) if weighted else "–",
                         spread_text(get("capped"), 4) if weighted else "–",
                         spread_text(get("drop"), 3) if arm.endswith("_ftis") else "–",
                         spread_text(get("grad_first"), 3), spread_text(get("grad_end"), 3),
                         spread_text(get("format_first"), 2), spread_text(get("format_end"), 2),
                         fmt(sum(tie), 0) if tie else "–"])
            if tie and sum(tie) > 0:
                study.warnings.append(f"{arm} {SPLIT_LABEL[split]}: {sum(tie):.0f} held-out questions asked in the rounds "
                                      f"(train_in_eval must be 0)")
    return "\n\n".join([
        "## Diagnostics (descriptive)",
        f"From the summaries' node-mean columns, mean over rounds, then mean over seeds (range): the importance weight "
        f"min(pi / mu, `grpo.tis_cap`) over received tokens and the share capped (`mean/offpolicy_weight`, "
        f"`mean/offpolicy_capped`; tis and ftis), the share of received completions the F-TIS rule dropped "
        f"(`mean/offpolicy_dropped`; ftis), the gradient norm before clipping (`mean/grad_norm`) over the first {START} "
        f"and the last {END} rounds, the answer-format rate of own completions (`mean/format_rate`) over the first and "
        f"last {END} rounds, and the held-out questions asked in the rounds (`train_in_eval`, summed over nodes and "
        f"rounds; must be 0). fig_diagnostics.png draws each over rounds.",
        table(["arm", "split", "seeds", "importance weight", "capped share", "F-TIS drop",
               f"grad norm, first {START}", f"grad norm, last {END}", f"format, first {END}", f"format, last {END}",
               "train_in_eval"], rows),
        "![diagnostics](fig_diagnostics.png)"])


def read_warmups(folder, seeds, warnings):
    """{seed: [(stem, CKPT.json dict)]} of the warm-ups' JSONs in folder/sSEED/."""
    out = {}
    for seed in seeds:
        files = sorted(glob.glob(os.path.join(folder, f"s{seed}", "*.ckpt.json")))
        if not files:
            warnings.append(f"{os.path.join(folder, f's{seed}')}: no warm-up JSON")
            continue
        out[seed] = []
        for path in files:
            try:
                with open(path, encoding="utf-8") as f:
                    out[seed].append((os.path.basename(path)[:-len(".ckpt.json")], json.load(f)))
            except (OSError, ValueError) as e:
                warnings.append(f"{path}: unreadable ({e})")
    return out


def rule_texts(stem, d, format_json):
    """A specialist warm-up's verdicts under the plan's calibration rule and the amended one
    (analysis/calibration_rule.py): 'yes'/'no', and for the amendment 'weak' where only the
    specialty's band is missed; '–' for the other warm-ups or where a value is missing."""
    if not stem.startswith("spec-"):
        return "–", "–"
    task, p, tags = stem[len("spec-"):], d.get("pass1_by_task", {}), d.get("format_rate_by_task", {})
    if task not in TASKS or any(t not in p or t not in tags for t in TASKS):
        return "–", "–"
    base = (format_json or {}).get("pass1_by_task", {})
    v = calibration_rule.judge(task, p, tags, base if all(t in base for t in TASKS) else None)
    yes = lambda ok: "yes" if ok else "no"  # noqa: E731
    amended = "–" if not base else "yes" if v.amended else "weak" if v.weak_ok else "no"
    return yes(v.plan), amended


def section_warmups(warmups):
    rows = []
    for seed, items in sorted(warmups.items()):
        format_json = dict(items).get("format")
        for stem, d in items:
            p, tags = d.get("pass1_by_task", {}), d.get("format_rate_by_task", {})
            num = lambda x, dg: fmt(float(x), dg) if isinstance(x, (int, float)) else "–"  # noqa: E731
            rows.append([seed, stem, num(d.get("steps"), 0), num(d.get("demonstrations"), 0),
                         num(d.get("held_out_drawn"), 0)] + [num(p.get(t), 3) for t in TASKS] +
                        [num(min(tags.values()), 2) if tags else "–", *rule_texts(stem, d, format_json)])
    return "\n\n".join([
        "## The warm-ups",
        "Each warm-up's CKPT.json (sapo pretrain): its steps, demonstrations, how many of its draws were held-out "
        "questions (drawn again: `tasks.exclude_eval`), its held-out pass@1 per task and its lowest answer-tag rate "
        "over the four tasks; 'rule': whether a specialist meets the plan's calibration rule (specialty pass@1 in "
        "0.10-0.40, each other task below 0.03, tags at least 0.7 on every task); 'amended': the amended rule "
        "(calibration/README.md: each other task at most the seed's format warm-up's pass@1 there + 0.05), 'weak' "
        "where only the specialty's band is missed (a weak specialty: its nodes have little skill to give).",
        table(["seed", "warm-up", "steps", "demonstrations", "held-out drawn"] + [f"pass@1 {t}" for t in TASKS] +
              ["lowest tag rate", "rule", "amended"], rows),
        "Held-out questions drawn (and drawn again) over all these warm-ups: " + ", ".join(
            f"seed {seed} {sum(int(d.get('held_out_drawn', 0) or 0) for _, d in items)}"
            for seed, items in sorted(warmups.items())) + "."])


# ---- figures -------------------------------------------------------------------------------

COLORS = [f"C{i}" for i in range(10)] + ["black"]  # one per arm and split (11)


def _band(ax, xs, ys, color, label, style="-"):
    ys = np.stack(ys)
    ax.plot(xs, ys.mean(axis=0), style, color=color, lw=1.2, ms=3, label=label)
    ax.fill_between(xs, ys.min(axis=0), ys.max(axis=0), color=color, alpha=0.12, lw=0)


def _same_evals(es):
    """The evaluations every run has (the shortest run's), and their rounds of training."""
    n = min(len(e.values["trained"]) for e in es)
    return n, es[0].values["trained"][:n]


def tasks_figure(study, out_dir):
    """One row per specialist arm, one panel per task: pass@1 on that task of the nodes whose
    specialty it is, and of the others, from round 0 (mean over seeds, shaded min-max)."""
    import matplotlib.pyplot as plt
    series = [(a, s) for a, ss in ARMS.items() if a.startswith("spec_") for s in ss]
    fig, axes = plt.subplots(len(series), len(TASKS), figsize=(3.4 * len(TASKS), 2.2 * len(series)), sharex=True,
                             sharey=True, squeeze=False)
    for i, (arm, split) in enumerate(series):
        es = [e for e in study.used(arm, split) if e.values.get("curves") is not None]
        axes[i][0].set_ylabel(f"{name_of(arm, split)}\n({len(es)} seeds)", fontsize=8)
        if not es:
            continue
        n, xs = _same_evals(es)
        for j, task in enumerate(TASKS):
            ax = axes[i][j]
            mine = [e.values["task_curves"][[k for k, s in enumerate(e.values["specialty"]) if s == task], :n, j].mean(axis=0)
                    for e in es]
            other = [e.values["task_curves"][[k for k, s in enumerate(e.values["specialty"]) if s != task], :n, j].mean(axis=0)
                     for e in es]
            _band(ax, xs, mine, "C0", "nodes specialised on it", "o-")
            _band(ax, xs, other, "C3", "the other nodes", "s--")
    for j, task in enumerate(TASKS):
        axes[0][j].set_title(task, fontsize=9)
        axes[-1][j].set_xlabel("round")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8)
    fig.suptitle("Held-out pass@1 per task, from round 0: the task's specialists against the other nodes", fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 0.98))
    fig.savefig(os.path.join(out_dir, "fig_tasks.png"), dpi=figures.DPI)
    plt.close(fig)
    return "fig_tasks.png"


def curves_figure(study, out_dir):
    """Non-specialty and specialty pass@1 of the specialist arms, pass@1 over all tasks of the
    generalist arms, own reward of all (trailing mean of 50 rounds); mean over seeds, min-max."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    titles = ("specialists: non-specialty pass@1", "specialists: specialty pass@1", "generalists: pass@1, all tasks",
              "own reward (trailing mean, 50 rounds)")
    i = 0
    for arm, splits in ARMS.items():
        for split in splits:
            es = study.used(arm, split)
            color, label = COLORS[i], f"{name_of(arm, split)} ({len(es)})"
            i += 1
            if not es:
                continue
            _band(axes[3], es[0].run.rounds, [figures.trailing_mean(e.values["own_curve"], 50) for e in es], color, label)
            if arm.startswith("spec_"):
                ok = [e for e in es if e.values.get("curves") is not None]
                if ok:
                    n, xs = _same_evals(ok)
                    _band(axes[0], xs, [e.values["curves"]["nonspec"][:n] for e in ok], color, label, "o-")
                    _band(axes[1], xs, [e.values["curves"]["spec"][:n] for e in ok], color, label, "o-")
            else:
                ok = [e for e in es if "task_curves" in e.values]
                if ok:
                    n, xs = _same_evals(ok)
                    _band(axes[2], xs, [e.values["task_curves"][:, :n].mean(axis=(0, 2)) for e in ok], color, label, "o-")
    return figures.finish_panels(fig, axes, titles, "round", out_dir, "fig_curves.png")


def trailing_nanmean(x, w):
    """figures.trailing_mean over the rounds that have a value (NaN where none of the last w has)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return figures.trailing_mean(np.nan_to_num(x), w) / figures.trailing_mean(np.isfinite(x).astype(float), w)


DIAGNOSTIC_PANELS = (("grad_curve", "gradient norm before clipping (node mean)"),
                     ("format_curve", "answer-format rate of own completions"),
                     ("weight_curve", "importance weight over received tokens (tis, ftis)"),
                     ("drop_curve", "F-TIS: share of received completions dropped"))


def diagnostics_figure(study, out_dir):
    """The diagnostics over rounds (trailing mean of 50 rounds over the rounds that log them; mean
    over seeds, shaded between the seeds' min and max), one panel each."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(DIAGNOSTIC_PANELS), figsize=(5 * len(DIAGNOSTIC_PANELS), 4))
    i = 0
    for arm, splits in ARMS.items():
        for split in splits:
            es = study.used(arm, split)
            color = COLORS[i]
            i += 1
            for ax, (key, _) in zip(axes, DIAGNOSTIC_PANELS):
                if es and all(np.isfinite(e.values[key]).any() for e in es):
                    _band(ax, es[0].run.rounds, [trailing_nanmean(e.values[key], 50) for e in es], color,
                          name_of(arm, split))
    for ax, (_, title) in zip(axes, DIAGNOSTIC_PANELS):
        ax.set_title(title + ",\ntrailing mean of 50 rounds (those that log it)", fontsize=9)
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "fig_diagnostics.png"), dpi=figures.DPI)
    plt.close(fig)
    return "fig_diagnostics.png"


def changes_figures(main_ps, second_ps, out_dir):
    """Two forest plots (analysis.figures.paired_changes): the main family's 9 comparisons on each
    primary metric, the generalists' 3 on each of theirs."""
    panel = lambda family, ps, m: [(name.split(": ", 1)[1], {"paired": ps[name]})  # noqa: E731
                                   for name, mm, *_ in family if mm == m]
    main = figures.paired_changes([("P1: non-specialty pass@1", panel(MAIN, main_ps, "nonspec")),
                                   ("P2: cumulative own reward", panel(MAIN, main_ps, "own"))],
                                  ["paired"], out_dir, "fig_changes.png",
                                  "The main family: paired changes by seed, mean and 95% CI")
    gen = figures.paired_changes([("own reward", panel(SECOND, second_ps, "own")),
                                  ("pass@1, all tasks", panel(SECOND, second_ps, "all"))],
                                 ["paired"], out_dir, "fig_changes_gen.png",
                                 "The generalists' family: paired changes by seed, mean and 95% CI")
    return [main[0], gen[0]], main[1]


# ---- the report ----------------------------------------------------------------------------

TITLE = "# Do skills travel? A swarm of specialists (issue 35)"


def build(summary_dir, out_dir, costs=None, machine=None, seeds=SEEDS, last_k=5, warmups=None, argv=()):
    study = Study(summary_dir, seeds, last_k)
    os.makedirs(out_dir, exist_ok=True)
    costs_rows = read_costs(costs)
    warm = read_warmups(warmups, study.seeds, study.warnings) if warmups else {}
    tail = ([section_warmups(warm)] if warm else [])
    if not study.entries:
        parts = [TITLE, no_runs_text(summary_dir, "arms and seeds", study, "results/specialists/README.md"),
                 this_report("analysis.specialists", argv)] + ignored_and_warnings(
                 study, [w for w in study.warnings if not w.endswith(MISSING_SUFFIX)]) + tail + [SCOPE]
    else:
        main_text = section_main(study)
        second_text = section_second(study)
        changes, caption = changes_figures(main_text[0], second_text[0], out_dir)
        changes_md = "\n\n".join(f"![paired changes]({f})" for f in changes) + f"\n\n{caption}"
        figs = [tasks_figure(study, out_dir), curves_figure(study, out_dir)]
        diag = section_diagnostics(study)  # before provenance: it may add a warning
        diagnostics_figure(study, out_dir)
        interim = interim_lines(len(study.entries), study.expected(), "results/specialists/README.md")
        parts = [TITLE] + interim + [section_definitions(study), section_provenance(study, costs_rows, machine, argv),
                 main_text[1], second_text[1], changes_md, section_arms(study),
                 section_specialty(study), section_arrival(study),
                 "## Pass@1 curves\n\n" + "\n\n".join(f"![{f}]({f})" for f in figs) +
                 "\n\nfig_tasks.png: per task, the nodes specialised on it (solid) against the other nodes (dashed), "
                 "mean over seeds, shaded between the seeds' min and max; fig_curves.png: non-specialty and specialty "
                 "pass@1 by arm, the generalists' pass@1 over all tasks, own reward.",
                 diag] + tail + [SCOPE]
    write_report(out_dir, parts)
    return study


def main(argv=None):
    return study_main("analysis.specialists", __doc__, "1,2,3,4,5,6",
                      "costs.csv (run,seconds,status,commit,numerics) of experiments/specialists/run.sh",
                      [("--warmups", dict(help="the warm-ups' folder: sSEED/*.ckpt.json (each warm-up's CKPT.json)"))],
                      lambda a, seeds, argv: build(a.summary_dir, a.out, a.costs, a.machine, seeds, a.last_k, a.warmups, argv),
                      argv)


if __name__ == "__main__":
    sys.exit(main())
