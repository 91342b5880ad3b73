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
# leaves gen.ckpt out (calibration). DECOY=same_task|other_task makes the format warm-up
# format-only (pretrain.format_share = 1: every question shown with another question's answer,
# of its task or of another, pretrain.format_decoy) and, with MIX > 0, keeps that share of each
# specialty step format-only on the other three tasks; unset: real demonstrations, as grid 1.
# A warm-up of a seed whose record is committed (REF_WARMUPS, default results/specialists/
# warmups/sSEED/NAME.ckpt.json) must match it byte for byte, or it is removed and the script
# ends: other bits would not pair with the specialist study's runs.
# usage: experiments/specialists/warmups.sh SAPO SEED FORMAT SPEC [DIR]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 4 ] || { grep -m1 '^# usage:' "$0" | sed 's/^# //' >&2; exit 2; }
SAPO=$1 SEED=$2 FORMAT=$3 SPEC=$4 DIR=${5:-results/runs/specialists/warmups/s$2}
[ -x "$SAPO" ] || { echo "warmups: $SAPO: not an executable" >&2; exit 2; }
[[ "$SEED" =~ ^[0-9]+$ ]] || { echo "warmups: SEED: expected an integer, got '$SEED'" >&2; exit 2; }
[[ "$FORMAT" =~ ^[0-9]+$ ]] || { echo "warmups: FORMAT: expected an integer, got '$FORMAT'" >&2; exit 2; }
TASKS=(base_conversion basic_arithmetic fraction_simplification calendar_arithmetic)
DECOY=${DECOY:-} MIX=${MIX:-0}
case "$DECOY" in ""|same_task|other_task) ;; *) echo "warmups: DECOY: expected same_task or other_task, got '$DECOY'" >&2; exit 2;; esac
[[ "$MIX" =~ ^(0|0?\.[0-9]+)$ ]] || { echo "warmups: MIX: expected a share in [0, 1), got '$MIX'" >&2; exit 2; }
[ -n "$DECOY" ] || [ "$MIX" = 0 ] || { echo "warmups: MIX = $MIX needs DECOY" >&2; exit 2; }
ALL=$(IFS=,; echo "${TASKS[*]}")
others() { local t u=(); for t in "${TASKS[@]}"; do [ "$t" = "$1" ] || u+=("$t"); done; (IFS=,; echo "${u[*]}"); }
format_keys=() # the format stage's format-only keys
[ -z "$DECOY" ] || format_keys=(pretrain.format_tasks="$ALL" pretrain.format_share=1 pretrain.format_decoy="$DECOY")
BASE=experiments/specialists/base.ini
mkdir -p "$DIR"
steps_for() { # the specialty steps of task $1
  if [[ "$SPEC" =~ ^[0-9]+$ ]]; then echo "$SPEC"; return; fi
  local kv
  for kv in ${SPEC//,/ }; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
  echo "warmups: SPEC names no steps for $1 ('$SPEC')" >&2; exit 2
}
REF=${REF_WARMUPS-results/specialists/warmups} # the specialist study's warm-up records, committed
same_as_study() { # OUT: a reported seed's warm-up is the specialist study's, or it is removed
  local ref=$REF/s$SEED/${1##*/}.json
  [ -n "$REF" ] && [ -f "$ref" ] || return 0
  cmp -s "$1.json" "$ref" && return
  rm -f "$1" "$1.json"
  echo "warmups: $1.json differs from $ref (the specialist study's): another binary, BLAS kernel (OPENBLAS_CORETYPE) or FORMAT/SPEC; removed (REF_WARMUPS= skips this check)" >&2
  exit 1
}
pretrain() { # OUT key=value...: one warm-up, unless it is there; checked against the study's
  local out=$1; shift
  if [ ! -f "$out" ] || [ ! -f "$out.json" ]; then
    "$SAPO" pretrain "$BASE" "$@" --out "$out" --quiet > "$out.log" 2>&1 ||
      { echo "warmups: $out failed, see $out.log" >&2; exit 1; }
  fi
  same_as_study "$out"
}
pretrain "$DIR/format.ckpt" swarm.seed="$SEED" model.init_seed=$((1000 + SEED)) pretrain.steps="$FORMAT" \
  "${format_keys[@]}"
for k in "${!TASKS[@]}"; do
  t=${TASKS[$k]}
  mix_keys=()
  [ "$MIX" = 0 ] || mix_keys=(pretrain.format_tasks="$(others "$t")" pretrain.format_share="$MIX" pretrain.format_decoy="$DECOY")
  pretrain "$DIR/spec-$t.ckpt" model.init="$DIR/format.ckpt" swarm.seed=$((100 * SEED + k + 1)) \
    pretrain.tasks="$t" pretrain.steps="$(steps_for "$t")" "${mix_keys[@]}"
done
[ "${SKIP_GEN:-0}" = 1 ] || pretrain "$DIR/gen.ckpt" swarm.seed="$SEED" model.init_seed=$((1000 + SEED)) pretrain.steps=350
echo "$DIR"
