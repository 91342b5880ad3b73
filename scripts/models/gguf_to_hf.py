#!/usr/bin/env python3
"""Converts a Llama-architecture GGUF file (llama.cpp's format) into a Hugging Face model
directory that sapo and transformers both read: config.json, model.safetensors (float32,
HF tensor names), tokenizer.json rebuilt from the GGUF's byte-level BPE metadata,
tokenizer_config.json and generation_config.json.

Quantised tensors are dequantised with the gguf package (llama.cpp's own reader). llama.cpp
stores the q and k projections with the rows of each head permuted for its interleaved
RoPE; they are permuted back to HF's rotate-half layout. The output is written to a
temporary directory beside OUT and renamed into place, so OUT is either absent, the old
one, or complete.

Usage: gguf_to_hf.py GGUF OUT [--set KEY=JSON ...]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np


def log(msg):
    print(f"gguf_to_hf: {msg}", file=sys.stderr, flush=True)


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents()


# GGUF tensor name (after "blk.N.") -> HF name (after "model.layers.N.")
LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.bias": "self_attn.o_proj.bias",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
GLOBAL_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def hf_name(gguf_name):
    if gguf_name in GLOBAL_NAMES:
        return GLOBAL_NAMES[gguf_name]
    if gguf_name.startswith("blk."):
        _, layer, rest = gguf_name.split(".", 2)
        if rest in LAYER_NAMES:
            return f"model.layers.{int(layer)}.{LAYER_NAMES[rest]}"
    raise ValueError(f"GGUF tensor {gguf_name!r} has no HF counterpart in this converter")


def unpermute_rope(w, n_heads):
    """llama.cpp's rows of one projection (n_heads * hd, ...) back to HF's layout: within each
    head llama.cpp holds the pairs (x[i], x[i + hd/2]) next to each other."""
    rows = w.shape[0]
    hd = rows // n_heads
    assert hd * n_heads == rows and hd % 2 == 0, (w.shape, n_heads)
    rest = w.shape[1:]
    return np.ascontiguousarray(w.reshape(n_heads, hd // 2, 2, *rest).swapaxes(1, 2).reshape(w.shape))


def read_tensors(reader, n_head, n_kv):
    import gguf

    out = {}
    for t in reader.tensors:
        name = hf_name(t.name)
        # GGUF shapes are innermost-first; numpy's (and HF's) are outermost-first.
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        if t.tensor_type == gguf.GGMLQuantizationType.F32:
            arr = np.array(t.data, dtype=np.float32)
        else:
            arr = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32, copy=False)
        arr = arr.reshape(shape)
        if name.endswith("q_proj.weight") or name.endswith("q_proj.bias"):
            arr = unpermute_rope(arr, n_head)
        elif name.endswith("k_proj.weight") or name.endswith("k_proj.bias"):
            arr = unpermute_rope(arr, n_kv)
        out[name] = np.ascontiguousarray(arr, dtype=np.float32)
    return out


def build_config(reader, tensors, tok):
    arch = field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"general.architecture is {arch!r}; only 'llama' is converted")
    C = int(field(reader, "llama.embedding_length"))
    n_head = int(field(reader, "llama.attention.head_count"))
    n_kv = int(field(reader, "llama.attention.head_count_kv", n_head))
    head_dim = int(field(reader, "llama.rope.dimension_count", C // n_head))
    vocab = int(field(reader, "llama.vocab_size", len(tok["tokens"])))
    tied = "lm_head.weight" not in tensors
    # rms_norm_eps is stored as float32 in GGUF (9.9999997e-06): give the decimal it came from.
    eps = float(np.float32(field(reader, "llama.attention.layer_norm_rms_epsilon")))
    eps = float(f"{eps:.6g}")
    theta = float(field(reader, "llama.rope.freq_base", 10000.0))
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": "model.layers.0.self_attn.q_proj.bias" in tensors,
        "attention_dropout": 0.0,
        "bos_token_id": tok["bos_id"],
        "eos_token_id": tok["eos_id"],
        "head_dim": head_dim,
        "hidden_act": "silu",
        "hidden_size": C,
        "initializer_range": 0.02,
        "intermediate_size": int(field(reader, "llama.feed_forward_length")),
        "max_position_embeddings": int(field(reader, "llama.context_length")),
        "model_type": "llama",
        "num_attention_heads": n_head,
        "num_hidden_layers": int(field(reader, "llama.block_count")),
        "num_key_value_heads": n_kv,
        "pad_token_id": tok["pad_id"],
        "pretraining_tp": 1,
        "rms_norm_eps": eps,
        "rope_scaling": None,
        "rope_theta": int(theta) if theta.is_integer() else theta,
        "tie_word_embeddings": tied,
        "torch_dtype": "float32",
        "transformers_version": "4.49.0",
        "use_cache": True,
        "vocab_size": vocab,
    }
    if head_dim == C // n_head:
        # As the HF SmolLM2 files have it: head_dim implied by hidden_size / heads.
        del cfg["head_dim"]
    if cfg["pad_token_id"] is None:
        del cfg["pad_token_id"]
    return cfg


def read_tokenizer(reader):
    model = field(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise ValueError(f"tokenizer.ggml.model is {model!r}; only byte-level BPE ('gpt2') is converted")
    pre = field(reader, "tokenizer.ggml.pre", "default")
    tokens = list(field(reader, "tokenizer.ggml.tokens"))
    types = [int(x) for x in field(reader, "tokenizer.ggml.token_type")]
    merges = list(field(reader, "tokenizer.ggml.merges"))

    def tid(key):
        v = field(reader, key)
        return None if v is None else int(v)

    return {
        "pre": pre, "tokens": tokens, "types": types, "merges": merges,
        "bos_id": tid("tokenizer.ggml.bos_token_id"), "eos_id": tid("tokenizer.ggml.eos_token_id"),
        "unk_id": tid("tokenizer.ggml.unknown_token_id"), "pad_id": tid("tokenizer.ggml.padding_token_id"),
        "add_bos": bool(field(reader, "tokenizer.ggml.add_bos_token", False)),
        "chat_template": field(reader, "tokenizer.chat_template"),
    }


# llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
CONTROL, USER_DEFINED = 3, 4


def build_tokenizer_json(tok):
    if tok["pre"] not in ("smollm", "starcoder", "refact", "bloom", "gpt-2", "default"):
        # The pre-tokenizers below are those of SmolLM2/StarCoder (digits split one by one).
        raise ValueError(f"tokenizer.ggml.pre {tok['pre']!r} is not one this converter rebuilds")
    digits = tok["pre"] in ("smollm", "starcoder", "refact")
    added = []
    for i, (t, ty) in enumerate(zip(tok["tokens"], tok["types"])):
        if ty in (CONTROL, USER_DEFINED):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": ty == USER_DEFINED, "special": ty == CONTROL})
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    pre_tokenizer = ({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
                                                             byte_level]}
                     if digits else byte_level)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tok["tokens"])},
            "merges": tok["merges"],
        },
    }


def build_tokenizer_config(tok, tj, max_len):
    toks = tok["tokens"]

    def name(i):
        return None if i is None else toks[i]

    decoder = {str(a["id"]): {k: a[k] for k in ("content", "lstrip", "normalized", "rstrip",
                                                  "single_word", "special")}
               for a in tj["added_tokens"]}
    specials = [a["content"] for a in tj["added_tokens"] if a["special"]]
    cfg = {
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "additional_special_tokens": [s for s in specials if s in ("<|im_start|>", "<|im_end|>")],
        "bos_token": name(tok["bos_id"]),
        "chat_template": tok["chat_template"],
        "clean_up_tokenization_spaces": False,
        "eos_token": name(tok["eos_id"]),
        "model_max_length": max_len,
        "pad_token": name(tok["pad_id"]),
        "tokenizer_class": "GPT2Tokenizer",
        "unk_token": name(tok["unk_id"]),
        "vocab_size": len(toks),
    }
    return {k: v for k, v in cfg.items() if v is not None}


def check_tokenizer(path, tok):
    """Loads the rebuilt tokenizer.json with the tokenizers library and checks it on a few
    strings: it must round-trip text, keep the specials whole, and split digits."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        log("tokenizers is not installed: tokenizer.json not checked")
        return
    t = Tokenizer.from_file(path)
    if t.get_vocab_size() != len(tok["tokens"]):
        raise ValueError(f"tokenizer.json has {t.get_vocab_size()} tokens, GGUF {len(tok['tokens'])}")
    for text in ["Hello world! 12345 + 678 = ?\n\n  indented\tcode()", "naïve café — 東京 😀"]:
        ids = t.encode(text, add_special_tokens=False).ids
        back = t.decode(ids, skip_special_tokens=False)
        if back != text:
            raise ValueError(f"tokenizer.json does not round-trip {text!r}: {back!r}")
    ids = t.encode("12345", add_special_tokens=False).ids
    if tok["pre"] in ("smollm", "starcoder", "refact") and len(ids) != 5:
        raise ValueError(f"digits are not split one by one: {ids}")
    for i, (s, ty) in enumerate(zip(tok["tokens"], tok["types"])):
        if ty == CONTROL and t.encode(f"a{s}b", add_special_tokens=False).ids.count(i) != 1:
            raise ValueError(f"special token {s!r} is not kept whole")


def convert(gguf_path, out_dir, overrides=()):
    import gguf
    from safetensors.numpy import save_file

    t0 = time.time()
    reader = gguf.GGUFReader(gguf_path)
    tok = read_tokenizer(reader)
    n_head = int(field(reader, "llama.attention.head_count"))
    n_kv = int(field(reader, "llama.attention.head_count_kv", n_head))
    tensors = read_tensors(reader, n_head, n_kv)
    cfg = build_config(reader, tensors, tok)
    for key, value in overrides:
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    cfg = dict(sorted(cfg.items()))
    L = cfg["num_hidden_layers"]
    expect = {"model.embed_tokens.weight", "model.norm.weight"}
    for i in range(L):
        expect |= {f"model.layers.{i}.{n}" for n in LAYER_NAMES.values() if n.endswith(".weight")}
    if not cfg["tie_word_embeddings"]:
        expect.add("lm_head.weight")
    missing = expect - set(tensors)
    if missing:
        raise ValueError(f"GGUF lacks tensors: {sorted(missing)[:5]}")
    if tensors["model.embed_tokens.weight"].shape != (cfg["vocab_size"], cfg["hidden_size"]):
        raise ValueError(f"token_embd has shape {tensors['model.embed_tokens.weight'].shape}")
    log(f"read and dequantised {len(tensors)} tensors in {time.time() - t0:.1f} s")

    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(out_dir) + ".tmp-", dir=parent)
    try:
        save_file(tensors, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        del tensors
        tj = build_tokenizer_json(tok)
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        gen = {"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"],
               "transformers_version": "4.49.0"}
        if "pad_token_id" in cfg:
            gen["pad_token_id"] = cfg["pad_token_id"]
        with open(os.path.join(tmp, "generation_config.json"), "w") as f:
            json.dump(gen, f, indent=2)
            f.write("\n")
        with open(os.path.join(tmp, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, indent=2, ensure_ascii=False)
            f.write("\n")
        with open(os.path.join(tmp, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(build_tokenizer_config(tok, tj, cfg["max_position_embeddings"]), f, indent=2,
                      ensure_ascii=False)
            f.write("\n")
        check_tokenizer(os.path.join(tmp, "tokenizer.json"), tok)
        os.chmod(tmp, 0o755)
        for name in os.listdir(tmp):
            os.chmod(os.path.join(tmp, name), 0o644)
        if os.path.exists(out_dir):
            old = tempfile.mkdtemp(prefix="." + os.path.basename(out_dir) + ".old-", dir=parent)
            os.rename(out_dir, os.path.join(old, "d"))
            os.rename(tmp, out_dir)
            shutil.rmtree(old)
        else:
            os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"wrote {out_dir} in {time.time() - t0:.1f} s")


def main():
    ap = argparse.ArgumentParser(
        description="Convert a Llama-architecture GGUF (byte-level BPE tokenizer) into a Hugging Face "
                    "model directory: config.json, float32 model.safetensors, tokenizer.json, "
                    "tokenizer_config.json, generation_config.json. Writes to a temporary directory "
                    "beside OUT, then renames it to OUT (replacing an old OUT).")
    ap.add_argument("gguf", metavar="GGUF", help="the .gguf file")
    ap.add_argument("out", metavar="OUT", help="the model directory to write")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="set (or, with an empty value, remove) a config.json field the GGUF does not "
                         "carry, e.g. --set initializer_range=0.0416; repeatable")
    a = ap.parse_args()
    overrides = []
    for item in a.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            ap.error(f"--set wants KEY=JSON, not {item!r}")
        try:
            overrides.append((key, json.loads(value) if value else None))
        except json.JSONDecodeError:
            ap.error(f"--set {key}: {value!r} is not JSON")
    try:
        convert(a.gguf, a.out, overrides)
    except (ValueError, OSError, ImportError) as e:
        print(f"gguf_to_hf: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
