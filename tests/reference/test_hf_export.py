"""Hugging Face directories through sapo and back (model/hf_dir.c, io/safetensors.c), against
transformers 4.49.

For each tiny random model of tests/reference/hf_tiny.py (Qwen2 tied / untied in bfloat16 /
head_dim 32, Llama untied / tied with q/k/v/o biases and head_dim 24, biases and norms
perturbed), and for one saved as several safetensors shards:
  - tests/tool_hf_roundtrip reads it (hf_config_read, hf_load_weights): the logits of its
    forward are transformers' within 1e-4, so each tensor landed where the model reads it;
    it writes a sapo checkpoint and exports it (hf_export); `sapo export --ckpt` writes the
    same directory;
  - transformers loads the export as the same class and config, every tensor equal bit for
    bit to the original's (in float32), the logits equal bit for bit;
  - the export's model.safetensors equals, byte for byte, what transformers' save_pretrained
    writes for the same model in float32; the tokenizer files are copied unchanged.
Bad input gives a one-line error and exit 2: an unsupported architecture, a missing tensor,
a tensor of the wrong shape, a byte_gpt checkpoint given to `sapo export`.
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
from safetensors.torch import load_file, save_file  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_tiny  # noqa: E402

SOURCE_DIR = os.environ.get("SAPO_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("SAPO_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
SAPO_BIN = os.environ.get("SAPO_BIN") or os.path.join(BUILD_DIR, "sapo")
TOOL = os.path.join(BUILD_DIR, "tests", "tool_hf_roundtrip")

LOGIT_TOL = 1e-4  # sapo's float32 forward against transformers' (tests/reference/test_llama_vs_transformers.py)

torch.set_num_threads(min(2, os.cpu_count() or 1))

CONFIG_KEYS = ["model_type", "architectures", "hidden_size", "intermediate_size", "num_hidden_layers",
               "num_attention_heads", "num_key_value_heads", "rms_norm_eps", "rope_theta", "rope_scaling",
               "vocab_size", "tie_word_embeddings", "max_position_embeddings", "hidden_act", "bos_token_id",
               "eos_token_id"]


def run(cmd, expect_rc=0):
    for exe in cmd[:1]:
        assert os.path.isfile(exe) and os.access(exe, os.X_OK), f"{exe} is not built"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == expect_rc, f"{' '.join(cmd)} exited {r.returncode}, want {expect_rc}\nstderr:\n{r.stderr}"
    return r


def one_line_error(r, *fragments):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, f"want one line on stderr, got {len(lines)}:\n{r.stderr}"
    for f in fragments:
        assert f in lines[0], f"error {lines[0]!r} lacks {f!r}"
    return lines[0]


def same_bits(a, b):
    """Tensors equal bit for bit (so -0.0 and NaN payloads count too)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.contiguous().view(torch.int32),
                                                                      b.contiguous().view(torch.int32))


@pytest.fixture(scope="module")
def root():
    with tempfile.TemporaryDirectory(prefix="sapo-hf-export-") as d:
        yield d


@pytest.fixture(scope="module")
def tiny_dirs(root):
    dirs = hf_tiny.save_all(os.path.join(root, "src"))
    # one more: a model saved as several shards with an index
    sharded = os.path.join(root, "src", "qwen2-sharded")
    model = hf_tiny.build("qwen2-headdim32", seed=77)
    model.save_pretrained(sharded, safe_serialization=True, max_shard_size="100KB")
    shutil.copy(os.path.join(dirs["qwen2-headdim32"], "tokenizer.json"), sharded)
    assert os.path.exists(os.path.join(sharded, "model.safetensors.index.json"))
    assert not os.path.exists(os.path.join(sharded, "model.safetensors"))
    dirs["qwen2-sharded"] = sharded
    return dirs


NAMES = list(hf_tiny.SPECS) + ["qwen2-sharded"]


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(tiny_dirs, root, name):
    src = tiny_dirs[name]
    out = os.path.join(root, "out", name)
    ckpt = os.path.join(root, "out", name + ".ckpt")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    ids = torch.randint(0, 300, (1, 23), generator=torch.Generator().manual_seed(5))
    logits_file = os.path.join(root, "out", name + ".logits")
    run([TOOL, src, out, src, ckpt, ",".join(str(i) for i in ids[0].tolist()), logits_file])

    orig = hf_tiny.load(src)
    # every HF tensor where sapo's forward reads it: its logits are transformers' (float32)
    with torch.no_grad():
        want_logits = orig(ids).logits[0]
    sapo_logits = torch.from_numpy(np.fromfile(logits_file, dtype=np.float32)).reshape(want_logits.shape)
    diff = float((sapo_logits - want_logits).abs().max())
    print(f"{name}: sapo vs transformers logits max abs diff {diff:.2e}")
    assert diff <= LOGIT_TOL, f"{name}: sapo's logits differ from transformers' by {diff:.2e} > {LOGIT_TOL}"

    back = hf_tiny.load(out)
    assert type(back) is type(orig), f"exported as {type(back).__name__}, the original is {type(orig).__name__}"
    for k in CONFIG_KEYS:
        assert getattr(back.config, k, None) == getattr(orig.config, k, None), \
            f"config {k}: {getattr(back.config, k, None)!r} != {getattr(orig.config, k, None)!r}"
    hd = lambda c: getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads  # noqa: E731
    assert hd(back.config) == hd(orig.config)
    assert getattr(back.config, "attention_bias", False) == getattr(orig.config, "attention_bias", False)

    want, got = orig.state_dict(), back.state_dict()
    assert sorted(got) == sorted(want), f"tensors differ: {sorted(set(got) ^ set(want))}"
    for k in want:
        assert same_bits(got[k], want[k]), f"tensor {k} differs"

    ids = torch.randint(0, orig.config.vocab_size, (2, 19), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        assert torch.equal(orig(ids).logits, back(ids).logits), "logits differ"

    # the same file transformers itself writes for this model in float32
    ref = os.path.join(root, "ref", name)
    orig.save_pretrained(ref, safe_serialization=True)
    assert filecmp.cmp(os.path.join(ref, "model.safetensors"), os.path.join(out, "model.safetensors"),
                       shallow=False), "model.safetensors differs from transformers' own"
    for f in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if os.path.exists(os.path.join(src, f)):
            assert filecmp.cmp(os.path.join(src, f), os.path.join(out, f), shallow=False), f"{f} not copied"

    # `sapo export` from the checkpoint writes the same directory
    cli = os.path.join(root, "cli", name)
    run([SAPO_BIN, "export", "--ckpt", ckpt, "--out", cli, "--tokenizer-from", src])
    for f in sorted(os.listdir(out)):
        assert filecmp.cmp(os.path.join(out, f), os.path.join(cli, f), shallow=False), f"sapo export: {f} differs"
    assert sorted(os.listdir(cli)) == sorted(os.listdir(out))


def copy_dir(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def test_unsupported_architecture(tiny_dirs, root):
    d = copy_dir(tiny_dirs["llama-untied"], os.path.join(root, "bad", "gpt2"))
    cfg = json.load(open(os.path.join(d, "config.json")))
    cfg["architectures"] = ["GPT2LMHeadModel"]
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    r = run([TOOL, d, "-"], expect_rc=2)
    one_line_error(r, "config.json: architecture 'GPT2LMHeadModel' is not supported "
                      "(expected LlamaForCausalLM or Qwen2ForCausalLM)")


@pytest.mark.parametrize("what", ["missing", "shape", "extra"])
def test_bad_tensors(tiny_dirs, root, what):
    d = copy_dir(tiny_dirs["qwen2-tied"], os.path.join(root, "bad", what))
    path = os.path.join(d, "model.safetensors")
    tensors = load_file(path)
    name = "model.layers.1.mlp.up_proj.weight"
    if what == "missing":
        del tensors[name]
        fragments = ["model.safetensors: no tensor " + name]
    elif what == "shape":
        tensors[name] = tensors[name][:, :32].contiguous()
        fragments = [f"model.safetensors: tensor {name} has shape [96, 32], expected [96, 64]"]
    else:
        tensors["model.layers.0.self_attn.o_proj.bias"] = torch.zeros(64)
        fragments = ["tensor model.layers.0.self_attn.o_proj.bias has no place in the model"]
    save_file(tensors, path, metadata={"format": "pt"})
    out = os.path.join(root, "bad", what + "-out")
    r = run([TOOL, d, out], expect_rc=2)
    one_line_error(r, *fragments)
    assert not os.path.exists(out), "a failed load exported something"


def test_export_refuses_byte_gpt(root):
    ckpt = os.path.join(root, "byte_gpt.ckpt")
    run([TOOL, "--byte-gpt-ckpt", ckpt])
    out = os.path.join(root, "bad", "byte_gpt-out")
    r = run([SAPO_BIN, "export", "--ckpt", ckpt, "--out", out], expect_rc=2)
    one_line_error(r, "export: the byte_gpt family has no Hugging Face form; only llama-family checkpoints export")
    assert not os.path.exists(out)


def test_export_usage(root):
    r = run([SAPO_BIN, "export", "--help"])
    assert "usage: sapo export --ckpt MODEL --out DIR" in r.stdout
    r = run([SAPO_BIN, "export", "--ckpt", os.path.join(root, "none.ckpt"), "--out", os.path.join(root, "x")],
            expect_rc=2)
    one_line_error(r, "none.ckpt")
    r = run([SAPO_BIN, "export", "--ckpt", "a.ckpt"], expect_rc=2)
    assert "--out" in r.stderr
