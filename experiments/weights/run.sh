#!/usr/bin/env bash
# The weights study behind results/weights/ (its README holds the plan, fixed before any
# reported run): the specialist swarm (experiments/specialists/: its per-seed warm-ups, the same
# FORMAT, SPEC, DECOY and MIX) sharing rollouts, weights or both, on the clean network and on
# the hard one (experiments/weights/hard.keys), one 8-rank swarm at a time, seed by seed. The
# silo and the clean SAPO arms are the specialist study's runs of the same seeds (run that
# first); DiLoCo's and NoLoCo's settings are the calibration's choice (calibrate.sh: CHOICE/
# diloco.keys, noloco.keys) and sapo_best's correction the declaration in results/weights/
# sapo_best.keys (grpo.external=ARM), both made before the first reported run. Runs resume and
# are skipped when done (experiments/lib/study_run.sh); costs go to OUT/costs.csv, summaries
# NET_ARM-SPLIT-sSEED.{csv,npz} to OUT/summaries/.
# usage: experiments/weights/run.sh SAPO FORMAT SPEC   (from the repository root; FORMAT, SPEC,
#   DECOY and MIX as the specialist study's calibration chose them)
#   SEEDS="1 2 3 4"   NETS="clean hard"   ROUNDS=N   RUNS=DIR OUT=DIR (a trial elsewhere)
#   WARMUPS=DIR (default the specialists')   CHOICE=DIR (default results/weights/calibration)
#   BEST=FILE (default results/weights/sapo_best.keys)
#   COMMIT=HASH   the commit SAPO was built from, for costs.csv (default: this checkout's HEAD)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n '/^# usage:/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
SAPO=$1 FORMAT=$2 SPEC=$3
[ -x "$SAPO" ] || { echo "weights: $SAPO: not an executable" >&2; exit 2; }
SEEDS=${SEEDS:-1 2 3 4}
for s in $SEEDS; do [ "$s" != 0 ] || { echo "weights: seed 0 is calibration's, never reported" >&2; exit 2; }; done
NETS=${NETS:-clean hard}
for n in $NETS; do case $n in clean|hard) ;; *) echo "weights: NETS: $n: expected clean or hard" >&2; exit 2;; esac; done
CHOICE=${CHOICE:-results/weights/calibration}
BEST=${BEST:-results/weights/sapo_best.keys}
for f in "$CHOICE/diloco.keys" "$CHOICE/noloco.keys" "$BEST"; do
  [ -s "$f" ] || { echo "weights: $f: missing (run experiments/weights/calibrate.sh; declare sapo_best in results/weights/README.md and $BEST)" >&2; exit 2; }
done
mapfile -t diloco < "$CHOICE/diloco.keys"
mapfile -t noloco < "$CHOICE/noloco.keys"
mapfile -t best < "$BEST"
mapfile -t hard < experiments/weights/hard.keys
[[ ${#best[@]} -eq 1 && ${best[0]} =~ ^grpo\.external=(positive_only|tis|ftis)$ ]] ||
  { echo "weights: $BEST: expected one line grpo.external=positive_only|tis|ftis" >&2; exit 2; }
# shellcheck source=experiments/lib/study_run.sh
. experiments/lib/study_run.sh
study_setup weights "$SAPO"
CFG=experiments/specialists

for seed in $SEEDS; do
  w=$(SKIP_GEN=1 experiments/specialists/warmups.sh "$SAPO" "$seed" "$FORMAT" "$SPEC" "$WARMUPS/s$seed")
  mapfile -t spec < <(study_spec_keys "$w")
  for net in $NETS; do
    keys=()
    [ "$net" = clean ] || keys=("${hard[@]}")
    if [ "$net" = hard ]; then # clean: the specialist study's spec_ratio1 and spec_BEST runs
      study_run "${net}_sapo_ratio1-4L4E-s$seed" $CFG/4L4E.ini "$seed" "${spec[@]}" "${keys[@]}" grpo.external=ratio1
      study_run "${net}_sapo_best-4L4E-s$seed" $CFG/4L4E.ini "$seed" "${spec[@]}" "${keys[@]}" "${best[@]}"
    fi
    study_run "${net}_diloco-8L0E-s$seed" $CFG/8L0E.ini "$seed" "${spec[@]}" "${keys[@]}" "${diloco[@]}"
    study_run "${net}_noloco-8L0E-s$seed" $CFG/8L0E.ini "$seed" "${spec[@]}" "${keys[@]}" "${noloco[@]}"
    study_run "${net}_noloco_sapo-4L4E-s$seed" $CFG/4L4E.ini "$seed" "${spec[@]}" "${keys[@]}" "${noloco[@]}" "${best[@]}"
  done
done
