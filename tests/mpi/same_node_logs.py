"""Two runs' node logs are equal: every dataset but the t_* timers, bit for bit (NaN where NaN),
the key columns present, and the expected rounds; what the two-host tests compare a run across
hosts (tests/mpi/test_two_hosts.sh, tests/slurm/test_two_node_slurm.sh) with one on one host.
usage: python3 same_node_logs.py RUN_A RUN_B WHAT RANKS ROUNDS   (exit 1 and a line when they differ)"""
import sys

import h5py
import numpy as np

a, b, what, ranks, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
bad = []
names = []
for k in range(ranks):
    with h5py.File(f"{a}/node_{k:04d}.h5", "r", swmr=True) as fa, h5py.File(f"{b}/node_{k:04d}.h5", "r", swmr=True) as fb:
        names = sorted(n for n in fa if not n.startswith("t_"))
        if names != sorted(n for n in fb if not n.startswith("t_")):
            bad.append(f"node {k}: other datasets")
            continue
        for n in ("reward_own", "reward_train", "loss", "grad_norm", "eval_pass1", "msgs_dropped"):
            if n not in names:
                bad.append(f"node {k}: no {n}")
        for n in names:
            x, y = np.asarray(fa[n][()]), np.asarray(fb[n][()])
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                bad.append(f"node {k}: {n}")
        if len(fa["round"]) != rounds:
            bad.append(f"node {k}: {len(fa['round'])} rounds")
if bad:
    print(f"{what}: logs differ: {', '.join(bad[:12])}{' ...' if len(bad) > 12 else ''}")
    sys.exit(1)
print(f"{what}: every node's {len(names)} datasets (all but t_*) bit-identical, {ranks} nodes x {rounds} rounds")
