#!/usr/bin/env bash
# The specialist study behind results/specialists/ (its README holds the plan, fixed before any
# reported run): per seed, its warm-ups (experiments/specialists/warmups.sh: a format warm-up,
# one specialist per task, the generalists' warm-up), then the arms below, one 8-rank swarm at a
# time, seed by seed. Every run resumes (`sapo run --resume`) and a finished one (DONE, or its
# committed summary: a later session on a fresh machine) is skipped, so running this again
# continues the study; each run's wall time and commit go to
# results/specialists/costs.csv, its summary to results/specialists/summaries/
# (ARM-SPLIT-sSEED.{csv,npz}). Raw runs: results/runs/specialists/ (not committed).
#   spec_*  node k starts from spec-TASK.ckpt, TASK the (k mod 4)-th of the four tasks
#           (node.K.model.init, node.K.run.specialty); gen_* every node from gen.ckpt
#   silo 8L0E and 4L0E; ratio1, positive_only, tis (spec only), ftis at 4L4E
# usage: experiments/specialists/run.sh SAPO FORMAT SPEC   (from the repository root; FORMAT and
#   SPEC as calibration chose them, see results/specialists/README.md; SPEC as in warmups.sh)
#   SEEDS="1 2 3 4 5 6"   ROUNDS=N (default base.ini's 1000)   RUNS=DIR OUT=DIR (a trial elsewhere)
#   COMMIT=HASH   the commit SAPO was built from, for costs.csv (default: this checkout's HEAD)
#   DECOY, MIX    the warm-ups' format-only recipe, as calibration chose it (warmups.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n '/^# usage:/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
SAPO=$1 FORMAT=$2 SPEC=$3
[ -x "$SAPO" ] || { echo "specialists: $SAPO: not an executable" >&2; exit 2; }
SEEDS=${SEEDS:-1 2 3 4 5 6}
for s in $SEEDS; do [ "$s" != 0 ] || { echo "specialists: seed 0 is calibration's, never reported" >&2; exit 2; }; done
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
EXP=experiments/specialists
RUNS=${RUNS:-results/runs/specialists}
OUT=${OUT:-results/specialists}
mkdir -p "$RUNS" "$OUT/summaries"
COMMIT=${COMMIT:-$(git rev-parse --short HEAD)}
# shellcheck source=experiments/lib/study_run.sh
. experiments/lib/study_run.sh
NUMERICS=$(study_numerics "$SAPO")

for seed in $SEEDS; do
  w=$(experiments/specialists/warmups.sh "$SAPO" "$seed" "$FORMAT" "$SPEC" "$RUNS/warmups/s$seed")
  mkdir -p "$OUT/warmups/s$seed" # the warm-ups' CKPT.json files, committed (analysis.specialists --warmups)
  cp "$w"/*.ckpt.json "$OUT/warmups/s$seed/"
  mapfile -t spec < <(study_spec_keys "$w")
  gen=(model.init="$w/gen.ckpt")
  study_run spec_silo-8L0E-s$seed "$EXP/8L0E.ini" "$seed" "${spec[@]}"
  study_run spec_silo-4L0E-s$seed "$EXP/4L0E.ini" "$seed" "${spec[@]}"
  for arm in ratio1 positive_only tis ftis; do
    study_run spec_$arm-4L4E-s$seed "$EXP/4L4E.ini" "$seed" "${spec[@]}" grpo.external=$arm
  done
  study_run gen_silo-8L0E-s$seed "$EXP/8L0E.ini" "$seed" "${gen[@]}"
  study_run gen_silo-4L0E-s$seed "$EXP/4L0E.ini" "$seed" "${gen[@]}"
  for arm in ratio1 positive_only ftis; do
    study_run gen_$arm-4L4E-s$seed "$EXP/4L4E.ini" "$seed" "${gen[@]}" grpo.external=$arm
  done
done
