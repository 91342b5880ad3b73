"""`sapo bench swarm`: where a swarm round's time goes, and what stragglers cost.

1. 8 ranks, virtual clock, p2p and all-gather: per-round time split (generate, exchange,
   train, wait) averaged over nodes and timed rounds (warm-up rounds untimed), and the
   exchange overhead as a share of the round.
2. Wall clock, a quarter of the nodes slowed 4x (net.slowdown=4): the fast nodes' round rate
   next to their rate when nobody is slow, for p2p (nobody waits) and all-gather (everyone
   waits for the slowest).
All runs happen in this one invocation, so the ratios compare like with like.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
MODEL = ["model.n_layer=2", "model.d_model=64", "model.n_head=4", "model.n_ctx=256", "gen.max_new_tokens=32",
         "tasks.preset=tiny", "sampling.groups=4", "sampling.local=2", "sampling.external=2", "grpo.completions=8",
         "sampling.filter=none", "run.eval_every=0", "run.checkpoint_every=0",
         "tasks.max_unanswerable=1"]  # a timing benchmark: arc_1d's answers need not fit in 32 bytes


def run_swarm(sapo, ranks, rounds, extra, out):
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), sapo, "run", f"swarm.rounds={rounds}",
           "--out", out, "--quiet"] + MODEL + extra
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench swarm: {' '.join(cmd)} failed:\n{p.stderr}")


def columns(out, ranks, names, skip):
    data = {n: [] for n in names}
    for k in range(ranks):
        with h5py.File(os.path.join(out, f"node_{k:04d}.h5"), "r", swmr=True) as f:
            n = len(f["round"])
            for name in names:
                data[name].append(np.array(f[name][skip:n]))
    return {n: np.array(v) for n, v in data.items()}  # (nodes, rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sapo", required=True)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2, help="untimed rounds at the start")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sapo_bench_swarm_")
    print(f"# sapo bench swarm: {a.ranks} ranks on {os.cpu_count()} cores, {a.rounds} rounds ({a.warmup} untimed), "
          f"model L2 C64, 4 groups x 8 completions; runs under {tmp}")
    print("#\n# 1. time split per round (virtual clock), mean over nodes and timed rounds, seconds")
    print(f"# {'transport':10s} {'generate':>9s} {'exchange':>9s} {'train':>9s} {'wait':>9s} {'round':>9s} "
          f"{'exch/round':>11s} {'wait/round':>11s}")
    names = ["t_generate", "t_exchange", "t_train", "t_wait", "t_round"]
    for transport in ("p2p", "allgather"):
        out = os.path.join(tmp, f"virtual-{transport}")
        run_swarm(a.sapo, a.ranks, a.rounds, [f"net.transport={transport}"], out)
        c = columns(out, a.ranks, names, a.warmup)
        m = {n: float(c[n].mean()) for n in names}
        print(f"  {transport:10s} {m['t_generate']:9.3f} {m['t_exchange']:9.4f} {m['t_train']:9.3f} {m['t_wait']:9.3f} "
              f"{m['t_round']:9.3f} {100 * m['t_exchange'] / m['t_round']:10.2f}% {100 * m['t_wait'] / m['t_round']:10.1f}%")
    slow = max(1, a.ranks // 4)
    slow_args = [f"node.{k}.net.slowdown=4" for k in range(slow)]
    print(f"#\n# 2. wall clock: nodes 0..{slow - 1} slowed 4x; round rate of the {a.ranks - slow} fast nodes (rounds/s)")
    print(f"# {'transport':10s} {'alone':>9s} {'with slow':>10s} {'ratio':>7s}")
    for transport in ("p2p", "allgather"):
        rates = []
        for label, extra in (("alone", []), ("slow", slow_args)):
            out = os.path.join(tmp, f"wall-{transport}-{label}")
            run_swarm(a.sapo, a.ranks, a.rounds, [f"net.transport={transport}", "net.clock=wall"] + extra, out)
            c = columns(out, a.ranks, ["t_round"], a.warmup)
            fast = c["t_round"][slow:]
            rates.append(float(fast.shape[1] / fast.sum(axis=1).mean()))
        print(f"  {transport:10s} {rates[0]:9.3f} {rates[1]:10.3f} {rates[1] / rates[0]:7.2f}")
    print("# exch/round: encode + send/receive + decode + verify, as a share of the round (target < 2%);\n"
          "# wait: blocked on peers. ratio: fast nodes' rate with stragglers / without (1.0 = unaffected).")


if __name__ == "__main__":
    main()
