"""Tiny random Hugging Face models of the Llama/Qwen2 family, for the tests that compare sapo
with transformers (a helper module, not a test).

Each spec in SPECS is a shape (hidden 64, 2 layers, 4 heads, 2 kv heads, intermediate 96,
vocab 300, 256 positions) with one family's options: Qwen2 with q/k/v biases, tied or not,
one saved in bfloat16; Llama untied, and Llama tied with attention_bias (q/k/v/o biases) and
head_dim != hidden / heads. HF initialises biases to 0 and RMSNorm weights to 1, which would
hide a wrong index in either: every bias is drawn from N(0, 0.1) and every norm weight from
1 + 0.1 N(0, 1), from a fixed seed. save(name, dir) writes config.json, model.safetensors
(safe_serialization) and a small byte-level BPE tokenizer.json, so the directory looks like
a real model's.

Run as a script to write them all: python hf_tiny.py OUT_DIR [NAME ...]
"""
import json
import os
import sys

import torch

COMMON = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=96, vocab_size=300, max_position_embeddings=256,
              initializer_range=0.1, pad_token_id=None, bos_token_id=297, eos_token_id=299)

SPECS = {
    # Qwen2 (q/k/v biases, no o bias), tied output layer.
    "qwen2-tied": dict(family="qwen2", tie_word_embeddings=True, rope_theta=1e6, rms_norm_eps=1e-6),
    # Qwen2 untied, config and tensors in bfloat16.
    "qwen2-untied-bf16": dict(family="qwen2", tie_word_embeddings=False, rope_theta=10000.0,
                              rms_norm_eps=1e-6, dtype=torch.bfloat16),
    # Qwen2 untied with head_dim 32 (query width 128 != hidden 64).
    "qwen2-headdim32": dict(family="qwen2", tie_word_embeddings=False, rope_theta=1e6,
                            rms_norm_eps=1e-6, head_dim=32),
    # Llama untied, no biases.
    "llama-untied": dict(family="llama", tie_word_embeddings=False, rope_theta=10000.0, rms_norm_eps=1e-5),
    # Llama tied with attention_bias (q, k, v and o biases) and head_dim 24.
    "llama-tied-bias": dict(family="llama", tie_word_embeddings=True, rope_theta=1e6, rms_norm_eps=1e-5,
                            attention_bias=True, head_dim=24),
}

SEEDS = {name: 1000 + i for i, name in enumerate(SPECS)}


def config(name):
    from transformers import LlamaConfig, Qwen2Config

    spec = dict(SPECS[name])
    family = spec.pop("family")
    spec.pop("dtype", None)
    kw = dict(COMMON, **spec)
    if family == "qwen2":
        # transformers 4.49's Qwen2 sliding window is off unless asked for; say so explicitly.
        return Qwen2Config(use_sliding_window=False, sliding_window=None, max_window_layers=kw["num_hidden_layers"],
                           **kw)
    return LlamaConfig(mlp_bias=False, **kw)


def build(name, seed=None):
    """The model of spec `name` in float32 (eager attention), with perturbed biases and norms."""
    from transformers import LlamaForCausalLM, Qwen2ForCausalLM

    cfg = config(name)
    cfg._attn_implementation = "eager"
    torch.manual_seed(SEEDS[name] if seed is None else seed)
    cls = Qwen2ForCausalLM if SPECS[name]["family"] == "qwen2" else LlamaForCausalLM
    model = cls(cfg).float().eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith(".bias"):
                p.normal_(0.0, 0.1)
            elif "norm" in pname:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
    return model


def tokenizer_json(vocab_size=300):
    """A byte-level BPE tokenizer: the 256 byte symbols, merges up to vocab_size - 3, then
    <|endoftext|>, <|im_start|>, <|im_end|> as specials (ids vocab_size - 3 .. - 1)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    sym = {b: chr(c) for b, c in zip(bs, cs)}
    vocab = {sym[b]: b for b in range(256)}
    merges = []
    words = ["Ġthe", "Ġand", "ing", "Ġis", "Ġof", "Ġto", "er", "an", "Ġa", "Ġt", "he", "in", "on", "at", "en",
             "Ġs", "Ġc", "or", "es", "Ġw", "ed", "Ġp", "it", "al", "ar", "re", "Ġf", "Ġb", "ou", "Ġm"]
    for w in words:
        # Build each word left to right from tokens already in the vocabulary.
        cur = w[0]
        for ch in w[1:]:
            nxt = cur + ch
            if nxt not in vocab:
                if len(vocab) >= vocab_size - 3:
                    break
                merges.append(f"{cur} {ch}")
                vocab[nxt] = len(vocab)
            cur = nxt
    letters = "etaoinshrdlucmfwyp"
    pairs = ((a, b) for a in letters for b in letters)
    while len(vocab) < vocab_size - 3:  # fill up with two-letter merges
        a, b = next(pairs)
        if a + b not in vocab:
            merges.append(f"{a} {b}")
            vocab[a + b] = len(vocab)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    added = []
    for s in specials:
        vocab[s] = len(vocab)
        added.append({"id": vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True})
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": bl,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def save(name, directory, seed=None):
    """Writes model `name` to `directory`; returns the float32 model it saved (before any
    bfloat16 rounding: load the directory again to get what the files hold)."""
    model = build(name, seed)
    os.makedirs(directory, exist_ok=True)
    dtype = SPECS[name].get("dtype", torch.float32)
    out = model if dtype == torch.float32 else build(name, seed).to(dtype)
    out.config.torch_dtype = dtype
    out.save_pretrained(directory, safe_serialization=True)
    tj = tokenizer_json(COMMON["vocab_size"])
    assert len(tj["model"]["vocab"]) == COMMON["vocab_size"]
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False, indent=1)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|im_end|>",
                   "unk_token": "<|endoftext|>", "model_max_length": COMMON["max_position_embeddings"],
                   "tokenizer_class": "GPT2Tokenizer", "clean_up_tokenization_spaces": False}, f, indent=1)
    return model


def load(directory):
    """The saved model as transformers reads it, in float32, eager attention."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(directory, torch_dtype=torch.float32,
                                                attn_implementation="eager").eval()


def save_all(root, names=None):
    """Writes every spec (or `names`) under root/NAME; returns {name: directory}."""
    dirs = {}
    for name in names or SPECS:
        dirs[name] = os.path.join(root, name)
        save(name, dirs[name])
    return dirs


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nspecs: " + ", ".join(SPECS))
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    for n, d in save_all(sys.argv[1], sys.argv[2:] or None).items():
        print(f"{n}: {d}")
