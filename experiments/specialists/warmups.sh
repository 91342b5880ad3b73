#!/usr/bin/env bash
# The warm-ups of one seed of the specialist study (results/specialists/README.md), built once
# and cached under DIR (default results/runs/specialists/warmups/sSEED):
#   format.ckpt       FORMAT steps on all four tasks (the answer format, little skill);
#                     data stream swarm.seed = SEED, weights model.init_seed = 1000 + SEED
#   spec-TASK.ckpt    format.ckpt continued SPEC steps on TASK alone (pretrain.tasks = TASK),
#                     data stream swarm.seed = 100 SEED + k + 1 for the k-th task
#   gen.ckpt          the generalists' warm-up: the paper-regime recipe (350 steps on all four
#                     tasks), data stream SEED, weights 1000 + SEED
# Each CKPT.json (sapo pretrain) holds its pass@1 and answer-tag rate per task on the study's
# held-out set and how many demonstrations were held-out questions (drawn again:
# tasks.exclude_eval). SPEC may be one number or TASK=N,TASK=N,... (per task); SKIP_GEN=1
# leaves gen.ckpt out (calibration).
# usage: experiments/specialists/warmups.sh SAPO SEED FORMAT SPEC [DIR]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 4 ] || { sed -n '14p' "$0" | sed 's/^# //' >&2; exit 2; }
SAPO=$1 SEED=$2 FORMAT=$3 SPEC=$4 DIR=${5:-results/runs/specialists/warmups/s$2}
[ -x "$SAPO" ] || { echo "warmups: $SAPO: not an executable" >&2; exit 2; }
[[ "$SEED" =~ ^[0-9]+$ ]] || { echo "warmups: SEED: expected an integer, got '$SEED'" >&2; exit 2; }
[[ "$FORMAT" =~ ^[0-9]+$ ]] || { echo "warmups: FORMAT: expected an integer, got '$FORMAT'" >&2; exit 2; }
TASKS=(base_conversion basic_arithmetic fraction_simplification calendar_arithmetic)
BASE=experiments/specialists/base.ini
mkdir -p "$DIR"
steps_for() { # the specialty steps of task $1
  if [[ "$SPEC" =~ ^[0-9]+$ ]]; then echo "$SPEC"; return; fi
  local kv
  for kv in ${SPEC//,/ }; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
  echo "warmups: SPEC names no steps for $1 ('$SPEC')" >&2; exit 2
}
pretrain() { # OUT key=value...: one warm-up, unless it is there
  local out=$1; shift
  [ -f "$out" ] && [ -f "$out.json" ] && return
  "$SAPO" pretrain "$BASE" "$@" --out "$out" --quiet > "$out.log" 2>&1 ||
    { echo "warmups: $out failed, see $out.log" >&2; exit 1; }
}
pretrain "$DIR/format.ckpt" swarm.seed="$SEED" model.init_seed=$((1000 + SEED)) pretrain.steps="$FORMAT"
for k in "${!TASKS[@]}"; do
  t=${TASKS[$k]}
  pretrain "$DIR/spec-$t.ckpt" model.init="$DIR/format.ckpt" swarm.seed=$((100 * SEED + k + 1)) \
    pretrain.tasks="$t" pretrain.steps="$(steps_for "$t")"
done
[ "${SKIP_GEN:-0}" = 1 ] || pretrain "$DIR/gen.ckpt" swarm.seed="$SEED" model.init_seed=$((1000 + SEED)) pretrain.steps=350
echo "$DIR"
