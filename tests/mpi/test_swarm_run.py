"""The swarm round end to end under mpirun (tiny model, few rounds, 4 ranks oversubscribed).

- Two runs with the same seed give bit-identical logs; another seed differs.
- J = 0 trains on local groups only; with the zero-advantage filter no flat group is ever
  used as external; the batch is always (I + external_used) x L and the shortfall explains
  any missing external group.
- A rank sending garbage, truncated or lying messages is counted as rejected; nobody
  crashes; the run finishes.
- Every node log names the CPU model, the BLAS library and the sgemm kernel it ran on.
- Config mistakes stop the run before any work with one clear message; so does a task whose
  answers mostly do not fit in gen.max_new_tokens (the budget check, with its table).
"""
import socket
import subprocess

import h5py
import numpy as np
import pytest

from conftest import ENV, NP, BASE, SAPO, column, mpirun, run_swarm


def test_same_seed_bit_identical_other_seed_differs(tmp_path, warmup):
    a = run_swarm(tmp_path, "a", ["swarm.seed=7"], warmup)
    b = run_swarm(tmp_path, "b", ["swarm.seed=7"], warmup)
    c = run_swarm(tmp_path, "c", ["swarm.seed=8"], warmup)
    differs = False
    for node in range(NP):
        for name in ("reward_own", "reward_train", "loss", "completion_len", "eval_pass1", "reward_by_task"):
            x, y, z = column(a, node, name), column(b, node, name), column(c, node, name)
            assert x.tobytes() == y.tobytes(), f"node {node} {name}: same seed, different logs"
            differs |= x.tobytes() != z.tobytes()
    assert differs, "a different seed gave identical logs"
    with h5py.File(a / "run.h5", "r") as f:  # the run index links every node's log
        assert len(f["node/0003/reward_own"]) == 4


def test_batch_composition_and_filter(tmp_path, warmup):
    silo = run_swarm(tmp_path, "silo", ["sampling.local=3", "sampling.external=0"], warmup)
    mixed = run_swarm(tmp_path, "mixed", ["sampling.local=1", "sampling.external=2", "sampling.filter=zero_adv"], warmup)
    for node in range(NP):
        assert not column(silo, node, "external_used").any(), "J = 0 used external groups"
        assert (column(silo, node, "train_rows") == 3 * 4).all()
        used = column(mixed, node, "external_used")
        short = column(mixed, node, "shortfall")
        assert (used + short == 2).all(), "external used + shortfall must equal J"
        assert (column(mixed, node, "train_rows") == (1 + used) * 4).all()
        assert not column(mixed, node, "external_flat").any(), "the filter let a flat group through"
        assert (column(mixed, node, "pool_size") >= column(mixed, node, "pool_eligible")).all()
        assert (column(mixed, node, "pool_size") == (NP - 1) * 1).all(), "every peer's group should reach the pool"


def test_filter_none_can_use_flat_groups(tmp_path, warmup):
    out = run_swarm(tmp_path, "nofilter", ["sampling.local=1", "sampling.external=2", "sampling.filter=none"], warmup)
    used = sum(column(out, n, "external_used").sum() for n in range(NP))
    assert used == NP * 4 * 2, "with no filter and a full pool every node takes J groups every round"


@pytest.mark.parametrize("fault,column_name,per_round", [("garbage", "msgs_rejected", 1), ("truncate", "msgs_rejected", 1),
                                                          ("lie", "groups_rejected", 2)])
def test_faulty_rank_is_rejected_not_fatal(tmp_path, warmup, fault, column_name, per_round):
    out = run_swarm(tmp_path, fault, [f"node.1.net.fault={fault}"], warmup)
    for node in range(NP):
        rejected = column(out, node, column_name)
        if node == 1:
            assert not rejected.any(), "the faulty node's own view should be clean"
        else:
            assert (rejected == per_round).all(), f"node {node}: {column_name} {rejected}, expected {per_round} per round"


@pytest.mark.parametrize("args,message", [
    (["model.n_layr=2"], "unknown key"),
    (["model.n_layer=abc"], "expected an integer"),
    (["sampling.local=2", "sampling.external=2"], "must equal"),
    (["model.init=/nonexistent/w.ckpt"], "model.init"),
    (["grpo.completions=1"], "grpo.completions=1: expected an integer in [2, 256]"),  # advantage 0, silently
    (["tasks.names=no_such_task"], "unknown or unported task"),
    (["tasks.max_unanswerable=0.25"], "tasks.max_unanswerable = 0.25"),  # tiny arc_1d answers exceed 24 bytes
])
def test_config_mistakes_stop_before_work(tmp_path, args, message):
    out = tmp_path / "bad"
    p = mpirun(BASE + args + ["--out", str(out)], check=False)
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"
    lines = [l for l in p.stderr.splitlines() if "config error" in l]
    assert len(lines) == 1 and message in lines[0], p.stderr
    assert not (out / "node_0000.h5").exists(), "a node started work despite the bad config"


def test_budget_check_table_and_refusal(tmp_path):
    """Before any work rank 0 prints, per task, the share of items whose answer (with its tags)
    exceeds gen.max_new_tokens and the share of prompts cut; a task over tasks.max_unanswerable
    stops the run with one line naming the task, its share, the threshold and the fixes, exit 2,
    no run directory. Tiny binary_matrix: 3x3 answers are 34 bytes, 45.5% of the check's items."""
    tasks = ["tasks.names=basic_arithmetic,binary_matrix,propositional_logic", "tasks.max_unanswerable=0.25"]
    out = tmp_path / "over"
    p = mpirun(BASE + tasks + ["gen.max_new_tokens=32", "--out", str(out)], check=False)
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"
    lines = [l for l in p.stderr.splitlines() if "config error" in l]
    assert len(lines) == 1, p.stderr
    for part in ("budget: binary_matrix at preset tiny cannot be answered in 45.5% of its items",
                 "gen.max_new_tokens = 32 bytes", f"nodes 0-{NP - 1}", "tasks.max_unanswerable = 0.25",
                 "raise gen.max_new_tokens to 34 bytes", "drop binary_matrix from tasks.names"):
        assert part in lines[0], f"'{part}' missing from: {lines[0]}"
    table = [l for l in p.stdout.splitlines() if l.startswith("sapo run: ")]
    assert sum("budget check, preset tiny" in l for l in table) == 1, p.stdout  # printed once, by rank 0
    rows = {l.split()[2]: l.split()[3:] for l in table if len(l.split()) > 3 and l.split()[2] in
            ("basic_arithmetic", "binary_matrix", "propositional_logic")}
    assert rows["binary_matrix"][0] == "45.5%" and rows["basic_arithmetic"][0] == "0.0%", p.stdout
    assert rows["propositional_logic"][0] == "-", "no reference answer: not measurable"
    assert not out.exists(), "the run directory was created despite the budget error"
    # the same tasks with room for every answer: the run goes ahead (0 rounds) and printed the table
    ok = tmp_path / "fits"
    p = mpirun(BASE + tasks + ["gen.max_new_tokens=34", "swarm.rounds=0", "--out", str(ok)])
    assert any("binary_matrix" in l and " 0.0% " in l for l in p.stdout.splitlines()), p.stdout
    assert (ok / "DONE").exists()


def test_memory_estimate_printed_and_enforced(tmp_path, warmup):
    """sapo run prints its estimate per rank; a config whose ranks would need more than this
    host has stops before any work with one line naming the numbers and the keys to lower."""
    ok = tmp_path / "fits"
    p = mpirun(BASE + [f"model.init={warmup}", "swarm.rounds=1", "--out", str(ok)])
    est = [l for l in p.stdout.splitlines() if l.startswith("sapo run: estimated memory")]
    assert len(est) == 1 and f"for the {NP} ranks on this host" in est[0], p.stdout
    per_rank = float(est[0].split("estimated memory ")[1].split(" MB")[0])
    assert 10 < per_rank < 200, f"implausible estimate for the tiny test model: {est[0]}"
    # 2048 wide, 4096 positions and micro-batches of 2^22 tokens: terabytes per rank
    huge = ["model.d_model=2048", "model.n_ctx=4096", "model.micro_tokens=4194304", "sampling.groups=64",
            "sampling.local=63", "grpo.completions=64", "gen.max_new_tokens=1024"]
    out = tmp_path / "too_big"
    p = mpirun(BASE + huge + ["--out", str(out)], check=False)
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"
    lines = [l for l in p.stderr.splitlines() if l.startswith("sapo run: memory:")]
    assert len(lines) == 1 and "model.micro_tokens" in lines[0] and f"{NP} ranks" in lines[0], p.stderr
    assert not out.exists() or not any(out.iterdir()), "the run directory was written despite the memory error"


def test_summary_learning_window(tmp_path, warmup):
    """The end summary gives each node's mean own reward over its first and last rounds (a
    fifth of the run) beside the totals; summary.json has the same numbers as the logs."""
    import json
    out = run_swarm(tmp_path, "window", ["swarm.rounds=10"], warmup)
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary) == ["cum_reward_own", "cum_reward_train", "nodes", "numerics_version", "per_node",
                               "rounds", "seconds", "window_rounds"], summary
    assert summary["window_rounds"] == 2 and summary["nodes"] == NP and summary["rounds"] == 10
    assert summary["numerics_version"] == int((out / "NUMERICS").read_text()) >= 2
    total_own = total_train = 0.0
    for node in range(NP):
        entry = summary["per_node"][node]
        assert sorted(entry) == ["cum_reward_own", "cum_reward_train", "eval_last", "external_per_round", "host",
                                 "node", "own_first_window", "own_last_window", "peak_private_mb",
                                 "private_estimate_mb", "rejected"], entry
        assert entry["node"] == node
        # every rank ran here; the node's log records the same host
        assert entry["host"] == socket.gethostname(), entry
        with h5py.File(out / f"node_{node:04d}.h5", "r") as f:
            host = f.attrs["host"]
            assert (host.decode() if isinstance(host, bytes) else host) == entry["host"], dict(f.attrs)
        own, train = column(out, node, "reward_own"), column(out, node, "reward_train")
        assert abs(entry["cum_reward_own"] - own.sum()) < 1e-9, (node, entry, own)
        assert abs(entry["cum_reward_train"] - train.sum()) < 1e-9, (node, entry, train)
        assert abs(entry["external_per_round"] - column(out, node, "external_used").mean()) < 1e-12, entry
        evals = column(out, node, "eval_pass1")
        evals = evals[~np.isnan(evals)]
        assert (entry["eval_last"] is None) if not len(evals) else abs(entry["eval_last"] - evals[-1]) < 1e-15, entry
        total_own += entry["cum_reward_own"]
        total_train += entry["cum_reward_train"]
    assert abs(summary["cum_reward_own"] - total_own) < 1e-9 and abs(summary["cum_reward_train"] - total_train) < 1e-9
    for node in range(NP):
        own = column(out, node, "reward_own")
        entry = summary["per_node"][node]
        assert abs(entry["own_first_window"] - own[:2].mean()) < 1e-12, (node, entry, own)
        assert abs(entry["own_last_window"] - own[-2:].mean()) < 1e-12, (node, entry, own)
    log = (out / "run.log").read_text()
    assert "own 1-2" in log and "own last 2" in log and "own reward, mean of the nodes:" in log


def test_heterogeneous_swarm(tmp_path, warmup):
    """[node.K] overrides: node 1 is a wider model from a random init, node 2 answers with
    fewer completions per question, node 3 asks more questions; everyone still trades."""
    out = run_swarm(tmp_path, "hetero", ["node.1.model.d_model=48", "node.1.model.n_head=4", "node.1.model.init=",
                                         "node.2.grpo.completions=2", "node.3.sampling.groups=4",
                                         "node.3.sampling.local=3", "sampling.filter=none"], warmup)
    with h5py.File(out / "node_0001.h5", "r", swmr=True) as f:
        assert int(f.attrs["d_model"]) == 48
    assert (column(out, 2, "train_rows") == (2 + 1) * 2).all(), "node 2 trains on groups of its own L = 2"
    # node 3 asks 3 questions of 4 completions, plus one external group of 4, or of 2 from node 2
    assert np.isin(column(out, 3, "train_rows"), [3 * 4 + 4, 3 * 4 + 2]).all()
    assert (column(out, 3, "pool_size") == 3 * 2).all() and (column(out, 0, "pool_size") == 2 * 2 + 3).all()
    for node in range(NP):
        assert not column(out, node, "groups_rejected").any(), "groups of another size must not be rejected"
        assert (column(out, node, "external_used") == 1).all()


def test_logs_record_cpu_and_blas_kernel(tmp_path):
    """A replay on other hardware may differ in the last bits (OpenBLAS's kernels sum in
    other orders); the logs must say which host, CPU and kernel produced them. The kernel is forced
    with OPENBLAS_CORETYPE so the attribute is checked against a known answer; so is the CUDA math
    mode (SAPO_CUDA_TF32), recorded whatever the backend."""
    with open("/proc/cpuinfo") as f:
        info = f.read()
    model = next(l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name"))
    flags = next(l for l in info.splitlines() if l.startswith("flags")).split()
    kernel = "Haswell" if "avx2" in flags and "fma" in flags else "Prescott"
    out = tmp_path / "hw"
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", SAPO, "run"] + BASE + [
        "sampling.local=3", "sampling.external=0", "swarm.rounds=1", "--out", str(out), "--quiet"]
    p = subprocess.run(cmd, env=dict(ENV, OPENBLAS_CORETYPE=kernel, SAPO_CUDA_TF32="1"), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    # SAPO_CUDA_TF32 as the CUDA backend reads it: "0" is off, as unset
    off = tmp_path / "hw_off"
    p = subprocess.run(cmd[:-3] + ["--out", str(off), "--quiet"], env=dict(ENV, SAPO_CUDA_TF32="0"),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    with h5py.File(off / "node_0001.h5", "r") as f:
        assert int(f.attrs["cuda_tf32"]) == 0
    for node in range(2):
        with h5py.File(out / f"node_{node:04d}.h5", "r") as f:
            attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
        assert attrs["blas_kernel"].lower() == kernel.lower(), attrs["blas_kernel"]
        assert attrs["cpu_model"].startswith(model), attrs["cpu_model"]
        assert ("avx2" in attrs["cpu_model"]) == ("avx2" in flags), attrs["cpu_model"]
        assert attrs["blas_library"].startswith("OpenBLAS"), attrs["blas_library"]
        assert attrs["host"] == socket.gethostname(), attrs["host"]
        assert attrs["cuda_tf32"] == "1", attrs["cuda_tf32"]
