# NCCL eligibility over MPI (tests/mpi/tool_node_gpu_agree.c, swarm/node_gpu.h): the ranks of
# a machine gather the ids of the GPUs they use and agree, on every rank, whether each has its
# own (and the machines agree): 3 ranks each seeing one GPU of its own (CUDA_VISIBLE_DEVICES per rank) may use NCCL;
# two ranks on one GPU, or a rank without one, make every rank fall back, with the reason.
set -u
TOOL=${SAPO_BUILD_DIR:-build}/tests/tool_node_gpu_agree
[ -x "$TOOL" ] || { echo "FAIL: $TOOL is not built"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check IDS EXPECTED_OK REASON_FRAGMENT [split: ranks 0, 2 and rank 1 as two machines]
check() {
    out=$(timeout 120 mpirun --oversubscribe --bind-to none -np 3 "$TOOL" "$1" ${4:-} 2>&1)
    echo "$out"
    lines=$(grep -c '^rank [0-9]: ok=' <<<"$out")
    [ "$lines" = 3 ] || { fail "$1: $lines ranks answered, expected 3"; return; }
    agreed=$(grep -c "^rank [0-9]: ok=$2 " <<<"$out")
    [ "$agreed" = 3 ] || fail "$1: not every rank says ok=$2"
    if [ -n "$3" ]; then
        [ "$(grep -cF "$3" <<<"$out")" = 3 ] || fail "$1: not every rank gives the reason \"$3\""
    fi
}

check "1x0000:1B:00.0,1x0000:43:00.0,1x0000:52:00.0" 1 ""
check "0000:1B:00.0,0000:43:00.0,0000:52:00.0" 1 ""
check "1x0000:1B:00.0,1x0000:1B:00.0,1x0000:52:00.0" 0 "local ranks 0 and 1 share GPU 0000:1B:00.0"
check "0000:1B:00.0,-,0000:52:00.0" 0 "local rank 1 of 3 has no GPU"
# two machines: the same bus id on different machines is two GPUs; a machine whose ranks
# share a GPU makes the other machine's ranks fall back too (they agree)
check "1x0000:1B:00.0,1x0000:1B:00.0,1x0000:43:00.0" 1 "" split
check "1x0000:1B:00.0,1x0000:43:00.0,1x0000:1B:00.0" 0 "" split
grep -q "^rank 1: ok=0 why=another machine's ranks" <<<"$out" || fail "split: rank 1 does not name the other machine"
[ $fails = 0 ] && echo "test_node_gpu_agree: all checks passed"
[ $fails = 0 ]
