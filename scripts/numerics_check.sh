#!/usr/bin/env bash
# usage: scripts/numerics_check.sh [--seeds "1 2 3"] [--rounds 300] [--ranks 8] [--dir DIR] [--warmup CKPT] OLD_SAPO NEW_SAPO [key=value ...]
# The study-level check of a change of numerics (docs/PERFORMANCE.md, 'A change of numerics'):
# RANKS ranks of experiments/minipaper/8L0E.ini for ROUNDS rounds, once per seed with each
# binary, all from one warm-up checkpoint (made by OLD_SAPO with `sapo pretrain` unless
# --warmup names one), then the paired difference of mean own reward (new - old) with its 95%
# Student-t interval and exact sign-flip p (analysis/numerics_check.py). Exit 0 on PASS (the
# interval contains 0 and |difference| < 0.01), 1 on FAIL, 2 on bad input. key=value
# overrides go to every run and to the warm-up. Runs resume (`sapo run --resume`) and finished
# ones are skipped, so a second call continues; they stay under DIR (default
# results/runs/numerics-check; raw, not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2p' "$0" | sed 's/^# //' >&2; exit 2; }
SEEDS="1 2 3" ROUNDS=300 RANKS=8 DIR=results/runs/numerics-check WARMUP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) SEEDS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "numerics_check: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
OLD=$1 NEW=$2; shift 2
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "numerics_check: $b: not an executable" >&2; exit 2; }; done
[[ "$ROUNDS" =~ ^[0-9]+$ && "$ROUNDS" -ge 1 ]] || { echo "numerics_check: --rounds: expected an integer >= 1, got '$ROUNDS'" >&2; exit 2; }
[[ "$RANKS" =~ ^[0-9]+$ && "$RANKS" -ge 1 ]] || { echo "numerics_check: --ranks: expected an integer >= 1, got '$RANKS'" >&2; exit 2; }
for s in $SEEDS; do [[ "$s" =~ ^[0-9]+$ ]] || { echo "numerics_check: --seeds: expected integers, got '$s'" >&2; exit 2; }; done
[ "$(echo $SEEDS | wc -w)" -ge 2 ] || { echo "numerics_check: --seeds: a paired interval needs two or more seeds" >&2; exit 2; }
[ -z "$WARMUP" ] || [ -f "$WARMUP" ] || { echo "numerics_check: --warmup $WARMUP: no such checkpoint" >&2; exit 2; }
CONFIG=experiments/minipaper/8L0E.ini
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$DIR"
if [ -z "$WARMUP" ]; then
  WARMUP=$DIR/warmup.ckpt
  if [ ! -f "$WARMUP" ]; then
    echo "# $(date +%T) warm-up: $OLD pretrain $CONFIG $*"
    "$OLD" pretrain "$CONFIG" "$@" --out "$WARMUP" --quiet > "$DIR/warmup.log" 2>&1 ||
      { echo "numerics_check: the warm-up failed, see $DIR/warmup.log" >&2; exit 1; }
  fi
fi
echo "# runs under $DIR; old $OLD, new $NEW; seeds $SEEDS, $ROUNDS rounds, $RANKS ranks, warm-up $WARMUP"
olds=() news=()
for seed in $SEEDS; do
  for side in old new; do
    bin=$OLD; [ $side = new ] && bin=$NEW
    out=$DIR/$side-s$seed
    if [ ! -f "$out/DONE" ]; then
      echo "# $(date +%T) seed $seed, $side binary"
      if [ -f "$out/node_0000.h5" ]; then
        cmd=(run --resume "$out" --quiet)
      else
        cmd=(run "$CONFIG" swarm.seed="$seed" swarm.rounds="$ROUNDS" model.init="$WARMUP" "$@" --out "$out" --quiet)
      fi
      mpirun --oversubscribe --bind-to none -np "$RANKS" "$bin" "${cmd[@]}" >> "$DIR/$side-s$seed.log" 2>&1 ||
        { echo "numerics_check: seed $seed, $side binary failed, see $DIR/$side-s$seed.log" >&2; exit 1; }
    fi
    if [ $side = old ]; then olds+=("$out"); else news+=("$out"); fi
  done
done
exec "$PY" -m analysis.numerics_check "${olds[@]}" --new "${news[@]}"
