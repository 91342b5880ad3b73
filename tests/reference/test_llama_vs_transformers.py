"""sapo's Llama/Qwen2 family against Hugging Face transformers (4.49, float32, eager attention).

On tiny random models (tests/reference/hf_tiny.py: Qwen2 tied / untied bfloat16 / head_dim 32,
Llama untied / tied with q/k/v/o biases and head_dim 24):
  - `sapo lm logprobs --model DIR` on several groups, each a prompt with completions of
    different lengths, against transformers on each [prompt + completion] alone: 1e-4;
  - tests/tool_llama_dump (one packed batch, loss = sum of logprob * dlogprob over the
    completion tokens): its log-probs (1e-4) and every gradient tensor, in HF names and
    shapes, against torch autograd: 1e-5 + 1e-3 * max|grad| per tensor.
On SmolLM2-135M-Instruct (scripts/get-model.sh smollm2-135m-instruct; marked `smollm2`,
about a minute on 2 cores, the first run also downloads 93 MB and converts):
  - transformers' own greedy answer to the ChatML prompt for "What is the capital of France?"
    (checks the GGUF conversion);
  - `sapo lm logprobs` on task prompts and completions against transformers: 1e-3;
  - `sapo lm generate --chat ... --greedy` answers "The capital of France is Paris".
A missing binary, tool or subcommand fails the test; nothing here is skipped.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_tiny  # noqa: E402
from test_model_vs_torch import read_dump  # noqa: E402

SOURCE_DIR = os.environ.get("SAPO_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("SAPO_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
SAPO_BIN = os.environ.get("SAPO_BIN") or os.path.join(BUILD_DIR, "sapo")
DUMP_TOOL = os.path.join(BUILD_DIR, "tests", "tool_llama_dump")

LOGPROB_TOL = 1e-4
SMOLLM2_LOGPROB_TOL = 1e-3

torch.set_num_threads(min(2, os.cpu_count() or 1))


def run(cmd, timeout=300, **kw):
    """Runs cmd; a missing program or a non-zero exit fails the test with its stderr."""
    assert os.path.isfile(cmd[0]) and os.access(cmd[0], os.X_OK), f"{cmd[0]} is not built"
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert r.returncode == 0, (f"{' '.join(cmd)} exited {r.returncode} after {time.time() - t0:.1f} s\n"
                               f"stderr:\n{r.stderr[-4000:]}")
    return r.stdout


def report(name, diff, tol):
    print(f"{name:56s} max abs diff {diff:.3e} (tolerance {tol:.1e})")
    assert diff <= tol, f"{name}: max abs diff {diff:.3e} > {tol:.1e}"


# ---------------------------------------------------------------- the torch reference

def completion_logprobs(model, prompt, completion):
    """log p(completion[i] | prompt, completion[:i]) for each i, by one forward of the whole
    sequence alone, as a float32 tensor (differentiable)."""
    ids = torch.tensor([list(prompt) + list(completion)], dtype=torch.long)
    logits = model(ids, use_cache=False).logits[0].float()
    n = len(prompt)
    lp = torch.log_softmax(logits[n - 1:n - 1 + len(completion)], dim=-1)
    return lp.gather(1, torch.tensor(completion, dtype=torch.long)[:, None])[:, 0]


def reference_logprobs(model, groups):
    with torch.no_grad():
        return [[completion_logprobs(model, g["prompt"], c).numpy() for c in g["completions"]] for g in groups]


def make_groups(seed, vocab, n_groups=3, specials=()):
    """Groups of a prompt and completions of different lengths (one of length 1), with
    random token ids below `vocab`, and a random dlogprob for every completion token."""
    rng = np.random.default_rng(seed)
    groups = []
    for g in range(n_groups):
        prompt = rng.integers(0, vocab, size=int(rng.integers(3, 24))).tolist()
        lens = [1] + rng.integers(2, 18, size=int(rng.integers(1, 4))).tolist()
        rng.shuffle(lens)
        comps = [rng.integers(0, vocab, size=n).tolist() for n in lens]
        dlp = [rng.standard_normal(n).astype(np.float32).tolist() for n in lens]
        groups.append({"prompt": prompt, "completions": comps, "dlogprobs": dlp})
    return groups


def write_jsonl(path, groups, with_dlogprobs):
    with open(path, "w") as f:
        for g in groups:
            rec = {"prompt": g["prompt"], "completions": g["completions"]}
            if with_dlogprobs:
                rec["dlogprobs"] = g["dlogprobs"]
            f.write(json.dumps(rec) + "\n")


def sapo_logprobs(model_dir, groups, tmp, extra=()):
    path = os.path.join(tmp, "in.jsonl")
    write_jsonl(path, groups, with_dlogprobs=False)
    out = run([SAPO_BIN, "lm", "logprobs", "--model", model_dir, *extra, path])
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(lines) == len(groups), f"{len(lines)} output lines for {len(groups)} input lines"
    return [line["logprobs"] for line in lines]


def compare_logprobs(label, got, want, tol):
    worst = 0.0
    for gi, (g_got, g_want) in enumerate(zip(got, want)):
        assert len(g_got) == len(g_want), f"group {gi}: {len(g_got)} completions, want {len(g_want)}"
        for ci, (a, b) in enumerate(zip(g_got, g_want)):
            assert len(a) == len(b), f"group {gi} completion {ci}: {len(a)} log-probs, want {len(b)}"
            assert all(np.isfinite(a)), f"group {gi} completion {ci}: non-finite log-probs {a}"
            worst = max(worst, float(np.abs(np.asarray(a, dtype=np.float64) - b).max()))
    report(f"{label} log-probs", worst, tol)


# ---------------------------------------------------------------- tiny random models

@pytest.fixture(scope="module")
def tiny_dirs():
    with tempfile.TemporaryDirectory(prefix="sapo-hf-tiny-") as root:
        yield hf_tiny.save_all(root)


TINY = list(hf_tiny.SPECS)


@pytest.mark.parametrize("name", TINY)
def test_tiny_logprobs(tiny_dirs, name, tmp_path):
    model = hf_tiny.load(tiny_dirs[name])
    groups = make_groups(hf_tiny.SEEDS[name], model.config.vocab_size, n_groups=4)
    want = reference_logprobs(model, groups)
    got = sapo_logprobs(tiny_dirs[name], groups, str(tmp_path))
    compare_logprobs(name, got, want, LOGPROB_TOL)


@pytest.mark.parametrize("name", TINY)
def test_tiny_gradients(tiny_dirs, name, tmp_path):
    model = hf_tiny.load(tiny_dirs[name])
    groups = make_groups(hf_tiny.SEEDS[name] + 7, model.config.vocab_size, n_groups=3)
    inp = os.path.join(str(tmp_path), "in.jsonl")
    out = os.path.join(str(tmp_path), "dump.bin")
    write_jsonl(inp, groups, with_dlogprobs=True)
    run([DUMP_TOOL, tiny_dirs[name], inp, out])
    dump = read_dump(out)

    lps, loss = [], 0.0
    for g in groups:
        for comp, dlp in zip(g["completions"], g["dlogprobs"]):
            lp = completion_logprobs(model, g["prompt"], comp)
            lps.append(lp.detach().numpy())
            loss = loss + (lp * torch.tensor(dlp, dtype=torch.float32)).sum()
    loss.backward()

    assert "logprobs" in dump, f"dump has no logprobs (has {sorted(dump)[:8]})"
    want_lp = np.concatenate(lps)
    got_lp = dump["logprobs"].reshape(-1)
    assert got_lp.shape == want_lp.shape, f"logprobs: {got_lp.shape} values, want {want_lp.shape}"
    report(f"{name} dump log-probs", float(np.abs(got_lp - want_lp).max()), LOGPROB_TOL)

    params = dict(model.named_parameters())  # a tied lm_head is not listed: it is embed_tokens
    want_names = {"grad/" + n for n in params}
    got_names = {k for k in dump if k.startswith("grad/")}
    assert got_names == want_names, (f"gradient tensors differ: missing {sorted(want_names - got_names)}, "
                                     f"extra {sorted(got_names - want_names)}")
    failures = []
    for n, p in params.items():
        g_want = p.grad.detach().numpy()
        g_got = dump["grad/" + n]
        assert g_got.shape == g_want.shape, f"grad/{n}: shape {g_got.shape}, want {g_want.shape}"
        tol = 1e-5 + 1e-3 * float(np.abs(g_want).max())
        diff = float(np.abs(g_got - g_want).max())
        print(f"{name} grad/{n:44s} max abs diff {diff:.3e} (tolerance {tol:.1e})")
        if not diff <= tol:
            failures.append(f"grad/{n}: {diff:.3e} > {tol:.1e}")
    assert not failures, "; ".join(failures)


# ---------------------------------------------------------------- SmolLM2-135M-Instruct

FRANCE = "What is the capital of France?"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chatml(user, system=DEFAULT_SYSTEM):
    """The ChatML text of SmolLM2's chat template for one user message (the template puts
    its default system message first when the messages have none) and the generation
    prompt."""
    head = f"<|im_start|>system\n{system}<|im_end|>\n" if system is not None else ""
    return f"{head}<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def smollm2_dir():
    env = dict(os.environ, SAPO_BUILD_DIR=BUILD_DIR)
    t0 = time.time()
    out = run(["/bin/bash", os.path.join(SOURCE_DIR, "scripts", "get-model.sh"), "smollm2-135m-instruct"],
              timeout=900, env=env).strip()
    print(f"get-model.sh smollm2-135m-instruct: {out} ({time.time() - t0:.1f} s)")
    assert os.path.isfile(os.path.join(out, "model.safetensors")), out
    return out


@pytest.fixture(scope="module")
def smollm2(smollm2_dir):
    from tokenizers import Tokenizer
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(smollm2_dir, torch_dtype=torch.float32,
                                             attn_implementation="eager").eval()
    tok = Tokenizer.from_file(os.path.join(smollm2_dir, "tokenizer.json"))
    return model, tok


def greedy(model, ids, max_new, stop):
    """Greedy decoding with the KV cache (transformers 4.49's generate() fails on torch 1.13)."""
    out, past, x = [], None, torch.tensor([ids], dtype=torch.long)
    with torch.no_grad():
        for _ in range(max_new):
            r = model(x, past_key_values=past, use_cache=True)
            past = r.past_key_values
            nxt = int(r.logits[0, -1].argmax())
            if nxt in stop:
                break
            out.append(nxt)
            x = torch.tensor([[nxt]], dtype=torch.long)
    return out


@pytest.mark.smollm2
def test_smollm2_transformers_answers_paris(smollm2):
    model, tok = smollm2
    stop = {tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")}
    ids = tok.encode(chatml(FRANCE), add_special_tokens=False).ids
    assert ids[:3] == [1, 9690, 198], ids[:8]  # <|im_start|> system \n
    text = tok.decode(greedy(model, ids, 24, stop), skip_special_tokens=False)
    print(f"transformers greedy answer: {text!r}")
    assert "The capital of France is Paris" in text


SMOLLM2_CASES = [
    ("What is 17 + 25? Give only the number.", ["42", "The answer is 42.", "17 + 25 = 43"]),
    ("Convert the binary number 1011 to decimal.", ["11", "1011 in binary is 11 in decimal.\n"]),
    ("Simplify the fraction 6/8.", ["3/4", "<answer>3/4</answer>", "6/8 = 0.75"]),
]


@pytest.mark.smollm2
def test_smollm2_logprobs(smollm2_dir, smollm2, tmp_path):
    model, tok = smollm2
    end = "<|im_end|>"
    groups = []
    for q, answers in SMOLLM2_CASES:
        prompt = tok.encode(chatml(q), add_special_tokens=False).ids
        comps = [tok.encode(a + end, add_special_tokens=False).ids for a in answers]
        groups.append({"prompt": prompt, "completions": comps})
    t0 = time.time()
    want = reference_logprobs(model, groups)
    print(f"transformers: {sum(len(g['completions']) for g in groups)} forwards in {time.time() - t0:.1f} s")
    t0 = time.time()
    got = sapo_logprobs(smollm2_dir, groups, str(tmp_path))
    print(f"sapo lm logprobs: {time.time() - t0:.1f} s")
    compare_logprobs("smollm2", got, want, SMOLLM2_LOGPROB_TOL)


@pytest.mark.smollm2
def test_smollm2_generate_paris(smollm2_dir):
    t0 = time.time()
    out = run([SAPO_BIN, "lm", "generate", "--model", smollm2_dir, "--chat", FRANCE, "--max-new", "24",
               "--greedy"])
    print(f"sapo lm generate ({time.time() - t0:.1f} s): {out!r}")
    assert "The capital of France is Paris" in out
