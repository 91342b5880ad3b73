"""The fixed held-out evaluation set under mpirun (4 ranks, tiny model).

- Every node of every run with the same tasks, preset and run.eval_seed evaluates on the same
  questions, whatever swarm.seed or the rest of the configuration: the logs' eval_set_digest
  attributes agree, and with a frozen policy (optim.lr = 0) answering greedily
  (gen.temperature = 0) every node of both seeds scores exactly the same, overall and per task.
- Another run.eval_seed gives another set.
- eval_pass1_by_task is NaN where no evaluation ran and for tasks not asked, and its
  question-weighted mean (question i asks task i mod n_tasks, in task-id order) is eval_pass1.
"""
import h5py
import numpy as np

from conftest import NP, column, run_swarm

Q = 20  # over BASE's nine tasks: ids 0 and 1 get 3 questions, the others 2
EVAL = ["run.eval_questions=20", "run.eval_every=2"]


def attrs(run_dir, node):
    with h5py.File(run_dir / f"node_{node:04d}.h5", "r", swmr=True) as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def counts(n_questions, task_ids):
    c = np.zeros(9)
    for i in range(n_questions):
        c[sorted(task_ids)[i % len(task_ids)]] += 1
    return c


def check_by_task(run_dir, asked, n_questions=Q):
    """NaN pattern of eval_pass1_by_task and its weighted mean against eval_pass1, every node."""
    weights = counts(n_questions, asked)
    for node in range(NP):
        p1 = column(run_dir, node, "eval_pass1")
        by = column(run_dir, node, "eval_pass1_by_task")
        assert by.shape == (len(p1), 9)
        evaluated = ~np.isnan(p1)
        assert evaluated.any(), "no evaluation ran"
        assert np.isnan(by[~evaluated]).all(), "per-task eval logged on a round without evaluation"
        for r in np.flatnonzero(evaluated):
            row = by[r]
            assert np.array_equal(~np.isnan(row), weights > 0), f"node {node} round {r}: asked tasks {row}"
            mean = np.nansum(row * weights) / weights.sum()
            assert abs(mean - p1[r]) < 1e-12, f"node {node} round {r}: weighted per-task {mean} != eval_pass1 {p1[r]}"


def test_same_questions_on_every_node_seed_and_config(tmp_path, warmup):
    frozen = ["optim.lr=0", "gen.temperature=0", "swarm.rounds=2"] + EVAL
    a = run_swarm(tmp_path, "a", frozen + ["swarm.seed=7"], warmup)
    b = run_swarm(tmp_path, "b", frozen + ["swarm.seed=8"], warmup)
    c = run_swarm(tmp_path, "c", EVAL + ["swarm.seed=9", "sampling.local=1", "sampling.external=2"], warmup)
    d = run_swarm(tmp_path, "d", EVAL + ["swarm.seed=7", "run.eval_seed=2"], warmup)
    digest = attrs(a, 0)["eval_set_digest"]
    assert len(digest) == 16
    for run in (a, b, c):
        for node in range(NP):
            at = attrs(run, node)
            assert at["eval_questions"] == Q
            assert at["eval_set_digest"] == digest, f"{run.name} node {node} evaluates on other questions"
    assert attrs(d, 0)["eval_set_digest"] != digest, "another run.eval_seed gave the same set"
    # frozen greedy policies on the same questions score the same on every node and seed
    ref, ref_by = column(a, 0, "eval_pass1"), column(a, 0, "eval_pass1_by_task")
    assert np.isfinite(ref[1]) and np.isnan(ref[0])
    for run in (a, b):
        for node in range(NP):
            assert column(run, node, "eval_pass1").tobytes() == ref.tobytes(), f"{run.name} node {node}: eval differs"
            assert column(run, node, "eval_pass1_by_task").tobytes() == ref_by.tobytes()
    for run in (a, b, c, d):
        check_by_task(run, range(9))


def test_per_task_eval_with_a_task_subset(tmp_path, warmup):
    """Two tasks named out of registry order: both asked, the other seven NaN, 7 + 6 questions."""
    out = run_swarm(tmp_path, "subset", ["run.eval_questions=13", "run.eval_every=2",
                                         "tasks.names=fraction_simplification,base_conversion"], warmup)
    check_by_task(out, [5, 0], n_questions=13)
