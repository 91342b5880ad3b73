#!/usr/bin/env bash
# usage: scripts/compare_binaries.sh REF_SAPO NEW_SAPO
# For refactors that must not change behaviour: runs two sapo binaries (e.g. one built before
# the change, one after) on the same fixed runs (a pretrain, then 4-rank virtual-clock swarms:
# p2p with latency, loss, churn, regions and fanout; allgather with the tis arm; the
# deterministic mode) and demands the same pretrain checkpoint, every HDF5 dataset but t_*
# and every model checkpoint equal. Prints ALL SAME, or stops at the first difference.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 REF_SAPO NEW_SAPO" >&2; exit 2; }
REF=$(readlink -f "$1"); NEW=$(readlink -f "$2")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
T=$(mktemp -d /tmp/same.XXXX)
BASE="model.n_layer=1 model.d_model=32 model.n_head=2 model.n_ctx=160 gen.max_new_tokens=24 tasks.preset=tiny sampling.groups=3 sampling.local=2 sampling.external=1 grpo.completions=4 swarm.rounds=6 run.eval_every=3 run.eval_questions=4 optim.lr=1e-3 tasks.max_unanswerable=1 tasks.names=calendar_arithmetic run.checkpoint_every=3"
for b in REF NEW; do
  bin=${!b}
  $bin pretrain $BASE pretrain.steps=200 pretrain.batch=16 --out $T/$b.w.ckpt --quiet >/dev/null
done
cmp $T/REF.w.ckpt $T/NEW.w.ckpt && echo "same: pretrain checkpoint"
i=0
for extra in "net.transport=p2p net.latency=1 net.drop=0.2 net.offline=0.1 net.regions=2 net.cross_region=1 net.fanout=2" \
             "net.transport=allgather grpo.external=tis" \
             "net.transport=p2p model.deterministic=true grpo.external=positive_only grpo.kl=0.05"; do
  i=$((i+1))
  for b in REF NEW; do
    bin=${!b}
    mpirun --oversubscribe --bind-to none -np 4 $bin run $BASE $extra model.init=$T/REF.w.ckpt --out $T/$b.run$i --quiet >/dev/null
  done
  /usr/bin/python3 - "$T/REF.run$i" "$T/NEW.run$i" <<'PY'
import sys, h5py, numpy as np, pathlib, filecmp
a, b = map(pathlib.Path, sys.argv[1:])
for f in sorted(a.glob("node_*.h5")):
    with h5py.File(f, "r", swmr=True) as x, h5py.File(b / f.name, "r", swmr=True) as y:
        # a dataset the new build adds is allowed (and named); one it lost is a difference
        assert set(x.keys()) <= set(y.keys()), (f.name, sorted(set(x) - set(y)))
        if set(y) - set(x): print("new datasets in", b.name, f.name, sorted(set(y) - set(x)))
        for k in x:
            if k.startswith("t_"): continue
            assert np.array_equal(np.asarray(x[k]).view(np.uint8), np.asarray(y[k]).view(np.uint8)), (f.name, k)
for f in sorted((a / "ckpt").glob("*.model")):  # .state holds wall-time totals
    assert filecmp.cmp(f, b / "ckpt" / f.name, shallow=False), f.name
print("same:", a.name, "vs", b.name)
PY
done
rm -rf $T
echo "ALL SAME"
