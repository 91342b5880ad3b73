"""The trainer learns, not just runs: a single node doing a few hundred GRPO rounds on one
easy task (calendar_arithmetic at the tiny preset, after a short warm-up) raises its own
reward. The test compares the mean own reward of the first and last 40 rounds."""
import os
import subprocess

import h5py
import numpy as np

SAPO = os.environ.get("SAPO_BIN", "build/sapo")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
ARGS = ["model.n_layer=1", "model.d_model=32", "model.n_head=2", "model.n_ctx=160", "gen.max_new_tokens=24",
        "tasks.preset=tiny", "tasks.names=calendar_arithmetic"]


def test_grpo_raises_reward_on_an_easy_task(tmp_path):
    ckpt = tmp_path / "w.ckpt"
    subprocess.run([SAPO, "pretrain", "pretrain.steps=200", "pretrain.batch=16", "--out", str(ckpt), "--quiet"] + ARGS,
                   env=ENV, check=True, capture_output=True, timeout=600)
    out = tmp_path / "run"
    subprocess.run(["mpirun", "-np", "1", SAPO, "run", f"model.init={ckpt}", "swarm.rounds=200", "sampling.groups=4",
                    "sampling.local=4", "sampling.external=0", "grpo.completions=8", "optim.lr=1e-3",
                    "run.eval_every=0", "--out", str(out), "--quiet"] + ARGS,
                   env=ENV, check=True, capture_output=True, timeout=900)
    with h5py.File(out / "node_0000.h5", "r", swmr=True) as f:
        r = np.array(f["reward_own"][:len(f["round"])])
    first, last = r[:40].mean(), r[-40:].mean()
    print(f"own reward: first 40 rounds {first:.3f}, last 40 rounds {last:.3f}")
    assert last > first + 0.1, f"GRPO did not raise the reward: {first:.3f} -> {last:.3f}"
