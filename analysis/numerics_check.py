"""The study-level check of a change of numerics (docs/PERFORMANCE.md, 'A change of numerics'):
the same swarms run by an old and a new sapo binary, paired by seed; the change passes when the
paired difference of mean own reward (new - old, per agent-round) has a 95% Student-t interval
that contains 0 and a mean of magnitude below the margin (0.01).

Usage:
  python3 -m analysis.numerics_check OLD_RUN_DIR... --new NEW_RUN_DIR... [--margin 0.01]

The i-th old run pairs with the i-th new run (the same seed and config; checked). Prints one
line per pair, the interval, the exact sign-flip p and the verdict; exit 0 on PASS, 1 on FAIL,
2 on bad input (one line naming the run directory and what is wrong)."""
import argparse
import json
import os
import re
import sys

import numpy as np
from .paired import signflip_p, t975

MARGIN = 0.01


class CheckError(Exception):
    pass


def run_reward(run_dir):
    """(mean own reward per agent-round, seed, numerics version) of a finished run directory."""
    path = os.path.join(run_dir, "summary.json")
    if not os.path.exists(os.path.join(run_dir, "DONE")):
        raise CheckError(f"{run_dir}: not a finished run (no DONE)")
    try:
        with open(path) as f:
            s = json.load(f)
        own, nodes, rounds = float(s["cum_reward_own"]), int(s["nodes"]), int(s["rounds"])
    except (OSError, ValueError, KeyError) as e:
        raise CheckError(f"{path}: expected sapo's summary.json with cum_reward_own, nodes, rounds ({e})")
    if nodes < 1 or rounds < 1:
        raise CheckError(f"{path}: nodes and rounds must be >= 1")
    seed = None
    try:
        with open(os.path.join(run_dir, "config.ini")) as f:
            m = re.search(r"^\[swarm\][^\[]*?^seed\s*=\s*(\d+)", f.read(), re.M | re.S)
            seed = int(m.group(1)) if m else None
    except OSError:
        pass
    return own / (nodes * rounds), seed, s.get("numerics_version", 1)


def paired_verdict(old, new, margin=MARGIN):
    """The check on paired per-seed values: a dict with the differences, their mean, the
    Student-t interval (lo, hi), the sign-flip p and passed (interval holds 0 and |mean| <
    margin). At least two pairs; identical values give the interval (0, 0)."""
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    if old.shape != new.shape or old.ndim != 1 or len(old) < 2:
        raise CheckError(f"need two or more pairs of runs, got {len(old)} old and {len(new)} new")
    d = new - old
    mean = float(d.mean())
    half = float(t975(len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    lo, hi = mean - half, mean + half
    return {"diff": d, "mean": mean, "lo": lo, "hi": hi, "p_sign_flip": signflip_p(d),
            "passed": bool(lo <= 0.0 <= hi and abs(mean) < margin), "margin": margin}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m analysis.numerics_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("old", nargs="+", help="the old binary's run directories, one per seed")
    ap.add_argument("--new", nargs="+", required=True, help="the new binary's, in the same order")
    ap.add_argument("--margin", type=float, default=MARGIN, help="the largest |mean difference| that passes")
    a = ap.parse_args(argv)
    try:
        if len(a.old) != len(a.new):
            raise CheckError(f"{len(a.old)} old run directories but {len(a.new)} new ones: they pair one to one")
        olds = [run_reward(d) for d in a.old]
        news = [run_reward(d) for d in a.new]
        for d_old, d_new, o, n in zip(a.old, a.new, olds, news):
            if o[1] != n[1]:
                raise CheckError(f"{d_new}: seed {n[1]}, but its pair {d_old} has seed {o[1]}")
        v = paired_verdict([o[0] for o in olds], [n[0] for n in news], a.margin)
    except CheckError as e:
        print(f"numerics_check: {e}", file=sys.stderr)
        return 2
    print(f"# mean own reward per agent-round; old numerics {sorted({o[2] for o in olds})}, "
          f"new numerics {sorted({n[2] for n in news})}")
    print(f"{'seed':>6} {'old':>9} {'new':>9} {'new-old':>10}")
    for o, n, d in zip(olds, news, v["diff"]):
        print(f"{o[1]!s:>6} {o[0]:9.5f} {n[0]:9.5f} {d:+10.5f}")
    print(f"paired difference {v['mean']:+.5f}, 95% CI [{v['lo']:+.5f}, {v['hi']:+.5f}], "
          f"exact sign-flip p {v['p_sign_flip']:.3f}, n = {len(v['diff'])}")
    print(f"{'PASS' if v['passed'] else 'FAIL'}: the interval {'contains' if v['lo'] <= 0 <= v['hi'] else 'excludes'} 0 "
          f"and |difference| {abs(v['mean']):.5f} is {'below' if abs(v['mean']) < v['margin'] else 'not below'} "
          f"{v['margin']}")
    return 0 if v["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
