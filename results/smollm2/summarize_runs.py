# The numbers of results/smollm2/README.md from its two run directories (results/runs/smollm2-ARM,
# not in git): python3 results/smollm2/summarize_runs.py 2L2E 4L0E
import sys, h5py, numpy as np, math
from scipy import stats
def load(run):
    own, t, ev, ext, reenc = [], [], [], [], []
    for k in range(2):
        with h5py.File(f"{run}/node_{k:04d}.h5", "r") as f:
            own.append(np.asarray(f["reward_own"])); t.append(np.asarray(f["t_round"]))
            ev.append(np.asarray(f["eval_pass1"])); ext.append(np.asarray(f["external_used"]))
            reenc.append(np.asarray(f["external_reencoded"]))
    return np.array(own), np.array(t), np.array(ev), np.array(ext), np.array(reenc)
def ci(x):
    m = x.mean(); h = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return m, m - h, m + h
res = {}
for arm in sys.argv[1:]:
    own, t, ev, ext, reenc = load(f"results/runs/smollm2-{arm}")
    node_mean = own.mean(axis=0)  # per round, mean of the 2 nodes
    first, last = node_mean[:10], node_mean[-10:]
    d = last.mean() - first.mean()
    se = math.sqrt(first.var(ddof=1) / 10 + last.var(ddof=1) / 10)
    dfw = se**4 / ((first.var(ddof=1) / 10) ** 2 / 9 + (last.var(ddof=1) / 10) ** 2 / 9)
    h = stats.t.ppf(0.975, dfw) * se
    print(f"{arm}: rounds {own.shape[1]}, own reward mean {node_mean.mean():.3f}; rounds 1-10 {first.mean():.3f}, "
          f"31-40 {last.mean():.3f}, last - first {d:+.3f} [95% CI {d-h:+.3f}, {d+h:+.3f}] (Welch over rounds)")
    print(f"  eval pass@1 per node at rounds 10/20/30/40: {np.round(ev[:, 9::10], 3).tolist()}")
    print(f"  s/round mean {t.mean():.1f} (node 0 {t[0].mean():.1f}, node 1 {t[1].mean():.1f}); external used/round {ext.mean():.2f}, re-encoded {np.nansum(reenc):.0f}")
    res[arm] = node_mean
if len(res) == 2:
    a, b = list(res)
    diff = res[a] - res[b]
    m, lo, hi = ci(diff)
    print(f"paired by round, {a} - {b}: {m:+.3f} [95% CI {lo:+.3f}, {hi:+.3f}] over {len(diff)} rounds")
