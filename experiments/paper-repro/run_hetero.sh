#!/usr/bin/env bash
# Nodes that differ in skill: each pair of nodes continues the shared warm-up for 300 more
# supervised steps on one specialty (nodes 0-1 base_conversion, 2-3 basic_arithmetic, 4-5
# fraction_simplification, 6-7 binary_matrix), then silo (4/0) and sharing (2/2) swarms run
# from those checkpoints. Needs experiments/paper-repro/run.sh's warm-up first.
# usage: experiments/paper-repro/run_hetero.sh [SAPO_BINARY]   (it runs from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
BASE_CKPT=results/runs/repro/warmup-600.ckpt
DIR=results/runs/repro-hetero
mkdir -p "$DIR"
SPECIALTIES=(base_conversion basic_arithmetic fraction_simplification binary_matrix)
inits=()
for k in 0 1 2 3; do
  t=${SPECIALTIES[$k]}
  ckpt=$DIR/warmup-$t.ckpt
  [ -f "$ckpt" ] || "$SAPO" pretrain experiments/paper-repro/base.ini model.init=$BASE_CKPT tasks.names=$t \
    pretrain.steps=300 --out "$ckpt" > "$DIR/warmup-$t.log"
  inits+=("node.$((2 * k)).model.init=$ckpt" "node.$((2 * k + 1)).model.init=$ckpt")
done
for seed in 1 2; do
  for cfg in 4L0E 2L2E; do
    out=$DIR/$cfg-s$seed
    [ -f "$out/DONE" ] && continue
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run experiments/paper-repro/$cfg.ini swarm.seed=$seed \
      model.init=$BASE_CKPT "${inits[@]}" run.name=hetero-$cfg-s$seed --out "$out" --quiet
  done
done
