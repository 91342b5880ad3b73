"""Weight synchronisation (sync.method, docs/SYNC.md) in real swarms over net.transport = allgather.

- Without sync the nodes train apart: their weights_digest differ after a round that trained.
- DiLoCo with H = 1, outer_lr 1 and momentum 0 is plain weight averaging: after every outer
  step every node holds the same weights, bit for bit (equal weights_digest), and
  sync_peers counts every other node, sync_age 0, bytes_sent the pseudo-gradients too.
- With H = 3 the nodes agree exactly on rounds 2, 5, ... and differ between them.
- NoLoCo with groups of 2 every 2 rounds: sync_peers is group - 1 on its outer steps, 0 between.
- A run killed with SIGKILL and resumed equals an uninterrupted run (the outer state is in
  the checkpoint), for both methods; and a checkpoint without it is refused.
- Over net.transport = p2p (weight messages through netem): with loss, a dropped weight message
  is counted by its sender (sync_dropped) and left out of its receiver's average (sync_peers;
  two nodes hold the same weights after a step exactly when neither message was lost); with
  latency the average takes the contributions of the round before (sync_age 1); a node sending
  garbage has its weight messages rejected and counted (sync_rejected), never averaged.
- A swarm sharing weights alone (sync on, J = 0 on every node) sends rollout messages of no group.
- Config errors: nodes of different shapes, sync.group above the swarm.
"""

import numpy as np
import pytest

from conftest import BASE, CALENDAR, NP, SAPO, column, kill_one_rank, mpirun

ARGS = [a for a in BASE if not a.startswith(("swarm.rounds=", "tasks.names="))] + CALENDAR + \
    ["net.transport=allgather", "swarm.rounds=6", "sampling.filter=none"]


def run(tmp_path, name, extra, init):
    out = tmp_path / name
    mpirun(ARGS + [f"model.init={init}", "--out", str(out), "--quiet"] + list(extra))
    assert (out / "DONE").exists()
    return out


def digests(out):
    """(node, round) weights_digest."""
    return np.array([column(out, k, "weights_digest") for k in range(NP)])


def test_without_sync_nodes_drift_apart(tmp_path, calendar_warmup):
    d = digests(run(tmp_path, "none", [], calendar_warmup))
    assert (d[:, -1] != d[0, -1]).any(), "every node ended with the same weights without any sync"


def test_diloco_h1_is_weight_averaging(tmp_path, calendar_warmup):
    out = run(tmp_path, "h1", ["sync.method=diloco", "sync.every=1", "sync.outer_lr=1", "sync.outer_momentum=0"],
              calendar_warmup)
    d = digests(out)
    assert (d == d[0]).all(), f"nodes differ after an outer step:\n{d}"
    assert len(set(d[0])) > 1, "the weights never moved: nothing was trained"
    none = run(tmp_path, "none", [], calendar_warmup)
    # round 0 shares the same rollouts with and without sync (the outer step comes after them):
    # the difference is the pseudo-gradient, 4 bytes a parameter, to each of the NP - 1 peers
    extra = [column(out, k, "bytes_sent")[0] - column(none, k, "bytes_sent")[0] for k in range(NP)]
    assert extra[0] > 0 and extra[0] % (4 * (NP - 1)) == 0 and extra == [extra[0]] * NP, extra
    for k in range(NP):
        assert (column(out, k, "sync_peers") == NP - 1).all()
        assert (column(out, k, "sync_age") == 0).all()


def test_diloco_every_3_agrees_on_outer_steps_only(tmp_path, calendar_warmup):
    out = run(tmp_path, "h3", ["sync.method=diloco", "sync.every=3", "sync.outer_lr=1", "sync.outer_momentum=0"],
              calendar_warmup)
    d = digests(out)
    for r in range(6):
        same = (d[:, r] == d[0, r]).all()
        assert same == (r % 3 == 2), f"round {r}: nodes {'agree' if same else 'differ'}:\n{d}"
        peers = column(out, 0, "sync_peers")[r]
        assert peers == (NP - 1 if r % 3 == 2 else 0)
        assert np.isnan(column(out, 0, "sync_age")[r]) == (r % 3 != 2)


def test_noloco_groups(tmp_path, calendar_warmup):
    out = run(tmp_path, "noloco", ["sync.method=noloco", "sync.every=2", "sync.group=2", "sync.pull=0.5",
                                   "sync.outer_lr=0.7", "sync.outer_momentum=0.3"], calendar_warmup)
    for k in range(NP):
        assert list(column(out, k, "sync_peers")) == [0, 1, 0, 1, 0, 1]


AVERAGE = ["sync.method=diloco", "sync.every=1", "sync.outer_lr=1", "sync.outer_momentum=0"]


def test_p2p_lost_weight_messages_are_counted_and_left_out(tmp_path, calendar_warmup):
    # two nodes averaging every round (H = 1, eta 1, mu 0): while every weight message arrives
    # both hold the mean of their weights, the same bits; the first lost one is left out of its
    # receiver's average, which then keeps its own weights: the two differ from then on (their
    # outer weights differ, so later full exchanges no longer make them equal)
    out = tmp_path / "lossy"
    mpirun(ARGS + AVERAGE + ["net.transport=p2p", "net.drop=0.3", "swarm.seed=7", "swarm.rounds=12",
                             f"model.init={calendar_warmup}", "--out", str(out), "--quiet"], np_=2)
    peers = [column(out, k, "sync_peers") for k in range(2)]
    dropped = [column(out, k, "sync_dropped") for k in range(2)]
    digest = [column(out, k, "weights_digest") for k in range(2)]
    full_so_far = True
    for r in range(12):
        for d in range(2):
            assert peers[d][r] == 1 - dropped[1 - d][r], (r, d, peers, dropped)
        full_so_far = full_so_far and peers[0][r] == 1 and peers[1][r] == 1
        assert (digest[0][r] == digest[1][r]) == full_so_far, (r, peers, digest)
    lost = sum(dropped[0]) + sum(dropped[1])
    assert 0 < lost < 24, dropped
    assert (peers[0][:5] == 1).all() and (peers[1][:5] == 1).all(), "pick a seed whose first rounds lose nothing"


def test_p2p_latency_makes_the_average_stale(tmp_path, calendar_warmup):
    out = run(tmp_path, "late", AVERAGE + ["net.transport=p2p", "net.latency=1"], calendar_warmup)
    for k in range(NP):
        assert list(column(out, k, "sync_peers")) == [0] + [NP - 1] * 5
        assert np.isnan(column(out, k, "sync_age")[0]) == False  # an outer step with no peer: age 0
        assert list(column(out, k, "sync_age")[1:]) == [1] * 5


def test_p2p_garbage_weights_are_rejected(tmp_path, calendar_warmup):
    out = run(tmp_path, "garbage", AVERAGE + ["net.transport=p2p", "node.1.net.fault=garbage"], calendar_warmup)
    for k in range(NP):
        if k == 1:
            continue
        assert (column(out, k, "sync_rejected") == 1).all(), column(out, k, "sync_rejected")
        assert (column(out, k, "sync_peers") == NP - 2).all()
    d = digests(out)
    assert (d[0] == d[2]).all() and (d[0] == d[3]).all() and (d[0] != d[1]).any()


def test_p2p_noloco_sends_to_its_group_only(tmp_path, calendar_warmup):
    # round 0's rollouts are the same in every run (the outer step comes after them), so the
    # extra bytes of round 0 are the weight messages: DiLoCo's (P floats) to the NP - 1 peers,
    # NoLoCo's (P pseudo-gradients and P outer weights) to the one other member of its group
    base = ["net.transport=p2p", "sync.every=1", "swarm.rounds=1"]
    none = run(tmp_path, "none", base, calendar_warmup)
    dil = run(tmp_path, "diloco", base + ["sync.method=diloco"], calendar_warmup)
    nol = run(tmp_path, "noloco", base + ["sync.method=noloco", "sync.group=2"], calendar_warmup)
    head = 56  # the weight message's header and checksum
    for k in range(NP):
        b0 = column(none, k, "bytes_sent")[0]
        extra_d, extra_n = column(dil, k, "bytes_sent")[0] - b0, column(nol, k, "bytes_sent")[0] - b0
        P = (extra_d / (NP - 1) - head) / 4
        assert P == int(P) and P > 1000, (extra_d, P)
        assert extra_n == head + 8 * P, f"node {k}: NoLoCo sent {extra_n} weight bytes, not one copy of {head + 8 * P}"
        assert column(nol, k, "sync_peers")[0] == 1 and column(nol, k, "sync_dropped")[0] == 0


def test_weights_only_swarm_ships_no_rollouts(tmp_path, calendar_warmup):
    # J = 0 on every node with sync on: each round's rollout message is a header of no group
    # (run.dump_messages writes what is sent), every node still gets one a round from each peer
    # and its pool stays empty; with sync off, or one node drawing a group, rollouts ship again
    base = ["net.transport=p2p", "sync.every=1", "swarm.rounds=2", "sampling.local=3", "sampling.external=0"]

    def dumped(name, extra):
        d = tmp_path / f"{name}-msgs"
        d.mkdir()
        out = run(tmp_path, name, base + [f"run.dump_messages={d}"] + extra, calendar_warmup)
        return out, [p.stat().st_size for p in d.iterdir()]

    out, sizes = dumped("alone", ["sync.method=diloco"])
    assert len(sizes) == 2 * NP and max(sizes) < 64, sizes
    for k in range(NP):
        assert (column(out, k, "msgs_received") == NP - 1).all() and (column(out, k, "pool_size") == 0).all()
        assert (column(out, k, "sync_peers") == NP - 1).all()
    for name, extra in (("none", []),
                        ("reader", ["sync.method=diloco", "node.1.sampling.local=2", "node.1.sampling.external=1"])):
        sizes = dumped(name, extra)[1]
        assert len(sizes) == 2 * NP and min(sizes) > 200, (name, sizes)


def test_p2p_replay_is_bit_identical(tmp_path, calendar_warmup):
    # the virtual clock with latency, loss, churn, fan-out, regions, a slower node and bandwidth
    net = ["sync.method=noloco", "sync.every=2", "sync.group=2", "sync.pull=0.5", "net.transport=p2p",
           "net.latency=1", "net.latency_dist=uniform", "net.drop=0.2", "net.offline=0.1", "net.fanout=2",
           "net.regions=2", "net.cross_region=1", "node.3.net.slowdown=1.5", "net.bandwidth=1000000",
           "swarm.rounds=10"]
    a, b = run(tmp_path, "a", net, calendar_warmup), run(tmp_path, "b", net, calendar_warmup)
    import h5py
    for k in range(NP):
        with h5py.File(a / f"node_{k:04d}.h5", "r", swmr=True) as x:
            names = [c for c in x.keys() if not c.startswith("t_")]
        for c in names:
            assert column(a, k, c).tobytes() == column(b, k, c).tobytes(), (k, c)
    peers = np.array([column(a, k, "sync_peers") for k in range(NP)])
    assert peers[:, 1::2].max() >= 1, "no weight message ever entered an outer step"


@pytest.mark.parametrize("method,net", [("diloco", ["net.transport=allgather"]), ("noloco", ["net.transport=allgather"]),
                                        ("diloco", ["net.transport=p2p", "net.latency=1.5", "net.drop=0.2",
                                                    "net.bandwidth=20000"])])
def test_killed_run_resumes_bit_for_bit(tmp_path, calendar_warmup, method, net):
    extra = [f"sync.method={method}", "sync.every=2", "sync.outer_momentum=0.5", "swarm.rounds=60",
             "run.checkpoint_every=3", "sync.pull=0.3"] + net
    straight = run(tmp_path, "straight", extra, calendar_warmup)
    out = tmp_path / "killed"
    kill_one_rank(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(NP), SAPO, "run"] + ARGS + extra +
                  [f"model.init={calendar_warmup}", "--out", str(out), "--quiet"], out)
    mpirun(["--resume", str(out), "--quiet"], timeout=300)
    assert (out / "DONE").exists()
    for k in range(NP):
        for c in ("weights_digest", "reward_own", "grad_norm", "sync_peers", "bytes_sent"):
            x, y = column(straight, k, c), column(out, k, c)
            assert x.tobytes() == y.tobytes(), (k, c, x, y)


@pytest.mark.parametrize("extra,message", [
    (["sync.method=noloco", "node.2.model.d_model=64"], "one shape"),
    (["sync.method=noloco", "sync.group=5"], "sync.group = 5 exceeds"),
])
def test_refused(tmp_path, extra, message):
    p = mpirun(ARGS + ["--out", str(tmp_path / "x"), "--quiet"] + extra, check=False)
    assert p.returncode != 0
    assert message in p.stdout + p.stderr, p.stdout + p.stderr
    assert not (tmp_path / "x").exists()
