"""Per-task pass@1 on the fixed held-out set (eval_pass1_by_task): the loader averages it over
nodes (NaN where no node evaluated or the task is not asked), summaries carry it and read it
back (as eval_by_task / eval_by_task_labels, which analysis.minipaper picks up), and runs
logged before the dataset existed (and their summaries) still load, without it."""
import numpy as np
import pytest

from synthetic_runs import TASKS, write_run
from analysis.runs import load_run_dir, load_summary
from analysis.summarize import summarize


def eval_array(n_nodes=3, n_rounds=10, eval_rounds=(4, 9)):
    """(nodes, rounds, 9): tasks 0 and 5 asked, value 0.1 (node + 1) + 0.01 task at the eval rounds."""
    a = np.full((n_nodes, n_rounds, len(TASKS)), np.nan)
    for k in range(n_nodes):
        for r in eval_rounds:
            for t in (0, 5):
                a[k, r, t] = 0.1 * (k + 1) + 0.01 * t
    return a


def test_node_mean_and_summary_round_trip(tmp_path):
    path = write_run(str(tmp_path / "new"), np.full((3, 10), 0.2), eval_by_task=eval_array())
    run = load_run_dir(path)
    assert run.eval_task_labels == TASKS and not run.warnings, run.warnings
    assert run.eval_task_mean.shape == (10, 9)
    want = np.full((10, 9), np.nan)
    for r in (4, 9):
        want[r, 0], want[r, 5] = 0.2, 0.25  # mean over nodes of 0.1, 0.2, 0.3 (+ 0.05 for task 5)
    assert np.allclose(run.eval_task_mean, want, equal_nan=True), run.eval_task_mean
    assert run.truncated(5).eval_task_mean.shape == (5, 9)
    (npz,) = summarize([path], str(tmp_path / "sum"), log=lambda m: None)
    back = load_summary(npz)
    assert back.eval_task_labels == TASKS
    assert np.array_equal(back.eval_task_mean, run.eval_task_mean, equal_nan=True)
    from analysis.minipaper import find_eval_by_task
    (labels, table), note = find_eval_by_task(npz, back)
    assert note is None and labels == TASKS and np.array_equal(table, run.eval_task_mean, equal_nan=True)


def test_older_runs_without_the_dataset(tmp_path):
    path = write_run(str(tmp_path / "old"), np.full((3, 10), 0.2))
    run = load_run_dir(path)
    assert run.eval_task_labels == [] and run.eval_task_mean.shape == (10, 0) and not run.warnings
    (npz,) = summarize([path], str(tmp_path / "sum"), log=lambda m: None)
    with np.load(npz) as z:
        assert not [k for k in z.files if "eval_by_task" in k], "a summary without per-task eval has its entries"
    back = load_summary(npz)
    assert back.eval_task_labels == [] and back.eval_task_mean.shape == (10, 0)


def test_dataset_in_some_node_files_only_is_ignored_with_a_warning(tmp_path):
    path = write_run(str(tmp_path / "mixed"), np.full((3, 10), 0.2), eval_by_task=eval_array())
    import h5py
    with h5py.File(f"{path}/node_0001.h5", "a") as f:
        del f["eval_pass1_by_task"]
    run = load_run_dir(path)
    assert run.eval_task_mean.shape == (10, 0)
    assert any("eval_pass1_by_task" in w for w in run.warnings), run.warnings


def test_per_node_table_and_specialty_for_a_specialist_study(tmp_path):
    """node/eval_by_task (nodes x rounds x tasks) and each node's run.specialty ([node.K]) reach
    the summary, so 'pass@1 on the tasks this node was not warmed on' reads from it."""
    nodes = {0: {"run.specialty": "base_conversion"}, 2: {"run.specialty": "arc_1d"}}
    path = write_run(str(tmp_path / "spec"), np.full((3, 10), 0.2), eval_by_task=eval_array(), nodes=nodes)
    run = load_run_dir(path)
    assert run.specialty == ["base_conversion", "", "arc_1d"]
    assert np.array_equal(run.per_node["eval_by_task"], eval_array(), equal_nan=True)
    assert run.truncated(5).per_node["eval_by_task"].shape == (3, 5, 9)
    (npz,) = summarize([path], str(tmp_path / "sum"), log=lambda m: None)
    with np.load(npz) as z:
        assert [str(x) for x in z["specialty"]] == ["base_conversion", "", "arc_1d"]
        assert np.array_equal(z["node/eval_by_task"], eval_array(), equal_nan=True)
    back = load_summary(npz)
    assert back.specialty == run.specialty
    assert np.array_equal(back.per_node["eval_by_task"], eval_array(), equal_nan=True)
    # node 0 (base_conversion, task 0) off its specialty: task 5 only, 0.1 + 0.05 at the eval rounds
    off = [i for i, t in enumerate(back.eval_task_labels) if t != back.specialty[0]]
    assert np.nanmean(back.per_node["eval_by_task"][0][:, off][[4, 9]]) == pytest.approx(0.15)
