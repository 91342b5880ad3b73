"""The p2p transport and the emulated network (virtual clock), and resumable runs.

- p2p with zero latency and no loss equals the synchronous all-gather bit for bit (the
  message and byte counters too);
- drop = 1 equals a silo run; latency of k rounds means no external group used in round r
  was sent after r - k; an offline node sends and receives nothing while offline;
- two virtual-clock runs with latency, loss and churn are bit-identical;
- kill -9 of one rank mid-run leaves every node's HDF5 readable up to its last flushed
  round, and `sapo run --resume` completes the run with the same logs as an uninterrupted run.
"""
import numpy as np

from conftest import BASE as SMALL, NP, SAPO, column as col, kill_one_rank, mpirun, run_swarm

BASE = [a for a in SMALL if not a.startswith(("swarm.rounds=", "run.eval_every="))] + ["swarm.rounds=6", "run.eval_every=3"]
COMPARED = ("reward_own", "reward_train", "loss", "completion_len", "external_used", "pool_size", "eval_pass1",
            "reward_by_task", "msgs_received")


def run(tmp_path, name, extra, warmup):
    return run_swarm(tmp_path, name, ["swarm.rounds=6", "run.eval_every=3"] + extra, warmup)  # later overrides win


def same_logs(a, b, names=COMPARED):
    for node in range(NP):
        for name in names:
            x, y = col(a, node, name), col(b, node, name)
            if x.tobytes() != y.tobytes():
                return f"node {node} {name}: {x} vs {y}"
    return None


def test_p2p_without_latency_equals_allgather(tmp_path, warmup):
    a = run(tmp_path, "allgather", ["net.transport=allgather"], warmup)
    p = run(tmp_path, "p2p", ["net.transport=p2p"], warmup)
    names = COMPARED + ("msgs_sent", "bytes_sent", "bytes_received")
    assert same_logs(a, p, names) is None, same_logs(a, p, names)


def test_drop_all_equals_silo(tmp_path, warmup):
    dropped = run(tmp_path, "drop1", ["net.drop=1"], warmup)
    silo = run(tmp_path, "silo", ["sampling.groups=2", "sampling.external=0"], warmup)
    assert same_logs(dropped, silo, ("reward_own", "reward_train", "loss", "eval_pass1")) is None
    for node in range(NP):
        assert not col(dropped, node, "msgs_sent").any() and not col(dropped, node, "msgs_received").any()
        assert (col(dropped, node, "shortfall") == 1).all()


def test_latency_k_rounds(tmp_path, warmup):
    k = 2
    out = run(tmp_path, "latency", [f"net.latency={k}", "sampling.filter=none"], warmup)
    used_any = False
    for node in range(NP):
        used = col(out, node, "external_used")
        age = col(out, node, "external_age_min")
        assert not used[:k].any(), "nothing can arrive before k rounds have passed"
        assert (age[used > 0] >= k).all(), f"node {node}: an external group younger than {k} rounds: {age}"
        used_any |= bool(used.any())
        assert (col(out, node, "msgs_late")[k:] > 0).all()
    assert used_any


def test_offline_node_is_silent(tmp_path, warmup):
    out = run(tmp_path, "churn", ["net.offline=0.4", "net.offline_len=2", "swarm.rounds=8"], warmup)
    offline_rounds = 0
    for node in range(NP):
        online = col(out, node, "online")
        off = online == 0
        offline_rounds += int(off.sum())
        assert not col(out, node, "msgs_sent")[off].any(), f"node {node} sent while offline"
        assert not col(out, node, "msgs_received")[off].any(), f"node {node} received while offline"
        assert not col(out, node, "external_used")[off].any()
    assert offline_rounds > 0, "churn 0.4 produced no offline round"


def test_virtual_clock_is_reproducible_with_latency_loss_churn(tmp_path, warmup):
    net = ["net.latency=1.5", "net.latency_dist=lognormal", "net.drop=0.3", "net.offline=0.2", "net.offline_len=2",
           "node.2.net.slowdown=2", "swarm.rounds=8"]
    a = run(tmp_path, "a", net, warmup)
    b = run(tmp_path, "b", net, warmup)
    assert same_logs(a, b, COMPARED + ("msgs_sent", "msgs_dropped", "msgs_late", "online")) is None


def test_slow_node_with_checkpoints_refused(tmp_path, warmup):
    # on the virtual clock a checkpoint waits for every node at the same round, which node 2,
    # twice as slow, reaches only after the others' later rounds: the run hung (network study)
    extra = ["node.2.net.slowdown=2", "run.checkpoint_every=3", f"model.init={warmup}", "--quiet"]
    p = mpirun(BASE + ["--out", str(tmp_path / "x")] + extra, check=False, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert ("config error: node 2: net.slowdown = 2 beside node 0's 1 needs run.checkpoint_every = 0"
            in p.stderr), p.stderr
    assert not (tmp_path / "x").exists()
    out = run(tmp_path, "no_checkpoints", ["node.2.net.slowdown=2", "run.checkpoint_every=0"], warmup)
    assert (out / "DONE").exists()


def test_kill_one_rank_then_resume(tmp_path, warmup):
    # 60 rounds: a kill between checkpoints 6 and 45 lands while the ranks still run (a round
    # of this tiny swarm takes a few milliseconds since the packed rewrite)
    net = ["net.latency=1", "net.drop=0.2", "swarm.rounds=60", "run.checkpoint_every=3"]
    straight = run(tmp_path, "straight", net, warmup)
    out = tmp_path / "killed"
    kill_one_rank(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(NP), SAPO, "run"] + BASE + net +
                  [f"model.init={warmup}", "--out", str(out), "--quiet"], out)
    assert not (out / "DONE").exists()
    for node in range(NP):  # every log readable up to its last flushed round
        r = col(out, node, "round")
        assert len(r) >= 6 and (r == np.arange(len(r))).all()
    mpirun(["--resume", str(out), "--quiet"])
    assert (out / "DONE").exists()
    assert same_logs(straight, out) is None, same_logs(straight, out)
    assert len(col(out, 0, "round")) == 60
