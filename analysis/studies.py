"""What the planned-study reports (analysis.paper_regime, analysis.specialists) share: loading
a folder of ARM-SPLIT-sSEED.npz summaries into one study of arms and seeds (a missing run is a
warning, a study reports runs of one numerics version), paired comparisons by seed with the
t test, the exact sign-flip p and the log-ratio interval beside each, a Holm-corrected family
table, and the cells they print."""
import argparse
import csv
import os
import sys

import numpy as np

from .errors import AnalysisError
from .minipaper import scan, signed
from .paired import holm, log_ratio, mde, mean_sd, p_signflip, p_value, paired
from .report import fmt, table, this_report
from .runs import load_summary, require_one_numerics

MISSING_SUFFIX = ": missing"  # the end of a missing run's warning (ignored_and_warnings gathers them)


class Entry:
    """One summary of the study: its arm, split, seed and path, the loaded run and its status;
    .values (the study's numbers of the run) once the run is complete."""

    def __init__(self, arm, split, seed, path):
        self.arm, self.split, self.seed, self.path = arm, split, seed, path
        self.run = load_summary(path)
        self.status = "used" if self.run.complete else f"incomplete: {self.run.n_rounds} of {self.run.expected_rounds} rounds"


class ArmStudy:
    """The summaries in summary_dir of the arms {arm: splits} and seeds asked for. values_of(entry)
    gives a complete run's numbers ({key: value}); an incomplete run is a warning and left out;
    a run of an arm, split or seed not asked for is listed as ignored; an expected run that is
    not there is a warning ('missing'), or 'pending' for the arms in pending. allow_empty: a
    folder with no summaries at all is a study with no runs (else an AnalysisError)."""

    def __init__(self, summary_dir, arms, seeds, values_of, pending=(), allow_empty=False):
        found, self.ignored = scan(summary_dir, allow_empty)
        self.arms, self.seeds, self.warnings, self.entries = arms, list(seeds), [], {}
        for (arm, split, seed), path in sorted(found.items()):
            if arm not in arms or split not in arms[arm] or seed not in self.seeds:
                self.ignored.append(os.path.basename(path))
                continue
            e = Entry(arm, split, seed, path)
            if not e.run.complete:
                self.warnings.append(f"{e.path}: {e.status}; left out")
            else:
                e.values = values_of(e)
            self.entries[(arm, split, seed)] = e
        require_one_numerics((e.path, e.run) for e in self.entries.values())
        self.pending = []
        for arm, splits in arms.items():
            for split in splits:
                for seed in self.seeds:
                    if (arm, split, seed) not in self.entries:
                        if arm in pending:
                            self.pending.append(f"{arm}-{split}-s{seed}.npz")
                        else:
                            self.warnings.append(f"{arm}-{split}-s{seed}.npz{MISSING_SUFFIX}")

    def used(self, arm, split):
        """The complete runs of an arm and split, by seed."""
        return [e for (a, sp, _), e in sorted(self.entries.items()) if a == arm and sp == split and hasattr(e, "values")]

    def has(self, arm, split):
        return bool(self.used(arm, split))

    def values(self, arm, split, key):
        return {e.seed: e.values[key] for e in self.used(arm, split)}

    def compare(self, key, a, sa, b, sb):
        """A - B paired by seed on key (paired()), with the t test's p, the minimum detectable
        effect, the exact sign-flip p and the log-ratio change."""
        p = paired(self.values(a, sa, key), self.values(b, sb, key))
        p["p"] = p_value(p)
        p["mde"] = mde(p["sd"], p["n"])
        p["p_signflip"] = p_signflip(p)
        p["lr"] = log_ratio(self.values(a, sa, key), self.values(b, sb, key))
        return p


def rel(p):
    """A relative change with its CI: +7.9% [+5.0, +10.9] (p: a paired() or log_ratio() result)."""
    if not np.isfinite(p["rel"]):
        return "–"
    if not np.isfinite(p["rel_lo"]):
        return f"{100 * p['rel']:+.1f}%"
    return f"{100 * p['rel']:+.1f}% [{100 * p['rel_lo']:+.1f}, {100 * p['rel_hi']:+.1f}]"


def pv(x):
    return "–" if not np.isfinite(x) else (f"{x:.3f}" if x >= 0.001 else "<0.001")


def signs(p):
    """'4+ / 0- of 4' style count of the paired differences' signs."""
    if not p["n"]:
        return "–"
    up, down = sum(d > 0 for d in p["diffs"]), sum(d < 0 for d in p["diffs"])
    return f"{up}+ / {down}- of {p['n']}"


def pct_of(x, base):
    return "–" if not (np.isfinite(x) and np.isfinite(base) and base) else f"{100 * x / abs(base):.1f}% of the reference"


def spread_text(values, digits):
    """'mean (min-max)' of a list of values over seeds; '–' for none."""
    m = mean_sd(values)
    if not m[2]:
        return "–"
    return f"{fmt(m[0], digits)} ({fmt(min(values), digits)}-{fmt(max(values), digits)})"


def ci_text(p, digits):
    """[lo, hi] of a paired() result's 95% CI; '–' below two seeds."""
    return f"[{signed(p['lo'], digits)}, {signed(p['hi'], digits)}]" if np.isfinite(p["half"]) else "–"


def family_table(study, family, digits, metric_label, with_ci=False, whole=False):
    """The comparisons of one Holm family as a table. family: [(name, metric, arm A, split A,
    arm B, split B)], A - B paired by seed; digits: an int or {metric: int}; with_ci adds the
    difference's 95% CI and, where the log-ratio has fewer seeds than the difference (a value
    <= 0), its n. Holm's m is the number of comparisons with a p, or with whole the size of the
    family (a comparison without a p counts as p = 1). Returns ({name: compare()}, markdown)."""
    dig = (lambda m: digits[m]) if isinstance(digits, dict) else (lambda m: digits)  # noqa: E731
    if len({c[0] for c in family}) != len(family):
        raise ValueError("a family's comparisons need distinct names (they key its Holm correction)")
    ps = {name: study.compare(m, a, sa, b, sb) for name, m, a, sa, b, sb in family}
    adj = holm({k: 1.0 if whole and not np.isfinite(p["p"]) else p["p"] for k, p in ps.items()})
    rows = []
    for name, m, a, sa, b, sb in family:
        p, d = ps[name], dig(m)
        padj, rejected = adj.get(name, (float("nan"), False)) if np.isfinite(p["p"]) else (float("nan"), False)
        p["holm_p"], p["rejected"] = padj, rejected
        if p["n"] < 2:
            verdict = "untestable (fewer than 2 paired seeds)"
        elif rejected:
            verdict = "**significant after Holm**"
        else:
            verdict = f"not significant after Holm (MDE {signed(p['mde'], d)}, {pct_of(p['mde'], p['base'])})"
        lr = rel(p["lr"])
        if with_ci and p["lr"]["n"] < p["n"]:
            lr += f" (n = {p['lr']['n']})"
        rows.append([name, metric_label[m], p["n"], fmt(p["base"], d), signed(p["mean"], d)] +
                    ([ci_text(p, d)] if with_ci else []) +
                    [rel(p), pv(p["p"]), pv(padj), pv(p["p_signflip"]), lr, verdict])
    head = ["comparison", "metric", "n", "reference mean", "mean difference"] + (["95% CI"] if with_ci else []) + \
        ["relative change [95% CI]", "p", "Holm p", "sign-flip p", "log-ratio change [95% CI]", "verdict"]
    return ps, table(head, rows, ["l", "l"] + ["r"] * (len(head) - 3) + ["l"])


def family_section(study, family, digits, title, what, labels):
    """A Holm family as a report section: its title, what it compares, the family table over all
    of it (family_table with CIs, whole) and what the seeds allow the sign-flip p to reach.
    Returns ({name: compare()}, markdown)."""
    ps, md = family_table(study, family, digits, labels, with_ci=True, whole=True)
    n_p = sum(np.isfinite(p["p"]) for p in ps.values())
    n = len(study.seeds)
    floor = 2.0 / 2 ** n if n else float("nan")
    reach = (f"With {n} seeds the smallest exact sign-flip p is {floor:.3g}" +
             (": no comparison reaches 0.05 without the normality assumption of the t test." if floor > 0.05 else "."))
    return ps, "\n\n".join([f"## {title}", f"{what} Holm over all {len(family)} ({n_p} with a p; a comparison without "
                             f"one counts as p = 1). {reach}", md])


def comparison_table(study, comparisons, digits, metric_label, first="comparison", with_ci=False):
    """Comparisons outside any Holm family (no correction): the t test's p, the exact sign-flip
    p, the log-ratio change and the count of seeds above / below 0. Arguments as family_table's;
    first: the first column's title. Returns ({(name, metric): compare()}, markdown)."""
    dig = (lambda m: digits[m]) if isinstance(digits, dict) else (lambda m: digits)  # noqa: E731
    ps, rows = {}, []
    for name, m, a, sa, b, sb in comparisons:
        p, d = study.compare(m, a, sa, b, sb), dig(m)
        ps[(name, m)] = p
        rows.append([name, metric_label[m], p["n"], fmt(p["base"], d), signed(p["mean"], d)] +
                    ([ci_text(p, d)] if with_ci else []) +
                    [rel(p), pv(p["p"]), pv(p["p_signflip"]), rel(p["lr"]), signs(p)])
    head = [first, "metric", "n", "reference mean", "mean difference"] + (["95% CI"] if with_ci else []) + \
        ["relative change [95% CI]", "p", "sign-flip p", "log-ratio change [95% CI]", "seeds"]
    return ps, table(head, rows, ["l", "l"] + ["r"] * (len(head) - 3) + ["l"])


def read_costs(path):
    """{run: row} of a costs.csv (run,seconds,status,commit[,numerics]); {} without a path."""
    if not path:
        return {}
    try:
        with open(path, newline="") as f:
            return {r["run"]: r for r in csv.DictReader(f)}  # a resumed run's last line wins
    except (OSError, KeyError, csv.Error) as e:
        raise AnalysisError(f"{path}: cannot read the costs table ({e})") from None


def costs_line(costs, warnings):
    """The provenance line of a costs.csv ({run: row}, read_costs): runs, hours, the sapo binary's
    commits and numerics versions; more than one numerics version is added to warnings."""
    commits = sorted({r.get("commit") or "–" for r in costs.values()})
    numerics = sorted({r.get("numerics") or "–" for r in costs.values()})
    seconds = [float(r["seconds"]) for r in costs.values() if (r.get("seconds") or "").replace(".", "", 1).isdigit()]
    if len(numerics) > 1:
        warnings.append(f"costs.csv records more than one numerics version ({', '.join(numerics)})")
    return (f"costs.csv: {len(costs)} run{'' if len(costs) == 1 else 's'}, {sum(seconds) / 3600:.1f} hours of wall "
            f"time in all; commits of the sapo binary: {', '.join(commits)}; numerics versions: {', '.join(numerics)}.")


def ignored_and_warnings(study, warnings=None):
    """The provenance's closing lines: the summaries the study ignored (not its arms, splits or
    seeds) and the warnings (study.warnings unless given), the missing runs gathered in one."""
    warnings = study.warnings if warnings is None else warnings
    lines = []
    if study.ignored:
        lines.append("Ignored (not this study's arms, splits or seeds): " + ", ".join(f"`{x}`" for x in study.ignored) + ".")
    missing = [w[:-len(MISSING_SUFFIX)] for w in warnings if w.endswith(MISSING_SUFFIX)]
    others = [w for w in warnings if not w.endswith(MISSING_SUFFIX)]
    if missing:  # one line, however many: an interim report would otherwise list most of the plan
        others.append(f"missing ({len(missing)}): " + ", ".join(missing))
    if others:
        lines.append("Warnings:\n\n" + "\n".join(f"- {w}" for w in others))
    return lines


def interim_lines(n, expected, plan):
    """[] when the study is complete, else the report's first line saying nothing is a finding yet."""
    if n >= expected:
        return []
    return [f"**Interim: {n} of the {expected} planned runs are in.** Nothing below is a finding until every run is "
            f"in: the intervals, p-values and Holm are over the seeds present, and the plan ({plan}) reads the study "
            "only when it is complete."]


def no_runs_text(summary_dir, what, study, plan):
    """The report's line when no run of the study is in yet (what: 'arms and seeds', ...)."""
    return (f"**No runs are in yet.** `{summary_dir}` holds no summary of this study's {what} (0 of the "
            f"{study.expected()} planned runs, seeds {', '.join(map(str, study.seeds))}): nothing to compare. The plan, "
            f"fixed before any run, is {plan}.")


def provenance_head(module, runs, machine, argv):
    """The first lines of a report's provenance: the heading, how the runs were made (runs), the
    command that made this report and the machine."""
    return ["## Provenance", runs, this_report(module, argv),
            f"Machine: {machine or 'not stated (--machine)'}."]


def write_report(out_dir, parts):
    """OUT_DIR/REPORT.md: the parts (markdown), a blank line between them."""
    with open(os.path.join(out_dir, "REPORT.md"), "w") as f:
        f.write("\n\n".join(parts) + "\n")


def study_main(module, doc, seeds, costs_help, extra, build_with, argv=None):
    """The command line every study report shares: SUMMARY_DIR -o OUT_DIR [--costs FILE]
    [--machine TEXT] [--seeds LIST] [--last-k K] and the report's own options extra = [(flag,
    add_argument keywords)]; checks --seeds and --last-k, calls build_with(args, seeds, argv).
    Returns the exit status: 0, 1 on an AnalysisError (one line on stderr), 2 on bad arguments."""
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog=f"python3 -m {module}", description=doc.split("\n\n")[0])
    ap.add_argument("summary_dir")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--costs", help=costs_help)
    ap.add_argument("--machine", help="the machine the runs ran on, for the provenance line")
    ap.add_argument("--seeds", default=seeds)
    ap.add_argument("--last-k", type=int, default=5)
    for flag, kw in extra:
        ap.add_argument(flag, **kw)
    a = ap.parse_args(argv)
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        print(f"--seeds {a.seeds!r}: expected comma-separated integers", file=sys.stderr)
        return 2
    if a.last_k < 1:
        print(f"--last-k {a.last_k}: expected at least 1", file=sys.stderr)
        return 2
    try:
        build_with(a, seeds, argv)
    except AnalysisError as e:
        print(f"{module}: {e}", file=sys.stderr)
        return 1
    return 0
