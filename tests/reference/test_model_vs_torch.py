"""The C policy model against the same model written in PyTorch.

tool_model_dump (built from tests/reference/tool_model_dump.c) writes initial weights, a
batch, and the C model's logits, log-probs, masked loss, gradients and 5 AdamW steps. This
test builds the GPT in PyTorch from those weights and compares everything in float32.
Tolerances (stated in the README): logits and log-probs 2e-5 absolute, loss 1e-5,
gradients 1e-5 + 1e-3 * max|grad| per tensor, weights after 5 AdamW steps 1e-5.
"""
import os
import struct
import subprocess
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

TOK_PAD = 258
NAMES = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
         "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"]


def read_dump(path):
    arrays = {}
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        (n,) = struct.unpack_from("<I", data, off); off += 4
        name = data[off:off + n].decode(); off += n
        dtype = data[off]; off += 1
        (nd,) = struct.unpack_from("<I", data, off); off += 4
        dims = struct.unpack_from("<%dI" % nd, data, off); off += 4 * nd
        count = int(np.prod(dims))
        arr = np.frombuffer(data, dtype=np.int32 if dtype == 1 else np.float32, count=count, offset=off)
        off += 4 * count
        arrays[name] = arr.reshape(dims).copy()
    return arrays


def shapes(L, C, T, V):
    return {"wte": (V, C), "wpe": (T, C), "ln1w": (L, C), "ln1b": (L, C), "qkvw": (L, 3 * C, C),
            "qkvb": (L, 3 * C), "attprojw": (L, C, C), "attprojb": (L, C), "ln2w": (L, C), "ln2b": (L, C),
            "fcw": (L, 4 * C, C), "fcb": (L, 4 * C), "fcprojw": (L, C, 4 * C), "fcprojb": (L, C),
            "lnfw": (C,), "lnfb": (C,)}


def gpt_logits(p, inputs, L, NH):
    B, T = inputs.shape
    C = p["wte"].shape[1]
    x = p["wte"][inputs] + p["wpe"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l], eps=1e-5)
        qkv = h @ p["qkvw"][l].T + p["qkvb"][l]
        q, k, v = qkv.split(C, dim=2)
        q, k, v = (t.view(B, T, NH, C // NH).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (C // NH) ** 0.5
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p["attprojw"][l].T + p["attprojb"][l]
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l], eps=1e-5)
        h = F.gelu(h @ p["fcw"][l].T + p["fcb"][l], approximate="tanh")
        x = x + h @ p["fcprojw"][l].T + p["fcprojb"][l]
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"], eps=1e-5)
    return x @ p["wte"].T


def masked_logprobs(logits, targets):
    mask = targets != TOK_PAD
    safe = torch.where(mask, targets, torch.zeros_like(targets))
    lp = logits.log_softmax(-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, lp, torch.zeros_like(lp)), mask


@pytest.fixture(scope="module")
def dump():
    tool = os.path.join(os.environ.get("SAPO_BUILD_DIR", "build"), "tests", "tool_model_dump")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "dump.bin")
        subprocess.run([tool, out], check=True)
        yield read_dump(out)


def build_params(d, prefix):
    L, NH, C, T, V = (int(x) for x in d["config"])
    shp = shapes(L, C, T, V)
    return {n: torch.tensor(d[prefix + n].reshape(shp[n]), requires_grad=True) for n in NAMES}, L, NH


def report(name, diff, tol):
    print(f"{name:24s} max abs diff {diff:.3e} (tolerance {tol:.1e})")
    assert diff <= tol, f"{name}: max abs diff {diff:.3e} > {tol:.1e}"


def test_forward_logits_logprobs_loss(dump):
    p, L, NH = build_params(dump, "init.")
    inputs = torch.tensor(dump["inputs"], dtype=torch.long)
    targets = torch.tensor(dump["targets"], dtype=torch.long)
    logits = gpt_logits(p, inputs, L, NH)
    lp, mask = masked_logprobs(logits, targets)
    loss = -lp.sum() / mask.sum()
    report("logits", np.abs(logits.detach().numpy() - dump["logits"]).max(), 2e-5)
    report("logprobs", np.abs(lp.detach().numpy() - dump["logprobs"]).max(), 2e-5)
    report("loss", abs(loss.item() - float(dump["loss"][0])), 1e-5)


def test_every_gradient_tensor(dump):
    p, L, NH = build_params(dump, "init.")
    inputs = torch.tensor(dump["inputs"], dtype=torch.long)
    targets = torch.tensor(dump["targets"], dtype=torch.long)
    lp, mask = masked_logprobs(gpt_logits(p, inputs, L, NH), targets)
    (-lp.sum() / mask.sum()).backward()
    for n in NAMES:
        ours = dump["grad." + n].reshape(p[n].shape)
        ref = p[n].grad.numpy()
        scale = float(np.abs(ref).max())
        assert scale > 0 or n == "wpe", f"{n}: reference gradient is all zero"
        report("grad." + n, float(np.abs(ours - ref).max()), 1e-5 + 1e-3 * scale)


def test_five_adamw_steps_with_clipping(dump):
    p, L, NH = build_params(dump, "init.")
    lr, b1, b2, eps, wd, clip = (float(x) for x in dump["adamw"])
    opt = torch.optim.AdamW([p[n] for n in NAMES], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    inputs = torch.tensor(dump["inputs"], dtype=torch.long)
    targets = torch.tensor(dump["targets"], dtype=torch.long)
    losses, norms = [], []
    for _ in range(5):
        opt.zero_grad()
        lp, mask = masked_logprobs(gpt_logits(p, inputs, L, NH), targets)
        loss = -lp.sum() / mask.sum()
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_([p[n] for n in NAMES], clip)))
        losses.append(loss.item())
        opt.step()
    report("step losses", float(np.abs(np.array(losses) - dump["step_losses"]).max()), 1e-5)
    report("step grad norms", float(np.abs(np.array(norms) - dump["step_grad_norms"]).max()), 1e-4)
    assert losses[-1] < losses[0], "5 AdamW steps on one batch should lower its loss"
    for n in NAMES:
        report("final." + n, float(np.abs(dump["final." + n].reshape(p[n].shape) - p[n].detach().numpy()).max()), 1e-5)
