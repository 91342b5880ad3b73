#!/usr/bin/env bash
# The minipaper study behind results/minipaper/REPORT.md: one warm-up, then seeds 1..3 x
# splits x arms, one 8-rank swarm at a time (2 cores: runs in parallel would only share
# them), seed by seed so that an interrupted study is complete for its first seeds. Every
# run resumes where it stopped (`sapo run --resume`) and a finished one (DONE) is skipped,
# so running this again continues the study. Then the summaries and the report.
# Raw runs go to results/runs/minipaper/ (not committed); summaries are committed.
# usage: experiments/minipaper/run.sh [SAPO_BINARY]     (from the repository root)
#   OFFPOLICY=tis|positive_only   the off-policy arm (chosen on calibration seed 0; see
#                                 results/minipaper/README.md)
#   SEEDS="1 2 3"                 the reported seeds
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
OFFPOLICY=${OFFPOLICY:-positive_only}
SEEDS=${SEEDS:-1 2 3}
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
RUNS=results/runs/minipaper
OUT=results/minipaper
WARMUP=$RUNS/warmup.ckpt
mkdir -p "$RUNS" "$OUT/summaries"
[ -f "$WARMUP" ] || "$SAPO" pretrain experiments/minipaper/base.ini --out "$WARMUP" --quiet | tee "$RUNS/warmup.log"

# run NAME SPLIT SEED [key=value...]: one swarm, fresh, resumed or skipped
run() {
  local name=$1 split=$2 seed=$3 out=$RUNS/$1
  shift 3
  if [ -f "$out/DONE" ]; then return; fi
  if [ -f "$out/node_0000.h5" ]; then
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet
  else
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run "experiments/minipaper/$split.ini" swarm.seed="$seed" \
      model.init="$WARMUP" run.name="$name" --out "$out" --quiet "$@"
  fi
  "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null
}

for seed in $SEEDS; do
  # J = 0: no received group, so the arm changes nothing; one run serves both arms
  run "paper-8L0E-s$seed" 8L0E "$seed" grpo.external=ratio1
  run "paper-4L0E-s$seed" 4L0E "$seed" grpo.external=ratio1
  for split in 4L4E 6L2E 2L6E; do
    run "paper-$split-s$seed" "$split" "$seed" grpo.external=ratio1
    run "offpolicy-$split-s$seed" "$split" "$seed" grpo.external="$OFFPOLICY"
  done
done

commit=$(git rev-parse --short HEAD)
machine="$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB"
cat > "$OUT/commands.txt" <<EOF
OFFPOLICY=$OFFPOLICY SEEDS="$SEEDS" experiments/minipaper/run.sh $SAPO
  (warm-up: $SAPO pretrain experiments/minipaper/base.ini --out $WARMUP)
  (each run: mpirun -np 8 $SAPO run experiments/minipaper/SPLIT.ini swarm.seed=SEED model.init=$WARMUP grpo.external=ARM)
$PY -m analysis.summarize RUN -o $OUT/summaries
$PY -m analysis.minipaper $OUT/summaries -o $OUT --commands $OUT/commands.txt --commit $commit --machine "$machine"
EOF
"$PY" -m analysis.minipaper "$OUT/summaries" -o "$OUT" --commands "$OUT/commands.txt" --commit "$commit" \
  --machine "$machine"
