"""The weights study's calibration (results/weights/README.md, 'The outer optimiser's settings:
the rule'; seed 0, the clean network, 8/0, 1000 rounds, never reported): the candidates of each
stage and the choice among them. One home for the grid: experiments/weights/calibrate.sh runs
what `grid` prints.

Usage:
  python3 -m analysis.weights_calibration grid diloco
  python3 -m analysis.weights_calibration grid noloco --diloco CHOICE_DIR/diloco.keys
  python3 -m analysis.weights_calibration choose diloco|noloco SUMMARY_DIR -o CHOICE_DIR
      [--diloco CHOICE_DIR/diloco.keys] [--last-k 5]

grid prints one candidate a line: its run name, then its sync.* keys (key=value). NoLoCo's
candidates take DiLoCo's chosen H, outer lr and momentum (--diloco), sync.group = 2 and
sync.pull in {0, 0.5}. choose reads the candidates' seed-0 summaries (NAME-8L0E-s0.npz,
analysis.summarize), writes CHOICE_DIR/STAGE-candidates.csv (name, keys, primary 1, rounds,
numerics, chosen) and CHOICE_DIR/STAGE.keys (the chosen candidate's keys, one a line), and
refuses with one line while a candidate's run is missing or incomplete.

The rule, as the plan states it: the largest primary 1 (non-specialty pass@1 over the last five
evaluations, analysis.specialists.run_values). DiLoCo: among the candidates within 0.005 of the
largest, the larger H (sync.every: fewer bytes), then the larger primary 1. NoLoCo has one H:
the larger primary 1; an exact tie goes to the candidate listed first (pull 0)."""
import argparse
import csv
import os
import sys

from .errors import AnalysisError
from .runs import load_summary
from .specialists import run_values

SPLIT, SEED, TIE = "8L0E", 0, 0.005
DILOCO = [(h, lr, mom) for h in (10, 50) for lr, mom in ((0.7, 0.9), (1.0, 0.0))]
PULLS = (0.0, 0.5)
NOLOCO_GROUP = 2


def _g(x):
    return f"{x:g}"


def diloco_grid():
    """[(name, {key: value})] of DiLoCo's four candidates."""
    return [(f"clean_diloco_H{h}_lr{_g(lr)}_m{_g(m)}",
             {"sync.method": "diloco", "sync.every": str(h), "sync.outer_lr": _g(lr), "sync.outer_momentum": _g(m)})
            for h, lr, m in DILOCO]


def read_keys(path, prefix="sync."):
    """{key: value} of a .keys file (KEY=VALUE a line, every KEY starting with prefix)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read ({e.strerror})") from None
    out = {}
    for i, ln in enumerate(lines, 1):
        key, eq, value = ln.partition("=")
        if not eq or not key.startswith(prefix) or not value:
            raise AnalysisError(f"{path}:{i}: {ln!r}: expected {prefix}KEY=VALUE")
        out[key] = value
    return out


def noloco_grid(diloco_keys):
    """[(name, {key: value})] of NoLoCo's candidates on DiLoCo's chosen settings."""
    need = ("sync.every", "sync.outer_lr", "sync.outer_momentum")
    missing = [k for k in need if k not in diloco_keys]
    if missing:
        raise AnalysisError(f"DiLoCo's choice has no {', '.join(missing)}")
    base = {k: diloco_keys[k] for k in need}
    return [(f"clean_noloco_pull{_g(p)}", {"sync.method": "noloco", **base, "sync.group": str(NOLOCO_GROUP),
                                           "sync.pull": _g(p)}) for p in PULLS]


def grid(stage, diloco_keys_path=None):
    if stage == "diloco":
        return diloco_grid()
    if not diloco_keys_path:
        raise AnalysisError("grid noloco needs --diloco (DiLoCo's chosen keys, from choose diloco)")
    return noloco_grid(read_keys(diloco_keys_path))


def primaries(summary_dir, candidates, last_k):
    """[(name, keys, primary 1, rounds, numerics)] of the candidates' seed-0 runs; an
    AnalysisError naming the first that is missing or incomplete."""
    out = []
    for name, keys in candidates:
        path = os.path.join(summary_dir, f"{name}-{SPLIT}-s{SEED}.npz")
        if not os.path.exists(path):
            raise AnalysisError(f"{path}: missing (calibration incomplete: run experiments/weights/calibrate.sh)")
        run = load_summary(path)
        if not run.complete:
            raise AnalysisError(f"{path}: incomplete ({run.n_rounds} of {run.expected_rounds} rounds)")
        for key, want in keys.items():
            got = run.config.differs(key, want)
            if got is not None:
                raise AnalysisError(f"{path}: {key} = {got}, the candidate {name} sets {want}")
        v = run_values(run, "spec_" + name, last_k)
        if v["notes"] and v["nonspec"] != v["nonspec"]:
            raise AnalysisError(f"{path}: no non-specialty pass@1 ({'; '.join(v['notes'])})")
        out.append((name, keys, v["nonspec"], run.n_rounds, run.numerics))
    if len({c[4] for c in out}) > 1:
        raise AnalysisError(f"{summary_dir}: the candidates' runs have more than one numerics version")
    return out


def choose(stage, rows):
    """The chosen row of primaries() under the stage's rule."""
    top = max(r[2] for r in rows)
    if stage == "diloco":
        near = [r for r in rows if r[2] >= top - TIE]
        return max(near, key=lambda r: (int(r[1]["sync.every"]), r[2]))
    return next(r for r in rows if r[2] == top)


def write_choice(stage, rows, chosen, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{stage}-candidates.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "keys", "primary1", "rounds", "numerics", "chosen"])
        for r in rows:
            w.writerow([r[0], " ".join(f"{k}={v}" for k, v in r[1].items()), f"{r[2]:.6f}", r[3], r[4],
                        "yes" if r is chosen else ""])
    with open(os.path.join(out_dir, f"{stage}.keys"), "w") as f:
        f.write("".join(f"{k}={v}\n" for k, v in chosen[1].items()))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m analysis.weights_calibration", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grid", help="print the stage's candidates: NAME key=value ...")
    g.add_argument("stage", choices=("diloco", "noloco"))
    g.add_argument("--diloco", help="DiLoCo's chosen keys (CHOICE_DIR/diloco.keys), for noloco")
    c = sub.add_parser("choose", help="read the candidates' summaries, write STAGE-candidates.csv and STAGE.keys")
    c.add_argument("stage", choices=("diloco", "noloco"))
    c.add_argument("summary_dir")
    c.add_argument("-o", "--out", required=True)
    c.add_argument("--diloco", help="DiLoCo's chosen keys (CHOICE_DIR/diloco.keys), for noloco")
    c.add_argument("--last-k", type=int, default=5)
    a = ap.parse_args(argv)
    try:
        cands = grid(a.stage, a.diloco)
        if a.cmd == "grid":
            for name, keys in cands:
                print(name, *(f"{k}={v}" for k, v in keys.items()))
            return 0
        rows = primaries(a.summary_dir, cands, a.last_k)
        chosen = choose(a.stage, rows)
        write_choice(a.stage, rows, chosen, a.out)
        print(f"{a.stage}: chose {chosen[0]} (primary 1 {chosen[2]:.4f}) of {len(rows)} candidates; "
              f"{os.path.join(a.out, a.stage + '.keys')}")
    except AnalysisError as e:
        print(f"analysis.weights_calibration: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
