#!/usr/bin/env bash
# Calibration of the specialist study's warm-ups, on seed 0 only (never reported), by the rule
# written in results/specialists/README.md before it ran: for each candidate (FORMAT steps on
# all tasks, then SPEC steps on the specialty) build seed 0's warm-ups and tabulate, per
# specialty, its pass@1 on its own task, the largest pass@1 on the other three and the lowest
# answer-tag rate over the four (from each spec-TASK.ckpt.json). The table goes to
# results/specialists/calibration/candidates.csv; the choice is made from it by the rule.
# usage: experiments/specialists/calibrate.sh [SAPO]   (from the repository root)
#   FORMATS="30 60"  SPECS="150 300 600"   the grid
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
PY=${SAPO_PYTHON:-/usr/bin/python3}
FORMATS=${FORMATS:-30 60} SPECS=${SPECS:-150 300 600}
RUNS=results/runs/specialists/calibration
OUT=results/specialists/calibration
mkdir -p "$RUNS" "$OUT"
for f in $FORMATS; do
  for s in $SPECS; do
    echo "# $(date +%T) format $f, specialty $s"
    mkdir -p "$RUNS/f$f-s$s"
    # one format warm-up per FORMAT serves every SPEC
    [ -f "$RUNS/f$f-format.ckpt" ] && ln -sf "$PWD/$RUNS/f$f-format.ckpt" "$RUNS/f$f-s$s/format.ckpt" &&
      ln -sf "$PWD/$RUNS/f$f-format.ckpt.json" "$RUNS/f$f-s$s/format.ckpt.json"
    SKIP_GEN=1 experiments/specialists/warmups.sh "$SAPO" 0 "$f" "$s" "$RUNS/f$f-s$s" > /dev/null
    [ -f "$RUNS/f$f-format.ckpt" ] || { cp "$RUNS/f$f-s$s/format.ckpt" "$RUNS/f$f-format.ckpt";
      cp "$RUNS/f$f-s$s/format.ckpt.json" "$RUNS/f$f-format.ckpt.json"; }
  done
done
"$PY" - "$RUNS" "$OUT/candidates.csv" $FORMATS -- $SPECS <<'PY'
import json, sys
runs, out = sys.argv[1], sys.argv[2]
rest = sys.argv[3:]
formats, specs = rest[:rest.index("--")], rest[rest.index("--") + 1:]
tasks = ["base_conversion", "basic_arithmetic", "fraction_simplification", "calendar_arithmetic"]
rows = ["format_steps,spec_steps,specialty,own_pass1,max_other_pass1,min_format_rate,held_out_drawn,rule"]
for f in formats:
    for s in specs:
        for t in tasks:
            d = json.load(open(f"{runs}/f{f}-s{s}/spec-{t}.ckpt.json"))
            own = d["pass1_by_task"][t]
            other = max(v for k, v in d["pass1_by_task"].items() if k != t)
            fmt = min(d["format_rate_by_task"].values())
            ok = 0.10 <= own <= 0.40 and other < 0.03 and fmt >= 0.7
            rows.append(f"{f},{s},{t},{own:.4f},{other:.4f},{fmt:.3f},{d['held_out_drawn']},{'meets' if ok else 'fails'}")
open(out, "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
