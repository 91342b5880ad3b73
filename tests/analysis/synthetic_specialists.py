"""Synthetic summaries of the specialist study (ARM-SPLIT-sSEED.npz, written with analysis.summarize's
own summary_arrays) whose numbers can be checked by hand, for test_specialists.py.

Every run: 8 nodes, 30 rounds, run.eval_first and an evaluation every 5 rounds: rows 0 (before
any step), 4, 9, ..., 29, i.e. after j = 0..6 x 5 rounds of training (evaluation j). Spec arms:
node k's specialty is TASKS[k % 4] (node.K.run.specialty). The evaluation's labels hold a fifth
task never asked (bf, NaN) and put calendar_arithmetic before fraction_simplification.

pass@1 of a spec node at evaluation j:
  its specialty:   0.2 + 0.002 s at j = 0; 0.2 + 0.002 s + F(arm) after
  its other tasks: x - 0.002, x, x + 0.002 (in TASKS order): their mean is x, with
                   x = 0.005 at j = 0, x = 0.02 j + 0.003 s + E(arm, split, s) after
so the non-specialty pass@1 over the last 5 evaluations (j = 2..6) is 0.08 + 0.003 s + E and the
specialty's 0.2 + 0.002 s + F. E: spec_silo 8/0 0, spec_silo 4/0 -0.05 (its nodes never reach half the
specialists' level), spec_ratio1 0.03 + 0.002 (s - 3.5), spec_positive_only 0.02 + 0.002 (s - 3.5),
spec_tis 0.004 (-1)^s, spec_ftis 0.01 + 0.001 (s - 3.5). F: spec_ratio1 -0.01, others 0.
Half the specialists' level: 0.1 + 0.001 s; spec_silo 8/0's nodes reach it at j = 5 (25 rounds).
Generalists (no specialty): every task 0.1 + 0.003 s + G(arm), G: gen_ratio1 0.02 + 0.001 (s - 3.5),
others 0.
Own reward: every node and round c = 0.05 + 0.001 s + D(arm), D: spec_ratio1 0.01 + 0.0005 (s - 3.5),
gen_ratio1 0.005, others 0; cumulative 8 x 30 x c = 240 c.
Diagnostics: offpolicy_weight 0.8 and offpolicy_capped 0.05 (tis, ftis), offpolicy_dropped 0.2 (ftis),
grad_norm 0.5 then 1.0 from round 15, format_rate 0.9, train_in_eval 0.
"""
import os

import numpy as np

from synthetic_runs import config_text
from analysis.config import config_parse
from analysis.runs import Run
from analysis.specialists import ARMS, TASKS
from analysis.summarize import summary_arrays

SEEDS = (1, 2, 3, 4, 5, 6)
NODES, ROUNDS, EVERY = 8, 30, 5
EVAL_ROWS = [0] + [r for r in range(ROUNDS) if (r + 1) % EVERY == 0]  # 0, 4, 9, ..., 29
LABELS = ["base_conversion", "basic_arithmetic", "bf", "calendar_arithmetic", "fraction_simplification"]
SPLITS = {"8L0E": (8, 0), "4L0E": (4, 0), "4L4E": (4, 4)}


def E(arm, split, s):
    return {("spec_silo", "8L0E"): 0.0, ("spec_silo", "4L0E"): -0.05, ("spec_ratio1", "4L4E"): 0.03 + 0.002 * (s - 3.5),
            ("spec_positive_only", "4L4E"): 0.02 + 0.002 * (s - 3.5), ("spec_tis", "4L4E"): 0.004 * (-1) ** s,
            ("spec_ftis", "4L4E"): 0.01 + 0.001 * (s - 3.5)}.get((arm, split), 0.0)


def F(arm):
    return -0.01 if arm == "spec_ratio1" else 0.0


def G(arm, s):
    return 0.02 + 0.001 * (s - 3.5) if arm == "gen_ratio1" else 0.0


def D(arm, s):
    return {"spec_ratio1": 0.01 + 0.0005 * (s - 3.5), "gen_ratio1": 0.005}.get(arm, 0.0)


def pass_table(arm, split, s, e=None, node_e=None):
    """(nodes, rounds, labels) pass@1, NaN outside the evaluations and for bf. e: E's value in
    place of E(arm, split, s); node_e: {node: a further shift of its non-specialty pass@1}."""
    out = np.full((NODES, ROUNDS, len(LABELS)), np.nan)
    for j, row in enumerate(EVAL_ROWS):
        for k in range(NODES):
            if arm.startswith("gen_"):
                vals = {t: 0.1 + 0.003 * s + G(arm, s) for t in TASKS}
            else:
                spec = TASKS[k % 4]
                x = 0.005 if j == 0 else (0.02 * j + 0.003 * s + (E(arm, split, s) if e is None else e) +
                                               (node_e or {}).get(k, 0.0))
                others = [t for t in TASKS if t != spec]
                vals = {t: x + d for t, d in zip(others, (-0.002, 0.0, 0.002))}
                vals[spec] = 0.2 + 0.002 * s + (F(arm) if j else 0.0)
            for t, v in vals.items():
                out[k, row, LABELS.index(t)] = v
    return out


def write_summary(path, arm, split, seed, numerics=2, done=True, e=None, d=None, node_e=None, columns=None,
                  config=None):
    """One summary; e, d, node_e: E's and D's values in place of the arm's and per-node shifts of
    the non-specialty pass@1 (pass_table); columns: further or other node-mean columns per round;
    config: further or other config keys."""
    local, external = SPLITS[split]
    nodes = {} if arm.startswith("gen_") else {k: {"run.specialty": TASKS[k % 4]} for k in range(NODES)}
    extra = {"run.eval_first": "true", "run.eval_every": str(EVERY), "grpo.completions": "8"}
    for key, value in (config or {}).items():  # node.K.KEY: node K's override
        if key.startswith("node."):
            _, k, rest = key.split(".", 2)
            nodes.setdefault(int(k), {})[rest] = value
        else:
            extra[key] = value
    text = config_text(local, external, seed, ROUNDS, extra=extra,
                       nodes=nodes, name=f"{arm}-{split}-s{seed}")
    own = np.full((NODES, ROUNDS), 0.05 + 0.001 * seed + (D(arm, seed) if d is None else d))
    ev = pass_table(arm, split, seed, e, node_e)
    ev1 = np.full((NODES, ROUNDS), np.nan)  # the overall pass@1 (not what the study reads)
    ev1[:, EVAL_ROWS] = np.nanmean(ev[:, EVAL_ROWS], axis=2)
    t = np.arange(ROUNDS)
    weighted = arm.endswith("_tis") or arm.endswith("_ftis")
    nm = {"reward_own": own.mean(axis=0), "reward_train": own.mean(axis=0), "eval_pass1": ev1.mean(axis=0),
          "grad_norm": np.where(t < 15, 0.5, 1.0), "format_rate": np.full(ROUNDS, 0.9),
          "train_in_eval": np.zeros(ROUNDS),
          "offpolicy_weight": np.full(ROUNDS, 0.8 if weighted else np.nan),
          "offpolicy_capped": np.full(ROUNDS, 0.05 if weighted else np.nan),
          "offpolicy_dropped": np.full(ROUNDS, 0.2 if arm.endswith("_ftis") else np.nan)}
    nm.update(columns or {})
    eval_mean = ev.mean(axis=0)  # every node evaluates the same rounds and tasks
    run = Run(f"results/runs/specialists/{arm}-{split}-s{seed}", "hdf5", f"{arm}-{split}-s{seed}", config_parse(text),
              NODES, t.astype(np.int64), {"reward_own": own, "reward_train": own, "eval_pass1": ev1, "eval_by_task": ev},
              nm, list(TASKS), np.full((ROUNDS, 4), 0.05), ROUNDS if done else ROUNDS + 10, done, [], LABELS, eval_mean,
              numerics)
    np.savez_compressed(path, **summary_arrays(run))
    return path


def write_study(folder, skip=(), numerics=None, incomplete=()):
    """Every arm, split and seed; skip: names like 'spec_silo-8L0E-s6' not written; numerics:
    {name: version} for runs written with another numerics version than 2; incomplete: names
    written without DONE (and 10 rounds short)."""
    os.makedirs(folder, exist_ok=True)
    for arm, splits in ARMS.items():
        for split in splits:
            for seed in SEEDS:
                name = f"{arm}-{split}-s{seed}"
                if name not in skip:
                    write_summary(os.path.join(folder, name + ".npz"), arm, split, seed, (numerics or {}).get(name, 2),
                                  done=name not in incomplete)
    return folder
