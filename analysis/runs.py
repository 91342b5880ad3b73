"""Load one run into a Run: from a run directory (node_NNNN.h5 per node, written in SWMR mode,
so a crashed or still-running run is readable too) or from a summary .npz written by
analysis.summarize. Both give the same arrays for what the report uses, so a report made from
committed summaries matches one made from the raw HDF5.

Complete rows: a node's complete rows are the minimum length over its datasets (the writer
appends one row per dataset per round, /round first); the run's are the minimum over nodes.
A missing DONE file or a short node file gives a warning and the complete rows are used;
a missing or unreadable node file, or no complete round at all, is an AnalysisError naming
the file."""
import json
import os
import re

import numpy as np

from .config import config_parse
from .errors import AnalysisError

# Kept per node in a summary (Figure 1 and the per-node bands need them); every other metric
# is kept as its mean over nodes per round.
PER_NODE_METRICS = ("reward_own", "reward_train", "eval_pass1")
SUMMARY_FORMAT = "sapo-analysis-summary-1"
NODE_FILE = re.compile(r"^node_(\d{4,})\.h5$")


class Run:
    """One run. per_node[m] is (nodes, rounds) for PER_NODE_METRICS (all metrics when loaded
    from HDF5); node_mean[m] is (rounds,) for every logged metric; task_mean is (rounds, tasks),
    the mean over nodes of reward_by_task (NaN where no node was asked the task);
    eval_task_mean is (rounds, eval tasks), the mean over nodes of eval_pass1_by_task, pass@1
    per task on the fixed held-out set (NaN where no evaluation ran or the task is not asked;
    (rounds, 0) for runs logged before the dataset existed)."""

    def __init__(self, source, kind, name, config, n_nodes, rounds, per_node, node_mean,
                 task_labels, task_mean, expected_rounds, done, warnings_, eval_task_labels=None,
                 eval_task_mean=None, numerics=1, blas_kernel=""):
        self.source = source
        self.kind = kind  # "hdf5" or "summary"
        self.name = name
        self.config = config
        self.n_nodes = n_nodes
        self.rounds = rounds
        self.per_node = per_node
        self.node_mean = node_mean
        self.task_labels = task_labels
        self.task_mean = task_mean
        self.eval_task_labels = list(eval_task_labels or [])
        self.eval_task_mean = (np.zeros((len(rounds), 0)) if eval_task_mean is None
                               else np.asarray(eval_task_mean, dtype=np.float64))
        self.expected_rounds = expected_rounds
        self.done = done
        self.warnings = warnings_
        self.numerics = numerics  # the numerics version of the sapo that made it (RUN_DIR/NUMERICS; 1 before it)
        # OpenBLAS's sgemm kernel on the nodes (root attribute blas_kernel; several joined by "+",
        # "" where the logs or the summary predate it): the same binary gives other bits on another
        self.blas_kernel = blas_kernel
        # what each node was made to know (run.specialty, [node.K] of the config); "" unset
        self.specialty = [str(config.node_get(k, "run.specialty", "") or "") for k in range(n_nodes)]

    @property
    def n_rounds(self):
        return len(self.rounds)

    @property
    def seed(self):
        return self.config.get("swarm.seed", "?")

    @property
    def complete(self):
        return self.done and self.n_rounds == self.expected_rounds

    def truncated(self, n):
        """The first n rounds only (for comparing runs of different lengths)."""
        if n >= self.n_rounds:
            return self
        cut = {k: v[:, :n] for k, v in self.per_node.items()}
        mean = {k: v[:n] for k, v in self.node_mean.items()}
        return Run(self.source, self.kind, self.name, self.config, self.n_nodes, self.rounds[:n], cut, mean,
                   self.task_labels, self.task_mean[:n], self.expected_rounds, self.done, list(self.warnings),
                   self.eval_task_labels, self.eval_task_mean[:n], self.numerics, self.blas_kernel)


def nanmean_rows(a, axis=0):
    """Mean over axis ignoring NaN; NaN (no warning) where every value is NaN."""
    a = np.asarray(a, dtype=float)
    count = np.sum(~np.isnan(a), axis=axis)
    total = np.nansum(a, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _labels(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


EVAL_BY_TASK = "eval_pass1_by_task"


def _by_task(f, name, n):
    """A (rounds, tasks) dataset and its labels, complete rows only; None when absent."""
    if name not in f:
        return None
    return np.asarray(f[name][:n], dtype=np.float64), _labels(f[name].attrs.get("labels", []))


def _read_node(path, h5py):
    """(datasets {name: array}, reward_by_task, labels, attrs, complete rows, longest dataset,
    eval_pass1_by_task (array, labels) or None) of one node file, complete rows only."""
    try:
        f = h5py.File(path, "r", swmr=True)
    except (OSError, ValueError) as e:
        try:  # an HDF5 file written without SWMR (e.g. by hand): readable, just not while written
            f = h5py.File(path, "r")
        except (OSError, ValueError):
            raise AnalysisError(f"{path}: cannot open as an HDF5 node log ({str(e).splitlines()[0]})") from None
    try:
        with f:
            if "round" not in f:
                raise AnalysisError(f"{path}: no /round dataset: not a sapo node log")
            # a row is complete once every dataset has it (the writer appends /round first)
            names = [k for k, d in f.items() if isinstance(d, h5py.Dataset)]
            lengths = {k: f[k].shape[0] if f[k].shape else 0 for k in names}
            n = min(lengths.values())
            data = {}
            for k in names:
                d = f[k]
                if k == "reward_by_task":
                    continue
                if d.ndim != 1:
                    continue
                data[k] = np.asarray(d[:n], dtype=np.int64 if k in ("round", "weights_digest") else np.float64)
            tasks = np.asarray(f["reward_by_task"][:n], dtype=np.float64) if "reward_by_task" in f else np.zeros((n, 0))
            labels = _labels(f["reward_by_task"].attrs.get("labels", [])) if "reward_by_task" in f else []
            evals = _by_task(f, EVAL_BY_TASK, n)
            attrs = {k: f.attrs[k] for k in f.attrs}
            longest = max(lengths.values())
    except AnalysisError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise AnalysisError(f"{path}: unreadable node log ({str(e).splitlines()[0]})") from None
    return data, tasks, labels, attrs, n, longest, evals


def load_run_dir(path):
    """Read a run directory (see the module comment for what is a warning and what an error)."""
    try:
        import h5py
    except ImportError:
        raise AnalysisError("h5py is not installed: read the HDF5 logs with Debian's python3-h5py (/usr/bin/python3)") from None
    path = os.path.normpath(path)
    name = os.path.basename(os.path.abspath(path))
    notes = []
    files = sorted(f for f in os.listdir(path) if NODE_FILE.match(f))
    if not files:
        raise AnalysisError(f"{path}: no node_NNNN.h5 files: not a sapo run directory")
    cfg_path = os.path.join(path, "config.ini")
    first = os.path.join(path, files[0])
    nodes = []
    for fname in files:
        nodes.append((fname,) + _read_node(os.path.join(path, fname), h5py))
    attrs0 = nodes[0][4]
    if os.path.exists(cfg_path):
        with open(cfg_path, encoding="utf-8", errors="replace") as f:
            config = config_parse(f.read(), cfg_path)
    elif "config" in attrs0:
        text = attrs0["config"]
        config = config_parse(text.decode() if isinstance(text, bytes) else str(text), f"{first}:/config")
        notes.append(f"{path}: no config.ini; the config was read from {files[0]}'s config attribute")
    else:
        raise AnalysisError(f"{path}: no config.ini and {files[0]} has no config attribute")
    try:
        n_nodes = int(attrs0.get("n_nodes", len(files)))
    except (TypeError, ValueError):
        raise AnalysisError(f"{first}: attribute n_nodes = {attrs0.get('n_nodes')!r}: expected an integer") from None
    present = {int(NODE_FILE.match(f).group(1)) for f in files}
    missing = [k for k in range(n_nodes) if k not in present]
    if missing:
        raise AnalysisError(f"{os.path.join(path, f'node_{missing[0]:04d}.h5')}: missing "
                            f"({len(missing)} of {n_nodes} node files absent; the run has n_nodes = {n_nodes})")
    nodes = [n for n in nodes if int(NODE_FILE.match(n[0]).group(1)) < n_nodes]
    expected = config.get_int("swarm.rounds", None, cfg_path)
    done = os.path.exists(os.path.join(path, "DONE"))

    rows = min(n[5] for n in nodes)
    if rows == 0:
        short = min(nodes, key=lambda n: n[5])[0]
        raise AnalysisError(f"{os.path.join(path, short)}: no complete round logged: nothing to analyse")
    for fname, _, _, _, _, n, longest, _ in nodes:
        if n < longest:
            notes.append(f"{os.path.join(path, fname)}: datasets of unequal length ({n} to {longest} rows): "
                         f"a round was being written; using its {n} complete rows")
    if any(n[5] > rows for n in nodes):
        lens = ", ".join(f"{n[0]} {n[5]}" for n in nodes)
        notes.append(f"{path}: node files hold different numbers of complete rows ({lens}); using the first {rows}")
    if not done:
        notes.append(f"{path}: no DONE file (the run crashed, was stopped or is still running); using the "
                     f"{rows} rounds every node completed" + (f" of {expected}" if expected is not None else ""))
    elif expected is not None and rows < expected:
        notes.append(f"{path}: DONE is present but only {rows} of {expected} rounds are logged on every node")

    metrics = sorted(set.intersection(*(set(n[1]) for n in nodes)) - {"round"})
    for fname, data, *_ in nodes:
        extra = set(data) - set(metrics) - {"round"}
        if extra:
            notes.append(f"{os.path.join(path, fname)}: datasets {sorted(extra)} are not in every node file; ignored")
    for needed in ("reward_own", "reward_train"):
        if needed not in metrics:
            raise AnalysisError(f"{first}: no /{needed} dataset: not a sapo node log")
    rounds = nodes[0][1]["round"][:rows]
    for fname, data, *_ in nodes[1:]:
        if not np.array_equal(data["round"][:rows], rounds):
            raise AnalysisError(f"{os.path.join(path, fname)}: /round differs from {files[0]}'s: the node logs "
                                f"are not from one run")
    per_node = {m: np.stack([n[1][m][:rows] for n in nodes]) for m in metrics}
    node_mean = {m: nanmean_rows(per_node[m], axis=0) for m in metrics}
    labels = nodes[0][3]
    if all(n[2].shape[1] == len(labels) for n in nodes) and labels:
        task_mean = nanmean_rows(np.stack([n[2][:rows] for n in nodes]), axis=0)
    else:
        task_mean, labels = np.zeros((rows, 0)), []
    eval_labels, eval_mean, eval_per_node = _eval_task_mean(path, nodes, rows, notes)
    if eval_per_node is not None:
        per_node["eval_by_task"] = eval_per_node  # (nodes, rounds, tasks): pass@1 per node and task
    run = Run(path, "hdf5", name, config, n_nodes, rounds, per_node, node_mean, labels, task_mean,
              expected if expected is not None else rows, done, notes, eval_labels, eval_mean, read_numerics(path),
              blas_kernels(n[4] for n in nodes))
    _check_summary_json(run)
    return run


def read_numerics(path):
    """The numerics version a run directory records (RUN_DIR/NUMERICS, src/model/numerics.h);
    1 for a directory written before sapo recorded it."""
    marker = os.path.join(path, "NUMERICS")
    if not os.path.exists(marker):
        return 1
    with open(marker, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not re.fullmatch(r"[1-9][0-9]*\n?", text):
        raise AnalysisError(f"{marker}: {text[:40]!r}: expected the numerics version, an integer >= 1")
    return int(text)


def blas_kernels(node_attrs):
    """The distinct blas_kernel root attributes of a run's node logs, sorted and joined by "+"
    ("" where no log records one)."""
    found = set()
    for attrs in node_attrs:
        k = attrs.get("blas_kernel")
        if k is not None:
            k = (k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)).strip()
            if k:
                found.add(k)
    return "+".join(sorted(found))


def require_one_numerics(runs):
    """A study reports runs of one numerics version made on one OpenBLAS kernel (docs/PERFORMANCE.md,
    'A change of numerics'): AnalysisError naming one run of each version, or of each recorded
    kernel, when (label, run) pairs mix them. Runs that record no kernel (summaries or logs
    older than the record) are not compared."""
    runs = list(runs)
    first = {}
    for label, run in runs:
        first.setdefault(run.numerics, label)
    if len(first) > 1:
        which = ", ".join(f"version {v} ({label})" for v, label in sorted(first.items()))
        raise AnalysisError(f"the runs mix numerics versions: {which}; a study reports runs of one version "
                            f"(docs/PERFORMANCE.md, 'A change of numerics')")
    kernels = {}
    for label, run in runs:
        if getattr(run, "blas_kernel", ""):
            kernels.setdefault(run.blas_kernel, label)
    if len(kernels) > 1:
        which = ", ".join(f"{k} ({label})" for k, label in sorted(kernels.items()))
        raise AnalysisError(f"the runs mix OpenBLAS kernels: {which}; the same binary gives other bits on "
                            f"another kernel: a study's runs use one (OPENBLAS_CORETYPE; docs/PERFORMANCE.md)")


def _eval_task_mean(path, nodes, rows, notes):
    """(labels, (rows, tasks) mean over nodes of eval_pass1_by_task, (nodes, rows, tasks) the
    same per node); empty (and None) when the logs predate the dataset, or when only some node
    files have it (with a warning)."""
    evals = [n[7] for n in nodes]
    if all(e is None for e in evals):
        return [], np.zeros((rows, 0)), None
    labels = next(e[1] for e in evals if e is not None)
    if any(e is None or e[0].ndim != 2 or e[0].shape[1] != len(labels) or e[1] != labels for e in evals) or not labels:
        notes.append(f"{path}: {EVAL_BY_TASK} is missing or shaped differently in some node files; ignored")
        return [], np.zeros((rows, 0)), None
    per_node = np.stack([e[0][:rows] for e in evals])
    return labels, nanmean_rows(per_node, axis=0), per_node


def _check_summary_json(run):
    """Cross-check against summary.json (written by rank 0 at the end): the same cumulative sums."""
    path = os.path.join(run.source, "summary.json")
    if not os.path.exists(path):
        return
    try:
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
        if int(s.get("rounds", -1)) != run.n_rounds:
            return
        for key, metric in (("cum_reward_own", "reward_own"), ("cum_reward_train", "reward_train")):
            want = float(s[key])
            got = float(np.sum(run.per_node[metric]))
            if abs(got - want) > 1e-9 * max(1.0, abs(want)):
                run.warnings.append(f"{path}: {key} = {want:.6f} but the node logs sum to {got:.6f}")
    except (OSError, ValueError, KeyError, TypeError) as e:
        run.warnings.append(f"{path}: unreadable ({e}); not cross-checked")


def load_summary(path):
    """Read a summary written by analysis.summarize."""
    try:
        with np.load(path, allow_pickle=False) as z:
            d = {k: z[k] for k in z.files}
    except Exception as e:  # zipfile, zlib, numpy format errors alike: the file is not readable
        raise AnalysisError(f"{path}: cannot read as a summary .npz ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    if str(d.get("format", "")) != SUMMARY_FORMAT:
        raise AnalysisError(f"{path}: format {str(d.get('format', 'missing'))!r}: expected {SUMMARY_FORMAT!r} "
                            f"(write it with python3 -m analysis.summarize)")
    try:
        config = config_parse(str(d["config"]), f"{path}:config")
        n_nodes = int(d["n_nodes"])
        rounds = np.asarray(d["round"], dtype=np.int64)
        per_node = {k[len("node/"):]: np.asarray(v, dtype=np.float64) for k, v in d.items() if k.startswith("node/")}
        node_mean = {k[len("mean/"):]: np.asarray(v, dtype=np.float64) for k, v in d.items() if k.startswith("mean/")}
        for m in PER_NODE_METRICS:
            if m not in per_node or per_node[m].shape != (n_nodes, len(rounds)):
                raise AnalysisError(f"{path}: node/{m} missing or not ({n_nodes}, {len(rounds)})")
        for m, v in node_mean.items():
            if v.shape != rounds.shape:
                raise AnalysisError(f"{path}: mean/{m} has {v.shape[0]} rounds, /round has {len(rounds)}")
        labels = [str(x) for x in d["task_labels"]]
        task_mean = np.asarray(d["task_mean"], dtype=np.float64).reshape(len(rounds), len(labels))
        # summaries written before the fixed evaluation set have no per-task eval
        eval_labels = [str(x) for x in d["eval_by_task_labels"]] if "eval_by_task_labels" in d else []
        eval_mean = (np.asarray(d["eval_by_task"], dtype=np.float64).reshape(len(rounds), len(eval_labels))
                     if "eval_by_task" in d and eval_labels else np.zeros((len(rounds), 0)))
        # summaries written before sapo recorded its numerics come from version 1
        run = Run(str(d["source"]), "summary", str(d["name"]), config, n_nodes, rounds, per_node, node_mean,
                  labels, task_mean, int(d["expected_rounds"]), bool(d["done"]), [str(w) for w in d["warnings"]],
                  eval_labels, eval_mean, int(d["numerics"]) if "numerics" in d else 1,
                  str(d["blas_kernel"]) if "blas_kernel" in d else "")
    except KeyError as e:
        raise AnalysisError(f"{path}: no {e} entry: not a complete summary") from None
    run.summary_path = path
    return run


def is_run_dir(path):
    return os.path.isdir(path) and any(NODE_FILE.match(f) for f in os.listdir(path))


def expand_inputs(paths):
    """Run directories and .npz summaries from the command line. A folder that is neither a
    run directory nor a summary is searched one and two levels down (a sweep's folder)."""
    out = []
    for p in paths:
        if os.path.isfile(p):
            if not p.endswith(".npz"):
                raise AnalysisError(f"{p}: expected a run directory or a summary .npz")
            out.append(p)
        elif is_run_dir(p):
            out.append(p)
        elif os.path.isdir(p):
            found = []
            for root, dirs, fnames in os.walk(p):
                depth = os.path.relpath(root, p).count(os.sep) + (root != p)
                if depth > 2:
                    dirs[:] = []
                    continue
                dirs.sort()
                if is_run_dir(root):
                    found.append(root)
                    dirs[:] = []
                    continue
                found.extend(os.path.join(root, f) for f in sorted(fnames) if f.endswith(".npz"))
            if not found:
                raise AnalysisError(f"{p}: no run directory (node_NNNN.h5) or summary .npz in it or two levels below")
            out.extend(sorted(found))
        else:
            raise AnalysisError(f"{p}: no such file or directory")
    return out


def load_any(path):
    """A summary or a run directory. Malformed input the checks above did not foresee still
    ends as one line naming the file (with the exception's type), not a traceback."""
    try:
        return load_summary(path) if os.path.isfile(path) else load_run_dir(path)
    except AnalysisError:
        raise
    except Exception as e:
        detail = str(e).splitlines()[0] if str(e) else ""
        raise AnalysisError(f"{path}: unreadable ({type(e).__name__}{': ' + detail if detail else ''})") from None
