#!/usr/bin/env bash
# The paper-regime study behind results/paper-regime/: one warm-up (the calibrated one), then
# for each reported seed the arms below, one 8-rank swarm at a time (2 cores: runs in
# parallel would only share them), seed by seed so that an interrupted study is complete for
# its first seeds. Every run resumes where it stopped (`sapo run --resume`) and a finished one
# (DONE) is skipped, so running this again continues the study; each run's wall time goes to
# results/paper-regime/costs.csv. Raw runs go to results/runs/paper-regime/ (not committed);
# the summaries (ARM-SPLIT-sSEED.{csv,npz}) are committed.
#   paper          grpo.external = ratio1 (the paper): 8L0E 6L2E 4L4E 2L6E, and the 4L0E control
#   positive_only  received negatives dropped: 4L4E
#   ftis           truncated IS + the KL filter of received negatives (grpo.ftis_kl): 4L4E
#   ownpos         the node's OWN negatives dropped (grpo.local = positive_only): 8L0E
#   frozen         no GRPO step (grpo.frozen): 8L0E 4L4E, the filter's mechanical lift
#   tis            truncated IS alone (grpo.external = tis, no drop rule): 4L4E, added after the
#                  others ran (issue 35), with a binary of their numerics (678459c)
# usage: experiments/paper-regime/run.sh [SAPO_BINARY]     (from the repository root)
#   SEEDS="1 2 3 4"   the reported seeds (seed 0 is calibration's, never reported)
#   ROUNDS=N          swarm.rounds (default: base.ini's 1000)
#   MACHINE=TEXT      the machine line of REPORT.md (the report is regenerated at the end)
#   ARMS="tis ..."    only these arms (default: all)
#   COMMIT=HASH       the binary's commit for costs.csv (default: this checkout's HEAD)
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
SEEDS=${SEEDS:-1 2 3 4}
ARMS=${ARMS:-paper positive_only ftis ownpos frozen tis}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD)}
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
EXP=experiments/paper-regime
RUNS=results/runs/paper-regime
OUT=results/paper-regime
WARMUP=$RUNS/warmup.ckpt
mkdir -p "$RUNS" "$OUT/summaries"
[ -f "$WARMUP" ] || "$SAPO" pretrain "$EXP/base.ini" --out "$WARMUP" --quiet | tee "$RUNS/warmup.log"
[ -f "$OUT/costs.csv" ] || echo "run,seconds,status,commit" > "$OUT/costs.csv"
rounds=()
[ -n "${ROUNDS:-}" ] && rounds=(swarm.rounds="$ROUNDS")

# run ARM SPLIT SEED [key=value...]: one swarm, fresh, resumed or skipped
run() {
  local name=$1-$2-s$3 split=$2 seed=$3 out=$RUNS/$1-$2-s$3
  shift 3
  [[ " $ARMS " == *" ${name%%-*} "* ]] || return 0
  [ -f "$OUT/summaries/$name.npz" ] && return # done, here or in an earlier session
  [ -f "$out/DONE" ] && { "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null; return; }
  local t0=$SECONDS
  if [ -f "$out/node_0000.h5" ]; then
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet
  else
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run "$EXP/$split.ini" swarm.seed="$seed" \
      model.init="$WARMUP" run.name="$name" --out "$out" --quiet "${rounds[@]}" "$@"
  fi
  echo "$name,$((SECONDS - t0)),$([ -f "$out/DONE" ] && echo done || echo stopped),$COMMIT" >> "$OUT/costs.csv"
  [ ! -f "$out/DONE" ] || "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null
}

for seed in $SEEDS; do
  for split in 8L0E 6L2E 4L4E 2L6E 4L0E; do run paper "$split" "$seed" grpo.external=ratio1; done
  run positive_only 4L4E "$seed" grpo.external=positive_only
  run ftis 4L4E "$seed" grpo.external=ftis
  run ownpos 8L0E "$seed" grpo.local=positive_only
  run frozen 8L0E "$seed" grpo.frozen=true
  run frozen 4L4E "$seed" grpo.frozen=true
  run tis 4L4E "$seed" grpo.external=tis
done

# the report, from every summary there is so far (missing runs are listed as warnings in it)
"$PY" -m analysis.paper_regime "$OUT/summaries" -o "$OUT" --costs "$OUT/costs.csv" \
  --machine "${MACHINE:-2 cores, AMD EPYC (Zen 3), 24 GiB, Debian 12 (OpenBLAS kernel Zen)}"
