"""The numbers of results/smollm2/README.md, from a committed per-round summary (run from the
repository root).

  python3 experiments/smollm2/summarize_runs.py export 2L2E 4L0E > results/smollm2/rounds.csv
      (from the run directories results/runs/smollm2-ARM, not in git: one row per arm, node, round)
  python3 experiments/smollm2/summarize_runs.py report results/smollm2/rounds.csv
      (results/smollm2/README.md's table and lines, regenerated from rounds.csv alone)
"""
import csv, math, sys
import numpy as np
from scipy import stats

COLUMNS = ("reward_own", "t_round", "eval_pass1", "external_used", "external_reencoded", "groups_rejected")


def export(arms):
    import h5py
    w = csv.writer(sys.stdout)
    w.writerow(("arm", "node", "round") + COLUMNS)
    for arm in arms:
        for k in range(2):
            with h5py.File(f"results/runs/smollm2-{arm}/node_{k:04d}.h5", "r") as f:
                cols = [np.asarray(f[c]) for c in COLUMNS]
                for r in range(len(cols[0])):
                    w.writerow([arm, k, r] + [f"{c[r]:.9g}" for c in cols])


def welch(first, last):
    d = last.mean() - first.mean()
    va, vb = first.var(ddof=1) / len(first), last.var(ddof=1) / len(last)
    df = (va + vb) ** 2 / (va ** 2 / (len(first) - 1) + vb ** 2 / (len(last) - 1))
    h = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    return d, d - h, d + h


def report(path):
    rows = list(csv.DictReader(open(path)))
    arms = sorted({r["arm"] for r in rows})
    by_arm = {}
    print("| arm | own reward, rounds 1-10 | rounds 31-40 | last - first [95% CI] | s / round | external groups used / round | re-encoded | rejected |")
    print("|---|---|---|---|---|---|---|---|")
    for arm in arms:
        a = [r for r in rows if r["arm"] == arm]
        n_round = max(int(r["round"]) for r in a) + 1
        own = np.zeros((2, n_round))
        for r in a:
            own[int(r["node"]), int(r["round"])] = float(r["reward_own"])
        mean = own.mean(axis=0)  # the 2 nodes' mean each round
        by_arm[arm] = mean
        d, lo, hi = welch(mean[:10], mean[-10:])
        t = np.mean([float(r["t_round"]) for r in a])
        ext = np.mean([float(r["external_used"]) for r in a])
        reenc = sum(float(r["external_reencoded"]) for r in a)
        rej = sum(float(r["groups_rejected"]) for r in a)
        print(f"| {arm} | {mean[:10].mean():.3f} | {mean[-10:].mean():.3f} | {d:+.3f} [{lo:+.3f}, {hi:+.3f}] | "
              f"{t:.1f} | {ext:.2f} | {reenc:.0f} | {rej:.0f} |")
    for arm in arms:
        ev = sorted((int(r["round"]), int(r["node"]), float(r["eval_pass1"])) for r in rows
                    if r["arm"] == arm and r["eval_pass1"] != "nan")
        print(f"\n{arm}: held-out pass@1 (round, node, pass@1): " + ", ".join(f"({r + 1}, {k}, {v:.3f})" for r, k, v in ev))
    if len(arms) == 2:
        diff = by_arm[arms[0]] - by_arm[arms[1]]
        m = diff.mean()
        h = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / math.sqrt(len(diff))
        print(f"\npaired by round, {arms[0]} - {arms[1]}: {m:+.3f} [95% CI {m - h:+.3f}, {m + h:+.3f}] over {len(diff)} rounds")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__)
