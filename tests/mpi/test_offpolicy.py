"""Off-policy arms in a real swarm (grpo.external): received groups carry their sender's
behaviour log-probs, and the receiver trains them as the key says.
- tis: every node logs a mean importance weight in (0, grpo.tis_cap] on the rounds that used
  external groups, NaN on the others; no external group, no weight.
- a node that lies about its log-probs (net.fault = lie_logprobs: -1e30 for every byte) gets
  every one of its tokens capped at the receivers, and the run still finishes with finite
  losses and gradient norms.
- ratio1 (the paper) and positive_only log no weight at all; positive_only and ratio1 differ.
"""
import numpy as np
import pytest

from conftest import CALENDAR, NP, column, run_swarm

ROUNDS = ["swarm.rounds=5"] + CALENDAR


@pytest.fixture
def warmup(calendar_warmup):
    return calendar_warmup


def test_tis_weights_logged_and_bounded(tmp_path, warmup):
    run = run_swarm(tmp_path, "tis", ROUNDS + ["grpo.external=tis", "grpo.tis_cap=2"], warmup)
    seen = 0
    for node in range(NP):
        used = column(run, node, "external_used")
        w = column(run, node, "offpolicy_weight")
        capped = column(run, node, "offpolicy_capped")
        assert np.isnan(w[used == 0]).all(), f"node {node}: a weight on a round without external groups"
        ok = w[used > 0]
        assert ((ok > 0) & (ok <= 2.0)).all(), f"node {node}: weights outside (0, 2]: {ok}"
        assert ((capped[used > 0] >= 0) & (capped[used > 0] <= 1)).all()
        seen += len(ok)
    assert seen >= NP, "too few rounds used external groups to test anything"


def test_lying_logprobs_are_capped_not_fatal(tmp_path, warmup):
    run = run_swarm(tmp_path, "liar", ROUNDS + ["grpo.external=tis", "grpo.tis_cap=2", "node.1.net.fault=lie_logprobs",
                                               "sampling.filter=none"], warmup)
    for node in range(NP):
        assert np.isfinite(column(run, node, "loss")).all() and np.isfinite(column(run, node, "grad_norm")).all()
    # nodes 0, 2, 3 draw external groups uniformly; over 5 rounds some come from node 1,
    # and every one of its tokens hits the cap: the capped share is then > 0
    capped = np.concatenate([column(run, n, "offpolicy_capped") for n in (0, 2, 3)])
    assert np.nanmax(capped) > 0, "no receiver capped the liar's weights"


def test_ratio1_and_positive_only(tmp_path, warmup):
    paper = run_swarm(tmp_path, "paper", ROUNDS + ["grpo.external=ratio1"], warmup)
    pos = run_swarm(tmp_path, "positive", ROUNDS + ["grpo.external=positive_only"], warmup)
    for run in (paper, pos):
        for node in range(NP):
            assert np.isnan(column(run, node, "offpolicy_weight")).all()
    # same samples in round 0 (same seed), different training of the received negatives
    assert np.array_equal(column(paper, 0, "reward_own")[:1], column(pos, 0, "reward_own")[:1])
    assert sum(column(paper, n, "external_used").sum() for n in range(NP)) > 0, "no external group was used"
    differs = [not np.array_equal(column(paper, n, "loss"), column(pos, n, "loss")) for n in range(NP)]
    assert any(differs), "positive_only changed no node's loss"
