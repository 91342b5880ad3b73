# `sapo verify` of a llama node (SmolLM2-135M-Instruct, scripts/get-model.sh) in the
# deterministic mode: the round-0 message of a one-node swarm ships its sampled token ids and
# one log-prob per id (message version 3), and verifying it against the Hugging Face
# directory itself recomputes every claimed log-prob bit for bit (exit 0); the same message
# against a different model (the byte-level GPT's checkpoint, another family) is refused.
set -u
SAPO=${SAPO_BIN:-build/sapo}
SRC=${SAPO_SOURCE_DIR:-.}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
DIR=$(bash "$SRC/scripts/get-model.sh" smollm2-135m-instruct) || { echo "FAIL: get-model.sh smollm2-135m-instruct"; exit 1; }
CFG=("$SRC/experiments/quick.ini" model.family=llama "model.hf_dir=$DIR" model.n_ctx=256 model.deterministic=true
     swarm.nodes=1 swarm.rounds=1 sampling.groups=1 sampling.local=1 sampling.external=0 grpo.completions=2
     gen.max_new_tokens=12 tasks.names=basic_arithmetic run.eval_every=0 model.micro_tokens=512)
mpirun --oversubscribe -np 1 "$SAPO" run "${CFG[@]}" run.dump_messages="$TMP/msgs" --out "$TMP/run" --quiet \
    >"$TMP/run.log" 2>&1 || fail "swarm: $(tail -5 "$TMP/run.log")"
msg=$TMP/msgs/node_0000.r0000000.msg
out=$("$SAPO" verify "$TMP/run/config.ini" --ckpt "$DIR" --rollout "$msg" 2>&1); rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "the honest round-0 message: exit $rc"
grep -q " 0 without log-probs skipped" <<<"$out" || fail "some completions carried no token log-probs: $out"
grep -q "of 0 log-probs" <<<"$out" && fail "nothing was compared: $out"
out=$("$SAPO" verify "$TMP/run/config.ini" --ckpt "$TMP/missing" --rollout "$msg" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "a missing model: exit $rc, expected 2: $out"
[ "$fails" = 0 ] && echo "sapo verify, llama node: all checks passed"
exit $((fails > 0))
