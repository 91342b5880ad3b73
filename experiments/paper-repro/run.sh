#!/usr/bin/env bash
# The reproduction runs behind results/paper-repro/REPORT.md: the warm-up, then the four
# splits x seeds, one 8-rank swarm at a time (2 cores: runs in parallel would only share
# them). Raw runs go to results/runs/repro/ (not committed); summaries are committed.
# usage: experiments/paper-repro/run.sh [SAPO_BINARY]   (it runs from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
WARMUP=results/runs/repro/warmup-600.ckpt
mkdir -p results/runs/repro
# The warm-up is the calibration run chosen in results/paper-repro/README.md: it saw
# demonstrations of six tasks (decimal_arithmetic too, which the swarm then leaves out).
[ -f "$WARMUP" ] || "$SAPO" pretrain experiments/paper-repro/base.ini pretrain.steps=600 \
  tasks.names=base_conversion,basic_arithmetic,fraction_simplification,decimal_arithmetic,calendar_arithmetic,binary_matrix \
  --out "$WARMUP" | tee results/runs/repro/warmup.log
for seed in 1 2 3; do
  for cfg in 4L0E 3L1E 2L2E 1L3E; do
    out=results/runs/repro/$cfg-s$seed
    if [ -f "$out/DONE" ]; then continue; fi
    if [ -d "$out" ]; then
      mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet
    else
      mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run experiments/paper-repro/$cfg.ini swarm.seed=$seed \
        model.init=$WARMUP run.name=$cfg-s$seed --out "$out" --quiet
    fi
  done
done
