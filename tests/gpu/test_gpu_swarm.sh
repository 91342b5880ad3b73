#!/usr/bin/env bash
# A 4-rank virtual-clock swarm (tiny model, 6 rounds, all-gather and p2p) run three times
# from the same warm-up checkpoint: model.backend = cpu, = cuda, and mixed (nodes 0 and 2 on
# the GPU, 1 and 3 on the CPU: one swarm can mix them). Compares the rewards per node and
# round (reward_own from the HDF5 logs, or the summary's cumulative rewards without h5py).
#
# How closely, and why not exactly: both backends compute in fp32 and differ only in
# summation order (about 1e-6 relative in the logits). Generation samples at temperature 1:
# a sampled token changes only when the uniform draw falls within ~1e-6 of a boundary of the
# cumulative distribution, so the first rounds give identical completions, hence identical
# rewards, almost surely; once one token flips, that completion and everything trained on it
# drift apart, and later rounds agree only statistically. Asserted: round 0 rewards are
# identical on every node (a flip there has a probability of roughly 1e-3), the round-0
# losses agree to 1e-3 relative, every run completes, and the mean |reward difference| over
# all nodes and rounds stays below 0.25 (rewards are in [0, 1]). The count of identical
# (node, round) rewards and the first divergence are printed.
# Skipped (77) when the build has no CUDA backend or no GPU is visible.
# SAPO_TEST_GPU_BACKEND=cpu runs the same script with cpu in place of cuda (a self-check of
# the script itself where no GPU exists: then every reward must be identical).
set -euo pipefail
: "${SAPO_BIN:?SAPO_BIN must name the sapo binary}"
GPU=${SAPO_TEST_GPU_BACKEND:-cuda}
if [ "$GPU" = cuda ] && ! "$SAPO_BIN" info | grep -Eq '^backends .*cuda \(a GPU is visible\)'; then
    echo "skipped: $("$SAPO_BIN" info | grep -E '^backends') -- needs the CUDA backend and a visible GPU"
    exit 77
fi
MPIRUN=${SAPO_MPIRUN:-mpirun}
PY=${SAPO_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

# calendar_arithmetic after a short warm-up: rewards are not all zero, so GRPO has a signal
MODEL=(model.n_layer=1 model.d_model=32 model.n_head=2 model.n_ctx=160 gen.max_new_tokens=24
       tasks.preset=tiny tasks.names=calendar_arithmetic)
BASE=("${MODEL[@]}" sampling.groups=3 sampling.local=2 sampling.external=1 grpo.completions=4
      swarm.rounds=6 run.eval_every=3 run.eval_questions=4 optim.lr=1e-3 swarm.seed=5)

echo "== warm-up checkpoint (CPU)"
timeout 300 "$SAPO_BIN" pretrain pretrain.steps=200 pretrain.batch=16 --out "$tmp/w.ckpt" --quiet "${MODEL[@]}"

run() { # name transport extra...
    local name=$1 transport=$2
    shift 2
    echo "== run $name (net.transport=$transport $*)"
    timeout 600 "$MPIRUN" --oversubscribe --bind-to none -np 4 "$SAPO_BIN" run "${BASE[@]}" \
        "model.init=$tmp/w.ckpt" "net.transport=$transport" "$@" --out "$tmp/$name" >"$tmp/$name.log" 2>&1 || {
        cat "$tmp/$name.log"
        echo "FAIL: run $name exited non-zero"
        exit 1
    }
    grep -E '^node 0: backend' "$tmp/$name.log" || true
    [ -f "$tmp/$name/DONE" ] || { echo "FAIL: run $name did not finish"; exit 1; }
}

for transport in allgather p2p; do
    run "cpu_$transport" "$transport" model.backend=cpu
    run "cuda_$transport" "$transport" "model.backend=$GPU"
done
run mixed_allgather allgather model.backend=cpu "node.0.model.backend=$GPU" "node.2.model.backend=$GPU"

"$PY" - "$tmp" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
fail = 0
try:
    import h5py
    import numpy as np
except ImportError:
    h5py = None

def col(run, node, name):
    with h5py.File(os.path.join(tmp, run, f"node_{node:04d}.h5"), "r", swmr=True) as f:
        n = len(f["round"])
        return np.array(f[name][:n], dtype=float)

for ref, other in (("cpu_allgather", "cuda_allgather"), ("cpu_p2p", "cuda_p2p"), ("cpu_allgather", "mixed_allgather")):
    if h5py is None:
        a = json.load(open(os.path.join(tmp, ref, "summary.json")))
        b = json.load(open(os.path.join(tmp, other, "summary.json")))
        ca = [p["cum_reward_own"] for p in a["per_node"]]
        cb = [p["cum_reward_own"] for p in b["per_node"]]
        d = max(abs(x - y) for x, y in zip(ca, cb)) / a["rounds"]
        print(f"{ref} vs {other}: (no h5py) cumulative reward_own per node {ca} vs {cb}; max mean diff {d:.3f}")
        if d > 0.25:
            print(f"FAIL: {other}: mean reward difference {d:.3f} > 0.25"); fail = 1
        continue
    same = total = 0
    diffs, first = [], None
    for node in range(4):
        ra, rb = col(ref, node, "reward_own"), col(other, node, "reward_own")
        la, lb = col(ref, node, "loss"), col(other, node, "loss")
        if len(ra) != 6 or len(rb) != 6:
            print(f"FAIL: {other} node {node}: {len(rb)} rounds logged, {ref} {len(ra)}; expected 6"); fail = 1
            continue
        if ra[0] != rb[0]:
            print(f"FAIL: {other} node {node}: round 0 reward_own {rb[0]} vs {ref} {ra[0]}"); fail = 1
        ma, mb = col(ref, node, "completion_len"), col(other, node, "completion_len")
        if ma[0] != mb[0]:
            print(f"FAIL: {other} node {node}: round 0 completion_len {mb[0]} vs {ref} {ma[0]}"); fail = 1
        if abs(la[0] - lb[0]) > 1e-3 * max(1.0, abs(la[0])):
            print(f"FAIL: {other} node {node}: round 0 loss {lb[0]:.6g} vs {ref} {la[0]:.6g}"); fail = 1
        for r in range(6):
            total += 1
            same += ra[r] == rb[r]
            diffs.append(abs(ra[r] - rb[r]))
            if ra[r] != rb[r] and (first is None or r < first[1]):
                first = (node, r)
        print(f"{ref} vs {other} node {node}: reward_own {ref} {np.round(ra, 3).tolist()} | {other} "
              f"{np.round(rb, 3).tolist()}; round-0 loss {la[0]:.6g} vs {lb[0]:.6g}")
    mean = sum(diffs) / max(1, len(diffs))
    print(f"{ref} vs {other}: {same} of {total} (node, round) rewards identical; mean |diff| {mean:.4f}; "
          f"first divergence {'none' if first is None else 'node %d round %d' % first}")
    if ref == "cpu_allgather" and other != "mixed_allgather" and max(col(ref, n, "reward_own").max() for n in range(4)) == 0:
        print("FAIL: every reward of the CPU run is 0: the comparison would say nothing"); fail = 1
    if mean > 0.25:
        print(f"FAIL: {other}: mean reward difference {mean:.3f} > 0.25"); fail = 1
sys.exit(fail)
EOF
echo "gpu swarm: all checks passed"
