"""`sapo pretrain` for the llama family (src/cli/cmd_pretrain.c, rl/sft.c): the format warm-up
trains a Hugging Face model's token ids and its checkpoint serves `sapo run`.

On a tiny random Llama directory of tests/reference/hf_tiny.py (2 layers, hidden 64, a
300-token byte-level BPE tokenizer.json with <|im_end|>), a few dozen steps at a high lr on
basic_arithmetic (preset tiny):
  - the demonstration loss, measured outside pretrain by `sapo lm logprobs` on demonstrations
    of other questions (framed as the nodes frame them: the ChatML conversation with the
    system prompt, then "<answer>ANSWER</answer>" and <|im_end|>), falls to under a third of
    the random model's; the end of turn after </answer> is learnt (p > 0.5), so a warm-up that
    drops the end token fails here; the prompt tokens' ids are sapo's own (`sapo lm tokenize`);
  - the checkpoint is version 2, the held-out table shows the tags in most answers, and a
    warm-up continued from it (model.init, 0 steps) writes the same parameters;
  - `sapo run` (1 rank, 2 rounds) loads it on top of the same model.hf_dir, and its format
    rate is that of a warmed-up model;
  - bad llama settings are one line, exit 2, before any training step.
"""
import json
import os
import re
import struct
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
h5py = pytest.importorskip("h5py")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_tiny  # noqa: E402

SOURCE_DIR = os.environ.get("SAPO_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("SAPO_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
SAPO = os.environ.get("SAPO_BIN") or os.path.join(BUILD_DIR, "sapo")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")

# The system message of src/model/prompt_codec.h (PROMPT_CODEC_SYSTEM) and chat_prompt.c's ChatML.
SYSTEM = ("You are a helpful assistant. Solve the user's problem and give only the final answer inside "
          "<answer> </answer> tags, for example <answer>42</answer>.")
N_CTX, MAX_NEW = 256, 32
TASK = ["tasks.names=basic_arithmetic", "tasks.preset=tiny"]


def chatml(question):
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{question}\n<|im_end|>\n"
            "<|im_start|>assistant\n")


def sapo(args, timeout=240, mpi=False):
    assert os.access(SAPO, os.X_OK), f"{SAPO} is not built"
    cmd = (["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "1"] if mpi else []) + [SAPO] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)


def settings(model_dir):
    return ["model.family=llama", f"model.hf_dir={model_dir}", f"model.n_ctx={N_CTX}",
            f"gen.max_new_tokens={MAX_NEW}"] + TASK


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """The tiny model, and the warm-up's output and checkpoint."""
    root = tmp_path_factory.mktemp("pretrain_llama")
    model_dir = str(root / "tiny")
    hf_tiny.save("llama-untied", model_dir)
    ckpt = str(root / "warm.ckpt")
    r = sapo(["pretrain"] + settings(model_dir) +
             ["pretrain.steps=40", "pretrain.batch=8", "pretrain.lr=3e-3", "run.eval_questions=16",
              "--out", ckpt])
    assert r.returncode == 0, f"sapo pretrain exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return dict(root=root, dir=model_dir, ckpt=ckpt, out=r.stdout)


def tokenize(tokenizer_json, texts):
    r = subprocess.run([SAPO, "lm", "tokenize", "--tokenizer", tokenizer_json],
                       input="".join(json.dumps(t) + "\n" for t in texts), capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def demo_logprobs(model_dir, tokenizer_json, entries):
    """Per demonstration, the log-probs of "<answer>ANSWER</answer>" then <|im_end|> after the
    node's chat prompt, from `sapo lm logprobs`."""
    prompts = tokenize(tokenizer_json, [chatml(e["question"]) for e in entries])
    answers = tokenize(tokenizer_json, [f"<answer>{e['answer']}</answer>" for e in entries])
    end = tokenize(tokenizer_json, ["<|im_end|>"])[0]
    assert len(end) == 1
    lines = "".join(json.dumps({"prompt": p[-(N_CTX - MAX_NEW):], "completions": [a + end]}) + "\n"
                    for p, a in zip(prompts, answers))
    r = subprocess.run([SAPO, "lm", "logprobs", "--model", model_dir, "--n-ctx", str(N_CTX)], input=lines,
                       capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    return [json.loads(line)["logprobs"][0] for line in r.stdout.splitlines()]


def test_demonstration_loss_falls_and_end_token_is_learnt(warm):
    steps = [l for l in warm["out"].splitlines() if l.startswith("step ")]
    assert steps and steps[-1].startswith("step     40/40"), warm["out"]
    head = [l for l in warm["out"].splitlines() if l.startswith("sapo pretrain: 40 steps")]
    assert head and f"model {warm['dir']}: 2 layers, d_model 64, n_ctx {N_CTX}" in head[0], warm["out"]
    # demonstrations of questions the warm-up did not draw (another seed)
    r = sapo(["tasks", "gen", "basic_arithmetic", "--preset", "tiny", "--seed", "987654", "--count", "12"])
    assert r.returncode == 0, r.stderr
    entries = [json.loads(line) for line in r.stdout.splitlines()]
    tok = os.path.join(warm["dir"], "tokenizer.json")
    before = demo_logprobs(warm["dir"], tok, entries)
    export = str(warm["root"] / "export")
    r = sapo(["export", "--ckpt", warm["ckpt"], "--out", export, "--tokenizer-from", warm["dir"]])
    assert r.returncode == 0, r.stderr
    after = demo_logprobs(export, tok, entries)
    nll = lambda lps: -sum(sum(x) for x in lps) / sum(len(x) for x in lps)  # noqa: E731
    b, a = nll(before), nll(after)
    print(f"demonstration NLL per token: random model {b:.3f}, after the warm-up {a:.3f}")
    assert b > 4.0, f"the random model already knows the demonstrations? NLL {b:.3f}"
    assert a < b / 3, f"the warm-up did not learn its demonstrations: NLL {b:.3f} -> {a:.3f}"
    end = sum(x[-1] for x in after) / len(after)
    print(f"mean log p(<|im_end|> | ... </answer>) after the warm-up: {end:.3f}")
    assert end > -0.69, f"the end of turn after </answer> is not learnt: mean log-prob {end:.3f}"


def test_checkpoint_version_and_eval_table(warm):
    with open(warm["ckpt"], "rb") as f:
        head = f.read(12)
    assert head[:8] == b"SAPOGPT1" and struct.unpack("<I", head[8:12])[0] == 2, head
    row = re.search(r"^\s+basic_arithmetic\s+([0-9.]+)\s+\(answer tags in\s+([0-9.]+)%, 16 questions\)",
                    warm["out"], re.M)
    assert row, warm["out"]
    assert float(row.group(2)) >= 75.0, f"the held-out answers rarely hold the tags:\n{warm['out']}"
    # model.init continues from the warm-up (on top of model.hf_dir): after 0 more steps, the
    # same parameters (the header differs in the step only)
    again = str(warm["root"] / "again.ckpt")
    r = sapo(["pretrain"] + settings(warm["dir"]) + ["pretrain.steps=0", "run.eval_questions=0",
                                                     f"model.init={warm['ckpt']}", "--out", again])
    assert r.returncode == 0, r.stderr
    with open(warm["ckpt"], "rb") as f, open(again, "rb") as g:
        x, y = f.read(), g.read()
    assert len(x) == len(y) and x[:40] == y[:40] and x[48:] == y[48:], "model.init did not load the warm-up"


def test_run_loads_the_checkpoint(warm):
    out = warm["root"] / "run"
    base = settings(warm["dir"]) + ["swarm.rounds=2", "sampling.groups=2", "sampling.local=2", "sampling.external=0",
                                    "grpo.completions=4", "run.eval_every=1", "run.eval_questions=4",
                                    "optim.lr=1e-5", "--quiet"]
    r = sapo(["run"] + base + [f"model.init={warm['ckpt']}", "--out", str(out)], mpi=True)
    assert r.returncode == 0, f"sapo run exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    with h5py.File(out / "node_0000.h5", "r") as f:
        rate = f["format_rate"][:]
    assert len(rate) == 2 and rate.mean() >= 0.75, f"format rate {rate} after the warm-up"
    # the same model without the warm-up never writes the tags
    cold = warm["root"] / "cold"
    r = sapo(["run"] + base + ["--out", str(cold)], mpi=True)
    assert r.returncode == 0, r.stderr
    with h5py.File(cold / "node_0000.h5", "r") as f:
        assert f["format_rate"][:].max() == 0.0


def test_bad_llama_settings_are_one_line(warm, tmp_path):
    ok = ["pretrain.steps=2", "pretrain.batch=2", "run.eval_questions=0", "--out", str(tmp_path / "x.ckpt")]
    empty = tmp_path / "empty"
    empty.mkdir()
    notok = tmp_path / "notok"
    notok.mkdir()
    for f in ("config.json", "model.safetensors"):
        os.symlink(os.path.join(warm["dir"], f), notok / f)
    cases = [
        (["model.family=llama"] + TASK, "sapo pretrain: config error: model.family = llama needs model.hf_dir"),
        (settings(str(empty)), "sapo pretrain: config error: model.hf_dir: "),
        (settings(str(notok)), f"sapo pretrain: config error: model.hf_dir {notok} has no tokenizer.json"),
        (settings(warm["dir"]) + ["gen.max_new_tokens=250"], "sapo pretrain: config error: model.n_ctx = 256 leaves"),
    ]
    for args, want in cases:
        r = sapo(["pretrain"] + args + ok)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(want), (args, r.returncode, r.stderr)
        assert "step " not in r.stdout and not (tmp_path / "x.ckpt").exists()
