"""The specialist calibration's table (results/specialists/calibration/candidates.csv) from the
warm-ups' CKPT.json files copied under DIR/fFORMAT-sSPEC/ (and DIR/fFORMAT-format.ckpt.json), by
the rule of results/specialists/README.md: a specialty's own pass@1 in 0.10-0.40, every other
task below 0.03, the answer-tag rate at least 0.7 on every task. A warm-up not made yet (a cell
that was stopped) is a row marked pending.
usage: python3 experiments/specialists/calibration_table.py DIR OUT.csv"""
import glob
import json
import os
import re
import sys

TASKS = ["base_conversion", "basic_arithmetic", "fraction_simplification", "calendar_arithmetic"]


def main(folder, out):
    cells = sorted((int(m.group(1)), int(m.group(2)), d) for d in glob.glob(os.path.join(folder, "f*-s*"))
                   if (m := re.fullmatch(r"f(\d+)-s(\d+)", os.path.basename(d))))
    if not cells:
        sys.exit(f"calibration_table: {folder}: no fFORMAT-sSPEC folders")
    rows = ["format_steps,spec_steps,specialty,own_pass1,max_other_pass1,min_format_rate,held_out_drawn,rule"]
    for f, s, d in cells:
        for t in TASKS:
            path = os.path.join(d, f"spec-{t}.ckpt.json")
            if not os.path.exists(path):  # a cell stopped before this warm-up: listed, not judged
                rows.append(f"{f},{s},{t},,,,,pending")
                continue
            try:
                with open(path) as fh:
                    j = json.load(fh)
                own = j["pass1_by_task"][t]
                other = max(v for k, v in j["pass1_by_task"].items() if k != t)
                fmt = min(j["format_rate_by_task"].values())
                drawn = j["held_out_drawn"]
            except (OSError, ValueError, KeyError) as e:
                sys.exit(f"calibration_table: {path}: expected sapo pretrain's CKPT.json ({e})")
            ok = 0.10 <= own <= 0.40 and other < 0.03 and fmt >= 0.7
            rows.append(f"{f},{s},{t},{own:.4f},{other:.4f},{fmt:.3f},{drawn},{'meets' if ok else 'fails'}")
    with open(out, "w") as fh:
        fh.write("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 experiments/specialists/calibration_table.py DIR OUT.csv")
    main(sys.argv[1], sys.argv[2])
