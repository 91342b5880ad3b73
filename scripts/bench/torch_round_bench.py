"""PyTorch eager side of `sapo bench round`: one swarm node-round the way TRL / genrl do it,
from the same initial weights and the same prompts as the C node, timed per phase.

The C side (`sapo bench round --child DIR`) leaves in DIR:
  init.ckpt   the node's initial weights (src/model/checkpoint.c format, read here)
  round.json  the settings (shape, sampling, optimizer) and, per round, the I questions the
              node asks: task name, prompt text (question + newline), the task entry

Each round here:
  gen+score  the I prompts (BOS + the prompt's last n_ctx - max_new_tokens - 1 bytes, as
             tok_encode_prompt keeps) repeated L times, left-padded with an attention mask
             and position ids (HF generate), one batched prefill into a KV cache, then one
             token per step for every row (finished rows are fed PAD, as HF does) sampled at
             the temperature (top-p when < 1) until every row has EOS, ends with the stop
             string, or max_new_tokens; then each completion's last <answer>...</answer> is
             scored with reasoning_gym's score_answer (exact match on the entry's answer when
             reasoning_gym does not import)
  train      group advantages (r - mean) / (std + 1e-8) (unbiased std), the B = I x L rows
             prompt + completion right-padded to the longest, one forward + backward with the
             token-level loss -sum(min(ratio A, clip(ratio) A)) / n_completion_tokens
             (ratio = exp(lp - lp.detach()) = 1: TRL's form), clip_grad_norm_ when
             grad_clip > 0, AdamW; ppo_epochs steps on the batch
Prints one JSON line per round ({"what": "round", ...}) and a summary line with the peak RSS.

usage: torch_round_bench.py --dir DIR --rounds R --warmup W [--threads K] [--device cpu|cuda]
"""
import argparse
import json
import os
import re
import struct
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_gpt.py, bench_common.py
from bench_common import emit, peak_rss_kb, status_kb  # noqa: E402
from torch_gpt import NAMES, TOK_BOS, TOK_EOS, TOK_PAD, forward, shapes  # noqa: E402

ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def read_checkpoint(path):
    """The parameters of a sapo checkpoint (src/model/checkpoint.c layout) as named tensors."""
    with open(path, "rb") as f:
        h = f.read(128)
        if h[:8] != b"SAPOGPT1":
            raise SystemExit(f"{path}: not a sapo checkpoint")
        version, L, NH, C, T, V = struct.unpack_from("<6I", h, 8)
        if version != 1:
            raise SystemExit(f"{path}: checkpoint version {version}, this reader knows 1")
        P = struct.unpack_from("<Q", h, 48)[0]
        flat = torch.frombuffer(bytearray(f.read(4 * P)), dtype=torch.float32)
    if flat.numel() != P:
        raise SystemExit(f"{path}: truncated")
    p, off = {}, 0
    shp = shapes(L, C, T, V)
    for name in NAMES:
        n = 1
        for d in shp[name]:
            n *= d
        p[name] = flat[off:off + n].view(shp[name]).clone()
        off += n
    if off != P:
        raise SystemExit(f"{path}: {P} parameters, the shape asks {off}")
    return p, (L, NH, C, T, V)


def sample(logits, temperature, top_p, gen):
    if temperature <= 0:
        return logits.argmax(-1)
    probs = (logits / temperature).softmax(-1)
    if top_p < 1.0:
        sp, si = probs.sort(-1, descending=True)
        keep = sp.cumsum(-1) - sp < top_p
        sp = sp * keep
        probs = torch.zeros_like(probs).scatter(-1, si, sp)
    return torch.multinomial(probs, 1, generator=gen).squeeze(-1)


def generate(p, NH, prompts, s, dev, gen):
    """Batched generation of one completion per prompt (token lists); returns the completions
    as token lists (EOS kept when generated, the stop string kept)."""
    B = len(prompts)
    lens = torch.tensor([len(x) for x in prompts], device=dev)
    P = int(lens.max())
    ids = torch.full((B, P), TOK_PAD, dtype=torch.long)
    for b, x in enumerate(prompts):  # left padding
        ids[b, P - len(x):] = torch.tensor(x)
    ids = ids.to(dev)
    keymask = torch.arange(P, device=dev)[None, :] >= (P - lens)[:, None]  # (B, P) real tokens
    pos = (keymask.long().cumsum(-1) - 1).clamp(min=0)
    neg = torch.finfo(torch.float32).min
    causal = torch.tril(torch.ones(P, P, dtype=torch.bool, device=dev))
    bias = torch.zeros(B, 1, P, P, device=dev).masked_fill(~(causal[None, None] & keymask[:, None, None, :]), neg)
    stop = torch.tensor(list(s["stop"].encode()), device=dev)
    S = stop.numel()
    max_new = s["max_new_tokens"]
    out = torch.full((B, max_new), TOK_PAD, dtype=torch.long, device=dev)
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    out_len = torch.zeros(B, dtype=torch.long, device=dev)
    cache = [None] * p["qkvw"].shape[0]
    with torch.no_grad():
        lg = forward(p, ids, pos, NH, bias, cache)[:, -1]
        for i in range(max_new):
            tok = sample(lg, s["temperature"], s["top_p"], gen)
            tok = torch.where(done, torch.full_like(tok, TOK_PAD), tok)
            out[:, i] = tok
            out_len += (~done).long()
            finished = tok == TOK_EOS
            if i + 1 >= S:
                finished |= (out[:, i + 1 - S:i + 1] == stop).all(-1)
            done |= finished
            if bool(done.all()) or i + 1 == max_new:
                break
            keymask = torch.cat([keymask, torch.ones(B, 1, dtype=torch.bool, device=dev)], dim=1)
            step_bias = torch.zeros(B, 1, 1, keymask.shape[1], device=dev).masked_fill(~keymask[:, None, None, :], neg)
            lg = forward(p, tok[:, None], (lens + i)[:, None], NH, step_bias, cache)[:, -1]
    out, out_len = out.cpu(), out_len.cpu()
    return [out[b, :int(out_len[b])].tolist() for b in range(B)]


def make_scorer():
    try:
        import reasoning_gym
        fns = {}

        def score(task, answer, entry):
            if task not in fns:
                fns[task] = reasoning_gym.get_score_answer_fn(task)
            try:
                return float(fns[task](answer, entry))
            except Exception:
                return 0.0
        return score, "reasoning_gym score_answer"
    except Exception as e:  # noqa: BLE001
        def exact(task, answer, entry):
            ref = entry.get("answer")
            return 1.0 if ref is not None and answer.strip() == str(ref).strip() else 0.0
        return exact, f"exact match on the reference answer (reasoning_gym: {type(e).__name__})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--warmup", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    with open(os.path.join(a.dir, "round.json")) as f:
        s = json.load(f)
    score, scorer = make_scorer()
    base_kb = status_kb("VmRSS")

    # genrl/TRL set up once: weights, optimizer, scorers (untimed)
    p0, (L_, NH, C, T, V) = read_checkpoint(os.path.join(a.dir, "init.ckpt"))
    p = {k: v.to(dev).requires_grad_(True) for k, v in p0.items()}
    del p0
    params = [p[n] for n in NAMES]
    opt = torch.optim.AdamW(params, lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"],
                            weight_decay=s["weight_decay"])
    gen = torch.Generator(device=dev).manual_seed(int(s["seed"]))
    I, Lc, n_ctx, max_new = s["local"], s["completions"], s["n_ctx"], s["max_new_tokens"]
    keep = n_ctx - max_new - 1  # prompt bytes kept (tok_encode_prompt / prompt_tail)
    note = "KL term not modelled (grpo.kl > 0)" if s["kl"] > 0 else ""

    total_rounds = a.warmup + a.rounds
    if len(s["rounds"]) < total_rounds:
        raise SystemExit(f"round.json has {len(s['rounds'])} rounds, {total_rounds} asked")
    for r in range(total_rounds):
        qs = s["rounds"][r]
        if len(qs) != I:
            raise SystemExit(f"round {r}: {len(qs)} questions, I = {I}")
        sync()
        t0 = time.perf_counter()
        # ---- generate + score ----
        prompts = []
        for q in qs:
            b = q["prompt"].encode()
            prompts.append([TOK_BOS] + list(b[-keep:] if len(b) > keep else b))
        rows = [prompts[i] for i in range(I) for _ in range(Lc)]
        comps = generate(p, NH, rows, s, dev, gen)
        rewards, formatted, length = [], 0, 0
        for k, c in enumerate(comps):
            q = qs[k // Lc]
            text = bytes(t for t in c if t < 256).decode("utf-8", errors="replace")
            length += sum(1 for t in c if t < 256)
            found = ANSWER_RE.findall(text)
            formatted += bool(found)
            rewards.append(score(q["task"], found[-1], q["entry"]) if found else 0.0)
        sync()
        t1 = time.perf_counter()
        # ---- train: one GRPO step on the I x L rows ----
        rw = torch.tensor(rewards, dtype=torch.float32).view(I, Lc)
        std = rw.std(dim=1, keepdim=True) if Lc > 1 else torch.zeros(I, 1)
        adv = ((rw - rw.mean(dim=1, keepdim=True)) / (std + 1e-8)).view(-1)
        seqs = [rows[k] + comps[k] for k in range(len(rows))]
        Tb = min(max(len(x) for x in seqs), n_ctx + 1)
        ids = torch.full((len(seqs), Tb), TOK_PAD, dtype=torch.long)
        cmask = torch.zeros(len(seqs), Tb, dtype=torch.bool)
        for k, x in enumerate(seqs):  # right padding
            x = x[:Tb]
            ids[k, :len(x)] = torch.tensor(x)
            cmask[k, len(rows[k]):len(x)] = True
        inputs, targets, cmask = ids[:, :-1].to(dev), ids[:, 1:].to(dev), cmask[:, 1:].to(dev)
        Tt = inputs.shape[1]
        pos = torch.arange(Tt, device=dev)[None, :].expand(len(seqs), Tt)
        causal = torch.tril(torch.ones(Tt, Tt, dtype=torch.bool, device=dev))
        bias = torch.zeros(1, 1, Tt, Tt, device=dev).masked_fill(~causal, torch.finfo(torch.float32).min)
        adv_t = adv.to(dev)[:, None]
        n_tok = cmask.sum().clamp(min=1)
        old = None
        for epoch in range(int(s["ppo_epochs"])):
            opt.zero_grad(set_to_none=True)
            lg = forward(p, inputs, pos, NH, bias)
            safe = torch.where(cmask, targets, torch.zeros_like(targets))
            lp = lg.log_softmax(-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
            if old is None:
                old = lp.detach()
            ratio = torch.exp(lp - old)
            per_tok = -torch.min(ratio * adv_t, ratio.clamp(1 - s["eps_low"], 1 + s["eps_high"]) * adv_t)
            loss = (per_tok * cmask).sum() / n_tok
            loss.backward()
            if s["grad_clip"] > 0:
                torch.nn.utils.clip_grad_norm_(params, s["grad_clip"])
            opt.step()
        sync()
        t2 = time.perf_counter()
        emit({"what": "round", "round": r, "timed": r >= a.warmup, "gen": t1 - t0, "train": t2 - t1,
              "total": t2 - t0, "completion_len": length / len(comps),
              "reward": sum(rewards) / len(rewards), "format_rate": formatted / len(comps),
              "train_tokens": int(cmask.sum()), "loss": float(loss)})
    emit({"what": "summary", "peak_rss_kb": peak_rss_kb(), "base_rss_kb": base_kb, "scorer": scorer,
          "note": note, "torch": torch.__version__})


if __name__ == "__main__":
    main()
