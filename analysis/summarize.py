"""Small per-run summaries that a report can be regenerated from without the raw HDF5.

Usage:
  python3 -m analysis.summarize RUN_DIR|FOLDER... -o DIR

Writes DIR/<run name>.npz (numpy, compressed, no pickles) per run holding: the resolved config
text, seed, node count, DONE, the numerics version (RUN_DIR/NUMERICS), the OpenBLAS kernel of the node logs, the configured and logged rounds, the loader's warnings; per node
and round reward_own, reward_train and eval_pass1 (float64, so cumulative sums match the HDF5
exactly); the mean over nodes per round of every other logged metric; the node mean per round
of reward_by_task (task_mean) and, for runs that log it, of eval_pass1_by_task (eval_by_task:
pass@1 per task on the fixed held-out set, NaN where no evaluation ran, with eval_by_task_labels;
what analysis.minipaper reads) and the same per node (node/eval_by_task, nodes x rounds x
tasks), beside each node's specialty (run.specialty; "" unset), and for logs with weights_digest
mean/weights_distinct: per round the number of distinct weight digests among the nodes, and
mean/shortfall_share: per round the share of nodes that trained with fewer than J external groups. Read them back with `python3 -m analysis.report DIR/*.npz -o OUT`.
Also DIR/<run name>.csv: round, mean/min/max over nodes of reward_own, reward_train and
eval_pass1, for reading without Python."""
import argparse
import os
import sys

import numpy as np

from .errors import AnalysisError
from .runs import PER_NODE_METRICS, SUMMARY_FORMAT, expand_inputs, load_any


def summary_arrays(run):
    d = {
        "format": np.array(SUMMARY_FORMAT),
        "name": np.array(run.name),
        "source": np.array(run.source),
        "config": np.array(run.config.text),
        "n_nodes": np.array(run.n_nodes),
        "expected_rounds": np.array(run.expected_rounds),
        "done": np.array(run.done),
        "numerics": np.array(run.numerics),
        "blas_kernel": np.array(run.blas_kernel),
        "warnings": np.array(run.warnings if run.warnings else [], dtype=str),
        "round": run.rounds.astype(np.int64),
        "task_labels": np.array(run.task_labels, dtype=str),
        "task_mean": run.task_mean,
    }
    if run.eval_task_labels:  # logs from before the fixed evaluation set have none: no entry
        d["eval_by_task"] = run.eval_task_mean
        d["eval_by_task_labels"] = np.array(run.eval_task_labels, dtype=str)
        if "eval_by_task" in run.per_node:  # per node and task, what a specialist study reads
            d["node/eval_by_task"] = run.per_node["eval_by_task"]
    d["specialty"] = np.array(run.specialty, dtype=str)
    for m in PER_NODE_METRICS:
        d[f"node/{m}"] = run.per_node[m]
    for m, v in run.node_mean.items():
        d[f"mean/{m}"] = v
    if "weights_digest" in run.per_node:  # a mean of digests means nothing; how many differ does
        d["mean/weights_distinct"] = weights_distinct(run.per_node["weights_digest"])
    if "shortfall" in run.per_node:  # a count per node; the mean over nodes hides how many went short
        d["mean/shortfall_share"] = shortfall_share(run.per_node["shortfall"])
    return d


def shortfall_share(shortfall):
    """Per round, the share of nodes (of those that log a value) whose pool gave fewer than J
    external groups (shortfall > 0); NaN where no node logs one."""
    a = np.asarray(shortfall, dtype=np.float64)
    logged = np.isfinite(a)
    n = logged.sum(axis=0)
    short = (logged & (np.nan_to_num(a) > 0)).sum(axis=0)
    return np.where(n > 0, short / np.maximum(n, 1), np.nan)


def weights_distinct(digests):
    """Per round, the number of distinct weights_digest values among the nodes (1: every node
    holds the same weights)."""
    a = np.asarray(digests)
    return np.array([len(set(a[:, r].tolist())) for r in range(a.shape[1])], dtype=np.float64)


def _stats(a):
    """mean, min, max over nodes per round; NaN where no node has a value."""
    a = np.asarray(a, dtype=float)
    has = ~np.all(np.isnan(a), axis=0)
    mean = np.full(a.shape[1], np.nan)
    lo = np.full(a.shape[1], np.nan)
    hi = np.full(a.shape[1], np.nan)
    if has.any():
        sub = a[:, has]
        mean[has] = np.nanmean(sub, axis=0)
        lo[has] = np.nanmin(sub, axis=0)
        hi[has] = np.nanmax(sub, axis=0)
    return mean, lo, hi


def write_csv(run, path):
    cols = ["round"]
    data = [run.rounds.astype(float)]
    for m in PER_NODE_METRICS:
        mean, lo, hi = _stats(run.per_node[m])
        cols += [f"{m}_mean", f"{m}_min", f"{m}_max"]
        data += [mean, lo, hi]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {run.name}: {run.n_nodes} nodes, seed {run.seed}; mean/min/max over nodes per round\n")
        f.write(",".join(cols) + "\n")
        for i in range(run.n_rounds):
            f.write(",".join([str(int(data[0][i]))] + ["" if np.isnan(c[i]) else repr(float(c[i])) for c in data[1:]])
                    + "\n")


def summarize(inputs, out_dir, log=None):
    """Write one .npz and one .csv per run directory; returns the .npz paths."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for path in expand_inputs(inputs):
        if os.path.isfile(path):
            raise AnalysisError(f"{path}: already a summary; summarize reads run directories")
        run = load_any(path)
        for w in run.warnings:
            log(f"warning: {w}")
        stem = os.path.join(out_dir, run.name)
        if stem + ".npz" in written:
            raise AnalysisError(f"{path}: a run named {run.name} was already summarized into {out_dir}")
        np.savez_compressed(stem + ".npz", **summary_arrays(run))
        write_csv(run, stem + ".csv")
        written.append(stem + ".npz")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m analysis.summarize", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("inputs", nargs="+", metavar="RUN_DIR|FOLDER")
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="where the .npz and .csv summaries go")
    args = ap.parse_args(argv)
    try:
        for p in summarize(args.inputs, args.out):
            print(f"wrote {p}")
    except AnalysisError as e:
        print(f"analysis.summarize: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
