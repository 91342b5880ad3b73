"""Builds small synthetic run directories shaped like `sapo run`'s (config.ini, node_NNNN.h5 with
the logged datasets and root attributes, DONE) with known values, for the analysis tests."""
import os
import sys

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

METRICS = ["reward_own", "reward_train", "external_used", "shortfall", "external_flat", "train_rows", "pool_size",
           "pool_eligible", "msgs_sent", "msgs_received", "msgs_dropped", "msgs_late", "msgs_rejected",
           "groups_rejected", "bytes_sent", "bytes_received", "t_generate", "t_exchange", "t_train", "t_wait",
           "t_eval", "loss", "grad_norm", "kl", "format_rate", "completion_len", "train_tokens", "eval_pass1"]
TASKS = ["base_conversion", "basic_arithmetic", "arc_1d", "bf", "propositional_logic", "fraction_simplification",
         "decimal_arithmetic", "calendar_arithmetic", "binary_matrix"]


def config_text(local, external, seed, rounds, groups=None, extra=None, nodes=None, name="synth"):
    """A resolved config in config_write's layout (origin comments, empty values, [node.K])."""
    groups = local + external if groups is None else groups
    sections = {
        "model": {"n_layer": "2", "d_model": "64", "init": f"build/warmup/synth-{local}{external}.ckpt"},
        "swarm": {"seed": str(seed), "rounds": str(rounds), "nodes": "3"},
        "sampling": {"local": str(local), "external": str(external), "groups": str(groups), "filter": "zero_adv"},
        "net": {"transport": "allgather", "latency": "0", "drop": "0"},
        "run": {"out": "", "name": name, "eval_every": "5"},
    }
    for key, value in (extra or {}).items():
        sec, k = key.split(".", 1)
        sections.setdefault(sec, {})[k] = value
    lines = ["# sapo configuration, every key resolved (loads back to these values)"]
    for sec, items in sections.items():
        lines.append(f"[{sec}]")
        for k, v in items.items():
            if v == "":
                lines += ["; command line", f"{k} ="]
            else:
                lines.append(f"{f'{k} = {v}':<32} ; experiments/synth.ini:3")
        lines.append("")
    for node, items in sorted((nodes or {}).items()):
        lines.append(f"[node.{node}]")
        lines += [f"{k} = {v}" for k, v in items.items()]
        lines.append("")
    return "\n".join(lines)


def write_run(path, reward_own, reward_train=None, local=2, external=2, seed=1, groups=None, done=True,
              expected_rounds=None, eval_rounds=(4, 9), eval_value=None, extra=None, nodes=None, rows=None,
              more=None, eval_by_task=None):
    """reward_own: (nodes, rounds). rows = {node: n} keeps only the first n rows of that node's file;
    more = {dataset: (nodes, rounds) array} adds datasets (columns newer logs have);
    eval_by_task = (nodes, rounds, 9) array writes eval_pass1_by_task (logs since the fixed
    evaluation set; older logs lack it)."""
    reward_own = np.asarray(reward_own, dtype=float)
    n_nodes, n_rounds = reward_own.shape
    reward_train = reward_own + 0.05 if reward_train is None else np.asarray(reward_train, dtype=float)
    os.makedirs(path, exist_ok=True)
    text = config_text(local, external, seed, expected_rounds or n_rounds, groups, extra, nodes,
                       name=os.path.basename(path))
    with open(os.path.join(path, "config.ini"), "w") as f:
        f.write(text)
    for k in range(n_nodes):
        n = (rows or {}).get(k, n_rounds)
        with h5py.File(os.path.join(path, f"node_{k:04d}.h5"), "w", libver="latest") as f:
            f.attrs["config"] = text
            f.attrs["rank"] = k
            f.attrs["n_nodes"] = n_nodes
            f.attrs["local"] = local
            f.attrs["external"] = external
            f.attrs["h5log_version"] = 1
            f.create_dataset("round", data=np.arange(n, dtype=np.int64), maxshape=(None,))
            for m in METRICS:
                if m == "reward_own":
                    v = reward_own[k, :n]
                elif m == "reward_train":
                    v = reward_train[k, :n]
                elif m == "eval_pass1":
                    v = np.full(n, np.nan)
                    for r in eval_rounds:
                        if r < n:
                            v[r] = 0.1 * (k + 1) if eval_value is None else eval_value
                elif m == "msgs_sent":
                    v = np.full(n, 1.0 if external else 0.0)
                elif m == "bytes_sent":
                    v = np.full(n, 1000.0 * (k + 1))
                elif m == "t_train":
                    v = np.full(n, 2.0)
                elif m == "t_generate":
                    v = np.full(n, 1.0)
                else:
                    v = np.zeros(n)
                f.create_dataset(m, data=v, maxshape=(None,))
            for m, v in (more or {}).items():
                f.create_dataset(m, data=np.asarray(v, dtype=float)[k, :n], maxshape=(None,))
            tasks = np.full((n, len(TASKS)), np.nan)
            tasks[:, 0] = 0.5
            tasks[:, 7] = 0.25 * (k % 2)
            d = f.create_dataset("reward_by_task", data=tasks, maxshape=(None, len(TASKS)))
            d.attrs["labels"] = np.array(TASKS, dtype=h5py.string_dtype())
            if eval_by_task is not None:
                d = f.create_dataset("eval_pass1_by_task", data=np.asarray(eval_by_task, dtype=float)[k, :n],
                                     maxshape=(None, len(TASKS)))
                d.attrs["labels"] = np.array(TASKS, dtype=h5py.string_dtype())
    with open(os.path.join(path, "run.log"), "w") as f:
        f.write("synthetic\n")
    if done:
        with open(os.path.join(path, "DONE"), "w") as f:
            f.write(f"completed {n_rounds} rounds on {n_nodes} nodes\n")
    return path


def standard_sweep(base):
    """2 configurations x 2 seeds x 3 nodes x 10 rounds (values in test_metrics' comments).
    4/0 (the baseline, G = 4): reward_own = s for every node and round, s = 0.1 (seed 1), 0.2 (seed 2).
    2/2: reward_own[k, t] = s + 0.1 k + 0.1 (t mod 2), s = 0.3 (seed 1), 0.4 (seed 2).
    reward_train = reward_own + 0.05 everywhere."""
    t = np.arange(10)
    paths = []
    for seed, s in ((1, 0.1), (2, 0.2)):
        paths.append(write_run(os.path.join(base, f"b40-s{seed}"), np.full((3, 10), s), local=4, external=0, seed=seed))
    for seed, s in ((1, 0.3), (2, 0.4)):
        r = np.array([[s + 0.1 * k + 0.1 * (tt % 2) for tt in t] for k in range(3)])
        paths.append(write_run(os.path.join(base, f"s22-s{seed}"), r, local=2, external=2, seed=seed))
    return paths


def table_rows(text, heading):
    """The data rows of the first table after a heading, as lists of cells."""
    part = text[text.index(heading):]
    rows = []
    for line in part.splitlines()[1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]
