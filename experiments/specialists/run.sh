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
TASKS=(base_conversion basic_arithmetic fraction_simplification calendar_arithmetic)
mkdir -p "$RUNS" "$OUT/summaries"
[ -f "$OUT/costs.csv" ] || echo "run,seconds,status,commit,numerics" > "$OUT/costs.csv"
rounds=()
[ -n "${ROUNDS:-}" ] && rounds=(swarm.rounds="$ROUNDS")
COMMIT=${COMMIT:-$(git rev-parse --short HEAD)}
numerics=$("$SAPO" info | sed -n 's/^numerics *version \([0-9]*\).*/\1/p')

# run ARM SPLIT SEED key=value...: one swarm, fresh, resumed or skipped
run() {
  local name=$1-$2-s$3 split=$2 seed=$3 out=$RUNS/$1-$2-s$3
  shift 3
  [ -f "$OUT/summaries/$name.npz" ] && return # done, here or in an earlier session
  [ -f "$out/DONE" ] && { "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null; return; }
  local t0=$SECONDS
  echo "# $(date +%T) $name"
  if [ -f "$out/node_0000.h5" ]; then
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet
  else
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run "$EXP/$split.ini" swarm.seed="$seed" \
      run.name="$name" --out "$out" --quiet "${rounds[@]}" "$@"
  fi
  echo "$name,$((SECONDS - t0)),$([ -f "$out/DONE" ] && echo done || echo stopped),$COMMIT,$numerics" \
    >> "$OUT/costs.csv"
  # a finished run's summary only: a committed summary means "done" to a later session
  [ ! -f "$out/DONE" ] || "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null
}

for seed in $SEEDS; do
  w=$(experiments/specialists/warmups.sh "$SAPO" "$seed" "$FORMAT" "$SPEC" "$RUNS/warmups/s$seed")
  spec=() gen=(model.init="$w/gen.ckpt")
  for k in 0 1 2 3 4 5 6 7; do
    t=${TASKS[$((k % 4))]}
    spec+=(node.$k.model.init="$w/spec-$t.ckpt" node.$k.run.specialty="$t")
  done
  run spec_silo 8L0E "$seed" "${spec[@]}"
  run spec_silo 4L0E "$seed" "${spec[@]}"
  for arm in ratio1 positive_only tis ftis; do run spec_$arm 4L4E "$seed" "${spec[@]}" grpo.external=$arm; done
  run gen_silo 8L0E "$seed" "${gen[@]}"
  run gen_silo 4L0E "$seed" "${gen[@]}"
  for arm in ratio1 positive_only ftis; do run gen_$arm 4L4E "$seed" "${gen[@]}" grpo.external=$arm; done
done
