# `sapo verify` on a real swarm's messages (run.dump_messages): with model.deterministic = true
# the honest message of a node verifies bit for bit from its checkpoint, also when the verifier
# runs another OpenBLAS kernel than the sender; a log-prob moved by one ulp and a changed
# completion byte are caught (exit 1, the first mismatch printed); bad input exits 2. The same
# run with the default numerics is measured: how many claimed log-probs differ from a
# recomputation (printed, not asserted).
set -u
SAPO=${SAPO_BIN:-build/sapo}
SRC=${SAPO_SOURCE_DIR:-.}
TAMPER=${SAPO_BUILD_DIR:-build}/tests/tool_message_tamper
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

CFG=("$SRC/experiments/quick.ini" run.eval_questions=0)
# the sender's OpenBLAS kernel: the widest this CPU runs (SkylakeX needs AVX-512, Haswell AVX2),
# so that the verifier's Prescott differs from it
FAST=Prescott
grep -qw avx2 /proc/cpuinfo && FAST=Haswell
grep -qw avx512f /proc/cpuinfo && FAST=SkylakeX
"$SAPO" pretrain "${CFG[@]}" pretrain.steps=150 model.deterministic=true --out "$TMP/w.ckpt" --quiet >"$TMP/log" 2>&1 \
    || fail "warm-up: $(tail -3 "$TMP/log")"
swarm() { # det dir [core type]
    OPENBLAS_CORETYPE=${3:-$FAST} mpirun --oversubscribe -np 4 "$SAPO" run "${CFG[@]}" model.init="$TMP/w.ckpt" \
        model.deterministic=$1 swarm.rounds=5 run.checkpoint_every=4 run.dump_messages="$2/msgs" --out "$2" --quiet \
        >"$2.log" 2>&1 || fail "swarm deterministic=$1: $(tail -5 "$2.log")"
}
verify() { # dir node core type [rollout]
    OPENBLAS_CORETYPE=$3 "$SAPO" verify "$1/config.ini" --ckpt "$1/ckpt/node_000$2.r0000004.model" \
        --rollout "${4:-$1/msgs/node_000$2.r0000004.msg}"
}

swarm true "$TMP/det"
for k in 0 1 2 3; do
    out=$(verify "$TMP/det" $k Prescott) || fail "honest message of node $k: exit $?: $out"
    echo "node $k, verified with the Prescott kernel: $out"
done
"$TAMPER" "$TMP/det/msgs/node_0001.r0000004.msg" "$TMP/lp.msg" logprob 1 2 3 || fail "tamper logprob"
out=$(verify "$TMP/det" 1 Haswell "$TMP/lp.msg"); rc=$?
[ "$rc" = 1 ] || fail "a log-prob one ulp off: exit $rc, expected 1: $out"
grep -q "first mismatch: group 1, completion 2, token 3 " <<<"$out" || fail "mismatch not located: $out"
echo "tampered log-prob: $out"
"$TAMPER" "$TMP/det/msgs/node_0002.r0000004.msg" "$TMP/b.msg" byte 0 1 2 || fail "tamper byte"
out=$(verify "$TMP/det" 2 Haswell "$TMP/b.msg"); rc=$?
[ "$rc" = 1 ] || fail "a changed completion byte: exit $rc, expected 1: $out"
echo "tampered byte: $out"
head -c 300 /dev/urandom >"$TMP/garbage.msg"
out=$(verify "$TMP/det" 0 Haswell "$TMP/garbage.msg" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "garbage message: exit $rc, expected 2: $out"
out=$("$SAPO" verify --rollout "$TMP/det/msgs/node_0000.r0000004.msg" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "no --ckpt: exit $rc, expected 2"
out=$("$SAPO" verify "$TMP/det/config.ini" --ckpt "$TMP/missing.model" --rollout "$TMP/det/msgs/node_0000.r0000004.msg" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "missing checkpoint: exit $rc, expected 2: $out"

# the default numerics: what a recomputation gives (a measurement)
swarm false "$TMP/def"
for k in 0 1 2 3; do
    out=$(verify "$TMP/def" $k "$FAST")
    echo "default numerics, node $k, same kernel: exit $? $out"
done
[ "$fails" = 0 ] && echo "sapo verify: all checks passed"
exit $((fails > 0))
