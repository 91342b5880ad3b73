# A swarm across two hosts, emulated on this machine (scripts/emulated_hosts.sh: network and UTS
# namespaces hA 10.77.0.1 and hB 10.77.0.2 over a veth pair; docs/SWARM.md, "Across hosts"):
# 8 ranks, 4 per host, Open MPI over TCP only, net.latency=1 net.drop=0.2, from a brief warm-up.
# Checks:
#   - the run finishes (DONE), the memory check counts 4 ranks on its host, and every node's
#     log and summary.json say hA for ranks 0-3 and hB for ranks 4-7;
#   - every node's datasets (all but the t_* timers) equal the same run on one host bit for bit;
#   - a dead host: once ckpt/LATEST exists, every rank on hB is killed (SIGKILL), then in a
#     second run the whole host (its Open MPI daemon too): each job ends within 60 s, non-zero,
#     with a line naming the dead rank's or the host's address; `sapo run --resume` on one host
#     then finishes the run and its logs equal the uninterrupted one-host run's bit for bit.
# Needs root, `ip` and `unshare` (as CI runs): skips (77) only where namespaces cannot be made.
# Removes the namespaces whatever happens.
set -u
SAPO=$(readlink -f "${SAPO_BIN:-build/sapo}")
SRC=$(readlink -f "${SAPO_SOURCE_DIR:-.}")
HOSTS=$SRC/scripts/emulated_hosts.sh
PY=/usr/bin/python3 # Debian's, with h5py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to make network and UTS namespaces (uid $(id -u))"
command -v ip >/dev/null || skip "needs ip (iproute2) to make network namespaces"
command -v unshare >/dev/null || skip "needs unshare (util-linux) to make UTS namespaces"
why=$(unshare --net --uts true 2>&1) || skip "this machine refuses namespaces: unshare --net --uts: $why"

TMP=$(mktemp -d)
# one user of hA/hB at a time (two ctest runs on one machine)
exec 9>/run/lock/sapo-emulated-hosts.lock 2>/dev/null || exec 9>/tmp/sapo-emulated-hosts.lock
flock -w 900 9 || { echo "FAIL: another test holds the emulated hosts for 15 min"; exit 1; }
cleanup() {
    for p in $(pgrep -f -- "--out $TMP/"); do kill -9 "$p" 2>/dev/null; done
    "$HOSTS" down
    rm -rf "$TMP"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$HOSTS" up || { echo "FAIL: scripts/emulated_hosts.sh up failed"; exit 1; }

# conftest.py's tiny model on calendar_arithmetic, which a brief warm-up answers sometimes, so
# rewards and advantages are not all zero
MODEL=(model.n_layer=1 model.d_model=32 model.n_head=2 model.n_ctx=160 gen.max_new_tokens=24 tasks.preset=tiny
       tasks.names=calendar_arithmetic tasks.max_unanswerable=1)
if ! "$SAPO" pretrain pretrain.steps=300 pretrain.batch=16 "${MODEL[@]}" --out "$TMP/warmup.ckpt" --quiet \
        >"$TMP/warmup.log" 2>&1; then
    echo "FAIL: sapo pretrain: $(tail -3 "$TMP/warmup.log")"
    exit 1
fi
# 120 rounds of about 0.1 s: a kill after the first checkpoint (round 10) lands mid-run
ARGS=("${MODEL[@]}" sampling.groups=3 sampling.local=2 sampling.external=1 grpo.completions=4 run.eval_every=2
      run.eval_questions=4 optim.lr=1e-3 swarm.rounds=120 run.checkpoint_every=10 net.latency=1 net.drop=0.2
      model.init="$TMP/warmup.ckpt" --quiet)

two_hosts() { # OUT [mpirun args...]: 8 ranks, 4 on each emulated host
    local out=$1
    shift
    "$HOSTS" mpirun --bind-to none -np 8 "$@" "$SAPO" run "${ARGS[@]}" --out "$out"
}
one_host() { # OUT [sapo args...]: 8 ranks here
    local out=$1
    shift
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run "${ARGS[@]}" --out "$out" "$@"
}

# Equal logs: every dataset but the t_* timers, bit for bit (NaN where NaN)
same_logs() { # A B WHAT: tests/mpi/same_node_logs.py
    "$PY" "$SRC/tests/mpi/same_node_logs.py" "$1" "$2" "$3" 8 120
}

# ---- across two hosts, and the same run on one host
two_hosts "$TMP/two" >"$TMP/two.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "the two-host run exited $rc: $(tail -5 "$TMP/two.log")"
[ -s "$TMP/two/DONE" ] || fail "the two-host run wrote no DONE"
grep -q "for the 4 ranks on this host" "$TMP/two.log" ||
    fail "the memory check did not count 4 ranks on its host: $(grep 'estimated memory' "$TMP/two.log")"
one_host "$TMP/one" >"$TMP/one.log" 2>&1 || fail "the one-host run exited $?: $(tail -5 "$TMP/one.log")"
grep -q "for the 8 ranks on this host" "$TMP/one.log" ||
    fail "the one-host memory check did not count 8 ranks: $(grep 'estimated memory' "$TMP/one.log")"
if [ -s "$TMP/two/DONE" ]; then
    "$PY" - "$TMP/two" <<'EOF' || fail "the ranks did not run where they were placed"
import json, sys, h5py
d = sys.argv[1]
summary = json.load(open(f"{d}/summary.json"))
logged = []
for k in range(8):
    with h5py.File(f"{d}/node_{k:04d}.h5", "r", swmr=True) as f:
        h = f.attrs["host"]
        logged.append(h.decode() if isinstance(h, bytes) else h)
in_summary = [e["host"] for e in summary["per_node"]]
want = ["hA"] * 4 + ["hB"] * 4
print(f"hosts of ranks 0-7: logs {logged}, summary.json {in_summary}")
sys.exit(0 if logged == want and in_summary == want else 1)
EOF
    same_logs "$TMP/two" "$TMP/one" "two hosts vs one host" || fail "the two-host run differs from the one-host run"
fi

# ---- a dead host, then --resume on one host
# VICTIM ranks: SAPO's ranks on hB; host: every process on hB, Open MPI's daemon included
dead_host() { # NAME VICTIM
    local name=$1 victim=$2 out=$TMP/$1
    two_hosts "$out" >"$out.log" 2>&1 &
    local job=$!
    for _ in $(seq 600); do
        [ -s "$out/ckpt/LATEST" ] && break
        kill -0 $job 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -s "$out/ckpt/LATEST" ] || [ -e "$out/DONE" ]; then
        fail "$name: no checkpoint to kill after (or the run ended first): $(tail -3 "$out.log")"
        wait $job
        return
    fi
    local pids="" p
    for p in $(ip netns pids hB); do
        if [ "$victim" = host ] || [ "$(cat /proc/$p/comm 2>/dev/null)" = sapo ]; then pids="$pids $p"; fi
    done
    local t0 t1 secs rc
    t0=$(date +%s.%N)
    kill -9 $pids
    for _ in $(seq 1200); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
    t1=$(date +%s.%N)
    if kill -0 $job 2>/dev/null; then
        fail "$name: the job still runs 120 s after hB's ${victim}s died"
        for p in $(pgrep -f -- "--out $out"); do kill -9 "$p" 2>/dev/null; done
    fi
    wait $job
    rc=$?
    secs=$(echo "$t1 - $t0" | bc)
    echo "$name: killed$pids on hB after checkpoint $(cat "$out/ckpt/LATEST"); the job ended after $secs s with exit $rc"
    [ $rc -ne 0 ] || fail "$name: exit 0 after hB died"
    [ "$(echo "$secs <= 60" | bc)" = 1 ] || fail "$name: the end took $secs s (> 60)"
    [ ! -e "$out/DONE" ] || fail "$name: DONE written though hB died"
    if [ "$victim" = sapo ]; then
        grep -Eq "rank [4-7] .*on node (10\.77\.0\.2|hB)" "$out.log" ||
            fail "$name: no line names a dead rank on hB: $(grep -v '^sapo run' "$out.log" | tail -5)"
    else
        grep -Eq "node (10\.77\.0\.2|hB)\b" "$out.log" ||
            fail "$name: no line names the dead host: $(grep -v '^sapo run' "$out.log" | tail -5)"
    fi
    grep -E "on node (10\.77\.0\.2|hB)" "$out.log" | head -2 | sed "s/^/$name: /"
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet >"$out.resume.log" 2>&1 ||
        { fail "$name: --resume on one host exited $?: $(tail -5 "$out.resume.log")"; return; }
    [ -s "$out/DONE" ] || fail "$name: the resumed run wrote no DONE"
    same_logs "$out" "$TMP/one" "$name, resumed on one host, vs one host" ||
        fail "$name: the resumed run differs from the uninterrupted one-host run"
}
if [ -s "$TMP/one/DONE" ]; then
    dead_host dead_ranks sapo
    dead_host dead_host host
fi

[ $fails = 0 ] && echo "two hosts: all checks passed"
exit $((fails > 0))
