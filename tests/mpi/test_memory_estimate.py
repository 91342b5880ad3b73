"""sapo run's memory estimate against what the ranks really hold: each rank's peak private
memory (core/mem_usage.c: anonymous pages, sampled after each stage of a round and from the
high-water mark) is written to summary.json beside the estimate's private part
(node_memory_terms), and the two agree within 15% for quick.ini-like runs at 1 rank (with
and without a reference model) and 8 ranks, and the smallest model at 64 ranks. Random init: every completion runs to max_new_tokens, and
sampling.filter = none with grpo.external = ratio1 trains every group, so the round that is
measured is the worst case the estimate is for."""
import json

import pytest

from conftest import BASE, mpirun

# experiments/quick.ini's model and round, 2 rounds, evaluated at the second
QUICK = ["model.n_layer=2", "model.n_head=4", "model.d_model=64", "model.n_ctx=256", "model.micro_tokens=2048",
         "gen.max_new_tokens=32", "sampling.groups=8", "grpo.completions=8", "sampling.filter=none",
         "grpo.external=ratio1", "tasks.preset=tiny",
         "tasks.names=base_conversion,basic_arithmetic,fraction_simplification,calendar_arithmetic",
         "swarm.rounds=2", "run.eval_every=2", "run.eval_questions=128", "run.checkpoint_every=0"]
TOLERANCE = 0.15


def memory(tmp_path, name, args, np_):
    """(measured peak private MB, estimated private MB) per node of a finished run."""
    out = tmp_path / name
    p = mpirun(args + ["--out", str(out), "--quiet"], np_=np_, timeout=300)
    assert any(l.startswith("sapo run: estimated memory ") and " MB per rank (" in l for l in p.stdout.splitlines()), \
        p.stdout
    nodes = json.loads((out / "summary.json").read_text())["per_node"]
    return [(n["peak_private_mb"], n["private_estimate_mb"]) for n in nodes]


def assert_close(pairs, what):
    for node, (measured, estimate) in enumerate(pairs):
        assert measured > 0, f"{what}: node {node} measured nothing"
        ratio = measured / estimate
        assert 1 - TOLERANCE <= ratio <= 1 + TOLERANCE, \
            f"{what}: node {node} peak private {measured} MB vs estimate {estimate} MB (ratio {ratio:.3f})"


@pytest.mark.parametrize("np_,split", [(1, ["sampling.local=8", "sampling.external=0"]),
                                       (1, ["sampling.local=8", "sampling.external=0", "grpo.kl=0.05"]),
                                       (8, ["sampling.local=4", "sampling.external=4"])])
def test_quick_estimate_matches_peak(tmp_path, np_, split):
    pairs = memory(tmp_path, f"quick{np_}", QUICK + split + [f"swarm.nodes={np_}"], np_)
    assert len(pairs) == np_
    assert_close(pairs, f"quick at {np_} ranks")


def test_smallest_at_64_ranks(tmp_path):
    """The per-peer terms (Open MPI's state, the inbox and the pool) at 64 ranks of the
    smallest model, where they are the largest share."""
    args = [a for a in BASE if not a.startswith(("swarm.rounds", "run.eval_every"))]
    pairs = memory(tmp_path, "tiny64", args + ["swarm.rounds=2", "run.eval_every=2", "swarm.nodes=64"], 64)
    assert len(pairs) == 64
    assert_close(pairs, "the smallest model at 64 ranks")
