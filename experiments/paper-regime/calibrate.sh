#!/usr/bin/env bash
# Calibration of the paper-regime study (results/paper-regime/README.md): on calibration
# seed 0 only (never a reported seed), a few warm-ups of the minipaper model, each followed by
# 10 rounds of an 8-node 8L0E swarm, to find one whose own reward over rounds 0-9 lies in
# 0.02-0.08 with every task above ~1% and answers still well formed. Prints each candidate's
# warm-up pass@1 table, then its rounds 0-9 own reward, format rate and per-task reward.
# usage: experiments/paper-regime/calibrate.sh [SAPO_BINARY]   (from the repository root)
#   CANDIDATES="NAME:key=value,key=value ..."  the warm-ups tried (default below)
set -euo pipefail
cd "$(dirname "$0")/../.."
SAPO=${1:-build/sapo}
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
RUNS=${RUNS:-results/runs/paper-regime/calibration}
CANDIDATES=${CANDIDATES:-"tiny-s150:pretrain.steps=150 tiny-s250:pretrain.steps=250 small-s600:tasks.preset=small paper-s600:tasks.preset=paper"}
mkdir -p "$RUNS"
for cand in $CANDIDATES; do
  name=${cand%%:*}
  IFS=, read -r -a keys <<< "${cand#*:}"
  ckpt=$RUNS/$name.ckpt
  [ -f "$ckpt" ] || "$SAPO" pretrain experiments/minipaper/base.ini "${keys[@]}" --out "$ckpt" --quiet > "$RUNS/$name.warmup.log"
  out=$RUNS/$name-8L0E-s0
  [ -f "$out/DONE" ] || mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run experiments/minipaper/8L0E.ini \
      "${keys[@]}" model.init="$ckpt" swarm.seed=0 swarm.rounds=10 run.eval_every=0 run.name="$name" --out "$out" --quiet \
      > "$out.log" 2>&1
  echo "== $name (${keys[*]})"
  sed -n '/warm-up skill/,/mean/p' "$RUNS/$name.warmup.log"
  "$PY" - "$out" <<'PY'
import sys, glob, h5py, numpy as np
files = sorted(glob.glob(sys.argv[1] + "/node_*.h5"))
own, fmt, by_task, labels = [], [], [], None
for f in files:
    with h5py.File(f, "r") as h:
        own.append(h["reward_own"][:10]); fmt.append(h["format_rate"][:10])
        by_task.append(h["reward_by_task"][:10])
        labels = [l.decode() if isinstance(l, bytes) else str(l) for l in h["reward_by_task"].attrs.get("labels", [])]
own, fmt, by_task = np.array(own), np.array(fmt), np.array(by_task)
print(f"  rounds 0-9, 8 nodes: own reward {own.mean():.4f}, format rate {fmt.mean():.3f}")
per = np.nanmean(by_task, axis=(0, 1))
for i, v in enumerate(per):
    if not np.isnan(v): print(f"    {labels[i] if labels else i:24s} {v:.4f}")
PY
done
