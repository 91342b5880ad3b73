"""net.bandwidth on the virtual clock: a message of B bytes at W bytes per round arrives
ceil(B / W) rounds after it was sent, queued behind its sender's earlier copies.

Every node's per-round msgs_received, msgs_late and bytes_received must equal what a
queue worked out here from the senders' own bytes_sent implies: each sender's link starts a
round's copies at the later of the round's end (r + 1) and the end of its earlier copies,
sends one copy per peer in peer order, each taking B / W, and a copy is used in the
receiver's first round that ends at or after the time it has left the link. With W = 0 every
message is used in its own round. A run killed with SIGKILL and resumed (messages held by
their receivers, and the links' queues, in the checkpoint) equals an uninterrupted run.
"""
import math

from conftest import BASE, SAPO, column, kill_one_rank, mpirun

N = 3
ROUNDS = 10


def sizes(run_dir, k):
    """Node k's message size per round (its bytes_sent over its msgs_sent; equal copies)."""
    b, n = column(run_dir, k, "bytes_sent"), column(run_dir, k, "msgs_sent")
    assert (n == N - 1).all(), n
    return b / n


def expected(run_dir, W, rounds=ROUNDS):
    """{(d, r): [(sender, send round, size)]}: the messages a queue with bandwidth W uses in round r of d."""
    use = {}
    for s in range(N):
        B, free = sizes(run_dir, s), 0.0
        for r in range(rounds):
            start = max(r + 1.0, free)
            copy = 0
            for d in range(N):
                if d == s:
                    continue
                copy += 1
                done = start + copy * B[r] / W if W else start
                at = max(0, math.ceil(done - 1 - 1e-9))
                if at < rounds:
                    use.setdefault((d, at), []).append((s, r, B[r]))
            free = start + (N - 1) * B[r] / W if W else start
    return use


def check(run_dir, W, rounds=ROUNDS):
    use = expected(run_dir, W, rounds)
    lag = 0
    for d in range(N):
        got = {c: column(run_dir, d, c) for c in ("msgs_received", "msgs_late", "bytes_received")}
        for r in range(rounds):
            due = use.get((d, r), [])
            assert got["msgs_received"][r] == len(due), (d, r, got["msgs_received"], due)
            assert got["msgs_late"][r] == sum(sr < r for _, sr, _ in due), (d, r, got["msgs_late"], due)
            assert got["bytes_received"][r] == sum(b for _, _, b in due), (d, r, got["bytes_received"], due)
            lag = max([lag] + [r - sr for _, sr, _ in due])
    return lag


ARGS = [a for a in BASE if not a.startswith("swarm.rounds=")] + [f"swarm.rounds={ROUNDS}", "net.transport=p2p"]


def run(tmp_path, name, extra, warmup):
    out = tmp_path / name
    mpirun(ARGS + [f"model.init={warmup}", "--out", str(out), "--quiet"] + list(extra), np_=N)
    assert (out / "DONE").exists()
    return out


def test_unlimited_bandwidth_arrives_at_once(tmp_path, warmup):
    out = run(tmp_path, "unlimited", ["net.bandwidth=0"], warmup)
    assert check(out, 0) == 0


def test_bandwidth_delays_and_queues(tmp_path, warmup):
    # a message is ~1 KB here: at 700 B/round each copy takes > 1 round and the queue grows
    out = run(tmp_path, "narrow", ["net.bandwidth=700"], warmup)
    B = sizes(out, 0)
    assert (B > 700).all(), B
    lag = check(out, 700)
    assert lag >= 3, f"the queue never grew: largest lag {lag} rounds"


def test_bandwidth_resume_equals_straight_run(tmp_path, warmup):
    extra = ["net.bandwidth=900", "swarm.rounds=60", "run.checkpoint_every=3"]
    straight = run(tmp_path, "straight", extra, warmup)
    out = tmp_path / "killed"
    kill_one_rank(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(N), SAPO, "run"] + ARGS + extra +
                  [f"model.init={warmup}", "--out", str(out), "--quiet"], out)
    mpirun(["--resume", str(out), "--quiet"], np_=N, timeout=300)
    assert (out / "DONE").exists()
    for k in range(N):
        for c in ("msgs_received", "msgs_late", "bytes_received", "reward_own", "grad_norm", "weights_digest"):
            x, y = column(straight, k, c), column(out, k, c)
            assert x.tobytes() == y.tobytes(), (k, c, x, y)
    check(straight, 900, 60)
