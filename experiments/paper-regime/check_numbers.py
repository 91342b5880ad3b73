"""Independent numpy check (no analysis/ code) of the numbers that issue 35 wrote into
results/paper-regime/README.md. Run from the repository root:
  /usr/bin/python3 experiments/paper-regime/check_numbers.py"""
import itertools, numpy as np
D = "results/paper-regime/summaries"
L = lambda a, s: np.load(f"{D}/{a}-s{s}.npz")
S = (1, 2, 3, 4)
own = {s: L("paper-8L0E", s)["node/reward_own"] for s in S}
tot = np.mean([own[s].sum() for s in S]); print("8/0 cumulative own %.1f, per agent-round %.4f, x paper %.2f" % (tot, tot / 8000, tot / 8000 / (561.79 / 16000)))
sh = []
for s in S:
    z = L("paper-8L0E", s); lab = list(z["task_labels"]); m = np.array([np.nanmean(c) if np.isfinite(c).any() else np.nan for c in z["task_mean"].T])
    ok = np.isfinite(m); sh.append(m[lab.index("calendar_arithmetic")] / m[ok].sum())
print("calendar share %.3f (seeds %s)" % (np.mean(sh), np.round(sh, 3)))
d = [np.nanmean(L("ftis-4L4E", s)["mean/offpolicy_dropped"]) for s in S]
de = [np.nanmean(L("ftis-4L4E", s)["mean/offpolicy_dropped"][-100:]) for s in S]
print("ftis drop run %.3f %s, last100 %.3f %s" % (np.mean(d), np.round(d, 3), np.mean(de), np.round(de, 3)))
for a in ("paper-4L4E", "paper-2L6E", "paper-8L0E", "positive_only-4L4E", "ftis-4L4E"):
    g = [L(a, s)["mean/grad_norm"] for s in S]
    print(a, "grad r0-9 %.3f r800-999 %.3f growth %.2fx" % (np.mean([x[:10].mean() for x in g]), np.mean([x[800:].mean() for x in g]),
          np.mean([x[-100:].mean() / x[:10].mean() for x in g])))
def signflip(d):
    d = np.asarray(d); o = abs(d.mean())
    return np.mean([abs((np.array(p) * d).mean()) >= o - 1e-12 for p in itertools.product((1, -1), repeat=d.size)])
def comp(a, b, key):
    va = np.array([key(L(a, s)) for s in S]); vb = np.array([key(L(b, s)) for s in S]); d = va - vb
    return 100 * d.mean() / vb.mean(), signflip(d), (d > 0).sum()
ownk = lambda z: z["node/reward_own"].sum(); trk = lambda z: z["node/reward_train"].sum()
for a in ("positive_only-4L4E", "ftis-4L4E"):
    print(a, "vs 4/0 own %+.1f%% signflip %.3f pos %d" % comp(a, "paper-4L0E", ownk), "| vs 8/0 train %+.1f%% signflip %.3f pos %d" % comp(a, "paper-8L0E", trk))
print("(a) 4/4 vs 8/0 train %+.1f%% signflip %.3f" % comp("paper-4L4E", "paper-8L0E", trk)[:2])
for s in S:
    print("2/6 seed", s, "own last 100 %.4f" % L("paper-2L6E", s)["node/reward_own"][:, -100:].mean(), "own r0-9 %.4f" % L("paper-2L6E", s)["node/reward_own"][:, :10].mean())
