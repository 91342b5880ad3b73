"""Synthetic mini-paper summaries (ARM-SPLIT-sSEED.npz, written with analysis.summarize's own
summary_arrays) with values that can be checked by hand, for test_minipaper.py.

Every run: 2 nodes, 10 rounds, evaluations at rounds 4 and 9, grpo.completions = 8.
reward_own[k, t] = c + amp * S[t] + (-1)^k * spread, with S summing to 0 over the 10 rounds and
the node offsets cancelling, so the cumulative own reward is exactly 2 x 10 x c = 20 c.
amp = 0.01 J and spread = 0.02 J (J external groups), so oscillation and band grow with J.
reward_train = reward_own + 0.1 where J > 0 (cumulative +2), = reward_own where J = 0.

c (so the cumulative own reward 20 c) per arm, split and seed s:
  paper      8L0E 0.1 s      -> 2, 4, 6
             6L2E 0.1 s + 0.05 (s + 1)  -> 4, 7, 10     (vs 8/0: 2, 3, 4)
             4L4E 0.15 s     -> 3, 6, 9      (vs 8/0: 1, 2, 3; vs 4/0: 3, 4, 5)
             2L6E 0.1 s + 0.05 (s - 2)  -> 1, 4, 7      (vs 8/0: -1, 0, 1)
             4L0E 0.1 (s - 1)  -> 0, 2, 4
  offpolicy  the same, plus 0.1 on the sharing splits (cumulative +2 each seed)
pass@1 (node mean; nodes at v -/+ 0.01): round 4 v - 0.1, round 9 v, v = 0.3 + 0.02 J + 0.01 s.
"""
import os

import numpy as np

from synthetic_runs import config_text
from analysis.config import config_parse
from analysis.runs import Run
from analysis.summarize import summary_arrays

ARMS = ("paper", "offpolicy")
SPLITS = {"8L0E": (8, 0), "6L2E": (6, 2), "4L4E": (4, 4), "2L6E": (2, 6), "4L0E": (4, 0)}
SEEDS = (1, 2, 3)
NODES, ROUNDS = 2, 10
S = np.array([0, 1, 2, 1, 0, -1, -2, -1, 0, 0], dtype=float)
EVAL_ROUNDS = (4, 9)


def level(arm, split, seed):
    c = {"8L0E": 0.1 * seed, "6L2E": 0.1 * seed + 0.05 * (seed + 1), "4L4E": 0.15 * seed,
         "2L6E": 0.1 * seed + 0.05 * (seed - 2), "4L0E": 0.1 * (seed - 1)}[split]
    if arm == "offpolicy" and SPLITS[split][1] > 0:
        c += 0.1
    return c


def write_summary(path, arm, split, seed, done=True, logged=ROUNDS, expected=ROUNDS, eval_by_task=False):
    local, external = SPLITS[split]
    c = level(arm, split, seed)
    t = np.arange(logged)
    own = np.array([c + 0.01 * external * S[t] + (-1) ** k * 0.02 * external for k in range(NODES)])
    train = own + (0.1 if external else 0.0)
    v = 0.3 + 0.02 * external + 0.01 * seed
    ev = np.full((NODES, logged), np.nan)
    for r, val in zip(EVAL_ROUNDS, (v - 0.1, v)):
        if r < logged:
            ev[:, r] = [val - 0.01, val + 0.01]
    text = config_text(local, external, seed, expected, extra={"grpo.completions": "8"},
                       name=f"{arm}-{split}-s{seed}")
    node_mean = {"reward_own": own.mean(axis=0), "reward_train": train.mean(axis=0),
                 "eval_pass1": ev.mean(axis=0),
                 "external_used": np.full(logged, float(external)), "t_train": np.full(logged, 2.0)}
    run = Run(f"results/runs/{arm}-{split}-s{seed}", "hdf5", f"{arm}-{split}-s{seed}", config_parse(text), NODES,
              t.astype(np.int64), {"reward_own": own, "reward_train": train, "eval_pass1": ev}, node_mean,
              ["base_conversion", "bf"], np.full((logged, 2), 0.5), expected, done, [])
    arrays = summary_arrays(run)
    if eval_by_task:
        table = np.full((logged, 2), np.nan)
        for r in EVAL_ROUNDS:
            if r < logged:
                table[r] = [v + 0.1, v - 0.1]
        arrays["eval_by_task"] = table
        arrays["eval_by_task_labels"] = np.array(["fixed_a", "fixed_b"])
    np.savez_compressed(path, **arrays)
    return path


def write_study(folder, skip=(), incomplete=(), eval_by_task=False):
    """All 2 arms x 5 splits x 3 seeds; skip = names like 'offpolicy-8L0E-s2' not written;
    incomplete = names written with 6 of 10 rounds and no DONE."""
    os.makedirs(folder, exist_ok=True)
    for arm in ARMS:
        for split in SPLITS:
            for seed in SEEDS:
                name = f"{arm}-{split}-s{seed}"
                if name in skip:
                    continue
                kw = dict(done=False, logged=6) if name in incomplete else {}
                write_summary(os.path.join(folder, name + ".npz"), arm, split, seed, eval_by_task=eval_by_task, **kw)
    return folder
