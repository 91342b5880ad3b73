#!/usr/bin/env bash
# usage: scripts/bench/wide_swarm.sh NP [SAPO] [section.key=value ...]
# How wide a swarm this host runs: NP ranks of experiments/quick.ini (net.fanout=8, 2 rounds,
# model.init = quick.ini's cached warm-up checkpoint, scripts/warmup_ckpt.sh, the same one
# `make demo` uses; WIDE_INIT=random starts from a random init instead), timed, while the sum
# of the ranks' private memory (RssAnon) is sampled five times a second. Prints the run's estimate
# and measured peak per rank, the host's peak, the wall time and mpirun's exit status; the run
# directory and logs stay in $WIDE_OUT (default /tmp/wide-NP). docs/SWARM.md ("How wide a
# swarm fits") has the numbers it printed here. Run it from the repository root.
set -u
[ $# -ge 1 ] || { echo "usage: $0 NP [SAPO] [section.key=value ...]" >&2; exit 2; }
NP=$1; shift
SAPO=build/sapo
if [ $# -ge 1 ] && [ "${1#*=}" = "$1" ]; then SAPO=$1; shift; fi
[ -x "$SAPO" ] || { echo "$0: $SAPO: not an executable sapo (build it first, or pass its path)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
OUT=${WIDE_OUT:-/tmp/wide-$NP}
rm -rf "$OUT"; mkdir -p "$OUT"
# WIDE_INIT=random: no warm-up (a random init writes every completion max_new_tokens long)
INIT=()
if [ "${WIDE_INIT:-warm}" != random ]; then
    CKPT=$(scripts/warmup_ckpt.sh "$SAPO" experiments/quick.ini) || exit 1
    INIT=("model.init=$CKPT")
fi
# the ranks' summed RssAnon (MB), five times a second, until the job ends; cat reads the status
# files, not awk: a process that exits between the glob and the read makes mawk (Debian's awk)
# stop without a sum, where cat skips it
( while :; do
    echo "$(date +%s) $(cat /proc/[0-9]*/status 2>/dev/null |
        awk '/^Name:/ {n = $2} /^RssAnon:/ {if (n == "sapo") s += $2} END {printf "%.0f", s / 1024}')"
    sleep 0.2
  done ) >"$OUT/rss.log" &
MON=$!
trap 'kill $MON 2>/dev/null' EXIT
t0=$(date +%s.%N)
mpirun --oversubscribe --bind-to none -np "$NP" "$SAPO" run experiments/quick.ini "${INIT[@]}" \
    swarm.rounds=2 net.fanout=8 "$@" --out "$OUT/run" --quiet >"$OUT/run.out" 2>&1
rc=$?
t1=$(date +%s.%N)
kill $MON 2>/dev/null
echo "wide swarm: $NP ranks of experiments/quick.ini net.fanout=8 swarm.rounds=2 $*"
grep -h -E "^sapo run: (estimated|memory)|^peak private" "$OUT/run.out"
echo "host: the ranks' private memory peaked at $(sort -k2 -n "$OUT/rss.log" | tail -1 | cut -d' ' -f2) MB in all"
echo "wall $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s; mpirun exit status $rc; run directory $OUT/run"
[ -f "$OUT/run/DONE" ] && echo "DONE: $(head -1 "$OUT/run/DONE")"
exit $rc
