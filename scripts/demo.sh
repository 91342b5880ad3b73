#!/usr/bin/env bash
# The README's demo: an 8-node SAPO swarm on experiments/quick.ini. The warm-up checkpoint
# (`sapo pretrain`) is cached under build/warmup/, keyed by the config and the sapo binary
# (scripts/warmup_ckpt.sh), so a second `make demo` goes straight to the swarm. Extra
# arguments go to `sapo run`.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
BUILD=${BUILD:-build}
CONFIG=${CONFIG:-experiments/quick.ini}
NP=${NP:-8}
ckpt=$(scripts/warmup_ckpt.sh "$BUILD/sapo" "$CONFIG")
echo "== swarm: mpirun -np $NP sapo run $CONFIG model.init=$ckpt $*"
exec mpirun --oversubscribe -np "$NP" --bind-to none "$BUILD/sapo" run "$CONFIG" "model.init=$ckpt" "$@"
