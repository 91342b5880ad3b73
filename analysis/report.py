"""Report on sapo runs: OUT_DIR/REPORT.md with the paper's table, curve statistics, evaluation,
network numbers and PNG figures.

Usage:
  python3 -m analysis.report RUN_DIR|SUMMARY.npz|FOLDER... -o OUT_DIR [--title T]
      [--window 100] [--rounds N] [--ignore KEY]... [--note TEXT]... [--skip-bad]

  RUN_DIR      a run directory (node_NNNN.h5, config.ini, DONE; raw HDF5)
  SUMMARY.npz  a summary written by `python3 -m analysis.summarize RUN_DIR... -o DIR`
  FOLDER       a sweep's folder: the run directories and summaries up to two levels below

Runs are grouped into configurations by the config keys that differ between them (swarm.seed
makes the repeats); the baseline is the J = 0, I = G configuration (the paper's 8/0). Runs
without DONE or with short node files are used up to their last complete round, with a
warning; an unreadable input stops with one line naming the file (or is skipped with
--skip-bad). Use /usr/bin/python3 (Debian's numpy, h5py, matplotlib)."""
import argparse
import datetime
import os
import shlex
import subprocess
import sys

import numpy as np

from . import figures
from .errors import AnalysisError
from .grouping import REPEAT_KEYS, group_runs, varying_keys
from .metrics import PAPER_WINDOW, TIME_METRICS, change, config_metrics, window_for
from .paper import PAPER_CHANGES, PAPER_NODE_ROUNDS, PAPER_NOTE, PAPER_TOTALS
from .runs import expand_inputs, load_any

REWARD_TITLES = {"reward_own": "own rollouts (reward_own)",
                 "reward_train": "training batch, own + external groups (reward_train)"}


# ---- formatting ---------------------------------------------------------------------------

def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def pct(x):
    return "–" if x is None or not np.isfinite(x) else f"{x * 100:+.1f}%"


def table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def this_report(module, argv):
    """The line that says how a report was made, its arguments quoted so it can be pasted."""
    return f"This report: `python3 -m {module} {shlex.join(argv)}`."


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model})"


def code_commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        if out.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10)
        return out.stdout.strip() + (" with local changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


# ---- sections -----------------------------------------------------------------------------

def section_runs(configs, ms):
    rows = []
    for c, cm in zip(configs, ms):
        for run, rm in zip(c.runs, cm["runs"]):
            ev = rm["eval"]
            last = fmt(ev["mean"][-1], 3) + f" (round {ev['rounds'][-1]})" if ev["rounds"].size else "–"
            src = run.source if run.kind == "hdf5" else f"{run.summary_path} (summary of {run.source})"
            rows.append([f"`{src}`", c.label, run.seed, run.n_nodes, f"{run.n_rounds}/{run.expected_rounds}",
                         "yes" if run.done else "**no**", fmt(rm["reward_own"]["cumulative"]),
                         fmt(rm["reward_train"]["cumulative"]), last])
    return "## Runs\n\n" + table(["run", "configuration", "seed", "nodes", "rounds logged/configured", "DONE",
                                  "cum. reward own", "cum. reward train", "last pass@1"], rows,
                                 ["l", "l", "r", "r", "r", "l", "r", "r", "r"])


def section_config(runs, configs):
    keys = varying_keys(runs)
    lines = ["## Configuration"]
    if len(runs) == 1:
        lines.append("One run, so nothing differs between runs. Its resolved settings are below.")
    elif not keys:
        lines.append("The runs have identical settings.")
    else:
        lines.append("Settings that differ between the runs (node overrides as node.K.section.key; keys that only "
                     f"name a repeat or a file, {', '.join(REPEAT_KEYS)}, do not split configurations):")
        rows = []
        for c in configs:
            for run in c.runs:
                flat = run.config.flat()
                rows.append([run.name, c.label] + [f"`{flat.get(k, '(unset)')}`" for k in keys])
        lines.append(table(["run", "configuration"] + [f"`{k}`" for k in keys], rows, ["l"] * (2 + len(keys))))
    shared = [(k, v) for k, v in sorted(runs[0].config.flat().items()) if k not in keys]
    lines.append("\n<details><summary>Settings shared by every run</summary>\n\n```ini\n" +
                 "\n".join(f"{k} = {v}" for k, v in shared) + "\n```\n</details>")
    return "\n\n".join(lines)


def _cum_rows(configs, ms, metric):
    rows = []
    for c, cm in zip(configs, ms):
        s = cm[metric]["cumulative"]
        if c.baseline is c:
            vs = "baseline"
        elif c.baseline is not None:
            base = ms[configs.index(c.baseline)][metric]["cumulative"]["mean"]
            vs = pct(change(s["mean"], base)) + (f" ({c.baseline_note})" if c.baseline_note else "")
        else:
            vs = "– (no J = 0 run)"
        p = c.paper
        rounds = sorted({r.n_rounds for r in c.runs})
        rows.append([c.label, ", ".join(str(x) for x in c.seeds), f"{c.runs[0].n_nodes} x "
                     + "/".join(str(r) for r in rounds), fmt(s["mean"]), fmt(s["std"]),
                     f"{fmt(s['min'])} – {fmt(s['max'])}", fmt(cm[metric]["mean_per_round"]["mean"], 4), vs,
                     p or "–", fmt(PAPER_TOTALS[p]) if p else "–",
                     fmt(PAPER_TOTALS[p] / PAPER_NODE_ROUNDS, 4) if p else "–", PAPER_CHANGES[p] if p else "–"])
    return rows


def section_cumulative(configs, ms, figs):
    lines = ["## Cumulative reward (the paper's table)",
             "Cumulative reward = the sum over nodes and rounds of a node's mean reward in that round. Mean, "
             "sample std (ddof 1; – for one seed) and min – max are over the seeds of a configuration; "
             "\"vs baseline\" compares means with the J = 0, I = G configuration (the paper's 8/0). \"paper split\" "
             "is the paper's configuration with the same share of external groups J/G; \"per node-round\" is the "
             "total divided by nodes x rounds (the paper's by 8 x 2000), the mean reward of one node in one round."]
    header = ["configuration", "seeds", "nodes x rounds", "mean", "std", "min – max", "per node-round",
              "vs baseline", "paper split", "paper total", "paper per agent-round", "paper vs 8/0"]
    for metric in ("reward_own", "reward_train"):
        lines.append(f"### On {REWARD_TITLES[metric]}\n\n" + table(header, _cum_rows(configs, ms, metric)))
    lines.append(f"Note: {PAPER_NOTE} Whether the paper's reward counts external groups is not stated; genrl logs "
                 "the training-batch mean, so compare its numbers with the training-batch table first.")
    if not any(c.baseline for c in configs):
        lines.append("No baseline in these runs (no configuration with sampling.external = 0 and sampling.local = "
                     "sampling.groups), so no change vs baseline is shown.")
    mixed = [c.label for c in configs if len({r.n_rounds for r in c.runs}) > 1]
    if mixed or len({r.n_rounds for c in configs for r in c.runs}) > 1:
        lines.append("**Warning:** the runs have different numbers of logged rounds, so their cumulative sums are "
                     "not comparable; rerun the report with `--rounds N` to cut every run to its first N rounds.")
    lines += [fig_md(f) for f in figs]
    return "\n\n".join(lines)


def section_shape(configs, ms, window, figs):
    lines = ["## Curve shape: oscillation",
             f"Computed on the agent-averaged reward per round (mean over nodes). roughness = mean absolute "
             f"round-to-round change (raw); oscillation = std of the moving average (window {window}) around its "
             f"least-squares line, i.e. slow swings without the trend; band = mean over rounds of max - min across "
             f"agents of their own moving averages; peak and final = highest and last moving-average value. "
             f"Means over seeds (± sample std when there are several)."]
    header = ["configuration", "roughness", "oscillation", "band", "peak MA", "final MA"]
    for metric in ("reward_own", "reward_train"):
        rows = []
        for c, cm in zip(configs, ms):
            s = cm[metric]

            def ms_(f):
                v = s[f]
                return fmt(v["mean"], 4) + (f" ± {fmt(v['std'], 4)}" if v["n"] > 1 else "")

            rows.append([c.label] + [ms_(f) for f in ("roughness", "oscillation", "band_width", "peak_ma",
                                                      "final_ma")])
        lines.append(f"### On {REWARD_TITLES[metric]}\n\n" + table(header, rows))
    lines += [fig_md(f) for f in figs]
    return "\n\n".join(lines)


def section_eval(configs, ms, figs):
    lines = ["## Evaluation: pass@1 on held-out questions",
             "Each evaluating round, every node answers the fixed held-out set once after its training step "
             "(run.eval_questions questions generated from run.eval_seed, balanced over the tasks, the same for every "
             "node, seed and configuration with the same tasks; logs from before that set existed answered "
             "run.eval_questions fresh questions instead); the value is the mean verifier score (partial credit "
             "counted), averaged over nodes and seeds."]
    rows = []
    for c, cm in zip(configs, ms):
        ev = cm["eval"]
        if not ev["rounds"].size:
            rows.append([c.label, "none", "–", "–", "–", "–"])
            continue
        rows.append([c.label, ", ".join(str(r) for r in ev["rounds"][:12]) + (" ..." if ev["rounds"].size > 12 else ""),
                     fmt(ev["mean"][0], 3), fmt(ev["mean"][-1], 3), fmt(float(np.nanmax(ev["mean"])), 3),
                     fmt(float(np.nanmean(ev["mean"])), 3)])
    lines.append(table(["configuration", "rounds evaluated", "first", "last", "best", "mean"], rows))
    lines += [fig_md(f) for f in figs]
    return "\n\n".join(lines)


def section_tasks(configs):
    labels = configs[0].runs[0].task_labels
    if not labels or any(r.task_labels != labels for c in configs for r in c.runs):
        return None
    rows = []
    for t, label in enumerate(labels):
        row = [label]
        for c in configs:
            vals = np.concatenate([r.task_mean[:, t] for r in c.runs])
            vals = vals[~np.isnan(vals)]
            row.append(fmt(float(vals.mean()), 3) if vals.size else "never drawn")
        rows.append(row)
    return ("## Reward by task (own rollouts)\n\nMean over rounds of the node-averaged own reward on each task "
            "(rounds where no node drew the task are skipped), all seeds together; \"never drawn\": no node was asked "
            "that task in any round.\n\n"
            + table(["task"] + [c.label for c in configs], rows))


def section_network(configs, ms, figs):
    net_cols = [("msgs_sent", "msgs sent", 1), ("msgs_received", "received", 1), ("msgs_dropped", "dropped", 2),
                ("msgs_late", "late", 2), ("msgs_rejected", "rejected msgs", 2),
                ("groups_rejected", "rejected groups", 2), ("bytes_sent", "KB sent", 1),
                ("bytes_received", "KB received", 1)]
    pool_cols = [("external_used", "external used", 2), ("shortfall", "shortfall", 2),
                 ("external_flat", "external flat", 2), ("pool_size", "pool size", 1),
                 ("pool_eligible", "pool eligible", 1), ("external_age_min", "age min (rounds)", 2),
                 ("external_age_max", "age max (rounds)", 2), ("online", "online share", 3)]
    logged = set().union(*[cm["network"] for cm in ms])
    net_cols = [c for c in net_cols if c[0] in logged]  # older logs lack the newer columns
    pool_cols = [c for c in pool_cols if c[0] in logged]
    lines = ["## Network and time",
             "Per node and round, mean over nodes, rounds and seeds (KB = 1000 bytes of encoded messages)."]
    for cols, title in ((net_cols, "Messages"), (pool_cols, "External pool")):
        rows = []
        for c, cm in zip(configs, ms):
            row = [c.label]
            for key, _, d in cols:
                v = cm["network"].get(key)
                row.append(fmt(v / 1000 if v is not None and key.startswith("bytes") else v, d))
            rows.append(row)
        lines.append(f"### {title}\n\n" + table(["configuration"] + [n for _, n, _ in cols], rows))
    rows = []
    wall = any("round_time" in cm for cm in ms)
    for c, cm in zip(configs, ms):
        t = cm["time"]
        total = sum(v for v in t.values() if np.isfinite(v))
        rows.append([c.label] + [f"{fmt(t.get(m), 3)} ({fmt(100 * t.get(m, 0) / total if total else None, 0)}%)"
                                 for m in TIME_METRICS] + [fmt(total, 3)]
                    + ([fmt(cm.get("round_time"), 3)] if wall else []))
    lines.append("### Time split (seconds per round on a node, share of the phases' sum)\n\n" +
                 table(["configuration", "generate", "exchange", "train", "wait", "eval", "sum of phases"]
                       + (["round (wall, t_round)"] if wall else []), rows))
    lines += [fig_md(f) for f in figs]
    return "\n\n".join(lines)


def fig_md(fig):
    name, caption = fig
    return f"![{name}]({name})\n\n*{caption}*"


# ---- the command --------------------------------------------------------------------------

def build_report(inputs, out_dir, title="sapo runs", window=PAPER_WINDOW, rounds=None, ignore=(), notes=(),
                 skip_bad=False, command=None, log=None):
    """Write out_dir/REPORT.md and the figures; returns the report's path. Raises AnalysisError."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    runs, warnings = [], []
    for path in expand_inputs(inputs):
        try:
            run = load_any(path)
        except AnalysisError as e:
            if not skip_bad:
                raise
            warnings.append(f"skipped: {e}")
            log(f"warning: skipped: {e}")
            continue
        if rounds is not None:
            if run.n_rounds < rounds:
                run.warnings.append(f"{path}: only {run.n_rounds} rounds logged, fewer than --rounds {rounds}")
            run = run.truncated(rounds)
        for w in run.warnings:
            log(f"warning: {w}")
        warnings += run.warnings
        runs.append(run)
    if not runs:
        raise AnalysisError("no readable run among the inputs")
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        warnings.append(f"the same run name appears more than once ({', '.join(dup)}): is a run given twice "
                        f"(directory and summary)?")
    configs = group_runs(runs, ignore)
    n_min = min(r.n_rounds for r in runs)
    w = window_for(n_min, window)
    ms = [config_metrics(c, w) for c in configs]
    os.makedirs(out_dir, exist_ok=True)

    fig1 = [figures.node_reward(configs, m, out_dir) for m in ("reward_own", "reward_train")]
    fig2 = [figures.avg_reward(configs, m, w, window, out_dir) for m in ("reward_own", "reward_train")]
    fig34 = [figures.compare(configs, w, out_dir), figures.cumulative(configs, out_dir)]
    fig5 = [f for f in [figures.eval_pass1(configs, ms, out_dir)] if f]
    fig6 = [f for f in [figures.time_split(configs, ms, out_dir)] if f]

    head = [f"# {title}", ""]
    if command:
        head.append(f"Made with (working directory `{os.getcwd()}`):\n\n```sh\n{command}\n```\n")
    commit = code_commit()
    head.append(f"Report written {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} on "
                f"{machine()}" + (f", analysis code at commit {commit}" if commit else "") + ".")
    head += [f"\n{n}" for n in notes]
    head.append("\nRounds are numbered from 0, as in the logs' /round dataset.")
    head.append(f"\n{len(runs)} run(s) in {len(configs)} configuration(s): " + ", ".join(
        f"{c.label} ({len(c.runs)} seed{'s' if len(c.runs) > 1 else ''})" for c in configs) + ".")
    parts = ["\n".join(head), section_runs(configs, ms)]
    if warnings:
        parts.append("## Warnings\n\n" + "\n".join(f"- {w}" for w in warnings))
    parts.append(section_config(runs, configs))
    parts.append(section_cumulative(configs, ms, fig1 + fig2 + fig34))
    parts.append(section_shape(configs, ms, w, []))
    parts.append(section_eval(configs, ms, fig5))
    tasks = section_tasks(configs)
    if tasks:
        parts.append(tasks)
    parts.append(section_network(configs, ms, fig6))
    path = os.path.join(out_dir, "REPORT.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(parts) + "\n")
    return path


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python3 -m analysis.report", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("inputs", nargs="+", metavar="RUN_DIR|SUMMARY.npz|FOLDER")
    ap.add_argument("-o", "--out", required=True, metavar="OUT_DIR", help="where REPORT.md and the PNGs go")
    ap.add_argument("--title", default="sapo runs", help="the report's heading")
    ap.add_argument("--window", type=int, default=PAPER_WINDOW,
                    help="moving-average window (default %(default)s, the paper's; shrunk to rounds // 5)")
    ap.add_argument("--rounds", type=int, default=None, help="use only the first N rounds of every run")
    ap.add_argument("--ignore", action="append", default=[], metavar="KEY",
                    help="a config key that should not split configurations (repeatable)")
    ap.add_argument("--note", action="append", default=[], metavar="TEXT",
                    help="a line for the top of the report, e.g. the commit and machine of the runs (repeatable)")
    ap.add_argument("--skip-bad", action="store_true", help="skip unreadable inputs with a warning instead of stopping")
    args = ap.parse_args(argv)
    if args.window < 1 or (args.rounds is not None and args.rounds < 1):
        ap.error("--window and --rounds must be at least 1")
    command = "python3 -m analysis.report " + shlex.join(argv)
    try:
        path = build_report(args.inputs, args.out, args.title, args.window, args.rounds, args.ignore, args.note,
                            args.skip_bad, command)
    except AnalysisError as e:
        print(f"analysis.report: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
