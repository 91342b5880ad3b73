#!/usr/bin/env bash
# usage: scripts/bench/swarm_round_ab.sh [--ranks N] [--reps K] CONFIG.ini INIT.ckpt ROUNDS SAPO...
# A swarm round's cost, side by side: runs each sapo binary (e.g. a build of an older commit
# and one of this code) on N ranks of CONFIG from the same INIT checkpoint, alternating the
# binaries K times so that the box's drift hits them alike, then prints per binary the
# t_round, t_generate, t_train, t_eval and t_wait averaged over nodes and rounds 1..ROUNDS-1
# (round 0 warms up), each run's t_round, and every binary's t_round ratio to the first one.
# The runs' directories stay under a temporary folder whose path is printed.
set -euo pipefail
usage() { sed -n '2p' "$0" | sed 's/^# //' >&2; exit 2; }
RANKS=8 REPS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) RANKS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 4 ] || usage
CONFIG=$1 INIT=$2 ROUNDS=$3; shift 3
[ -f "$CONFIG" ] || { echo "swarm_round_ab: $CONFIG: no such config" >&2; exit 2; }
[ -f "$INIT" ] || { echo "swarm_round_ab: $INIT: no such checkpoint" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[0-9]+$ && "$ROUNDS" -ge 2 ]] || { echo "swarm_round_ab: ROUNDS: expected an integer >= 2, got '$ROUNDS'" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "swarm_round_ab: $b: not an executable" >&2; exit 2; }; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
T=$(mktemp -d /tmp/round_ab.XXXX)
echo "# runs under $T"
for rep in $(seq 1 "$REPS"); do
  i=0
  for b in "$@"; do
    i=$((i + 1))
    out=$T/bin$i.rep$rep
    echo "# $(date +%T) binary $i ($b), run $rep of $REPS" >&2
    mpirun --oversubscribe --bind-to none -np "$RANKS" "$b" run "$CONFIG" model.init="$INIT" swarm.rounds="$ROUNDS" \
      --out "$out" --quiet > "$out.log" 2>&1 || { echo "swarm_round_ab: binary $i ($b) failed, see $out.log" >&2; exit 1; }
  done
done
/usr/bin/python3 - "$T" "$REPS" "$RANKS" "$@" <<'PY'
import sys, h5py, numpy as np
root, reps, ranks, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
cols = ["t_round", "t_generate", "t_train", "t_eval", "t_wait"]
def run_means(d):
    per = {c: [] for c in cols}
    for k in range(ranks):
        with h5py.File(f"{d}/node_{k:04d}.h5", "r") as f:
            for c in cols: per[c].append(np.asarray(f[c][1:]).mean())
    return {c: float(np.mean(v)) for c, v in per.items()}
print("binary | " + " | ".join(cols) + " | t_round of each run | t_round / first binary's")
first = None
for i, b in enumerate(bins, 1):
    runs = [run_means(f"{root}/bin{i}.rep{r}") for r in range(1, reps + 1)]
    mean = {c: np.mean([r[c] for r in runs]) for c in cols}
    first = first or mean["t_round"]
    each = ", ".join(f"{r['t_round']:.3f}" for r in runs)
    print(f"{b} | " + " | ".join(f"{mean[c]:.3f}" for c in cols) + f" | {each} | {mean['t_round'] / first:.3f}")
PY
