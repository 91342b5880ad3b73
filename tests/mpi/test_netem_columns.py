"""Every network and training column of a real swarm's log, checked against what must hold.

Virtual clock, with partial loss, fanout 2 of 3 peers, uniform latency, two regions with a
cross-region delay, churn and one slower node: netem's own decisions for the run's
config.ini come from tool_netem_expect (the library's pure functions, nothing re-implemented
here), and every node's per-round msgs_sent, msgs_dropped, msgs_received, msgs_late,
online, pool and batch sizes and external_age_min / _max / _mean must equal what they imply,
exactly. Bytes: each message's size is its sender's bytes_sent / msgs_sent, and every
receiver's bytes_received per round is exactly the sum of the sizes of the messages due
then; sent and received totals are equal. train_tokens and reward_train are the sums over
the node's own group and the received groups (J is large and sampling.filter = none, so
every received group is trained on). format_rate, timings, grad_norm, kl and eval_pass1 are
checked against invariants: finite, in range, > 0 where they must be, t_eval > 0 exactly on
evaluation rounds, kl 0 when the policy is the reference and > 0 once it moved.

Wall clock (not reproducible, so only what must hold): the run finishes with DONE and every
round logged; msgs_sent and msgs_dropped still equal netem's decisions; no receiver counts
more messages or bytes than were sent to it; the batch matches the pool; t_wait is 0 (the
wall clock never waits) and kl is 0 without grpo.kl.
"""
import json
import subprocess

import numpy as np
import pytest

from conftest import ENV, NP, column, pretrain, run_swarm, tool

TASK = ["tasks.names=calendar_arithmetic"]  # a briefly warmed-up tiny model answers it sometimes
I, J, L, FANOUT = 1, 12, 4, 2
SHAPE = [f"sampling.local={I}", f"sampling.external={J}", f"sampling.groups={I + J}", f"grpo.completions={L}",
         "sampling.filter=none"] + TASK
ROUNDS, EVAL_EVERY = 8, 3
NET = ["net.drop=0.3", f"net.fanout={FANOUT}", "net.latency=0.6", "net.latency_dist=uniform", "net.regions=2",
       "net.cross_region=1", "net.offline=0.15", "net.offline_len=2", "node.3.net.slowdown=1.5"]
COLUMNS = ("online", "msgs_sent", "msgs_dropped", "msgs_offline", "msgs_received", "msgs_late", "msgs_rejected", "groups_rejected",
           "bytes_sent", "bytes_received", "pool_size", "pool_eligible", "external_used", "external_flat", "shortfall",
           "external_age_min", "external_age_max", "external_age_mean", "train_rows", "train_tokens", "reward_own", "reward_train",
           "format_rate", "completion_len", "t_generate", "t_exchange", "t_train", "t_wait", "t_eval", "t_round",
           "loss", "grad_norm", "kl", "eval_pass1", "round")


@pytest.fixture(scope="module")
def warmup(tmp_path_factory):
    return pretrain(tmp_path_factory.mktemp("warmup_calendar") / "w.ckpt", TASK, steps=300)


def logs(run_dir):
    """{column: array (node, round)}"""
    return {c: np.array([column(run_dir, k, c) for k in range(NP)], dtype=float) for c in COLUMNS}


def netem_expect(run_dir):
    """netem's decisions for the run: offline[k][r] and a record per message (s, d, r)."""
    p = subprocess.run([tool("tool_netem_expect"), str(run_dir / "config.ini"), str(NP)], env=ENV, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    keys = ("s", "d", "r", "targeted", "lost", "sends", "at", "delay", "arrival")
    return out, [dict(zip(keys, m)) for m in out["messages"]]


def per_message_size(g, k, r):
    """The size of node k's message of round r: its bytes_sent over its msgs_sent."""
    n, b = g["msgs_sent"][k, r], g["bytes_sent"][k, r]
    assert n > 0 and b > 0 and b % n == 0, f"node {k} round {r}: {b} bytes over {n} messages"
    return b / n


def test_virtual_clock_columns_match_netem(tmp_path, warmup):
    out = run_swarm(tmp_path, "virtual", SHAPE + NET + [f"swarm.rounds={ROUNDS}", f"run.eval_every={EVAL_EVERY}",
                                                        "grpo.kl=0.05"], warmup)
    g = logs(out)
    info, msgs = netem_expect(out)
    assert info["rounds"] == ROUNDS and not info["wall"]
    offline = np.array(info["offline"])

    # the config does what it says (a netem that ignores loss, fanout, latency or regions fails here too)
    for k in range(NP):
        for r in range(ROUNDS):
            if not offline[k, r]:
                assert sum(m["targeted"] for m in msgs if m["s"] == k and m["r"] == r) == FANOUT
    assert any(m["targeted"] and m["lost"] for m in msgs), "net.drop = 0.3 lost no message"
    cross = [m["delay"] for m in msgs if m["s"] % 2 != m["d"] % 2]
    same = [m["delay"] for m in msgs if m["s"] % 2 == m["d"] % 2]
    assert 1 <= min(cross) and max(cross) < 2.2 and 0 <= min(same) and max(same) < 1.2 and len(set(same)) > 1

    # what each node must have logged, from netem's decisions
    sent, dropped, due = np.zeros((NP, ROUNDS)), np.zeros((NP, ROUNDS)), {}
    reached_offline = np.zeros((NP, ROUNDS))  # arrived while the receiver was offline: never sent
    for m in msgs:
        if not m["targeted"] or offline[m["s"], m["r"]]:
            continue
        if m["arrival"] >= 0 and offline[m["d"], m["arrival"]]:
            reached_offline[m["d"], m["arrival"]] += 1
        if m["at"] >= 0:
            sent[m["s"], m["r"]] += 1
            due.setdefault((m["d"], m["at"]), []).append((m["s"], m["r"]))
        else:  # lost, the receiver offline when it would arrive, or due after the last round
            dropped[m["s"], m["r"]] += 1
    assert dropped.sum() > 0 and any(r < at for (_, at), ms in due.items() for _, r in ms), "no drop or no late message"
    assert reached_offline.sum() > 0, "churn: no message reached an offline node"
    for name, want in (("online", 1 - offline), ("msgs_sent", sent), ("msgs_dropped", dropped),
                       ("msgs_offline", reached_offline)):
        assert (g[name] == want).all(), f"{name}: logged\n{g[name]}\nnetem says\n{want}"
    online = offline == 0
    assert ((g["msgs_sent"] + g["msgs_dropped"])[online] == FANOUT).all(), "an online node targets net.fanout peers"
    assert not g["msgs_rejected"].any() and not g["groups_rejected"].any()

    sizes_received = 0.0
    for k in range(NP):
        for r in range(ROUNDS):
            ms = due.get((k, r), [])
            where = f"node {k} round {r} (due: {ms})"
            assert g["msgs_received"][k, r] == len(ms), where
            assert g["msgs_late"][k, r] == sum(s_r < r for _, s_r in ms), where
            assert g["pool_size"][k, r] == I * len(ms) == g["pool_eligible"][k, r], where
            assert I * len(ms) <= J, "the test wants every received group trained on: raise J"
            assert g["external_used"][k, r] == I * len(ms) and g["shortfall"][k, r] == J - I * len(ms), where
            assert g["external_flat"][k, r] <= g["external_used"][k, r], where
            ages = [r - s_r for _, s_r in ms]
            lo, hi = g["external_age_min"][k, r], g["external_age_max"][k, r]
            mean = g["external_age_mean"][k, r]
            if ms:  # every message carries I groups: the groups' mean age is the messages'
                assert (lo, hi) == (min(ages), max(ages)), f"{where}: ages {lo}, {hi}"
                assert abs(mean - sum(ages) / len(ages)) < 1e-9, f"{where}: mean age {mean}, ages {ages}"
            else:
                assert np.isnan(lo) and np.isnan(hi) and np.isnan(mean), where
            # bytes: every message's size is its sender's bytes_sent / msgs_sent
            size = sum(per_message_size(g, s, s_r) for s, s_r in ms)
            assert g["bytes_received"][k, r] == size, f"{where}: {g['bytes_received'][k, r]} bytes, sent {size}"
            sizes_received += size
            if g["msgs_sent"][k, r] == 0:
                assert g["bytes_sent"][k, r] == 0, where
            # the batch: the own group and every received group (I = 1: a sender's group is its
            # whole round, so its completion_len and reward_own describe it)
            assert g["train_rows"][k, r] == (I + len(ms)) * L, where
            own_bytes = lambda s, s_r: round(g["completion_len"][s, s_r] * I * L)
            tokens = own_bytes(k, r) + sum(own_bytes(s, s_r) for s, s_r in ms)
            assert g["train_tokens"][k, r] == tokens, f"{where}: {g['train_tokens'][k, r]} tokens, completions {tokens}"
            reward_sum = sum(g["reward_own"][s, s_r] * I * L for s, s_r in [(k, r)] + ms)
            assert abs(g["reward_train"][k, r] - reward_sum / g["train_rows"][k, r]) < 1e-6, where
    assert g["bytes_sent"].sum() == g["bytes_received"].sum() == sizes_received > 0

    check_training_columns(g, eval_every=EVAL_EVERY)
    # kl: the policy starts as the reference (0), and moves away from it
    assert (g["kl"] >= 0).all() and (g["kl"][:, 0] == 0).all() and (g["kl"][:, 1:] > 0).any(), g["kl"]


def check_training_columns(g, eval_every):
    """Invariants of the generation, training, timing and evaluation columns."""
    rounds = g["round"].shape[1]
    assert (g["round"] == np.arange(rounds)).all(), "every round logged, in order"
    for name in ("t_generate", "t_exchange", "t_train"):
        assert np.isfinite(g[name]).all() and (g[name] > 0).all(), f"{name}: {g[name]}"
    assert np.isfinite(g["t_wait"]).all() and (g["t_wait"] >= 0).all()
    parts = g["t_generate"] + g["t_exchange"] + g["t_wait"] + g["t_train"] + g["t_eval"]
    assert (g["t_round"] >= parts - 1e-9).all(), "a round lasts at least as long as its parts"
    evals = (np.arange(rounds) + 1) % eval_every == 0
    assert (g["t_eval"][:, evals] > 0).all() and (g["t_eval"][:, ~evals] == 0).all(), g["t_eval"]
    assert np.isfinite(g["eval_pass1"][:, evals]).all() and np.isnan(g["eval_pass1"][:, ~evals]).all()
    assert ((g["eval_pass1"][:, evals] >= 0) & (g["eval_pass1"][:, evals] <= 1)).all()
    # format_rate: a share of the I x L own completions; a reward needs an extracted answer
    fr = g["format_rate"]
    assert ((fr >= 0) & (fr <= 1)).all() and np.allclose(fr * I * L, np.round(fr * I * L), atol=1e-9)
    assert (g["reward_own"] <= fr + 1e-9).all(), "a completion without an answer earned a reward"
    assert (g["reward_own"] > 0).any(), "no reward at all: the checks below would be vacuous"
    cl = g["completion_len"] * I * L
    assert np.allclose(cl, np.round(cl), atol=1e-9) and (g["completion_len"] <= 24).all()
    # grad_norm: finite, and > 0 wherever the batch holds a group with unequal rewards
    assert np.isfinite(g["grad_norm"]).all() and (g["grad_norm"] >= 0).all() and np.isfinite(g["loss"]).all()
    mixed = g["external_used"] > g["external_flat"]
    assert mixed.any() and (g["grad_norm"][mixed] > 0).all(), g["grad_norm"]
    assert np.isfinite(g["kl"]).all()


def test_wall_clock_run_counts_consistently(tmp_path, warmup):
    rounds = 6
    out = run_swarm(tmp_path, "wall", SHAPE + ["net.clock=wall", "net.drop=0.3", f"net.fanout={FANOUT}",
                                               "net.latency=0.0001", "net.latency_dist=uniform", "net.regions=2",
                                               "net.cross_region=0.0001", f"swarm.rounds={rounds}",
                                               f"run.eval_every={EVAL_EVERY}"], warmup)
    g = logs(out)
    info, msgs = netem_expect(out)
    assert info["wall"] and info["rounds"] == rounds
    offline = np.array(info["offline"])
    assert not offline.any() and (g["online"] == 1).all()

    # sends follow netem exactly; what arrives when does not
    sent, dropped = np.zeros((NP, rounds)), np.zeros((NP, rounds))
    to_node, bytes_to_node = np.zeros(NP), np.zeros(NP)
    for m in msgs:
        if m["targeted"]:
            (sent if m["sends"] else dropped)[m["s"], m["r"]] += 1
    assert (g["msgs_sent"] == sent).all(), f"msgs_sent\n{g['msgs_sent']}\nnetem says\n{sent}"
    assert (g["msgs_dropped"] == dropped).all(), f"msgs_dropped\n{g['msgs_dropped']}\nnetem says\n{dropped}"
    assert ((g["msgs_sent"] + g["msgs_dropped"]) == FANOUT).all() and dropped.sum() > 0
    for m in msgs:
        if m["targeted"] and m["sends"]:
            to_node[m["d"]] += 1
            bytes_to_node[m["d"]] += per_message_size(g, m["s"], m["r"])
    assert ((g["bytes_sent"] == 0) == (g["msgs_sent"] == 0)).all()

    # no message counted twice: nobody gets more messages or bytes than were sent to it
    got, got_bytes = g["msgs_received"].sum(axis=1), g["bytes_received"].sum(axis=1)
    assert (got <= to_node).all(), f"received {got}, sent to each node {to_node}"
    assert (got_bytes <= bytes_to_node).all(), f"bytes received {got_bytes}, sent to each node {bytes_to_node}"
    assert got.sum() > 0 and ((got_bytes > 0) == (got > 0)).all()
    assert (g["msgs_late"] <= g["msgs_received"]).all()
    assert not g["msgs_rejected"].any() and not g["groups_rejected"].any()
    assert (g["pool_size"] == I * g["msgs_received"]).all() and (g["pool_eligible"] == g["pool_size"]).all()
    assert (g["external_used"] == np.minimum(J, g["pool_size"])).all()
    assert (g["shortfall"] == J - g["external_used"]).all()
    assert (g["train_rows"] == (I + g["external_used"]) * L).all()
    assert (np.isnan(g["external_age_min"]) == (g["external_used"] == 0)).all()
    used = g["external_used"] > 0
    assert (g["external_age_min"][used] <= g["external_age_max"][used]).all()

    assert (g["t_wait"] == 0).all(), "the wall clock never waits for a peer"
    assert (g["kl"] == 0).all(), "grpo.kl = 0: no reference, no KL"
    for name in ("t_generate", "t_exchange", "t_train"):
        assert np.isfinite(g[name]).all() and (g[name] > 0).all(), f"{name}: {g[name]}"
    assert np.isfinite(g["grad_norm"]).all() and np.isfinite(g["loss"]).all()


def test_wall_clock_churn_and_a_slow_node(tmp_path, warmup):
    """Wall clock with churn and node 3 three times slower: the faster nodes' rounds run ahead
    of node 3's, so ages counted as receiver round minus sender round went negative there;
    they count on the receiver's clock and are never negative. Messages that reach a node
    in a round it is offline are counted (msgs_offline), only in such rounds, and no node
    counts more received + discarded messages than were sent to it."""
    rounds = 8
    out = run_swarm(tmp_path, "wall_churn", SHAPE + ["net.clock=wall", "net.latency=0.0001", "net.offline=0.3",
                                                     "net.offline_len=2", "node.3.net.slowdown=3",
                                                     f"swarm.rounds={rounds}", f"run.eval_every={EVAL_EVERY}"], warmup)
    g = logs(out)
    info, msgs = netem_expect(out)
    offline = np.array(info["offline"])
    assert info["wall"] and offline.any() and (g["online"] == 1 - offline).all()

    used = g["external_used"] > 0
    assert used[3].any(), "the slow node used no external group"
    assert (g["external_age_min"][used] >= 0).all(), f"negative ages\n{g['external_age_min']}"
    assert (g["external_age_min"][used] <= g["external_age_max"][used]).all()
    assert (g["external_age_min"][used] <= g["external_age_mean"][used]).all()
    assert (g["external_age_mean"][used] <= g["external_age_max"][used]).all()
    assert (g["external_age_max"][used] <= np.tile(np.arange(rounds), (NP, 1))[used]).all()

    assert (g["msgs_offline"][offline == 1] >= 0).all() and not g["msgs_offline"][offline == 0].any()
    assert not g["msgs_received"][offline == 1].any(), "an offline node receives nothing"
    assert g["msgs_offline"].sum() > 0, "churn discarded no message"
    sent_to = np.zeros(NP)
    for m in msgs:
        if m["targeted"] and m["sends"]:
            sent_to[m["d"]] += 1
    assert g["msgs_sent"].sum() == sent_to.sum()
    taken = g["msgs_received"].sum(axis=1) + g["msgs_offline"].sum(axis=1)
    assert (taken <= sent_to).all(), f"received + discarded {taken}, sent to each node {sent_to}"
