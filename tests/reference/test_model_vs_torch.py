"""The C policy model against the same model written in PyTorch.

tool_model_dump (built from tests/reference/tool_model_dump.c) writes initial weights, a
batch, and the C model's logits, log-probs, masked loss, gradients and 5 AdamW steps. This
test builds the GPT in PyTorch from those weights and compares everything in float32.
Tolerances (stated in docs/BYTE_GPT.md): logits and log-probs 2e-5 absolute, loss 1e-5,
gradients 1e-5 + 1e-3 * max|grad| per tensor, weights after 5 AdamW steps 1e-5.
"""
import os
import struct
import sys
import subprocess
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "bench"))
from torch_gpt import NAMES, logits as gpt_forward, masked_logprobs, shapes  # noqa: E402


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
    logits = gpt_forward(p, inputs, L, NH)
    lp, mask = masked_logprobs(logits, targets)
    loss = -lp.sum() / mask.sum()
    report("logits", np.abs(logits.detach().numpy() - dump["logits"]).max(), 2e-5)
    report("logprobs", np.abs(lp.detach().numpy() - dump["logprobs"]).max(), 2e-5)
    report("loss", abs(loss.item() - float(dump["loss"][0])), 1e-5)


def test_every_gradient_tensor(dump):
    p, L, NH = build_params(dump, "init.")
    inputs = torch.tensor(dump["inputs"], dtype=torch.long)
    targets = torch.tensor(dump["targets"], dtype=torch.long)
    lp, mask = masked_logprobs(gpt_forward(p, inputs, L, NH), targets)
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
        lp, mask = masked_logprobs(gpt_forward(p, inputs, L, NH), targets)
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


def test_shared_prompt_packing_equals_unshared_rows(dump):
    """The C model's packed batch (each group's prompt one segment, read by its completions)
    against PyTorch running every completion as its own unshared row: log-probs of every
    completion token and every gradient of the weighted token-level loss."""
    p, L, NH = build_params(dump, "init.")
    inp, tgt, w = dump["packed.inputs"], dump["packed.targets"], dump["packed.weights"]
    segs = dump["packed.segments"]
    n_loss = int((tgt != 258).sum())
    total, worst = 0.0, 0.0
    rows = 0
    for i, (start, n, prefix) in enumerate(segs):
        if any(s[2] == i for s in segs):
            continue  # a prompt segment: its tokens carry no loss, its completions read it
        pre = segs[prefix] if prefix >= 0 else (0, 0, -1)
        seq_in = np.concatenate([inp[pre[0]:pre[0] + pre[1]], inp[start:start + n]])
        seq_tg = np.concatenate([np.full(pre[1], 258), tgt[start:start + n]])
        lgts = gpt_forward(p, torch.tensor(seq_in[None], dtype=torch.long), L, NH)
        lp, mask = masked_logprobs(lgts, torch.tensor(seq_tg[None], dtype=torch.long))
        ours = dump["packed.logprobs"][start:start + n]
        worst = max(worst, float(np.abs(lp[0, pre[1]:].detach().numpy() - ours).max()))
        total = total - (lp[0, pre[1]:] * torch.tensor(w[start:start + n])).sum()
        rows += 1
    assert rows == 6, f"expected six completion rows in the packed batch, found {rows}"
    report("packed logprobs", worst, 2e-5)
    (total / n_loss).backward()
    for n in NAMES:
        ref = p[n].grad.numpy()
        scale = float(np.abs(ref).max())
        report("packed grad." + n, float(np.abs(dump["packed.grad." + n].reshape(p[n].shape) - ref).max()),
               1e-5 + 1e-3 * scale)
