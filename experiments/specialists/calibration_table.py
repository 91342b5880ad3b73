"""The specialist calibration's table (results/specialists/calibration/.../candidates.csv) from the
warm-ups' CKPT.json files copied under DIR/fFORMAT-sSPEC/ (each cell's format warm-up as
format.ckpt.json beside its specialists), judged by the plan's rule (`rule`) and the amended one
(`amended`), both in analysis/calibration_rule.py. A warm-up not made yet (a cell that was stopped) is a row marked pending in both.

With --choose CHOICE.json it also writes the choice under the amendment: the FORMAT at which
the most tasks have a SPEC that meets it (ties: the smaller FORMAT), then per task the smallest
such SPEC; a task with none is a weak specialty at the SPEC, among that FORMAT's complete cells
(all four specialists made) that meet the amendment's other-task and format parts, with its
highest own pass@1 (ties: the smaller SPEC). The SPEC string is warmups.sh's TASK=N,... form.
usage: python3 experiments/specialists/calibration_table.py DIR OUT.csv [--choose CHOICE.json]"""
import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from analysis.calibration_rule import AMENDED_MARGIN, FORMAT_FLOOR, OWN_HIGH, OWN_LOW, TASKS, judge  # noqa: E402


def load(path, what):
    try:
        with open(path) as fh:
            j = json.load(fh)
        return ({t: float(j["pass1_by_task"][t]) for t in TASKS},
                {t: float(j["format_rate_by_task"][t]) for t in TASKS}, j)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"calibration_table: {path}: expected sapo pretrain's CKPT.json of {what} ({e!r})")


def table(folder):
    cells = sorted((int(m.group(1)), int(m.group(2)), d) for d in glob.glob(os.path.join(folder, "f*-s*"))
                   if (m := re.fullmatch(r"f(\d+)-s(\d+)", os.path.basename(d))))
    if not cells:
        sys.exit(f"calibration_table: {folder}: no fFORMAT-sSPEC folders")
    rows = []
    for f, s, d in cells:
        base_path = os.path.join(d, "format.ckpt.json")
        base = load(base_path, "the cell's format warm-up")[0] if os.path.exists(base_path) else None
        for t in TASKS:
            path = os.path.join(d, f"spec-{t}.ckpt.json")
            row = {"format": f, "spec": s, "task": t, "made": os.path.exists(path)}
            if row["made"]:
                if base is None:
                    sys.exit(f"calibration_table: {base_path}: missing (the amendment's ceilings need the "
                             f"cell's format warm-up)")
                pass1, tags, j = load(path, f"the {t} specialist")
                row.update(own=pass1[t], other=max(pass1[u] for u in TASKS if u != t), fmt=min(tags.values()),
                           drawn=j.get("held_out_drawn", ""))
                v = judge(t, pass1, tags, base)
                row["plan"], row["amended"], row["weak_ok"] = v.plan, v.amended, v.weak_ok
            rows.append(row)
    return rows


def choose(rows):
    formats = sorted({r["format"] for r in rows})
    meets = lambda f, t: sorted(r["spec"] for r in rows if r["format"] == f and r["task"] == t and r["made"] and r["amended"])
    fmt = max(formats, key=lambda f: (sum(bool(meets(f, t)) for t in TASKS), -f))
    complete = {s for s in {r["spec"] for r in rows if r["format"] == fmt}
                if all(r["made"] for r in rows if r["format"] == fmt and r["spec"] == s)
                and sum(1 for r in rows if r["format"] == fmt and r["spec"] == s) == len(TASKS)}
    choice = {"format_steps": fmt, "spec_steps": {}, "weak": [], "amended_rule":
              f"own pass1 in {OWN_LOW}-{OWN_HIGH}; other task <= format warm-up's + {AMENDED_MARGIN}; "
              f"tags >= {FORMAT_FLOOR}"}
    for t in TASKS:
        m = meets(fmt, t)
        if m:
            choice["spec_steps"][t] = m[0]
            continue
        weak = [r for r in rows if r["format"] == fmt and r["task"] == t and r["spec"] in complete and r["weak_ok"]]
        if not weak:
            sys.exit(f"calibration_table: FORMAT {fmt}: {t} has no SPEC that meets the amendment and no "
                     f"complete cell for a weak specialty")
        best = max(weak, key=lambda r: (r["own"], -r["spec"]))
        choice["spec_steps"][t] = best["spec"]
        choice["weak"].append(t)
    choice["SPEC"] = ",".join(f"{t}={choice['spec_steps'][t]}" for t in TASKS)
    return choice


def main(argv=None):
    ap = argparse.ArgumentParser(description="The specialist calibration's table and, with --choose, "
                                             "the choice under the amended rule (see the top of this file).")
    ap.add_argument("folder", help="DIR holding fFORMAT-sSPEC/ folders of CKPT.json files")
    ap.add_argument("out", help="the table to write (CSV)")
    ap.add_argument("--choose", metavar="CHOICE.json", help="write the choice under the amended rule")
    args = ap.parse_args(argv)
    rows = table(args.folder)
    lines = ["format_steps,spec_steps,specialty,own_pass1,max_other_pass1,min_format_rate,held_out_drawn,rule,amended"]
    verdict = lambda ok: "meets" if ok else "fails"
    for r in rows:
        if not r["made"]:
            lines.append(f"{r['format']},{r['spec']},{r['task']},,,,,pending,pending")
        else:
            lines.append(f"{r['format']},{r['spec']},{r['task']},{r['own']:.4f},{r['other']:.4f},{r['fmt']:.3f},"
                         f"{r['drawn']},{verdict(r['plan'])},{verdict(r['amended'])}")
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.choose:
        c = choose(rows)
        with open(args.choose, "w") as fh:
            json.dump(c, fh, indent=1)
            fh.write("\n")
        print(f"choice (amended rule): FORMAT {c['format_steps']}, SPEC {c['SPEC']}"
              + (f"; weak specialties: {', '.join(c['weak'])}" if c["weak"] else ""))


if __name__ == "__main__":
    main()
