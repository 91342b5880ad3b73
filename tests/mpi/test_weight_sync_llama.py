"""Weight synchronisation with nodes of the Llama/Qwen2 family, on the CPU: a tiny random
Llama directory (hidden 32, 2 layers, the byte-level BPE tokenizer of tests/reference/hf_tiny.py)
written here with numpy alone, a 3-node swarm with DiLoCo at H = 1, outer_lr 1, momentum 0:
after every outer step every node holds the same weights (equal weights_digest), as with the
byte-level GPT (test_weight_sync.py); without sync they differ (node 1 steps at another
learning rate). A swarm of both families is refused with sync on."""
import json
import os
import struct
import sys

import numpy as np
import pytest

from conftest import column, mpirun

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
hf_tiny = pytest.importorskip(  # its tokenizer_json
    "hf_tiny", reason="tests/reference/hf_tiny.py imports torch, which is not installed here")

C, L, H, KV, F, V = 32, 2, 4, 2, 48, 300


def write_llama(d):
    """config.json, model.safetensors (float32, random) and tokenizer.json of a tiny Llama."""
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(38)
    hd = C // H
    t = {"model.embed_tokens.weight": (V, C), "model.norm.weight": (C,), "lm_head.weight": (V, C)}
    for l in range(L):
        p = f"model.layers.{l}."
        t.update({p + "self_attn.q_proj.weight": (H * hd, C), p + "self_attn.k_proj.weight": (KV * hd, C),
                  p + "self_attn.v_proj.weight": (KV * hd, C), p + "self_attn.o_proj.weight": (C, H * hd),
                  p + "mlp.gate_proj.weight": (F, C), p + "mlp.up_proj.weight": (F, C),
                  p + "mlp.down_proj.weight": (C, F), p + "input_layernorm.weight": (C,),
                  p + "post_attention_layernorm.weight": (C,)})
    header, blobs, at = {}, [], 0
    for name, shape in t.items():
        x = (1.0 + 0.1 * rng.standard_normal(shape) if "norm" in name else 0.1 * rng.standard_normal(shape))
        b = x.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    cfg = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=C, num_hidden_layers=L,
               num_attention_heads=H, num_key_value_heads=KV, intermediate_size=F, vocab_size=V,
               max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False,
               hidden_act="silu", attention_bias=False, mlp_bias=False, bos_token_id=297, eos_token_id=299,
               torch_dtype="float32")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(hf_tiny.tokenizer_json(V), f, ensure_ascii=False)
    return d


ARGS = ["model.family=llama", "model.n_ctx=160", "gen.max_new_tokens=16", "tasks.preset=tiny",
        "tasks.names=basic_arithmetic", "sampling.groups=2", "sampling.local=1", "sampling.external=1",
        "grpo.completions=4", "swarm.rounds=3", "run.eval_every=0", "run.checkpoint_every=0", "optim.lr=1e-2",
        "tasks.max_unanswerable=1", "sampling.filter=none", "net.transport=allgather", "model.micro_tokens=512",
        # a random model earns no reward, so no gradient: weight decay moves the weights, at a
        # learning rate of node 1's own, so the nodes part without sync
        "optim.weight_decay=0.1", "node.1.optim.lr=3e-2"]


def test_llama_nodes_average_their_weights(tmp_path):
    d = write_llama(str(tmp_path / "tiny-llama"))
    runs = {}
    for name, extra in (("none", []), ("h1", ["sync.method=diloco", "sync.every=1", "sync.outer_lr=1",
                                              "sync.outer_momentum=0"])):
        out = tmp_path / name
        mpirun(ARGS + [f"model.hf_dir={d}", "--out", str(out), "--quiet"] + extra, np_=3)
        runs[name] = np.array([column(out, k, "weights_digest") for k in range(3)])
    assert (runs["none"][:, -1] != runs["none"][0, -1]).any(), "the nodes never trained apart"
    h1 = runs["h1"]
    assert (h1 == h1[0]).all(), h1
    assert len(set(h1[0])) > 1, "the weights never moved"


def test_mixed_family_swarm_is_refused(tmp_path):
    d = write_llama(str(tmp_path / "tiny-llama"))
    out = tmp_path / "mixed"
    p = mpirun(ARGS + [f"model.hf_dir={d}", "node.1.model.family=byte_gpt", "sync.method=diloco", "--out", str(out),
                       "--quiet"], np_=3, check=False)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "one model family: node 0 is llama, node 1 is byte_gpt" in p.stdout + p.stderr, p.stdout + p.stderr
    assert not out.exists()
