#!/usr/bin/env bash
# h5log under a live reader and kill -9: a writer (tool_h5log_writer) appends a row every
# 20 ms while h5py (Debian's /usr/bin/python3, swmr=True) reads the file, directly and through
# a run index; then the writer is killed with SIGKILL and the file must open and hold every
# row up to the last round the writer reported flushed, values intact. Then writers in a
# tight loop (no sleep, so most kills land inside an append or flush) are killed at random
# moments, and a killed log is resumed with h5log_open_append (cut after a round, continued)
# and must read back without swmr once closed. Row values are checked by h5log_expected.py.
set -uo pipefail
: "${SAPO_BUILD_DIR:?}" "${SAPO_SOURCE_DIR:?}"
PY=/usr/bin/python3
if ! $PY -c 'import h5py' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no h5py"
    exit 77
fi
WRITER="$SAPO_BUILD_DIR/tests/tool_h5log_writer"
INDEX="$SAPO_BUILD_DIR/tests/tool_h5log_index"
CHECK="$SAPO_SOURCE_DIR/tests/unit/h5log_expected.py"
dir=$(mktemp -d /tmp/sapo_h5log_crash_XXXXXX)
fail=0
writer_pid=
cleanup() {
    [ -n "$writer_pid" ] && kill -9 "$writer_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
bad() { echo "FAIL: $*"; fail=1; }
last_flushed() { grep '^flushed ' "$1" | tail -1 | cut -d' ' -f2; }
# Waits (up to 20 s) until the writer's output says round $2 is flushed.
wait_flushed() {
    for _ in $(seq 400); do
        local r
        r=$(last_flushed "$1")
        [ -n "$r" ] && [ "$r" -ge "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

# ---- 1. a live writer, read while it writes, then kill -9 --------------------------------
mkdir -p "$dir/run/nodes"
"$WRITER" "$dir/run/nodes/node_0001.h5" 100 0 >/dev/null || bad "writer of the finished node failed"
"$WRITER" "$dir/run/nodes/node_0000.h5" 1000000 20 >"$dir/w0.out" 2>"$dir/w0.err" &
writer_pid=$!
"$INDEX" "$dir/run/run.h5" nodes/node_0000.h5 nodes/node_0001.h5 || bad "run index failed"
wait_flushed "$dir/w0.out" 5 || bad "the writer flushed nothing in 20 s: $(cat "$dir/w0.err")"
out=$($PY "$CHECK" watch "$dir/run/nodes/node_0000.h5" 2 2>&1 | tail -1)
echo "reading while writing (refresh loop, 2 s): $out"
[[ $out == ok* ]] || bad "live read: $out"
out=$($PY "$CHECK" index "$dir/run/run.h5" 2 2>&1 | tail -1)
echo "run index while node 0 writes: $out"
[[ $out == ok* ]] || bad "live read through run.h5: $out"
out=$($PY "$CHECK" check "$dir/run/nodes/node_0000.h5" 2>&1 | tail -1)
echo "fresh open while writing: $out"
[[ $out == ok* ]] || bad "fresh open while writing: $out"
kill -9 "$writer_pid"
wait "$writer_pid" 2>/dev/null
writer_pid=
last=$(last_flushed "$dir/w0.out")
out=$($PY "$CHECK" check "$dir/run/nodes/node_0000.h5" --min-last "$last" 2>&1 | tail -1)
echo "after kill -9 (writer said round $last was flushed): $out"
[[ $out == ok* ]] || bad "after kill -9: $out"
out=$($PY "$CHECK" index "$dir/run/run.h5" 2 2>&1 | tail -1)
echo "run index after the kill: $out"
[[ $out == ok* ]] || bad "run.h5 after kill -9: $out"

# ---- 2. kills at random moments of a tight append loop -----------------------------------
kills=6
for i in $(seq $kills); do
    f="$dir/tight$i.h5"
    "$WRITER" "$f" 100000000 0 >"$dir/t$i.out" 2>"$dir/t$i.err" &
    writer_pid=$!
    wait_flushed "$dir/t$i.out" 0 || bad "tight writer $i flushed nothing: $(cat "$dir/t$i.err")"
    sleep "0.$((RANDOM % 300 + 20))"
    kill -9 "$writer_pid"
    wait "$writer_pid" 2>/dev/null
    writer_pid=
    last=$(last_flushed "$dir/t$i.out")
    out=$($PY "$CHECK" check "$f" --min-last "$last" 2>&1 | tail -1)
    echo "tight loop kill $i (last flushed $last): $out"
    [[ $out == ok* ]] || bad "tight loop kill $i: $out"
done

# ---- 3. resume a killed log: cut after a round, continue, close --------------------------
f="$dir/tight1.h5"
last=$(last_flushed "$dir/t1.out")
keep=$((last / 2))
"$WRITER" "$f" 20 0 "$keep" >"$dir/r.out" 2>"$dir/r.err" || bad "resume failed: $(cat "$dir/r.err")"
grep -q "^start $((keep + 1))\$" "$dir/r.out" || bad "resume did not continue at round $((keep + 1)): $(head -1 "$dir/r.out")"
out=$($PY "$CHECK" check "$f" --no-swmr 2>&1 | tail -1)
echo "resumed after round $keep + 20 rounds, closed, read without swmr: $out"
[[ $out == "ok rows=$((keep + 21)) last=$((keep + 20))" ]] || bad "resumed log: $out (expected rows=$((keep + 21)))"

[ $fail = 0 ] && echo "h5log crash test: all checks passed"
exit $fail
