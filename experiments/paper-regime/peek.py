"""A descriptive table of the paper-regime runs finished so far, read from
results/paper-regime/summaries/*.npz: per run, the cumulative own and training-batch reward
(sums over nodes and rounds) and their change against the same seed's paper-8L0E run, own
reward over rounds 0-9 and the last 50, and held-out pass@1 at round 0 and at the end.
No inference: the report (paired by seed, with intervals) waits for every seed.
usage: /usr/bin/python3 experiments/paper-regime/peek.py   (from the repository root)"""
import glob
import os
import sys
import warnings

import numpy as np

rows = {}
for path in sorted(glob.glob("results/paper-regime/summaries/*.npz")):
    d = np.load(path)
    own, train = d["node/reward_own"], d["node/reward_train"]
    with warnings.catch_warnings():  # rounds without an evaluation are NaN on every node
        warnings.simplefilter("ignore", RuntimeWarning)
        ev = np.nanmean(d["node/eval_pass1"], axis=0)
        ev = ev[np.isfinite(ev)]
        mean_own = np.nanmean(own, axis=0)
    name = os.path.basename(path)[:-4]
    rows[name] = (np.nansum(own), np.nansum(train), mean_own[:10].mean(), mean_own[-50:].mean(), ev[0], ev[-1])
if not rows:
    sys.exit("results/paper-regime/summaries: no summary yet (experiments/paper-regime/run.sh writes them)")
print("| run | cum own | vs 8/0 | cum train | vs 8/0 | own 0-9 | own last 50 | pass@1 r0 | pass@1 end |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, r in rows.items():
    base = rows.get("paper-8L0E-" + name.rsplit("-", 1)[1])
    vs = (lambda i: f"{100 * (r[i] / base[i] - 1):+.1f}%") if base else (lambda i: "-")
    print(f"| {name} | {r[0]:.1f} | {vs(0)} | {r[1]:.1f} | {vs(1)} | {r[2]:.4f} | {r[3]:.4f} | {r[4]:.3f} | {r[5]:.3f} |")
