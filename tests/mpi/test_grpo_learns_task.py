"""The trainer learns, not just runs: a single node doing a few hundred GRPO rounds on one
easy task (calendar_arithmetic at the tiny preset, after a short warm-up) raises its own
reward. The test compares the mean own reward of the first and last 40 rounds."""
import subprocess

import numpy as np

from conftest import ENV, SAPO, column

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
    r = column(out, 0, "reward_own")
    first, last = r[:40].mean(), r[-40:].mean()
    print(f"own reward: first 40 rounds {first:.3f}, last 40 rounds {last:.3f}")
    assert last > first + 0.1, f"GRPO did not raise the reward: {first:.3f} -> {last:.3f}"
