"""The controls of the paper-regime study in a real swarm:
- grpo.frozen: no GRPO step (the weights at round 2 and round 4 are the same bytes), yet the
  node still generates, shares, trains-batch-logs and is evaluated; its loss is NaN;
- grpo.local = positive_only: the node's own negative advantages are dropped, so the first-
  epoch surrogate loss -(1/N) sum A_t (ratio 1) is never positive, where plain GRPO's is;
- grpo.external = ftis: the share of received completions dropped is logged; a threshold no
  k3 reaches drops nothing and the run equals tis bit for bit; a tiny one drops some;
- tasks.exclude_eval: a question space smaller than the draws (base_conversion at tiny) asks
  held-out questions in training (train_in_eval > 0) unless excluded (then 0);
- run.eval_first: round 0's row holds the initial policy's evaluation.
"""
import filecmp

import numpy as np
import pytest

from conftest import CALENDAR, NP, column, run_swarm

ROUNDS = ["swarm.rounds=5"] + CALENDAR


@pytest.fixture
def warmup(calendar_warmup):
    return calendar_warmup


def test_frozen_keeps_weights_and_logs(tmp_path, warmup):
    run = run_swarm(tmp_path, "frozen", ROUNDS + ["grpo.frozen=true", "run.checkpoint_every=2", "run.eval_first=true"],
                    warmup)
    for node in range(NP):
        a, b = (run / "ckpt" / f"node_{node:04d}.r{r:07d}.model" for r in (2, 4))
        assert a.exists() and b.exists(), sorted(p.name for p in (run / "ckpt").iterdir())
        assert filecmp.cmp(a, b, shallow=False), f"node {node}: a frozen policy changed between rounds 2 and 4"
        assert np.isnan(column(run, node, "loss")).all()
        assert (column(run, node, "msgs_sent") > 0).all(), "a frozen node must still share"
        assert (column(run, node, "train_tokens") > 0).all()
        assert np.isfinite(column(run, node, "eval_pass1")[0]), "run.eval_first: no evaluation in round 0's row"
    moving = run_swarm(tmp_path, "moving", ROUNDS + ["run.checkpoint_every=2"], warmup)
    a, b = (moving / "ckpt" / f"node_0000.r{r:07d}.model" for r in (2, 4))
    assert not filecmp.cmp(a, b, shallow=False), "the unfrozen control did not move: the test cannot tell"


def test_local_positive_only_loss_never_positive(tmp_path, warmup):
    own = ["sampling.groups=3", "sampling.local=3", "sampling.external=0", "swarm.rounds=6"] + CALENDAR
    pos = run_swarm(tmp_path, "ownpos", own + ["grpo.local=positive_only"], warmup)
    plain = run_swarm(tmp_path, "plain", own, warmup)
    pos_loss = np.concatenate([column(pos, n, "loss") for n in range(NP)])
    plain_loss = np.concatenate([column(plain, n, "loss") for n in range(NP)])
    assert (pos_loss <= 0).all(), f"own negatives dropped, yet a positive loss: {pos_loss}"
    assert (pos_loss < 0).any(), "no positive advantage at all: the test cannot tell"
    assert (plain_loss > 0).any(), f"plain GRPO never had a positive loss: the test cannot tell: {plain_loss}"


def test_ftis_filter(tmp_path, warmup):
    tis = run_swarm(tmp_path, "tis", ROUNDS + ["grpo.external=tis"], warmup)
    loose = run_swarm(tmp_path, "loose", ROUNDS + ["grpo.external=ftis", "grpo.ftis_kl=1000"], warmup)
    tight = run_swarm(tmp_path, "tight", ROUNDS + ["grpo.external=ftis", "grpo.ftis_kl=1e-9"], warmup)
    for node in range(NP):
        for name in ("reward_own", "reward_train", "loss", "grad_norm", "offpolicy_weight"):
            assert np.array_equal(column(tis, node, name), column(loose, node, name), equal_nan=True), (node, name)
        used = column(loose, node, "external_used")
        assert np.isnan(column(tis, node, "offpolicy_dropped")).all()
        assert (column(loose, node, "offpolicy_dropped")[used > 0] == 0).all()
    dropped = np.concatenate([column(tight, n, "offpolicy_dropped") for n in range(NP)])
    ok = dropped[np.isfinite(dropped)]
    assert len(ok) >= NP and ((ok >= 0) & (ok <= 1)).all(), dropped
    assert ok.max() > 0, "a threshold of 1e-9 dropped no negative external completion"


def test_exclude_eval(tmp_path, warmup):
    small = ["tasks.names=base_conversion", "run.eval_questions=64", "sampling.local=2", "swarm.rounds=5"]
    asked = run_swarm(tmp_path, "asked", small, warmup)
    excluded = run_swarm(tmp_path, "excluded", small + ["tasks.exclude_eval=true"], warmup)
    hits = sum(column(asked, n, "train_in_eval").sum() for n in range(NP))
    assert hits > 0, "base_conversion at tiny never drew a held-out question: the test cannot tell"
    for n in range(NP):
        assert (column(excluded, n, "train_in_eval") == 0).all(), f"node {n} asked a held-out question"
        assert (column(excluded, n, "train_rows") >= 2 * 4).all(), "a node asked fewer than I questions"
