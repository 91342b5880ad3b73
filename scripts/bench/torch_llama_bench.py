"""transformers eager side of `sapo bench model --family llama`: the same Hugging Face
directory (the very weights the C side computes with), the same token content (WORK, written
by the C side) and the same thread count, timed the same way: --warmup untimed training steps
on the first micro-batch and one untimed generation for the first prompt, then --repeats.

  train     forward + backward + AdamW step over the groups, one micro-batch at a time as
            the C side packs them: each [prompt | completion] a row of a right-padded batch
            with an attention mask, the loss the mean log-loss of the completion tokens,
            gradients clipped to norm 1, torch.optim.AdamW
  generate  for each prompt, K completions of N new tokens (temperature 1, no end token) by
            a decoding loop with the KV cache over a batch of K rows, the prompt prefilled
            in all K rows as generate(num_return_sequences=K) does
  generate_shared  the same, the prompt prefilled once and its cache repeated K times (timed
            once: a side number)
  check     the mean log-prob of group 0's completion tokens before training (the C side
            prints its own next to it: the same weights give the same number)
  rss       ru_maxrss of this process, and the peak after the model was loaded

Prints one JSON object per line; the C side reads them.

usage: torch_llama_bench.py --model-dir DIR --work WORK.json --threads K --warmup W --repeats R
"""
import argparse
import json
import os
import resource
import sys

import torch
import torch.nn.functional as F
import transformers
from transformers import AutoModelForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_common.py
from bench_common import emit, peak_reset, status_kb, timed  # noqa: E402


def micro_batch(groups, idx, pad_id):
    """The rows [prompt | completion] of groups idx, right-padded: ids, mask, labels."""
    rows, labels = [], []
    for gi in idx:
        g = groups[gi]
        for comp in g["completions"]:
            rows.append(g["prompt"] + comp)
            labels.append([-100] * len(g["prompt"]) + comp)
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    lab = torch.full((len(rows), T), -100, dtype=torch.long)
    for i, (r, l) in enumerate(zip(rows, labels)):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
        lab[i, : len(l)] = torch.tensor(l)
    return ids, mask, lab


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--work", required=True)
    for k in ("threads", "warmup", "repeats"):
        ap.add_argument("--" + k, type=int, required=True)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    with open(a.work) as f:
        work = json.load(f)
    emit({"what": "info", "torch": torch.__version__, "transformers": transformers.__version__,
          "threads": torch.get_num_threads()})

    model = AutoModelForCausalLM.from_pretrained(a.model_dir, torch_dtype=torch.float32, attn_implementation="eager")
    V = model.config.vocab_size
    reset_ok = peak_reset()

    groups, micro = work["groups"], work["micro"]
    with torch.no_grad():  # the same weights as the C side: group 0's mean completion log-prob
        model.eval()
        ids, mask, lab = micro_batch(groups, [0], 0)
        logits = model(input_ids=ids, attention_mask=mask).logits
        lp = -F.cross_entropy(logits[:, :-1].reshape(-1, V), lab[:, 1:].reshape(-1), ignore_index=-100)
        emit({"what": "check", "logprob": lp.item()})
        del logits

    hp = work["adamw"]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"],
                            weight_decay=hp["weight_decay"])
    batches = [micro_batch(groups, idx, 0) for idx in micro]
    n_targets = sum(len(c) for g in groups for c in g["completions"])

    def train_step(micro_batches):
        model.train()
        opt.zero_grad(set_to_none=True)
        for ids, mask, lab in micro_batches:
            logits = model(input_ids=ids, attention_mask=mask).logits
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), lab[:, 1:].reshape(-1), ignore_index=-100,
                                   reduction="sum") / n_targets
            loss.backward()
        torch.nn.utils.clip_grad_norm_(params, work["grad_clip"])
        opt.step()

    for _ in range(a.warmup):  # as the C side: warm-up steps on the first micro-batch
        train_step(batches[:1])
    t = timed(lambda: train_step(batches), 0, a.repeats)
    emit({"what": "train", "tokens": work["train_tokens"], **t})
    del opt, batches
    model.zero_grad(set_to_none=True)
    model.eval()

    K, N = work["completions"], work["new"]
    prompts = [torch.tensor([p]) for p in work["gen_prompts"]]

    @torch.no_grad()
    def generate_one(prompt, shared):
        if shared:
            out = model(input_ids=prompt, use_cache=True, logits_to_keep=1)
            past = out.past_key_values
            past.batch_repeat_interleave(K)
            logits = out.logits[:, -1].repeat_interleave(K, dim=0)
        else:  # each prompt's K rows adjacent, as the shared cache's batch_repeat_interleave lays them
            out = model(input_ids=prompt.repeat_interleave(K, dim=0), use_cache=True, logits_to_keep=1)
            past, logits = out.past_key_values, out.logits[:, -1]
        for i in range(N):
            tok = torch.multinomial(torch.softmax(logits, -1), 1)
            if i == N - 1:
                break
            out = model(input_ids=tok, past_key_values=past, use_cache=True)
            past, logits = out.past_key_values, out.logits[:, -1]

    gen_tokens = len(prompts) * K * N
    if a.warmup:  # as the C side: one untimed generation for the first prompt
        generate_one(prompts[0], False)
    if work.get("gen_together"):  # as the C side: every prompt's rows in one batch
        prompts = [torch.cat(prompts)]
    for what, shared, repeats in (("generate", False, a.repeats), ("generate_shared", True, 1)):
        t = timed(lambda: [generate_one(p, shared) for p in prompts], 0, repeats)
        emit({"what": what, "tokens": gen_tokens, **t})

    emit({"what": "rss", "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          "work_peak_kb": status_kb("VmHWM") if reset_ok else -1})


if __name__ == "__main__":
    sys.exit(main())
