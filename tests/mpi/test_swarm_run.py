"""The swarm round end to end under mpirun (tiny model, few rounds, 4 ranks oversubscribed).

- Two runs with the same seed give bit-identical logs; another seed differs.
- J = 0 trains on local groups only; with the zero-advantage filter no flat group is ever
  used as external; the batch is always (I + external_used) x L and the shortfall explains
  any missing external group.
- A rank sending garbage, truncated or lying messages is counted as rejected; nobody
  crashes; the run finishes.
- Config mistakes stop the run before any work with one clear message.
"""
import os
import subprocess

import h5py
import numpy as np
import pytest

SAPO = os.environ.get("SAPO_BIN", "build/sapo")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
NP = 4
BASE = ["model.n_layer=1", "model.d_model=32", "model.n_head=2", "model.n_ctx=160", "gen.max_new_tokens=24",
        "tasks.preset=tiny", "sampling.groups=3", "sampling.local=2", "sampling.external=1", "grpo.completions=4",
        "swarm.rounds=4", "run.eval_every=2", "run.eval_questions=4", "optim.lr=1e-3"]


def mpirun(args, np_=NP, check=True):
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np_), SAPO, "run"] + args
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture(scope="module")
def warmup(tmp_path_factory):
    """A briefly warmed-up checkpoint, so rewards are not all zero."""
    path = tmp_path_factory.mktemp("warmup") / "w.ckpt"
    subprocess.run([SAPO, "pretrain", "pretrain.steps=150", "pretrain.batch=16", "--out", str(path), "--quiet"]
                   + [a for a in BASE if a.startswith(("model.", "gen.", "tasks."))],
                   env=ENV, check=True, capture_output=True, timeout=600)
    return str(path)


def run(tmp_path, name, extra, warmup):
    out = tmp_path / name
    mpirun(BASE + [f"model.init={warmup}", "--out", str(out), "--quiet"] + extra)
    assert (out / "DONE").exists(), "the run did not finish"
    return out


def column(run_dir, node, name):
    with h5py.File(run_dir / f"node_{node:04d}.h5", "r", swmr=True) as f:
        n = len(f["round"])
        return np.array(f[name][:n])


def test_same_seed_bit_identical_other_seed_differs(tmp_path, warmup):
    a = run(tmp_path, "a", ["swarm.seed=7"], warmup)
    b = run(tmp_path, "b", ["swarm.seed=7"], warmup)
    c = run(tmp_path, "c", ["swarm.seed=8"], warmup)
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
    silo = run(tmp_path, "silo", ["sampling.local=3", "sampling.external=0"], warmup)
    mixed = run(tmp_path, "mixed", ["sampling.local=1", "sampling.external=2", "sampling.filter=zero_adv"], warmup)
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
    out = run(tmp_path, "nofilter", ["sampling.local=1", "sampling.external=2", "sampling.filter=none"], warmup)
    used = sum(column(out, n, "external_used").sum() for n in range(NP))
    assert used == NP * 4 * 2, "with no filter and a full pool every node takes J groups every round"


@pytest.mark.parametrize("fault,column_name,per_round", [("garbage", "msgs_rejected", 1), ("truncate", "msgs_rejected", 1),
                                                          ("lie", "groups_rejected", 2)])
def test_faulty_rank_is_rejected_not_fatal(tmp_path, warmup, fault, column_name, per_round):
    out = run(tmp_path, fault, [f"node.1.net.fault={fault}"], warmup)
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
    (["tasks.names=no_such_task"], "unknown or unported task"),
])
def test_config_mistakes_stop_before_work(tmp_path, args, message):
    out = tmp_path / "bad"
    p = mpirun(BASE + args + ["--out", str(out)], check=False)
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"
    lines = [l for l in p.stderr.splitlines() if "config error" in l]
    assert len(lines) == 1 and message in lines[0], p.stderr
    assert not (out / "node_0000.h5").exists(), "a node started work despite the bad config"
