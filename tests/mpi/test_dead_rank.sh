# A dead rank never leaves a hanging job: a running swarm of 8 and of 64 ranks loses one rank to
# kill -9 (as the kernel's OOM killer kills), and the job must end within 60 s with a non-zero
# exit, its output naming the rank that died. Prints each end time.
set -u
SAPO=${SAPO_BIN:-build/sapo}
SRC=${SAPO_SOURCE_DIR:-.}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
TMP=$(mktemp -d)
trap 'pkill -9 -f "$TMP/" 2>/dev/null; rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for NP in 8 64; do
    out="$TMP/np$NP"
    # a run far longer than the test: only the kill can end it
    mpirun --oversubscribe --bind-to none -np $NP "$SAPO" run "$SRC/experiments/quick.ini" swarm.rounds=100000 \
        run.eval_questions=0 net.fanout=4 --out "$out" >"$out.log" 2>&1 &
    job=$!
    # wait until every rank has opened its log and the rounds have begun
    for _ in $(seq 300); do
        [ "$(ls "$out"/node_*.h5 2>/dev/null | wc -l)" = $NP ] && break
        kill -0 $job 2>/dev/null || break
        sleep 1
    done
    sleep 5
    victim=$(pgrep -f -- "--out $out" | while read -r p; do
        [ "$(tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -c '^OMPI_COMM_WORLD_RANK=')" = 1 ] && echo $p; done | sed -n 3p)
    if [ -z "$victim" ]; then
        fail "np $NP: no running rank to kill: $(tail -3 "$out.log")"
        kill -9 $job 2>/dev/null
        continue
    fi
    rank=$(tr '\0' '\n' </proc/$victim/environ | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    t0=$(date +%s.%N)
    kill -9 "$victim"
    # a hanging job is ended here, after 120 s, and fails the test
    for _ in $(seq 1200); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
    t1=$(date +%s.%N)
    if kill -0 $job 2>/dev/null; then
        fail "np $NP: the job still runs 120 s after rank $rank died"
        pkill -9 -f -- "--out $out"
    fi
    wait $job
    rc=$?
    secs=$(echo "$t1 - $t0" | bc)
    echo "np $NP: rank $rank killed; the job ended after $secs s with exit $rc"
    [ $rc -ne 0 ] || fail "np $NP: exit 0 after a rank died"
    [ "$(echo "$secs <= 60" | bc)" = 1 ] || fail "np $NP: the end took $secs s (> 60)"
    grep -q "rank $rank\b" "$out.log" || fail "np $NP: the output does not name rank $rank: $(tail -5 "$out.log")"
done
[ $fails = 0 ] && echo "dead rank: all checks passed"
exit $((fails > 0))
