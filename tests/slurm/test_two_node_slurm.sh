#!/usr/bin/env bash
# A two-node Slurm cluster on this machine, across the emulated hosts of
# scripts/emulated_hosts.sh (docs/SWARM.md, "Across hosts"): slurmctld and slurmd hA in host
# hA's namespaces (10.77.0.1), slurmd hB in hB's (10.77.0.2), each slurmd started with its
# own node name (-N) and hostname, one munged for both (its socket on the shared file
# system). A small sweep (two runs of 4 ranks, a tiny model, net.latency=1 net.drop=0.2) is
# submitted from hA with `slurm/submit.sh --nodes 2`, once with the mpirun launcher (Open MPI
# starts its daemon on hB through srun) and once with `--launcher srun` (srun --mpi=pmix).
# Checks, for each launcher:
#   - every array task COMPLETED with exit 0 on NodeList=hA,hB, and each run wrote DONE;
#   - the memory check counted 2 ranks on its host, and every node's log and summary.json
#     say hA for ranks 0-1 and hB for ranks 2-3;
#   - every node's datasets (all but the t_* timers) equal, bit for bit, the same task list
#     run on one host (slurm/sweep.sbatch run by hand, mpirun on this machine, no Slurm).
# Exit 77 (skip) where namespaces or Slurm cannot start here, or (after every mpirun check
# passed) where Slurm has no pmix plugin; any failure after Slurm started is a FAIL.
# Its namespaces are s2n-hA and s2n-hB (SAPO_HOSTS_PREFIX), never test_two_hosts' hA/hB; its
# files are under build/slurm-two-node/. Daemons, jobs and namespaces are removed whatever
# happens.
set -uo pipefail

SRC=${SAPO_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SAPO_BUILD_DIR:-$SRC/build}
export SAPO_BIN=${SAPO_BIN:-$BUILD/sapo}
SAPO_BIN=$(readlink -f "$SAPO_BIN")
W=$BUILD/slurm-two-node
HOSTS=$SRC/scripts/emulated_hosts.sh
export SAPO_HOSTS_PREFIX=s2n-
PY=/usr/bin/python3 # Debian's, with h5py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
T0=$SECONDS
RANKS=4 ROUNDS=24

skip() { echo "SKIP: $*"; exit 77; }
note() { printf '[%3ds] %s\n' $((SECONDS - T0)) "$*"; }
dump_logs() {
  local f
  for f in "$W"/log/*.log "$W"/log/*.start "$W"/res-*/slurm/*.out; do
    [ -s "$f" ] || continue
    echo "---- $f (last 20 lines)"
    tail -n 20 "$f"
  done
}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
fatal() { echo "FAIL: $*"; dump_logs; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root to make network and UTS namespaces (uid $(id -u))"
command -v ip >/dev/null || skip "needs ip (iproute2) to make network namespaces"
command -v unshare >/dev/null || skip "needs unshare (util-linux) to make UTS namespaces"
why=$(unshare --net --uts true 2>&1) || skip "this machine refuses namespaces: unshare --net --uts: $why"
for b in nsenter munged mungekey munge unmunge slurmctld slurmd sbatch srun squeue sinfo scontrol scancel; do
  command -v "$b" >/dev/null || skip "'$b' is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done
[ -x "$SAPO_BIN" ] || fatal "no sapo binary at $SAPO_BIN"

# one run of this test at a time on a machine (its namespaces and files are fixed)
exec 9>/run/lock/sapo-two-node-slurm.lock 2>/dev/null || exec 9>/tmp/sapo-two-node-slurm.lock
flock -w 600 9 || fatal "another run of this test holds its lock for 10 min"

# A command "on" an emulated host, as `scripts/emulated_hosts.sh run HOST` does
# (its network namespace, a UTS namespace named HOST) but through nsenter, which keeps this
# machine's /sys: `ip netns exec` mounts a fresh sysfs without the cgroup file systems, and
# slurmd (22.05) will not start without them, even with proctrack/linuxproc and task/none
in_host() { # in_host HOST: sets ON to the words that start a command there
  ON=(nsenter --net="/run/netns/$SAPO_HOSTS_PREFIX$1" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$1")
}
on_hA() { # a Slurm client, on the controller's host
  local ON
  in_host hA
  "${ON[@]}" "$@"
}

# ---- stopping: jobs, then daemons (by pid), then whatever is left in the namespaces ----
stop_pid() {  # stop_pid PID NAME: TERM, up to 10 s, then KILL; only NAME started with $W's files
  local pid=$1 name=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  grep -qa -- "$name" "/proc/$pid/cmdline" 2>/dev/null && grep -qa -- "$W/" "/proc/$pid/cmdline" 2>/dev/null ||
    return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null
}
stop_all() {
  local ids p ns
  if [ -n "${SLURM_CONF:-}" ] && [ -n "${CTLD_PID:-}" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
    ids=$(on_hA squeue -h -o %A 2>/dev/null | sort -u)
    if [ -n "$ids" ]; then
      # shellcheck disable=SC2086
      on_hA scancel $ids 2>/dev/null
      for _ in $(seq 50); do [ -z "$(on_hA squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  for p in ${SLURMD_PIDS:-}; do stop_pid "$p" slurmd; done
  stop_pid "${CTLD_PID:-}" slurmctld
  [ -f "$W/munge/munged.pid" ] && stop_pid "$(cat "$W/munge/munged.pid" 2>/dev/null)" munged
  # anything still running in this test's own namespaces (step daemons, ranks) was started here
  for ns in ${SAPO_HOSTS_PREFIX}hA ${SAPO_HOSTS_PREFIX}hB; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  "$HOSTS" down >/dev/null 2>&1 || echo "WARNING: scripts/emulated_hosts.sh down failed"
}
# what a killed earlier run left behind
CTLD_PID=$(cat "$W/slurmctld.pid" 2>/dev/null) SLURMD_PIDS=$(cat "$W"/slurmd-*.pid 2>/dev/null | tr '\n' ' ')
stop_all
CTLD_PID='' SLURMD_PIDS=''
rm -rf "$W"
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/tmp" || fatal "cannot create $W"
chmod 755 "$W" "$W/munge" # munged wants its socket directory searchable by all
trap 'stop_all' EXIT

"$HOSTS" up >"$W/log/hosts.start" 2>&1 || skip "scripts/emulated_hosts.sh up failed: $(tr '\n' ' ' <"$W/log/hosts.start")"
note "emulated hosts: $("$HOSTS" status | tr '\n' ' ')"

# ---- munge: one daemon for both hosts, its socket a file both see ----
mungekey --create --keyfile="$W/munge/munge.key" >/dev/null 2>&1 || {
  dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$W/munge/munge.key"; }
sock=$W/munge/munge.socket
munged --socket="$sock" --key-file="$W/munge/munge.key" --pid-file="$W/munge/munged.pid" \
  --seed-file="$W/munge/munged.seed" --log-file="$W/log/munged.log" >"$W/log/munged.start" 2>&1 9>&- ||
  skip "munged did not start: $(tail -n 3 "$W/log/munged.start" "$W/log/munged.log" 2>/dev/null | tr '\n' ' ')"
on_hA sh -c "munge -S '$sock' -n </dev/null | unmunge -S '$sock'" >/dev/null 2>&1 ||
  skip "munged runs but a client on hA cannot use it"

# ---- slurm.conf: nodes hA and hB at the emulated hosts' addresses, 4 CPUs each ----
# (per-node files through %n; the ports are the namespaces' own; config_overrides: the two
# slurmds share this machine's cores, and each reports all of them)
export SLURM_CONF=$W/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=sapo2node
SlurmctldHost=hA(10.77.0.1)
SlurmctldPort=7817
SlurmdPort=7818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/%n
TmpFS=$W/tmp/%n
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd-%n.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd-%n.log
SlurmdParameters=config_overrides
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
NodeName=hA NodeAddr=10.77.0.1 NodeHostname=hA CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=hB NodeAddr=10.77.0.2 NodeHostname=hB CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=sapo2node Nodes=hA,hB Default=YES MaxTime=INFINITE State=UP
CONF
# (TmpFS per node: srun --mpi=pmix makes its step's client directory there, named by job and
# step only, the same on both nodes)
mkdir -p "$W/tmp/hA" "$W/tmp/hB"

# -D: in the foreground, so $! is the daemon (nsenter, unshare and sh exec it); without the
# lock's descriptor, so that daemons left by a killed run never hold it (the next run stops
# them through their pid files)
mkdir -p "$W/spool/hA" "$W/spool/hB"
in_host hA
"${ON[@]}" slurmctld -D -f "$SLURM_CONF" >"$W/log/slurmctld.start" 2>&1 9>&- &
CTLD_PID=$!
for h in hA hB; do
  in_host $h
  "${ON[@]}" slurmd -D -N $h -f "$SLURM_CONF" >"$W/log/slurmd-$h.start" 2>&1 9>&- &
  SLURMD_PIDS="$SLURMD_PIDS $!"
done
sleep 1
kill -0 "$CTLD_PID" 2>/dev/null ||
  skip "slurmctld did not start: $(tail -n 5 "$W/log/slurmctld.start" "$W/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
state=
for _ in $(seq 60); do
  state=$(on_hA sinfo -h -N -o '%N=%T' 2>/dev/null | sort | tr '\n' ' ')
  [ "$state" = "hA=idle hB=idle " ] && break
  sleep 0.5
done
[ "$state" = "hA=idle hB=idle " ] || fatal "the two nodes did not become idle in 30 s (sinfo: '$state')"
note "Slurm is up: nodes hA (10.77.0.1) and hB (10.77.0.2) idle; slurmctld $CTLD_PID, slurmd$SLURMD_PIDS"

# ================= from here on Slurm runs: every failure is a FAIL =================

# the swarm of tests/mpi/test_two_hosts.sh, smaller: conftest.py's tiny model on
# calendar_arithmetic, from a brief warm-up (made here, outside Slurm)
cat >"$W/two.ini" <<INI
[model]
n_layer = 1
d_model = 32
n_head = 2
n_ctx = 160
[gen]
max_new_tokens = 24
[tasks]
preset = tiny
names = calendar_arithmetic
max_unanswerable = 1
[sampling]
groups = 3
[grpo]
completions = 4
[optim]
lr = 1e-3
[run]
eval_every = 2
eval_questions = 4
[net]
latency = 1
drop = 0.2
INI
"$SAPO_BIN" pretrain "$W/two.ini" pretrain.steps=300 pretrain.batch=16 --out "$W/warmup.ckpt" --quiet \
  >"$W/log/warmup.log" 2>&1 || fatal "sapo pretrain: $(tail -3 "$W/log/warmup.log")"
cat >"$W/two.sweep" <<SWEEP
[sweep]
config = $W/two.ini
name = two
seeds = 3
[set]
ranks = $RANKS
swarm.rounds = $ROUNDS
model.init = $W/warmup.ckpt
[grid]
sampling.local sampling.external = 2L1E: 2 1 | 1L2E: 1 2
SWEEP
runs=(two-2L1E-s3 two-1L2E-s3)

# submit LAUNCHER: the sweep from hA, 2 nodes; prints submit.sh's lines, sets $job. A task
# takes seconds; a hung one (ranks of two hosts named alike hang after a segfault in Open
# MPI's TCP receive path) ends at its 2-minute limit, and check reports its state.
submit() {
  local out
  # Open MPI between the emulated hosts: TCP on their network only (they share one kernel)
  out=$(on_hA env OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=10.77.0.0/24 \
    OMPI_MCA_oob_tcp_if_include=10.77.0.0/24 \
    "$SRC/slurm/submit.sh" "$W/two.sweep" --results "$W/res-$1" --nodes 2 --launcher "$1" -- --time=2 2>&1) ||
    fatal "submit.sh --launcher $1 failed: $out"
  echo "$out" | sed 's/^/    /'
  job=$(echo "$out" | sed -n 's/^job \([0-9][0-9]*\)$/\1/p')
  [ -n "$job" ] || fatal "submit.sh printed no 'job ID' line"
}
wait_jobs() { # wait_jobs SECONDS: until the queue is empty
  local limit=$1 start=$SECONDS
  while [ -n "$(on_hA squeue -h 2>/dev/null)" ]; do
    [ $((SECONDS - start)) -lt "$limit" ] || { on_hA squeue; fatal "jobs still queued after ${limit}s"; }
    sleep 1
  done
}

# check LAUNCHER JOB: the array's tasks, each run's DONE, memory line and hosts
check() {
  local l=$1 job=$2 res=$W/res-$1 lines n_ok t r
  lines=$(on_hA scontrol -o show job "$job" 2>&1) || { fail "$l: scontrol show job $job: $lines"; return; }
  n_ok=$(echo "$lines" | grep 'JobState=COMPLETED ' | grep 'ExitCode=0:0' | grep -c ' NodeList=hA,hB ')
  [ "$n_ok" -eq 2 ] || fail "$l: expected 2 array tasks COMPLETED with exit 0 on NodeList=hA,hB, got $n_ok: $(echo "$lines" |
    grep -o 'ArrayTaskId=[^ ]*\|JobState=[^ ]*\|ExitCode=[^ ]*\|NodeList=[^ ]*' | tr '\n' ' ')"
  for t in 0 1; do
    r=$res/slurm/${job}_$t.out
    case $l in
      mpirun) grep -q "^mpirun --oversubscribe --bind-to none -np $RANKS " "$r" || fail "$l: $r shows no 'mpirun ... -np $RANKS' launch" ;;
      srun) grep -q "^srun --mpi=pmix -n $RANKS " "$r" || fail "$l: $r shows no 'srun --mpi=pmix -n $RANKS' launch" ;;
    esac
    grep -q "on hA,hB with $RANKS ranks" "$r" || fail "$l: $r does not start on hA,hB: $(grep '^sweep.sbatch' "$r")"
    grep -q "for the 2 ranks on this host" "$r" ||
      fail "$l: task $t: the memory check did not count 2 ranks on its host: $(grep 'estimated memory' "$r")"
  done
  for r in "${runs[@]}"; do
    grep -q "^completed $ROUNDS rounds on $RANKS nodes" "$res/runs/$r/DONE" 2>/dev/null ||
      { fail "$l: $r: no DONE for $ROUNDS rounds on $RANKS nodes"; continue; }
    "$PY" - "$res/runs/$r" "$l $r" <<'EOF' || fail "$l: $r: the ranks did not run on hA, hA, hB, hB"
import json, sys, h5py
d, what = sys.argv[1:]
summary = json.load(open(f"{d}/summary.json"))
logged = []
for k in range(4):
    with h5py.File(f"{d}/node_{k:04d}.h5", "r", swmr=True) as f:
        h = f.attrs["host"]
        logged.append(h.decode() if isinstance(h, bytes) else h)
in_summary = [e["host"] for e in summary["per_node"]]
want = ["hA", "hA", "hB", "hB"]
print(f"{what}: hosts of ranks 0-3: logs {logged}, summary.json {in_summary}")
sys.exit(0 if logged == want and in_summary == want else 1)
EOF
  done
}

# Equal logs: every dataset but the t_* timers, bit for bit (NaN where NaN)
same_logs() { # A B WHAT: tests/mpi/same_node_logs.py
    "$PY" "$SRC/tests/mpi/same_node_logs.py" "$1" "$2" "$3" "$RANKS" "$ROUNDS"
}

pmix=0
if grep -q pmix <<<"$(on_hA srun --mpi=list 2>&1)"; then pmix=1; fi

note "submit the sweep (2 runs of $RANKS ranks, $ROUNDS rounds) with --nodes 2 --launcher mpirun"
submit mpirun
job_mpirun=$job
if [ $pmix = 1 ]; then
  note "submit it again with --nodes 2 --launcher srun (srun --mpi=pmix)"
  submit srun
  job_srun=$job
fi
wait_jobs 270
note "the queue is empty"
check mpirun "$job_mpirun"
[ $pmix = 0 ] || check srun "$job_srun"

# ---- the same task list on one host: sweep.sbatch by hand, mpirun here, no Slurm ----
tasks=$(ls "$W"/res-mpirun/tasks-*.tsv 2>/dev/null | head -1)
[ -n "$tasks" ] || fatal "submit.sh wrote no task list under $W/res-mpirun"
[ $pmix = 0 ] || cmp -s "$tasks" "$(ls "$W"/res-srun/tasks-*.tsv | head -1)" || fail "the two submissions expanded different task lists"
for t in 0 1; do
  env -u SLURM_CONF SLURM_ARRAY_TASK_ID=$t SAPO_LAUNCHER=mpirun bash "$SRC/slurm/sweep.sbatch" "$tasks" "$W/one" \
    >"$W/log/one-$t.log" 2>&1 || fail "the one-host run of task $t exited $?: $(tail -5 "$W/log/one-$t.log")"
  grep -q "for the $RANKS ranks on this host" "$W/log/one-$t.log" ||
    fail "one host, task $t: the memory check did not count $RANKS ranks: $(grep 'estimated memory' "$W/log/one-$t.log")"
done
note "the one-host runs are done"
for r in "${runs[@]}"; do
  [ -s "$W/one/runs/$r/DONE" ] || { fail "the one-host run $r wrote no DONE"; continue; }
  for l in mpirun srun; do
    [ $l = mpirun ] || [ $pmix = 1 ] || continue
    [ -s "$W/res-$l/runs/$r/DONE" ] || continue
    same_logs "$W/res-$l/runs/$r" "$W/one/runs/$r" "$r, Slurm on hA+hB ($l) vs one host" ||
      fail "$r: the Slurm run ($l) differs from the one-host run"
  done
done

if [ $fails -gt 0 ]; then
  dump_logs
  echo "$fails failure(s)"
  exit 1
fi
[ $pmix = 1 ] || skip "every mpirun check passed, but this Slurm has no pmix plugin (srun --mpi=list: $(on_hA srun --mpi=list 2>&1 | tr '\n' ' ')): the srun launcher is untested"
note "two-node Slurm: all checks passed (mpirun and srun --mpi=pmix)"
exit 0
