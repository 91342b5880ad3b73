#!/usr/bin/env bash
# Calibration of the specialist study's warm-ups, on seed 0 only (never reported), by the rule
# written in results/specialists/README.md before it ran: for each candidate (FORMAT steps on
# all tasks, then SPEC steps on the specialty) build seed 0's warm-ups and tabulate, per
# specialty, its pass@1 on its own task, the largest pass@1 on the other three and the lowest
# answer-tag rate over the four (from each spec-TASK.ckpt.json, copied to
# results/specialists/calibration/warmups/). The table (experiments/specialists/
# calibration_table.py) goes to results/specialists/calibration/candidates.csv; the choice is
# made from it by the rule.
# usage: experiments/specialists/calibrate.sh [SAPO]   (from the repository root)
#   FORMATS="30 60"  SPECS="150 300 600"   the grid
#   GRID=NAME   a later grid's folder, results/specialists/calibration/NAME (default: the first
#               grid's, results/specialists/calibration); DECOY and MIX as in warmups.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
PY=${SAPO_PYTHON:-/usr/bin/python3}
FORMATS=${FORMATS:-30 60} SPECS=${SPECS:-150 300 600}
RUNS=results/runs/specialists/calibration${GRID:+/$GRID}
OUT=results/specialists/calibration${GRID:+/$GRID}
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
# the warm-ups' JSON files (small) are committed beside the table, which regenerates from them
for d in "$RUNS"/f*-s*/; do
  mkdir -p "$OUT/warmups/$(basename "$d")"
  cp "$d"/*.json "$OUT/warmups/$(basename "$d")/"
done
"$PY" experiments/specialists/calibration_table.py "$OUT/warmups" "$OUT/candidates.csv"
