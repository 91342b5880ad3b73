#!/usr/bin/env bash
# The weights study's calibration (results/weights/README.md, 'The outer optimiser's settings:
# the rule'): seed 0 (never reported), the clean network, the specialist swarm at 8/0 from seed
# 0's warm-ups. Stage 1 runs DiLoCo's four candidates and chooses among them, stage 2 NoLoCo's
# two on DiLoCo's choice and chooses; the grid and the rule are analysis.weights_calibration's.
# Runs resume and are skipped when done (experiments/lib/study_run.sh). Writes OUT (default
# results/weights/calibration): summaries/, costs.csv, STAGE-candidates.csv, STAGE.keys.
# usage: experiments/weights/calibrate.sh SAPO FORMAT SPEC   (from the repository root; FORMAT,
#   SPEC, DECOY and MIX as the specialist study's calibration chose them)
#   ROUNDS=N   RUNS=DIR OUT=DIR (a trial elsewhere)   WARMUPS=DIR (default the specialists')
#   COMMIT=HASH   the commit SAPO was built from, for costs.csv (default: this checkout's HEAD)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n '/^# usage:/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
SAPO=$1 FORMAT=$2 SPEC=$3
[ -x "$SAPO" ] || { echo "weights calibrate: $SAPO: not an executable" >&2; exit 2; }
# shellcheck source=experiments/lib/study_run.sh
. experiments/lib/study_run.sh
study_setup weights/calibration "$SAPO"

w=$(SKIP_GEN=1 experiments/specialists/warmups.sh "$SAPO" 0 "$FORMAT" "$SPEC" "$WARMUPS/s0")
mapfile -t spec < <(study_spec_keys "$w")

# stage STAGE [--diloco FILE]: run the stage's candidates (read first: mpirun reads stdin), choose
stage() {
  local cands line name kv
  mapfile -t cands < <("$PY" -m analysis.weights_calibration grid "$@")
  [ ${#cands[@]} -gt 0 ] || exit 1
  for line in "${cands[@]}"; do
    read -ra kv <<< "$line"
    name=${kv[0]}
    study_run "$name-8L0E-s0" experiments/specialists/8L0E.ini 0 "${spec[@]}" "${kv[@]:1}"
  done
  "$PY" -m analysis.weights_calibration choose "$1" "$OUT/summaries" -o "$OUT" "${@:2}"
}
stage diloco
stage noloco --diloco "$OUT/diloco.keys"
