"""PyTorch eager side of `sapo bench model`: the same model, batch and work as the C
benchmark, timed the same way (warm-up untimed, then repeats), on the same number of
threads. Prints one JSON object per line; `sapo bench model` reads them and prints ratios.

usage: torch_model_bench.py --layers L --heads H --dmodel C --ctx T --batch B
                            --prompt P --new N --warmup W --repeats R --threads K [--device cuda]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_gpt.py, bench_common.py
from bench_common import emit, timed  # noqa: E402
from torch_gpt import NAMES, TOK_BOS, init_params, logits, masked_logprobs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for k in ("layers", "heads", "dmodel", "ctx", "batch", "prompt", "new", "warmup", "repeats", "threads"):
        ap.add_argument("--" + k, type=int, required=True)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda for the CUDA backend's comparison")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    L, NH, C, T, B = a.layers, a.heads, a.dmodel, a.ctx, a.batch
    p = {k: v.detach().to(dev).requires_grad_(True) for k, v in init_params(L, C, T).items()}
    params = [p[n] for n in NAMES]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0)
    inputs = torch.randint(0, 256, (B, T)).to(dev)
    targets = torch.randint(0, 256, (B, T)).to(dev)

    def train_step():
        opt.zero_grad(set_to_none=False)
        lp, mask = masked_logprobs(logits(p, inputs, L, NH), targets)
        (-lp.sum() / mask.sum()).backward()
        opt.step()

    train = timed(train_step, a.warmup, a.repeats, sync)
    emit({"what": "train", "tokens": B * T, **train})

    prompts = torch.randint(0, 256, (B, a.prompt))
    prompts[:, 0] = TOK_BOS
    prompts = prompts.to(dev)

    def generate():
        with torch.no_grad():
            cache = [None] * L
            lg = logits(p, prompts, L, NH, cache=cache, start=0)[:, -1]
            for i in range(a.new):
                tok = torch.multinomial(lg.softmax(-1), 1)
                lg = logits(p, tok, L, NH, cache=cache, start=a.prompt + i)[:, -1]

    gen = timed(generate, min(a.warmup, 1), a.repeats, sync)
    emit({"what": "generate", "tokens": B * a.new, **gen})


if __name__ == "__main__":
    main()
