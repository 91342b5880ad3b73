#!/usr/bin/env bash
# The network study behind results/network/ (its README holds the plan, fixed before any
# reported run): the specialist swarm (experiments/specialists/: its per-seed warm-ups, the
# same FORMAT, SPEC, DECOY and MIX) under each network condition (experiments/network/
# COND.ini) and each arm at 4/4, one 8-rank swarm at a time, seed by seed. The clean condition
# and the 8/0 reference are the specialist study's runs of the same seeds (run that first).
# Runs resume and are skipped when done (experiments/lib/study_run.sh); costs go to
# results/network/costs.csv, summaries COND_ARM-4L4E-sSEED.{csv,npz} to results/network/summaries/.
# usage: experiments/network/run.sh SAPO FORMAT SPEC   (from the repository root; FORMAT, SPEC,
#   DECOY and MIX as the specialist study's calibration chose them)
#   SEEDS="1 2 3 4"   CONDS="lat4 lat32 drop50 churn30 slow4"   ARMS="ratio1 positive_only ftis"
#   ROUNDS=N   RUNS=DIR OUT=DIR (a trial elsewhere)   WARMUPS=DIR (default the specialists')
#   COMMIT=HASH   the commit SAPO was built from, for costs.csv (default: this checkout's HEAD)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n '/^# usage:/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
SAPO=$1 FORMAT=$2 SPEC=$3
[ -x "$SAPO" ] || { echo "network: $SAPO: not an executable" >&2; exit 2; }
SEEDS=${SEEDS:-1 2 3 4}
for s in $SEEDS; do [ "$s" != 0 ] || { echo "network: seed 0 is calibration's, never reported" >&2; exit 2; }; done
CONDS=${CONDS:-lat4 lat32 drop50 churn30 slow4}
ARMS=${ARMS:-ratio1 positive_only ftis}
for c in $CONDS; do [ -f "experiments/network/$c.ini" ] || { echo "network: no condition $c (experiments/network/$c.ini)" >&2; exit 2; }; done
# shellcheck source=experiments/lib/study_run.sh
. experiments/lib/study_run.sh
study_setup network "$SAPO"

for seed in $SEEDS; do
  w=$(experiments/specialists/warmups.sh "$SAPO" "$seed" "$FORMAT" "$SPEC" "$WARMUPS/s$seed")
  mapfile -t spec < <(study_spec_keys "$w")
  for cond in $CONDS; do
    for arm in $ARMS; do
      study_run "${cond}_$arm-4L4E-s$seed" "experiments/network/$cond.ini" "$seed" "${spec[@]}" grpo.external="$arm"
    done
  done
done
