#!/usr/bin/env bash
# Submits a real sweep to a real single-node Slurm started here: munged, slurmctld and slurmd
# from Debian's munge and slurm-wlm, with their key, socket, config, state, spool, pid and log
# files under build/slurm-test/ (nothing under /etc or /run is touched). The sweep is two tiny
# runs (2 ranks, 3 rounds, tiny model, tasks.preset tiny) plus a tiny [warmup] checkpoint, so
# it exercises slurm/submit.sh, slurm/warmup.sbatch (the array waits on it) and
# slurm/sweep.sbatch end to end; then the same sweep again (complete runs must exit at once)
# and once more with SAPO_LAUNCHER=srun (srun --mpi=pmix) where Slurm has the pmix plugin.
# Exit 77 only when Slurm itself cannot start here; any failure after it started is a FAIL.
# Every daemon is stopped by its pid on exit, also on failure.
set -uo pipefail

SRC=${SAPO_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SAPO_BUILD_DIR:-$SRC/build}
export SAPO_BIN=${SAPO_BIN:-$BUILD/sapo}
W=$BUILD/slurm-test
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
T0=$SECONDS

skip() { echo "SKIP (Slurm cannot start here): $*"; exit 77; }
note() { printf '[%3ds] %s\n' $((SECONDS - T0)) "$*"; }
dump_logs() {
  for f in "$W"/log/*.log "$W"/results*/slurm/*.out; do
    [ -f "$f" ] || continue
    echo "---- $f (last 25 lines)"
    tail -n 25 "$f"
  done
}
fail() { echo "FAIL: $*"; dump_logs; exit 1; }

[ -x "$SAPO_BIN" ] || fail "no sapo binary at $SAPO_BIN"
for b in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v "$b" >/dev/null || skip "'$b' is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done

# ---- stop what an earlier run of this test left behind (its own pid files only) ----
stop_pidfile() {  # stop_pidfile FILE NAME: TERM, wait up to 10 s, then KILL
  local f=$1 name=$2 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null) || return 0
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  # Only a process of that program started with this test's files.
  grep -qa -- "$name" "/proc/$pid/cmdline" 2>/dev/null || return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null
}
stop_all() {
  # Jobs first (their slurmstepd and ranks belong to slurmd), then the daemons.
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$W/slurmctld.pid" ]; then
    local ids
    ids=$(squeue -h -o %A 2>/dev/null | sort -u)
    if [ -n "$ids" ]; then
      # shellcheck disable=SC2086
      scancel $ids 2>/dev/null
      for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  stop_pidfile "$W/slurmd.pid" slurmd
  stop_pidfile "$W/slurmctld.pid" slurmctld
  stop_pidfile "$W/munge/munged.pid" munged
}
[ -d "$W" ] && stop_all
rm -rf "$W"
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" || fail "cannot create $W"
chmod 755 "$W" "$W/munge"  # munged wants its socket directory searchable by all
trap 'stop_all' EXIT

# ---- munge ----
note "munge: key and munged under $W/munge"
mungekey --create --keyfile="$W/munge/munge.key" >/dev/null 2>&1 || {
  dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$W/munge/munge.key"; }
sock=$W/munge/munge.socket
munged --socket="$sock" --key-file="$W/munge/munge.key" --pid-file="$W/munge/munged.pid" \
  --seed-file="$W/munge/munged.seed" --log-file="$W/log/munged.log" >"$W/log/munged.start" 2>&1 ||
  skip "munged did not start: $(tail -n 3 "$W/log/munged.start" "$W/log/munged.log" 2>/dev/null | tr '\n' ' ')"
munge -S "$sock" -n </dev/null | unmunge -S "$sock" >/dev/null 2>&1 || skip "munged runs but does not decode its own credential"

# ---- slurm.conf: one node, no cgroups, no accounting ----
read -r P1 P2 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
host=$(hostname -s)
cpus=$(nproc)
mem=$(free -m | awk '/^Mem:/ { print int($2 * 0.9) }')
export SLURM_CONF=$W/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=sapotest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$P1
SlurmdPort=$P2
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=sapotest Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
note "slurm.conf: node $host, $cpus CPUs, ${mem} MB, ports $P1/$P2"
slurmctld -f "$SLURM_CONF" >"$W/log/slurmctld.start" 2>&1 ||
  skip "slurmctld did not start: $(tail -n 5 "$W/log/slurmctld.start" "$W/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -f "$SLURM_CONF" >"$W/log/slurmd.start" 2>&1 ||
  skip "slurmd did not start: $(tail -n 5 "$W/log/slurmd.start" "$W/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
state=
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || skip "the node did not become idle in 30 s (sinfo: '${state}'); slurmd.log: $(tail -n 5 "$W/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
note "Slurm is up: node $host idle"

# ================= from here on Slurm runs: every failure is a FAIL =================

cat > "$W/tiny.sweep" <<SWEEP
# Two tiny runs (a 2-task array) from a tiny warm-up made by the [warmup] job.
[sweep]
config = $SRC/experiments/quick.ini
name = tiny
seeds = 7

[set]
ranks = 2
model.n_layer = 1
model.n_head = 2
model.d_model = 16
model.n_ctx = 64
gen.max_new_tokens = 8
sampling.groups = 2
grpo.completions = 2
swarm.rounds = 3
run.eval_every = 0
tasks.preset = tiny
# 8 new bytes answer nothing: this tests the scheduling, so the budget check is off
tasks.max_unanswerable = 1
model.init = $W/warmup/tiny.ckpt

[grid]
sampling.local sampling.external = 2L0E: 2 0 | 1L1E: 1 1

[warmup]
$W/warmup/tiny.ckpt = model.n_layer=1 model.n_head=2 model.d_model=16 model.n_ctx=64 gen.max_new_tokens=8 pretrain.steps=5 pretrain.batch=4 tasks.preset=tiny tasks.max_unanswerable=1
SWEEP
runs=(tiny-2L0E-s7 tiny-1L1E-s7)

submit() {  # submit RESULTS [submit.sh options]: prints submit.sh output, sets $job
  local out
  out=$("$SRC/slurm/submit.sh" "$W/tiny.sweep" --results "$@" 2>&1) || fail "submit.sh failed: $out"
  echo "$out" | sed 's/^/    /'
  job=$(echo "$out" | sed -n 's/^job \([0-9][0-9]*\)$/\1/p')
  [ -n "$job" ] || fail "submit.sh printed no 'job ID' line"
}
wait_jobs() {  # wait_jobs SECONDS: until the queue is empty
  local limit=$1 start=$SECONDS
  while [ -n "$(squeue -h 2>/dev/null)" ]; do
    [ $((SECONDS - start)) -lt "$limit" ] || { squeue; fail "jobs still queued after ${limit}s"; }
    sleep 1
  done
}
check_states() {  # check_states JOB: every array task COMPLETED with exit 0
  local lines
  lines=$(scontrol -o show job "$1" 2>&1) || fail "scontrol show job $1: $lines"
  local n_tasks n_ok
  n_tasks=$(echo "$lines" | grep -c 'JobId=')
  n_ok=$(echo "$lines" | grep -c 'JobState=COMPLETED .*ExitCode=0:0')
  [ "$n_tasks" -eq 2 ] && [ "$n_ok" -eq 2 ] ||
    fail "job $1: expected 2 array tasks COMPLETED with exit 0, got $n_ok of $n_tasks: $(echo "$lines" | grep -o 'ArrayTaskId=[^ ]*\|JobState=[^ ]*\|ExitCode=[^ ]*' | tr '\n' ' ')"
}
check_runs() {  # check_runs RESULTS
  local r d
  for r in "${runs[@]}"; do
    d=$1/runs/$r
    for f in DONE config.ini node_0000.h5 node_0001.h5 run.h5 run.log summary.json; do
      [ -s "$d/$f" ] || fail "$d/$f is missing or empty"
    done
    grep -q "^completed 3 rounds on 2 nodes" "$d/DONE" || fail "$d/DONE: $(cat "$d/DONE")"
    grep -Eq "^name += $r( |$)" "$d/config.ini" || fail "$d/config.ini does not name the run $r"
    grep -Eq "^init += $W/warmup/tiny.ckpt( |$)" "$d/config.ini" || fail "$d/config.ini does not start from the warm-up"
  done
  grep -Eq '^local += 2( |$)' "$1/runs/tiny-2L0E-s7/config.ini" && grep -Eq '^external += 1( |$)' "$1/runs/tiny-1L1E-s7/config.ini" ||
    fail "the grid values did not reach the runs' config.ini"
}

note "submit: 2-task array after a warm-up job (launcher mpirun, throttle 2)"
submit "$W/results" --throttle 2
job1=$job
wait_jobs 120
[ -s "$W/warmup/tiny.ckpt" ] || fail "the warm-up job did not write $W/warmup/tiny.ckpt"
check_states "$job1"
check_runs "$W/results"
grep -q "^mpirun --oversubscribe --bind-to none -np 2 " "$W/results/slurm/${job1}_0.out" || fail "the job's log shows no 'mpirun ... -np 2' launch"
[ -f "$W/results/slurm/${job1}_0.out" ] && [ -f "$W/results/slurm/${job1}_1.out" ] || fail "no Slurm logs $W/results/slurm/${job1}_{0,1}.out"
note "job $job1: both runs complete (DONE, node_0000.h5, node_0001.h5, run.h5, summary.json)"

note "submit the same sweep again: complete runs must exit at once, the warm-up is not redone"
before=$(stat -c %Y "$W/results/runs/tiny-2L0E-s7/DONE" "$W/warmup/tiny.ckpt")
submit "$W/results"
job2=$job
wait_jobs 60
check_states "$job2"
for t in 0 1; do
  grep -q "is complete" "$W/results/slurm/${job2}_$t.out" || fail "task $t of job $job2 did not report the run complete: $(cat "$W/results/slurm/${job2}_$t.out")"
done
[ "$before" = "$(stat -c %Y "$W/results/runs/tiny-2L0E-s7/DONE" "$W/warmup/tiny.ckpt")" ] || fail "the resubmission rewrote a complete run or the warm-up"
ls "$W"/results/slurm/warmup-*.out >/dev/null 2>&1 && [ "$(ls "$W"/results/slurm/warmup-*.out | wc -l)" -eq 1 ] ||
  fail "expected exactly one warm-up job log"
note "job $job2: both tasks found DONE and exited"

if grep -q pmix <<<"$(srun --mpi=list 2>&1)"; then
  note "submit with --launcher srun (srun --mpi=pmix)"
  submit "$W/results-srun" --launcher srun
  job3=$job
  wait_jobs 120
  check_states "$job3"
  check_runs "$W/results-srun"
  grep -q "^srun --mpi=pmix -n 2 " "$W/results-srun/slurm/${job3}_0.out" || fail "the srun job's log shows no 'srun --mpi=pmix -n 2' launch"
  note "job $job3: both runs complete under srun --mpi=pmix"
else
  note "this Slurm has no pmix plugin: the srun launcher is not exercised"
fi
note "PASS"
exit 0
